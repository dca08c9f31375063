//! Time slots of an interleaved run (docs/results.md, "Paired slots"): slot k runs repetition
//! k of every target, in an order drawn from the workload's seed, so that what the machine
//! does at that time weighs on every target alike and no target always goes first. After the
//! planned repetitions, a precision goal (`spec.precision`) decides whether another slot is
//! needed, as Stein's two-stage design (`verdict::sequential`): the planned slots are its
//! pilot; and a slot with an invalid cell is void and runs again.

use std::time::Duration;

use crate::api::units::UnitsError;
use crate::api::{MongoBenchmarkSpec, Precision, VerdictMetric};
use crate::result::{CellResult, slot_pairs};
use crate::verdict::figure;
use crate::verdict::sequential::{self, Need, TwoStage};

/// `spec.precision` in the runner's terms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PrecisionGoal {
    pub mde_percent: f64,
    pub max_repetitions: u32,
    /// From the runner's start; `None` is no limit.
    pub max_duration: Option<Duration>,
    /// The tests the benchmark's verdict family holds: declared metrics × candidates × sizes ×
    /// platforms. The MDE is judged at the family's first Holm level.
    pub family: usize,
}

impl PrecisionGoal {
    /// The goal of `spec`, if it sets one.
    ///
    /// # Errors
    /// A `maxDuration` that does not parse.
    pub fn of(spec: &MongoBenchmarkSpec) -> Result<Option<PrecisionGoal>, UnitsError> {
        spec.precision
            .as_ref()
            .map(|p| PrecisionGoal::of_precision(p, spec.repetitions(), spec.verdict_family()))
            .transpose()
    }

    /// The goal `precision` sets for a run of `repetitions` planned repetitions whose verdict
    /// family holds `family` tests.
    ///
    /// # Errors
    /// A `maxDuration` that does not parse.
    pub fn of_precision(
        precision: &Precision,
        repetitions: u32,
        family: usize,
    ) -> Result<PrecisionGoal, UnitsError> {
        Ok(PrecisionGoal {
            mde_percent: precision.mde_percent,
            max_repetitions: precision.max_repetitions().max(repetitions),
            max_duration: precision.max_duration()?,
            family,
        })
    }

    /// The goal as Stein's two-stage design after `planned` slots.
    pub fn design(&self, planned: u32) -> TwoStage {
        TwoStage::new(
            planned as usize,
            self.mde_percent,
            self.family,
            self.max_repetitions as usize,
        )
    }
}

/// Where a size stands against the goal after some slots.
#[derive(Debug, Clone, PartialEq)]
pub enum Standing {
    /// Every comparison has the slots its pilot asked for; the widest MDE is given.
    Reached { widest_mde_percent: f64 },
    /// A comparison needs more slots.
    Short {
        /// The target (and metric) whose comparison is furthest from what it needs.
        target: String,
        /// What it needs.
        need: Need,
    },
}

/// Each candidate's and declared metric's slot pairs with `baseline` over `results` (one
/// size's cells of one run), named `target` or `target metric` beyond the first metric, in
/// the order the candidates first appear.
pub fn comparisons(
    results: &[CellResult],
    baseline: &str,
    metrics: &[VerdictMetric],
) -> Vec<(String, Vec<(f64, f64)>)> {
    let of =
        |t: &str| -> Vec<&CellResult> { results.iter().filter(|c| c.cell.target == t).collect() };
    let mut candidates: Vec<&str> = Vec::new();
    for c in results {
        let t = c.cell.target.as_str();
        if t != baseline && !candidates.contains(&t) {
            candidates.push(t);
        }
    }
    let mut out = Vec::new();
    for t in candidates {
        for (i, &m) in metrics.iter().enumerate() {
            let name = if i == 0 {
                t.to_owned()
            } else {
                format!("{t} {}", m.name())
            };
            // Simultaneous slots' throughput is compared over their common seconds.
            let window = (m == VerdictMetric::Throughput)
                .then(|| crate::verdict::simultaneous::window_rates(&of(baseline), &of(t)))
                .flatten();
            let pairs = window.unwrap_or_else(|| slot_pairs(of(baseline), of(t), figure(m)));
            out.push((name, pairs));
        }
    }
    out
}

/// How `results` (one size's cells of one run, `planned` slots planned) stand against `goal`
/// on `metrics`.
pub fn standing(
    results: &[CellResult],
    baseline: &str,
    metrics: &[VerdictMetric],
    goal: &PrecisionGoal,
    planned: u32,
) -> Standing {
    let named = comparisons(results, baseline, metrics);
    let pairs: Vec<Vec<(f64, f64)>> = named.iter().map(|(_, p)| p.clone()).collect();
    match goal.design(planned).standing(&pairs) {
        sequential::Standing::Reached { widest_mde_percent } => {
            Standing::Reached { widest_mde_percent }
        }
        sequential::Standing::Short { index, need } => Standing::Short {
            target: named
                .get(index)
                .map_or_else(|| baseline.to_owned(), |(n, _)| n.clone()),
            need,
        },
    }
}

