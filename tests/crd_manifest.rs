//! The committed `manifests/crd.yaml` is exactly what `mongobench crd` prints, and the CRD has
//! the names, columns and a structural schema the API expects.

use std::path::Path;
use std::process::Command;

use mongobench::api;
use serde_json::Value;

const REGENERATE: &str = "regenerate it with `cargo run -- crd > manifests/crd.yaml` and commit it";

fn committed() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("manifests/crd.yaml");
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}; {REGENERATE}", path.display()))
}

#[test]
fn committed_crd_matches_the_generated_one() {
    assert!(
        committed() == api::crd_yaml(),
        "manifests/crd.yaml differs from the CRD generated from the Rust types: {REGENERATE}"
    );
}

#[test]
fn the_binary_prints_the_committed_crd() {
    let out = Command::new(env!("CARGO_BIN_EXE_mongobench"))
        .arg("crd")
        .output()
        .expect("mongobench runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8(out.stdout).unwrap() == committed(),
        "`mongobench crd` differs from manifests/crd.yaml: {REGENERATE}"
    );
}

#[test]
fn names_scope_and_subresources() {
    let crd = serde_json::to_value(api::crd()).unwrap();
    assert_eq!(crd["metadata"]["name"], "mongobenchmarks.mongobench.io");
    let spec = &crd["spec"];
    assert_eq!(spec["group"], "mongobench.io");
    assert_eq!(spec["scope"], "Namespaced");
    assert_eq!(spec["names"]["kind"], "MongoBenchmark");
    assert_eq!(spec["names"]["plural"], "mongobenchmarks");
    assert_eq!(spec["names"]["shortNames"], serde_json::json!(["mbench"]));
    assert_eq!(
        spec["names"]["categories"],
        serde_json::json!(["mongobench"])
    );
    let versions = spec["versions"].as_array().unwrap();
    assert_eq!(versions.len(), 1);
    assert_eq!(versions[0]["name"], "v1alpha1");
    assert_eq!(versions[0]["served"], true);
    assert_eq!(versions[0]["storage"], true);
    assert_eq!(
        versions[0]["subresources"],
        serde_json::json!({"status": {}})
    );
}

#[test]
fn printer_columns() {
    let crd = serde_json::to_value(api::crd()).unwrap();
    let columns: Vec<(String, String, i64)> =
        crd["spec"]["versions"][0]["additionalPrinterColumns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["name"].as_str().unwrap().to_string(),
                    c["jsonPath"].as_str().unwrap().to_string(),
                    c["priority"].as_i64().unwrap_or(0),
                )
            })
            .collect();
    let expected = [
        ("Phase", ".status.phase", 0),
        ("Progress", ".status.progress", 0),
        ("Baseline", ".status.baseline", 0),
        ("Headline", ".status.headline", 0),
        ("Age", ".metadata.creationTimestamp", 0),
        ("Workload", ".spec.workload.type", 1),
        ("Targets", ".status.targetNames", 1),
        ("Knee", ".status.knees", 1),
        ("Platforms", ".status.platformNames", 1),
        ("ETA", ".status.estimatedCompletionTime", 1),
    ];
    let expected: Vec<(String, String, i64)> = expected
        .iter()
        .map(|(n, p, w)| (n.to_string(), p.to_string(), *w))
        .collect();
    assert_eq!(columns, expected);
}

/// Every problem that makes a schema non-structural (or that kube's rewriting can leave
/// behind), with its location.
fn structural_problems(schema: &Value, path: &str, out: &mut Vec<String>) {
    let Some(object) = schema.as_object() else {
        out.push(format!("{path}: not an object"));
        return;
    };
    let int_or_string = object.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true));
    let preserve = object.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
    if !object.contains_key("type") && !int_or_string && !preserve {
        out.push(format!("{path}: no type"));
    }
    for forbidden in [
        "$ref",
        "oneOf",
        "anyOf",
        "allOf",
        "not",
        "nullable",
        "uniqueItems",
    ] {
        if object.contains_key(forbidden) {
            out.push(format!("{path}: {forbidden}"));
        }
    }
    if object.contains_key("properties") && object.contains_key("additionalProperties") {
        out.push(format!("{path}: both properties and additionalProperties"));
    }
    if object.get("x-kubernetes-list-type").and_then(Value::as_str) == Some("map") {
        let keys = object["x-kubernetes-list-map-keys"].as_array().unwrap();
        let required = object["items"]["required"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for key in keys {
            if !required.contains(key) {
                out.push(format!("{path}: list-map key {key} is not required"));
            }
        }
    }
    if let Some(properties) = object.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            structural_problems(property, &format!("{path}.{name}"), out);
        }
    }
    if let Some(items) = object.get("items") {
        structural_problems(items, &format!("{path}[]"), out);
    }
    if let Some(additional) = object.get("additionalProperties").filter(|a| a.is_object()) {
        structural_problems(additional, &format!("{path}{{}}"), out);
    }
}

#[test]
fn the_schema_is_structural() {
    let mut problems = Vec::new();
    structural_problems(&api::openapi_schema(), "", &mut problems);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_spec_field_has_a_description() {
    fn missing(schema: &Value, path: &str, out: &mut Vec<String>) {
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            for (name, property) in properties {
                let here = format!("{path}.{name}");
                if property
                    .get("description")
                    .and_then(Value::as_str)
                    .is_none_or(str::is_empty)
                {
                    out.push(here.clone());
                }
                missing(property, &here, out);
            }
        }
        if let Some(items) = schema.get("items") {
            missing(items, &format!("{path}[]"), out);
        }
    }
    let schema = api::openapi_schema();
    let mut out = Vec::new();
    missing(&schema["properties"]["spec"], "spec", &mut out);
    missing(&schema["properties"]["status"], "status", &mut out);
    assert!(
        out.is_empty(),
        "fields without a description:\n{}",
        out.join("\n")
    );
}

/// Every `format` in the schema is one the API server knows, so `kubectl apply` prints no
/// "unrecognized format" warning.
#[test]
fn every_format_is_one_kubernetes_recognises() {
    fn formats(schema: &Value, path: &str, out: &mut Vec<String>) {
        match schema {
            Value::Object(map) => {
                if let Some(Value::String(f)) = map.get("format")
                    && ![
                        "int32",
                        "int64",
                        "float",
                        "double",
                        "byte",
                        "date",
                        "date-time",
                        "duration",
                        "quantity",
                    ]
                    .contains(&f.as_str())
                {
                    out.push(format!("{path}: {f}"));
                }
                for (k, v) in map {
                    formats(v, &format!("{path}.{k}"), out);
                }
            }
            Value::Array(items) => items.iter().for_each(|v| formats(v, path, out)),
            _ => {}
        }
    }
    let mut found = Vec::new();
    formats(&mongobench::api::openapi_schema(), "", &mut found);
    assert!(
        found.is_empty(),
        "formats kubectl does not recognise: {found:?}"
    );
}
