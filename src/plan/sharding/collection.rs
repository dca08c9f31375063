//! Sharding one collection before it is seeded: its split points and chunk owners, and the
//! next step towards them given what `config.collections` and `config.chunks` say.

use std::cmp::Ordering;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use mongodb::bson::{Bson, Document, doc};

use crate::api::{PreSplit, ShardKey, ShardKeyType};

/// Why a collection cannot be sharded as planned.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ShardingError {
    #[error("{namespace} is already sharded on {found}, not on the planned key {planned}")]
    KeyMismatch {
        namespace: String,
        planned: String,
        found: String,
    },
}

/// A split point of a shard key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SplitValue {
    Int(i64),
    Str(String),
    /// A value of the hash space of a hashed key (always a BSON Int64 there).
    Hashed(i64),
}

/// A shard key value as the server orders it, for the types a split point or chunk bound can
/// have here: MinKey < numbers < strings < MaxKey, strings by bytes (no collation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum KeyOrder<'a> {
    Min,
    Num(i64),
    Str(&'a str),
    Max,
}

/// `None` for a type no split point of ours has (doubles, dates, ObjectIds...).
pub(super) fn key_order(b: &Bson) -> Option<KeyOrder<'_>> {
    match b {
        Bson::MinKey => Some(KeyOrder::Min),
        Bson::Int32(v) => Some(KeyOrder::Num(i64::from(*v))),
        Bson::Int64(v) => Some(KeyOrder::Num(*v)),
        Bson::String(s) => Some(KeyOrder::Str(s)),
        Bson::MaxKey => Some(KeyOrder::Max),
        _ => None,
    }
}

impl SplitValue {
    /// An `Int` that fits is sent as Int32, as the generators write such fields.
    pub fn to_bson(&self) -> Bson {
        match self {
            SplitValue::Int(v) => i32::try_from(*v).map_or(Bson::Int64(*v), Bson::Int32),
            SplitValue::Str(s) => Bson::String(s.clone()),
            SplitValue::Hashed(v) => Bson::Int64(*v),
        }
    }

    fn order(&self) -> KeyOrder<'_> {
        match self {
            SplitValue::Int(v) | SplitValue::Hashed(v) => KeyOrder::Num(*v),
            SplitValue::Str(s) => KeyOrder::Str(s),
        }
    }

    /// Whether a chunk bound read from `config.chunks` is this value.
    pub(super) fn is(&self, b: &Bson) -> bool {
        match (self, b) {
            (SplitValue::Int(v), Bson::Int32(x)) => i64::from(*x) == *v,
            (SplitValue::Int(v) | SplitValue::Hashed(v), Bson::Int64(x)) => x == v,
            (SplitValue::Str(s), Bson::String(x)) => x == s,
            _ => false,
        }
    }
}

/// Numbers before strings, as the server orders them; `Int` and `Hashed` never mix in one
/// plan, so their tie order (by variant) only keeps `Ord` consistent with `Eq`.
impl Ord for SplitValue {
    fn cmp(&self, other: &Self) -> Ordering {
        let variant = |v: &SplitValue| match v {
            SplitValue::Int(_) => 0,
            SplitValue::Str(_) => 1,
            SplitValue::Hashed(_) => 2,
        };
        self.order()
            .cmp(&other.order())
            .then_with(|| variant(self).cmp(&variant(other)))
    }
}

impl PartialOrd for SplitValue {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl From<&IntOrString> for SplitValue {
    fn from(v: &IntOrString) -> Self {
        match v {
            IntOrString::Int(i) => SplitValue::Int(i64::from(*i)),
            IntOrString::String(s) => SplitValue::Str(s.clone()),
        }
    }
}

/// The lower bound of a chunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Bound {
    MinKey,
    Value(SplitValue),
}

impl Bound {
    pub fn to_bson(&self) -> Bson {
        match self {
            Bound::MinKey => Bson::MinKey,
            Bound::Value(v) => v.to_bson(),
        }
    }
}

