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
    let list = definitions(root, cx)?;
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

/// The list of collection definitions: plgm tries `{"collections": [...]}` first, then a bare
/// array; it must be non-empty, and a custom workload holds at most [`MAX_COLLECTIONS`].
fn definitions<'a>(root: &'a Value, cx: &Cx) -> Result<&'a Vec<Value>, ImportError> {
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
    Ok(list)
}

/// One collection definition, its name checked by the caller.
fn collection(cx: &mut Cx, obj: &Obj, name: &str) -> Result<Coll, ImportError> {
    let fields = field_generators(cx, obj, name)?;
    let mut entry = Map::new();
    entry.insert("name".into(), json!(name));
    entry.insert("share".into(), json!(1));
    entry.insert("fields".into(), Value::Object(fields.generators));
    if let Some(indexes) = indexes(cx, obj)?.filter(|list| !list.is_empty()) {
        entry.insert("indexes".into(), Value::Array(indexes));
    }
    let mut shard_field = None;
    if let Some((key, field)) = shard_key(cx, obj, name)? {
        entry.insert("shardKey".into(), key);
        shard_field = Some(field);
    }
    Ok(Coll {
        name: name.to_owned(),
        entry: Value::Object(entry),
        top: fields.top,
        types: fields.types,
        shard_field,
    })
}

/// A collection's fields: the generators of the custom collection, and what [`Coll`] keeps.
struct Fields {
    generators: Map<String, Value>,
    top: Vec<(String, Value)>,
    types: Vec<(String, String)>,
}

/// The generators of a collection's `fields`; `_id` is left to the custom workload's sequence.
fn field_generators(cx: &mut Cx, obj: &Obj, name: &str) -> Result<Fields, ImportError> {
    let mut out = Fields {
        generators: Map::new(),
        top: Vec::new(),
        types: Vec::new(),
    };
    if let Some(defs) = obj.map(cx, "fields")? {
        for (key, def) in defs {
            let path = format!("{}.{key}", obj.path("fields"));
            let label = format!("{name}.{key}");
            field_name(cx, key, &path)?;
            if key == "_id" {
                let ty = Obj::new(cx, def, &path, FIELD_KEYS)?
                    .str(cx, "type")?
                    .unwrap_or("");
                out.types.push((key.clone(), ty.to_owned()));
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
            out.types.push((key.clone(), ty.to_owned()));
            out.top.push((key.clone(), generator.clone()));
            out.generators.insert(key.clone(), generator);
        }
    }
    if !out.types.iter().any(|(k, _)| k == "_id") {
        cx.group(
            "_id is a sequence 0, 1, 2… where plgm lets the driver make ObjectIds",
            name.to_owned(),
        );
    }
    Ok(out)
}

/// A collection's `indexes`, each `{"keys": …}` with the key kinds a custom workload supports.
fn indexes(cx: &mut Cx, obj: &Obj) -> Result<Option<Vec<Value>>, ImportError> {
    let Some(list) = obj.array(cx, "indexes")? else {
        return Ok(None);
    };
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
            let value = index_key(v).ok_or_else(|| {
                cx.invalid(
                    &format!("{}.{field}", index.path("keys")),
                    format!(
                        "unsupported index key {}; expected one of: 1, -1, \"hashed\", \"text\", \"2dsphere\"",
                        what(v)
                    ),
                )
            })?;
            out.insert(field.clone(), value);
        }
        indexes.push(json!({ "keys": out }));
    }
    Ok(Some(indexes))
}

/// An index key's kind as a custom workload writes it; `None` for one it does not support.
fn index_key(v: &Value) -> Option<Value> {
    match v {
        Value::Number(n) if n.as_f64() == Some(1.0) => Some(json!(1)),
        Value::Number(n) if n.as_f64() == Some(-1.0) => Some(json!(-1)),
        Value::String(s) if ["hashed", "text", "2dsphere"].contains(&s.as_str()) => Some(v.clone()),
        _ => None,
    }
}

/// The collection's `shardConfig` as a custom `shardKey`, with the key's field.
fn shard_key(cx: &mut Cx, obj: &Obj, name: &str) -> Result<Option<(Value, String)>, ImportError> {
    let Some(def) = obj.get("shardConfig") else {
        return Ok(None);
    };
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
    Ok(Some((json!({"field": field, "type": kind}), field.clone())))
}

/// One field definition's attributes, type-checked.
struct FieldDef<'a> {
    obj: Obj<'a>,
    ty: &'a str,
    min: Option<i64>,
    max: Option<i64>,
    array_size: i64,
}

impl FieldDef<'_> {
    /// `[min, max]` with the given defaults; `max` below `min` is refused.
    fn int_range(&self, cx: &Cx, lo: i64, hi: i64) -> Result<(i64, i64), ImportError> {
        let (lo, hi) = (self.min.unwrap_or(lo), self.max.unwrap_or(hi));
        if hi < lo {
            Err(cx.invalid(&self.obj.path("max"), format!("{hi} is below min {lo}")))
        } else {
            Ok((lo, hi))
        }
    }
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
            let (lo, hi) = faker_lengths(min_length, max_length);
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
    let def = FieldDef {
        obj,
        ty,
        min,
        max,
        array_size,
    };
    typed_generator(cx, &def, &lower, label)
}

