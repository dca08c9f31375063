//! Offline check of a JSON value against the CRD's OpenAPI v3 schema, as the API server does it
//! before CEL rules: types, required fields, unknown fields (strict field validation), enums,
//! bounds, lengths, item and property counts, patterns. Also applies schema defaults, as the
//! API server does before CEL rules and before comparing old and new objects.
//!
//! Walking the generated schema, rather than restating its bounds in Rust, keeps the offline
//! validator and the CRD from drifting apart.

use regex::Regex;
use serde_json::{Map, Value};

use super::violation::Violation;
use crate::api::replica_set::QUANTITY_PATTERN;
use crate::api::targets::NAME_PATTERN;
use crate::api::units::{
    DATASET_SIZE_FORM, DATASET_SIZE_PATTERN, DURATION_FORM, DURATION_PATTERN, parse_dataset_size,
    parse_duration,
};
use crate::api::workload::WRITE_CONCERN_PATTERN;

/// Appends a violation for every place where `value` does not satisfy `schema`; `path` is the
/// field path of `value` (e.g. `spec.workload`).
pub(crate) fn check(value: &Value, schema: &Value, path: &str, out: &mut Vec<Violation>) {
    if schema.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
        match value {
            Value::Number(n) if n.is_i64() || n.is_u64() => {}
            Value::String(s) => check_string(s, schema, path, out),
            _ => out.push(Violation::new(
                path,
                format!("must be an integer or a string, got {}", describe(value)),
            )),
        }
        return;
    }
    let expected = schema.get("type").and_then(Value::as_str);
    match (expected, value) {
        (Some("object"), Value::Object(map)) => check_object(map, schema, path, out),
        (Some("array"), Value::Array(items)) => check_array(items, schema, path, out),
        (Some("string"), Value::String(s)) => check_string(s, schema, path, out),
        (Some("integer"), Value::Number(n)) if n.is_i64() || n.is_u64() => {
            check_bounds(value, schema, path, out)
        }
        (Some("number"), Value::Number(_)) => check_bounds(value, schema, path, out),
        (Some("boolean"), Value::Bool(_)) => {}
        (Some(expected), _) => {
            let article = if expected == "integer" || expected == "array" || expected == "object" {
                "an"
            } else {
                "a"
            };
            out.push(Violation::new(
                path,
                format!("must be {article} {expected}, got {}", describe(value)),
            ));
            return;
        }
        (None, _) => {}
    }
    check_enum(value, schema, path, out);
}

fn check_object(map: &Map<String, Value>, schema: &Value, path: &str, out: &mut Vec<Violation>) {
    let properties = schema.get("properties").and_then(Value::as_object);
    let additional = schema.get("additionalProperties");
    let preserve = schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        for field in required.iter().filter_map(Value::as_str) {
            // The API server prunes nulls of non-nullable fields, so null counts as missing.
            if map.get(field).is_none_or(Value::is_null) {
                out.push(Violation::new(
                    &child(path, field),
                    "required field is missing".to_string(),
                ));
            }
        }
    }
    if let Some(max) = schema.get("maxProperties").and_then(Value::as_u64)
        && map.len() as u64 > max
    {
        out.push(Violation::new(
            path,
            format!("must have at most {max} entries, got {}", map.len()),
        ));
    }
    for (key, item) in map {
        if item.is_null() {
            continue;
        }
        let item_path = child(path, key);
        match properties.and_then(|p| p.get(key)) {
            Some(property) => check(item, property, &item_path, out),
            None => match additional {
                Some(additional) if additional.is_object() => {
                    check(item, additional, &item_path, out)
                }
                _ if preserve || properties.is_none() => {}
                _ => out.push(Violation::new(
                    &item_path,
                    format!(
                        "unknown field {key:?}; known fields here: {}",
                        properties
                            .map(|p| p.keys().cloned().collect::<Vec<_>>().join(", "))
                            .unwrap_or_default()
                    ),
                )),
            },
        }
    }
}

fn check_array(items: &[Value], schema: &Value, path: &str, out: &mut Vec<Violation>) {
    if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
        && (items.len() as u64) < min
    {
        out.push(Violation::new(
            path,
            format!("must have at least {min} item(s), got {}", items.len()),
        ));
    }
    if let Some(max) = schema.get("maxItems").and_then(Value::as_u64)
        && items.len() as u64 > max
    {
        out.push(Violation::new(
            path,
            format!("must have at most {max} items, got {}", items.len()),
        ));
    }
    if let Some(item_schema) = schema.get("items") {
        for (i, item) in items.iter().enumerate() {
            check(item, item_schema, &format!("{path}[{i}]"), out);
        }
    }
}

