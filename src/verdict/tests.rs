use std::time::Duration;

use super::compare::ops_per_sec;
use super::stats::{self, ALPHA, Delta, Summary, holm};
use super::testing::{options, res, study};
use super::*;
use crate::api::VerdictMetric;
use crate::measure::ErrorKind;
use crate::report::render_comparison;
use crate::result::CellStatus;
use crate::result::testing::{cell, identity, result_from};
use crate::result::{CellResult, Slot};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

fn verdict_of(c: &Comparison, target: &str) -> Verdict {
    c.groups[0]
        .rows
        .iter()
        .find(|r| r.target == target)
        .unwrap()
        .verdict
}

#[test]
fn deltas_intervals_and_tests_across_three_repetitions() {
    let c = compare(&study(), &options()).unwrap();
    assert_eq!(c.groups.len(), 1);
    let rows = &c.groups[0].rows;
    assert_eq!(rows[0].target, "psmdb-8.0");
    assert_eq!(rows[0].verdict, Verdict::Baseline);
    assert_eq!(rows[0].throughput_delta, None);
    let m = &rows[1];
    assert_eq!((m.target.as_str(), m.repetitions), ("mongo-9.0", 3));
    // Independent mpmath computation (Welch df = 4, Fieller's ratio interval):
    // ops +10 % [5.343376273896673, 14.882976700523548], p = 0.003602232609104004,
    // MDE 6.070504591228296 %; p99 −10 % [−20.251507999063197, 1.4152810424487947];
    // CPU −10 % [−18.28058935829076, −0.9763254589517225].
    let d = m.throughput_delta.unwrap();
    assert!(close(d.percent, 10.0));
    assert_eq!(d.method, stats::Method::Welch);
    assert!(close(d.df.unwrap(), 4.0));
    assert!(close(d.p_value.unwrap(), 0.003602232609104004));
    // One test: Holm leaves its p-value and level as they are.
    assert_eq!(c.family, 1);
    let v = &m.verdicts[0];
    assert_eq!(
        (v.metric, v.verdict),
        (VerdictMetric::Throughput, Verdict::Faster)
    );
    assert_eq!(v.delta, Some(d));
    let (lo, hi) = v.interval_percent.unwrap();
    assert!(close(lo, 5.343376273896673) && close(hi, 14.882976700523548));
    assert_eq!(v.interval_confidence, Some(0.95));
    assert!(close(v.mde_percent.unwrap(), 6.070504591228296));
    assert!(close(v.adjusted_p_value.unwrap(), 0.003602232609104004));
    let (lo, hi) = m.p99_delta.unwrap().interval_percent(ALPHA).unwrap();
    assert!(close(lo, -20.251507999063197) && close(hi, 1.4152810424487947));
    let (lo, hi) = m.cpu_delta.unwrap().interval_percent(ALPHA).unwrap();
    assert!(close(lo, -18.28058935829076) && close(hi, -0.9763254589517225));
    assert!(close(m.cpu_us_per_op.unwrap().mean, 45.0));
    // 0.5 $/node-hour × 3 nodes / (1100 ops/s × 3600 s) × 10⁶ = 0.3787878…
    assert!(close(m.cost_per_million_ops.unwrap(), 0.3787878787878788));
    assert_eq!(m.verdict, Verdict::Faster);
    assert_eq!(m.error_rate, Some(0.0));
}

