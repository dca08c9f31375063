//! Failures: a server killed mid-run yields an incomplete result naming the target and the
//! phase, which no report passes off as valid; bad input is refused with exit code 2 before
//! anything is written.
mod support;

use std::process::Command;
use std::time::Duration;

use mongobench::api::RunLength;
use mongobench::result::CellStatus;
use mongobench::runner::cell::{CellProgress, run_cell};
use mongobench::runner::server::connect;
use support::runs;

#[tokio::test]
async fn a_server_killed_mid_run_leaves_an_incomplete_result_naming_target_and_phase() {
    let mut server = support::private_mongo("killed");
    let plan = runs::ycsb("workloada");
    let target = connect("victim", &server.uri, 2, Duration::from_secs(3))
        .await
        .unwrap();
    let mut seeded = runs::seeded(&target, &plan, 100, 2).await;

    let settings = runs::settings(2, RunLength::Duration(Duration::from_secs(30)));
    let uri = server.uri.clone();
    let killer = async {
        tokio::time::sleep(Duration::from_secs(2)).await;
        server.kill();
    };
    let progress = CellProgress::default();
    let run = run_cell(
        &target,
        &uri,
        &plan,
        &settings,
        runs::cell("killed", "workloada"),
        &mut seeded,
        &progress,
    );
    let (result, ()) = tokio::join!(run, killer);

    let CellStatus::Incomplete { reason } = &result.status else {
        panic!("a run whose server died is reported complete");
    };
    assert!(
        reason.starts_with("target victim: measured phase:"),
        "{reason}"
    );
    let err = result.require_complete().unwrap_err().to_string();
    assert!(err.contains("is incomplete"), "{err}");
    let table = mongobench::report::render_table(std::slice::from_ref(&result));
    assert!(table.contains("INCOMPLETE"), "{table}");
    assert!(mongobench::report::render_ycsb(&result, &Default::default()).is_err());
}

fn mongobench(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mongobench"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn spec_file(dir: &std::path::Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    path.display().to_string()
}

const GOOD: &str = "apiVersion: mongobench.io/v1alpha1
kind: MongoBenchmark
metadata: {name: bad-input}
spec:
  targets: [{name: a, external: {uriSecretRef: {name: s, key: uri}}}]
  platforms: [{name: local}]
  dataset: {sizes: ['100']}
  workload: {type: flights, workers: 1, duration: 1s, warmup: 0s}
  repetitions: 1
";

#[test]
fn bad_input_is_refused_with_exit_code_2_before_anything_is_written() {
    let dir = std::env::temp_dir().join(format!("mongobench-bad-input-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("out");
    let good = spec_file(&dir, "good.yaml", GOOD);
    let nothing = "mongodb://127.0.0.1:9/"; // discard port: nothing answers
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![spec_file(
                &dir,
                "w.yaml",
                &GOOD.replace("type: flights", "type: tpcc"),
            )],
            "spec.workload.type",
        ),
        (
            vec![spec_file(
                &dir,
                "p.yaml",
                &GOOD.replace("workers: 1,", "workers: 1, flights: {findPercent: 70},"),
            )],
            "must sum to 100",
        ),
        (
            vec![spec_file(
                &dir,
                "s.yaml",
                &GOOD.replace("['100']", "['12 apples']"),
            )],
            "spec.dataset.sizes",
        ),
        (
            vec![spec_file(
                &dir,
                "d.yaml",
                &GOOD.replace("duration: 1s", "duration: soon"),
            )],
            "spec.workload.duration",
        ),
    ];
    for (files, needle) in cases {
        let (code, err) = mongobench(&[
            "run",
            "-f",
            &files[0],
            "--target",
            &format!("a={nothing}"),
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(code, 2, "{needle}: {err}");
        assert!(err.contains(needle), "expected {needle:?} in: {err}");
    }
    let (code, err) = mongobench(&["run", "-f", &good, "--target", "a=localhost:27017"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("must start with mongodb://"), "{err}");
    let (code, err) = mongobench(&["run", "-f", &good, "--target", "a=mongodb://[::1/"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("target a: the URI does not parse"), "{err}");
    let (code, err) = mongobench(&[
        "run",
        "-f",
        &good,
        "--target",
        &format!("a={nothing}"),
        "--connect-timeout",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("target a: the server did not answer within 1s"),
        "{err}"
    );
    assert!(!out.exists(), "a refused run wrote {}", out.display());
    std::fs::remove_dir_all(&dir).unwrap();
}
