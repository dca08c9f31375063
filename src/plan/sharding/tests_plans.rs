//! Split points and collection plans.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use mongodb::bson::Bson;

use super::*;
use crate::api::{PreSplit, ShardKey, ShardKeyType};

#[test]
fn split_values_convert_to_bson_of_the_right_width() {
    assert_eq!(SplitValue::Int(5).to_bson(), Bson::Int32(5));
    assert_eq!(SplitValue::Int(-5).to_bson(), Bson::Int32(-5));
    assert_eq!(
        SplitValue::Int(i64::from(i32::MAX)).to_bson(),
        Bson::Int32(i32::MAX)
    );
    assert_eq!(
        SplitValue::Int(i64::from(i32::MIN)).to_bson(),
        Bson::Int32(i32::MIN)
    );
    assert_eq!(
        SplitValue::Int(i64::from(i32::MAX) + 1).to_bson(),
        Bson::Int64(2_147_483_648)
    );
    assert_eq!(
        SplitValue::Int(i64::from(i32::MIN) - 1).to_bson(),
        Bson::Int64(-2_147_483_649)
    );
    assert_eq!(
        SplitValue::Str("k".to_owned()).to_bson(),
        Bson::String("k".to_owned())
    );
    assert_eq!(SplitValue::Hashed(5).to_bson(), Bson::Int64(5));
    assert_eq!(Bound::MinKey.to_bson(), Bson::MinKey);
    assert_eq!(
        Bound::Value(SplitValue::Hashed(-1)).to_bson(),
        Bson::Int64(-1)
    );
}

#[test]
fn split_values_order_numbers_before_strings() {
    let mut v = vec![
        SplitValue::Str("b".to_owned()),
        SplitValue::Int(10),
        SplitValue::Str("a".to_owned()),
        SplitValue::Int(-3),
    ];
    v.sort();
    assert_eq!(
        v,
        [
            SplitValue::Int(-3),
            SplitValue::Int(10),
            SplitValue::Str("a".to_owned()),
            SplitValue::Str("b".to_owned()),
        ]
    );
    assert!(SplitValue::Hashed(-1) < SplitValue::Int(0));
    assert!(SplitValue::Int(7) < SplitValue::Hashed(7));
}

