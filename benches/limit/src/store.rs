//! The limit server's memory: collections of raw documents ordered by `_id`, with the small
//! query language the instruments' clients use (equality and ranges, `$in`, `$and`/`$or`,
//! `$exists`; sort, inclusion/exclusion projections; `$set`, `$unset`, `$inc` updates and
//! replacements). Everything else a client may send is accepted and leaves documents as they
//! are: the server exists to answer at once, not to be a database.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use bson::{Bson, Document, RawBsonRef, RawDocument, RawDocumentBuf};

/// A `_id` as an ordered key, in MongoDB's order of types (numbers, strings, documents,
/// binary data, ObjectId, booleans, dates, then anything else).
#[derive(Debug, Clone)]
pub enum Key {
    Null,
    Number(f64),
    String(String),
    Document(Vec<u8>),
    Binary(Vec<u8>),
    ObjectId([u8; 12]),
    Bool(bool),
    Date(i64),
    Other(String),
}

impl Key {
    fn rank(&self) -> u8 {
        match self {
            Key::Null => 0,
            Key::Number(_) => 1,
            Key::String(_) => 2,
            Key::Document(_) => 3,
            Key::Binary(_) => 4,
            Key::ObjectId(_) => 5,
            Key::Bool(_) => 6,
            Key::Date(_) => 7,
            Key::Other(_) => 8,
        }
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Key::Number(a), Key::Number(b)) => a.total_cmp(b),
            (Key::String(a), Key::String(b)) | (Key::Other(a), Key::Other(b)) => a.cmp(b),
            (Key::Document(a), Key::Document(b)) | (Key::Binary(a), Key::Binary(b)) => a.cmp(b),
            (Key::ObjectId(a), Key::ObjectId(b)) => a.cmp(b),
            (Key::Bool(a), Key::Bool(b)) => a.cmp(b),
            (Key::Date(a), Key::Date(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Key {}

impl Key {
    pub fn of(value: RawBsonRef<'_>) -> Key {
        match value {
            RawBsonRef::Null | RawBsonRef::Undefined => Key::Null,
            RawBsonRef::Int32(i) => Key::Number(f64::from(i)),
            RawBsonRef::Int64(i) => Key::Number(i as f64),
            RawBsonRef::Double(d) => Key::Number(d),
            RawBsonRef::String(s) => Key::String(s.to_owned()),
            RawBsonRef::Document(d) => Key::Document(d.as_bytes().to_vec()),
            RawBsonRef::Binary(b) => Key::Binary(b.bytes.to_vec()),
            RawBsonRef::ObjectId(o) => Key::ObjectId(o.bytes()),
            RawBsonRef::Boolean(b) => Key::Bool(b),
            RawBsonRef::DateTime(d) => Key::Date(d.timestamp_millis()),
            other => Key::Other(format!("{other:?}")),
        }
    }

    pub fn of_bson(value: &Bson) -> Key {
        match value {
            Bson::Null | Bson::Undefined => Key::Null,
            Bson::Int32(i) => Key::Number(f64::from(*i)),
            Bson::Int64(i) => Key::Number(*i as f64),
            Bson::Double(d) => Key::Number(*d),
            Bson::String(s) => Key::String(s.clone()),
            Bson::Document(d) => {
                let mut bytes = Vec::new();
                let _ = d.to_writer(&mut bytes);
                Key::Document(bytes)
            }
            Bson::Binary(b) => Key::Binary(b.bytes.clone()),
            Bson::ObjectId(o) => Key::ObjectId(o.bytes()),
            Bson::Boolean(b) => Key::Bool(*b),
            Bson::DateTime(d) => Key::Date(d.timestamp_millis()),
            other => Key::Other(format!("{other:?}")),
        }
    }
}

/// One collection.
#[derive(Debug, Default)]
pub struct Collection {
    pub docs: BTreeMap<Key, RawDocumentBuf>,
    /// Index specifications other than `_id_`.
    pub indexes: Vec<Document>,
    pub bytes: u64,
    /// The first field of each index: value → `_id`s, for equality and range filters.
    fields: BTreeMap<String, BTreeMap<Key, BTreeSet<Key>>>,
}

impl Collection {
    pub fn insert(&mut self, doc: RawDocumentBuf) -> Result<(), String> {
        let key = match doc.get("_id") {
            Ok(Some(id)) => Key::of(id),
            _ => return Err("document without _id".into()),
        };
        if self.docs.contains_key(&key) {
            return Err(format!(
                "E11000 duplicate key error collection index: _id_ dup key: {key:?}"
            ));
        }
        self.bytes += doc.as_bytes().len() as u64;
        for (field, index) in &mut self.fields {
            let value = lookup(&doc, field).map_or(Key::Null, Key::of);
            index.entry(value).or_default().insert(key.clone());
        }
        self.docs.insert(key, doc);
        Ok(())
    }

    pub fn remove(&mut self, key: &Key) -> bool {
        match self.docs.remove(key) {
            Some(d) => {
                self.bytes -= d.as_bytes().len() as u64;
                for (field, index) in &mut self.fields {
                    let value = lookup(&d, field).map_or(Key::Null, Key::of);
                    if let Some(ids) = index.get_mut(&value) {
                        ids.remove(key);
                        if ids.is_empty() {
                            index.remove(&value);
                        }
                    }
                }
                true
            }
            None => false,
        }
    }

    /// Adds an index specification; its first field (top-level) answers filters from then on.
    pub fn add_index(&mut self, spec: Document) {
        let field = spec
            .get_document("key")
            .ok()
            .and_then(|k| k.keys().next().cloned());
        self.indexes.push(spec);
        if let Some(field) = field
            && !self.fields.contains_key(&field)
        {
            let mut index: BTreeMap<Key, BTreeSet<Key>> = BTreeMap::new();
            for (id, doc) in &self.docs {
                let value = lookup(doc, &field).map_or(Key::Null, Key::of);
                index.entry(value).or_default().insert(id.clone());
            }
            self.fields.insert(field, index);
        }
    }

    /// Removes index specifications (by name, or all with `*`).
    pub fn drop_indexes(&mut self, name: &str) {
        self.indexes
            .retain(|i| name != "*" && i.get_str("name") != Ok(name));
        let keep: Vec<String> = self
            .indexes
            .iter()
            .filter_map(|i| i.get_document("key").ok()?.keys().next().cloned())
            .collect();
        self.fields.retain(|f, _| keep.contains(f));
    }

    /// The `_id`s an indexed field of `filter` narrows the documents to, if any.
    fn candidates(&self, filter: &Document) -> Option<BTreeSet<Key>> {
        for (field, cond) in filter {
            let Some(index) = self.fields.get(field) else {
                continue;
            };
            let ids = |k: &Key| index.get(k).into_iter().flatten().cloned();
            match cond {
                Bson::Document(ops) if ops.keys().all(|k| k.starts_with('$')) => {
                    if let Some(v) = ops.get("$eq").filter(|v| scalar(v)) {
                        return Some(ids(&Key::of_bson(v)).collect());
                    }
                    if let Some(Bson::Array(values)) = ops.get("$in")
                        && values.iter().all(scalar)
                    {
                        return Some(values.iter().flat_map(|v| ids(&Key::of_bson(v))).collect());
                    }
                    if let Some(range) = id_range(ops)
                        && ops.values().all(scalar)
                    {
                        return Some(
                            index
                                .range(range)
                                .flat_map(|(_, s)| s.iter().cloned())
                                .collect(),
                        );
                    }
                }
                v if scalar(v) => return Some(ids(&Key::of_bson(v)).collect()),
                _ => {}
            }
        }
        None
    }

    /// Keys of the documents matching `filter`, in `_id` order, at most `limit` (0: all).
    /// `_id` equality, `$in` and ranges are answered from the order; other filters scan.
    pub fn matching(&self, filter: &Document, limit: usize) -> Vec<Key> {
        let limit = if limit == 0 { usize::MAX } else { limit };
        if let Some(id) = filter.get("_id")
            && filter.len() == 1
        {
            match id {
                Bson::Document(ops) if ops.keys().all(|k| k.starts_with('$')) => {
                    if let Some(Bson::Array(values)) = ops.get("$in").filter(|_| ops.len() == 1) {
                        let mut keys: Vec<Key> = values
                            .iter()
                            .map(Key::of_bson)
                            .filter(|k| self.docs.contains_key(k))
                            .collect();
                        keys.sort();
                        keys.dedup();
                        keys.truncate(limit);
                        return keys;
                    }
                    if let Some(range) = id_range(ops) {
                        return self
                            .docs
                            .range(range)
                            .map(|(k, _)| k.clone())
                            .take(limit)
                            .collect();
                    }
                }
                Bson::Document(_) | Bson::Array(_) | Bson::RegularExpression(_) => {}
                value => {
                    let key = Key::of_bson(value);
                    return if self.docs.contains_key(&key) {
                        vec![key]
                    } else {
                        Vec::new()
                    };
                }
            }
        }
        if let Some(ids) = self.candidates(filter) {
            return ids
                .into_iter()
                .filter(|k| self.docs.get(k).is_some_and(|d| matches(d, filter)))
                .take(limit)
                .collect();
        }
        self.docs
            .iter()
            .filter(|(_, d)| matches(d, filter))
            .map(|(k, _)| k.clone())
            .take(limit)
            .collect()
    }
}

/// A value an index answers for (arrays and documents are scanned instead).
fn scalar(v: &Bson) -> bool {
    !matches!(
        v,
        Bson::Array(_) | Bson::Document(_) | Bson::RegularExpression(_) | Bson::Null
    )
}

fn id_range(ops: &Document) -> Option<(std::ops::Bound<Key>, std::ops::Bound<Key>)> {
    use std::ops::Bound::*;
    let (mut lo, mut hi) = (Unbounded, Unbounded);
    for (op, v) in ops {
        let k = Key::of_bson(v);
        match op.as_str() {
            "$gte" => lo = Included(k),
            "$gt" => lo = Excluded(k),
            "$lte" => hi = Included(k),
            "$lt" => hi = Excluded(k),
            _ => return None,
        }
    }
    Some((lo, hi))
}

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

/// Every database's collections, by `db.collection`.
#[derive(Debug, Default)]
pub struct Store {
    pub collections: HashMap<String, Collection>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::{doc, rawdoc};

    fn coll() -> Collection {
        let mut c = Collection::default();
        for i in 0..10 {
            c.insert(rawdoc! {"_id": format!("user{i}"), "n": i, "tag": if i % 2 == 0 {"even"} else {"odd"}})
                .unwrap();
        }
        c
    }

    #[test]
    fn id_lookups_ranges_and_scans() {
        let mut c = coll();
        assert_eq!(c.matching(&doc! {"_id": "user3"}, 0).len(), 1);
        assert_eq!(c.matching(&doc! {"_id": "nobody"}, 0).len(), 0);
        assert_eq!(c.matching(&doc! {"_id": {"$gte": "user5"}}, 3).len(), 3);
        assert_eq!(
            c.matching(&doc! {"_id": {"$in": ["user1", "user2", "x"]}}, 0)
                .len(),
            2
        );
        assert_eq!(
            c.matching(&doc! {"tag": "even", "n": {"$gt": 3}}, 0).len(),
            3
        );
        assert_eq!(c.matching(&doc! {"$or": [{"n": 1}, {"n": 2}]}, 0).len(), 2);
        assert!(c.insert(rawdoc! {"_id": "user1"}).is_err());
        c.add_index(doc! {"key": {"n": 1}, "name": "n_1"});
        assert_eq!(
            c.matching(&doc! {"tag": "even", "n": {"$gt": 3}}, 0).len(),
            3
        );
        assert_eq!(
            c.matching(&doc! {"n": 4}, 0),
            vec![Key::String("user4".into())]
        );
        assert!(c.remove(&Key::String("user4".into())));
        assert!(c.matching(&doc! {"n": 4}, 0).is_empty());
        c.drop_indexes("*");
        assert_eq!(c.matching(&doc! {"n": {"$in": [1, 2]}}, 0).len(), 2);
    }

    #[test]
    fn updates_and_projections() {
        let d = rawdoc! {"_id": 1, "a": 1, "b": {"c": 2}};
        let u = update(&d, &doc! {"$set": {"b.c": 3}, "$inc": {"a": 2}}).unwrap();
        assert_eq!(
            u.to_document().unwrap(),
            doc! {"_id": 1, "a": 3, "b": {"c": 3}}
        );
        let r = update(&d, &doc! {"x": 1}).unwrap();
        assert_eq!(r.to_document().unwrap(), doc! {"_id": 1, "x": 1});
        assert!(update(&d, &doc! {"$push": {"a": 1}}).is_none());
        let p = Projection::new(&doc! {"a": 1, "_id": 0}).unwrap();
        assert_eq!(p.apply(&d).to_document().unwrap(), doc! {"a": 1});
    }
}
