//! The document (§2), its collections and indexes (§3) and phases (§6).

use std::collections::HashSet;
use std::time::Duration;

use mongodb::bson::{Bson, Document};
use serde_json::json;
use serde_yaml::Value;
use sha2::{Digest, Sha256};

use super::generator::fields_json;
use super::model::{
    Collection, CustomPhase, Gen, Index, OperationSpec, PhaseLength, ShardKey, VERSION,
};
use super::read::{
    Map, Result, at_index, boolean, describe, err, int_in, list, name, string, to_document,
    uint_in, weight,
};
use super::workload::Workload;
use super::{parse_gen, parse_ops};

/// Path of the document itself.
pub(super) const ROOT: &str = "workload.custom";
/// MongoDB's largest document.
const MAX_DOCUMENT_BYTES: u64 = 16 * 1024 * 1024;
const MAX_COLLECTIONS: usize = 16;
const MAX_PHASES: usize = 2;
const MAX_WORKERS: u64 = 4096;
const MAX_SHARE: u64 = 1_000_000;
const DURATION_EXAMPLE: &str = "expected a duration such as 90s, 10m, 1h30m or 250ms";

pub(super) fn parse(text: &str, duration: fn(&str) -> Option<Duration>) -> Result<Workload> {
    let root: Value =
        serde_yaml::from_str(text).map_err(|e| err(ROOT, format!("not valid YAML: {e}")))?;
    let top = Map::new(
        &root,
        ROOT,
        &[
            "version",
            "database",
            "collections",
            "generators",
            "operations",
            "phases",
        ],
    )?;
    let version = top.req("version")?;
    if !matches!(version, Value::Number(n) if n.as_u64() == Some(1) && !n.is_f64()) {
        return Err(err(
            &top.at("version"),
            format!(
                "unsupported version {}; the only version is 1",
                describe(version)
            ),
        ));
    }
    let database = match top.get("database") {
        Some(v) => database_name(v, &top.at("database"))?,
        None => "custom".to_owned(),
    };
    let collections = collections(top.req("collections")?, &top.at("collections"), &database)?;
    let names: Vec<String> = collections.iter().map(|c| c.name.clone()).collect();
    let generators = match top.get("generators") {
        Some(v) => parse_gen::generators(v, &top.at("generators"), &names)?,
        None => Vec::new(),
    };
    let (operations, ops) = parse_ops::operations(
        top.req("operations")?,
        &top.at("operations"),
        &collections,
        &generators,
    )?;
    let phases = phases(top.req("phases")?, &top.at("phases"), &operations, duration)?;
    let dataset_identity = identity(&database, &collections, &names);
    Ok(Workload {
        text_sha256: hex::encode(Sha256::digest(text.as_bytes())),
        database: crate::workload::intern(&database),
        collections,
        generators,
        operations,
        ops,
        phases,
        dataset_identity,
    })
}

fn identity(database: &str, collections: &[Collection], names: &[String]) -> String {
    let collections: Vec<serde_json::Value> = collections
        .iter()
        .map(|c| {
            let indexes: Vec<Bson> = c
                .indexes
                .iter()
                .map(|i| {
                    let mut d = Document::new();
                    d.insert("key", i.keys.clone());
                    d.insert("name", i.name.clone());
                    d.insert("unique", i.unique);
                    d.insert("sparse", i.sparse);
                    d.insert("expireAfterSeconds", i.expire_after_seconds);
                    d.insert("partialFilterExpression", i.partial_filter.clone());
                    Bson::Document(d)
                })
                .collect();
            json!({
                "name": c.name,
                "share": c.share,
                "fields": fields_json(&c.fields, names),
                "indexes": Bson::Array(indexes).into_canonical_extjson(),
            })
        })
        .collect();
    let canonical = json!({ "database": database, "collections": collections }).to_string();
    format!(
        "{VERSION} collections={}",
        hex::encode(Sha256::digest(canonical.as_bytes()))
    )
}

