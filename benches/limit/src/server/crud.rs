//! The CRUD commands: `find` (filter, sort, skip, limit, projection), `insert`, `update`
//! (with upserts), `delete` and `findAndModify`.

use bson::{Bson, Document, RawArrayBuf, RawDocument, RawDocumentBuf, rawdoc};

use super::Server;
use super::command::{Command, Reply, document, get, int, ok, to_raw, truthy};
use super::cursor::DEFAULT_BATCH;
use crate::store::{Collection, Projection, sort, update};

impl Server {
    /// Matching documents of a find: sorted, skipped, limited, projected.
    fn select(
        &self,
        coll: Option<&Collection>,
        body: &RawDocument,
        limit: usize,
    ) -> Vec<RawDocumentBuf> {
        let Some(coll) = coll else { return Vec::new() };
        let filter = document(body, "filter");
        let sort_spec = document(body, "sort");
        let skip = int(get(body, "skip")).unwrap_or(0).max(0) as usize;
        let by_id = sort_spec.is_empty()
            || (sort_spec.len() == 1
                && sort_spec
                    .get("_id")
                    .and_then(|v| v.as_i32().map(i64::from).or(v.as_i64()))
                    == Some(1));
        let keys = coll.matching(&filter, if by_id && limit > 0 { limit + skip } else { 0 });
        let mut docs: Vec<&RawDocumentBuf> = keys.iter().filter_map(|k| coll.docs.get(k)).collect();
        if !by_id {
            sort(&mut docs, &sort_spec);
        }
        let take = if limit == 0 { usize::MAX } else { limit };
        let projection = Projection::new(&document(body, "projection"));
        docs.into_iter()
            .skip(skip)
            .take(take)
            .map(|d| match &projection {
                Some(p) => p.apply(d),
                None => d.clone(),
            })
            .collect()
    }

    pub(super) fn find(&self, c: &Command<'_>) -> Reply {
        let limit = int(get(c.body, "limit")).unwrap_or(0);
        let single = truthy(get(c.body, "singleBatch")) || limit < 0;
        let limit = limit.unsigned_abs() as usize;
        let batch_size = int(get(c.body, "batchSize")).map_or(DEFAULT_BATCH, |b| b.max(0) as usize);
        let mut state = self.state.lock().expect("state");
        let docs = self.select(state.store.collections.get(&c.ns()), c.body, limit);
        self.first_batch(&mut state, c.ns(), docs, batch_size, single)
    }

    pub(super) fn insert(&self, c: &Command<'_>) -> Reply {
        let ordered = get(c.body, "ordered").is_none_or(|v| truthy(Some(v)));
        let docs = c.documents("documents");
        let mut state = self.state.lock().expect("state");
        let coll = state.store.collections.entry(c.ns()).or_default();
        let mut n = 0i32;
        let mut errors = RawArrayBuf::new();
        for (i, d) in docs.into_iter().enumerate() {
            let d = if get(d, "_id").is_some() {
                d.to_owned()
            } else {
                let mut with_id = rawdoc! {"_id": bson::oid::ObjectId::new()};
                for (k, v) in d.iter().flatten() {
                    with_id.append(k, v.to_raw_bson());
                }
                with_id
            };
            match coll.insert(d) {
                Ok(()) => n += 1,
                Err(e) => {
                    errors.push(rawdoc! {"index": i as i32, "code": 11000, "errmsg": e});
                    if ordered {
                        break;
                    }
                }
            }
        }
        let mut reply = rawdoc! {"n": n};
        if !errors.is_empty() {
            reply.append("writeErrors", errors);
        }
        ok(reply)
    }

    pub(super) fn update(&self, c: &Command<'_>) -> Reply {
        let statements = c.documents("updates");
        let mut state = self.state.lock().expect("state");
        let coll = state.store.collections.entry(c.ns()).or_default();
        let (mut matched, mut modified) = (0i64, 0i64);
        let mut upserted = RawArrayBuf::new();
        let mut upserts = 0i64;
        for (i, s) in statements.into_iter().enumerate() {
            let q = document(s, "q");
            let u = document(s, "u");
            let multi = truthy(get(s, "multi"));
            let keys = coll.matching(&q, if multi { 0 } else { 1 });
            if keys.is_empty() && truthy(get(s, "upsert")) {
                let mut seed = Document::new();
                if let Some(id) = q.get("_id").filter(|v| !matches!(v, Bson::Document(_))) {
                    seed.insert("_id", id.clone());
                } else {
                    seed.insert("_id", bson::oid::ObjectId::new());
                }
                let base = to_raw(&seed);
                let new = update(&base, &u).unwrap_or(base);
                if let Ok(Some(id)) = new.get("_id") {
                    upserted.push(rawdoc! {"index": i as i32, "_id": id.to_raw_bson()});
                }
                let _ = coll.insert(new);
                upserts += 1;
                continue;
            }
            for key in keys {
                matched += 1;
                let changed = coll.docs.get(&key).and_then(|d| update(d, &u));
                if let Some(new) = changed {
                    modified += 1;
                    coll.remove(&key);
                    let _ = coll.insert(new);
                }
            }
        }
        let n = matched + upserts;
        let mut reply = rawdoc! {"n": n, "nModified": modified};
        if upserts > 0 {
            reply.append("upserted", upserted);
        }
        ok(reply)
    }

    pub(super) fn delete(&self, c: &Command<'_>) -> Reply {
        let statements = c.documents("deletes");
        let mut state = self.state.lock().expect("state");
        let Some(coll) = state.store.collections.get_mut(&c.ns()) else {
            return ok(rawdoc! {"n": 0});
        };
        let mut n = 0i64;
        for s in statements {
            let q = document(s, "q");
            let limit = int(get(s, "limit")).unwrap_or(0).max(0) as usize;
            for key in coll.matching(&q, limit) {
                if coll.remove(&key) {
                    n += 1;
                }
            }
        }
        ok(rawdoc! {"n": n})
    }

    pub(super) fn find_and_modify(&self, c: &Command<'_>) -> Reply {
        let q = document(c.body, "query");
        let mut state = self.state.lock().expect("state");
        let coll = state.store.collections.entry(c.ns()).or_default();
        let key = coll.matching(&q, 1).into_iter().next();
        let Some(key) = key else {
            return ok(
                rawdoc! {"lastErrorObject": {"n": 0, "updatedExisting": false}, "value": bson::RawBson::Null},
            );
        };
        let old = coll.docs.get(&key).cloned().expect("matched");
        if truthy(get(c.body, "remove")) {
            coll.remove(&key);
            return ok(rawdoc! {"lastErrorObject": {"n": 1}, "value": old});
        }
        let u = document(c.body, "update");
        let new = update(&old, &u);
        if let Some(new) = &new {
            coll.remove(&key);
            let _ = coll.insert(new.clone());
        }
        let value = if truthy(get(c.body, "new")) {
            new.unwrap_or(old)
        } else {
            old
        };
        ok(rawdoc! {"lastErrorObject": {"n": 1, "updatedExisting": true}, "value": value})
    }
}
