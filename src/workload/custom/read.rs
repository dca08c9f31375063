//! Readers of the YAML value tree: each takes the value and its path, so that every error names
//! where it is, and refuses what it does not expect. [`SpecError`], the error they return, is
//! defined here: every other file of the folder builds on these readers.

use mongodb::bson::{Bson, Document};
use serde_yaml::Value;

/// An error at a path inside the workload document.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct SpecError {
    /// Where, e.g. `workload.custom.operations[2].find.filter.price.$gt`.
    pub path: String,
    /// What is wrong and what is expected instead.
    pub message: String,
}

pub(super) type Result<T> = std::result::Result<T, SpecError>;

pub(super) fn err(path: &str, message: impl Into<String>) -> SpecError {
    SpecError {
        path: path.to_owned(),
        message: message.into(),
    }
}

pub(super) fn at(path: &str, key: &str) -> String {
    format!("{path}.{key}")
}

pub(super) fn at_index(path: &str, i: usize) -> String {
    format!("{path}[{i}]")
}

/// A short description of a value for "got …" in messages.
pub(super) fn describe(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) if s.chars().count() > 40 => {
            format!("{:?}…", s.chars().take(40).collect::<String>())
        }
        Value::String(s) => format!("{s:?}"),
        Value::Sequence(_) => "a list".into(),
        Value::Mapping(_) => "a map".into(),
        Value::Tagged(t) => format!("a value tagged {}", t.tag),
    }
}

/// A map's entries in document order, its keys checked against the ones it may hold.
pub(super) struct Map<'a> {
    pub path: String,
    pub entries: Vec<(&'a str, &'a Value)>,
}

impl<'a> Map<'a> {
    /// Any string keys (generator fields, filters).
    pub fn open(v: &'a Value, path: &str) -> Result<Map<'a>> {
        let Value::Mapping(mapping) = v else {
            return Err(err(path, format!("expected a map, got {}", describe(v))));
        };
        let mut entries = Vec::with_capacity(mapping.len());
        for (k, value) in mapping {
            let Value::String(k) = k else {
                return Err(err(
                    path,
                    format!("keys must be strings, got {}", describe(k)),
                ));
            };
            if k.contains('\0') {
                return Err(err(&at(path, k), "a key must not hold a NUL character"));
            }
            entries.push((k.as_str(), value));
        }
        Ok(Map {
            path: path.to_owned(),
            entries,
        })
    }

    /// Only `allowed` keys.
    pub fn new(v: &'a Value, path: &str, allowed: &[&str]) -> Result<Map<'a>> {
        let map = Map::open(v, path)?;
        for (k, _) in &map.entries {
            if !allowed.contains(k) {
                return Err(err(
                    &at(path, k),
                    format!("unknown key {k:?}; expected one of: {}", allowed.join(", ")),
                ));
            }
        }
        Ok(map)
    }

    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.entries
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| *v)
    }

    pub fn req(&self, key: &str) -> Result<&'a Value> {
        self.get(key)
            .ok_or_else(|| err(&self.path, format!("missing key {key:?}")))
    }

    pub fn at(&self, key: &str) -> String {
        at(&self.path, key)
    }
}

pub(super) fn int_in(v: &Value, path: &str, lo: i64, hi: i64) -> Result<i64> {
    let n = match v {
        Value::Number(n) if !n.is_f64() => n.as_i64(),
        _ => None,
    };
    match n {
        Some(n) if (lo..=hi).contains(&n) => Ok(n),
        _ if lo == i64::MIN && hi == i64::MAX => Err(err(
            path,
            format!("expected a 64-bit integer, got {}", describe(v)),
        )),
        _ => Err(err(
            path,
            format!("expected an integer from {lo} to {hi}, got {}", describe(v)),
        )),
    }
}

pub(super) fn uint_in(v: &Value, path: &str, lo: u64, hi: u64) -> Result<u64> {
    let n = match v {
        Value::Number(n) if !n.is_f64() => n.as_u64(),
        _ => None,
    };
    match n {
        Some(n) if (lo..=hi).contains(&n) => Ok(n),
        _ => Err(err(
            path,
            format!("expected an integer from {lo} to {hi}, got {}", describe(v)),
        )),
    }
}

/// A weight: a non-negative integer.
pub(super) fn weight(v: &Value, path: &str) -> Result<u64> {
    match v {
        Value::Number(n) if !n.is_f64() && n.as_u64().is_some() => Ok(n.as_u64().unwrap_or(0)),
        _ => Err(err(
            path,
            format!("expected a weight (an integer ≥ 0), got {}", describe(v)),
        )),
    }
}

