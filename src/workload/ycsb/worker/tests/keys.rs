//! Which keys a worker inserts and reads: load striding, insert lanes, acknowledged keys.

use super::*;
use std::collections::BTreeSet;

#[test]
fn load_workers_split_the_key_range_round_robin() {
    let p = props(Some("a"), &[("recordcount", "10")]);
    let s = SharedState::new(10);
    let w0: Vec<u64> = drain(&mut worker(&p, 1, 0, 3, YcsbPhase::Load, &s))
        .iter()
        .map(|o| o.keynum)
        .collect();
    let w1: Vec<u64> = drain(&mut worker(&p, 1, 1, 3, YcsbPhase::Load, &s))
        .iter()
        .map(|o| o.keynum)
        .collect();
    let w2: Vec<u64> = drain(&mut worker(&p, 1, 2, 3, YcsbPhase::Load, &s))
        .iter()
        .map(|o| o.keynum)
        .collect();
    assert_eq!(w0, [0, 3, 6, 9]);
    assert_eq!(w1, [1, 4, 7]);
    assert_eq!(w2, [2, 5, 8]);
}

#[test]
fn reads_never_choose_an_unacknowledged_insert() {
    // Two workers of workload D share the counter; worker 0's insert stays in flight while
    // worker 1 reads: key 1000 must not be chosen until it is acknowledged.
    let p = props(
        Some("d"),
        &[
            ("operationcount", "0"),
            ("maxexecutiontime", "60"),
            ("fieldlength", "1"),
        ],
    );
    let s = SharedState::new(1000);
    let mut w0 = worker(&p, 1, 0, 2, YcsbPhase::Run, &s);
    let mut w1 = worker(&p, 2, 1, 2, YcsbPhase::Run, &s);
    let insert = std::iter::from_fn(|| w0.next())
        .find(|o| o.kind == OpKind::Insert)
        .unwrap();
    assert_eq!(insert.keynum, 1000);
    assert_eq!(s.last_acked(), Some(999));
    for _ in 0..20_000 {
        let op = w1.next().unwrap();
        if op.kind == OpKind::Read {
            assert!(
                op.keynum <= s.last_acked().unwrap(),
                "read {} beyond acknowledged",
                op.keynum
            );
            assert!(op.keynum != 1000);
        }
        w1.complete();
    }
    w0.complete();
    assert!(s.last_acked().unwrap() >= 1000);
}

#[test]
fn latest_reads_favour_the_newest_acknowledged_key() {
    let p = props(
        Some("d"),
        &[("operationcount", "200000"), ("fieldlength", "1")],
    );
    let s = SharedState::new(1000);
    let mut w = worker(&p, 8, 0, 1, YcsbPhase::Run, &s);
    let mut newest_hits = 0u32;
    let mut reads = 0u32;
    while let Some(op) = w.next() {
        let last = s.last_acked().unwrap();
        match op.kind {
            OpKind::Read => {
                assert!(op.keynum <= last && op.keynum > 0);
                reads += 1;
                if op.keynum == last {
                    newest_hits += 1;
                }
            }
            OpKind::Insert => assert_eq!(op.keynum, last + 1),
            other => panic!("{other:?} in workload D"),
        }
    }
    // P(newest) = 1/ζ(n) with n growing from 999 to ≈ 11,000: between 1/ζ(11000) ≈ 9.9 %
    // and 1/ζ(999) = 12.94 %.
    let share = f64::from(newest_hits) / f64::from(reads);
    assert!(share > 0.099 && share < 0.1295, "{share}");
}

#[test]
fn partitioned_lanes_never_collide_and_read_only_own_inserts() {
    let p = props(
        Some("d"),
        &[
            ("mongobench.txninsert.partition", "true"),
            ("mongobench.client.count", "2"),
            ("mongobench.client.index", "1"),
            ("operationcount", "4000"),
            ("fieldlength", "1"),
        ],
    );
    let s = SharedState::new(1000);
    let mut all_inserts = BTreeSet::new();
    for w in 0..2u32 {
        let mut wk = worker(&p, 4, w, 2, YcsbPhase::Run, &s);
        assert!(wk.is_deterministic());
        let lane = u64::from(w) * 2 + 1;
        let mut mine = BTreeSet::new();
        while let Some(op) = wk.next() {
            match op.kind {
                OpKind::Insert => {
                    assert_eq!((op.keynum - 1000) % 4, lane, "lane of worker {w}");
                    assert!(all_inserts.insert(op.keynum), "duplicate {}", op.keynum);
                    mine.insert(op.keynum);
                }
                OpKind::Read => assert!(op.keynum < 1000 || mine.contains(&op.keynum)),
                other => panic!("{other:?}"),
            }
        }
    }
    assert_eq!(s.insert_high_water(), *all_inserts.last().unwrap() + 1);
}

#[test]
fn other_request_distributions_stay_within_readable_keys() {
    for dist in ["uniform", "sequential", "hotspot", "exponential", "latest"] {
        let p = props(
            None,
            &[
                ("recordcount", "100"),
                ("operationcount", "3000"),
                ("requestdistribution", dist),
                ("fieldlength", "1"),
            ],
        );
        let s = SharedState::new(100);
        let mut w = worker(&p, 1, 0, 1, YcsbPhase::Run, &s);
        let keys: BTreeSet<u64> = drain(&mut w).iter().map(|o| o.keynum).collect();
        assert!(keys.iter().all(|k| *k < 100), "{dist}");
        assert!(keys.len() > 40, "{dist}: only {} distinct keys", keys.len());
    }
    let p = props(
        None,
        &[
            ("recordcount", "100"),
            ("operationcount", "5"),
            ("requestdistribution", "sequential"),
            ("insertstart", "10"),
            ("insertcount", "3"),
            ("fieldlength", "1"),
        ],
    );
    let s = SharedState::new(100);
    let keys: Vec<u64> = drain(&mut worker(&p, 1, 0, 1, YcsbPhase::Run, &s))
        .iter()
        .map(|o| o.keynum)
        .collect();
    assert_eq!(keys, [10, 11, 12, 10, 11]);
}
