//! Exact expected values come from testdata/reference.py (independent Python implementation).
use super::*;
use crate::workload::flights::target::{FilterTarget, classify_filter, operation_filter};
use crate::workload::flights::{COLLECTION, ids::insert_base};
use std::collections::{BTreeMap, HashSet};

fn defaults() -> Params {
    Params {
        documents: Some(1_000_000),
        ..Params::default()
    }
}

fn all_shapes() -> Params {
    Params::all_shapes()
}

fn codes(worker: &mut Worker, n: usize) -> Vec<&'static str> {
    (0..n)
        .map(|_| worker.next_planned().variant.code())
        .collect()
}

#[test]
fn first_operations_of_seed1_worker0_match_reference() {
    let mut w = Worker::new(
        &defaults(),
        &DatasetInfo::fresh(1, 1_000_000),
        0,
        RunPhase::Measured,
    )
    .unwrap();
    assert_eq!(
        codes(&mut w, 12),
        [
            "F1", "F1", "F1", "F1", "F1", "U1", "F1", "I", "F1", "F1", "I", "F1"
        ]
    );
}

#[test]
fn first_operations_of_every_shape_match_reference() {
    let mut w = Worker::new(
        &all_shapes(),
        &DatasetInfo::fresh(1, 1000),
        0,
        RunPhase::Measured,
    )
    .unwrap();
    assert_eq!(
        codes(&mut w, 40),
        [
            "A2", "U2", "U2", "T", "D1", "D1", "U1", "I", "F1", "F1", "T", "D2", "T", "U1", "T",
            "A2", "I", "D3", "U3", "D3", "U3", "D2", "T", "F3", "U2", "U1", "I", "T", "T", "D1",
            "F3", "D2", "T", "F2", "I", "D3", "A2", "U2", "T", "F2",
        ]
    );
}

#[test]
fn mix_and_hit_rate_over_100000_operations() {
    // insertBatchSize does not change any draw from the worker stream; 1 keeps this fast.
    let params = Params {
        insert_batch_size: 1,
        ..defaults()
    };
    let mut w = Worker::new(
        &params,
        &DatasetInfo::fresh(1, 1_000_000),
        0,
        RunPhase::Measured,
    )
    .unwrap();
    let mut variants: BTreeMap<&str, u64> = BTreeMap::new();
    let mut types: BTreeMap<&str, u64> = BTreeMap::new();
    let (mut hits, mut misses) = (0u64, 0u64);
    for _ in 0..100_000 {
        let p = w.next_planned();
        *variants.entry(p.variant.code()).or_default() += 1;
        *types.entry(p.operation.label).or_default() += 1;
        if p.variant == Variant::FindByFlightId {
            // Measured from the filter that would be sent, not from the generator's note.
            let filter = operation_filter(&p.operation).unwrap();
            match classify_filter(&filter, 1_000_000) {
                FilterTarget::Hit { seq } => {
                    hits += 1;
                    let Target::Hit { seq: t } = p.target else {
                        panic!("{:?}", p.target)
                    };
                    // Below 900,000 documents per id the smallest seq is the target itself.
                    assert_eq!(seq, Some(t % 900_000));
                }
                FilterTarget::PlannedMiss => {
                    misses += 1;
                    assert_eq!(p.target, Target::PlannedMiss);
                }
                FilterTarget::Foreign => panic!("foreign filter {filter}"),
            }
        }
    }
    let expected: BTreeMap<&str, u64> = [
        ("D1", 8118),
        ("D2", 977),
        ("D3", 950),
        ("F1", 59813),
        ("I", 10012),
        ("U1", 16100),
        ("U2", 2029),
        ("U3", 2001),
    ]
    .into_iter()
    .collect();
    assert_eq!(variants, expected);
    assert_eq!((hits, misses), (53_898, 5_915));
    // Within half a point of 60/20/10/10 and of the 0.9 hit rate.
    let share = |label: &str| types[label] as f64 / 1000.0;
    assert!((share("find") - 60.0).abs() < 0.5, "{types:?}");
    assert!((share("update") - 20.0).abs() < 0.5, "{types:?}");
    assert!((share("delete") - 10.0).abs() < 0.5, "{types:?}");
    assert!((share("insert") - 10.0).abs() < 0.5, "{types:?}");
    assert!((hits as f64 / (hits + misses) as f64 - 0.9).abs() < 0.005);
}

