use super::*;
use crate::report::comparison_json::ComparisonDocument;
use crate::verdict::compare;
use crate::verdict::testing::{options, study};

/// The study against mongo-9.0: psmdb-8.0 is 9.1 % slower (1000 against 1100 ops/s) and
/// 11.1 % costlier (50 against 45 µs of CPU per operation).
fn against_mongo(metrics: &[VerdictMetric]) -> ComparisonDocument {
    let mut o = options();
    o.baseline = "mongo-9.0".into();
    o.metrics = metrics.to_vec();
    ComparisonDocument::of(&compare(&study(), &o).unwrap())
}

fn failures(gate: Gate, doc: &ComparisonDocument) -> Vec<(String, &'static str)> {
    gate.judge(doc)
        .unwrap()
        .into_iter()
        .filter_map(|c| Some((c.name, c.failure?.flag)))
        .collect()
}

#[test]
fn slower_fails_only_beyond_the_percentage() {
    let doc = against_mongo(&[VerdictMetric::Throughput]);
    let cases = Gate::default().judge(&doc).unwrap();
    assert_eq!(cases.len(), 1);
    assert_eq!(cases[0].name, "n2/1M/psmdb-8.0 vs mongo-9.0 throughput");
    assert_eq!(cases[0].workload, "flights/v1");
    assert_eq!(cases[0].failure, None, "no rule set, nothing fails");
    let m = &doc.groups[0].rows[1].verdicts[0];
    assert_eq!(m.verdict, Verdict::Slower);
    let i = m.interval.unwrap();
    assert_eq!(
        cases[0].verdict_line,
        format!(
            "slower -9.1% [{:+.1}%, {:+.1}%] (95%), MDE {:.1}% (cautious {:.1}%)",
            i.low_percent,
            i.high_percent,
            m.mde_percent.unwrap(),
            m.cautious_mde_percent.unwrap()
        )
    );
    let slower = |p: f64| Gate {
        fail_on_slower: Some(p),
        ..Gate::default()
    };
    let failed = slower(5.0).judge(&doc).unwrap();
    assert_eq!(
        failed[0].failure,
        Some(Failure {
            flag: "fail-on-slower",
            message: "slower by more than 5% (--fail-on-slower 5)".into()
        })
    );
    assert_eq!(failures(slower(0.0), &doc).len(), 1);
    // −9.09 % is not below −9.1 %, nor below −10 %.
    assert_eq!(failures(slower(9.1), &doc), []);
    assert_eq!(failures(slower(10.0), &doc), []);
    // A faster target never fails the slower rule.
    let faster = ComparisonDocument::of(&compare(&study(), &options()).unwrap());
    assert_eq!(failures(slower(0.0), &faster), []);
}

#[test]
fn costlier_fails_on_cpu_per_operation_beyond_the_percentage() {
    let doc = against_mongo(&[VerdictMetric::Throughput, VerdictMetric::CpuPerOperation]);
    let m = &doc.groups[0].rows[1].verdicts[1];
    assert_eq!(
        (m.metric, m.verdict),
        (VerdictMetric::CpuPerOperation, Verdict::Costlier)
    );
    assert_eq!(format!("{:.2}", m.estimate_percent.unwrap()), "11.11");
    let costlier = |p: f64| Gate {
        fail_on_costlier: Some(p),
        ..Gate::default()
    };
    assert_eq!(
        failures(costlier(10.0), &doc),
        [(
            "n2/1M/psmdb-8.0 vs mongo-9.0 cpuPerOperation".to_owned(),
            "fail-on-costlier"
        )]
    );
    assert_eq!(failures(costlier(12.0), &doc), []);
}

#[test]
fn inconclusive_fails_only_with_its_flag() {
    let results: Vec<_> = study()
        .into_iter()
        .filter(|r| r.cell.repetition < 3)
        .collect();
    let doc = ComparisonDocument::of(&compare(&results, &options()).unwrap());
    let strict = Gate {
        fail_on_inconclusive: true,
        fail_on_slower: Some(0.0),
        ..Gate::default()
    };
    let cases = strict.judge(&doc).unwrap();
    assert_eq!(cases.len(), 1);
    assert_eq!(
        cases[0].verdict_line,
        "inconclusive +9.9% (2 valid repetitions of mongo-9.0 and 2 of psmdb-8.0; a verdict \
         needs 3 valid repetitions on each side)"
    );
    assert_eq!(
        cases[0].failure.as_ref().map(|f| f.flag),
        Some("fail-on-inconclusive")
    );
    let lenient = Gate {
        fail_on_slower: Some(0.0),
        ..Gate::default()
    };
    assert_eq!(failures(lenient, &doc), []);
}

#[test]
fn a_rule_it_cannot_judge_is_refused() {
    let doc = against_mongo(&[VerdictMetric::Throughput]);
    let e = Gate {
        fail_on_costlier: Some(5.0),
        ..Gate::default()
    }
    .judge(&doc)
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "--fail-on-costlier: cpuPerOperation is not a verdict metric of these results \
         (declared: throughput); declare it in spec.verdict.metrics"
    );
    let e = Gate {
        fail_on_slower: Some(-1.0),
        ..Gate::default()
    }
    .judge(&doc)
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "--fail-on-slower -1: expected a percentage of 0 or more"
    );
    let alone: Vec<_> = study()
        .into_iter()
        .filter(|r| r.cell.target == "psmdb-8.0")
        .collect();
    let doc = ComparisonDocument::of(&compare(&alone, &options()).unwrap());
    let e = Gate {
        fail_on_inconclusive: true,
        ..Gate::default()
    }
    .judge(&doc)
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "the gate has nothing to judge: no target was compared with baseline psmdb-8.0"
    );
    assert_eq!(Gate::default().judge(&doc).unwrap(), []);
}
