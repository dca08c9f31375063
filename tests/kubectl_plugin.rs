//! The binary installed as `kubectl-mongobench` is a kubectl plugin: the real kubectl finds it
//! on PATH and `kubectl mongobench validate|get|report` work against the real API server.
mod operator_common;
mod support;

use std::path::Path;
use std::process::Command;

use kube::api::{Api, Patch, PatchParams};
use mongobench::api::MongoBenchmark;
use mongobench::contract::JobPlan;
use mongobench::operator::testing::result;
use operator_common as common;
use serde_json::json;

/// Runs `kubectl mongobench ARGS` with the plugin installed in `bin` and `kubeconfig`.
fn kubectl_mongobench(bin: &Path, kubeconfig: &Path, args: &[&str]) -> (i32, String, String) {
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new(support::kubectl())
        .arg("mongobench")
        .args(args)
        .env("PATH", path)
        .env("KUBECONFIG", kubeconfig)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test]
async fn kubectl_runs_the_binary_as_its_mongobench_plugin() {
    let env = common::setup("plugin").await;
    let bin = tempfile_dir("plugin-bin");
    std::os::unix::fs::symlink(
        env!("CARGO_BIN_EXE_mongobench"),
        bin.join("kubectl-mongobench"),
    )
    .unwrap();
    let run = |args: &[&str]| kubectl_mongobench(&bin, &env.kubeconfig, args);

    let (code, out, err) = run(&["--help"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Usage: kubectl mongobench"), "{out}");

    let (code, out, err) = run(&["validate", "-f", "examples/percona-9-vs-8.yaml"]);
    assert_eq!(code, 0, "{out}{err}");

    let (code, out, err) = run(&["get", "-n", &env.namespace]);
    assert_eq!(code, 0, "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains(&format!(
            "no MongoBenchmarks in namespace {}",
            env.namespace
        )),
        "{err}"
    );

    let bench = common::apply(&env, &common::fast_slow_study("study", 3)).await;
    let headline = "fast +30.1% ±0.2% ops/s vs slow at 1k, 3 reps";
    Api::<MongoBenchmark>::namespaced(env.client.clone(), &env.namespace)
        .patch_status(
            "study",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {
                "phase": "Completed", "progress": "6/6", "headline": headline
            }})),
        )
        .await
        .unwrap();
    let (code, out, err) = run(&["get", "-n", &env.namespace]);
    assert_eq!(code, 0, "{err}");
    let row = out.lines().nth(1).unwrap_or_else(|| panic!("{out}"));
    let fields: Vec<&str> = row.split("  ").filter(|f| !f.is_empty()).collect();
    assert_eq!(
        fields.iter().map(|f| f.trim()).collect::<Vec<_>>()[..4],
        ["study", "Completed", "6/6", headline],
        "{out}"
    );
    let (code, _, err) = run(&["get", "nope", "-n", &env.namespace]);
    assert_eq!(code, 2);
    assert!(
        err.contains(&format!(
            "no MongoBenchmark named nope in namespace {}",
            env.namespace
        )),
        "{err}"
    );

    // Results as a runner writes them: `fast` does 30 % more finds per second than `slow`.
    let plan = JobPlan {
        plan_version: mongobench::contract::PLAN_VERSION,
        benchmark: "study".into(),
        namespace: Some(env.namespace.clone()),
        uid: bench.metadata.uid.clone(),
        run_id: "run".into(),
        platform: "local".into(),
        targets: Vec::new(),
        completed_cells: Vec::new(),
        board: None,
        run: mongobench::contract::RunDefinition::of(&bench.spec).unwrap(),
    };
    for (target, finds) in [("slow", 1000), ("fast", 1300)] {
        for rep in 1..=3 {
            let r = result(
                "study",
                target,
                "local",
                "1k",
                rep,
                10,
                &[("find", finds + rep as u64, 150)],
                None,
            );
            let id = mongobench::plan::cell_id(target, "local", "1k", rep);
            common::write_result(&env, &plan, &id, &r).await;
        }
    }
    let (code, out, err) = run(&["report", "study", "-n", &env.namespace]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("baseline slow"), "{out}");
    let fast = out
        .lines()
        .find(|l| l.trim_start().starts_with("fast") && l.contains('%'))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(fast.contains("+30."), "{fast}");

    let (code, _, err) = run(&["report", "nope", "-n", &env.namespace]);
    assert_ne!(code, 0);
    assert!(
        err.contains(&format!(
            "no MongoBenchmark named nope in namespace {}",
            env.namespace
        )),
        "{err}"
    );
}

/// A fresh directory under the system's temporary directory.
fn tempfile_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("mongobench-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
