//! The collection steps: walks to done, resumption, key mismatch.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use mongodb::bson::{Bson, Document, doc};

use super::collection::{KeyOrder, key_order};
use super::tests_cluster::keys;
use super::tests_plans::*;
use super::*;
use crate::api::ShardKeyType;

pub(super) fn chunk(min: Bson, max: Bson, shard: &str) -> Chunk {
    Chunk {
        min,
        max,
        shard: shard.to_owned(),
    }
}

fn order(b: &Bson) -> KeyOrder<'_> {
    key_order(b).expect("a test bound has a key type")
}

/// What `config.chunks` would hold after `step` succeeded; a fresh collection's single chunk
/// lands on `primary`.
fn apply_collection(
    plan: &CollectionPlan,
    seen: &mut CollectionSeen,
    step: &CollectionStep,
    primary: &str,
) {
    match step {
        CollectionStep::ShardCollection => {
            seen.sharded_key = Some(plan.key());
            seen.chunks = vec![chunk(Bson::MinKey, Bson::MaxKey, primary)];
        }
        CollectionStep::Split(p) => {
            let at = p.to_bson();
            let i = seen
                .chunks
                .iter()
                .position(|c| order(&c.min) < order(&at) && order(&at) < order(&c.max))
                .expect("a chunk holds the split point");
            let upper = chunk(
                at.clone(),
                seen.chunks[i].max.clone(),
                &seen.chunks[i].shard,
            );
            seen.chunks[i].max = at;
            seen.chunks.insert(i + 1, upper);
        }
        CollectionStep::MoveRange { min, to } => {
            let min = min.to_bson();
            let c = seen
                .chunks
                .iter_mut()
                .find(|c| order(&c.min) == order(&min))
                .expect("a chunk starts at the moved bound");
            c.shard = to.clone();
        }
        CollectionStep::Done => panic!("Done has nothing to apply"),
    }
}

/// The steps from `seen` to Done, each applied to the simulated collection.
fn walk(plan: &CollectionPlan, seen: &mut CollectionSeen, primary: &str) -> Vec<CollectionStep> {
    let mut steps = Vec::new();
    loop {
        let step = next_collection_step(plan, seen).unwrap();
        steps.push(step.clone());
        if step == CollectionStep::Done || steps.len() > 50 {
            return steps;
        }
        apply_collection(plan, seen, &step, primary);
    }
}

fn hashed_value(v: i64) -> Bound {
    Bound::Value(SplitValue::Hashed(v))
}

#[test]
fn hashed_plan_walks_from_an_unsharded_collection_to_done() {
    let plan = hashed_plan();
    let mut seen = CollectionSeen::default();
    let steps = walk(&plan, &mut seen, "x-shard-0");
    assert_eq!(
        steps,
        [
            CollectionStep::ShardCollection,
            CollectionStep::Split(SplitValue::Hashed(-Q)),
            CollectionStep::Split(SplitValue::Hashed(0)),
            CollectionStep::Split(SplitValue::Hashed(Q)),
            CollectionStep::MoveRange {
                min: hashed_value(-Q),
                to: "x-shard-1".to_owned()
            },
            CollectionStep::MoveRange {
                min: hashed_value(Q),
                to: "x-shard-1".to_owned()
            },
            CollectionStep::Done,
        ]
    );
    let commands: Vec<Option<Document>> = steps.iter().map(|s| s.command(&plan)).collect();
    assert_eq!(
        commands,
        [
            Some(doc! {"shardCollection": "bench.flights", "key": {"flight_id": "hashed"}}),
            Some(doc! {"split": "bench.flights", "middle": {"flight_id": Bson::Int64(-Q)}}),
            Some(doc! {"split": "bench.flights", "middle": {"flight_id": Bson::Int64(0)}}),
            Some(doc! {"split": "bench.flights", "middle": {"flight_id": Bson::Int64(Q)}}),
            Some(doc! {
                "moveRange": "bench.flights",
                "min": {"flight_id": Bson::Int64(-Q)},
                "toShard": "x-shard-1",
            }),
            Some(doc! {
                "moveRange": "bench.flights",
                "min": {"flight_id": Bson::Int64(Q)},
                "toShard": "x-shard-1",
            }),
            None,
        ]
    );
    let names: Vec<Vec<&str>> = commands.iter().flatten().map(keys).collect();
    assert_eq!(
        names,
        [
            vec!["shardCollection", "key"],
            vec!["split", "middle"],
            vec!["split", "middle"],
            vec!["split", "middle"],
            vec!["moveRange", "min", "toShard"],
            vec!["moveRange", "min", "toShard"],
        ]
    );
    assert_eq!(
        seen,
        CollectionSeen {
            sharded_key: Some(doc! {"flight_id": "hashed"}),
            chunks: vec![
                chunk(Bson::MinKey, Bson::Int64(-Q), "x-shard-0"),
                chunk(Bson::Int64(-Q), Bson::Int64(0), "x-shard-1"),
                chunk(Bson::Int64(0), Bson::Int64(Q), "x-shard-0"),
                chunk(Bson::Int64(Q), Bson::MaxKey, "x-shard-1"),
            ],
        }
    );
}

