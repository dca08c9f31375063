//! String lengths drawn as `int` draws its values: uniform by default, or skewed to the shortest
//! (`zipfian`) or the longest (`latest`) length of the range.

use std::collections::BTreeMap;

use super::tests_parse::duration;
use super::*;

/// How often each length comes up over 20,000 documents of `{string: {min: 2, max: 10, …}}`.
fn lengths(distribution: &str) -> BTreeMap<usize, u32> {
    let text = format!(
        "version: 1
collections:
  - name: c
    fields: {{s: {{string: {{min: 2, max: 10{distribution}}}}}}}
operations: [{{name: all, find: {{collection: c}}}}]
phases: [{{name: m, operations: 1}}]
"
    );
    let w = parse(&text, duration).unwrap_or_else(|e| panic!("{e}"));
    let mut out = BTreeMap::new();
    for i in 0..20_000 {
        let len = w.document(1, 0, i).get_str("s").unwrap().len();
        *out.entry(len).or_default() += 1;
    }
    out
}

/// The share of rank 0 among 9 zipfian ranks (YCSB's constant 0.99).
fn top_share() -> f64 {
    1.0 / (1..=9).map(|i| f64::from(i).powf(-0.99)).sum::<f64>()
}

#[test]
fn lengths_are_uniform_unless_a_distribution_skews_them() {
    let uniform = lengths("");
    assert_eq!(
        uniform.keys().copied().collect::<Vec<_>>(),
        (2..=10).collect::<Vec<_>>()
    );
    for (len, n) in &uniform {
        let share = f64::from(*n) / 20_000.0;
        assert!((share - 1.0 / 9.0).abs() < 0.01, "length {len}: {share}");
    }
    let zipfian = lengths(", distribution: zipfian");
    let shortest = f64::from(zipfian[&2]) / 20_000.0;
    assert!(
        (shortest - top_share()).abs() < 0.01,
        "{shortest} vs {}",
        top_share()
    );
    assert!(
        zipfian[&2] > zipfian[&3] && zipfian[&3] > zipfian[&10],
        "{zipfian:?}"
    );
    let latest = lengths(", distribution: latest");
    let longest = f64::from(latest[&10]) / 20_000.0;
    assert!(
        (longest - top_share()).abs() < 0.01,
        "{longest} vs {}",
        top_share()
    );
}
