//! `mongobench run --out DIR` then `mongobench verify --dir DIR`, as a user runs them: the recorded
//! fingerprints are regenerated from each result's identity and counts; a tampered count or
//! seed is caught.
mod support;

use std::path::Path;

use support::mongobench;

const SPEC: &str = "apiVersion: mongobench.io/v1alpha1
kind: MongoBenchmark
metadata: {name: verify}
spec:
  targets: [{name: t, external: {uriSecretRef: {name: s}}}]
  platforms: [{name: local}]
  dataset: {sizes: ['200']}
  workload: {type: flights, workers: 2, operations: 40, warmupOperations: 10}
  repetitions: 3
";

/// Rewrites one field of the first result file in `dir` (not the run's comparison.json) with
/// `edit`.
fn tamper(dir: &Path, edit: impl Fn(&mut serde_json::Value)) -> std::path::PathBuf {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .filter(|p| p.file_name().is_some_and(|n| n != "comparison.json"))
        .collect();
    files.sort();
    let path = files[0].clone();
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    edit(&mut doc);
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    path
}

#[test]
fn verify_confirms_a_run_and_catches_tampered_counts_and_seeds() {
    let server = support::private_mongo("verify");
    let dir = std::env::temp_dir().join(format!("mongobench-verify-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let spec = dir.join("spec.yaml");
    std::fs::write(&spec, SPEC).unwrap();
    let out = dir.join("out");
    let (code, _, err) = mongobench(&[
        "run",
        "-f",
        spec.to_str().unwrap(),
        "--target",
        &format!("t={}", server.uri),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");

    let (code, stdout, err) = mongobench(&["verify", "--dir", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}{err}");
    assert_eq!(
        stdout.lines().filter(|l| l.ends_with(": verified")).count(),
        3,
        "{stdout}"
    );
    assert!(
        stdout.ends_with("3 verified, 0 mismatched, 0 not checkable of 3 results\n"),
        "{stdout}"
    );

    // One more operation claimed for worker 0 than was sent.
    tamper(&out, |doc| {
        let n = doc["workerOperations"][0].as_u64().unwrap();
        doc["workerOperations"][0] = (n + 1).into();
    });
    let (code, stdout, _) = mongobench(&["verify", "--dir", out.to_str().unwrap()]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("MISMATCH: the identity and counts give"),
        "{stdout}"
    );

    // Another seed in the identity (the hash no longer matters to verify: the streams do).
    tamper(&out, |doc| {
        let n = doc["workerOperations"][0].as_u64().unwrap();
        doc["workerOperations"][0] = (n - 1).into();
        doc["identity"]["parameters"]["seed"] = "2".into();
    });
    let (code, stdout, _) = mongobench(&["verify", "--dir", out.to_str().unwrap()]);
    assert_eq!(code, 1, "{stdout}");
    assert_eq!(stdout.matches("MISMATCH").count(), 1, "{stdout}");

    let (code, _, err) = mongobench(&["verify", "--dir", dir.join("missing").to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("missing"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
