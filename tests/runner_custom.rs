//! Custom workloads (docs/specs/custom.md) against the real MongoDB-wire servers of testenv:
//!
//! - examples/custom-orders.yaml, run as the README tells a user, seeds both servers, runs its
//!   two phases, restores and verifies what they wrote, and ends with a verdict; `mongobench
//!   verify` regenerates every cell's traffic from the document the run kept;
//! - the import of plgm's files (a fixture in their format) runs on both servers to a verdict;
//! - a template the server refuses fails the cell with the server's words and the template's
//!   name; a transaction of two templates runs on WiredTiger;
//! - a broken document, a missing file and a ConfigMap reference are refused before anything
//!   runs, naming the place;
//! - on a sharded target the balancer policy is set before the collections are seeded (here on
//!   a server that cannot shard, which refuses with its own error).
mod support;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use mongobench::api::{RunLength, WorkloadSharding};
use mongobench::plan::WorkloadPlan;
use mongobench::plan::custom::{CustomPlan, parse_document};
use mongobench::result::{CellResult, CellStatus};
use mongobench::runner::cell::{CellProgress, run_cell};
use mongobench::runner::dataset::prepare;
use mongobench::runner::server::{Sharding, connect};
use support::{mongobench, runs};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mongobench-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn results(dir: &Path) -> Vec<CellResult> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        // Every `*.json` but the run's comparison document is a result.
        if path.extension().is_some_and(|e| e == "json")
            && path.file_name().is_some_and(|n| n != "comparison.json")
        {
            out.push(serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap());
        }
    }
    out.sort_by_key(|r: &CellResult| r.cell.to_string());
    out
}

