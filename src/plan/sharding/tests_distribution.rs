//! Distribution checks.

use mongodb::bson::Bson;

use super::tests_collection::chunk;
use super::*;
use crate::result::ShardShare;

fn shares(documents: &[u64]) -> Vec<ShardShare> {
    documents
        .iter()
        .enumerate()
        .map(|(i, &d)| ShardShare {
            shard: format!("x-shard-{i}"),
            documents: d,
            bytes: d.saturating_mul(100),
            chunks: 2,
        })
        .collect()
}

#[test]
fn skew_is_the_fullest_shard_over_the_mean() {
    assert_eq!(skew_percent(&shares(&[600, 400])), 20.0);
    assert_eq!(skew_percent(&shares(&[1000, 0])), 100.0);
    assert_eq!(skew_percent(&shares(&[100, 100, 100])), 0.0);
    assert_eq!(skew_percent(&shares(&[200, 100, 0])), 100.0);
    assert_eq!(skew_percent(&shares(&[1412, 1000, 588])), 41.2);
    assert_eq!(skew_percent(&shares(&[5])), 0.0);
    assert_eq!(skew_percent(&shares(&[0, 0])), 0.0);
    assert_eq!(skew_percent(&[]), 0.0);
    assert_eq!(skew_percent(&shares(&[u64::MAX, 0])), 100.0);
}

fn spread(bounds: &[(Bson, &str)]) -> Vec<Chunk> {
    bounds
        .iter()
        .enumerate()
        .map(|(i, (min, shard))| {
            let max = bounds.get(i + 1).map_or(Bson::MaxKey, |(b, _)| b.clone());
            chunk(min.clone(), max, shard)
        })
        .collect()
}

#[test]
fn moved_chunks_counts_owner_changes_and_one_sided_chunks() {
    let before = spread(&[
        (Bson::MinKey, "a"),
        (Bson::Int64(0), "b"),
        (Bson::Int64(10), "a"),
    ]);
    assert_eq!(moved_chunks(&before, &before), 0);
    assert_eq!(moved_chunks(&[], &[]), 0);
    assert_eq!(moved_chunks(&[], &before), 3);
    assert_eq!(moved_chunks(&before, &[]), 3);
    let one_moved = spread(&[
        (Bson::MinKey, "a"),
        (Bson::Int64(0), "a"),
        (Bson::Int64(10), "a"),
    ]);
    assert_eq!(moved_chunks(&before, &one_moved), 1);
    let split = spread(&[
        (Bson::MinKey, "a"),
        (Bson::Int64(0), "b"),
        (Bson::Int64(5), "b"),
        (Bson::Int64(10), "a"),
    ]);
    assert_eq!(moved_chunks(&before, &split), 1);
    let merged_and_moved = spread(&[(Bson::MinKey, "b"), (Bson::Int64(10), "a")]);
    assert_eq!(moved_chunks(&before, &merged_and_moved), 2);
    // The same bound read at another integer width is the same chunk.
    let widths = spread(&[
        (Bson::MinKey, "a"),
        (Bson::Int32(0), "b"),
        (Bson::Int32(10), "a"),
    ]);
    assert_eq!(moved_chunks(&before, &widths), 0);
}

#[test]
fn distribution_flags_skew_above_the_limit_and_any_migration() {
    let before = spread(&[(Bson::MinKey, "a"), (Bson::Int64(0), "b")]);
    let after = spread(&[(Bson::MinKey, "b"), (Bson::Int64(0), "a")]);
    assert_eq!(
        judge_distribution(&shares(&[1412, 1000, 588]), &before, &after, 25.0),
        [
            DistributionFlag::Skewed {
                percent: 41.2,
                limit: 25.0
            },
            DistributionFlag::ChunksMoved { moved: 2 },
        ]
    );
    assert_eq!(
        judge_distribution(&shares(&[600, 400]), &before, &before, 25.0),
        Vec::<DistributionFlag>::new()
    );
    // At the limit is not above it.
    assert_eq!(
        judge_distribution(&shares(&[600, 400]), &before, &before, 20.0),
        Vec::<DistributionFlag>::new()
    );
    assert_eq!(
        judge_distribution(&shares(&[600, 400]), &before, &before, 19.9),
        [DistributionFlag::Skewed {
            percent: 20.0,
            limit: 19.9
        }]
    );
    assert_eq!(
        judge_distribution(&[], &[], &[], 0.0),
        Vec::<DistributionFlag>::new()
    );
}

#[test]
fn distribution_flags_read_as_sentences() {
    let texts: Vec<String> = [
        DistributionFlag::Skewed {
            percent: 41.2,
            limit: 25.0,
        },
        DistributionFlag::Skewed {
            percent: 100.0 / 3.0,
            limit: 12.5,
        },
        DistributionFlag::ChunksMoved { moved: 3 },
        DistributionFlag::ChunksMoved { moved: 1 },
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    assert_eq!(
        texts,
        [
            "documents skewed 41.2% over shards (limit 25%)",
            "documents skewed 33.3% over shards (limit 12.5%)",
            "the balancer moved 3 chunks during the measurement",
            "the balancer moved 1 chunk during the measurement",
        ]
    );
}

#[test]
fn shard_shares_serialize_in_camel_case_with_a_schema() {
    let share = ShardShare {
        shard: "x-shard-0".to_owned(),
        documents: 600,
        bytes: 60_000,
        chunks: 2,
    };
    let json = serde_json::to_string(&share).unwrap();
    assert_eq!(
        json,
        r#"{"shard":"x-shard-0","documents":600,"bytes":60000,"chunks":2}"#
    );
    assert_eq!(serde_json::from_str::<ShardShare>(&json).unwrap(), share);
    let schema = serde_json::to_value(schemars::schema_for!(ShardShare)).unwrap();
    let mut properties: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    properties.sort();
    assert_eq!(properties, ["bytes", "chunks", "documents", "shard"]);
}
