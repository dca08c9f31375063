//! The stream as a whole: the operation mix, determinism per seed, construction errors.

use super::*;
use std::collections::HashMap;

#[test]
fn run_mix_matches_each_workload_proportions() {
    let expected: [(&str, [f64; 5]); 6] = [
        ("a", [0.5, 0.5, 0.0, 0.0, 0.0]),
        ("b", [0.95, 0.05, 0.0, 0.0, 0.0]),
        ("c", [1.0, 0.0, 0.0, 0.0, 0.0]),
        ("d", [0.95, 0.0, 0.05, 0.0, 0.0]),
        ("e", [0.0, 0.0, 0.05, 0.95, 0.0]),
        ("f", [0.5, 0.0, 0.0, 0.0, 0.5]),
    ];
    let kinds = [
        OpKind::Read,
        OpKind::Update,
        OpKind::Insert,
        OpKind::Scan,
        OpKind::ReadModifyWrite,
    ];
    for (name, shares) in expected {
        let n = 40_000u64;
        let p = props(
            Some(name),
            &[("operationcount", &n.to_string()), ("fieldlength", "4")],
        );
        let s = SharedState::new(p.record_count);
        let mut w = worker(&p, 3, 0, 1, YcsbPhase::Run, &s);
        let mut counts: HashMap<OpKind, u64> = HashMap::new();
        for op in drain(&mut w) {
            *counts.entry(op.kind).or_default() += 1;
        }
        assert_eq!(counts.values().sum::<u64>(), n);
        for (kind, share) in kinds.iter().zip(shares) {
            let got = *counts.get(kind).unwrap_or(&0) as f64 / n as f64;
            let sigma = (share * (1.0 - share) / n as f64).sqrt();
            assert!(
                (got - share).abs() <= 5.0 * sigma,
                "workload {name} {kind:?}: {got} vs {share}"
            );
        }
    }
}

#[test]
fn operation_choice_over_a_million_draws_is_tight() {
    // The mix alone (no documents built), 10^6 draws per workload, 5-sigma bounds.
    let expected: [(&str, [f64; 5]); 6] = [
        ("a", [0.5, 0.5, 0.0, 0.0, 0.0]),
        ("b", [0.95, 0.05, 0.0, 0.0, 0.0]),
        ("c", [1.0, 0.0, 0.0, 0.0, 0.0]),
        ("d", [0.95, 0.0, 0.05, 0.0, 0.0]),
        ("e", [0.0, 0.0, 0.05, 0.95, 0.0]),
        ("f", [0.5, 0.0, 0.0, 0.0, 0.5]),
    ];
    let kinds = [
        OpKind::Read,
        OpKind::Update,
        OpKind::Insert,
        OpKind::Scan,
        OpKind::ReadModifyWrite,
    ];
    let draws = 1_000_000u32;
    for (name, shares) in expected {
        let p = props(Some(name), &[]);
        let s = SharedState::new(1000);
        let mut w = worker(&p, 9, 0, 1, YcsbPhase::Run, &s);
        let mix = w.mix.clone().expect("mix");
        let mut counts: HashMap<OpKind, u32> = HashMap::new();
        for _ in 0..draws {
            *counts.entry(mix.sample(&mut w.rng)).or_default() += 1;
        }
        for (kind, share) in kinds.iter().zip(shares) {
            let got = f64::from(*counts.get(kind).unwrap_or(&0)) / f64::from(draws);
            let sigma = (share * (1.0 - share) / f64::from(draws)).sqrt();
            assert!(
                (got - share).abs() <= 5.0 * sigma,
                "workload {name} {kind:?}: {got} vs {share}"
            );
        }
    }
}

#[test]
fn workers_can_move_between_threads() {
    fn assert_send<T: Send>() {}
    assert_send::<Worker>();
    assert_send::<YcsbOp>();
}

#[test]
fn same_seed_same_operations_other_seed_others() {
    let p = props(Some("a"), &[]);
    let s = SharedState::new(1000);
    let a = drain(&mut worker(&p, 42, 1, 4, YcsbPhase::Run, &s));
    let b = drain(&mut worker(&p, 42, 1, 4, YcsbPhase::Run, &s));
    let c = drain(&mut worker(&p, 43, 1, 4, YcsbPhase::Run, &s));
    let d = drain(&mut worker(&p, 42, 2, 4, YcsbPhase::Run, &s));
    assert_eq!(a.len(), 250);
    assert_eq!(a, b);
    assert_ne!(a, c);
    assert_ne!(a, d);
}

#[test]
fn construction_errors() {
    let p = props(Some("a"), &[("operationcount", "0")]);
    let s = SharedState::new(1000);
    assert_eq!(
        Worker::new(&p, 1, 0, 1, YcsbPhase::Run, &s).unwrap_err(),
        WorkerError::Unbounded
    );
    assert!(
        Worker::new(&p, 1, 0, 1, YcsbPhase::Load, &s).is_ok(),
        "load ignores operationcount"
    );
    let p = props(Some("d"), &[]);
    assert!(matches!(
        Worker::new(&p, 1, 0, 1, YcsbPhase::Run, &SharedState::new(0)),
        Err(WorkerError::NothingToRead { .. })
    ));
    assert!(matches!(
        Worker::new(&p, 1, 2, 2, YcsbPhase::Run, &s),
        Err(WorkerError::WorkerIndex {
            index: 2,
            workers: 2
        })
    ));
    let insert_only = props(
        None,
        &[
            ("recordcount", "5"),
            ("readproportion", "0"),
            ("updateproportion", "0"),
            ("insertproportion", "1"),
            ("operationcount", "3"),
        ],
    );
    let mut w = Worker::new(&insert_only, 1, 0, 1, YcsbPhase::Run, &SharedState::new(0))
        .expect("inserts need no readable key");
    assert_eq!(
        drain(&mut w).iter().map(|o| o.keynum).collect::<Vec<_>>(),
        [0, 1, 2]
    );
}
