//! Sharded targets in pure terms: the initiation sequence of a cluster the operator provisions,
//! the split points and chunk placement of each sharded collection, and the checks of how
//! documents and chunks ended up over the shards. No I/O: the runner reads the cluster, asks
//! for the next step here, sends its command and reads again, so a restarted runner resumes
//! at the first unfinished step: `cluster.rs` brings a provisioned cluster up,
//! `collection.rs` shards one collection, `distribution.rs` judges where the data ended up.

mod cluster;
mod collection;
mod distribution;

pub use cluster::{
    ClusterLayout, ClusterStep, Observed, SetLayout, balancer_command, configdb, next_cluster_step,
    replica_set_config,
};
pub use collection::{
    Bound, Chunk, CollectionPlan, CollectionSeen, CollectionStep, ShardingError, SplitValue,
    collection_plan, hashed_points, next_collection_step, quantile_points,
};
pub use distribution::{DistributionFlag, judge_distribution, moved_chunks, skew_percent};

#[cfg(test)]
mod tests_cluster;
#[cfg(test)]
mod tests_collection;
#[cfg(test)]
mod tests_distribution;
#[cfg(test)]
mod tests_plans;