fn check_string(s: &str, schema: &Value, path: &str, out: &mut Vec<Violation>) {
    // The API server counts characters, not bytes.
    let chars = s.chars().count() as u64;
    if let Some(min) = schema.get("minLength").and_then(Value::as_u64)
        && chars < min
    {
        let what = if min == 1 {
            "must not be empty".to_string()
        } else {
            format!("must be at least {min} characters long, got {chars}")
        };
        out.push(Violation::new(path, what));
        return;
    }
    if let Some(max) = schema.get("maxLength").and_then(Value::as_u64)
        && chars > max
    {
        out.push(Violation::new(
            path,
            format!("must be at most {max} characters long, got {chars}"),
        ));
        return;
    }
    if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
        let matches = Regex::new(pattern)
            .map(|re| re.is_match(s))
            .unwrap_or(false);
        if !matches {
            out.push(Violation::new(path, pattern_message(s, pattern)));
        }
    }
}

/// A message for a string that does not match `pattern`, naming the value and the expected form
/// in words where the pattern is one of ours.
fn pattern_message(s: &str, pattern: &str) -> String {
    if pattern == DATASET_SIZE_PATTERN {
        return match parse_dataset_size(s) {
            Err(e) => e.to_string(),
            Ok(_) => format!("invalid dataset size {s:?}: expected {DATASET_SIZE_FORM}"),
        };
    }
    if pattern == DURATION_PATTERN {
        return match parse_duration(s) {
            Err(e) => e.to_string(),
            Ok(_) => format!("invalid duration {s:?}: expected {DURATION_FORM}"),
        };
    }
    let form = if pattern == NAME_PATTERN {
        "lowercase letters, digits, '-' and '.', starting and ending with a letter or digit"
            .to_string()
    } else if pattern == QUANTITY_PATTERN {
        "a non-negative Kubernetes quantity such as 50Gi, 512Mi, 500m or 4".to_string()
    } else if pattern == WRITE_CONCERN_PATTERN {
        "default, majority, or a number of members from 1 to 99".to_string()
    } else {
        format!("a value matching {pattern}")
    };
    format!("invalid value {s:?}: expected {form}")
}

fn check_bounds(value: &Value, schema: &Value, path: &str, out: &mut Vec<Violation>) {
    // Kubernetes stores integers as int64: larger ones cannot be represented, whatever the
    // field's own bounds (one violation, not two).
    if value.as_u64().is_some_and(|u| u > i64::MAX as u64) {
        out.push(Violation::new(
            path,
            format!("must be at most {}, got {value}", i64::MAX),
        ));
        return;
    }
    let Some(v) = value.as_f64() else { return };
    if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
        && v < min
    {
        out.push(Violation::new(
            path,
            format!("must be at least {}, got {value}", number(min)),
        ));
    }
    if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
        && v > max
    {
        out.push(Violation::new(
            path,
            format!("must be at most {}, got {value}", number(max)),
        ));
    }
}

fn check_enum(value: &Value, schema: &Value, path: &str, out: &mut Vec<Violation>) {
    let Some(allowed) = schema.get("enum").and_then(Value::as_array) else {
        return;
    };
    if !allowed.contains(value) {
        let names: Vec<String> = allowed
            .iter()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
            .collect();
        out.push(Violation::new(
            path,
            format!("must be one of {}, got {value}", names.join(", ")),
        ));
    }
}