#[test]
fn cells_of_one_slot_are_compared_paired() {
    // The baseline drifts between slots; the candidate is 3 % above it in each.
    let mut results = Vec::new();
    for (slot, base) in [(1, 1000), (2, 1200), (3, 900), (4, 1100)] {
        for (position, (target, ops)) in [("psmdb-8.0", base), ("mongo-9.0", base * 103 / 100)]
            .into_iter()
            .enumerate()
        {
            let mut r = res(target, slot, ops, 100, Some(50));
            r.slot = Some(Slot {
                number: slot,
                position: position as u32,
            });
            results.push(r);
        }
    }
    let c = compare(&results, &options()).unwrap();
    let m = &c.groups[0].rows[1];
    let d = m.throughput_delta.unwrap();
    assert_eq!(d.pairs, Some(4));
    let pairs: Vec<(f64, f64)> = (0..4)
        .map(|i| {
            (
                ops_per_sec(&results[2 * i]).unwrap(),
                ops_per_sec(&results[2 * i + 1]).unwrap(),
            )
        })
        .collect();
    assert_eq!(Some(d), Delta::paired(&pairs, None).ok());
    assert_eq!(d.method, stats::Method::Paired);
    assert!(close(d.percent, 3.0), "{d:?}");
    // Independent groups would see the drift (CV about 12 %) and no difference.
    let welch = Delta::between(
        &Summary::of(&pairs.iter().map(|p| p.0).collect::<Vec<_>>()).unwrap(),
        &Summary::of(&pairs.iter().map(|p| p.1).collect::<Vec<_>>()).unwrap(),
    )
    .unwrap();
    assert!(welch.p_value.unwrap() > 0.5, "{welch:?}");
    assert_eq!(m.verdict, Verdict::Faster);
    let text = render_comparison(&c);
    assert!(
        text.contains("  mongo-9.0: paired with the baseline by slot over 4 slots\n"),
        "{text}"
    );
}

#[test]
fn verdicts_for_slower_equal_few_and_different_identities() {
    let mut results = study();
    // slower: 900 ± 10; equal: 1000 ± 10 (not significant); two: two repetitions only.
    for (rep, n) in [(1, 890), (2, 900), (3, 910)] {
        results.push(res("slow", rep, n, 200, Some(50)));
    }
    for (rep, n) in [(1, 990), (2, 1000), (3, 1010)] {
        results.push(res("same", rep, n, 200, Some(50)));
    }
    for (rep, n) in [(1, 1500), (2, 1510)] {
        results.push(res("two", rep, n, 200, Some(50)));
    }
    for rep in 1..=3 {
        let mut other = res("other-seed", rep, 1500 + rep as usize, 200, Some(50));
        other.identity = identity(&[("seed", "2")]);
        results.push(other);
    }
    let c = compare(&results, &options()).unwrap();
    assert_eq!(verdict_of(&c, "mongo-9.0"), Verdict::Faster);
    assert_eq!(verdict_of(&c, "slow"), Verdict::Slower);
    assert_eq!(verdict_of(&c, "same"), Verdict::NoSignificantDifference);
    assert_eq!(verdict_of(&c, "two"), Verdict::Inconclusive);
    assert_eq!(verdict_of(&c, "other-seed"), Verdict::NotComparable);
    let rows = &c.groups[0].rows;
    let reason = |t: &str| rows.iter().find(|r| r.target == t).unwrap().reason.clone();
    assert_eq!(
        reason("two").unwrap(),
        "2 valid repetitions of two and 3 of psmdb-8.0; a verdict needs 3 valid \
         repetitions on each side"
    );
    assert_eq!(
        reason("other-seed").unwrap(),
        "workload identities differ in seed (1 vs 2) (psmdb-8.0 vs other-seed)"
    );
    // Holm over the three tested rows of the whole comparison (mongo-9.0, slow, same).
    let tested: Vec<&ComparisonRow> = rows.iter().filter(|r| !r.verdicts.is_empty()).collect();
    let raw: Vec<f64> = tested
        .iter()
        .map(|r| r.throughput_delta.unwrap().p_value.unwrap())
        .collect();
    let adjusted: Vec<f64> = tested
        .iter()
        .map(|r| r.verdicts[0].adjusted_p_value.unwrap())
        .collect();
    assert_eq!(c.family, 3);
    assert_eq!(tested.len(), 3);
    assert_eq!(adjusted, holm(&raw));
}

