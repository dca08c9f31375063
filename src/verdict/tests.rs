use std::time::Duration;

use super::compare::ops_per_sec;
use super::stats::{ALPHA, Delta, Summary, holm};
use super::testing::{options, res, study};
use super::*;
use crate::measure::ErrorKind;
use crate::report::render_comparison;
use crate::result::CellStatus;
use crate::result::testing::{cell, identity, result_from};

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
    let (lo, hi) = d.ci95_percent.unwrap();
    assert!(close(lo, 5.343376273896673) && close(hi, 14.882976700523548));
    assert!(close(d.df.unwrap(), 4.0));
    assert!(close(d.p_value.unwrap(), 0.003602232609104004));
    assert!(close(d.mde_percent.unwrap(), 6.070504591228296));
    // One test: Holm leaves its p-value as it is.
    assert!(close(m.adjusted_p_value.unwrap(), 0.003602232609104004));
    let (lo, hi) = m.p99_delta.unwrap().ci95_percent.unwrap();
    assert!(close(lo, -20.251507999063197) && close(hi, 1.4152810424487947));
    let (lo, hi) = m.cpu_delta.unwrap().ci95_percent.unwrap();
    assert!(close(lo, -18.28058935829076) && close(hi, -0.9763254589517225));
    assert!(close(m.cpu_us_per_op.unwrap().mean, 45.0));
    // 0.5 $/node-hour × 3 nodes / (1100 ops/s × 3600 s) × 10⁶ = 0.3787878…
    assert!(close(m.cost_per_million_ops.unwrap(), 0.3787878787878788));
    assert_eq!(m.verdict, Verdict::Faster);
    assert_eq!(m.error_rate, Some(0.0));
}

#[test]
fn cells_of_one_slot_are_compared_paired() {
    use crate::result::Slot;
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
    assert_eq!(Some(d), Delta::paired(&pairs).ok());
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
    let tested: Vec<&ComparisonRow> = rows
        .iter()
        .filter(|r| r.adjusted_p_value.is_some())
        .collect();
    let raw: Vec<f64> = tested
        .iter()
        .map(|r| r.throughput_delta.unwrap().p_value.unwrap())
        .collect();
    let adjusted: Vec<f64> = tested.iter().map(|r| r.adjusted_p_value.unwrap()).collect();
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
        "mongo-9.0 +10.0% ±4.9% ops/s vs psmdb-8.0 at 1M on n2, 3 reps, MDE 6.1%"
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
        line.starts_with("no significant difference at 1M (±"),
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