#[test]
fn range_plan_with_explicit_points_walks_to_done_moving_min_key_too() {
    let pre = at_points(vec![
        IntOrString::String("g".to_owned()),
        IntOrString::String("p".to_owned()),
    ]);
    let shards = owned(&["a", "b", "c"]);
    let plan = collection_plan(
        "bench",
        "usertable",
        &key("_id", ShardKeyType::Range),
        Some(&pre),
        &shards,
        no_keys,
    );
    assert_eq!(plan.owners, shards);
    let mut seen = CollectionSeen::default();
    let steps = walk(&plan, &mut seen, "b");
    let g = || SplitValue::Str("g".to_owned());
    let p = || SplitValue::Str("p".to_owned());
    assert_eq!(
        steps,
        [
            CollectionStep::ShardCollection,
            CollectionStep::Split(g()),
            CollectionStep::Split(p()),
            CollectionStep::MoveRange {
                min: Bound::MinKey,
                to: "a".to_owned()
            },
            CollectionStep::MoveRange {
                min: Bound::Value(p()),
                to: "c".to_owned()
            },
            CollectionStep::Done,
        ]
    );
    let commands: Vec<Option<Document>> = steps.iter().map(|s| s.command(&plan)).collect();
    assert_eq!(
        commands,
        [
            Some(doc! {"shardCollection": "bench.usertable", "key": {"_id": 1}}),
            Some(doc! {"split": "bench.usertable", "middle": {"_id": "g"}}),
            Some(doc! {"split": "bench.usertable", "middle": {"_id": "p"}}),
            Some(
                doc! {"moveRange": "bench.usertable", "min": {"_id": Bson::MinKey}, "toShard": "a"}
            ),
            Some(doc! {"moveRange": "bench.usertable", "min": {"_id": "p"}, "toShard": "c"}),
            None,
        ]
    );
    assert_eq!(
        seen.chunks,
        [
            chunk(Bson::MinKey, Bson::String("g".to_owned()), "a"),
            chunk(
                Bson::String("g".to_owned()),
                Bson::String("p".to_owned()),
                "b"
            ),
            chunk(Bson::String("p".to_owned()), Bson::MaxKey, "c"),
        ]
    );
}