/// How one collection is sharded: chunk k is `[points[k-1], points[k])` (MinKey below the
/// first point, MaxKey above the last) and must live on shard `owners[k]`.
#[derive(Clone, Debug, PartialEq)]
pub struct CollectionPlan {
    pub database: String,
    pub collection: String,
    pub field: String,
    pub hashed: bool,
    /// Ascending.
    pub points: Vec<SplitValue>,
    /// `points.len() + 1` shard ids, or none when the plan leaves placement to the server
    /// (no `preSplit`, or no shards): its single chunk then stays on the primary shard.
    pub owners: Vec<String>,
}

impl CollectionPlan {
    /// `database.collection`.
    pub fn namespace(&self) -> String {
        format!("{}.{}", self.database, self.collection)
    }

    /// The shard key document: `{field: "hashed"}` or `{field: 1}`.
    pub fn key(&self) -> Document {
        if self.hashed {
            doc! {&self.field: "hashed"}
        } else {
            doc! {&self.field: 1}
        }
    }

    /// Whether `key` (from `config.collections`) is this plan's key. The server may store the
    /// range direction as any numeric type.
    fn has_key(&self, key: &Document) -> bool {
        if key.len() != 1 {
            return false;
        }
        match key.get(&self.field) {
            Some(Bson::String(s)) => self.hashed && s == "hashed",
            Some(Bson::Int32(1) | Bson::Int64(1)) => !self.hashed,
            Some(Bson::Double(d)) => !self.hashed && *d == 1.0,
            _ => false,
        }
    }

    /// The index of the planned chunk holding the key value `min`, if it has a type of ours.
    fn planned_chunk(&self, min: &Bson) -> Option<usize> {
        let min = key_order(min)?;
        Some(self.points.iter().take_while(|p| p.order() <= min).count())
    }

    fn bound(&self, min: &Bson) -> Option<Bound> {
        match min {
            Bson::MinKey => Some(Bound::MinKey),
            Bson::Int32(v) => Some(Bound::Value(SplitValue::Int(i64::from(*v)))),
            Bson::Int64(v) if self.hashed => Some(Bound::Value(SplitValue::Hashed(*v))),
            Bson::Int64(v) => Some(Bound::Value(SplitValue::Int(*v))),
            Bson::String(s) => Some(Bound::Value(SplitValue::Str(s.clone()))),
            _ => None,
        }
    }
}

/// The `chunks - 1` boundaries that cut the whole Int64 hash space into `chunks` equal
/// slices: boundary j is `i64::MIN + j × (2^64 / chunks)`.
pub fn hashed_points(chunks: u32) -> Vec<i64> {
    if chunks < 2 {
        return Vec::new();
    }
    let step = (1i128 << 64) / i128::from(chunks);
    (1..chunks)
        .map(|j| {
            let b = i128::from(i64::MIN) + i128::from(j) * step;
            i64::try_from(b).expect("j < chunks keeps the boundary below 2^63")
        })
        .collect()
}

/// Split points cutting `keys` into `chunks` chunks of about as many distinct keys: boundary
/// j is the key at index `j × len / chunks` of the sorted distinct keys. The smallest key is
/// never a boundary (it would leave the first chunk empty), so fewer distinct keys than
/// chunks give fewer points.
pub fn quantile_points<T: Ord + Clone>(mut keys: Vec<T>, chunks: u32) -> Vec<T> {
    keys.sort_unstable();
    keys.dedup();
    let len = keys.len() as u128;
    let mut points: Vec<T> = Vec::new();
    let mut last = 0usize;
    for j in 1..chunks {
        let i =
            usize::try_from(u128::from(j) * len / u128::from(chunks)).expect("below keys.len()");
        if i > last {
            points.push(keys[i].clone());
            last = i;
        }
    }
    points
}

