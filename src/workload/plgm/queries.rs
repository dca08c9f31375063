//! plgm's queries → custom workload operations, with plgm's fallbacks and its operation mix as
//! integer weights.
//!
//! plgm picks a kind by percentage (update and delete then 90 % One, 10 % Many), then a query of
//! that exact `operation` uniformly. So each query's weight is its kind's share divided by the
//! number of queries of that kind: exact as fractions, scaled to the smallest integers.

use serde_json::{Map, Value, json};

use super::cx::{Cx, Obj, unique_name, what};
use super::error::ImportError;
use super::fields::Coll;

/// The query buckets plgm's timed mode runs, by exact `operation` string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bucket {
    Find,
    UpdateOne,
    UpdateMany,
    DeleteOne,
    DeleteMany,
    Aggregate,
}

const BUCKETS: [Bucket; 6] = [
    Bucket::Find,
    Bucket::UpdateOne,
    Bucket::UpdateMany,
    Bucket::DeleteOne,
    Bucket::DeleteMany,
    Bucket::Aggregate,
];

const EXPECTED: &str = "find, updateOne, updateMany, deleteOne, deleteMany, aggregate";

/// Operations plgm accepts in its files but never selects in timed mode.
const NEVER_RUN: [&str; 4] = ["insert", "insertMany", "update", "delete"];

/// Shares in ten-thousandths: plgm's percentage × its One/Many split.
const INSERT_SHARE: u128 = 5 * 100;
const INSERT_MANY_SHARE: u128 = 5 * 100;
/// plgm's `insert_batch_size` default.
const INSERT_BATCH: u64 = 10;
/// plgm's `find_limit` in its shipped config.yaml, for finds without a `limit`.
const FIND_LIMIT: i64 = 5;

/// A custom workload's limit (custom.md §2).
const MAX_OPERATIONS: usize = 64;

const QUERY_KEYS: &[&str] = &[
    "database",
    "collection",
    "operation",
    "filter",
    "pipeline",
    "projection",
    "limit",
    "update",
    "upsert",
];

impl Bucket {
    fn plgm(self) -> &'static str {
        match self {
            Bucket::Find => "find",
            Bucket::UpdateOne => "updateOne",
            Bucket::UpdateMany => "updateMany",
            Bucket::DeleteOne => "deleteOne",
            Bucket::DeleteMany => "deleteMany",
            Bucket::Aggregate => "aggregate",
        }
    }

    /// Operation name prefix (names are lowercase).
    fn prefix(self) -> &'static str {
        match self {
            Bucket::Find => "find",
            Bucket::UpdateOne => "update-one",
            Bucket::UpdateMany => "update-many",
            Bucket::DeleteOne => "delete-one",
            Bucket::DeleteMany => "delete-many",
            Bucket::Aggregate => "aggregate",
        }
    }

    /// The custom operation kind.
    fn kind(self) -> &'static str {
        match self {
            Bucket::Find => "find",
            Bucket::UpdateOne | Bucket::UpdateMany => "update",
            Bucket::DeleteOne | Bucket::DeleteMany => "delete",
            Bucket::Aggregate => "aggregate",
        }
    }

    fn share(self) -> u128 {
        match self {
            Bucket::Find => 54 * 100,
            Bucket::UpdateOne => 21 * 90,
            Bucket::UpdateMany => 21 * 10,
            Bucket::DeleteOne => 10 * 90,
            Bucket::DeleteMany => 10 * 10,
            Bucket::Aggregate => 5 * 100,
        }
    }

    fn multi(self) -> bool {
        matches!(self, Bucket::UpdateMany | Bucket::DeleteMany)
    }
}

/// An operation before its weight is made an integer: weight = share / den.
struct Pending {
    name: String,
    class: &'static str,
    share: u128,
    den: u128,
    kind: &'static str,
    body: Value,
}

/// One query's fields, type-checked.
struct Query<'a> {
    obj: Obj<'a>,
    /// `queries[i]`.
    path: String,
    op: &'a str,
    coll: &'a str,
    filter: Option<&'a Map<String, Value>>,
    pipeline: Option<&'a Vec<Value>>,
    projection: Option<&'a Map<String, Value>>,
    limit: i64,
    update: Option<&'a Map<String, Value>>,
    upsert: bool,
}