fn database_name(v: &Value, path: &str) -> Result<String> {
    let s = string(v, path)?;
    let bad = |c: char| "/\\. \"$*<>:|?\0".contains(c);
    if s.is_empty() || s.len() > 63 || s.contains(bad) {
        return Err(err(
            path,
            format!(
                "expected a database name of 1 to 63 characters without any of / \\ . \" $ * < \
                 > : | ? or spaces, got {s:?}"
            ),
        ));
    }
    if ["admin", "local", "config"].contains(&s) {
        return Err(err(path, format!("{s:?} is a system database")));
    }
    Ok(s.to_owned())
}

fn collections(v: &Value, path: &str, database: &str) -> Result<Vec<Collection>> {
    let items = list(v, path, 1, MAX_COLLECTIONS, "collections")?;
    const KEYS: &[&str] = &["name", "share", "fields", "indexes", "shardKey"];
    // First the names and shares, which a `ref` in any collection's fields may name.
    let mut heads: Vec<(String, u64)> = Vec::new();
    for (c, item) in items.iter().enumerate() {
        let map = Map::new(item, &at_index(path, c), KEYS)?;
        let name_path = map.at("name");
        let name = string(map.req("name")?, &name_path)?;
        if name.is_empty() || name.starts_with("system.") || name.contains(['$', '\0']) {
            return Err(err(
                &name_path,
                format!(
                    "expected a collection name not starting with \"system.\" and without $, got {name:?}"
                ),
            ));
        }
        if database.len() + 1 + name.len() > 255 {
            return Err(err(&name_path, "the namespace is longer than 255 bytes"));
        }
        if heads.iter().any(|(other, _)| other == name) {
            return Err(err(
                &name_path,
                format!("duplicate collection name {name:?}"),
            ));
        }
        let share = match map.get("share") {
            Some(v) => uint_in(v, &map.at("share"), 1, MAX_SHARE)?,
            None => 1,
        };
        heads.push((name.to_owned(), share));
    }
    let names: Vec<String> = heads.iter().map(|(n, _)| n.clone()).collect();
    let mut out = Vec::with_capacity(items.len());
    for (c, (item, (name, share))) in items.iter().zip(heads).enumerate() {
        let map = Map::new(item, &at_index(path, c), KEYS)?;
        let fields = match map.get("fields") {
            Some(v) => parse_gen::collection_fields(v, &map.at("fields"), &names)?,
            None => vec![("_id".to_owned(), Gen::Sequence { start: 0 })],
        };
        let id_start = match fields.first() {
            Some((_, Gen::Sequence { start })) => *start,
            _ => 0,
        };
        let size = fields.iter().fold(5u64, |sum, (name, g)| {
            sum.saturating_add(2 + name.len() as u64)
                .saturating_add(g.max_size())
        });
        if size > MAX_DOCUMENT_BYTES {
            return Err(err(
                &map.at("fields"),
                format!("a document can reach {size} bytes, above MongoDB's limit of 16 MiB"),
            ));
        }
        let indexes = match map.get("indexes") {
            Some(v) => indexes(v, &map.at("indexes"))?,
            None => Vec::new(),
        };
        let shard_key = match map.get("shardKey") {
            Some(v) => Some(shard_key(v, &map.at("shardKey"), &fields)?),
            None => None,
        };
        out.push(Collection {
            name,
            share,
            shard_key,
            fields,
            id_start,
            indexes,
        });
    }
    Ok(out)
}

fn indexes(v: &Value, path: &str) -> Result<Vec<Index>> {
    let items = list(v, path, 0, 64, "indexes")?;
    let mut out: Vec<Index> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let index = index(item, &at_index(path, i), &out)?;
        out.push(index);
    }
    Ok(out)
}