#[test]
fn the_shop_example_runs_on_both_servers_ends_with_a_verdict_and_verifies() {
    let postgres = support::private_mongo("custom-shop");
    let wiredtiger = support::private_secantus("custom-shop");
    let dir = temp_dir("custom-shop");
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/custom-orders.yaml");
    let (code, stdout, stderr) = mongobench(&[
        "run",
        "-f",
        example.to_str().unwrap(),
        "--target",
        &format!("postgres={}", postgres.uri),
        "--target",
        &format!("wiredtiger={}", wiredtiger.uri),
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let all = results(&dir);
    assert_eq!(all.len(), 6, "3 repetitions of 2 targets");
    let sha = all[0].identity.parameters["custom.documentSha256"].clone();
    for r in &all {
        assert_eq!(r.status, CellStatus::Complete, "{}", r.cell);
        assert!(r.is_valid(), "{}: {:?}", r.cell, r.invalid_reasons);
        let p = &r.identity.parameters;
        assert_eq!(p["workload"], "custom/v1");
        assert_eq!(p["custom.documentSha256"], sha);
        assert_eq!(
            (
                p["custom.seeded.customers"].as_str(),
                p["custom.seeded.orders"].as_str()
            ),
            ("1000", "5000"),
            "6k documents split 1:5"
        );
        assert_eq!(
            r.dataset.namespace.as_deref(),
            Some("shop.{customers,orders}")
        );
        let digest = r.dataset.digest.as_ref().expect("a digest");
        assert_eq!(digest.documents, 6000);
        assert!(digest.method.ends_with("-combined"), "{}", digest.method);
        let measured = r.measured.as_ref().expect("a measured phase");
        let mut classes: Vec<&str> = measured.operations.keys().map(String::as_str).collect();
        classes.sort();
        assert_eq!(
            classes,
            ["aggregate", "find", "findAndModify", "insert", "update"],
            "{}: one histogram per operation class",
            r.cell
        );
        // The read-only warm-up wrote nothing; the measured mix wrote orders (5000), which
        // were reloaded and checked by digest.
        let restores: Vec<(&str, u64, bool)> = r
            .dataset
            .restores
            .iter()
            .map(|x| (x.after.as_str(), x.rewritten, x.reseeded.is_none()))
            .collect();
        assert_eq!(
            restores,
            [("warmup", 0, true), ("measured", 5000, true)],
            "{}",
            r.cell
        );
        let mut explained: Vec<&str> = r.explain.keys().map(String::as_str).collect();
        explained.sort();
        assert_eq!(
            explained,
            [
                "customer-orders",
                "customer-revenue",
                "order-by-id",
                "pay-order",
                "ship-order"
            ],
            "one plan per explainable template"
        );
    }
    let report = std::fs::read_to_string(dir.join("report.txt")).unwrap();
    let verdict = report
        .lines()
        .find(|l| {
            l.starts_with("wiredtiger (SecantusDB ")
                && l.contains(" vs postgres (FerretDB 7.0.42) at 6k, 3 reps, MDE ")
        })
        .unwrap_or_else(|| panic!("no verdict line in:\n{report}"));
    assert!(verdict.contains("ops/s"), "{verdict}");
    let (code, stdout, stderr) = mongobench(&["verify", "--dir", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        stdout.ends_with("6 verified, 0 mismatched, 0 not checkable of 6 results\n"),
        "{stdout}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_imported_plgm_files_run_on_both_servers_with_a_verdict() {
    let postgres = support::private_mongo("custom-plgm");
    let wiredtiger = support::private_secantus("custom-plgm");
    let dir = temp_dir("custom-plgm");
    // Bounded by operations, so that every class of the mix is drawn whatever the speed.
    support::imported_plgm(&dir, "operations: 300");
    let bench = dir.join("plgm-bench.yaml");
    std::fs::write(
        &bench,
        "apiVersion: mongobench.io/v1alpha1
kind: MongoBenchmark
metadata: {name: plgm}
spec:
  targets:
    - {name: postgres, external: {uriSecretRef: {name: p}}}
    - {name: wiredtiger, external: {uriSecretRef: {name: w}}}
  platforms: [{name: local}]
  dataset: {sizes: ['500']}
  workload: {type: custom, workers: 2, custom: {file: plgm.yaml}}
  repetitions: 3
",
    )
    .unwrap();
    let out = dir.join("out");
    let (code, stdout, stderr) = mongobench(&[
        "run",
        "-f",
        bench.to_str().unwrap(),
        "--target",
        &format!("postgres={}", postgres.uri),
        "--target",
        &format!("wiredtiger={}", wiredtiger.uri),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let all = results(&out);
    assert_eq!(all.len(), 6);
    for r in &all {
        runs::assert_valid(r);
        let mut classes: Vec<&str> = r
            .measured
            .as_ref()
            .unwrap()
            .operations
            .keys()
            .map(String::as_str)
            .collect();
        classes.sort();
        // plgm's own operation names are the classes.
        assert_eq!(
            classes,
            [
                "aggregate",
                "deleteMany",
                "deleteOne",
                "find",
                "insert",
                "insertMany",
                "updateMany",
                "updateOne"
            ],
            "{}",
            r.cell
        );
    }
    assert!(
        stdout.contains("wiredtiger (SecantusDB ")
            && stdout.contains(" vs postgres (FerretDB 7.0.42) at 500, 3 reps, MDE "),
        "{stdout}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A one-collection workload whose measured phase sends `operations`.
fn plan(operations: &str, mix: &str) -> CustomPlan {
    let text = format!(
        "version: 1
database: custom_test
collections:
  - name: items
    fields:
      _id: {{sequence: {{}}}}
      price: {{int: {{min: 1, max: 100}}}}
      tag: {{choice: {{values: [a, b, c]}}}}
generators:
  item: {{ref: {{collection: items}}}}
operations:
{operations}
phases:
  - name: measured
    operations: 200
    workers: 2
    mix: {mix}
"
    );
    CustomPlan {
        workload: Arc::new(parse_document(&text, "test").unwrap_or_else(|e| panic!("{e}"))),
        text: text.as_str().into(),
        origin: "test".into(),
        seed: 3,
        dataset_seed: 1,
        seed_batch_size: 100,
        seed_workers: 2,
    }
}

async fn run_one(uri: &str, custom: CustomPlan, workers: u32) -> CellResult {
    let target = connect("t", uri, workers, Duration::from_secs(10))
        .await
        .unwrap();
    let plan = WorkloadPlan::Custom(Box::new(custom));
    let mut seeded = runs::seeded(&target, &plan, 300, workers).await;
    let settings = runs::settings(workers, RunLength::Operations(200));
    run_cell(
        &target,
        uri,
        &plan,
        &settings,
        runs::cell("custom", "custom/v1"),
        &mut seeded,
        &CellProgress::default(),
    )
    .await
}

#[tokio::test]
async fn a_template_the_server_refuses_fails_the_cell_with_its_error() {
    let server = support::private_secantus("custom-refused");
    let broken = plan(
        "  - name: cheap-items
    find: {collection: items, filter: {price: {$lessthan: 10}}}
  - name: by-id
    find: {collection: items, filter: {_id: \"{{item}}\"}}",
        "{cheap-items: 1, by-id: 1}",
    );
    let result = run_one(&server.uri, broken, 2).await;
    let CellStatus::Incomplete { reason } = &result.status else {
        panic!("a refused template left the cell {:?}", result.status);
    };
    assert!(
        reason.starts_with("target t: measured phase: operation \"cheap-items\": the server refused the command: command failed with error 2 (BadValue): unknown operator: $lessthan"),
        "{reason}"
    );
    assert!(!result.is_valid());
}

#[tokio::test]
async fn a_transaction_of_two_templates_runs_on_wiredtiger() {
    let server = support::private_secantus("custom-transaction");
    let custom = plan(
        "  - name: by-id
    weight: 0
    find: {collection: items, filter: {_id: \"{{item}}\"}}
  - name: reprice
    weight: 0
    update: {collection: items, filter: {_id: \"{{item}}\"}, update: {$inc: {price: 1}}}
  - name: check-and-reprice
    class: transaction
    transaction: {operations: [by-id, reprice]}",
        "{check-and-reprice: 1}",
    );
    // One worker: two workers' transactions on the same document may abort each other with a
    // write conflict, which is the server's concurrency, not what this test is about.
    let result = run_one(&server.uri, custom, 1).await;
    assert_eq!(result.status, CellStatus::Complete, "{:?}", result.status);
    let measured = result.measured.as_ref().unwrap();
    let ops: Vec<(&str, u64)> = measured
        .operations
        .iter()
        .map(|(k, v)| (k.as_str(), v.completed))
        .collect();
    assert_eq!(
        ops,
        [("transaction", 200)],
        "one class, every transaction counted once"
    );
    assert_eq!(measured.overall.errors.total(), 0);
    let restores: Vec<(&str, u64)> = result
        .dataset
        .restores
        .iter()
        .map(|r| (r.after.as_str(), r.rewritten))
        .collect();
    assert_eq!(
        restores,
        [("measured", 300)],
        "the written collection reloaded"
    );
    assert!(result.dataset.restores[0].reseeded.is_none());
}

#[test]
fn a_broken_document_a_missing_file_and_a_config_map_are_refused_before_anything_runs() {
    let dir = temp_dir("custom-refusals");
    let head = "apiVersion: mongobench.io/v1alpha1
kind: MongoBenchmark
metadata: {name: custom-refusals}
spec:
  targets: [{name: a, external: {uriSecretRef: {name: s}}}]
  platforms: [{name: local}]
  dataset: {sizes: ['100']}
  workload:
    type: custom
    custom:
";
    let write = |name: &str, custom: &str| {
        let path = dir.join(name);
        std::fs::write(&path, format!("{head}{custom}")).unwrap();
        path.display().to_string()
    };
    std::fs::write(
        dir.join("zipf.yaml"),
        "version: 1
collections: [{name: items, fields: {price: {int: {min: 1, max: 9}}}}]
operations:
  - {name: a, find: {collection: items}}
  - {name: b, find: {collection: items}}
  - {name: c, find: {collection: items, filter: {price: {$gt: \"{{zipf}}\"}}}}
phases: [{name: m, operations: 10}]
",
    )
    .unwrap();
    let cases = [
        (
            write("file.yaml", "      file: zipf.yaml\n"),
            "spec.workload.custom.file (zipf.yaml): workload.custom.operations[2].find.filter.price.$gt: unknown generator \"zipf\"",
        ),
        (
            write("missing.yaml", "      file: nowhere.yaml\n"),
            "spec.workload.custom.file (nowhere.yaml): ",
        ),
        (
            write("configmap.yaml", "      configMapRef: {name: shop}\n"),
            "spec.workload.custom.configMapRef (ConfigMap shop key workload.yaml): a ConfigMap is read by the operator",
        ),
    ];
    let out = dir.join("out");
    for (file, needle) in &cases {
        let (code, _, stderr) = mongobench(&[
            "run",
            "-f",
            file,
            "--target",
            "a=mongodb://127.0.0.1:1/",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(code, 2, "{file}: {stderr}");
        assert!(stderr.contains(needle), "expected {needle:?} in: {stderr}");
        assert!(!out.exists(), "a refused run wrote {}", out.display());
    }
    // `validate` reads the file, and an inline document, and says where it breaks.
    let (code, stdout, _) = mongobench(&["validate", "-f", &cases[0].0]);
    assert_eq!(code, 2, "{stdout}");
    assert!(stdout.contains(cases[0].1), "{stdout}");
    let inline = write("inline.yaml", "      inline: |\n        version: 2\n");
    let (code, stdout, _) = mongobench(&["validate", "-f", &inline]);
    assert_eq!(code, 2, "{stdout}");
    assert!(
        stdout.contains("inline.yaml:11: spec.workload.custom.inline: workload.custom.version: "),
        "{stdout}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn a_sharded_target_gets_the_balancer_policy_before_a_custom_workload_is_seeded() {
    let uri = support::secantus_uri();
    let text = "version: 1
database: custom_sharded
collections:
  - name: items
    shardKey: {field: price, type: hashed}
    fields: {price: {int: {min: 1, max: 100}}}
operations: [{name: all, find: {collection: items}}]
phases: [{name: m, operations: 10}]
";
    let custom = CustomPlan {
        workload: Arc::new(parse_document(text, "test").unwrap()),
        text: text.into(),
        origin: "test".into(),
        seed: 1,
        dataset_seed: 1,
        seed_batch_size: 100,
        seed_workers: 1,
    };
    let mut target = connect("t", &uri, 1, Duration::from_secs(10))
        .await
        .unwrap();
    target.sharding = Some(Arc::new(Sharding {
        workload: WorkloadSharding::default(),
        topology: "sharded".into(),
    }));
    let plan = WorkloadPlan::Custom(Box::new(custom));
    let e = prepare(&target, &plan, 1, 100, None, false, runs::LIMIT)
        .await
        .expect_err("a server that cannot shard refuses");
    let message = e.to_string();
    assert!(
        message.starts_with("sharding the collection: reading the balancer's state: "),
        "{message}"
    );
}
