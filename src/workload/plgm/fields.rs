//! plgm's collection definitions → custom workload collections: field types → generators
//! (the table of custom.md §8), indexes and the shard key.

use serde_json::{Map, Value, json};

use super::cx::{Cx, Obj, get, what};
use super::error::ImportError;

/// One imported collection and what the query import needs of it.
pub(super) struct Coll {
    pub name: String,
    /// The custom workload's collection entry.
    pub entry: Value,
    /// Top-level fields other than `_id` with their generators: plgm's fallback update sets one.
    pub top: Vec<(String, Value)>,
    /// Top-level fields with their plgm type as written: plgm's fallback filter uses it.
    pub types: Vec<(String, String)>,
    /// The first field of `shardConfig.key`.
    pub shard_field: Option<String>,
}

/// The dates plgm draws (the 365 days before now) need the clock; the import fixes a year.
const DATE_FROM: &str = "2025-01-01T00:00:00Z";
const DATE_TO: &str = "2026-01-01T00:00:00Z";
/// A custom workload's limit (custom.md §2).
const MAX_COLLECTIONS: usize = 16;

const COLLECTION_KEYS: &[&str] = &["database", "collection", "fields", "indexes", "shardConfig"];
const FIELD_KEYS: &[&str] = &[
    "type",
    "provider",
    "maxLength",
    "minLength",
    "min",
    "max",
    "enum",
    "items",
    "fields",
    "arraySize",
];

/// The database and the collections of plgm's collection file.
pub(super) fn collections(root: &Value, cx: &mut Cx) -> Result<(String, Vec<Coll>), ImportError> {
    // plgm tries `{"collections": [...]}` first, then a bare array; each must be non-empty.
    let shape = "expected an array of collection definitions or {\"collections\": [...]}";
    let list = match root {
        Value::Array(list) => list,
        Value::Object(map) => match map.get("collections") {
            Some(Value::Array(list)) => list,
            Some(other) => {
                return Err(cx.invalid("collections", format!("{shape}, found {}", what(other))));
            }
            None => return Err(cx.invalid("collections", format!("{shape}, found another object"))),
        },
        other => return Err(cx.invalid("collections", format!("{shape}, found {}", what(other)))),
    };
    if list.is_empty() {
        return Err(cx.invalid(
            "collections",
            "no collection definitions (plgm refuses an empty file)",
        ));
    }
    if list.len() > MAX_COLLECTIONS {
        return Err(cx.invalid(
            "collections",
            format!(
                "{} collections; a custom workload holds at most {MAX_COLLECTIONS}",
                list.len()
            ),
        ));
    }
    let mut database: Option<(String, String)> = None;
    let mut out: Vec<Coll> = Vec::new();
    for (i, def) in list.iter().enumerate() {
        let path = format!("collections[{i}]");
        let obj = Obj::new(cx, def, &path, COLLECTION_KEYS)?;
        let db = obj.str(cx, "database")?.unwrap_or("");
        let db_path = obj.path("database");
        match &database {
            None if db.is_empty() => {
                return Err(cx.invalid(
                    &db_path,
                    "missing; plgm connects to the first collection's database",
                ));
            }
            None => database = Some((db.to_owned(), db_path)),
            Some((first, first_path)) if first != db => {
                return Err(cx.invalid(
                    &db_path,
                    format!(
                        "{db:?} differs from {first_path} {first:?}; a custom workload has one database"
                    ),
                ));
            }
            Some(_) => {}
        }
        let name = obj.str(cx, "collection")?.unwrap_or("");
        let name_path = obj.path("collection");
        if name.is_empty() {
            return Err(cx.invalid(&name_path, "missing; every definition names its collection"));
        }
        if name.starts_with("system.") {
            return Err(cx.invalid(&name_path, format!("{name:?} is a system collection")));
        }
        if let Some(j) = out.iter().position(|c| c.name == name) {
            return Err(cx.invalid(
                &name_path,
                format!("{name:?} is defined twice (also collections[{j}].collection)"),
            ));
        }
        out.push(collection(cx, &obj, name)?);
    }
    let database = database.expect("at least one collection").0;
    if out.iter().any(|c| c.name == "flights") {
        cx.note(
            "plgm's default_workload generates `flights` documents with built-in code (flight \
             codes, gates, equipment, seats, passengers) that its files do not describe; the \
             files' definitions are imported as for any collection",
        );
    }
    cx.note("fields and index keys keep the order written (plgm's Go maps do not keep it)");
    Ok((database, out))
}