#[test]
fn hit_rate_extremes() {
    for (rate, want_hits) in [(0.0, false), (1.0, true)] {
        let params = Params {
            hit_rate: rate,
            ..defaults()
        };
        let mut w =
            Worker::new(&params, &DatasetInfo::fresh(1, 5000), 2, RunPhase::Measured).unwrap();
        for _ in 0..500 {
            let p = w.next_planned();
            if let Some(filter) = operation_filter(&p.operation) {
                let hit = matches!(classify_filter(&filter, 5000), FilterTarget::Hit { .. });
                assert_eq!(hit, want_hits, "{filter}");
            }
        }
    }
}

#[test]
fn inserted_documents_of_all_workers_and_phases_never_collide() {
    let params = Params {
        workers: 4,
        insert_percent: 100,
        find_percent: 0,
        update_percent: 0,
        delete_percent: 0,
        ..defaults()
    };
    let dataset = DatasetInfo {
        dataset_seed: 1,
        documents: 1000,
        insert_base: insert_base(Some(999)),
    };
    let mut ids = HashSet::new();
    let mut flight_ids = Vec::new();
    for phase in [RunPhase::Warmup, RunPhase::Measured] {
        for w in 0..4 {
            let mut worker = Worker::new(&params, &dataset, w, phase).unwrap();
            for _ in 0..25 {
                let op = worker.next_op();
                let body = op.commands[0].to_document();
                let docs = body.get_array("documents").unwrap();
                assert_eq!(docs.len(), 10);
                for d in docs {
                    let d = d.as_document().unwrap();
                    let id = d.get_object_id("_id").unwrap();
                    let seq = crate::workload::flights::ids::seq_of_object_id(&id).unwrap();
                    assert!(seq >= 1 << 48, "inserted seq {seq} inside the seeded range");
                    assert!(ids.insert(id), "_id {id} inserted twice");
                    flight_ids.push(d.get_i32("flight_id").unwrap());
                }
            }
            assert_eq!(worker.documents_allocated(), 250);
        }
    }
    assert_eq!(ids.len(), 2 * 4 * 250);
    // Inserted flight ids sit above plgm's range and are never targeted.
    assert!(flight_ids.iter().all(|&f| f >= 1_000_000));
}

#[test]
fn insert_command_shape() {
    let params = Params {
        insert_percent: 100,
        find_percent: 0,
        update_percent: 0,
        delete_percent: 0,
        ..defaults()
    };
    let mut w = Worker::new(&params, &DatasetInfo::fresh(1, 1000), 1, RunPhase::Measured).unwrap();
    let p = w.next_planned();
    assert_eq!(
        (p.operation.label, p.operation.database, p.target),
        ("insert", "airline", Target::None)
    );
    let body = p.operation.commands[0].to_document();
    assert_eq!(
        body.keys().collect::<Vec<_>>(),
        ["insert", "documents", "ordered"]
    );
    assert_eq!(body.get_str("insert"), Ok(COLLECTION));
    assert_eq!(body.get_bool("ordered"), Ok(false));
    // Worker 1 of 16, measured lane: seq = 2^48 + 2^40 + 1, then + 16.
    let docs = body.get_array("documents").unwrap();
    let first = docs[0].as_document().unwrap();
    let base = 1u64 << 48;
    let expected = Flight::generate(1, base + (1 << 40) + 1, 1_000_000 + 511_627_777).to_document();
    assert_eq!(first, &expected);
    let second = docs[1].as_document().unwrap();
    assert_eq!(
        second.get_object_id("_id"),
        Ok(object_id(base + (1 << 40) + 17))
    );
}

#[test]
fn one_document_writes_and_inserts_are_retryable() {
    let dataset = DatasetInfo::fresh(1, 1000);
    let mut w = Worker::new(&all_shapes(), &dataset, 0, RunPhase::Measured).unwrap();
    let mut seen = HashSet::new();
    for _ in 0..400 {
        let p = w.next_planned();
        let retryable = matches!(
            p.variant,
            Variant::UpdateOneByFlightId
                | Variant::UpdateOneById
                | Variant::DeleteOneByFlightId
                | Variant::DeleteOneById
                | Variant::Insert
        );
        for c in &p.operation.commands {
            assert_eq!(c.retryable, retryable, "{:?}", p.variant);
        }
        seen.insert((p.variant, retryable));
    }
    assert!(seen.contains(&(Variant::Insert, true)));
    assert!(seen.contains(&(Variant::UpdateManyByFlightId, false)));
    assert!(seen.contains(&(Variant::Transaction, false)));
}