#[test]
fn integer_points_match_chunk_bounds_of_either_width() {
    let plan = collection_plan(
        "bench",
        "flights",
        &key("flight_id", ShardKeyType::Range),
        Some(&per_shard(2)),
        &shard_ids(2),
        || (0..100).map(SplitValue::Int).collect(),
    );
    let mut seen = CollectionSeen {
        sharded_key: Some(doc! {"flight_id": 1}),
        chunks: vec![
            chunk(Bson::MinKey, Bson::Int64(25), "x-shard-0"),
            chunk(Bson::Int64(25), Bson::Int32(50), "x-shard-0"),
            chunk(Bson::Int32(50), Bson::Int64(75), "x-shard-0"),
            chunk(Bson::Int64(75), Bson::MaxKey, "x-shard-1"),
        ],
    };
    let step = next_collection_step(&plan, &seen).unwrap();
    assert_eq!(
        step,
        CollectionStep::MoveRange {
            min: Bound::Value(SplitValue::Int(25)),
            to: "x-shard-1".to_owned()
        }
    );
    assert_eq!(
        step.command(&plan),
        Some(
            doc! {"moveRange": "bench.flights", "min": {"flight_id": Bson::Int32(25)}, "toShard": "x-shard-1"}
        )
    );
    seen.chunks[1].shard = "x-shard-1".to_owned();
    assert_eq!(
        next_collection_step(&plan, &seen).unwrap(),
        CollectionStep::Done
    );
    // A hashed point is only ever an Int64 bound.
    assert!(SplitValue::Hashed(3).is(&Bson::Int64(3)));
    assert!(!SplitValue::Hashed(3).is(&Bson::Int32(3)));
    assert!(SplitValue::Int(3).is(&Bson::Int32(3)));
    assert!(SplitValue::Int(3).is(&Bson::Int64(3)));
    assert!(!SplitValue::Int(3).is(&Bson::String("3".to_owned())));
    assert!(!SplitValue::Str("3".to_owned()).is(&Bson::Int32(3)));
    assert!(!SplitValue::Int(3).is(&Bson::Double(3.0)));
}

#[test]
fn chunks_the_server_made_are_placed_by_the_planned_range_holding_them() {
    // A server that pre-split the hashed key itself, at its own points (±P, 0), one chunk
    // per shard alternately.
    const P: i64 = 4_611_686_018_427_387_902;
    let plan = hashed_plan();
    let mut seen = CollectionSeen {
        sharded_key: Some(doc! {"flight_id": "hashed"}),
        chunks: vec![
            chunk(Bson::MinKey, Bson::Int64(-P), "x-shard-0"),
            chunk(Bson::Int64(-P), Bson::Int64(0), "x-shard-1"),
            chunk(Bson::Int64(0), Bson::Int64(P), "x-shard-0"),
            chunk(Bson::Int64(P), Bson::MaxKey, "x-shard-1"),
        ],
    };
    let steps = walk(&plan, &mut seen, "unused");
    assert_eq!(
        steps,
        [
            CollectionStep::Split(SplitValue::Hashed(-Q)),
            CollectionStep::Split(SplitValue::Hashed(Q)),
            CollectionStep::MoveRange {
                min: hashed_value(-Q),
                to: "x-shard-1".to_owned()
            },
            CollectionStep::MoveRange {
                min: hashed_value(P),
                to: "x-shard-0".to_owned()
            },
            CollectionStep::Done,
        ]
    );
    assert_eq!(
        seen.chunks,
        [
            chunk(Bson::MinKey, Bson::Int64(-Q), "x-shard-0"),
            chunk(Bson::Int64(-Q), Bson::Int64(-P), "x-shard-1"),
            chunk(Bson::Int64(-P), Bson::Int64(0), "x-shard-1"),
            chunk(Bson::Int64(0), Bson::Int64(P), "x-shard-0"),
            chunk(Bson::Int64(P), Bson::Int64(Q), "x-shard-0"),
            chunk(Bson::Int64(Q), Bson::MaxKey, "x-shard-1"),
        ]
    );
}

