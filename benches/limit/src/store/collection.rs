//! One collection: its documents by `_id`, its index specifications and the value maps of
//! their first fields, and the choice of how a filter is answered (`_id` order, an index, or a
//! scan).

use std::collections::{BTreeMap, BTreeSet};

use bson::{Bson, Document, RawDocumentBuf};

use super::Key;
use super::query::{lookup, matches};

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