/// Whether the cells of one slot void it: a cell that ran and is not valid (an invalid or
/// incomplete cell) leaves its slot without a pair, so the slot runs again rather than the
/// comparison changing its test.
pub fn voids_slot(result: &CellResult) -> bool {
    !result.is_valid()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::testing::{simultaneous_result, slotted_result};
    use crate::verdict::stats::{ALPHA, Delta, log_ratio_sd, two_stage_pairs};

    #[test]
    fn simultaneous_throughput_stands_on_the_rates_over_the_common_seconds() {
        // Each cell's overall figure says 1 op/s; over the seconds both windows hold, b
        // did 1030 or 1050 a second against a's 1000, as the verdict will compare them.
        let mut results = Vec::new();
        for (slot, b) in [(1, 1030), (2, 1050)] {
            results.push(simultaneous_result("a", slot, &[1000, 1000], None));
            results.push(simultaneous_result("b", slot, &[b, b], None));
        }
        let cpu = [VerdictMetric::Throughput, VerdictMetric::CpuPerOperation];
        let named = comparisons(&results, "a", &cpu);
        assert_eq!(
            named[0],
            ("b".into(), vec![(1000.0, 1030.0), (1000.0, 1050.0)])
        );
        // Other metrics keep the cells' own figures.
        assert_eq!(named[1].0, "b cpuPerOperation");
        assert_eq!(
            named[1].1,
            slot_pairs(
                results.iter().filter(|c| c.cell.target == "a"),
                results.iter().filter(|c| c.cell.target == "b"),
                figure(VerdictMetric::CpuPerOperation)
            )
        );
    }

    #[test]
    fn standing_waits_for_the_pilot_then_for_the_slots_its_spread_asks_for() {
        let goal = PrecisionGoal {
            mde_percent: 3.0,
            max_repetitions: 30,
            max_duration: None,
            family: 1,
        };
        let metrics = [VerdictMetric::Throughput];
        let mut results = vec![
            slotted_result("a", 1, 100.0),
            slotted_result("b", 1, 103.0),
            slotted_result("a", 2, 120.0),
            slotted_result("b", 2, 123.0),
        ];
        assert_eq!(
            standing(&results, "a", &metrics, &goal, 3),
            Standing::Short {
                target: "b".into(),
                need: Need::Pilot { pairs: 2 }
            }
        );
        // The pilot's three log ratios, ln(1.03), ln(1.025), ln(1.03889): sd 0.00682, so
        // ((t₀.₉₇₅(2) + t₀.₈(2)) · 0.00682 / ln 1.03)² = 1.53: the pilot is enough.
        results.push(slotted_result("a", 3, 90.0));
        results.push(slotted_result("b", 3, 93.5));
        let Standing::Reached { widest_mde_percent } = standing(&results, "a", &metrics, &goal, 3)
        else {
            panic!("{:?}", standing(&results, "a", &metrics, &goal, 3));
        };
        let pairs = [(100.0, 103.0), (120.0, 123.0), (90.0, 93.5)];
        let mde = Delta::paired(&pairs, None)
            .unwrap()
            .mde_percent(ALPHA)
            .unwrap();
        assert!(
            (widest_mde_percent - mde).abs() < 1e-12,
            "{widest_mde_percent}"
        );
        // A 1 % goal asks for 3 · (2.42 / 1)² ≈ 14 slots: 3 are short by 11.
        let tight = PrecisionGoal {
            mde_percent: 1.0,
            ..goal
        };
        let Standing::Short {
            target,
            need: Need::Slots { slots, pairs, .. },
        } = standing(&results, "a", &metrics, &tight, 3)
        else {
            panic!("{:?}", standing(&results, "a", &metrics, &tight, 3));
        };
        let sd = log_ratio_sd(&[(100.0, 103.0), (120.0, 123.0), (90.0, 93.5)]);
        assert_eq!(
            (target.as_str(), Some(slots), pairs),
            ("b", two_stage_pairs(sd, 3, 1.0, ALPHA, 30), 3)
        );
        // A second metric is a comparison of its own, named.
        let both = [VerdictMetric::Throughput, VerdictMetric::CpuPerOperation];
        let named: Vec<String> = comparisons(&results, "a", &both)
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(named, ["b", "b cpuPerOperation"]);
    }
}
