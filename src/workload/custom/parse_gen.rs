//! Generators (§4): a collection's `fields` and the named `generators` of the templates.

use mongodb::bson::{Bson, DateTime};
use serde_yaml::Value;

use super::model::{Dist, Gen};
use super::read::{
    Map, Result, at, at_index, describe, err, int_in, list, name, number, string, to_bson, uint_in,
    weight,
};
use super::zipf::Zipf;

const KINDS: &[&str] = &[
    "sequence", "int", "double", "string", "choice", "bool", "date", "objectId", "constant",
    "array", "document", "ref",
];
const MAX_STRING: u64 = 16 * 1024 * 1024;
const MAX_ARRAY: u64 = 1000;
const MAX_CHOICES: usize = 1000;
const MAX_DECIMALS: u64 = 6;
/// Largest integer every double represents exactly: bounds of `double` in units of its decimals.
const EXACT_DOUBLE: f64 = 9_007_199_254_740_992.0;

/// Where a generator is written.
struct Cx<'a> {
    collections: &'a [String],
    /// In a collection's fields (`sequence` allowed), else in `generators`.
    fields: bool,
}

/// A collection's `fields`, `_id` first (a `sequence`, default start 0).
pub(super) fn collection_fields(
    v: &Value,
    path: &str,
    collections: &[String],
) -> Result<Vec<(String, Gen)>> {
    let cx = Cx {
        collections,
        fields: true,
    };
    let mut fields = document_fields(v, path, &cx)?;
    match fields.iter().position(|(name, _)| name == "_id") {
        None => fields.insert(0, ("_id".to_owned(), Gen::Sequence { start: 0 })),
        Some(0) => {
            if !matches!(fields[0].1, Gen::Sequence { .. }) {
                return Err(err(
                    &at(path, "_id"),
                    "`_id` must be a sequence, e.g. {sequence: {start: 1}}, so that refs, \
                     inserts and restores can compute it",
                ));
            }
        }
        Some(_) => return Err(err(&at(path, "_id"), "`_id` must be the first field")),
    }
    Ok(fields)
}

/// The named generators of the templates.
pub(super) fn generators(
    v: &Value,
    path: &str,
    collections: &[String],
) -> Result<Vec<(String, Gen)>> {
    let map = Map::open(v, path)?;
    let cx = Cx {
        collections,
        fields: false,
    };
    let mut out = Vec::with_capacity(map.entries.len());
    for (key, value) in &map.entries {
        let p = map.at(key);
        name(&Value::String((*key).to_owned()), &p, true)?;
        out.push(((*key).to_owned(), generator(value, &p, &cx, false)?));
    }
    Ok(out)
}

/// Field → generator or constant, in the order written.
fn document_fields(v: &Value, path: &str, cx: &Cx) -> Result<Vec<(String, Gen)>> {
    let map = Map::open(v, path)?;
    let mut out = Vec::with_capacity(map.entries.len());
    for (field, value) in &map.entries {
        let p = map.at(field);
        if field.is_empty() || field.starts_with('$') || field.contains('.') {
            return Err(err(
                &p,
                format!(
                    "a field name must be non-empty, without \".\" and not start with \"$\", got {field:?}"
                ),
            ));
        }
        out.push(((*field).to_owned(), generator(value, &p, cx, true)?));
    }
    Ok(out)
}

/// A constant written in fields or generators: literal, but a `{{` there is a mistake (only
/// operations have placeholders).
fn constant(v: &Value, path: &str) -> Result<Bson> {
    to_bson(v, path, &mut |s, p| {
        if s.contains("{{") {
            Err(err(
                p,
                "placeholders are replaced in operations only; use a generator here",
            ))
        } else {
            Ok(())
        }
    })
}

/// One generator: a map with one key, its kind; a scalar is a constant where `scalar_ok`.
fn generator(v: &Value, path: &str, cx: &Cx, scalar_ok: bool) -> Result<Gen> {
    let kinds = KINDS.join(", ");
    let map = match v {
        Value::Mapping(_) => Map::open(v, path)?,
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) if scalar_ok => {
            return Ok(Gen::Const(constant(v, path)?));
        }
        _ => {
            return Err(err(
                path,
                format!(
                    "expected a generator (a map with one key, its kind: {kinds}), got {}",
                    describe(v)
                ),
            ));
        }
    };
    let [(kind, args)] = map.entries[..] else {
        return Err(err(
            path,
            format!("expected a generator: a map with exactly one key, its kind ({kinds})"),
        ));
    };
    let p = map.at(kind);
    let p = p.as_str();
    match kind {
        "sequence" => sequence(args, p, cx),
        "int" => int(args, p),
        "double" => double(args, p),
        "string" => string_gen(args, p),
        "choice" => choice(args, p),
        "bool" => bool_gen(args, p),
        "date" => date_gen(args, p),
        "objectId" => {
            args_map(args, p, &[])?;
            Ok(Gen::ObjectId)
        }
        "constant" => Ok(Gen::Const(constant(args, p)?)),
        "array" => array(args, p, cx),
        "document" => Ok(Gen::Document(document_fields(args, p, cx)?)),
        "ref" => reference(args, p, cx),
        other => Err(err(
            path,
            format!("unknown generator kind {other:?}; expected one of: {kinds}"),
        )),
    }
}