/// The plan of sharding `database.collection` on `key` over `shards` (ids, in the order the
/// chunks are dealt round-robin). `range_keys` gives the keys the generator seeds; it is
/// called only for a range key split by `chunksPerShard`. A hashed key ignores `points`
/// (validation rejects them there).
pub fn collection_plan(
    database: &str,
    collection: &str,
    key: &ShardKey,
    pre_split: Option<&PreSplit>,
    shards: &[String],
    range_keys: impl FnOnce() -> Vec<SplitValue>,
) -> CollectionPlan {
    let hashed = key.kind == ShardKeyType::Hashed;
    let chunks = |p: &PreSplit| {
        let n = u32::try_from(shards.len()).unwrap_or(u32::MAX);
        p.chunks_per_shard().saturating_mul(n)
    };
    let points: Vec<SplitValue> = match pre_split {
        _ if shards.is_empty() => Vec::new(),
        None => Vec::new(),
        Some(p) if hashed => hashed_points(chunks(p))
            .into_iter()
            .map(SplitValue::Hashed)
            .collect(),
        Some(p) if !p.points.is_empty() => {
            // Validation asks for ascending points; sorting keeps the chunk model sound anyway.
            let mut points: Vec<SplitValue> = p.points.iter().map(SplitValue::from).collect();
            points.sort();
            points.dedup();
            points
        }
        Some(p) => quantile_points(range_keys(), chunks(p)),
    };
    let owners = if pre_split.is_none() || shards.is_empty() {
        Vec::new()
    } else {
        (0..=points.len())
            .map(|k| shards[k % shards.len()].clone())
            .collect()
    };
    CollectionPlan {
        database: database.to_owned(),
        collection: collection.to_owned(),
        field: key.field.clone(),
        hashed,
        points,
        owners,
    }
}

/// One chunk as read from `config.chunks`.
#[derive(Clone, Debug, PartialEq)]
pub struct Chunk {
    pub min: Bson,
    pub max: Bson,
    pub shard: String,
}

/// What the runner saw of a collection just before choosing its next step.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct CollectionSeen {
    /// `config.collections`' `key` when the namespace is sharded.
    pub sharded_key: Option<Document>,
    /// Sorted by `min`.
    pub chunks: Vec<Chunk>,
}

/// The next thing to do to shard a collection as planned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CollectionStep {
    ShardCollection,
    Split(SplitValue),
    MoveRange { min: Bound, to: String },
    Done,
}

/// The first unfinished step of `plan`, given what was seen of the collection: shard it, split
/// at every planned point no chunk starts at yet, then move every chunk not on the owner of
/// the planned chunk it lies in. Placing chunks by the planned range that holds them (rather
/// than by position) also places chunks the server made on its own, e.g. a hashed key's
/// initial ones.
pub fn next_collection_step(
    plan: &CollectionPlan,
    seen: &CollectionSeen,
) -> Result<CollectionStep, ShardingError> {
    let Some(key) = &seen.sharded_key else {
        return Ok(CollectionStep::ShardCollection);
    };
    if !plan.has_key(key) {
        return Err(ShardingError::KeyMismatch {
            namespace: plan.namespace(),
            planned: plan.key().to_string(),
            found: key.to_string(),
        });
    }
    if let Some(p) = plan
        .points
        .iter()
        .find(|p| !seen.chunks.iter().any(|c| p.is(&c.min)))
    {
        return Ok(CollectionStep::Split(p.clone()));
    }
    for chunk in &seen.chunks {
        // A bound of a foreign type cannot be placed against our points; leave it.
        let Some(owner) = plan
            .planned_chunk(&chunk.min)
            .and_then(|k| plan.owners.get(k))
        else {
            continue;
        };
        if chunk.shard != *owner
            && let Some(min) = plan.bound(&chunk.min)
        {
            return Ok(CollectionStep::MoveRange {
                min,
                to: owner.clone(),
            });
        }
    }
    Ok(CollectionStep::Done)
}

impl CollectionStep {
    /// The admin command of this step, sent through a mongos; `None` for `Done`.
    pub fn command(&self, plan: &CollectionPlan) -> Option<Document> {
        let ns = plan.namespace();
        match self {
            CollectionStep::ShardCollection => {
                Some(doc! {"shardCollection": ns, "key": plan.key()})
            }
            CollectionStep::Split(p) => {
                Some(doc! {"split": ns, "middle": {&plan.field: p.to_bson()}})
            }
            CollectionStep::MoveRange { min, to } => Some(doc! {
                "moveRange": ns,
                "min": {&plan.field: min.to_bson()},
                "toShard": to,
            }),
            CollectionStep::Done => None,
        }
    }
}
