//! Updates: `$set`, `$unset` and `$inc` on dotted paths, and replacements.

use bson::{Bson, Document, RawDocument, RawDocumentBuf};

/// Applies an update (`$set`/`$unset`/`$inc`, or a replacement) to `doc`; other operators
/// leave the document as it is. Returns the new document if it changed.
pub fn update(doc: &RawDocument, u: &Document) -> Option<RawDocumentBuf> {
    let id = doc.get("_id").ok().flatten()?.to_raw_bson();
    if !u.keys().next().is_some_and(|k| k.starts_with('$')) {
        let mut out = RawDocumentBuf::new();
        out.append("_id", id);
        let rest = RawDocumentBuf::from_document(u).ok()?;
        for (key, value) in rest.iter().flatten() {
            if key != "_id" {
                out.append(key, value.to_raw_bson());
            }
        }
        return (out.as_bytes() != doc.as_bytes()).then_some(out);
    }
    let mut d = Document::try_from(doc).ok()?;
    let mut changed = false;
    for (op, args) in u {
        let Bson::Document(args) = args else { continue };
        for (path, value) in args {
            match op.as_str() {
                "$set" => changed |= set_path(&mut d, path, Some(value.clone())),
                "$unset" => changed |= set_path(&mut d, path, None),
                "$inc" => {
                    let current = get_path(&d, path).cloned().unwrap_or(Bson::Int32(0));
                    let sum = add(&current, value);
                    changed |= set_path(&mut d, path, Some(sum));
                }
                _ => {}
            }
        }
    }
    if !changed {
        return None;
    }
    RawDocumentBuf::from_document(&d).ok()
}

fn add(a: &Bson, b: &Bson) -> Bson {
    match (a, b) {
        (Bson::Int32(x), Bson::Int32(y)) => x
            .checked_add(*y)
            .map_or_else(|| Bson::Int64(i64::from(*x) + i64::from(*y)), Bson::Int32),
        (Bson::Int32(x), Bson::Int64(y)) => Bson::Int64(i64::from(*x).wrapping_add(*y)),
        (Bson::Int64(x), Bson::Int32(y)) => Bson::Int64(x.wrapping_add(i64::from(*y))),
        (Bson::Int64(x), Bson::Int64(y)) => Bson::Int64(x.wrapping_add(*y)),
        (x, y) => Bson::Double(as_f64(x) + as_f64(y)),
    }
}

fn as_f64(v: &Bson) -> f64 {
    match v {
        Bson::Int32(i) => f64::from(*i),
        Bson::Int64(i) => *i as f64,
        Bson::Double(d) => *d,
        _ => 0.0,
    }
}

fn get_path<'a>(d: &'a Document, path: &str) -> Option<&'a Bson> {
    let mut parts = path.split('.');
    let mut v = d.get(parts.next()?)?;
    for p in parts {
        v = v.as_document()?.get(p)?;
    }
    Some(v)
}

fn set_path(d: &mut Document, path: &str, value: Option<Bson>) -> bool {
    match path.split_once('.') {
        None => match value {
            Some(v) => d.insert(path, v.clone()).is_none_or(|old| old != v),
            None => d.remove(path).is_some(),
        },
        Some((head, rest)) => {
            if !matches!(d.get(head), Some(Bson::Document(_))) {
                if value.is_none() {
                    return false;
                }
                d.insert(head, Document::new());
            }
            match d.get_mut(head) {
                Some(Bson::Document(inner)) => set_path(inner, rest, value),
                _ => false,
            }
        }
    }
}
