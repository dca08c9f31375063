//! The checked workload's plain data (§3–§6): collections, indexes, shard keys, phases,
//! operation faces and generators, the format's version and the key tags of its streams. Near
//! the bottom of the folder (it uses `zipf` only): the parsers build these values, the
//! generators and the workload read them.

use std::time::Duration;

use mongodb::bson::{Bson, Document};

use super::zipf::Zipf;

/// The version string of this workload format; part of every identity it produces.
pub const VERSION: &str = "custom/v1";

/// First key tag of the documents of collection c (`16 + c`, §4).
pub(super) const TAG_DOCUMENTS: u64 = 16;
/// First key tag of the workers of phase p (`32 + p`, §6).
pub(super) const TAG_PHASES: u64 = 32;
/// Key tag of the explain samples: above every collection and phase tag.
pub(super) const TAG_EXPLAIN: u64 = 48;

/// One collection of the dataset (§3).
#[derive(Debug, Clone)]
pub struct Collection {
    pub name: String,
    /// Relative number of seeded documents.
    pub share: u64,
    /// Used on sharded targets only.
    pub shard_key: Option<ShardKey>,
    /// Field → generator in document order; `_id` (a sequence) always first.
    pub(super) fields: Vec<(String, Gen)>,
    pub(super) id_start: i64,
    pub(super) indexes: Vec<Index>,
}

/// A collection's shard key (§3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardKey {
    pub field: String,
    /// `type: hashed` (else `range`).
    pub hashed: bool,
}

/// One index of a collection, its name resolved.
#[derive(Debug, Clone)]
pub(super) struct Index {
    pub(super) keys: Document,
    pub(super) name: String,
    pub(super) unique: Option<bool>,
    pub(super) sparse: Option<bool>,
    pub(super) expire_after_seconds: Option<i32>,
    pub(super) partial_filter: Option<Document>,
}

/// One phase (§6); the last one is measured, one before it is the warm-up.
#[derive(Debug, Clone, PartialEq)]
pub struct CustomPhase {
    pub name: String,
    pub length: PhaseLength,
    /// `None`: the benchmark's `spec.workload.workers`, else 16.
    pub workers: Option<u32>,
    /// `None`: the benchmark's `spec.workload.targetOpsPerSecond`; 0 = closed loop.
    pub target_ops_per_second: Option<u64>,
    /// Weight of each operation in this phase's mix, in operation order.
    pub(super) weights: Vec<u64>,
}

/// How long a phase runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhaseLength {
    Duration(Duration),
    /// Operations in all (the caller splits them among workers).
    Operations(u64),
}

/// An operation's face: what it is called and measured as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperationSpec {
    pub name: String,
    /// The histogram it is measured in (interned: it becomes `Operation::label`).
    pub class: &'static str,
    /// `find`, `insert`, `update`, `delete`, `aggregate`, `findAndModify` or `transaction`.
    pub kind: &'static str,
    /// Its default weight in a phase's mix.
    pub weight: u64,
}

impl CustomPhase {
    /// Weight of each operation in this phase's mix, in operation order.
    pub fn weights(&self) -> &[u64] {
        &self.weights
    }
}

impl Collection {
    /// The `_id` of seeded document 0 (`_id` of document i is `id_start + i`).
    pub fn id_start(&self) -> i64 {
        self.id_start
    }

    /// The top-level field names in document order, `_id` first.
    pub fn field_names(&self) -> impl Iterator<Item = &str> {
        self.fields.iter().map(|(name, _)| name.as_str())
    }
}

/// How an `int` or `ref` picks within its range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Dist {
    Uniform,
    /// Rank 0 (the minimum) most popular.
    Zipfian,
    /// Rank 0 is the maximum.
    Latest,
}

impl Dist {
    pub(super) fn name(self) -> &'static str {
        match self {
            Dist::Uniform => "uniform",
            Dist::Zipfian => "zipfian",
            Dist::Latest => "latest",
        }
    }
}

/// A checked generator; what it draws is in `generator`.
#[derive(Debug, Clone)]
pub(super) enum Gen {
    Const(Bson),
    Sequence {
        start: i64,
    },
    Int {
        min: i64,
        max: i64,
        dist: Dist,
        /// Ranks over the range, for zipfian and latest.
        zipf: Zipf,
    },
    /// `k / 10^decimals` for k uniform in [lo, hi]: uniform over the rounded values.
    Double {
        lo: i64,
        hi: i64,
        decimals: u32,
    },
    /// Lowercase letters, the length drawn from [min, max] as `Int` draws its values.
    Str {
        min: u64,
        max: u64,
        dist: Dist,
        zipf: Zipf,
    },
    Choice {
        values: Vec<Bson>,
        /// Running sums of the weights; `None` = uniform.
        cumulative: Option<Vec<u64>>,
    },
    Bool {
        probability: f64,
    },
    /// Milliseconds since the epoch, inclusive.
    Date {
        from: i64,
        to: i64,
    },
    ObjectId,
    Array {
        of: Box<Gen>,
        min: u64,
        max: u64,
    },
    Document(Vec<(String, Gen)>),
    Ref {
        target: usize,
        dist: Dist,
    },
}