#[test]
fn every_shape_has_its_specified_commands() {
    let dataset = DatasetInfo::fresh(1, 1000);
    let mut w = Worker::new(&all_shapes(), &dataset, 0, RunPhase::Measured).unwrap();
    let mut seen = HashSet::new();
    for _ in 0..400 {
        let p = w.next_planned();
        seen.insert(p.variant);
        let cmds = &p.operation.commands;
        let body = cmds[0].to_document();
        let names: Vec<&str> = body.keys().map(String::as_str).collect();
        match p.variant {
            Variant::FindByFlightId => {
                assert_eq!(
                    names,
                    ["find", "filter", "projection", "limit", "singleBatch"]
                );
                assert_eq!(
                    body.get_document("projection"),
                    Ok(&ops::flight_projection())
                );
                assert_eq!(body.get_i32("limit"), Ok(5));
            }
            Variant::FindByRoute => {
                assert_eq!(names, ["find", "filter", "sort", "limit", "singleBatch"]);
                assert_eq!(body.get_document("sort"), Ok(&doc! { "flight_date": -1 }));
                assert_eq!(body.get_i32("limit"), Ok(20));
                let f = body.get_document("filter").unwrap();
                if let Target::Hit { seq } = p.target {
                    let flight = Flight::seeded(1, seq);
                    assert_eq!(
                        f,
                        &doc! { "origin": flight.origin, "destination": flight.destination }
                    );
                } else {
                    assert_eq!(f.get_str("origin"), f.get_str("destination"));
                }
            }
            Variant::FindByStatus => {
                assert_eq!(names, ["find", "filter", "limit", "singleBatch"]);
                let expected = match p.target {
                    Target::Hit { seq } => Flight::seeded(1, seq).status,
                    _ => "unknown",
                };
                assert_eq!(
                    body.get_document("filter"),
                    Ok(&doc! { "status": expected })
                );
            }
            Variant::UpdateOneByFlightId
            | Variant::UpdateOneById
            | Variant::UpdateManyByFlightId => {
                let s = body.get_array("updates").unwrap()[0].as_document().unwrap();
                let multi = p.variant == Variant::UpdateManyByFlightId;
                assert_eq!(s.get_bool("multi"), Ok(multi));
                let u = s.get_document("u").unwrap();
                if multi {
                    let inc = u
                        .get_document("$inc")
                        .ok()
                        .map(|i| i.get_i32("seats_available").unwrap());
                    let set = u
                        .get_document("$set")
                        .ok()
                        .map(|i| i.get_i32("duration_minutes").unwrap());
                    match (inc, set) {
                        (Some(i), None) => assert!((1..=5).contains(&i.abs())),
                        (None, Some(d)) => assert!((30..=900).contains(&d)),
                        other => panic!("U3 update {u}: {other:?}"),
                    }
                } else {
                    let d = u
                        .get_document("$inc")
                        .unwrap()
                        .get_i32("seats_available")
                        .unwrap();
                    assert!(d == 1 || d == -1);
                    assert!(
                        STATUSES
                            .contains(&u.get_document("$set").unwrap().get_str("status").unwrap())
                    );
                }
            }
            Variant::DeleteOneByFlightId
            | Variant::DeleteOneById
            | Variant::DeleteManyByFlightId => {
                let s = body.get_array("deletes").unwrap()[0].as_document().unwrap();
                let limit = if p.variant == Variant::DeleteManyByFlightId {
                    0
                } else {
                    1
                };
                assert_eq!(s.get_i32("limit"), Ok(limit));
            }
            Variant::Insert => assert_eq!(body.get_array("documents").unwrap().len(), 2),
            Variant::AggregateAircraftWindow | Variant::AggregateRouteSummary => {
                assert!(cmds[0].drain_cursor);
                let Target::Hit { seq } = p.target else {
                    panic!("aggregates always hit")
                };
                let pipeline = body.get_array("pipeline").unwrap();
                let matched = pipeline[0]
                    .as_document()
                    .unwrap()
                    .get_document("$match")
                    .unwrap();
                if p.variant == Variant::AggregateAircraftWindow {
                    let f = seeded_flight_id(seq);
                    assert_eq!(
                        matched,
                        &doc! { "flight_id": { "$gte": f, "$lt": f + 100 } }
                    );
                    assert_eq!(pipeline.len(), 3);
                } else {
                    assert_eq!(pipeline.len(), 4);
                }
            }
            Variant::Transaction => {
                assert_eq!(cmds.len(), 3);
                assert!(cmds.iter().all(|c| c.in_transaction && !c.drain_cursor));
                let b_id = cmds[0]
                    .to_document()
                    .get_document("filter")
                    .unwrap()
                    .get_object_id("_id")
                    .unwrap();
                let stmt = |i: usize| {
                    cmds[i].to_document().get_array("updates").unwrap()[0]
                        .as_document()
                        .unwrap()
                        .clone()
                };
                let a_id = stmt(1)
                    .get_document("q")
                    .unwrap()
                    .get_object_id("_id")
                    .unwrap();
                assert_ne!(a_id, b_id);
                assert_eq!(
                    stmt(2).get_document("q").unwrap().get_object_id("_id"),
                    Ok(b_id)
                );
                let a = Flight::seeded(
                    1,
                    crate::workload::flights::ids::seq_of_object_id(&a_id).unwrap(),
                );
                let b = Flight::seeded(
                    1,
                    crate::workload::flights::ids::seq_of_object_id(&b_id).unwrap(),
                );
                let p_id = stmt(1)
                    .get_document("u")
                    .unwrap()
                    .get_document("$pull")
                    .unwrap()
                    .get_document("passengers")
                    .unwrap()
                    .get_i32("passenger_id")
                    .unwrap();
                let moved = &a.passengers[p_id as usize - 1];
                let push = stmt(2)
                    .get_document("u")
                    .unwrap()
                    .get_document("$push")
                    .unwrap()
                    .get_document("passengers")
                    .unwrap()
                    .clone();
                let entry = push.get_array("$each").unwrap()[0]
                    .as_document()
                    .unwrap()
                    .clone();
                assert_eq!(
                    entry,
                    doc! { "passenger_id": 100 + p_id, "name": &moved.name,
                    "ticket_number": &moved.ticket_number, "seat_number": &b.spare_seat }
                );
                assert_eq!(push.get_i32("$slice"), Ok(25));
            }
        }
    }
    assert_eq!(seen.len(), 13, "not every variant generated: {seen:?}");
}

