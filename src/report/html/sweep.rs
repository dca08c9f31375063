//! The load sweep section: per group, latency against achieved throughput for every sweep, with
//! the goal line, then each target's knees and every step in numbers.

use crate::report::ReportError;
use crate::report::groups::Group;
use crate::report::plots::{self, Curve};
use crate::result::SweepStep;

use super::figures::{color_of, figure, palette};
use super::markup::{note, section, table};

/// Columns of the step table.
const STEP_COLUMNS: [&str; 10] = [
    "target",
    "repetition",
    "step",
    "target ops/s",
    "workers",
    "achieved ops/s",
    "p50 µs",
    "p99 µs",
    "p99.9 µs",
    "state",
];

/// The section, empty when no cell is a sweep.
pub(super) fn sweeps(groups: &[Group<'_>]) -> Result<String, ReportError> {
    let swept = |g: &&Group<'_>| {
        g.targets
            .iter()
            .flat_map(|t| &t.cells)
            .any(|c| c.sweep.is_some())
    };
    let colors = palette(groups);
    let groups: Vec<&Group<'_>> = groups.iter().filter(swept).collect();
    if groups.is_empty() {
        return Ok(String::new());
    }
    let mut out = note(
        "Each line is one sweep (one cell): its steps' achieved throughput against the goal's \
         latency percentile (the 99th of all operations without a goal), from each operation's \
         intended start (from its send, in a closed loop); the dashed line is the goal. The knee \
         is the sustained step of the highest load below the first saturated one; its figures \
         are the cell's.",
    );
    for g in groups {
        let title = g.title();
        let mut curves = Vec::new();
        let mut bound = None;
        let mut goal = None;
        let mut knees = Vec::new();
        let mut steps_table = Vec::new();
        for t in &g.targets {
            let color = color_of(&colors, t.target);
            for c in &t.cells {
                let Some(s) = &c.sweep else { continue };
                bound = bound.or(s.bound_us.map(|b| b as f64));
                goal = goal.or(s.goal.clone());
                let mut steps: Vec<&SweepStep> = s.steps.iter().collect();
                steps.sort_by_key(|p| (p.target_ops_per_sec, p.workers));
                curves.push(Curve {
                    label: format!("{} r{}", t.target, c.cell.repetition),
                    points: steps
                        .iter()
                        .filter_map(|p| Some((p.ops_per_sec, y_of(p, s.goal.is_some())? as f64)))
                        .collect(),
                    color,
                });
                let knee = s.knee_step().map_or("none".to_owned(), |k| {
                    let lower = if s.bounded {
                        ""
                    } else {
                        " (never saturated: at least)"
                    };
                    format!("{:.0}{lower}", k.ops_per_sec)
                });
                let valid = if c.is_valid() { "valid" } else { "invalid" };
                knees.push(vec![
                    t.target.to_owned(),
                    c.cell.repetition.to_string(),
                    knee,
                    s.steps.len().to_string(),
                    valid.to_owned(),
                ]);
                for (i, p) in s.steps.iter().enumerate() {
                    let mark = if s.knee == Some(i) { " (knee)" } else { "" };
                    let us = |v: Option<u64>| v.map_or("-".to_owned(), |v| v.to_string());
                    steps_table.push(vec![
                        t.target.to_owned(),
                        c.cell.repetition.to_string(),
                        format!("{}{mark}", i + 1),
                        us(p.target_ops_per_sec),
                        p.workers.to_string(),
                        format!("{:.1}", p.ops_per_sec),
                        us(p.p50_us),
                        us(p.p99_us),
                        us(p.p999_us),
                        p.saturated
                            .clone()
                            .unwrap_or_else(|| "sustained".to_owned()),
                    ]);
                }
            }
        }
        let y_desc = match &goal {
            Some(goal) => format!("latency µs of the goal {goal} (log scale)"),
            None => "p99 latency µs (log scale)".to_owned(),
        };
        let plot = plots::knee(&title, &y_desc, &curves, bound)?;
        out.push_str(&figure("sweep", &title, &plot));
        out.push_str(&table(
            &["target", "repetition", "knee ops/s", "steps", "cell"],
            &["repetition", "knee ops/s", "steps"],
            &knees,
        ));
        // Every column but the first and the last holds numbers.
        out.push_str(&table(&STEP_COLUMNS, &STEP_COLUMNS[1..9], &steps_table));
    }
    Ok(section("sweep", "Load sweep", &out))
}

/// The latency a step is judged by: the goal's, else the p99 of all operations.
fn y_of(p: &SweepStep, goal: bool) -> Option<u64> {
    if goal {
        p.goal_us.or(p.p99_us)
    } else {
        p.p99_us
    }
}
