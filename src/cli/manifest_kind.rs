//! What a document of a manifest file must be to be checked: a Kubernetes object; and which
//! objects are meant as MongoBenchmarks (the others are skipped).

use super::input::Problem;
use crate::api::{self, GROUP, KIND};

/// What a manifest must hold, quoted in refusals of files without one.
pub(super) fn expected() -> String {
    format!(
        "expected a {KIND} (apiVersion {}, kind {KIND})",
        api::API_VERSION
    )
}

/// A document that is not a Kubernetes object: not a mapping, or a mapping without `kind`.
/// Empty documents (between two `---`) are left alone, as kubectl leaves them.
pub(super) fn not_an_object(value: &serde_json::Value, prefix: &str) -> Option<Problem> {
    let shape = match value {
        serde_json::Value::Object(map) => {
            if map.get("kind").is_some_and(serde_json::Value::is_string)
                || is_mongo_benchmark(value)
            {
                return None;
            }
            return Some(Problem {
                line: None,
                path: "kind".to_string(),
                message: format!(
                    "{prefix}required field is missing: a Kubernetes object names its apiVersion \
                     and kind; {}",
                    expected()
                ),
            });
        }
        serde_json::Value::Null => return None,
        serde_json::Value::Array(_) => "a list",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::Bool(_) => "a boolean",
    };
    Some(Problem {
        line: None,
        path: String::new(),
        message: format!(
            "{prefix}{shape}, not a Kubernetes object (a mapping with apiVersion and kind); {}",
            expected()
        ),
    })
}

/// A document meant as a MongoBenchmark: its kind, or any apiVersion of our group.
pub(super) fn is_mongo_benchmark(value: &serde_json::Value) -> bool {
    let kind = value.get("kind").and_then(|k| k.as_str());
    let group = value
        .get("apiVersion")
        .and_then(|v| v.as_str())
        .and_then(|v| v.split_once('/'))
        .map(|(group, _)| group);
    kind == Some(KIND) || group == Some(GROUP)
}
