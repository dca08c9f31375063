//! Values of generators (§4): one [`Gen`] (defined in `model`) draws everything it needs from
//! one stream, depth first. Ranges use `rng::scale` on one draw each, so every value is exact
//! integer arithmetic except the zipfian rank (`zipf`), which follows YCSB's floating-point
//! formula.

use mongodb::bson::oid::ObjectId;
use mongodb::bson::{Bson, DateTime, Document};
use serde_json::{Value as Json, json};

use super::model::{Collection, Dist, Gen};
use super::zipf::Zipf;
use crate::workload::rng::{Stream, scale};

/// What a generator's value depends on besides its stream.
pub(super) struct Env<'a> {
    pub collections: &'a [Collection],
    /// The document number (`sequence`); 0 in templates, where `sequence` is refused.
    pub seq: u64,
    pub scope: Scope<'a>,
}

/// Where a `ref` points (§4): a seeded document sees the target's documents that exist at any
/// size seeding it; a template sees all seeded documents of the cell.
pub(super) enum Scope<'a> {
    Document {
        collection: usize,
    },
    Cell {
        counts: &'a [u64],
        /// Ranks over each collection's seeded documents.
        zipfs: &'a [Zipf],
    },
}

impl Dist {
    /// An offset in `[0, span]`: uniform, or a zipfian rank from the bottom (`zipfian`) or the
    /// top (`latest`) of the range, `zipf` holding the ranks of its `span + 1` values.
    fn offset(self, s: &mut Stream, span: u64, zipf: &Zipf) -> u64 {
        match self {
            Dist::Uniform => scale(s.next_u64(), 0, span),
            Dist::Zipfian => zipf.rank(s.next_u64()),
            Dist::Latest => span - zipf.rank(s.next_u64()),
        }
    }
}

impl Gen {
    pub(super) fn value(&self, s: &mut Stream, env: &Env) -> Bson {
        match self {
            Gen::Const(value) => value.clone(),
            Gen::Sequence { start } => Bson::Int64(start.wrapping_add(env.seq as i64)),
            Gen::Int {
                min,
                max,
                dist,
                zipf,
            } => {
                let offset = dist.offset(s, max.wrapping_sub(*min) as u64, zipf);
                let value = min.wrapping_add(offset as i64);
                // As a literal integer is: int32 when the whole range fits in 32 bits.
                match (i32::try_from(*min), i32::try_from(*max)) {
                    (Ok(_), Ok(_)) => Bson::Int32(value as i32),
                    _ => Bson::Int64(value),
                }
            }
            Gen::Double { lo, hi, decimals } => {
                let k = lo.wrapping_add(scale(s.next_u64(), 0, hi.wrapping_sub(*lo) as u64) as i64);
                Bson::Double(k as f64 / 10f64.powi(*decimals as i32))
            }
            Gen::Str {
                min,
                max,
                dist,
                zipf,
            } => {
                let len = (min + dist.offset(s, *max - *min, zipf)) as usize;
                let text: String = (0..len)
                    .map(|_| char::from(b'a' + scale(s.next_u64(), 0, 25) as u8))
                    .collect();
                Bson::String(text)
            }
            Gen::Choice { values, cumulative } => {
                let index = match cumulative {
                    None => scale(s.next_u64(), 0, values.len() as u64 - 1) as usize,
                    Some(sums) => {
                        let total = sums.last().copied().unwrap_or(1);
                        let r = scale(s.next_u64(), 0, total - 1);
                        sums.partition_point(|&sum| sum <= r)
                    }
                };
                values[index.min(values.len() - 1)].clone()
            }
            Gen::Bool { probability } => {
                Bson::Boolean(s.event(crate::workload::rng::threshold(*probability)))
            }
            Gen::Date { from, to } => {
                let ms = scale(s.next_u64(), 0, to.wrapping_sub(*from) as u64);
                Bson::DateTime(DateTime::from_millis(from.wrapping_add(ms as i64)))
            }
            Gen::ObjectId => {
                let (a, b) = (s.next_u64(), s.next_u64());
                let mut bytes = [0u8; 12];
                bytes[..8].copy_from_slice(&a.to_be_bytes());
                bytes[8..].copy_from_slice(&b.to_be_bytes()[..4]);
                Bson::ObjectId(ObjectId::from_bytes(bytes))
            }
            Gen::Array { of, min, max } => {
                let len = scale(s.next_u64(), *min, *max);
                Bson::Array((0..len).map(|_| of.value(s, env)).collect())
            }
            Gen::Document(fields) => {
                let mut d = Document::new();
                for (name, generator) in fields {
                    d.insert(name.clone(), generator.value(s, env));
                }
                Bson::Document(d)
            }
            Gen::Ref { target, dist } => {
                let (n, zipf) = ref_items(*target, *dist, env);
                let rank = match dist {
                    Dist::Uniform => scale(s.next_u64(), 0, n - 1),
                    Dist::Zipfian => zipf.rank(s.next_u64()),
                    Dist::Latest => n - 1 - zipf.rank(s.next_u64()),
                };
                let start = env.collections.get(*target).map_or(0, |c| c.id_start);
                Bson::Int64(start.wrapping_add(rank as i64))
            }
        }
    }

