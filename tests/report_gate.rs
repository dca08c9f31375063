//! The CI gate of `mongobench report` and `mongobench run`: a directory of results where target
//! `b` is 20 % slower than the baseline `a` fails `--fail-on-slower 5` with exit code 3, one line
//! naming the comparison and a JUnit file with the failure; a threshold beyond the slowdown
//! passes. A run against a FerretDB server directly and through a proxy that triples each
//! reply's service time writes `comparison.json` beside its results and fails the gate.
mod support;

use std::path::Path;
use std::process::Command;

use mongobench::operator::testing::result;

/// Exit code, standard output and standard error of `mongobench report ARGS…`.
fn report(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mongobench"))
        .arg("report")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Three repetitions each over 10 s: `a` at 101–103 finds/s, `b` at 80.7–82.1 (mean 81.4
/// against 102: −20.2 %).
fn write_results(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    for (target, finds, step) in [("a", 1000, 10), ("b", 800, 7)] {
        for rep in 1..=3u32 {
            let r = result(
                "gate",
                target,
                "local",
                "1k",
                rep,
                10,
                &[("find", finds + step * rep as u64, 150)],
                Some(40),
            );
            std::fs::write(
                dir.join(format!("{target}-{rep}.json")),
                r.to_json().unwrap(),
            )
            .unwrap();
        }
    }
}

#[test]
fn a_slower_target_fails_the_gate_with_a_line_and_a_junit_failure() {
    let dir = std::env::temp_dir().join(format!("mongobench-gate-{}", std::process::id()));
    write_results(&dir);
    let d = dir.to_str().unwrap();
    let junit = dir.join("junit.xml");
    let j = junit.to_str().unwrap();

    // The comparison document states the verdict the gate reads.
    let (code, json, err) = report(&["--dir", d, "-o", "json"]);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["kind"], "mongobench.io/comparison");
    assert_eq!(doc["version"], 1);
    let b = &doc["groups"][0]["rows"][1];
    assert_eq!(b["target"], "b");
    let v = &b["verdicts"][0];
    assert_eq!(
        (&v["metric"], &v["verdict"]),
        (&"throughput".into(), &"slower".into())
    );
    let estimate = v["estimatePercent"].as_f64().unwrap();
    assert!(
        (estimate - (81.4 / 102.0 - 1.0) * 100.0).abs() < 1e-9,
        "{estimate}"
    );
    let (lo, hi) = (
        v["interval"]["lowPercent"].as_f64().unwrap(),
        v["interval"]["highPercent"].as_f64().unwrap(),
    );
    assert!(hi < 0.0, "a slower verdict's interval lies below 0: {v}");

    let (code, stdout, err) = report(&["--dir", d, "--fail-on-slower", "5", "--junit", j]);
    assert_eq!(code, 3, "{stdout}{err}");
    let line = format!(
        "FAIL local/1k/b vs a throughput: slower -20.2% [{lo:+.1}%, {hi:+.1}%] (95%), MDE {:.1}% \
         (cautious {:.1}%): slower by more than 5% (--fail-on-slower 5)\n",
        v["mdePercent"].as_f64().unwrap(),
        v["cautiousMdePercent"].as_f64().unwrap()
    );
    assert_eq!(err, line);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("<testsuites name=\"mongobench\" tests=\"1\" failures=\"1\">"),
        "{xml}"
    );
    assert!(
        xml.contains(
            "<testcase classname=\"flights/v1\" name=\"local/1k/b vs a throughput\">\n      \
             <failure type=\"fail-on-slower\" message=\"slower by more than 5% \
             (--fail-on-slower 5)\">slower -20.2% ["
        ),
        "{xml}"
    );

    // A threshold beyond the slowdown passes, and the JUnit file says so.
    let (code, _, err) = report(&["--dir", d, "--fail-on-slower", "25", "--junit", j]);
    assert_eq!((code, err.as_str()), (0, ""));
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("tests=\"1\" failures=\"0\""), "{xml}");
    assert!(!xml.contains("<failure"), "{xml}");

    // A gate on a metric without a verdict is bad input, not a pass.
    let (code, _, err) = report(&["--dir", d, "--fail-on-costlier", "5"]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(
        err,
        "mongobench report: --fail-on-costlier: cpuPerOperation is not a verdict metric of \
         these results (declared: throughput); declare it in spec.verdict.metrics\n"
    );

    let (code, csv, err) = report(&["--dir", d, "-o", "verdicts-csv"]);
    assert_eq!(code, 0, "{err}");
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        mongobench::report::VERDICT_COLUMNS.join(",")
    );
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("flights/v1,local,1k,b,a,throughput,slower,-20.19"),
        "{csv}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Two external targets, YCSB C on 300 records, one worker, 5 slots of 2-second cells.
