//! The CEL rules of the generated CRD, evaluated client-side (kube's `cel` feature): they
//! compile, the examples pass them, every corpus file marked `# layer: cel` is refused by them
//! naming its field, and the transition rules make the experiment immutable. The real API
//! server runs the same rules in `tests/api_admission.rs`.

use std::path::{Path, PathBuf};

use kube::core::cel::{Validator, compile_schema};
use mongobench::api;
use serde_json::{Value, json};

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn read_yaml(path: &Path) -> Value {
    serde_yaml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn cel_errors(object: &Value, old: Option<&Value>) -> Vec<String> {
    match Validator::new().validate(&api::openapi_schema(), object, old) {
        Ok(()) => vec![],
        Err(errors) => errors.into_vec().iter().map(ToString::to_string).collect(),
    }
}

#[test]
fn every_rule_compiles() {
    let compiled = compile_schema(&api::openapi_schema());
    let errors: Vec<String> = compiled
        .compilation_errors()
        .iter()
        .map(|e| format!("{e:?}"))
        .collect();
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn the_examples_pass_every_rule() {
    for example in [
        "percona-9-vs-8.yaml",
        "ycsb-x86-vs-arm.yaml",
        "quickstart.yaml",
        "sweep-knee.yaml",
        "sharded-9-vs-8.yaml",
    ] {
        let doc = read_yaml(&repo(&format!("examples/{example}")));
        assert_eq!(cel_errors(&doc, None), Vec::<String>::new(), "{example}");
    }
}

#[test]
fn cel_layer_mistakes_are_refused_by_the_rules_naming_their_field() {
    let mut checked = 0;
    for entry in std::fs::read_dir(repo("tests/fixtures/invalid")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let mut header = text.lines();
        let expect = header.next().unwrap().strip_prefix("# expect: ").unwrap();
        let layer = header.next().and_then(|l| l.strip_prefix("# layer: "));
        if layer != Some("cel") {
            continue;
        }
        checked += 1;
        let errors = cel_errors(&serde_yaml::from_str(&text).unwrap(), None);
        assert!(
            errors.iter().any(|e| e.contains(expect)),
            "{path:?}: no CEL error names {expect}: {errors:?}"
        );
    }
    assert!(checked >= 15, "only {checked} CEL-layer fixtures");
}

#[test]
fn transition_rules_freeze_the_experiment_but_not_suspend_cleanup_or_ttl() {
    let old = read_yaml(&repo("examples/percona-9-vs-8.yaml"));

    let mut allowed = old.clone();
    allowed["spec"]["suspend"] = json!(true);
    allowed["spec"]["cleanupPolicy"] = json!("Retain");
    allowed["spec"]["ttlSecondsAfterFinished"] = json!(3600);
    assert_eq!(cel_errors(&allowed, Some(&old)), Vec::<String>::new());

    for (pointer, value, field) in [
        ("/spec/workload/duration", json!("5m"), "spec.workload"),
        (
            "/spec/targets/1/image",
            json!("percona/percona-server-mongodb:8.0.35-16"),
            "spec.targets",
        ),
        (
            "/spec/platforms/0/nodeSelector",
            json!({"pool": "other"}),
            "spec.platforms",
        ),
        ("/spec/dataset/seedWorkers", json!(4), "spec.dataset"),
        ("/spec/replicaSet/members", json!(5), "spec.replicaSet"),
        ("/spec/client/image", json!("mongobench:dev"), "spec.client"),
        ("/spec/repetitions", json!(4), "spec.repetitions"),
        ("/spec/baseline", json!("psmdb-8.3"), "spec.baseline"),
        ("/spec/parallelism", json!("Sequential"), "spec.parallelism"),
    ] {
        let mut changed = old.clone();
        match changed.pointer_mut(pointer) {
            Some(slot) => *slot = value,
            None => {
                let (parent, key) = pointer.rsplit_once('/').unwrap();
                changed.pointer_mut(parent).unwrap()[key] = value;
            }
        }
        let errors = cel_errors(&changed, Some(&old));
        assert!(
            errors
                .iter()
                .any(|e| e.contains(&format!("{field} is immutable"))),
            "{pointer}: {errors:?}"
        );
    }

    // Adding an optional block that was absent is a change too.
    let mut ycsb_old = read_yaml(&repo("examples/ycsb-x86-vs-arm.yaml"));
    ycsb_old["spec"].as_object_mut().unwrap().remove("client");
    let mut with_client = ycsb_old.clone();
    with_client["spec"]["client"] = json!({"nodeSelector": {"pool": "clients"}});
    let errors = cel_errors(&with_client, Some(&ycsb_old));
    assert!(
        errors
            .iter()
            .any(|e| e.contains("spec.client is immutable")),
        "{errors:?}"
    );
}