#[test]
fn holm_correction_can_withdraw_a_marginal_verdict() {
    // A marginal difference is significant alone (p ≈ 0.02) and not once four other
    // tests share the level.
    let mut results = Vec::new();
    for (rep, n) in [(1, 1000), (2, 1010), (3, 990)] {
        results.push(res("base", rep, n, 200, None));
    }
    for (rep, n) in [(1, 1020), (2, 1030), (3, 1025)] {
        results.push(res("marginal", rep, n, 200, None));
    }
    let options = CompareOptions {
        baseline: "base".into(),
        ..CompareOptions::default()
    };
    let alone = compare(&results, &options).unwrap();
    let p = alone.groups[0].rows[1]
        .throughput_delta
        .unwrap()
        .p_value
        .unwrap();
    assert!(p < ALPHA && p * 5.0 >= ALPHA, "{p}");
    assert_eq!(verdict_of(&alone, "marginal"), Verdict::Faster);
    for t in ["n1", "n2", "n3", "n4"] {
        for (rep, n) in [(1, 1000), (2, 1010), (3, 990)] {
            results.push(res(t, rep, n, 200, None));
        }
    }
    let many = compare(&results, &options).unwrap();
    assert_eq!(
        verdict_of(&many, "marginal"),
        Verdict::NoSignificantDifference
    );
}

#[test]
fn throughput_counts_only_successful_operations() {
    // The same completions, but half of the fast server's operations failed: its
    // successful throughput is lower than the baseline's, not higher.
    let mut results = Vec::new();
    for rep in 1..=3u32 {
        results.push(res("base", rep, 1000 + rep as usize, 200, None));
        let ops: Vec<_> = (0..1500 + rep as usize)
            .map(|i| {
                let outcome = if i % 2 == 0 {
                    Ok(())
                } else {
                    Err(ErrorKind::Network)
                };
                ("find", 100, outcome)
            })
            .collect();
        results.push(result_from(
            cell("failing", "n2", "1M", rep),
            Duration::from_secs(1),
            &ops,
            None,
        ));
    }
    let c = compare(
        &results,
        &CompareOptions {
            baseline: "base".into(),
            ..CompareOptions::default()
        },
    )
    .unwrap();
    let failing = &c.groups[0].rows[1];
    assert_eq!(failing.verdict, Verdict::Slower);
    assert!((failing.error_rate.unwrap() - 0.5).abs() < 0.001);
}

#[test]
fn invalid_and_incomplete_cells_are_left_out_and_named() {
    let mut results = study();
    results[3].status = CellStatus::Incomplete {
        reason: "target mongo-9.0: server killed in phase measured".into(),
    };
    results[5].invalid_reasons = vec!["election: term 3 → 4".into()];
    let c = compare(&results, &options()).unwrap();
    let m = &c.groups[0].rows[1];
    assert_eq!(m.repetitions, 1);
    assert_eq!(
        m.excluded,
        [
            "repetition 2: incomplete: target mongo-9.0: server killed in phase measured",
            "repetition 3: invalid: election: term 3 → 4"
        ]
    );
    assert_eq!(m.verdict, Verdict::Inconclusive);
    assert_eq!(m.ops_per_sec.unwrap().mean, 1100.0);
    assert_eq!(headline(&c).unwrap(), "inconclusive: 1 repetition");
}

#[test]
fn groups_split_by_platform_and_size_and_missing_baselines_are_said() {
    let mut results = study();
    let mut c4a = res("mongo-9.0", 1, 1000, 200, None);
    c4a.cell.platform = "c4a".into();
    results.push(c4a);
    let c = compare(&results, &options()).unwrap();
    assert_eq!(c.groups.len(), 2);
    let g = &c.groups[1];
    assert_eq!((g.platform.as_str(), g.rows.len()), ("c4a", 1));
    assert_eq!(g.rows[0].verdict, Verdict::NoBaseline);
    assert_eq!(g.rows[0].cpu_us_per_op, None);
    assert_eq!(g.rows[0].cost_per_million_ops, None); // no price for c4a
    // Two platforms: the headline names the platform.
    assert_eq!(
        headline(&c).unwrap(),
        "mongo-9.0 (MongoDB 9.0.1) +10.0% [+5.3%, +14.9%] ops/s vs psmdb-8.0 (Percona Server for \
         MongoDB 8.0.12-4) at 1M on n2, 3 reps, MDE 6.1%"
    );
}

