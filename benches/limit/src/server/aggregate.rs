//! `aggregate`: the stages the instruments' clients use (`$match`, `$sort`, `$skip`, `$limit`,
//! `$count`, `$group`, `$collStats`); other stages pass documents through.

use bson::{Bson, Document, RawBsonRef, RawDocument, RawDocumentBuf, doc, rawdoc};

use super::Server;
use super::command::{Command, Reply, get, int, to_raw};
use super::cursor::DEFAULT_BATCH;
use crate::store::{Key, matches, sort};

impl Server {
    pub(super) fn aggregate(&self, c: &Command<'_>) -> Reply {
        let pipeline: Vec<Document> = c
            .documents("pipeline")
            .into_iter()
            .filter_map(|d| Document::try_from(d).ok())
            .collect();
        let mut state = self.state.lock().expect("state");
        let ns = c.ns();
        let coll = state.store.collections.get(&ns);
        let mut out: Vec<RawDocumentBuf> = Vec::new();
        let mut started = false;
        for stage in &pipeline {
            let Some((name, arg)) = stage.iter().next() else {
                continue;
            };
            match name.as_str() {
                "$collStats" => {
                    let count = coll.map_or(0, |c| c.docs.len() as i64);
                    out = vec![
                        rawdoc! {"ns": ns.as_str(), "count": count, "storageStats": {"count": count}},
                    ];
                    started = true;
                }
                "$match" => {
                    let filter = arg.as_document().cloned().unwrap_or_default();
                    if started {
                        out.retain(|d| matches(d, &filter));
                    } else {
                        out = coll.map_or_else(Vec::new, |c| {
                            c.matching(&filter, 0)
                                .iter()
                                .filter_map(|k| c.docs.get(k).cloned())
                                .collect()
                        });
                        started = true;
                    }
                }
                _ => {
                    if !started {
                        out = coll.map_or_else(Vec::new, |c| c.docs.values().cloned().collect());
                        started = true;
                    }
                    match name.as_str() {
                        "$limit" => out.truncate(
                            arg.as_i64()
                                .or(arg.as_i32().map(i64::from))
                                .unwrap_or(0)
                                .max(0) as usize,
                        ),
                        "$skip" => {
                            let s = (arg
                                .as_i64()
                                .or(arg.as_i32().map(i64::from))
                                .unwrap_or(0)
                                .max(0) as usize)
                                .min(out.len());
                            out.drain(..s);
                        }
                        "$sort" => {
                            if let Some(spec) = arg.as_document() {
                                let mut refs: Vec<&RawDocumentBuf> = out.iter().collect();
                                sort(&mut refs, spec);
                                out = refs.into_iter().cloned().collect();
                            }
                        }
                        "$count" => {
                            let field = arg.as_str().unwrap_or("count");
                            let mut d = RawDocumentBuf::new();
                            d.append(field, out.len() as i32);
                            out = vec![d];
                        }
                        "$group" => out = group(&out, arg.as_document()),
                        // Other stages are not evaluated: documents pass through.
                        _ => {}
                    }
                }
            }
        }
        if !started {
            out = coll.map_or_else(Vec::new, |c| c.docs.values().cloned().collect());
        }
        let batch_size = match get(c.body, "cursor") {
            Some(RawBsonRef::Document(cur)) => {
                int(get(cur, "batchSize")).map_or(DEFAULT_BATCH, |b| b.max(0) as usize)
            }
            _ => DEFAULT_BATCH,
        };
        self.first_batch(&mut state, ns, out, batch_size, false)
    }
}

/// `$group` by a field path (or a constant): `$sum` of constants counts, `$sum`/`$avg`/`$min`/
/// `$max` of a field path compute, other accumulators give null.
fn group(docs: &[RawDocumentBuf], spec: Option<&Document>) -> Vec<RawDocumentBuf> {
    let Some(spec) = spec else { return Vec::new() };
    let id = spec.get("_id").cloned().unwrap_or(Bson::Null);
    let value_of = |d: &RawDocument, e: &Bson| -> Option<Bson> {
        match e {
            Bson::String(s) if s.starts_with('$') => {
                crate::store::lookup(d, &s[1..]).and_then(|v| Bson::try_from(v.to_raw_bson()).ok())
            }
            other => Some(other.clone()),
        }
    };
    let mut groups: Vec<(Key, Bson, Vec<&RawDocumentBuf>)> = Vec::new();
    for d in docs {
        let v = value_of(d, &id).unwrap_or(Bson::Null);
        let k = Key::of_bson(&v);
        match groups.iter_mut().find(|(gk, _, _)| *gk == k) {
            Some((_, _, members)) => members.push(d),
            None => groups.push((k, v, vec![d])),
        }
    }
    groups
        .into_iter()
        .map(|(_, v, members)| {
            let mut out = doc! {"_id": v};
            for (field, acc) in spec.iter().filter(|(k, _)| *k != "_id") {
                let Some((op, arg)) = acc.as_document().and_then(|a| a.iter().next()) else {
                    continue;
                };
                let values: Vec<f64> = members
                    .iter()
                    .filter_map(|d| value_of(d, arg))
                    .filter_map(|b| match b {
                        Bson::Int32(i) => Some(f64::from(i)),
                        Bson::Int64(i) => Some(i as f64),
                        Bson::Double(x) => Some(x),
                        _ => None,
                    })
                    .collect();
                let result = match op.as_str() {
                    "$sum" => Bson::Double(values.iter().sum()),
                    "$avg" if !values.is_empty() => {
                        Bson::Double(values.iter().sum::<f64>() / values.len() as f64)
                    }
                    "$min" => values
                        .iter()
                        .copied()
                        .reduce(f64::min)
                        .map_or(Bson::Null, Bson::Double),
                    "$max" => values
                        .iter()
                        .copied()
                        .reduce(f64::max)
                        .map_or(Bson::Null, Bson::Double),
                    _ => Bson::Null,
                };
                out.insert(field, result);
            }
            to_raw(&out)
        })
        .collect()
}
