//! How a fresh collection of a sharded target is sharded before it is seeded: the plan of
//! `spec.workload.sharding` for the workload's namespace, with the cluster's shards and, for a
//! range key split by `chunksPerShard`, the keys the generator seeds at this size.

use std::time::Duration;

use mongodb::bson::{Bson, Document};

use crate::api::{PreSplit, ShardKey, ShardKeyType};
use crate::plan::WorkloadPlan;
use crate::plan::custom::CustomPlan;
use crate::plan::sharding::{CollectionPlan, SplitValue, collection_plan};
use crate::runner::server::ConnectedTarget;
use crate::runner::server::sharding::{ShardingIoError, list_shards};
use crate::workload::flights::Flight;
use crate::workload::flights::ids::seeded_flight_id;
use crate::workload::ycsb::{Properties, key_name};

/// Documents sampled, evenly spaced, for the quantiles of a range key: split points within a
/// fraction of a per cent of the exact ones, at a cost independent of the dataset size.
const SAMPLE: u64 = 100_000;

/// The plan of `plan`'s collection `database.collection` on `target` at `documents`, or
/// `None` when the target is not sharded or the workload leaves this collection unsharded.
pub async fn sharding_plan(
    target: &ConnectedTarget,
    plan: &WorkloadPlan,
    (database, collection): (&str, &str),
    documents: u64,
    limit: Duration,
) -> Result<Option<CollectionPlan>, ShardingIoError> {
    let Some(sharding) = &target.sharding else {
        return Ok(None);
    };
    let Some(wanted) = sharding
        .workload
        .collections
        .iter()
        .find(|c| c.collection == collection)
    else {
        return Ok(None);
    };
    let shards = list_shards(&target.client, limit).await?;
    let field = wanted.shard_key.field.clone();
    Ok(Some(collection_plan(
        database,
        collection,
        &wanted.shard_key,
        wanted.pre_split.as_ref(),
        &shards,
        || range_keys(plan, &field, documents),
    )))
}

/// Chunks per shard a custom workload's sharded collection is pre-split into
/// (docs/specs/custom.md §3).
const CUSTOM_CHUNKS_PER_SHARD: u32 = 2;

/// The plan of collection `c` of a custom workload on `target` for `count` seeded documents,
/// or `None` when the target is not sharded or the collection has no shard key.
pub async fn custom_plan(
    target: &ConnectedTarget,
    plan: &CustomPlan,
    c: usize,
    count: u64,
    limit: Duration,
) -> Result<Option<CollectionPlan>, ShardingIoError> {
    let collection = &plan.workload.collections()[c];
    let (Some(_), Some(key)) = (&target.sharding, &collection.shard_key) else {
        return Ok(None);
    };
    let shards = list_shards(&target.client, limit).await?;
    let key = ShardKey {
        field: key.field.clone(),
        kind: if key.hashed {
            ShardKeyType::Hashed
        } else {
            ShardKeyType::Range
        },
    };
    let split = PreSplit {
        chunks_per_shard: Some(CUSTOM_CHUNKS_PER_SHARD),
        points: Vec::new(),
    };
    Ok(Some(collection_plan(
        plan.workload.database(),
        &collection.name,
        &key,
        Some(&split),
        &shards,
        || {
            sample(count)
                .filter_map(|i| {
                    let doc = plan.workload.document(plan.dataset_seed, c, i);
                    split_value(dotted(&doc, &key.field)?)
                })
                .collect()
        },
    )))
}

/// A seeded value as a split point: integers and strings only.
fn split_value(value: &Bson) -> Option<SplitValue> {
    match value {
        Bson::Int32(v) => Some(SplitValue::Int(i64::from(*v))),
        Bson::Int64(v) => Some(SplitValue::Int(*v)),
        Bson::String(s) => Some(SplitValue::Str(s.clone())),
        _ => None,
    }
}

