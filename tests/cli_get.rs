//! `mongobench get` against the real API server: `-o wide` with the ETA the status holds,
//! `-o json|yaml` with the objects, `-w` printing a benchmark again as its status changes,
//! and `--kubeconfig`/`--context` choosing the cluster instead of the environment's.
mod operator_common;
mod support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use kube::api::{Patch, PatchParams};
use operator_common as common;
use serde_json::json;

/// `mongobench ARGS` with no kubeconfig in its environment: only the flags name the cluster.
fn get(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mongobench"))
        .args(args)
        .env("KUBECONFIG", "/nonexistent/kubeconfig")
        .env("HOME", "/nonexistent")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

async fn set_status(env: &support::KubeEnv, status: serde_json::Value) {
    common::benchmarks(env)
        .patch_status(
            "study",
            &PatchParams::default(),
            &Patch::Merge(json!({ "status": status })),
        )
        .await
        .unwrap();
}

#[tokio::test]
async fn get_shows_wide_json_yaml_and_watches_with_the_flags_kubeconfig() {
    let env = common::setup("cli-get").await;
    common::apply(&env, &common::fast_slow_study("study", 3)).await;
    let eta =
        k8s_openapi::jiff::Timestamp::now() + k8s_openapi::jiff::SignedDuration::from_mins(42);
    let eta = k8s_openapi::jiff::Timestamp::from_second(eta.as_second()).unwrap();
    set_status(
        &env,
        json!({"phase": "Running", "progress": "2/6", "estimatedCompletionTime": eta.to_string()}),
    )
    .await;
    let kubeconfig = env.kubeconfig.to_str().unwrap();
    let ns = env.namespace.as_str();
    let base = ["get", "study", "-n", ns, "--kubeconfig", kubeconfig];
    let with = |extra: &[&'static str]| -> Vec<&str> {
        base.iter().copied().chain(extra.iter().copied()).collect()
    };

    let (code, out, err) = get(&with(&["-o", "wide"]));
    assert_eq!(code, 0, "{err}");
    let mut lines = out.lines();
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        [
            "NAME",
            "PHASE",
            "PROGRESS",
            "HEADLINE",
            "AGE",
            "WORKLOAD",
            "TARGETS",
            "PLATFORMS",
            "ETA"
        ]
    );
    let row = lines.next().unwrap();
    assert!(row.starts_with("study  Running  2/6"), "{out}");
    assert!(
        row.ends_with("flights   fast,slow  local      in 41m") || row.ends_with("in 42m"),
        "{out}"
    );

    let (code, out, err) = get(&with(&["-o", "json"]));
    assert_eq!(code, 0, "{err}");
    let object: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(object["kind"], "MongoBenchmark");
    assert_eq!(object["metadata"]["name"], "study");
    assert_eq!(object["status"]["estimatedCompletionTime"], eta.to_string());
    assert!(object["metadata"].get("managedFields").is_none());

    let (code, out, err) = get(&["get", "-n", ns, "--kubeconfig", kubeconfig, "-o", "yaml"]);
    assert_eq!(code, 0, "{err}");
    let list: serde_json::Value = serde_yaml::from_str(&out).unwrap();
    assert_eq!(list["kind"], "List");
    assert_eq!(list["items"][0]["spec"]["baseline"], "slow");

    // A context the kubeconfig does not have is named.
    let (code, _, err) = get(&with(&["--context", "elsewhere"]));
    assert_eq!(code, 1);
    assert!(
        err.contains("--context elsewhere: not usable from the kubeconfig"),
        "{err}"
    );

    // Watching: the table, then the benchmark again each time its status changes.
    let mut watch = Command::new(env!("CARGO_BIN_EXE_mongobench"))
        .args(with(&["-w"]))
        .env("KUBECONFIG", "/nonexistent/kubeconfig")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = watch.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    let next = || {
        rx.recv_timeout(Duration::from_secs(30))
            .expect("a line from get -w")
    };
    assert!(next().starts_with("NAME"));
    assert!(next().starts_with("study  Running  2/6"));
    set_status(&env, json!({"progress": "3/6"})).await;
    let changed = next();
    assert!(changed.starts_with("study  Running  3/6"), "{changed}");
    watch.kill().unwrap();
    watch.wait().unwrap();
}