fn collection(cx: &mut Cx, obj: &Obj, name: &str) -> Result<Coll, ImportError> {
    let mut fields = Map::new();
    let mut top = Vec::new();
    let mut types = Vec::new();
    if let Some(defs) = obj.map(cx, "fields")? {
        for (key, def) in defs {
            let path = format!("{}.{key}", obj.path("fields"));
            let label = format!("{name}.{key}");
            field_name(cx, key, &path)?;
            if key == "_id" {
                let ty = Obj::new(cx, def, &path, FIELD_KEYS)?
                    .str(cx, "type")?
                    .unwrap_or("");
                types.push((key.clone(), ty.to_owned()));
                cx.group(
                    "_id is a sequence 0, 1, 2… (custom workloads compute _ids; custom.md §3), \
                     not the declared type",
                    format!("{name}._id ({ty})"),
                );
                continue;
            }
            let generator = field(cx, def, &path, &label)?;
            let ty = def
                .as_object()
                .and_then(|m| get(m, "type"))
                .and_then(Value::as_str)
                .unwrap_or("");
            types.push((key.clone(), ty.to_owned()));
            top.push((key.clone(), generator.clone()));
            fields.insert(key.clone(), generator);
        }
    }
    if !types.iter().any(|(k, _)| k == "_id") {
        cx.group(
            "_id is a sequence 0, 1, 2… where plgm lets the driver make ObjectIds",
            name.to_owned(),
        );
    }
    let mut entry = Map::new();
    entry.insert("name".into(), json!(name));
    entry.insert("share".into(), json!(1));
    entry.insert("fields".into(), Value::Object(fields));
    if let Some(list) = obj.array(cx, "indexes")? {
        let mut indexes = Vec::new();
        for (i, def) in list.iter().enumerate() {
            let path = format!("{}[{i}]", obj.path("indexes"));
            let index = Obj::new(cx, def, &path, &["keys"])?;
            let keys = index.map(cx, "keys")?.filter(|k| !k.is_empty());
            let Some(keys) = keys else {
                return Err(cx.invalid(&index.path("keys"), "missing; an index needs keys"));
            };
            let mut out = Map::new();
            for (field, v) in keys {
                let value = match v {
                    Value::Number(n) if n.as_f64() == Some(1.0) => json!(1),
                    Value::Number(n) if n.as_f64() == Some(-1.0) => json!(-1),
                    Value::String(s) if ["hashed", "text", "2dsphere"].contains(&s.as_str()) => {
                        v.clone()
                    }
                    _ => {
                        return Err(cx.invalid(
                            &format!("{}.{field}", index.path("keys")),
                            format!(
                                "unsupported index key {}; expected one of: 1, -1, \"hashed\", \"text\", \"2dsphere\"",
                                what(v)
                            ),
                        ));
                    }
                };
                out.insert(field.clone(), value);
            }
            indexes.push(json!({ "keys": out }));
        }
        if !indexes.is_empty() {
            entry.insert("indexes".into(), Value::Array(indexes));
        }
    }
    let mut shard_field = None;
    if let Some(def) = obj.get("shardConfig") {
        let shard = Obj::new(cx, def, &obj.path("shardConfig"), &["key", "unique"])?;
        let key_path = shard.path("key");
        let key = shard.map(cx, "key")?.cloned().unwrap_or_default();
        if key.len() != 1 {
            return Err(cx.invalid(
                &key_path,
                format!(
                    "{} fields; a custom workload's shard key has exactly one (edit the file to keep one)",
                    key.len()
                ),
            ));
        }
        let (field, kind) = key.iter().next().expect("one field");
        let kind = match kind {
            Value::String(s) if s == "hashed" => "hashed",
            Value::Number(n) if n.as_f64() == Some(1.0) => "range",
            v => {
                return Err(cx.invalid(
                    &format!("{key_path}.{field}"),
                    format!(
                        "unsupported shard key {}; expected \"hashed\" or 1",
                        what(v)
                    ),
                ));
            }
        };
        if shard.bool(cx, "unique")? {
            cx.group(
                "shardConfig.unique is not carried (custom shard keys are not unique)",
                name.to_owned(),
            );
        }
        entry.insert("shardKey".into(), json!({"field": field, "type": kind}));
        shard_field = Some(field.clone());
    }
    Ok(Coll {
        name: name.to_owned(),
        entry: Value::Object(entry),
        top,
        types,
        shard_field,
    })
}

