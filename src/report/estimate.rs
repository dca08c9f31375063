//! How many slots a precision goal needs, estimated from results already run (a pilot, or an
//! earlier run of the same experiment): per comparison, the spread of the per-slot log ratios
//! (or, without slots, the two targets' CVs), the MDE now, the slots the goal needs and the
//! time they take at the measured cells' own lengths. `mongobench plan` prints it.

use crate::result::{CellResult, slot_pairs};
use crate::verdict::stats::{MIN_REPETITIONS, Summary, pairs_for_mde};
use crate::verdict::{CompareError, CompareOptions, Verdict, compare};

use super::layout::fixed_width;

/// Most slots an estimate looks for: `spec.precision.maxRepetitions` goes no higher.
pub const MAX_SLOTS: usize = 100;

/// The estimate of one target against the baseline in one group.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// Workload, platform and size of the group.
    pub group: (String, String, String),
    /// The compared target.
    pub target: String,
    /// Slot pairs behind the spread; 0 when the cells were not paired.
    pub pairs: usize,
    /// Standard deviation of ln(candidate ÷ baseline) per slot (paired), or √(CV² + CV²) of the
    /// two targets (independent groups); `None` with too few cells for a spread.
    pub sd_log: Option<f64>,
    /// The MDE of the comparison as it stands, percent.
    pub mde_percent: Option<f64>,
    /// Slots the goal needs; `None` when more than [`MAX_SLOTS`] would.
    pub slots_needed: Option<usize>,
    /// Mean seconds one slot of the group took (every target's warm-up, settle, measured
    /// phase and restores; the longest target's when they ran at the same time).
    pub seconds_per_slot: f64,
}

/// Seconds a cell took, as far as the result tells: warm-up, settle, measured phase and
/// restores.
fn cell_seconds(c: &CellResult) -> f64 {
    let measured = c
        .measured
        .as_ref()
        .map_or(0.0, |m| m.duration_us as f64 / 1e6);
    let restores: f64 = c.dataset.restores.iter().map(|r| r.seconds).sum();
    let rounds = c.warmup_rounds.map_or(1, |r| r.rounds);
    let warmup = f64::from(rounds) * c.warmup_per_second.len() as f64;
    warmup + c.settle_seconds.unwrap_or(0.0) + measured + restores
}

fn ops(c: &CellResult) -> Option<f64> {
    c.measured.as_ref().map(|m| m.overall.ops_per_sec)
}

/// The estimates of every comparison of `results` for a goal of `goal_percent`.
///
/// # Errors
/// As [`compare`].
pub fn estimate(
    results: &[CellResult],
    options: &CompareOptions,
    goal_percent: f64,
) -> Result<Vec<Estimate>, CompareError> {
    let comparison = compare(results, options)?;
    let mut out = Vec::new();
    for g in &comparison.groups {
        let in_group = |target: &str| -> Vec<&CellResult> {
            results
                .iter()
                .filter(|r| {
                    r.cell.target == target
                        && r.cell.workload == g.workload
                        && r.cell.platform == g.platform
                        && r.cell.size == g.size
                })
                .collect()
        };
        let per_target = g.rows.iter().filter_map(|r| {
            let cells = in_group(&r.target);
            let valid: Vec<f64> = cells
                .iter()
                .filter(|c| c.is_valid())
                .map(|c| cell_seconds(c))
                .collect();
            (!valid.is_empty()).then(|| valid.iter().sum::<f64>() / valid.len() as f64)
        });
        // Cells measured at the same time take the longest one's time, not the sum.
        let together = g
            .rows
            .iter()
            .flat_map(|r| in_group(&r.target))
            .any(|c| c.simultaneous.is_some());
        let slot_seconds: f64 = if together {
            per_target.fold(0.0, f64::max)
        } else {
            per_target.sum()
        };
        let base = in_group(&options.baseline);
        for row in &g.rows {
            if matches!(
                row.verdict,
                Verdict::Baseline | Verdict::NoBaseline | Verdict::NotComparable
            ) {
                continue;
            }
            let pairs = slot_pairs(base.iter().copied(), in_group(&row.target), ops);
            let sd_log = if pairs.len() >= 2 {
                let logs: Vec<f64> = pairs.iter().map(|&(b, c)| (c / b).ln()).collect();
                Summary::of(&logs).ok().and_then(|s| s.std_dev)
            } else {
                let base_cv = g.rows.first().and_then(|b| b.ops_per_sec?.cv);
                let cv = row.ops_per_sec.and_then(|s| s.cv);
                base_cv.zip(cv).map(|(b, c)| (b * b + c * c).sqrt())
            };
            out.push(Estimate {
                group: (g.workload.clone(), g.platform.clone(), g.size.clone()),
                target: row.target.clone(),
                pairs: if pairs.len() >= 2 { pairs.len() } else { 0 },
                sd_log,
                mde_percent: row.throughput_delta.and_then(|d| d.mde_percent),
                slots_needed: sd_log.and_then(|s| pairs_for_mde(s, goal_percent, MAX_SLOTS)),
                seconds_per_slot: slot_seconds,
            });
        }
    }
    Ok(out)
}