pub(super) fn number(v: &Value, path: &str) -> Result<f64> {
    match v {
        Value::Number(n) => match n.as_f64() {
            Some(x) if x.is_finite() => Ok(x),
            _ => Err(err(path, format!("expected a finite number, got {n}"))),
        },
        _ => Err(err(path, format!("expected a number, got {}", describe(v)))),
    }
}

pub(super) fn boolean(v: &Value, path: &str) -> Result<bool> {
    match v {
        Value::Bool(b) => Ok(*b),
        _ => Err(err(
            path,
            format!("expected true or false, got {}", describe(v)),
        )),
    }
}

pub(super) fn string<'a>(v: &'a Value, path: &str) -> Result<&'a str> {
    match v {
        Value::String(s) => Ok(s),
        _ => Err(err(path, format!("expected a string, got {}", describe(v)))),
    }
}

/// A list of `lo ..= hi` items, `what` naming them in the message.
pub(super) fn list<'a>(
    v: &'a Value,
    path: &str,
    lo: usize,
    hi: usize,
    what: &str,
) -> Result<&'a [Value]> {
    match v {
        Value::Sequence(items) if (lo..=hi).contains(&items.len()) => Ok(items),
        Value::Sequence(items) if lo == hi => Err(err(
            path,
            format!("expected {lo} {what}, got {}", items.len()),
        )),
        Value::Sequence(items) => Err(err(
            path,
            format!("expected {lo} to {hi} {what}, got {}", items.len()),
        )),
        _ => Err(err(
            path,
            format!("expected a list of {what}, got {}", describe(v)),
        )),
    }
}

/// A name in `[a-z0-9][a-z0-9._-]*` (operations, phases), or with upper case too (classes,
/// generators).
pub(super) fn name<'a>(v: &'a Value, path: &str, upper: bool) -> Result<&'a str> {
    let s = string(v, path)?;
    let ok_char = |c: char| {
        c.is_ascii_lowercase()
            || c.is_ascii_digit()
            || (upper && c.is_ascii_uppercase())
            || matches!(c, '.' | '_' | '-')
    };
    let first_ok = s
        .chars()
        .next()
        .is_some_and(|c| ok_char(c) && !matches!(c, '.' | '_' | '-'));
    if !first_ok || !s.chars().all(ok_char) || s.len() > 64 {
        let pattern = if upper {
            "[A-Za-z0-9][A-Za-z0-9._-]*"
        } else {
            "[a-z0-9][a-z0-9._-]*"
        };
        return Err(err(
            path,
            format!("expected a name matching {pattern} of at most 64 characters, got {s:?}"),
        ));
    }
    Ok(s)
}

/// A YAML value as BSON (§5): integers as int32 when they fit, else int64; floats as double;
/// maps in order. `check` sees every string (the placeholder rules differ by place).
pub(super) fn to_bson(
    v: &Value,
    path: &str,
    check: &mut dyn FnMut(&str, &str) -> Result<()>,
) -> Result<Bson> {
    Ok(match v {
        Value::Null => Bson::Null,
        Value::Bool(b) => Bson::Boolean(*b),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i32::try_from(i).map_or(Bson::Int64(i), Bson::Int32)
            } else if n.is_f64() {
                Bson::Double(n.as_f64().unwrap_or(f64::NAN))
            } else {
                return Err(err(path, format!("integer {n} does not fit in 64 bits")));
            }
        }
        Value::String(s) => {
            check(s, path)?;
            Bson::String(s.clone())
        }
        Value::Sequence(items) => Bson::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, item)| to_bson(item, &at_index(path, i), check))
                .collect::<Result<_>>()?,
        ),
        Value::Mapping(_) => {
            let map = Map::open(v, path)?;
            let mut d = Document::new();
            for (k, item) in &map.entries {
                d.insert(*k, to_bson(item, &map.at(k), check)?);
            }
            Bson::Document(d)
        }
        Value::Tagged(t) => {
            return Err(err(
                path,
                format!("YAML tags are not supported, got {}", t.tag),
            ));
        }
    })
}

/// A document given as a map.
pub(super) fn to_document(
    v: &Value,
    path: &str,
    check: &mut dyn FnMut(&str, &str) -> Result<()>,
) -> Result<Document> {
    match to_bson(v, path, check)? {
        Bson::Document(d) => Ok(d),
        _ => Err(err(path, format!("expected a map, got {}", describe(v)))),
    }
}