#[test]
fn phases_and_workers_have_distinct_streams() {
    let dataset = DatasetInfo::fresh(1, 1_000_000);
    let p = defaults();
    let ops = |w: u32, phase: RunPhase| {
        let mut worker = Worker::new(&p, &dataset, w, phase).unwrap();
        (0..20).map(|_| worker.next_op()).collect::<Vec<_>>()
    };
    assert_eq!(ops(0, RunPhase::Measured), ops(0, RunPhase::Measured));
    assert_ne!(ops(0, RunPhase::Measured), ops(0, RunPhase::Warmup));
    assert_ne!(ops(0, RunPhase::Measured), ops(1, RunPhase::Measured));
}

#[test]
fn invalid_workers_are_refused() {
    let p = defaults();
    let dataset = DatasetInfo::fresh(1, 10);
    assert_eq!(
        Worker::new(&p, &dataset, 16, RunPhase::Measured).unwrap_err(),
        WorkerError::WorkerIndex {
            index: 16,
            workers: 16
        }
    );
    assert_eq!(
        Worker::new(&p, &DatasetInfo::fresh(1, 0), 0, RunPhase::Measured).unwrap_err(),
        WorkerError::DatasetTooSmall {
            documents: 0,
            needed: 1
        }
    );
    let tx = Params {
        transaction_percent: 10,
        insert_percent: 0,
        ..defaults()
    };
    assert_eq!(
        Worker::new(&tx, &DatasetInfo::fresh(1, 1), 0, RunPhase::Measured).unwrap_err(),
        WorkerError::DatasetTooSmall {
            documents: 1,
            needed: 2
        }
    );
    let bad_base = DatasetInfo {
        insert_base: 12345,
        ..dataset
    };
    assert_eq!(
        Worker::new(&p, &bad_base, 0, RunPhase::Measured).unwrap_err(),
        WorkerError::InsertBase(12345)
    );
    let bad_mix = Params {
        find_percent: 61,
        ..defaults()
    };
    assert_eq!(
        Worker::new(&bad_mix, &dataset, 0, RunPhase::Measured).unwrap_err(),
        WorkerError::Params(ParamsError::PercentSum(101))
    );
}

#[test]
fn think_time_is_base_plus_bounded_jitter() {
    let fixed = Params {
        think_time_ms: 7,
        ..defaults()
    };
    assert_eq!(
        ThinkTime::new(&fixed, 0).next_pause(),
        Duration::from_millis(7)
    );
    let jittery = Params {
        think_time_ms: 5,
        think_jitter_ms: 3,
        ..defaults()
    };
    let mut t = ThinkTime::new(&jittery, 0);
    let pauses: HashSet<u128> = (0..200).map(|_| t.next_pause().as_millis()).collect();
    assert_eq!(pauses, (5..=8).collect());
}