#[test]
fn a_comparison_of_load_sweeps_compares_knees_under_the_goal() {
    let sweep = crate::result::SweepRecord {
        goal: Some("p99 ≤ 10ms".into()),
        bound_us: Some(10_000),
        steps: Vec::new(),
        knee: None,
        bounded: true,
    };
    let mut results = study();
    let c = compare(&results, &options()).unwrap();
    assert_eq!(c.knee_goal, None);
    let before = headline(&c).unwrap();
    for r in &mut results {
        r.sweep = Some(sweep.clone());
    }
    let c = compare(&results, &options()).unwrap();
    assert_eq!(c.knee_goal.as_deref(), Some("p99 ≤ 10ms"));
    // The same figures, said of the knees.
    assert_eq!(
        headline(&c).unwrap(),
        before
            .replacen(" +", " sustains +", 1)
            .replace(" at 1M,", " at p99 ≤ 10ms, 1M,")
    );
    // One cell that is not a sweep: not a comparison of knees.
    results[0].sweep = None;
    assert_eq!(compare(&results, &options()).unwrap().knee_goal, None);
}

#[test]
fn headlines_say_only_what_was_tested() {
    let mut same = Vec::new();
    for (rep, a, b) in [(1, 1000, 1003), (2, 1010, 1004), (3, 990, 995)] {
        same.push(res("base", rep, a, 200, None));
        same.push(res("other", rep, b, 200, None));
    }
    let options = CompareOptions {
        baseline: "base".into(),
        ..CompareOptions::default()
    };
    let c = compare(&same, &options).unwrap();
    let line = headline(&c).unwrap();
    assert!(
        line.starts_with("no significant difference at 1M: ops/s [-"),
        "{line}"
    );
    let single = vec![
        res("base", 1, 1000, 200, None),
        res("other", 1, 1200, 200, None),
    ];
    let c = compare(&single, &options).unwrap();
    assert_eq!(headline(&c).unwrap(), "inconclusive: 1 repetition");
    let alone = vec![res("base", 1, 1000, 200, None)];
    assert_eq!(headline(&compare(&alone, &options).unwrap()), None);
}

#[test]
fn missing_baselines_and_empty_input_are_refused() {
    let e = compare(
        &study(),
        &CompareOptions {
            baseline: "psmdb-7.0".into(),
            ..options()
        },
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "baseline target \"psmdb-7.0\" has no result; targets with results: mongo-9.0, \
         psmdb-8.0"
    );
    assert!(matches!(compare(&[], &options()), Err(CompareError::Empty)));
}

fn with_metrics(metrics: &[VerdictMetric]) -> CompareOptions {
    CompareOptions {
        metrics: metrics.to_vec(),
        ..options()
    }
}

#[test]
fn every_declared_metric_gets_a_verdict_and_holm_adjusts_them_together() {
    // The study's three figures, each 10 % apart, Welch's tests (mpmath): ops/s p 0.0036023,
    // CPU per operation p 0.037590, p99 p 0.070484. As one family of three, Holm's steps are
    // 5 %/3, 5 %/2 and 5 %: ops/s is significant at 1.667 %; CPU is not at 2.5 %, which stops
    // the procedure, and p99 is judged at 2.5 % too.
    let all = [
        VerdictMetric::Throughput,
        VerdictMetric::CpuPerOperation,
        VerdictMetric::P99Latency,
    ];
    let c = compare(&study(), &with_metrics(&all)).unwrap();
    assert_eq!((c.family, c.metrics.as_slice()), (3, &all[..]));
    let m = &c.groups[0].rows[1];
    let expected = [
        (Verdict::Faster, 0.010806697827312011, 1.0 - ALPHA / 3.0),
        (Verdict::NoSignificantDifference, 0.07518022302229294, 0.975),
        (Verdict::NoSignificantDifference, 0.07518022302229294, 0.975),
    ];
    let intervals = [
        (3.420514436756669, 17.040626470392178),
        (-20.321393462097613, 1.502001344166647),
        (-22.75044586079624, 4.601976713775737),
    ];
    // MDE at 5 %/3 and 80 % power, and with the spread at its upper 80 % bound.
    let mdes = [
        (8.004525962106467, 12.467652907793495),
        (16.009051924212934, 24.93530581558699),
        (20.01131490526617, 31.169132269483737),
    ];
    for (i, v) in m.verdicts.iter().enumerate() {
        assert_eq!(v.metric, all[i]);
        let (verdict, adjusted, confidence) = expected[i];
        assert_eq!(v.verdict, verdict, "{v:?}");
        assert!(close(v.adjusted_p_value.unwrap(), adjusted), "{v:?}");
        assert!(close(v.interval_confidence.unwrap(), confidence), "{v:?}");
        let (lo, hi) = v.interval_percent.unwrap();
        assert!(
            close(lo, intervals[i].0) && close(hi, intervals[i].1),
            "{v:?}"
        );
        assert!(close(v.mde_percent.unwrap(), mdes[i].0), "{v:?}");
        assert!(close(v.mde_upper_percent.unwrap(), mdes[i].1), "{v:?}");
        // Never an interval that excludes 0 beside no significant difference.
        assert_eq!(lo > 0.0 || hi < 0.0, v.verdict.is_difference());
    }
    assert_eq!(m.verdict, Verdict::Faster, "the first declared metric's");
    assert_eq!(
        headline(&c).unwrap(),
        "mongo-9.0 (MongoDB 9.0.1) +10.0% [+3.4%, +17.0%] ops/s vs psmdb-8.0 (Percona Server for \
         MongoDB 8.0.12-4) at 1M, 3 reps, MDE 8.0%"
    );
}