/// `1h02m`, `4m10s` or `12s`.
fn duration(seconds: f64) -> String {
    let s = seconds.round() as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

/// The estimates as text: a table per group, then what the numbers mean.
pub fn render_estimate(estimates: &[Estimate], baseline: &str, goal_percent: f64) -> String {
    const HEADERS: [&str; 7] = [
        "TARGET",
        "PAIRS",
        "SD OF LOG RATIOS",
        "MDE NOW",
        "SLOTS NEEDED",
        "PER SLOT",
        "TIME NEEDED",
    ];
    const RIGHT: [bool; 7] = [false, true, true, true, true, true, true];
    let mut out = String::new();
    let mut groups: Vec<&(String, String, String)> = Vec::new();
    for e in estimates {
        if !groups.contains(&&e.group) {
            groups.push(&e.group);
        }
    }
    for (i, group) in groups.into_iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let (workload, platform, size) = group;
        out.push_str(&format!(
            "{workload}, platform {platform}, size {size}: baseline {baseline}, goal MDE \
             {goal_percent}%\n"
        ));
        let rows: Vec<Vec<String>> = estimates
            .iter()
            .filter(|e| &e.group == group)
            .map(|e| {
                vec![
                    e.target.clone(),
                    if e.pairs > 0 {
                        e.pairs.to_string()
                    } else {
                        "unpaired".into()
                    },
                    e.sd_log
                        .map_or("-".into(), |s| format!("{:.2}%", s * 100.0)),
                    e.mde_percent.map_or("-".into(), |m| format!("{m:.1}%")),
                    match (e.sd_log, e.slots_needed) {
                        (None, _) => "-".into(),
                        (Some(_), Some(n)) => n.to_string(),
                        (Some(_), None) => format!("> {MAX_SLOTS}"),
                    },
                    duration(e.seconds_per_slot),
                    e.slots_needed
                        .map_or("-".into(), |n| duration(n as f64 * e.seconds_per_slot)),
                ]
            })
            .collect();
        out.push_str(&fixed_width(&HEADERS, &RIGHT, &rows));
    }
    out.push_str(&format!(
        "\nSlots needed: the fewest (at least {MIN_REPETITIONS}) whose paired comparison, with \
         the spread measured here, detects {goal_percent}% at 80% power and 5% level; time \
         needed: that many slots at the mean length of the slots measured here. Set them as \
         spec.precision (mdePercent: {goal_percent}, maxRepetitions at or above the largest).\n"
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::Slot;
    use crate::result::testing::sample_result;

    #[test]
    fn estimates_from_slots_and_from_unpaired_cells() {
        let mut results = Vec::new();
        for (slot, (a, b)) in [(100.0, 102.0), (120.0, 124.0), (90.0, 91.0)]
            .into_iter()
            .enumerate()
        {
            for (t, ops) in [("a", a), ("b", b)] {
                let mut r = sample_result(t, slot as u32 + 1, ops);
                r.slot = Some(Slot {
                    number: slot as u32 + 1,
                    position: 0,
                });
                results.push(r);
            }
        }
        let options = CompareOptions {
            baseline: "a".into(),
            ..Default::default()
        };
        let e = estimate(&results, &options, 1.0).unwrap();
        assert_eq!(e.len(), 1);
        let e = &e[0];
        assert_eq!((e.target.as_str(), e.pairs), ("b", 3));
        // ln(1.02), ln(124/120), ln(91/90): sd 0.01049 (by hand: mean 0.01843).
        let logs = [1.02f64.ln(), (124.0f64 / 120.0).ln(), (91.0f64 / 90.0).ln()];
        let mean = logs.iter().sum::<f64>() / 3.0;
        let sd = (logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / 2.0).sqrt();
        assert!((e.sd_log.unwrap() - sd).abs() < 1e-12);
        assert_eq!(e.slots_needed, pairs_for_mde(sd, 1.0, MAX_SLOTS));
        // Each cell of sample_result measures 10 s: a slot of two targets is 20 s.
        assert!((e.seconds_per_slot - 20.0).abs() < 1e-9, "{e:?}");
        let text = render_estimate(std::slice::from_ref(e), "a", 1.0);
        assert!(
            text.starts_with("flights/v1, platform n2, size 1M: baseline a, goal MDE 1%\n"),
            "{text}"
        );

        // The same cells without slots: the two CVs instead.
        for r in &mut results {
            r.slot = None;
        }
        let e = &estimate(&results, &options, 1.0).unwrap()[0];
        assert_eq!(e.pairs, 0);
        let cv = |v: [f64; 3]| Summary::of(&v).unwrap().cv.unwrap();
        let expected = (cv([100.0, 120.0, 90.0]).powi(2) + cv([102.0, 124.0, 91.0]).powi(2)).sqrt();
        assert!((e.sd_log.unwrap() - expected).abs() < 1e-12);
        assert!(render_estimate(std::slice::from_ref(e), "a", 1.0).contains("unpaired"));
    }

    #[test]
    fn durations_read_as_people_write_them() {
        assert_eq!(duration(12.4), "12s");
        assert_eq!(duration(250.0), "4m10s");
        assert_eq!(duration(3720.0), "1h02m");
    }
}