#[test]
fn hashed_points_cut_the_hash_space_equally() {
    assert_eq!(hashed_points(0), Vec::<i64>::new());
    assert_eq!(hashed_points(1), Vec::<i64>::new());
    assert_eq!(hashed_points(2), [0]);
    assert_eq!(
        hashed_points(3),
        [-3_074_457_345_618_258_603, 3_074_457_345_618_258_602]
    );
    assert_eq!(
        hashed_points(4),
        [-4_611_686_018_427_387_904, 0, 4_611_686_018_427_387_904]
    );
    let many = hashed_points(1024);
    assert_eq!(many.len(), 1023);
    assert_eq!(many[0], -9_205_357_638_345_293_824);
    assert_eq!(many[511], 0);
    assert_eq!(many[1022], 9_205_357_638_345_293_824);
    assert!(many.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn quantile_points_are_the_keys_at_equal_ranks() {
    // 0..100 in a scrambled order (37 is prime to 100).
    let keys: Vec<i64> = (0..100).map(|i| (i * 37) % 100).collect();
    assert_eq!(quantile_points(keys.clone(), 4), [25, 50, 75]);
    assert_eq!(quantile_points(keys.clone(), 3), [33, 66]);
    assert_eq!(quantile_points(keys.clone(), 2), [50]);
    assert_eq!(quantile_points(keys.clone(), 1), Vec::<i64>::new());
    assert_eq!(quantile_points(keys, 0), Vec::<i64>::new());
}

#[test]
fn quantile_points_count_distinct_keys_and_skip_the_smallest() {
    assert_eq!(quantile_points(vec![3, 1, 1, 2, 2, 1], 2), [2]);
    assert_eq!(quantile_points(vec![1, 2], 4), [2]);
    assert_eq!(quantile_points(vec![7, 7, 7], 4), Vec::<i32>::new());
    assert_eq!(quantile_points(Vec::<i32>::new(), 4), Vec::<i32>::new());
    assert_eq!(quantile_points(vec![5, 1, 3, 2, 4], 5), [2, 3, 4, 5]);
    assert_eq!(quantile_points(vec![5, 1, 3, 2, 4], 10), [2, 3, 4, 5]);
    let words: Vec<String> = ["pear", "apple", "fig", "kiwi", "date", "lime"]
        .map(str::to_owned)
        .to_vec();
    assert_eq!(quantile_points(words, 3), ["fig", "lime"]);
}

// ---- collection plans ----------------------------------------------------------------------

pub(super) fn shard_ids(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("x-shard-{i}")).collect()
}

pub(super) fn key(field: &str, kind: ShardKeyType) -> ShardKey {
    ShardKey {
        field: field.to_owned(),
        kind,
    }
}

pub(super) fn at_points(points: Vec<IntOrString>) -> PreSplit {
    PreSplit {
        chunks_per_shard: None,
        points,
    }
}

pub(super) fn per_shard(n: u32) -> PreSplit {
    PreSplit {
        chunks_per_shard: Some(n),
        points: Vec::new(),
    }
}

pub(super) fn no_keys() -> Vec<SplitValue> {
    panic!("range keys asked for a plan that does not need them")
}

pub(super) fn owned(ids: &[&str]) -> Vec<String> {
    ids.iter().map(|s| (*s).to_owned()).collect()
}

pub(super) const Q: i64 = 4_611_686_018_427_387_904;

pub(super) fn hashed_plan() -> CollectionPlan {
    collection_plan(
        "bench",
        "flights",
        &key("flight_id", ShardKeyType::Hashed),
        Some(&per_shard(2)),
        &shard_ids(2),
        no_keys,
    )
}

#[test]
fn hashed_plan_slices_the_hash_space_round_robin() {
    assert_eq!(
        hashed_plan(),
        CollectionPlan {
            database: "bench".to_owned(),
            collection: "flights".to_owned(),
            field: "flight_id".to_owned(),
            hashed: true,
            points: vec![
                SplitValue::Hashed(-Q),
                SplitValue::Hashed(0),
                SplitValue::Hashed(Q)
            ],
            owners: owned(&["x-shard-0", "x-shard-1", "x-shard-0", "x-shard-1"]),
        }
    );
    // Stray points on a hashed key are ignored; an empty preSplit means the default 2.
    let stray = at_points(vec![IntOrString::Int(5)]);
    let plan = collection_plan(
        "bench",
        "flights",
        &key("flight_id", ShardKeyType::Hashed),
        Some(&stray),
        &shard_ids(1),
        no_keys,
    );
    assert_eq!(plan.points, [SplitValue::Hashed(0)]);
    assert_eq!(plan.owners, owned(&["x-shard-0", "x-shard-0"]));
}

#[test]
fn range_plan_takes_explicit_points_sorted() {
    let pre = at_points(vec![
        IntOrString::String("k".to_owned()),
        IntOrString::Int(100),
        IntOrString::Int(10),
        IntOrString::Int(100),
    ]);
    let plan = collection_plan(
        "bench",
        "usertable",
        &key("_id", ShardKeyType::Range),
        Some(&pre),
        &shard_ids(2),
        no_keys,
    );
    assert_eq!(
        plan,
        CollectionPlan {
            database: "bench".to_owned(),
            collection: "usertable".to_owned(),
            field: "_id".to_owned(),
            hashed: false,
            points: vec![
                SplitValue::Int(10),
                SplitValue::Int(100),
                SplitValue::Str("k".to_owned())
            ],
            owners: owned(&["x-shard-0", "x-shard-1", "x-shard-0", "x-shard-1"]),
        }
    );
}

#[test]
fn range_plan_by_chunks_takes_quantiles_of_the_seeded_keys() {
    let seeded = || (0..100).rev().map(SplitValue::Int).collect::<Vec<_>>();
    let plan = collection_plan(
        "bench",
        "flights",
        &key("flight_id", ShardKeyType::Range),
        Some(&per_shard(2)),
        &shard_ids(2),
        seeded,
    );
    assert_eq!(
        plan.points,
        [
            SplitValue::Int(25),
            SplitValue::Int(50),
            SplitValue::Int(75)
        ]
    );
    assert_eq!(
        plan.owners,
        owned(&["x-shard-0", "x-shard-1", "x-shard-0", "x-shard-1"])
    );
    assert!(!plan.hashed);
    // preSplit with neither field: the default 2 per shard, here over 3 shards.
    let plan = collection_plan(
        "bench",
        "flights",
        &key("flight_id", ShardKeyType::Range),
        Some(&PreSplit::default()),
        &shard_ids(3),
        seeded,
    );
    let sixths: Vec<SplitValue> = [16, 33, 50, 66, 83].map(SplitValue::Int).to_vec();
    assert_eq!(plan.points, sixths);
    assert_eq!(
        plan.owners,
        owned(&[
            "x-shard-0",
            "x-shard-1",
            "x-shard-2",
            "x-shard-0",
            "x-shard-1",
            "x-shard-2"
        ])
    );
    // Fewer distinct keys than chunks: fewer chunks, still dealt round-robin.
    let plan = collection_plan(
        "bench",
        "flights",
        &key("airline", ShardKeyType::Range),
        Some(&per_shard(4)),
        &shard_ids(2),
        || {
            ["b", "a", "b"]
                .map(|s| SplitValue::Str(s.to_owned()))
                .to_vec()
        },
    );
    assert_eq!(plan.points, [SplitValue::Str("b".to_owned())]);
    assert_eq!(plan.owners, owned(&["x-shard-0", "x-shard-1"]));
}

#[test]
fn plan_without_pre_split_or_shards_leaves_placement_to_the_server() {
    for kind in [ShardKeyType::Hashed, ShardKeyType::Range] {
        let plan = collection_plan(
            "bench",
            "flights",
            &key("flight_id", kind),
            None,
            &shard_ids(2),
            no_keys,
        );
        assert_eq!(plan.points, Vec::<SplitValue>::new());
        assert_eq!(plan.owners, Vec::<String>::new());
        let plan = collection_plan(
            "bench",
            "flights",
            &key("flight_id", kind),
            Some(&per_shard(2)),
            &[],
            no_keys,
        );
        assert_eq!(plan.points, Vec::<SplitValue>::new());
        assert_eq!(plan.owners, Vec::<String>::new());
    }
}