fn sequence(args: &Value, p: &str, cx: &Cx) -> Result<Gen> {
    if !cx.fields {
        return Err(err(
            p,
            "`sequence` is only allowed in a collection's fields",
        ));
    }
    let a = args_map(args, p, &["start"])?;
    let start = opt_int(&a, "start")?.unwrap_or(0);
    Ok(Gen::Sequence { start })
}

fn int(args: &Value, p: &str) -> Result<Gen> {
    let a = args_map(args, p, &["min", "max", "distribution"])?;
    let min = int_in(a.req("min")?, &a.at("min"), i64::MIN, i64::MAX)?;
    let max = int_in(a.req("max")?, &a.at("max"), i64::MIN, i64::MAX)?;
    if min > max {
        return Err(err(&a.at("max"), format!("max {max} is below min {min}")));
    }
    let dist = distribution(&a)?;
    let items = (max.wrapping_sub(min) as u64).saturating_add(1);
    let zipf = Zipf::new(if dist == Dist::Uniform { 1 } else { items });
    Ok(Gen::Int {
        min,
        max,
        dist,
        zipf,
    })
}

fn string_gen(args: &Value, p: &str) -> Result<Gen> {
    let a = args_map(args, p, &["length", "min", "max", "distribution"])?;
    let (min, max) = match (a.get("length"), a.get("min"), a.get("max")) {
        (Some(v), None, None) => {
            let n = uint_in(v, &a.at("length"), 0, MAX_STRING)?;
            (n, n)
        }
        (None, Some(lo), Some(hi)) => {
            let lo = uint_in(lo, &a.at("min"), 0, MAX_STRING)?;
            let hi = uint_in(hi, &a.at("max"), 0, MAX_STRING)?;
            if lo > hi {
                return Err(err(&a.at("max"), format!("max {hi} is below min {lo}")));
            }
            (lo, hi)
        }
        _ => return Err(err(p, "expected `length`, or `min` and `max`")),
    };
    let dist = distribution(&a)?;
    let zipf = Zipf::new(if dist == Dist::Uniform {
        1
    } else {
        max - min + 1
    });
    Ok(Gen::Str {
        min,
        max,
        dist,
        zipf,
    })
}

fn bool_gen(args: &Value, p: &str) -> Result<Gen> {
    let a = args_map(args, p, &["probability"])?;
    let probability = match a.get("probability") {
        Some(v) => number(v, &a.at("probability"))?,
        None => 0.5,
    };
    if !(0.0..=1.0).contains(&probability) {
        return Err(err(
            &a.at("probability"),
            format!("expected a probability from 0 to 1, got {probability}"),
        ));
    }
    Ok(Gen::Bool { probability })
}

fn date_gen(args: &Value, p: &str) -> Result<Gen> {
    let a = args_map(args, p, &["from", "to"])?;
    let from = date(a.req("from")?, &a.at("from"))?;
    let to = date(a.req("to")?, &a.at("to"))?;
    if from > to {
        return Err(err(&a.at("to"), "`to` is before `from`"));
    }
    Ok(Gen::Date { from, to })
}

fn array(args: &Value, p: &str, cx: &Cx) -> Result<Gen> {
    let a = args_map(args, p, &["of", "min", "max"])?;
    let of = generator(a.req("of")?, &a.at("of"), cx, false)?;
    let min = opt_uint(&a, "min", MAX_ARRAY)?.unwrap_or(0);
    let max = opt_uint(&a, "max", MAX_ARRAY)?.unwrap_or(5);
    if min > max {
        return Err(err(p, format!("max {max} is below min {min}")));
    }
    Ok(Gen::Array {
        of: Box::new(of),
        min,
        max,
    })
}

/// A `ref`: the `_id` of a document of another collection, by position in `cx.collections`.
fn reference(args: &Value, p: &str, cx: &Cx) -> Result<Gen> {
    let a = args_map(args, p, &["collection", "distribution"])?;
    let target_path = a.at("collection");
    let target = string(a.req("collection")?, &target_path)?;
    let Some(target) = cx.collections.iter().position(|c| c == target) else {
        return Err(err(
            &target_path,
            format!(
                "unknown collection {target:?}; expected one of: {}",
                cx.collections.join(", ")
            ),
        ));
    };
    Ok(Gen::Ref {
        target,
        dist: distribution(&a)?,
    })
}

/// A kind's arguments: a map (`null` reads as an empty one, for `objectId:`).
fn args_map<'a>(v: &'a Value, path: &str, allowed: &[&str]) -> Result<Map<'a>> {
    if v.is_null() {
        return Ok(Map {
            path: path.to_owned(),
            entries: Vec::new(),
        });
    }
    Map::new(v, path, allowed)
}

fn opt_int(a: &Map, key: &str) -> Result<Option<i64>> {
    a.get(key)
        .map(|v| int_in(v, &a.at(key), i64::MIN, i64::MAX))
        .transpose()
}