/// One index at `path`; its name must differ from `_id_` and from the `earlier` indexes'.
fn index(item: &Value, path: &str, earlier: &[Index]) -> Result<Index> {
    let map = Map::new(
        item,
        path,
        &[
            "keys",
            "name",
            "unique",
            "sparse",
            "expireAfterSeconds",
            "partialFilterExpression",
        ],
    )?;
    let keys_path = map.at("keys");
    let (keys, default_name) = index_keys(map.req("keys")?, &keys_path)?;
    let hashed = keys
        .values()
        .filter(|v| v.as_str() == Some("hashed"))
        .count();
    if hashed > 1 {
        return Err(err(&keys_path, "at most one key of an index may be hashed"));
    }
    let flag = |key: &str| -> Result<Option<bool>> {
        map.get(key).map(|v| boolean(v, &map.at(key))).transpose()
    };
    let unique = flag("unique")?;
    if unique == Some(true) && hashed > 0 {
        return Err(err(&map.at("unique"), "a hashed index cannot be unique"));
    }
    let expire_after_seconds = match map.get("expireAfterSeconds") {
        Some(v) => {
            let p = map.at("expireAfterSeconds");
            if keys.len() > 1 {
                return Err(err(&p, "a TTL index has exactly one key"));
            }
            Some(int_in(v, &p, 0, i64::from(i32::MAX))? as i32)
        }
        None => None,
    };
    let partial_filter = match map.get("partialFilterExpression") {
        Some(v) => Some(to_document(
            v,
            &map.at("partialFilterExpression"),
            &mut |_, _| Ok(()),
        )?),
        None => None,
    };
    let name = match map.get("name") {
        Some(v) => {
            let s = string(v, &map.at("name"))?;
            if s.is_empty() || s.contains('\0') {
                return Err(err(&map.at("name"), "expected a non-empty index name"));
            }
            s.to_owned()
        }
        None => default_name,
    };
    if name == "_id_" || earlier.iter().any(|other| other.name == name) {
        return Err(err(path, format!("duplicate index name {name:?}")));
    }
    Ok(Index {
        keys,
        name,
        unique,
        sparse: flag("sparse")?,
        expire_after_seconds,
        partial_filter,
    })
}

/// An index's `keys` in the order written, with the name MongoDB gives the index by default
/// (`field_1_other_-1`).
fn index_keys(v: &Value, keys_path: &str) -> Result<(Document, String)> {
    let keys_map = Map::open(v, keys_path)?;
    if keys_map.entries.is_empty() {
        return Err(err(keys_path, "expected at least one key"));
    }
    let mut keys = Document::new();
    let mut default_name = Vec::new();
    for (field, value) in &keys_map.entries {
        let (bson, text) = match value {
            Value::Number(n) if n.as_i64() == Some(1) && !n.is_f64() => (Bson::Int32(1), "1"),
            Value::Number(n) if n.as_i64() == Some(-1) && !n.is_f64() => (Bson::Int32(-1), "-1"),
            Value::String(s) if ["hashed", "text", "2dsphere"].contains(&s.as_str()) => {
                (Bson::String(s.clone()), s.as_str())
            }
            _ => {
                return Err(err(
                    &keys_map.at(field),
                    format!(
                        "expected 1, -1, \"hashed\", \"text\" or \"2dsphere\", got {}",
                        describe(value)
                    ),
                ));
            }
        };
        if field.is_empty() {
            return Err(err(keys_path, "an index key must name a field"));
        }
        default_name.push(format!("{field}_{text}"));
        keys.insert(*field, bson);
    }
    Ok((keys, default_name.join("_")))
}

fn shard_key(v: &Value, path: &str, fields: &[(String, Gen)]) -> Result<ShardKey> {
    let map = Map::new(v, path, &["field", "type"])?;
    let field = string(map.req("field")?, &map.at("field"))?;
    let hashed = match string(map.req("type")?, &map.at("type"))? {
        "hashed" => true,
        "range" => false,
        other => {
            return Err(err(
                &map.at("type"),
                format!("expected \"hashed\" or \"range\", got {other:?}"),
            ));
        }
    };
    match fields.iter().find(|(name, _)| name == field) {
        None => Err(err(
            &map.at("field"),
            format!("{field:?} is not a field of the collection"),
        )),
        Some((_, Gen::Array { .. })) => Err(err(
            &map.at("field"),
            format!("{field:?} is an array, which cannot be a shard key"),
        )),
        Some(_) => Ok(ShardKey {
            field: field.to_owned(),
            hashed,
        }),
    }
}

