//! What runners report while they work: the cell a runner names with its activity, and the
//! slots a precision goal adds; the advice on settings that add noise.

use super::*;
use crate::contract::Activity;

#[test]
fn the_cell_a_runner_names_runs_with_its_activity_in_progress() {
    // Two external targets interleaved on one platform, two sizes, two repetitions.
    let spec = "\
targets:
  - {name: a, external: {uriSecretRef: {name: s}}}
  - {name: b, external: {uriSecretRef: {name: s}}}
platforms: [{name: local}]
dataset: {sizes: [1k, 2k]}
workload: {type: flights}
repetitions: 2
";
    let b = bench("bench", spec);
    let mut o = Observed {
        runner_access: true,
        ..Default::default()
    };
    o.jobs
        .insert(RunnerKey::Platform("local".into()), JobState::Active);
    let running = |d: &Decision| -> Vec<(String, Option<String>)> {
        d.status
            .cells
            .iter()
            .filter(|c| c.phase == CellPhase::Running)
            .map(|c| (c.id.clone(), c.activity.clone()))
            .collect()
    };
    // No word from the runner: the first cell in its order (slot 1's seeded order is b a),
    // no activity.
    assert_eq!(
        crate::contract::slot_order::order(b.spec.workload.seed(), 0, 1, 2),
        [1, 0]
    );
    let d = decide(&b, &o, &settings(0)).unwrap();
    assert_eq!(running(&d), [("b.local.1k.r1".to_owned(), None)]);
    assert_eq!(d.status.progress.as_deref(), Some("0/8"));

    // Seeding b to 1k: the first cell of b at 1k.
    let seeding = |target: &str, size: &str| Activity {
        target: target.into(),
        size: size.into(),
        cell: None,
        phase: "seeding".parse().unwrap(),
        ops_per_second: None,
    };
    o.activities.insert("local".into(), seeding("b", "1k"));
    let d = decide(&b, &o, &settings(0)).unwrap();
    assert_eq!(
        running(&d),
        [("b.local.1k.r1".to_owned(), Some("seeding".to_owned()))]
    );
    assert_eq!(
        d.status.progress.as_deref(),
        Some("0/8, b.local.1k.r1 seeding")
    );

    // Measuring a named cell.
    o.activities.insert(
        "local".into(),
        Activity {
            cell: Some("a.local.1k.r2".into()),
            phase: "measuring".parse().unwrap(),
            ops_per_second: None,
            ..seeding("a", "1k")
        },
    );
    let d = decide(&b, &o, &settings(0)).unwrap();
    assert_eq!(
        running(&d),
        [("a.local.1k.r2".to_owned(), Some("measuring".to_owned()))]
    );
    assert_eq!(
        d.status.progress.as_deref(),
        Some("0/8, a.local.1k.r2 measuring")
    );
    // The conditions count cells only, so they do not change with every phase.
    assert_eq!(
        cond(&d, "Reconciling").2,
        "runners started: 0/8 cells finished"
    );
    // The runner has started: the whole plan is left, from the start.
    let eta = d.status.estimated_completion_time.clone().unwrap().0;
    let started = d.status.started_at.clone().unwrap().0;
    assert!(eta > started, "{eta} vs {started}");

    // Word about a cell that has its result already is stale: the first pending cell runs.
    let id = crate::plan::cell_id("a", "local", "1k", 2);
    let result = testing::result(
        "bench",
        "a",
        "local",
        "1k",
        2,
        10,
        &[("find", 1000, 100)],
        None,
    );
    o.results.insert(
        id.clone(),
        ObservedResult::Document {
            config_map: format!("bench-{id}"),
            result: Box::new(result),
        },
    );
    let d = decide(&b, &o, &settings(0)).unwrap();
    assert_eq!(running(&d), [("b.local.1k.r1".to_owned(), None)]);
    assert_eq!(d.status.progress.as_deref(), Some("1/8"));
}

/// A result of `t` on `local` in slot `rep` with `ops` operations over 10 s.
fn add_slotted(o: &mut Observed, t: &str, rep: u32, ops: u64) {
    let id = crate::plan::cell_id(t, "local", "1k", rep);
    let mut result = testing::result(
        "bench",
        t,
        "local",
        "1k",
        rep,
        10,
        &[("find", ops, 100)],
        None,
    );
    result.slot = Some(crate::result::Slot {
        number: rep,
        position: u32::from(t == "b"),
    });
    o.results.insert(
        id.clone(),
        ObservedResult::Document {
            config_map: format!("bench-{id}"),
            result: Box::new(result),
        },
    );
}