const SPEC: &str = "apiVersion: mongobench.io/v1alpha1
kind: MongoBenchmark
metadata: {name: gate}
spec:
  targets:
    - {name: direct, external: {uriSecretRef: {name: d}}}
    - {name: slower, external: {uriSecretRef: {name: s}}}
  baseline: direct
  platforms: [{name: local}]
  dataset: {sizes: ['300']}
  workload: {type: ycsb, ycsb: {workload: c}, workers: 1, duration: 2s, warmup: 1s}
  repetitions: 5
";

#[test]
fn a_run_writes_its_comparison_and_fails_the_gate_on_a_slower_target() {
    let server = support::private_mongo_sqlite("gate-run");
    // Each reply held for twice its service time: a third of the throughput.
    let slower = support::proxy::ProportionalProxy::start(&server.uri, 2.0);
    let dir = std::env::temp_dir().join(format!("mongobench-gate-run-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let spec = dir.join("gate.yaml");
    std::fs::write(&spec, SPEC).unwrap();
    let out = dir.join("out");
    let junit = dir.join("junit.xml");
    let (code, stdout, err) = support::mongobench(&[
        "run",
        "-f",
        spec.to_str().unwrap(),
        "--target",
        &format!("direct={}", server.uri),
        "--target",
        &format!("slower={}", slower.uri),
        "--out",
        out.to_str().unwrap(),
        "--fail-on-slower",
        "20",
        "--junit",
        junit.to_str().unwrap(),
    ]);
    assert_eq!(code, 3, "{stdout}{err}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("comparison.json")).unwrap())
            .unwrap();
    assert_eq!(doc["kind"], "mongobench.io/comparison");
    let row = &doc["groups"][0]["rows"][1];
    assert_eq!(row["target"], "slower");
    let v = &row["verdicts"][0];
    assert_eq!(v["verdict"], "slower", "{doc}");
    assert_eq!(v["pairs"], 5, "paired by slot: {v}");
    let estimate = v["estimatePercent"].as_f64().unwrap();
    eprintln!("replies held for twice their service time: {estimate:+.1}%");
    assert!(estimate < -20.0, "{v}");
    let fail: Vec<&str> = err.lines().filter(|l| l.starts_with("FAIL ")).collect();
    assert_eq!(fail.len(), 1, "{err}");
    assert!(
        fail[0].starts_with(&format!(
            "FAIL local/300/slower vs direct throughput: slower {estimate:+.1}% ["
        )) && fail[0].ends_with(": slower by more than 20% (--fail-on-slower 20)"),
        "{}",
        fail[0]
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("tests=\"1\" failures=\"1\""), "{xml}");
    let csv = std::fs::read_to_string(out.join("verdicts.csv")).unwrap();
    assert!(
        csv.lines()
            .nth(1)
            .unwrap()
            .contains(",local,300,slower,direct,throughput,slower,"),
        "{csv}"
    );

    // The directory reads back with its comparison.json beside the results, and the same
    // gate fails the same way.
    let (code, _, err) = report(&["--dir", out.to_str().unwrap(), "--fail-on-slower", "20"]);
    assert_eq!((code, err.lines().count()), (3, 1), "{err}");
    assert_eq!(err.trim_end(), fail[0]);
    std::fs::remove_dir_all(&dir).unwrap();
}
