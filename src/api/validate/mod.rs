//! Offline validation of MongoBenchmark manifests: the same verdicts as the API server at
//! admission, without a cluster, and every violation at once.
//!
//! Two layers, as on the API server: the OpenAPI schema of the generated CRD (types, required
//! and unknown fields, bounds, patterns; see `schema.rs`), then the cross-field rules, which
//! restate the CEL rules of the CRD with precise field paths and the offending values
//! (`rules.rs`, `workload.rs`). Keep them and the `x_kube` CEL rules in `spec.rs` /
//! `workload.rs` of `api/` in step. Depends only on the rest of `api/`.

use std::sync::LazyLock;

use serde_json::Value;

use crate::api::crd::{API_VERSION, KIND, openapi_schema};
use crate::api::spec::MongoBenchmarkSpec;

mod rules;
mod schema;
mod sharding;
mod violation;
mod workload;

pub use violation::Violation;

/// Checks one manifest (a whole `MongoBenchmark` object as JSON): `apiVersion`, `kind`,
/// `metadata.name`, the schema (unknown fields included, as under strict field validation)
/// and every cross-field rule. Returns all violations; empty means valid.
pub fn validate_document(doc: &Value) -> Vec<Violation> {
    let mut out = Vec::new();
    let Some(object) = doc.as_object() else {
        out.push(Violation::new("", "a MongoBenchmark must be a mapping"));
        return out;
    };
    if object.get("apiVersion").and_then(Value::as_str) != Some(API_VERSION) {
        out.push(Violation::new(
            "apiVersion",
            format!(
                "must be {API_VERSION}, got {}",
                shown(object.get("apiVersion"))
            ),
        ));
    }
    if object.get("kind").and_then(Value::as_str) != Some(KIND) {
        out.push(Violation::new(
            "kind",
            format!("must be {KIND}, got {}", shown(object.get("kind"))),
        ));
    }
    check_metadata_name(object.get("metadata"), &mut out);
    // The API server itself owns apiVersion, kind and metadata (checked above); the schema
    // covers the rest.
    let mut rest = object.clone();
    for owned in ["apiVersion", "kind", "metadata"] {
        rest.remove(owned);
    }
    schema::check(&Value::Object(rest), &SCHEMA, "", &mut out);
    if let Some(spec) = object.get("spec").filter(|s| s.is_object()) {
        match serde_json::from_value::<MongoBenchmarkSpec>(spec.clone()) {
            Ok(spec) => rules::check_rules(&spec, &mut out),
            // Only a value the schema already refused (wrong type, unknown enum value) fails
            // to deserialize; report the reader's error only if nothing explains it.
            Err(e) if out.is_empty() => out.push(Violation::new("spec", e.to_string())),
            Err(_) => {}
        }
    }
    out
}

/// Checks a spec (schema bounds and patterns, then cross-field rules). Returns all violations
/// with paths from `spec`; empty means the API server accepts it.
pub fn validate(spec: &MongoBenchmarkSpec) -> Vec<Violation> {
    let mut out = Vec::new();
    let value = serde_json::to_value(spec).expect("a spec serializes to JSON");
    schema::check(&value, spec_schema(), "spec", &mut out);
    rules::check_rules(spec, &mut out);
    out
}

/// Checks a change from `old` to `new`: everything that defines the experiment is immutable;
/// only `suspend`, `cleanupPolicy` and `ttlSecondsAfterFinished` may change. Both sides are
/// compared after schema defaulting, as the API server compares them.
pub fn validate_update(old: &MongoBenchmarkSpec, new: &MongoBenchmarkSpec) -> Vec<Violation> {
    let schema = spec_schema();
    let defaulted = |spec: &MongoBenchmarkSpec| {
        let mut value = serde_json::to_value(spec).expect("a spec serializes to JSON");
        schema::apply_defaults(&mut value, schema);
        value
    };
    let (old, new) = (defaulted(old), defaulted(new));
    IMMUTABLE_FIELDS
        .iter()
        .filter(|field| old.get(**field) != new.get(**field))
        .map(|field| {
            Violation::new(
                &format!("spec.{field}"),
                "is immutable: it defines the experiment; create a new MongoBenchmark to run a \
                 different one (only suspend, cleanupPolicy and ttlSecondsAfterFinished may change)",
            )
        })
        .collect()
}

/// Spec fields that may not change after creation.
pub const IMMUTABLE_FIELDS: [&str; 12] = [
    "targets",
    "platforms",
    "replicaSet",
    "dataset",
    "workload",
    "client",
    "repetitions",
    "precision",
    "canaryPolicy",
    "baseline",
    "parallelism",
    "placement",
];

/// The CRD's schema, generated once: building the CRD costs far more than a check.
static SCHEMA: LazyLock<Value> = LazyLock::new(openapi_schema);

fn spec_schema() -> &'static Value {
    &SCHEMA["properties"]["spec"]
}

fn shown(value: Option<&Value>) -> String {
    value.map_or_else(|| "nothing".to_string(), Value::to_string)
}

/// `metadata.name`: required, a DNS-1123 subdomain (as the API server demands of custom
/// resources), unless `generateName` is set.
fn check_metadata_name(metadata: Option<&Value>, out: &mut Vec<Violation>) {
    let name = metadata.and_then(|m| m.get("name"));
    let generate = metadata.and_then(|m| m.get("generateName")).is_some();
    match name.and_then(Value::as_str) {
        None if generate => {}
        None => out.push(Violation::new("metadata.name", "required field is missing")),
        Some(name) => {
            let valid = name.len() <= 253
                && name.split('.').all(|label| {
                    !label.is_empty()
                        && label
                            .bytes()
                            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                        && !label.starts_with('-')
                        && !label.ends_with('-')
                });
            if !valid {
                out.push(Violation::new(
                    "metadata.name",
                    format!(
                        "invalid name {name:?}: expected lowercase letters, digits, '-' and '.', \
                         starting and ending with a letter or digit, at most 253 characters"
                    ),
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_sharding;
#[cfg(test)]
mod tests_sweep;
