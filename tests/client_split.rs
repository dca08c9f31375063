//! `mongobench run --client-processes N` against a real MongoDB-wire server: N processes of
//! this machine split the workers and the seeding as the pods of `client.pods` do, and the
//! merged result of an operation-bounded run has the counts and the fingerprint of one
//! process running every worker.
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use mongobench::result::CellResult;

fn spec(dir: &Path, name: &str, workload: &str) -> PathBuf {
    let path = dir.join(format!("{name}.yaml"));
    let text = format!(
        "apiVersion: mongobench.io/v1alpha1\n\
         kind: MongoBenchmark\n\
         metadata: {{name: {name}}}\n\
         spec:\n\
         \x20 targets: [{{name: a, external: {{uriSecretRef: {{name: s}}}}}}]\n\
         \x20 platforms: [{{name: local}}]\n\
         \x20 dataset: {{sizes: ['300']}}\n\
         \x20 workload: {workload}\n\
         \x20 repetitions: 1\n"
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// Runs `mongobench run` and returns the exit code, stderr and the one result it wrote.
fn run(spec: &Path, uri: &str, processes: u32, out: &Path) -> (i32, String, Option<CellResult>) {
    let output = Command::new(env!("CARGO_BIN_EXE_mongobench"))
        .arg("run")
        .arg("-f")
        .arg(spec)
        .args(["--target", &format!("a={uri}")])
        .args(["--client-processes", &processes.to_string()])
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let result = std::fs::read_dir(out).ok().and_then(|entries| {
        entries
            .flatten()
            .find(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.ends_with(".json") && name != "comparison.json"
            })
            .map(|e| CellResult::from_json(&std::fs::read_to_string(e.path()).unwrap()).unwrap())
    });
    (output.status.code().unwrap_or(-1), stderr, result)
}

fn one_and_split(workload: &str, processes: u32, tag: &str) {
    let server = support::private_mongo(&format!("client-split-{tag}"));
    let dir = std::env::temp_dir().join(format!(
        "mongobench-client-split-{tag}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = spec(&dir, "split", workload);

    let (code, err, one) = run(&file, &server.uri, 1, &dir.join("one"));
    assert_eq!(code, 0, "{err}");
    let one = one.expect("the one-process run wrote its result");
    let (code, err, split) = run(&file, &server.uri, processes, &dir.join("split"));
    assert_eq!(code, 0, "{err}");
    let split = split.expect("the split run wrote its result");

    assert!(
        split.is_complete() && split.is_valid(),
        "{:?} {:?}",
        split.status,
        split.invalid_reasons
    );
    assert_eq!(
        split.fingerprint, one.fingerprint,
        "the processes sent one process's traffic"
    );
    assert_eq!(split.identity, one.identity);
    assert_eq!(split.worker_operations, one.worker_operations);
    assert_eq!(
        support::runs::completed_per_label(&split),
        support::runs::completed_per_label(&one)
    );
    assert_eq!(
        split.dataset.digest, one.dataset.digest,
        "both seeded the same data"
    );
    // Each process's own share is kept: workers, CPU, and how late it started.
    let pods = &split.client_pods;
    assert_eq!(
        pods.iter().map(|p| p.index).collect::<Vec<_>>(),
        (0..processes).collect::<Vec<_>>()
    );
    let workers: u32 = pods.iter().map(|p| p.workers).sum();
    assert_eq!(workers as usize, one.worker_operations.len());
    assert!(
        pods.iter().all(|p| p.cpu.user_us + p.cpu.system_us > 0),
        "{pods:?}"
    );
    assert!(
        pods.iter().all(|p| p.start_skew_ms.abs() < 5_000.0),
        "{pods:?}"
    );
    let cpu = split.client_cpu.expect("client CPU");
    assert_eq!(cpu.user_us, pods.iter().map(|p| p.cpu.user_us).sum::<u64>());
    assert!(one.client_pods.is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn two_local_processes_send_one_processs_flights_traffic() {
    one_and_split(
        "{type: flights, workers: 4, operations: 400, warmupOperations: 40, seed: 3}",
        2,
        "flights",
    );
}

#[test]
fn three_local_processes_send_one_processs_ycsb_a_traffic() {
    one_and_split(
        "{type: ycsb, ycsb: {workload: a}, workers: 5, operations: 500, warmupOperations: 50, seed: 3}",
        3,
        "ycsb",
    );
}

#[test]
fn impossible_splits_are_refused_before_anything_runs() {
    let dir = std::env::temp_dir().join(format!(
        "mongobench-client-split-bad-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let nothing = "mongodb://127.0.0.1:1/";
    let flights = spec(&dir, "few", "{type: flights, workers: 2, operations: 10}");
    let (code, err, _) = run(&flights, nothing, 3, &dir.join("few-out"));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--client-processes 3: more processes than the 2 workers"),
        "{err}"
    );
    let inserts = spec(
        &dir,
        "inserts",
        "{type: ycsb, ycsb: {workload: d}, workers: 4, operations: 10}",
    );
    let (code, err, _) = run(&inserts, nothing, 2, &dir.join("inserts-out"));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("spec.client.pods: 2 client pods cannot share YCSB's insert key counter"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