#[test]
fn a_precision_goal_keeps_the_runner_going_and_its_added_slots_are_cells() {
    let spec = format!(
        "{}precision: {{mdePercent: 3, maxRepetitions: 6}}\n",
        EXTERNAL.replace("repetitions: 2", "repetitions: 3")
    );
    let b = bench("bench", &spec);
    let mut o = Observed {
        runner_access: true,
        ..Default::default()
    };
    o.jobs.insert(platform_job("local"), JobState::Active);
    // Four slots so far: b is 10 % faster than a in each, a drifting between slots.
    for (rep, ops) in [(1, 10_000), (2, 12_000), (3, 9_000), (4, 11_000)] {
        add_slotted(&mut o, "a", rep, ops);
        add_slotted(&mut o, "b", rep, ops * 11 / 10);
    }
    let d = decide(&b, &o, &settings(0)).unwrap();
    // The planned three slots are done, but the runner may add more: still running, and
    // the fourth slot's cells count.
    assert_eq!(d.status.phase, Some(StatusPhase::Running));
    assert_eq!(d.status.counts.as_ref().unwrap().total, 8);
    assert_eq!(d.status.counts.as_ref().unwrap().completed, 8);
    let c = &d.status.comparisons[0];
    assert_eq!((c.repetitions, c.paired_slots), (4, Some(4)));
    let (status, reason, message) = cond(&d, "Precision");
    assert_eq!((status, reason), ("True", "PrecisionReached"), "{message}");
    assert!(
        message.starts_with("MDE 0.") && message.contains("after 4 reps (b vs a at 1k on local)"),
        "{message}"
    );

    // The runner ended: the benchmark is complete.
    o.jobs.insert(platform_job("local"), JobState::Succeeded);
    let d = decide(&b, &o, &settings(10)).unwrap();
    assert_eq!(d.status.phase, Some(StatusPhase::Completed));
    assert_eq!(d.status.counts.as_ref().unwrap().total, 8);

    // Without a goal, the planned cells alone decide: a fourth slot is not a cell.
    let plain = bench(
        "bench",
        &EXTERNAL.replace("repetitions: 2", "repetitions: 3"),
    );
    let d = decide(&plain, &o, &settings(10)).unwrap();
    assert_eq!(d.status.counts.as_ref().unwrap().total, 6);
    assert!(d.status.condition("Precision").is_none());
}

#[test]
fn a_precision_goal_not_reached_says_by_how_much() {
    let spec = format!(
        "{}precision: {{mdePercent: 3}}\n",
        EXTERNAL.replace("repetitions: 2", "repetitions: 3")
    );
    let b = bench("bench", &spec);
    let mut o = Observed {
        runner_access: true,
        ..Default::default()
    };
    o.jobs.insert(platform_job("local"), JobState::Succeeded);
    // Ratios 1.1, 0.9, 1.05: far too noisy for 3 %.
    for (rep, a, b) in [(1, 10_000, 11_000), (2, 10_000, 9_000), (3, 10_000, 10_500)] {
        add_slotted(&mut o, "a", rep, a);
        add_slotted(&mut o, "b", rep, b);
    }
    let d = decide(&b, &o, &settings(0)).unwrap();
    let (status, reason, message) = cond(&d, "Precision");
    assert_eq!((status, reason), ("False", "PrecisionNotReached"));
    assert!(
        message.starts_with("MDE ")
            && message.ends_with("after 3 reps (b vs a at 1k on local); goal 3%"),
        "{message}"
    );
}

#[test]
fn members_that_are_not_guaranteed_get_a_measurement_advice_condition() {
    // SPEC provisions members without resources: BestEffort.
    let d = decide(&bench("bench", SPEC), &Observed::default(), &settings(0)).unwrap();
    let (status, reason, message) = cond(&d, "MeasurementAdvice");
    assert_eq!((status, reason), ("True", "SettingsAddNoise"));
    assert_eq!(
        message,
        "spec.replicaSet.resources: unset: the members run BestEffort, sharing CPU with \
         whatever else runs on their nodes and evicted first; set requests equal to limits, CPU \
         in whole cores (e.g. cpu: \"4\", memory: 16Gi), for Guaranteed QoS and, under the \
         kubelet's static CPU manager policy, cores of their own"
    );
    // Guaranteed with whole CPUs, or nothing provisioned: no such condition.
    let guaranteed = SPEC.replace(
        "replicaSet: {members: 3, storageSize: 1Gi}",
        "replicaSet: {members: 3, storageSize: 1Gi, resources: {limits: {cpu: '2', memory: 4Gi}}}",
    );
    assert_ne!(guaranteed, SPEC);
    let d = decide(
        &bench("bench", &guaranteed),
        &Observed::default(),
        &settings(0),
    )
    .unwrap();
    assert!(d.status.condition("MeasurementAdvice").is_none());
    let d = decide(
        &bench("bench", EXTERNAL),
        &Observed::default(),
        &settings(0),
    )
    .unwrap();
    assert!(d.status.condition("MeasurementAdvice").is_none());
}