    /// An upper bound of the value's BSON size (without type byte and name), to refuse
    /// documents that could outgrow 16 MiB before any is generated.
    pub(super) fn max_size(&self) -> u64 {
        match self {
            Gen::Const(value) => bson_value_len(value),
            Gen::Sequence { .. }
            | Gen::Int { .. }
            | Gen::Double { .. }
            | Gen::Date { .. }
            | Gen::Ref { .. } => 8,
            Gen::Str { max, .. } => 5 + max,
            Gen::Choice { values, .. } => values.iter().map(bson_value_len).max().unwrap_or(0),
            Gen::Bool { .. } => 1,
            Gen::ObjectId => 12,
            Gen::Array { of, max, .. } => {
                let item = of.max_size();
                (0..*max).fold(5u64, |sum, i| {
                    sum.saturating_add(2 + i.to_string().len() as u64)
                        .saturating_add(item)
                })
            }
            Gen::Document(fields) => fields.iter().fold(5u64, |sum, (name, g)| {
                sum.saturating_add(2 + name.len() as u64)
                    .saturating_add(g.max_size())
            }),
        }
    }

    /// The canonical JSON of what this generator produces, defaults filled in (dataset
    /// identity).
    pub(super) fn to_json(&self, collections: &[String]) -> Json {
        match self {
            Gen::Const(value) => json!({ "constant": value.clone().into_canonical_extjson() }),
            Gen::Sequence { start } => json!({ "sequence": { "start": start } }),
            Gen::Int { min, max, dist, .. } => {
                json!({ "int": { "min": min, "max": max, "distribution": dist.name() } })
            }
            Gen::Double { lo, hi, decimals } => {
                json!({ "double": { "lo": lo, "hi": hi, "decimals": decimals } })
            }
            Gen::Str { min, max, dist, .. } => {
                json!({ "string": { "min": min, "max": max, "distribution": dist.name() } })
            }
            Gen::Choice { values, cumulative } => {
                let values: Vec<Json> = values
                    .iter()
                    .map(|v| v.clone().into_canonical_extjson())
                    .collect();
                json!({ "choice": { "values": values, "cumulative": cumulative } })
            }
            Gen::Bool { probability } => json!({ "bool": { "probability": probability } }),
            Gen::Date { from, to } => json!({ "date": { "from": from, "to": to } }),
            Gen::ObjectId => json!({ "objectId": {} }),
            Gen::Array { of, min, max } => {
                json!({ "array": { "of": of.to_json(collections), "min": min, "max": max } })
            }
            Gen::Document(fields) => json!({ "document": fields_json(fields, collections) }),
            Gen::Ref { target, dist } => json!({ "ref": {
                "collection": collections.get(*target),
                "distribution": dist.name(),
            } }),
        }
    }
}

/// Fields in order as a JSON object of their canonical generators.
pub(super) fn fields_json(fields: &[(String, Gen)], collections: &[String]) -> Json {
    Json::Object(
        fields
            .iter()
            .map(|(name, g)| (name.clone(), g.to_json(collections)))
            .collect(),
    )
}

/// The items a `ref` picks among and their zipfian ranks (§4).
fn ref_items<'a>(target: usize, dist: Dist, env: &'a Env) -> (u64, std::borrow::Cow<'a, Zipf>) {
    use std::borrow::Cow;
    match &env.scope {
        Scope::Document { collection } => {
            let share = |c: usize| env.collections.get(c).map_or(1, |c| c.share.max(1));
            let n = (u128::from(env.seq) + 1) * u128::from(share(target))
                / u128::from(share(*collection));
            let n = u64::try_from(n).unwrap_or(u64::MAX).max(1);
            let zipf = if dist == Dist::Uniform {
                Zipf::new(1)
            } else {
                Zipf::new(n)
            };
            (n, Cow::Owned(zipf))
        }
        Scope::Cell { counts, zipfs } => {
            let n = counts.get(target).copied().unwrap_or(0).max(1);
            match zipfs.get(target) {
                Some(zipf) if zipf.n == n => (n, Cow::Borrowed(zipf)),
                _ => (n, Cow::Owned(Zipf::new(n))),
            }
        }
    }
}

/// The BSON size of one value (without type byte and name).
pub(super) fn bson_value_len(value: &Bson) -> u64 {
    let mut d = Document::new();
    d.insert("", value.clone());
    // {"": v} is 4 (length) + 1 (type) + 1 (empty name) + v + 1 (terminator).
    (crate::workload::bson_len(&d) as u64).saturating_sub(7)
}