#[test]
fn chunks_with_bounds_of_a_foreign_type_are_left_alone() {
    let plan = collection_plan(
        "bench",
        "flights",
        &key("flight_id", ShardKeyType::Range),
        Some(&at_points(vec![IntOrString::Int(10)])),
        &shard_ids(2),
        no_keys,
    );
    let seen = CollectionSeen {
        sharded_key: Some(doc! {"flight_id": 1}),
        chunks: vec![
            chunk(Bson::MinKey, Bson::Double(2.5), "x-shard-0"),
            chunk(Bson::Double(2.5), Bson::Int32(10), "x-shard-1"),
            chunk(Bson::Int32(10), Bson::MaxKey, "x-shard-1"),
        ],
    };
    assert_eq!(
        next_collection_step(&plan, &seen).unwrap(),
        CollectionStep::Done
    );
}

#[test]
fn unplaced_plan_is_done_once_sharded() {
    let plan = collection_plan(
        "bench",
        "usertable",
        &key("_id", ShardKeyType::Hashed),
        None,
        &shard_ids(2),
        no_keys,
    );
    let mut seen = CollectionSeen::default();
    assert_eq!(
        walk(&plan, &mut seen, "x-shard-1"),
        [CollectionStep::ShardCollection, CollectionStep::Done]
    );
    assert_eq!(
        seen.chunks,
        [chunk(Bson::MinKey, Bson::MaxKey, "x-shard-1")]
    );
}

#[test]
fn a_collection_sharded_on_another_key_is_an_error() {
    let hashed = hashed_plan();
    let range = collection_plan(
        "bench",
        "flights",
        &key("flight_id", ShardKeyType::Range),
        None,
        &shard_ids(2),
        no_keys,
    );
    let sharded = |key: Document| CollectionSeen {
        sharded_key: Some(key),
        chunks: vec![chunk(Bson::MinKey, Bson::MaxKey, "x-shard-0")],
    };
    let err = next_collection_step(&hashed, &sharded(doc! {"flight_id": 1})).unwrap_err();
    assert_eq!(
        err,
        ShardingError::KeyMismatch {
            namespace: "bench.flights".to_owned(),
            planned: r#"{ "flight_id": "hashed" }"#.to_owned(),
            found: r#"{ "flight_id": 1 }"#.to_owned(),
        }
    );
    assert_eq!(
        err.to_string(),
        r#"bench.flights is already sharded on { "flight_id": 1 }, not on the planned key { "flight_id": "hashed" }"#
    );
    let mismatched = [
        doc! {"airline": "hashed"},
        doc! {"flight_id": "hashed", "airline": 1},
        doc! {"flight_id": -1},
        doc! {"flight_id": 2},
    ];
    for key in mismatched.clone() {
        assert!(
            next_collection_step(&hashed, &sharded(key.clone())).is_err(),
            "{key}"
        );
    }
    for key in mismatched {
        assert!(
            next_collection_step(&range, &sharded(key.clone())).is_err(),
            "{key}"
        );
    }
    assert!(next_collection_step(&range, &sharded(doc! {"flight_id": "hashed"})).is_err());
    // The server may store a range key's direction as any numeric type.
    for key in [
        doc! {"flight_id": 1i32},
        doc! {"flight_id": 1i64},
        doc! {"flight_id": 1.0},
    ] {
        assert_eq!(
            next_collection_step(&range, &sharded(key)).unwrap(),
            CollectionStep::Done
        );
    }
}

#[test]
fn plan_names_its_namespace_and_key() {
    let plan = hashed_plan();
    assert_eq!(plan.namespace(), "bench.flights");
    assert_eq!(plan.key(), doc! {"flight_id": "hashed"});
    let range = CollectionPlan {
        hashed: false,
        field: "equipment.plane_type".to_owned(),
        ..plan
    };
    assert_eq!(range.key(), doc! {"equipment.plane_type": 1i32});
    assert_eq!(
        CollectionStep::ShardCollection.command(&range),
        Some(doc! {"shardCollection": "bench.flights", "key": {"equipment.plane_type": 1i32}})
    );
    assert_eq!(CollectionStep::Done.command(&range), None);
}