/// The length range of a faker string: the declared lengths, else 5 to 20.
fn faker_lengths(min_length: i64, max_length: i64) -> (i64, i64) {
    let lo = if min_length > 0 { min_length } else { 5 };
    let hi = if max_length > 0 {
        max_length.max(lo)
    } else {
        lo.max(20)
    };
    (lo, hi)
}

/// The generator of a field's (lower-cased) type.
fn typed_generator(
    cx: &mut Cx,
    def: &FieldDef,
    lower: &str,
    label: &str,
) -> Result<Value, ImportError> {
    Ok(match lower {
        "int" | "integer" | "int32" => {
            let (lo, hi) = def.int_range(cx, 0, i64::from(i32::MAX))?;
            json!({"int": {"min": lo, "max": hi}})
        }
        "long" | "int64" => json!({"int": {"min": 0, "max": i64::MAX}}),
        "double" | "float" => {
            let (lo, hi) = def.int_range(cx, 0, 1000)?;
            cx.group(
                "doubles are rounded to 6 decimals or fewer (plgm: full precision)",
                label,
            );
            json!({"double": {"min": lo, "max": hi, "decimals": exact_decimals(lo, hi)}})
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
        "object" | "document" => object(cx, def, label)?,
        "array" => array(cx, def, label)?,
        _ => {
            cx.group(
                "types plgm does not generate are its constant string \"unknown-<type>\"",
                format!("{label} ({})", def.ty),
            );
            json!({"constant": format!("unknown-{}", def.ty)})
        }
    })
}

/// As many decimals (up to 6) as keep the bounds exact in a double's 53 bits.
fn exact_decimals(lo: i64, hi: i64) -> u32 {
    let bound = lo.unsigned_abs().max(hi.unsigned_abs());
    (0..=6u32)
        .rev()
        .find(|d| bound.saturating_mul(10u64.pow(*d)) < 1 << 53)
        .unwrap_or(0)
}

/// An object field: its sub-fields, or plgm's `{nested_random}` without any.
fn object(cx: &mut Cx, def: &FieldDef, label: &str) -> Result<Value, ImportError> {
    let obj = &def.obj;
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
    Ok(json!({ "document": doc }))
}

/// An array field: exactly `arraySize` items, else 1 to 5; ints 0 to 999 without `items`.
fn array(cx: &mut Cx, def: &FieldDef, label: &str) -> Result<Value, ImportError> {
    let obj = &def.obj;
    let array_size = def.array_size;
    if array_size > 1000 {
        return Err(cx.invalid(
            &obj.path("arraySize"),
            format!("{array_size}; a custom workload's arrays hold at most 1000 items"),
        ));
    }
    let (lo, hi) = if array_size > 0 {
        (array_size, array_size)
    } else {
        (1, 5)
    };
    let of = match obj.get("items") {
        Some(items) => field(cx, items, &obj.path("items"), &format!("{label}[]"))?,
        None => json!({"int": {"min": 0, "max": 999}}),
    };
    Ok(json!({"array": {"of": of, "min": lo, "max": hi}}))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_keep_as_many_decimals_as_53_bits_hold() {
        assert_eq!(exact_decimals(0, 1000), 6);
        assert_eq!(exact_decimals(-5, 3), 6);
        // 10^10 × 10^6 > 2^53 ≈ 9.007e15; 10^10 × 10^5 = 10^15 fits.
        assert_eq!(exact_decimals(0, 10_000_000_000), 5);
        assert_eq!(exact_decimals(i64::MIN, 0), 0);
    }

    #[test]
    fn faker_strings_take_the_declared_lengths_or_5_to_20() {
        assert_eq!(faker_lengths(0, 0), (5, 20));
        assert_eq!(faker_lengths(3, 8), (3, 8));
        assert_eq!(faker_lengths(30, 0), (30, 30));
        assert_eq!(faker_lengths(10, 4), (10, 10));
        assert_eq!(faker_lengths(0, 3), (5, 5));
    }

    #[test]
    fn index_keys_are_ascending_descending_or_a_named_kind() {
        assert_eq!(index_key(&json!(1)), Some(json!(1)));
        assert_eq!(index_key(&json!(1.0)), Some(json!(1)));
        assert_eq!(index_key(&json!(-1)), Some(json!(-1)));
        assert_eq!(index_key(&json!("hashed")), Some(json!("hashed")));
        assert_eq!(index_key(&json!("2dsphere")), Some(json!("2dsphere")));
        assert_eq!(index_key(&json!(2)), None);
        assert_eq!(index_key(&json!("geoHaystack")), None);
    }
}
