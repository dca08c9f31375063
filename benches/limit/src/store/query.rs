//! The query language on raw documents: dotted-path lookups, comparisons, filters (`matches`),
//! sorts and projections.

use std::cmp::Ordering;

use bson::{Bson, Document, RawBsonRef, RawDocument, RawDocumentBuf};

use super::Key;

/// The value at a dotted `path` of a raw document.
pub fn lookup<'a>(doc: &'a RawDocument, path: &str) -> Option<RawBsonRef<'a>> {
    let mut current = doc;
    let mut parts = path.split('.').peekable();
    while let Some(part) = parts.next() {
        let value = current.get(part).ok().flatten()?;
        if parts.peek().is_none() {
            return Some(value);
        }
        current = match value {
            RawBsonRef::Document(d) => d,
            _ => return None,
        };
    }
    None
}

fn compare(a: RawBsonRef<'_>, b: &Bson) -> Option<Ordering> {
    // The common cases without building keys (no allocation).
    let number = |v: &Bson| match v {
        Bson::Int32(i) => Some(f64::from(*i)),
        Bson::Int64(i) => Some(*i as f64),
        Bson::Double(d) => Some(*d),
        _ => None,
    };
    match (a, b) {
        (RawBsonRef::String(x), Bson::String(y)) => return Some(x.cmp(y.as_str())),
        (RawBsonRef::ObjectId(x), Bson::ObjectId(y)) => return Some(x.bytes().cmp(&y.bytes())),
        (RawBsonRef::DateTime(x), Bson::DateTime(y)) => return Some(x.cmp(y)),
        (RawBsonRef::Boolean(x), Bson::Boolean(y)) => return Some(x.cmp(y)),
        (RawBsonRef::Int32(x), y) if number(y).is_some() => {
            return f64::from(x).partial_cmp(&number(y)?);
        }
        (RawBsonRef::Int64(x), y) if number(y).is_some() => {
            return (x as f64).partial_cmp(&number(y)?);
        }
        (RawBsonRef::Double(x), y) if number(y).is_some() => return x.partial_cmp(&number(y)?),
        _ => {}
    }
    let (ka, kb) = (Key::of(a), Key::of_bson(b));
    if std::mem::discriminant(&ka) != std::mem::discriminant(&kb) {
        return None;
    }
    ka.partial_cmp(&kb)
}

fn equal(a: Option<RawBsonRef<'_>>, b: &Bson) -> bool {
    match a {
        None => matches!(b, Bson::Null),
        Some(RawBsonRef::Array(items)) if !matches!(b, Bson::Array(_)) => items
            .into_iter()
            .flatten()
            .any(|item| compare(item, b) == Some(Ordering::Equal)),
        Some(v) => compare(v, b) == Some(Ordering::Equal),
    }
}

/// Whether `doc` matches `filter`.
pub fn matches(doc: &RawDocument, filter: &Document) -> bool {
    filter.iter().all(|(field, cond)| match field.as_str() {
        "$and" => match cond {
            Bson::Array(parts) => parts
                .iter()
                .all(|p| p.as_document().is_some_and(|f| matches(doc, f))),
            _ => false,
        },
        "$or" => match cond {
            Bson::Array(parts) => parts
                .iter()
                .any(|p| p.as_document().is_some_and(|f| matches(doc, f))),
            _ => false,
        },
        "$nor" => match cond {
            Bson::Array(parts) => !parts
                .iter()
                .any(|p| p.as_document().is_some_and(|f| matches(doc, f))),
            _ => false,
        },
        // Expressions and text or geo queries are not evaluated: they match.
        "$expr" | "$text" | "$where" | "$comment" => true,
        _ => {
            let value = lookup(doc, field);
            match cond {
                Bson::Document(ops) if ops.keys().next().is_some_and(|k| k.starts_with('$')) => {
                    ops.iter().all(|(op, arg)| operator(value, op, arg))
                }
                other => equal(value, other),
            }
        }
    })
}

fn operator(value: Option<RawBsonRef<'_>>, op: &str, arg: &Bson) -> bool {
    let ord = |want: &[Ordering]| {
        value
            .and_then(|v| compare(v, arg))
            .is_some_and(|o| want.contains(&o))
    };
    match op {
        "$eq" => equal(value, arg),
        "$ne" => !equal(value, arg),
        "$gt" => ord(&[Ordering::Greater]),
        "$gte" => ord(&[Ordering::Greater, Ordering::Equal]),
        "$lt" => ord(&[Ordering::Less]),
        "$lte" => ord(&[Ordering::Less, Ordering::Equal]),
        "$in" => match arg {
            Bson::Array(values) => values.iter().any(|v| equal(value, v)),
            _ => false,
        },
        "$nin" => match arg {
            Bson::Array(values) => !values.iter().any(|v| equal(value, v)),
            _ => true,
        },
        "$exists" => value.is_some() == !matches!(arg, Bson::Boolean(false) | Bson::Int32(0)),
        // Anything else ($regex, $elemMatch, $size, …) is not evaluated: it matches.
        _ => true,
    }
}

/// Sorts `docs` by a sort specification (`{field: 1 | -1, …}`).
pub fn sort(docs: &mut [&RawDocumentBuf], spec: &Document) {
    let keys: Vec<(&str, bool)> = spec
        .iter()
        .map(|(k, v)| {
            (
                k.as_str(),
                v.as_i64().or(v.as_i32().map(i64::from)).unwrap_or(1) < 0,
            )
        })
        .collect();
    docs.sort_by(|a, b| {
        for &(path, descending) in &keys {
            let ka = lookup(a, path).map(Key::of).unwrap_or(Key::Null);
            let kb = lookup(b, path).map(Key::of).unwrap_or(Key::Null);
            let o = ka.cmp(&kb);
            let o = if descending { o.reverse() } else { o };
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    });
}

/// A projection of top-level fields (dotted paths project their first part).
pub struct Projection {
    fields: Vec<String>,
    include: bool,
    id: bool,
}

impl Projection {
    pub fn new(spec: &Document) -> Option<Projection> {
        if spec.is_empty() {
            return None;
        }
        let truthy =
            |v: &Bson| !matches!(v, Bson::Boolean(false) | Bson::Int32(0) | Bson::Int64(0));
        let include = spec.iter().any(|(k, v)| k != "_id" && truthy(v));
        let id = spec.get("_id").is_none_or(truthy);
        let fields = spec
            .keys()
            .filter(|k| *k != "_id")
            .map(|k| k.split('.').next().unwrap_or(k).to_owned())
            .collect();
        Some(Projection {
            fields,
            include,
            id,
        })
    }

    pub fn apply(&self, doc: &RawDocument) -> RawDocumentBuf {
        let mut out = RawDocumentBuf::new();
        for (key, value) in doc.iter().flatten() {
            let keep = if key == "_id" {
                self.id
            } else {
                self.fields.iter().any(|f| f == key) == self.include
            };
            if keep {
                out.append(key, value.to_raw_bson());
            }
        }
        out
    }
}