impl<'a> Query<'a> {
    /// Type errors first: plgm refuses a file whose JSON does not fit its structs.
    fn read(cx: &mut Cx, q: &'a Value, path: String) -> Result<Query<'a>, ImportError> {
        let obj = Obj::new(cx, q, &path, QUERY_KEYS)?;
        let op = obj.str(cx, "operation")?.unwrap_or("");
        let coll = obj.str(cx, "collection")?.unwrap_or("");
        obj.str(cx, "database")?;
        Ok(Query {
            op,
            coll,
            filter: obj.map(cx, "filter")?,
            pipeline: obj.array(cx, "pipeline")?,
            projection: obj.map(cx, "projection")?,
            limit: obj.int(cx, "limit")?.unwrap_or(0),
            update: obj.map(cx, "update")?,
            upsert: obj.bool(cx, "upsert")?,
            obj,
            path,
        })
    }

    /// The bucket of the query's `operation`; `None` (noted) for one plgm accepts but never runs.
    fn bucket(&self, cx: &mut Cx) -> Result<Option<Bucket>, ImportError> {
        let op = self.op;
        if let Some(bucket) = BUCKETS.iter().copied().find(|b| b.plgm() == op) {
            return Ok(Some(bucket));
        }
        if NEVER_RUN.contains(&op) {
            cx.group(
                "queries plgm never runs (its timed mode runs only find, updateOne, \
                 updateMany, deleteOne, deleteMany and aggregate) are skipped",
                format!("{} ({op})", self.path),
            );
            return Ok(None);
        }
        let found = if op.is_empty() {
            "missing".to_owned()
        } else {
            format!("unknown operation {op:?}")
        };
        Err(cx.invalid(
            &self.obj.path("operation"),
            format!("{found}; expected one of: {EXPECTED}"),
        ))
    }

    /// The filter as a placeholder template (`{}` when absent).
    fn filter(&self, cx: &mut Cx) -> Result<Value, ImportError> {
        let filter = self
            .filter
            .cloned()
            .map(Value::Object)
            .unwrap_or_else(|| json!({}));
        template(cx, &filter, &self.obj.path("filter"), true)
    }

    /// The custom operation's body for `bucket`.
    fn body(&self, cx: &mut Cx, bucket: Bucket) -> Result<Map<String, Value>, ImportError> {
        let mut body = Map::new();
        body.insert("collection".into(), json!(self.coll));
        match bucket {
            Bucket::Find => {
                body.insert("filter".into(), self.filter(cx)?);
                if let Some(p) = self.projection {
                    let p = Value::Object(p.clone());
                    literal(cx, &p, &self.obj.path("projection"))?;
                    body.insert("projection".into(), p);
                }
                let limit = if self.limit > 0 {
                    self.limit
                } else {
                    FIND_LIMIT
                };
                body.insert("limit".into(), json!(limit));
            }
            Bucket::UpdateOne | Bucket::UpdateMany => {
                body.insert("filter".into(), self.filter(cx)?);
                body.insert("update".into(), self.update(cx)?);
                body.insert("multi".into(), json!(bucket.multi()));
                if self.upsert {
                    body.insert("upsert".into(), json!(true));
                }
            }
            Bucket::DeleteOne | Bucket::DeleteMany => {
                body.insert("filter".into(), self.filter(cx)?);
                body.insert("multi".into(), json!(bucket.multi()));
            }
            Bucket::Aggregate => {
                body.insert("pipeline".into(), self.pipeline(cx)?);
            }
        }
        Ok(body)
    }

    /// The update document: present, and operators only.
    fn update(&self, cx: &mut Cx) -> Result<Value, ImportError> {
        let update_path = self.obj.path("update");
        let update = self.update.filter(|u| !u.is_empty()).ok_or_else(|| {
            cx.invalid(
                &update_path,
                format!("missing; plgm's {} fails without one", self.op),
            )
        })?;
        if let Some(key) = update.keys().find(|k| !k.starts_with('$')) {
            return Err(cx.invalid(
                &format!("{update_path}.{key}"),
                "not an update operator; plgm's driver refuses replacement documents in an update",
            ));
        }
        let update = Value::Object(update.clone());
        literal(cx, &update, &update_path)?;
        Ok(update)
    }

    /// The pipeline as a placeholder template: present, and without writing stages.
    fn pipeline(&self, cx: &mut Cx) -> Result<Value, ImportError> {
        let pipeline_path = self.obj.path("pipeline");
        let Some(stages) = self.pipeline.filter(|p| !p.is_empty()) else {
            return Err(cx.invalid(
                &pipeline_path,
                "missing; plgm's aggregate fails without one",
            ));
        };
        for (j, stage) in stages.iter().enumerate() {
            if let Some(key) = stage
                .as_object()
                .and_then(|s| s.keys().find(|k| *k == "$out" || *k == "$merge"))
            {
                return Err(cx.invalid(
                    &format!("{pipeline_path}[{j}].{key}"),
                    "a custom workload's pipelines do not write",
                ));
            }
        }
        if self.filter.is_some_and(|f| !f.is_empty()) {
            cx.group(
                "filters of aggregate queries are ignored, as plgm ignores them",
                self.path.clone(),
            );
        }
        let stages = Value::Array(stages.clone());
        template(cx, &stages, &pipeline_path, false)
    }
}

/// The operations of plgm's query file, for `colls`.
pub(super) fn operations(
    root: &Value,
    colls: &[Coll],
    cx: &mut Cx,
) -> Result<Vec<Value>, ImportError> {
    let Value::Array(list) = root else {
        return Err(cx.invalid(
            "queries",
            format!(
                "expected an array of query definitions, found {}",
                what(root)
            ),
        ));
    };
    let mut names = Vec::new();
    let mut queries = Vec::new();
    for (i, q) in list.iter().enumerate() {
        queries.extend(pending_query(cx, i, q, colls, &mut names)?);
    }
    if colls.len() > 1 && !queries.is_empty() {
        cx.note(
            "plgm runs each query against a randomly chosen collection; here each query runs \
             against its own collection",
        );
    }
    let mut all = share_buckets(cx, queries, colls, &mut names);
    all.extend(inserts(colls, &mut names));
    if all.len() > MAX_OPERATIONS {
        return Err(cx.invalid(
            "queries",
            format!(
                "the import makes {} operations (queries, plgm's fallback writes and inserts); a \
                 custom workload holds at most {MAX_OPERATIONS}",
                all.len()
            ),
        ));
    }
    let weights = integer_weights(&all)
        .ok_or_else(|| cx.invalid("queries", "operation weights too fine to express"))?;
    Ok(all
        .into_iter()
        .zip(weights)
        .map(|(p, weight)| {
            let mut op = Map::new();
            op.insert("name".into(), json!(p.name));
            op.insert("class".into(), json!(p.class));
            op.insert("weight".into(), json!(weight));
            op.insert(p.kind.into(), p.body);
            Value::Object(op)
        })
        .collect())
}

/// Query `i` as an operation of its bucket; `None` for one that is skipped or dropped (noted).
fn pending_query(
    cx: &mut Cx,
    i: usize,
    q: &Value,
    colls: &[Coll],
    names: &mut Vec<String>,
) -> Result<Option<(Bucket, Pending)>, ImportError> {
    let query = Query::read(cx, q, format!("queries[{i}]"))?;
    let Some(bucket) = query.bucket(cx)? else {
        return Ok(None);
    };
    if !colls.iter().any(|c| c.name == query.coll) {
        cx.group(
            "queries on collections the collection file does not define are dropped, as plgm drops them",
            format!("{} ({:?})", query.path, query.coll),
        );
        return Ok(None);
    }
    let body = query.body(cx, bucket)?;
    let name = unique_name(&format!("{}-{i}", bucket.prefix()), names);
    Ok(Some((
        bucket,
        Pending {
            name,
            class: bucket.plgm(),
            share: bucket.share(),
            den: 1,
            kind: bucket.kind(),
            body: Value::Object(body),
        },
    )))
}

/// Each bucket's share split among its queries; an empty update or delete bucket gets plgm's
/// fallbacks, an empty find or aggregate bucket is skipped (noted).
fn share_buckets(
    cx: &mut Cx,
    mut queries: Vec<(Bucket, Pending)>,
    colls: &[Coll],
    names: &mut Vec<String>,
) -> Vec<Pending> {
    let mut ops = Vec::new();
    let mut skipped = Vec::new();
    for bucket in BUCKETS {
        let n = queries.iter().filter(|(b, _)| *b == bucket).count() as u128;
        if n == 0 {
            match bucket {
                Bucket::Find | Bucket::Aggregate => skipped.push(bucket),
                _ => ops.extend(fallbacks(cx, bucket, colls, names)),
            }
        }
        for (_, p) in queries.iter_mut().filter(|(b, _)| *b == bucket) {
            p.den = n;
        }
    }
    for bucket in skipped {
        cx.group(
            "kinds without a query are skipped, as plgm skips them, so the other kinds share their time",
            format!("{} ({} %)", bucket.plgm(), bucket.share() / 100),
        );
    }
    let mut all: Vec<Pending> = queries.into_iter().map(|(_, p)| p).collect();
    all.extend(ops);
    all
}

/// plgm's inserts and batch inserts, their shares split evenly among the collections.
fn inserts(colls: &[Coll], names: &mut Vec<String>) -> Vec<Pending> {
    let n = colls.len() as u128;
    let mut all = Vec::new();
    for c in colls {
        let suffix = if colls.len() > 1 {
            format!("-{}", c.name)
        } else {
            String::new()
        };
        for (prefix, class, share, documents) in [
            ("insert", "insert", INSERT_SHARE, 1),
            ("insert-many", "insertMany", INSERT_MANY_SHARE, INSERT_BATCH),
        ] {
            all.push(Pending {
                name: unique_name(&format!("{prefix}{suffix}"), names),
                class,
                share,
                den: n,
                kind: "insert",
                body: json!({"collection": c.name, "documents": documents}),
            });
        }
    }
    all
}

/// plgm's stand-in for an empty update or delete bucket: on the chosen collection, a filter on
/// the first collection's shard key field (on sharded targets; `_id` elsewhere) with the
/// placeholder of that field's type; updates `$set` one random field to a new value (for
/// `flights`: `$inc seats_available` 1–5 or `$set duration_minutes` 30–429).
fn fallbacks(cx: &mut Cx, bucket: Bucket, colls: &[Coll], names: &mut Vec<String>) -> Vec<Pending> {
    let field = colls[0].shard_field.clone().unwrap_or_else(|| "_id".into());
    cx.group(
        &format!(
            "kinds without a query get plgm's fallback writes, filtered on `{field}` (plgm: the \
             shard key's first field on sharded targets, _id elsewhere)"
        ),
        bucket.plgm(),
    );
    let mut out = Vec::new();
    for c in colls {
        let declared = c
            .types
            .iter()
            .find(|(k, _)| *k == field)
            .map(|(_, t)| t.as_str());
        let ty = declared.unwrap_or(if field == "_id" { "string" } else { "int" });
        let placeholder = Value::String(format!("<{ty}>"));
        let filter = json!({ &field: template(cx, &placeholder, "", true).expect("a type name") });
        let mut stem = format!("{}-fallback", bucket.prefix());
        if colls.len() > 1 {
            stem = format!("{stem}-{}", c.name);
        }
        if bucket.kind() == "delete" {
            out.push(Pending {
                name: unique_name(&stem, names),
                class: bucket.plgm(),
                share: bucket.share(),
                den: colls.len() as u128,
                kind: "delete",
                body: json!({"collection": c.name, "filter": filter, "multi": bucket.multi()}),
            });
            continue;
        }
        let updates: Vec<(String, Value)> = if c.name == "flights" {
            cx.group("fallback updates of these collections are plgm's flights updates: $inc seats_available 1 to 5 or $set duration_minutes 30 to 429, half each", c.name.clone());
            let inc = cx.generator("seats_inc", json!({"int": {"min": 1, "max": 5}}));
            let minutes = cx.generator("duration_minutes", json!({"int": {"min": 30, "max": 429}}));
            vec![
                (
                    "seats_available".into(),
                    json!({"$inc": {"seats_available": inc}}),
                ),
                (
                    "duration_minutes".into(),
                    json!({"$set": {"duration_minutes": minutes}}),
                ),
            ]
        } else if c.top.is_empty() {
            let v = cx.generator("updated_at", json!({"int": {"min": 0, "max": i64::MAX}}));
            vec![("updated_at".into(), json!({"$set": {"updated_at": v}}))]
        } else {
            cx.group(
                "fallback updates $set one field, each field (but _id) as often, to a value of its generator",
                c.name.clone(),
            );
            c.top
                .iter()
                .map(|(f, g)| {
                    let v = cx.generator(&format!("set_{f}"), g.clone());
                    (f.clone(), json!({"$set": {f: v}}))
                })
                .collect()
        };
        let den = (colls.len() * updates.len()) as u128;
        for (f, update) in updates {
            out.push(Pending {
                name: unique_name(&format!("{stem}-{f}"), names),
                class: bucket.plgm(),
                share: bucket.share(),
                den,
                kind: "update",
                body: json!({"collection": c.name, "filter": filter, "update": update, "multi": bucket.multi()}),
            });
        }
    }
    out
}

/// `value` of a filter or pipeline with plgm's placeholders made generators: only a string
/// that is an object's value and exactly `"<int>"` (0–999) or `"<string>"` (`val-0`–`val-999`),
/// as plgm replaces them; elsewhere they stay literal, as in plgm.
fn template(cx: &mut Cx, value: &Value, path: &str, in_object: bool) -> Result<Value, ImportError> {
    Ok(match value {
        Value::String(s) if in_object && s == "<int>" => {
            json!(cx.generator("int", json!({"int": {"min": 0, "max": 999}})))
        }
        Value::String(s) if in_object && s == "<string>" => {
            let values: Vec<String> = (0..1000).map(|n| format!("val-{n}")).collect();
            json!(cx.generator("string", json!({"choice": {"values": values}})))
        }
        Value::String(_) => {
            literal(cx, value, path)?;
            value.clone()
        }
        Value::Object(map) => {
            let mut out = Map::new();
            for (k, v) in map {
                out.insert(k.clone(), template(cx, v, &format!("{path}.{k}"), true)?);
            }
            Value::Object(out)
        }
        Value::Array(items) => {
            let mut out = Vec::new();
            for (i, v) in items.iter().enumerate() {
                out.push(template(cx, v, &format!("{path}[{i}]"), false)?);
            }
            Value::Array(out)
        }
        other => other.clone(),
    })
}

/// Checks a value passed as written (an update, a projection, an array's strings): a `{{` would
/// be read as a custom placeholder; plgm's placeholders stay literal strings here as in plgm.
fn literal(cx: &mut Cx, value: &Value, path: &str) -> Result<(), ImportError> {
    match value {
        Value::String(s) if s.contains("{{") => Err(cx.invalid(
            path,
            format!("{s:?} holds \"{{{{\", which a custom workload reads as a placeholder"),
        )),
        Value::String(s) if s == "<int>" || s == "<string>" => {
            cx.group("placeholders plgm does not replace (in updates, projections and directly in arrays) stay literal strings", path);
            Ok(())
        }
        Value::Object(map) => map
            .iter()
            .try_for_each(|(k, v)| literal(cx, v, &format!("{path}.{k}"))),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .try_for_each(|(i, v)| literal(cx, v, &format!("{path}[{i}]"))),
        _ => Ok(()),
    }
}

/// The smallest integer weights proportional to `share / den`; `None` beyond 2^53 (what every
/// YAML reader keeps exact).
fn integer_weights(ops: &[Pending]) -> Option<Vec<u64>> {
    let lcm = ops
        .iter()
        .try_fold(1u128, |l, p| l.checked_mul(p.den / gcd(l, p.den)))?;
    let raw: Vec<u128> = ops
        .iter()
        .map(|p| p.share.checked_mul(lcm / p.den))
        .collect::<Option<_>>()?;
    let g = raw.iter().fold(0, |g, w| gcd(g, *w)).max(1);
    raw.iter()
        .map(|w| u64::try_from(w / g).ok().filter(|w| *w <= 1 << 53))
        .collect()
}

fn gcd(a: u128, b: u128) -> u128 {
    if b == 0 { a } else { gcd(b, a % b) }
}