#[test]
fn cpu_per_operation_alone_is_cheaper_or_costlier() {
    // Declared alone, the CPU test (p 0.037590) is significant: 45 µs against 50 µs per
    // operation is cheaper, Fieller's 95 % interval [−18.281 %, −0.976 %] (mpmath).
    let c = compare(&study(), &with_metrics(&[VerdictMetric::CpuPerOperation])).unwrap();
    let m = &c.groups[0].rows[1];
    assert_eq!((c.family, m.verdict), (1, Verdict::Cheaper));
    let v = &m.verdicts[0];
    let (lo, hi) = v.interval_percent.unwrap();
    assert!(close(lo, -18.28058935829076) && close(hi, -0.9763254589517225));
    assert!(close(v.mde_percent.unwrap(), 12.141009182456594));
    assert!(close(v.mde_upper_percent.unwrap(), 18.910537507628753));
    assert_eq!(
        headline(&c).unwrap(),
        "mongo-9.0 (MongoDB 9.0.1) -10.0% [-18.3%, -1.0%] CPU per operation vs psmdb-8.0 (Percona \
         Server for MongoDB 8.0.12-4) at 1M, 3 reps, \
         MDE 12.1%"
    );
    // The other way round it is costlier; p99 alone is not significant (p 0.070).
    let swapped = CompareOptions {
        baseline: "mongo-9.0".into(),
        ..with_metrics(&[VerdictMetric::CpuPerOperation])
    };
    let c = compare(&study(), &swapped).unwrap();
    assert_eq!(c.groups[0].rows[1].verdict, Verdict::Costlier);
    let c = compare(&study(), &with_metrics(&[VerdictMetric::P99Latency])).unwrap();
    assert_eq!(
        c.groups[0].rows[1].verdict,
        Verdict::NoSignificantDifference
    );
    // The metrics the results record stand when the options declare none.
    let mut recorded = study();
    for r in &mut recorded {
        r.design = Some(crate::result::VerdictDesign {
            metrics: vec![VerdictMetric::CpuPerOperation],
            pilot_slots: None,
            precision_goal_percent: None,
        });
    }
    let c = compare(&recorded, &options()).unwrap();
    assert_eq!(c.metrics, [VerdictMetric::CpuPerOperation]);
}

fn slotted(target: &str, slot: u32, ops: usize) -> CellResult {
    let mut r = res(target, slot, ops, 100, Some(50));
    r.slot = Some(Slot {
        number: slot,
        position: 0,
    });
    r
}