/// The generator of one field definition; `label` names the field in notes (`flights.origin`).
fn field(cx: &mut Cx, def: &Value, path: &str, label: &str) -> Result<Value, ImportError> {
    let obj = Obj::new(cx, def, path, FIELD_KEYS)?;
    let Some(ty) = obj.str(cx, "type")?.filter(|t| !t.is_empty()) else {
        return Err(cx.invalid(&obj.path("type"), "missing; every field has a type"));
    };
    let provider = obj.str(cx, "provider")?.unwrap_or("");
    let (min, max) = (obj.int(cx, "min")?, obj.int(cx, "max")?);
    let min_length = obj.int(cx, "minLength")?.unwrap_or(0);
    let max_length = obj.int(cx, "maxLength")?.unwrap_or(0);
    let array_size = obj.int(cx, "arraySize")?.unwrap_or(0);
    if obj.get("enum").is_some() {
        cx.group("enum is ignored, as plgm ignores it", label);
    }
    let lower = ty.to_ascii_lowercase();
    if !provider.is_empty() {
        if lower == "string" {
            // Faker's output cannot be reproduced; the declared lengths are the best guess.
            let lo = if min_length > 0 { min_length } else { 5 };
            let hi = if max_length > 0 {
                max_length.max(lo)
            } else {
                lo.max(20)
            };
            cx.group(
                "faker providers become random lowercase strings of minLength to maxLength \
                 (default 5 to 20) letters; mongobench has no faker",
                format!("{label} ({provider})"),
            );
            return Ok(json!({"string": {"min": lo, "max": hi}}));
        }
        cx.group(
            "providers of non-string fields are ignored, the type decides (as in plgm when \
             gofakeit has no such method)",
            format!("{label} ({provider})"),
        );
    }
    let int_range = |cx: &Cx, lo: i64, hi: i64| {
        if hi < lo {
            Err(cx.invalid(&obj.path("max"), format!("{hi} is below min {lo}")))
        } else {
            Ok((lo, hi))
        }
    };
    Ok(match lower.as_str() {
        "int" | "integer" | "int32" => {
            let (lo, hi) = int_range(cx, min.unwrap_or(0), max.unwrap_or(i64::from(i32::MAX)))?;
            json!({"int": {"min": lo, "max": hi}})
        }
        "long" | "int64" => json!({"int": {"min": 0, "max": i64::MAX}}),
        "double" | "float" => {
            let (lo, hi) = int_range(cx, min.unwrap_or(0), max.unwrap_or(1000))?;
            // As many decimals (up to 6) as keep the bounds exact in a double's 53 bits.
            let bound = lo.unsigned_abs().max(hi.unsigned_abs());
            let decimals = (0..=6u32)
                .rev()
                .find(|d| bound.saturating_mul(10u64.pow(*d)) < 1 << 53)
                .unwrap_or(0);
            cx.group(
                "doubles are rounded to 6 decimals or fewer (plgm: full precision)",
                label,
            );
            json!({"double": {"min": lo, "max": hi, "decimals": decimals}})
        }
        "decimal" | "decimal128" => {
            cx.group(
                "decimal fields are doubles 0 to 999.99 (mongobench has no decimal128)",
                label,
            );
            json!({"double": {"min": 0, "max": 999.99, "decimals": 2}})
        }
        "string" => {
            cx.group(
                "strings without a provider are 9 random letters (plgm: \"str-N\", N < 100000)",
                label,
            );
            json!({"string": {"length": 9}})
        }
        "bool" | "boolean" => json!({"bool": {"probability": 0.5}}),
        "date" | "datetime" | "timestamp" => {
            if lower == "timestamp" {
                cx.group(
                    "timestamps become dates (mongobench has no timestamp generator)",
                    label,
                );
            }
            cx.group(
                "dates are uniform over 2025 (plgm: the 365 days before now)",
                label,
            );
            json!({"date": {"from": DATE_FROM, "to": DATE_TO}})
        }
        "objectid" => json!({"objectId": {}}),
        "object" | "document" => {
            let mut doc = Map::new();
            if let Some(defs) = obj.map(cx, "fields")? {
                for (key, def) in defs {
                    field_name(cx, key, &format!("{}.{key}", obj.path("fields")))?;
                    let sub = field(
                        cx,
                        def,
                        &format!("{}.{key}", obj.path("fields")),
                        &format!("{label}.{key}"),
                    )?;
                    doc.insert(key.clone(), sub);
                }
            }
            if doc.is_empty() {
                cx.group(
                    "objects without fields are {nested_random: 0 to 99}, as plgm makes them",
                    label,
                );
                doc.insert(
                    "nested_random".into(),
                    json!({"int": {"min": 0, "max": 99}}),
                );
            }
            json!({ "document": doc })
        }
        "array" => {
            if array_size > 1000 {
                return Err(cx.invalid(
                    &obj.path("arraySize"),
                    format!("{array_size}; a custom workload's arrays hold at most 1000 items"),
                ));
            }
            // plgm: exactly arraySize items, else 1 to 5; ints 0 to 999 without `items`.
            let (lo, hi) = if array_size > 0 {
                (array_size, array_size)
            } else {
                (1, 5)
            };
            let of = match obj.get("items") {
                Some(items) => field(cx, items, &obj.path("items"), &format!("{label}[]"))?,
                None => json!({"int": {"min": 0, "max": 999}}),
            };
            json!({"array": {"of": of, "min": lo, "max": hi}})
        }
        _ => {
            cx.group(
                "types plgm does not generate are its constant string \"unknown-<type>\"",
                format!("{label} ({ty})"),
            );
            json!({"constant": format!("unknown-{ty}")})
        }
    })
}

/// Field names a custom workload accepts (custom.md §3); plgm's server would refuse the others.
fn field_name(cx: &Cx, key: &str, path: &str) -> Result<(), ImportError> {
    if key.is_empty() || key.starts_with('$') || key.contains('.') {
        return Err(cx.invalid(
            path,
            "a field name must be non-empty, without \".\" and not start with \"$\"",
        ));
    }
    Ok(())
}