fn opt_uint(a: &Map, key: &str, max: u64) -> Result<Option<u64>> {
    a.get(key)
        .map(|v| uint_in(v, &a.at(key), 0, max))
        .transpose()
}

fn distribution(a: &Map) -> Result<Dist> {
    let Some(v) = a.get("distribution") else {
        return Ok(Dist::Uniform);
    };
    match string(v, &a.at("distribution"))? {
        "uniform" => Ok(Dist::Uniform),
        "zipfian" => Ok(Dist::Zipfian),
        "latest" => Ok(Dist::Latest),
        other => Err(err(
            &a.at("distribution"),
            format!("unknown distribution {other:?}; expected one of: uniform, zipfian, latest"),
        )),
    }
}

fn double(args: &Value, p: &str) -> Result<Gen> {
    let a = args_map(args, p, &["min", "max", "decimals"])?;
    let min = number(a.req("min")?, &a.at("min"))?;
    let max = number(a.req("max")?, &a.at("max"))?;
    let decimals = opt_uint(&a, "decimals", MAX_DECIMALS)?.unwrap_or(2) as u32;
    if min > max {
        return Err(err(&a.at("max"), format!("max {max} is below min {min}")));
    }
    let unit = 10f64.powi(decimals as i32);
    let limit = EXACT_DOUBLE / unit;
    if min.abs() > limit || max.abs() > limit {
        return Err(err(
            p,
            format!("min and max must lie within ±{limit} for {decimals} decimals"),
        ));
    }
    // Bounds in units of the last decimal; a product within 1e-9 of an integer is that integer
    // (5.01 × 100 is 500.99999999999994 in binary).
    let bound = |x: f64, up: bool| {
        let y = x * unit;
        let r = y.round();
        if (y - r).abs() <= 1e-9 * r.abs().max(1.0) {
            r as i64
        } else if up {
            y.ceil() as i64
        } else {
            y.floor() as i64
        }
    };
    let (lo, hi) = (bound(min, true), bound(max, false));
    if lo > hi {
        return Err(err(
            p,
            format!("no value with {decimals} decimals lies between {min} and {max}"),
        ));
    }
    Ok(Gen::Double { lo, hi, decimals })
}

fn choice(args: &Value, p: &str) -> Result<Gen> {
    let a = args_map(args, p, &["values", "weights"])?;
    let values_path = a.at("values");
    let items = list(a.req("values")?, &values_path, 1, MAX_CHOICES, "values")?;
    let values = items
        .iter()
        .enumerate()
        .map(|(i, v)| constant(v, &at_index(&values_path, i)))
        .collect::<Result<Vec<Bson>>>()?;
    let cumulative = match a.get("weights") {
        None => None,
        Some(v) => {
            let wp = a.at("weights");
            let ws = list(v, &wp, values.len(), values.len(), "weights, one per value")?;
            let mut sums = Vec::with_capacity(ws.len());
            let mut total: u64 = 0;
            for (i, w) in ws.iter().enumerate() {
                total = total
                    .checked_add(weight(w, &at_index(&wp, i))?)
                    .ok_or_else(|| err(&wp, "the weights add up to more than 2^64 − 1"))?;
                sums.push(total);
            }
            if total == 0 {
                return Err(err(&wp, "every weight is 0; at least one must be above 0"));
            }
            Some(sums)
        }
    };
    Ok(Gen::Choice { values, cumulative })
}

/// An RFC 3339 date as milliseconds since the epoch.
fn date(v: &Value, path: &str) -> Result<i64> {
    let text = match v {
        Value::String(s) => Some(s.as_str()),
        _ => None,
    };
    text.and_then(|s| DateTime::parse_rfc3339_str(s).ok())
        .map(|d| d.timestamp_millis())
        .ok_or_else(|| {
            err(
                path,
                format!(
                    "expected an RFC 3339 date such as \"2024-01-01T00:00:00Z\", got {}",
                    describe(v)
                ),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gen_of(yaml: &str) -> Result<Gen> {
        let v: Value = serde_yaml::from_str(yaml).expect("yaml");
        let cx = Cx {
            collections: &["a".to_owned()],
            fields: true,
        };
        generator(&v, "x", &cx, true)
    }

    #[test]
    fn double_bounds_are_exact_in_units_of_the_last_decimal() {
        match gen_of("{double: {min: 5.01, max: 1.1e1, decimals: 2}}") {
            Ok(Gen::Double { lo, hi, decimals }) => assert_eq!((lo, hi, decimals), (501, 1100, 2)),
            other => panic!("{other:?}"),
        }
        match gen_of("{double: {min: 0.001, max: 0.999, decimals: 0}}") {
            Err(e) => assert_eq!(
                e.message,
                "no value with 0 decimals lies between 0.001 and 0.999"
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn null_arguments_read_as_empty() {
        assert!(matches!(gen_of("{objectId: }"), Ok(Gen::ObjectId)));
        assert!(matches!(gen_of("{objectId: {}}"), Ok(Gen::ObjectId)));
        assert!(matches!(
            gen_of("{sequence: }"),
            Ok(Gen::Sequence { start: 0 })
        ));
    }
}