#[test]
fn a_paired_schedule_stays_paired_when_too_few_pairs_remain() {
    // Three slots, one of the candidate's cells invalid: two pairs are left. The schedule
    // paired them, so the verdict waits for a third pair instead of switching to Welch's test.
    let mut results = Vec::new();
    for (slot, base, cand) in [
        (1, 1000, 1100),
        (2, 1200, 1320),
        (3, 900, 990),
        (4, 1000, 1100),
    ] {
        results.push(slotted("psmdb-8.0", slot, base));
        results.push(slotted("mongo-9.0", slot, cand));
    }
    results[3].invalid_reasons.push("an election".into());
    results[5].invalid_reasons.push("an election".into());
    let c = compare(&results, &options()).unwrap();
    let m = &c.groups[0].rows[1];
    assert_eq!((m.repetitions, m.verdict), (2, Verdict::Inconclusive));
    // A fifth slot the baseline did not run: three valid repetitions of the candidate, four of
    // the baseline, still two pairs.
    results.push(slotted("mongo-9.0", 5, 1100));
    let c = compare(&results, &options()).unwrap();
    let m = &c.groups[0].rows[1];
    assert_eq!((m.repetitions, m.verdict), (3, Verdict::Inconclusive));
    assert_eq!(
        m.reason.as_deref(),
        Some("2 slots held a valid ops/s of both targets; a paired verdict needs 3")
    );
    assert_eq!(m.throughput_delta.unwrap().method, stats::Method::Paired);
}

#[test]
fn a_recorded_pilot_makes_the_test_two_stage_and_the_method_says_so() {
    let mut results = Vec::new();
    for (slot, base, cand) in [
        (1, 1000, 1030),
        (2, 1200, 1230),
        (3, 900, 935),
        (4, 1100, 1129),
        (5, 1050, 1086),
    ] {
        for (target, ops) in [("psmdb-8.0", base), ("mongo-9.0", cand)] {
            let mut r = slotted(target, slot, ops);
            r.design = Some(crate::result::VerdictDesign {
                metrics: vec![VerdictMetric::Throughput],
                pilot_slots: Some(3),
                precision_goal_percent: Some(3.0),
            });
            results.push(r);
        }
    }
    let c = compare(&results, &options()).unwrap();
    let v = &c.groups[0].rows[1].verdicts[0];
    let pairs: Vec<(f64, f64)> = results
        .chunks(2)
        .map(|s| (ops_per_sec(&s[0]).unwrap(), ops_per_sec(&s[1]).unwrap()))
        .collect();
    assert_eq!(v.delta, Delta::paired(&pairs, Some(3)).ok());
    assert_eq!(
        v.delta.unwrap().method,
        stats::Method::TwoStage { pilot: 3 }
    );
    let lines = method_lines(&c);
    assert_eq!(
        lines[1],
        "Test: Stein's two-stage paired t-test (the spread of the first 3 slots, 2 degrees of \
         freedom) over 5 slots."
    );
    assert!(lines[2].starts_with("Holm–Bonferroni over the 1 test of the comparison"));
    assert!(lines[3].starts_with("Intervals: Holm-adjusted"));
}

#[test]
fn a_target_that_differs_in_more_than_its_version_is_warned_about_in_the_headline() {
    use crate::measure::canary::{CanaryDeviation, ServerCanary};
    let mut results = study();
    for r in results.iter_mut().filter(|r| r.cell.target == "mongo-9.0") {
        r.server.topology = Some("standalone".into());
    }
    // One of mongo-9.0's cells had a server node's canary deviate: kept, and counted.
    results[1].server_canaries = vec![ServerCanary {
        address: "m0:27117".into(),
        figures: None,
        deviation: Some(CanaryDeviation {
            figure: "CPU".into(),
            percent: 12.0,
        }),
        error: None,
    }];
    let c = compare(&results, &options()).unwrap();
    let row = &c.groups[0].rows[1];
    assert_eq!(
        row.unasked_differences,
        ["topology standalone vs replica set"]
    );
    assert_eq!((row.canary_flagged, row.repetitions), (1, 3));
    assert_eq!(
        row.warnings("psmdb-8.0"),
        [
            "differs from psmdb-8.0 in more than its version: topology standalone vs replica \
             set; the difference measured includes these",
            "1 of its 3 valid cells flagged by a noise canary (kept in the figures)",
        ]
    );
    assert!(c.groups[0].rows[0].warnings("psmdb-8.0").is_empty());
    assert_eq!(
        headline(&c).unwrap(),
        "mongo-9.0 (MongoDB 9.0.1) +10.0% [+5.3%, +14.9%] ops/s vs psmdb-8.0 (Percona Server for \
         MongoDB 8.0.12-4) at 1M, 3 reps, MDE 6.1%; they also differ in topology standalone vs \
         replica set"
    );
}