/// The seqs (record numbers) sampled from `documents`.
fn sample(documents: u64) -> impl Iterator<Item = u64> {
    let n = documents.min(SAMPLE);
    (0..n).map(move |i| i * documents / n.max(1))
}

/// Values of `field` the generator seeds, sampled; fields that are neither integers nor
/// strings (validation refuses a range pre-split on them) give none.
pub fn range_keys(plan: &WorkloadPlan, field: &str, documents: u64) -> Vec<SplitValue> {
    match plan {
        WorkloadPlan::Flights(params) if field == "flight_id" => sample(documents)
            .map(|seq| SplitValue::Int(i64::from(seeded_flight_id(seq))))
            .collect(),
        WorkloadPlan::Flights(params) => sample(documents)
            .filter_map(|seq| {
                let doc =
                    Flight::generate(params.dataset_seed, seq, seeded_flight_id(seq)).to_document();
                split_value(dotted(&doc, field)?)
            })
            .collect(),
        WorkloadPlan::Ycsb { raw, .. } if field == "_id" => {
            let Ok(props) = Properties::from_raw(raw) else {
                return Vec::new();
            };
            sample(documents)
                .map(|n| SplitValue::Str(key_name(n, props.hashed_keys, props.zero_padding)))
                .collect()
        }
        WorkloadPlan::Ycsb { .. } | WorkloadPlan::Custom(_) => Vec::new(),
    }
}

/// The value at a dotted path (`equipment.plane_type`).
fn dotted<'a>(doc: &'a Document, path: &str) -> Option<&'a Bson> {
    let (head, rest) = match path.split_once('.') {
        Some((head, rest)) => (head, Some(rest)),
        None => (path, None),
    };
    match (doc.get(head)?, rest) {
        (value, None) => Some(value),
        (Bson::Document(inner), Some(rest)) => dotted(inner, rest),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::flights::Params;
    use crate::workload::ycsb::RawProperties;

    #[test]
    fn range_keys_are_the_seeded_values_sampled_evenly() {
        let flights = WorkloadPlan::Flights(Box::<Params>::default());
        let ids: Vec<SplitValue> = (0..5)
            .map(|seq| SplitValue::Int(i64::from(seeded_flight_id(seq))))
            .collect();
        assert_eq!(range_keys(&flights, "flight_id", 5), ids);
        // Past the sample size, every (documents / SAMPLE)-th document.
        let many = range_keys(&flights, "flight_id", 3 * SAMPLE);
        assert_eq!(many.len() as u64, SAMPLE);
        assert_eq!(many[1], SplitValue::Int(i64::from(seeded_flight_id(3))));
        // Another field is read from the generated documents, nested ones by their path.
        let doc = Flight::generate(1, 2, seeded_flight_id(2)).to_document();
        let origin = doc.get_str("origin").unwrap().to_owned();
        assert_eq!(
            range_keys(&flights, "origin", 3)[2],
            SplitValue::Str(origin)
        );
        let plane = doc
            .get_document("equipment")
            .unwrap()
            .get_str("plane_type")
            .unwrap();
        assert_eq!(
            range_keys(&flights, "equipment.plane_type", 3)[2],
            SplitValue::Str(plane.to_owned())
        );
        // A date has no split value: nothing (validation refuses the spec before).
        assert!(range_keys(&flights, "flight_date", 3).is_empty());
        let ycsb = WorkloadPlan::Ycsb {
            raw: RawProperties::preset("workloada").unwrap(),
            seed: 1,
        };
        let props = Properties::from_raw(&RawProperties::preset("workloada").unwrap()).unwrap();
        assert_eq!(
            range_keys(&ycsb, "_id", 2),
            [
                SplitValue::Str(key_name(0, props.hashed_keys, props.zero_padding)),
                SplitValue::Str(key_name(1, props.hashed_keys, props.zero_padding)),
            ]
        );
        assert!(range_keys(&ycsb, "field0", 2).is_empty());
    }
}
