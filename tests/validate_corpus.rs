//! The offline validator over the invalid corpus and the examples, through the library and
//! through the built `mongobench validate` binary; no cluster needed. The same corpus is
//! refused at admission by a real API server in `tests/api_admission.rs`.
//!
//! Each `tests/fixtures/invalid/NN-name.yaml` makes exactly one mistake and starts with
//! `# expect: <field path>`, the field the refusal must name.

use std::path::{Path, PathBuf};
use std::process::Command;

use mongobench::api;
use mongobench::cli::validate::{EXIT_INVALID, check_text};

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

struct Fixture {
    path: PathBuf,
    expect: String,
    text: String,
}

fn corpus() -> Vec<Fixture> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo("tests/fixtures/invalid"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            let expect = text
                .lines()
                .next()
                .and_then(|l| l.strip_prefix("# expect: "))
                .unwrap_or_else(|| panic!("{} lacks its `# expect:` first line", path.display()))
                .trim()
                .to_string();
            Fixture { path, expect, text }
        })
        .collect()
}

fn examples() -> Vec<PathBuf> {
    [
        "percona-9-vs-8.yaml",
        "ycsb-x86-vs-arm.yaml",
        "quickstart.yaml",
        "sweep-knee.yaml",
        "sharded-9-vs-8.yaml",
    ]
    .iter()
    .map(|f| repo(&format!("examples/{f}")))
    .collect()
}

fn run_binary(files: &[&Path]) -> (i32, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mongobench"));
    cmd.arg("validate");
    for file in files {
        cmd.arg("-f").arg(file);
    }
    let out = cmd.output().expect("mongobench runs");
    (
        out.status.code().expect("an exit code"),
        String::from_utf8(out.stdout).unwrap(),
    )
}