/// Fills in schema defaults where a property is absent and its parent object is present, as the
/// API server does on every write and read.
pub(crate) fn apply_defaults(value: &mut Value, schema: &Value) {
    match value {
        Value::Object(map) => {
            if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
                for (key, property) in properties {
                    if map.get(key).is_none_or(Value::is_null)
                        && let Some(default) = property.get("default")
                    {
                        map.insert(key.clone(), default.clone());
                    }
                }
                for (key, item) in map.iter_mut() {
                    if let Some(property) = properties.get(key) {
                        apply_defaults(item, property);
                    }
                }
            } else if let Some(additional) = schema.get("additionalProperties")
                && additional.is_object()
            {
                for item in map.values_mut() {
                    apply_defaults(item, additional);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for item in items {
                    apply_defaults(item, item_schema);
                }
            }
        }
        _ => {}
    }
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn number(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 1e15 {
        format!("{}", f as i64)
    } else {
        format!("{f}")
    }
}

fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_string(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) => format!("number {n}"),
        Value::String(s) => format!("string {s:?}"),
        Value::Array(_) => "a list".to_string(),
        Value::Object(_) => "an object".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn violations(value: Value, schema: Value) -> Vec<String> {
        let mut out = Vec::new();
        check(&value, &schema, "spec", &mut out);
        // Sorted: the order of object keys depends on serde_json's map features.
        let mut out: Vec<String> = out.into_iter().map(|v| v.to_string()).collect();
        out.sort();
        out
    }

    #[test]
    fn unknown_fields_are_named_with_their_path() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "integer"}}});
        assert_eq!(
            violations(json!({"a": 1, "b": 2}), schema),
            ["spec.b: unknown field \"b\"; known fields here: a"]
        );
    }

    #[test]
    fn maps_and_preserved_objects_accept_any_key() {
        let map = json!({"type": "object", "additionalProperties": {"type": "string"}});
        assert!(violations(json!({"x": "1", "y": "2"}), map.clone()).is_empty());
        assert_eq!(
            violations(json!({"x": 1}), map),
            ["spec.x: must be a string, got number 1"]
        );
        let free = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                          "properties": {"a": {"type": "integer"}}});
        assert!(violations(json!({"z": true}), free).is_empty());
    }

    #[test]
    fn required_fields_and_nulls() {
        let schema = json!({"type": "object", "required": ["a", "b"],
                            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}});
        assert_eq!(
            violations(json!({"a": null}), schema),
            [
                "spec.a: required field is missing",
                "spec.b: required field is missing"
            ]
        );
    }

    #[test]
    fn bounds_lengths_counts_and_enums() {
        let schema = json!({"type": "object", "properties": {
            "n": {"type": "integer", "minimum": 1.0, "maximum": 4096.0},
            "s": {"type": "string", "minLength": 1, "maxLength": 3},
            "l": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "string"}},
            "e": {"type": "string", "enum": ["a", "b"]},
            "f": {"type": "number", "minimum": 0.25}}});
        assert_eq!(
            violations(
                json!({"n": 0, "s": "abcd", "l": ["x", "y", 3], "e": "c", "f": 0.1}),
                schema.clone()
            ),
            [
                "spec.e: must be one of a, b, got \"c\"",
                "spec.f: must be at least 0.25, got 0.1",
                "spec.l: must have at most 2 items, got 3",
                "spec.l[2]: must be a string, got number 3",
                "spec.n: must be at least 1, got 0",
                "spec.s: must be at most 3 characters long, got 4",
            ]
        );
        assert_eq!(
            violations(json!({"n": 4097, "s": "", "l": []}), schema),
            [
                "spec.l: must have at least 1 item(s), got 0",
                "spec.n: must be at most 4096, got 4097",
                "spec.s: must not be empty",
            ]
        );
    }

    #[test]
    fn integers_beyond_int64_are_refused() {
        let schema = json!({"type": "integer", "minimum": 0.0});
        assert_eq!(
            violations(json!(u64::MAX), schema),
            ["spec: must be at most 9223372036854775807, got 18446744073709551615"]
        );
        // Once, even where the field's own maximum is lower.
        let schema = json!({"type": "integer", "minimum": 1.0, "maximum": 100.0});
        assert_eq!(
            violations(json!(9_223_372_036_854_775_808_u64), schema),
            ["spec: must be at most 9223372036854775807, got 9223372036854775808"]
        );
    }

    #[test]
    fn patterns_use_friendly_forms() {
        let size = json!({"type": "string", "pattern": DATASET_SIZE_PATTERN});
        assert_eq!(
            violations(json!("1.5M"), size),
            [format!(
                "spec: invalid dataset size \"1.5M\": expected {DATASET_SIZE_FORM}"
            )]
        );
        let duration = json!({"type": "string", "pattern": DURATION_PATTERN});
        assert_eq!(
            violations(json!("10 minutes"), duration),
            [format!(
                "spec: invalid duration \"10 minutes\": expected {DURATION_FORM}"
            )]
        );
        let quantity = json!({"x-kubernetes-int-or-string": true, "pattern": QUANTITY_PATTERN});
        assert!(violations(json!("50Gi"), quantity.clone()).is_empty());
        assert!(violations(json!(4), quantity.clone()).is_empty());
        assert_eq!(
            violations(json!("50GB"), quantity.clone()),
            [
                "spec: invalid value \"50GB\": expected a non-negative Kubernetes quantity such as 50Gi, 512Mi, 500m or 4"
            ]
        );
        assert_eq!(
            violations(json!("-100Gi"), quantity.clone()),
            [
                "spec: invalid value \"-100Gi\": expected a non-negative Kubernetes quantity such as 50Gi, 512Mi, 500m or 4"
            ]
        );
        assert_eq!(
            violations(json!(true), quantity),
            ["spec: must be an integer or a string, got boolean true"]
        );
    }

    #[test]
    fn defaults_fill_absent_fields_of_present_objects_only() {
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "integer", "default": 3},
            "o": {"type": "object", "properties": {"b": {"type": "string", "default": "x"}}},
            "p": {"type": "object", "properties": {"c": {"type": "integer", "default": 1}}}}});
        let mut value = json!({"o": {}, "a": null});
        apply_defaults(&mut value, &schema);
        assert_eq!(value, json!({"a": 3, "o": {"b": "x"}}));
    }
}
