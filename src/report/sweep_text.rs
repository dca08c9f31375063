//! A load sweep in words, for the text and Markdown reports: its knee and its steps, each step
//! as `load → achieved ops/s (p99 µs)`, marked ✗ when saturated.

use crate::result::{CellResult, SweepRecord};

/// The knee's achieved ops/s, `≥ ` before it when no step saturated, `none` without a knee.
pub fn knee_text(s: &SweepRecord) -> String {
    s.knee_step().map_or("none".to_owned(), |k| {
        let at_least = if s.bounded { "" } else { "≥ " };
        format!("{at_least}{:.0}", k.ops_per_sec)
    })
}

/// Every step in the order it ran.
pub fn steps_text(s: &SweepRecord) -> String {
    let steps: Vec<String> = s
        .steps
        .iter()
        .map(|p| {
            let p99 = p.p99_us.map_or("-".to_owned(), |v| v.to_string());
            let mark = if p.saturated.is_some() { " ✗" } else { "" };
            format!("{} → {:.0} ({p99}){mark}", p.load(), p.ops_per_sec)
        })
        .collect();
    steps.join(", ")
}

/// A line per load sweep cell with its knee and steps; empty without one.
pub fn render_sweeps(results: &[CellResult]) -> String {
    let mut out = String::new();
    for r in results {
        let Some(s) = &r.sweep else { continue };
        let goal = s
            .goal
            .as_deref()
            .map_or(String::new(), |g| format!(" at {g}"));
        out.push_str(&format!(
            "{}: knee {} ops/s{goal}; steps, load → achieved ops/s (p99 µs): {}\n",
            r.cell,
            knee_text(s),
            steps_text(s)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::SweepStep;
    use crate::result::testing::{cell, result_from};

    #[test]
    fn a_sweep_reads_as_its_knee_and_its_steps() {
        let step = |rate: Option<u64>, workers: u32, ops: f64, saturated: bool| SweepStep {
            target_ops_per_sec: rate,
            workers,
            ops_per_sec: ops,
            error_rate: 0.0,
            p50_us: None,
            p99_us: Some(9000),
            p999_us: None,
            goal_us: None,
            saturated: saturated.then(|| "p99 12.0ms broke p99 ≤ 10ms".to_owned()),
        };
        let mut r = result_from(
            cell("a", "p", "1k", 2),
            std::time::Duration::from_secs(1),
            &[],
            None,
        );
        assert_eq!(render_sweeps(std::slice::from_ref(&r)), "");
        r.sweep = Some(SweepRecord {
            goal: Some("p99 ≤ 10ms".into()),
            bound_us: Some(10_000),
            steps: vec![
                step(Some(500), 16, 499.6, false),
                step(Some(1000), 16, 998.0, true),
            ],
            knee: Some(0),
            bounded: true,
        });
        assert_eq!(
            render_sweeps(std::slice::from_ref(&r)),
            format!(
                "{}: knee 500 ops/s at p99 ≤ 10ms; steps, load → achieved ops/s (p99 µs): \
                 500 ops/s → 500 (9000), 1000 ops/s → 998 (9000) ✗\n",
                r.cell
            )
        );
        let crowd = SweepRecord {
            goal: None,
            bound_us: None,
            steps: vec![step(None, 1, 80.0, false), step(None, 2, 160.4, false)],
            knee: Some(1),
            bounded: false,
        };
        assert_eq!(knee_text(&crowd), "≥ 160");
        assert_eq!(
            steps_text(&crowd),
            "1 worker → 80 (9000), 2 workers → 160 (9000)"
        );
        let none = SweepRecord {
            knee: None,
            ..crowd
        };
        assert_eq!(knee_text(&none), "none");
    }
}