#[test]
fn the_corpus_has_at_least_20_distinct_mistakes() {
    let fixtures = corpus();
    assert!(
        fixtures.len() >= 20,
        "only {} invalid specs",
        fixtures.len()
    );
    for fixture in &fixtures {
        let name = fixture
            .path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .to_string();
        let (number, rest) = name.split_once('-').expect("NN-short-name.yaml");
        assert!(
            number.len() == 2 && number.bytes().all(|b| b.is_ascii_digit()),
            "{name}"
        );
        assert!(rest.ends_with(".yaml") && rest.len() > 5, "{name}");
    }
    // One mistake each: every file differs from every other.
    for (i, a) in fixtures.iter().enumerate() {
        for b in &fixtures[i + 1..] {
            let strip = |t: &str| {
                t.lines()
                    .skip(3)
                    .filter(|l| !l.contains("name: invalid-"))
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            assert_ne!(
                strip(&a.text),
                strip(&b.text),
                "{:?} and {:?}",
                a.path,
                b.path
            );
        }
    }
}

#[test]
fn the_library_refuses_every_invalid_spec_naming_its_field() {
    for fixture in corpus() {
        let report = check_text(&fixture.text);
        assert!(!report.is_valid(), "{:?} was accepted", fixture.path);
        assert_eq!(report.benchmarks.len(), 1, "{:?}", fixture.path);
        let rendered = report.render("f").join("\n");
        assert!(
            report
                .problems
                .iter()
                .any(|p| format!("{}: {}", p.path, p.message).contains(&fixture.expect)),
            "{:?}: no violation names {}:\n{rendered}",
            fixture.path,
            fixture.expect
        );
        assert!(
            report.problems.iter().all(|p| p.line.is_some()),
            "{:?}: a violation without a line:\n{rendered}",
            fixture.path
        );
        // The document-level library call agrees.
        let doc: serde_json::Value = serde_yaml::from_str(&fixture.text).unwrap();
        let violations = api::validate_document(&doc);
        assert!(
            violations
                .iter()
                .any(|v| v.to_string().contains(&fixture.expect)),
            "{:?}: {violations:?}",
            fixture.path
        );
    }
}

#[test]
fn the_binary_refuses_every_invalid_spec_with_exit_code_2() {
    for fixture in corpus() {
        let (code, stdout) = run_binary(&[&fixture.path]);
        assert_eq!(
            code,
            i32::from(EXIT_INVALID),
            "{:?}:\n{stdout}",
            fixture.path
        );
        let file = fixture.path.display().to_string();
        for line in stdout.lines() {
            assert!(line.starts_with(&format!("{file}:")), "{line}");
        }
        assert!(
            stdout
                .lines()
                .any(|l| l.contains(&format!(" {}", fixture.expect))),
            "{:?}: output does not name {}:\n{stdout}",
            fixture.path,
            fixture.expect
        );
    }
}

/// What examples/percona-9-vs-8.yaml takes: 3 targets one after another, each 45 s to
/// initiate, 13M documents seeded at 5,000/s, and 9 cells of 2 warm-up rounds of 1 min, 10 min
/// measured and 30 s: 3 × 9,395 s on 3-member replica sets and one client pod.
const PERCONA_ESTIMATE: &str =
    "27 cells in about 7h49m (1 platform), 23.5 server node-hours, 7.8 client pod-hours";

#[test]
fn the_percona_study_says_what_it_will_take_before_it_runs() {
    let path = repo("examples/percona-9-vs-8.yaml");
    let (code, stdout) = run_binary(&[&path]);
    assert_eq!(code, 0, "{stdout}");
    assert_eq!(
        stdout.lines().nth(1),
        Some(
            format!(
                "{}: estimate: MongoBenchmark percona-9-vs-8: {PERCONA_ESTIMATE}",
                path.display()
            )
            .as_str()
        )
    );
}

#[test]
fn every_example_is_valid() {
    for path in examples() {
        let text = std::fs::read_to_string(&path).unwrap();
        let report = check_text(&text);
        assert!(report.is_valid(), "{path:?}: {report:?}");
        assert_eq!(report.benchmarks.len(), 1);
        let (code, stdout) = run_binary(&[&path]);
        assert_eq!(code, 0, "{path:?}:\n{stdout}");
        // The OK line, then what it will take.
        let mut lines = stdout.lines();
        let name = &report.benchmarks[0];
        assert_eq!(
            lines.next(),
            Some(format!("{}: OK (MongoBenchmark {name})", path.display()).as_str())
        );
        let estimate = format!("{}: estimate: MongoBenchmark {name}: ", path.display());
        assert!(
            lines
                .next()
                .is_some_and(|l| l.starts_with(&estimate) && l.contains(" cells in about ")),
            "{stdout}"
        );
        let doc: serde_json::Value = serde_yaml::from_str(&text).unwrap();
        let spec: api::MongoBenchmarkSpec = serde_json::from_value(doc["spec"].clone()).unwrap();
        // The only notes: the Secrets the benchmark's namespace must let it read.
        let notes: Vec<&str> = lines.collect();
        let secrets = mongobench::operator::access::secrets_read(&spec);
        assert_eq!(notes.len(), secrets.len(), "{path:?}:\n{stdout}");
        for ((field, secret), note) in secrets.iter().zip(&notes) {
            assert!(
                note.contains(&format!(
                    "note: {field}: the benchmark's namespace must list Secret {secret:?}"
                )),
                "{note}"
            );
        }
        assert_eq!(api::validate(&spec), vec![], "{path:?}");
    }
}

#[test]
fn the_quickstart_with_its_secret_is_valid() {
    let (code, stdout) = run_binary(&[
        &repo("examples/quickstart-secret.yaml"),
        &repo("examples/quickstart.yaml"),
    ]);
    assert_eq!(code, 0, "{stdout}");
    let text = std::fs::read_to_string(repo("examples/quickstart-secret.yaml")).unwrap();
    let secrets: Vec<serde_json::Value> = serde_yaml::Deserializer::from_str(&text)
        .map(|d| <serde_json::Value as serde::Deserialize>::deserialize(d).unwrap())
        .collect();
    let names: Vec<(&str, &str, &str)> = secrets
        .iter()
        .map(|s| {
            (
                s["kind"].as_str().unwrap(),
                s["metadata"]["name"].as_str().unwrap(),
                s["stringData"]["uri"].as_str().unwrap(),
            )
        })
        .collect();
    // The demo's two SecantusDB servers, lz4 and zlib (testenv/demo starts them).
    assert_eq!(
        names,
        [
            ("Secret", "quickstart-lz4", "mongodb://127.0.0.1:27022"),
            ("Secret", "quickstart-zlib", "mongodb://127.0.0.1:27023")
        ]
    );
}

#[test]
fn one_file_with_several_mistakes_reports_all_of_them_in_line_order() {
    let text = std::fs::read_to_string(repo("examples/quickstart.yaml"))
        .unwrap()
        .replace(r#"sizes: ["2000", "40000"]"#, r#"sizes: ["40000", "2000"]"#)
        .replace("workers: 4", "workers: 0")
        .replace("repetitions: 3", "repetitions: 101");
    let dir = std::env::temp_dir().join(format!("mongobench-corpus-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("three-mistakes.yaml");
    std::fs::write(&file, &text).unwrap();
    let (code, stdout) = run_binary(&[&file]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(code, i32::from(EXIT_INVALID));
    let paths: Vec<&str> = stdout
        .lines()
        .map(|l| l.split(": ").nth(1).unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            "spec.dataset.sizes[1]",
            "spec.workload.workers",
            "spec.repetitions"
        ],
        "{stdout}"
    );
}

/// A valid spec whose members would run Burstable is accepted (exit code 0) with a note that
/// names the field, its line and the fix; the examples, Guaranteed with whole CPUs, get none
/// (`every_example_is_valid` compares their whole output).
#[test]
fn burstable_members_get_a_note_and_exit_code_0() {
    let original = std::fs::read_to_string(repo("examples/percona-9-vs-8.yaml")).unwrap();
    let text = original.replace(
        "requests: {cpu: \"3\", memory: 12Gi}",
        "requests: {cpu: \"2\", memory: 12Gi}",
    );
    assert_ne!(text, original, "the example's requests line moved");
    let line = 1 + text.lines().position(|l| l.trim() == "resources:").unwrap();
    let dir = std::env::temp_dir().join(format!("mongobench-advice-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("burstable.yaml");
    std::fs::write(&file, &text).unwrap();
    let (code, stdout) = run_binary(&[&file]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(code, 0, "{stdout}");
    let f = file.display();
    assert_eq!(
        stdout,
        format!(
            "{f}: OK (MongoBenchmark percona-9-vs-8)\n\
             {f}: estimate: MongoBenchmark percona-9-vs-8: {PERCONA_ESTIMATE}\n\
             {f}:{line}: note: spec.replicaSet.resources: cpu request 2 differs from its limit 3: \
             the members run Burstable and share their nodes' CPU by weight; set requests equal \
             to limits, CPU in whole cores (e.g. cpu: \"4\", memory: 16Gi), for Guaranteed QoS \
             and, under the kubelet's static CPU manager policy, cores of their own\n"
        )
    );
}
