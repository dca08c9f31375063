//! How a collection's documents and chunks lie over the shards, judged after a measured
//! phase: skew over the limit, chunks moved during it.

use std::fmt;

use mongodb::bson::Bson;

use super::collection::{Chunk, key_order};
use crate::result::ShardShare;

/// How far the fullest shard is above the mean, in percent of the mean documents per shard;
/// 0 with no shard or no document.
pub fn skew_percent(shares: &[ShardShare]) -> f64 {
    let total: u128 = shares.iter().map(|s| u128::from(s.documents)).sum();
    let max = shares
        .iter()
        .map(|s| u128::from(s.documents))
        .max()
        .unwrap_or(0);
    if total == 0 {
        return 0.0;
    }
    // (max / mean − 1) × 100 with mean = total / n, in integers as far as possible so that
    // round shares give round percents (600/400 is 20.0, not 19.999...).
    let n = shares.len() as u128;
    (max * n - total) as f64 * 100.0 / total as f64
}

fn same_bound(a: &Bson, b: &Bson) -> bool {
    match (key_order(a), key_order(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// Chunks (matched by `min`) whose shard changed between `before` and `after`, plus chunks on
/// one side only (a split or merge happened there).
pub fn moved_chunks(before: &[Chunk], after: &[Chunk]) -> u64 {
    let find = |side: &[Chunk], c: &Chunk| -> Option<String> {
        side.iter()
            .find(|o| same_bound(&o.min, &c.min))
            .map(|o| o.shard.clone())
    };
    let changed = before
        .iter()
        .filter(|c| find(after, c).is_none_or(|shard| shard != c.shard))
        .count();
    let added = after.iter().filter(|c| find(before, c).is_none()).count();
    (changed + added) as u64
}

/// Something wrong with how a cell's data sat on the shards.
#[derive(Clone, Debug, PartialEq)]
pub enum DistributionFlag {
    Skewed { percent: f64, limit: f64 },
    ChunksMoved { moved: u64 },
}

impl fmt::Display for DistributionFlag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DistributionFlag::Skewed { percent, limit } => {
                write!(
                    f,
                    "documents skewed {percent:.1}% over shards (limit {limit}%)"
                )
            }
            DistributionFlag::ChunksMoved { moved: 1 } => {
                f.write_str("the balancer moved 1 chunk during the measurement")
            }
            DistributionFlag::ChunksMoved { moved } => {
                write!(
                    f,
                    "the balancer moved {moved} chunks during the measurement"
                )
            }
        }
    }
}

/// The flags of a measured phase: documents skewed above `max_skew_percent` after it, and
/// chunks moved during it.
pub fn judge_distribution(
    after: &[ShardShare],
    before_chunks: &[Chunk],
    after_chunks: &[Chunk],
    max_skew_percent: f64,
) -> Vec<DistributionFlag> {
    let mut flags = Vec::new();
    let percent = skew_percent(after);
    if percent > max_skew_percent {
        flags.push(DistributionFlag::Skewed {
            percent,
            limit: max_skew_percent,
        });
    }
    let moved = moved_chunks(before_chunks, after_chunks);
    if moved > 0 {
        flags.push(DistributionFlag::ChunksMoved { moved });
    }
    flags
}