fn phases(
    v: &Value,
    path: &str,
    operations: &[OperationSpec],
    duration: fn(&str) -> Option<Duration>,
) -> Result<Vec<CustomPhase>> {
    let items = list(v, path, 1, MAX_PHASES, "phases")?;
    let mut out: Vec<CustomPhase> = Vec::with_capacity(items.len());
    let mut names = HashSet::new();
    for (p, item) in items.iter().enumerate() {
        let phase_path = at_index(path, p);
        let map = Map::new(
            item,
            &phase_path,
            &[
                "name",
                "duration",
                "operations",
                "workers",
                "targetOpsPerSecond",
                "mix",
            ],
        )?;
        let measured = p + 1 == items.len();
        let name = match map.get("name") {
            Some(v) => name(v, &map.at("name"), false)?.to_owned(),
            None if measured => "measured".to_owned(),
            None => "warm-up".to_owned(),
        };
        if !names.insert(name.clone()) {
            return Err(err(
                &map.at("name"),
                format!("duplicate phase name {name:?}"),
            ));
        }
        let length = phase_length(&map, &phase_path, measured, duration)?;
        let workers = map
            .get("workers")
            .map(|v| uint_in(v, &map.at("workers"), 1, MAX_WORKERS).map(|w| w as u32))
            .transpose()?;
        let target_ops_per_second = map
            .get("targetOpsPerSecond")
            .map(|v| uint_in(v, &map.at("targetOpsPerSecond"), 0, u64::MAX))
            .transpose()?;
        let (weights, weights_path) = match map.get("mix") {
            Some(v) => (mix(v, &map.at("mix"), operations)?, map.at("mix")),
            None => (
                operations.iter().map(|o| o.weight).collect(),
                phase_path.clone(),
            ),
        };
        check_weights(&weights, &weights_path)?;
        out.push(CustomPhase {
            name,
            length,
            workers,
            target_ops_per_second,
            weights,
        });
    }
    Ok(out)
}

/// A phase's `duration` or `operations` (not both); 10 minutes for the measured phase and one
/// for a warm-up when neither is given.
fn phase_length(
    map: &Map,
    phase_path: &str,
    measured: bool,
    duration: fn(&str) -> Option<Duration>,
) -> Result<PhaseLength> {
    match (map.get("duration"), map.get("operations")) {
        (Some(_), Some(_)) => Err(err(phase_path, "give `duration` or `operations`, not both")),
        (Some(v), None) => {
            let p = map.at("duration");
            let parsed = match v {
                Value::String(s) => duration(s),
                _ => None,
            };
            match parsed {
                Some(d) if !d.is_zero() => Ok(PhaseLength::Duration(d)),
                Some(_) => Err(err(&p, "a phase's duration must be above 0")),
                None => Err(err(&p, format!("{DURATION_EXAMPLE}, got {}", describe(v)))),
            }
        }
        (None, Some(v)) => Ok(PhaseLength::Operations(uint_in(
            v,
            &map.at("operations"),
            1,
            u64::MAX,
        )?)),
        (None, None) => Ok(PhaseLength::Duration(Duration::from_secs(if measured {
            600
        } else {
            60
        }))),
    }
}

/// A phase's weights add up to at least 1 and fit in 64 bits.
fn check_weights(weights: &[u64], weights_path: &str) -> Result<()> {
    let mut total: u64 = 0;
    for &w in weights {
        total = total
            .checked_add(w)
            .ok_or_else(|| err(weights_path, "the weights add up to more than 2^64 − 1"))?;
    }
    if total == 0 {
        return Err(err(
            weights_path,
            "every weight is 0; at least one operation needs a weight above 0",
        ));
    }
    Ok(())
}

/// A phase's mix: operation name → weight; unnamed operations weigh 0.
fn mix(v: &Value, path: &str, operations: &[OperationSpec]) -> Result<Vec<u64>> {
    let map = Map::open(v, path)?;
    let mut weights = vec![0; operations.len()];
    for (op, value) in &map.entries {
        let Some(j) = operations.iter().position(|o| o.name == *op) else {
            let known: Vec<&str> = operations.iter().map(|o| o.name.as_str()).collect();
            return Err(err(
                &map.at(op),
                format!(
                    "unknown operation {op:?}; expected one of: {}",
                    known.join(", ")
                ),
            ));
        };
        weights[j] = weight(value, &map.at(op))?;
    }
    Ok(weights)
}
