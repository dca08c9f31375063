//! Results gathered the way the HTML report and the history export show them: one group per
//! (benchmark, run, workload, platform, size), the cells of each target in it, and the figures
//! over a target's valid repetitions (mean throughput with its t-interval, latency from the
//! sum of the repetitions' histograms, never from averaged percentiles).

use hdrhistogram::Histogram;

use crate::result::{CellResult, OperationResult};
use crate::verdict::stats::Summary;
use crate::verdict::{CompareError, CompareOptions, Comparison, compare};

/// The cells of one (benchmark, run, workload, platform, size).
pub(super) struct Group<'r> {
    pub benchmark: &'r str,
    pub run_id: &'r str,
    pub workload: &'r str,
    pub platform: &'r str,
    pub size: &'r str,
    /// Targets in the order they first appear.
    pub targets: Vec<TargetCells<'r>>,
}

impl Group<'_> {
    /// `flights/v1, platform n2, size 1M`.
    pub fn title(&self) -> String {
        format!(
            "{}, platform {}, size {}",
            self.workload, self.platform, self.size
        )
    }

    /// Where the size goes among the sizes of its run: by its value (`1k` before `10k`,
    /// whatever the text order), then by the documents seeded for it.
    fn size_order(&self) -> (u64, u64) {
        let value = crate::api::units::parse_dataset_size(self.size).map(|s| s.value());
        (value.unwrap_or_else(|_| self.documents()), self.documents())
    }

    /// Seeded documents of the size (the largest any cell reports; 0 when none got that far).
    fn documents(&self) -> u64 {
        self.targets
            .iter()
            .flat_map(|t| &t.cells)
            .map(|c| c.dataset.seeded_documents)
            .max()
            .unwrap_or(0)
    }
}

/// One target's cells in a group, in repetition order.
pub(super) struct TargetCells<'r> {
    pub target: &'r str,
    pub cells: Vec<&'r CellResult>,
}

impl<'r> TargetCells<'r> {
    /// The cells whose figures count: complete and valid.
    pub fn valid(&self) -> impl Iterator<Item = &'r CellResult> + '_ {
        self.cells.iter().copied().filter(|c| c.is_valid())
    }

    /// Mean of `f` over the valid repetitions with its 95 % interval; `None` without a valid
    /// repetition or when one of them lacks the figure.
    pub fn summary(&self, f: impl Fn(&CellResult) -> Option<f64>) -> Option<Summary> {
        let samples: Option<Vec<f64>> = self.valid().map(f).collect();
        Summary::of(&samples?).ok()
    }

    /// Successful operations per second over the valid repetitions.
    pub fn throughput(&self) -> Option<Summary> {
        self.summary(|c| c.measured.as_ref().map(|m| m.overall.ops_per_sec))
    }

    /// The latency histograms of successful operations of `label` (all top-level operations
    /// for `None`) of the valid repetitions, added up; `None` when none holds a sample.
    pub fn merged_latency(&self, label: Option<&str>) -> Option<Histogram<u64>> {
        let mut merged: Option<Histogram<u64>> = None;
        for op in self.valid().filter_map(|c| operation(c, label)) {
            let h = &op.histograms.latency.0;
            match &mut merged {
                None => merged = Some(h.clone()),
                // Decoded histograms resize themselves, so adding cannot run out of range.
                Some(m) => m.add(h).expect("auto-resizing histograms add"),
            }
        }
        merged.filter(|h| !h.is_empty())
    }

    /// Operation labels of the valid repetitions, in name order.
    pub fn labels(&self) -> Vec<&'r str> {
        let mut labels: Vec<&str> = self
            .valid()
            .filter_map(|c| c.measured.as_ref())
            .flat_map(|m| m.operations.keys().map(String::as_str))
            .collect();
        labels.sort_unstable();
        labels.dedup();
        labels
    }
}

/// The operation result of `label` in a cell (`None`: overall).
pub(super) fn operation<'r>(
    cell: &'r CellResult,
    label: Option<&str>,
) -> Option<&'r OperationResult> {
    let m = cell.measured.as_ref()?;
    match label {
        None => Some(&m.overall),
        Some(l) => m.operations.get(l),
    }
}

/// The groups of `results`: by benchmark, run, workload and platform in the order they first
/// appear, sizes from the smallest up (by value, then documents seeded).
pub(super) fn groups(results: &[CellResult]) -> Vec<Group<'_>> {
    let mut groups: Vec<Group<'_>> = Vec::new();
    for r in results {
        let c = &r.cell;
        let position = groups.iter().position(|g| {
            (g.benchmark, g.run_id, g.workload, g.platform, g.size)
                == (
                    c.benchmark.as_str(),
                    c.run_id.as_str(),
                    c.workload.as_str(),
                    c.platform.as_str(),
                    c.size.as_str(),
                )
        });
        let group = match position {
            Some(i) => &mut groups[i],
            None => {
                groups.push(Group {
                    benchmark: &c.benchmark,
                    run_id: &c.run_id,
                    workload: &c.workload,
                    platform: &c.platform,
                    size: &c.size,
                    targets: Vec::new(),
                });
                groups.last_mut().expect("just pushed")
            }
        };
        match group.targets.iter_mut().find(|t| t.target == c.target) {
            Some(t) => t.cells.push(r),
            None => group.targets.push(TargetCells {
                target: &c.target,
                cells: vec![r],
            }),
        }
    }
    for g in &mut groups {
        for t in &mut g.targets {
            t.cells.sort_by_key(|c| c.cell.repetition);
        }
    }
    // A stable sort: groups of one (benchmark, run, workload, platform) stay in appearance
    // order among themselves except that sizes go from the smallest dataset up.
    let first_seen: Vec<(&str, &str, &str, &str)> = {
        let mut seen = Vec::new();
        for g in &groups {
            let key = (g.benchmark, g.run_id, g.workload, g.platform);
            if !seen.contains(&key) {
                seen.push(key);
            }
        }
        seen
    };
    groups.sort_by_key(|g| {
        let key = (g.benchmark, g.run_id, g.workload, g.platform);
        let rank = first_seen.iter().position(|k| *k == key);
        (rank, g.size_order())
    });
    groups
}

/// The comparison of `results` with its groups in the order of [`groups`]: what every report
/// shows, so that sizes read the same way everywhere.
///
/// # Errors
/// As [`compare`].
pub fn compare_in_order(
    results: &[CellResult],
    options: &CompareOptions,
) -> Result<Comparison, CompareError> {
    let mut comparison = compare(results, options)?;
    sort_like_groups(&mut comparison, results);
    Ok(comparison)
}

/// The cells of `results` in the order of [`groups`] (by run, workload, platform, size, then
/// target and repetition), for reports that list every cell.
pub fn in_group_order(results: &[CellResult]) -> Vec<&CellResult> {
    groups(results)
        .into_iter()
        .flat_map(|g| g.targets.into_iter().flat_map(|t| t.cells))
        .collect()
}

/// Puts the groups of a comparison in the order of [`groups`] (sizes from the smallest dataset
/// up), whatever order the results came in.
pub(super) fn sort_like_groups(comparison: &mut Comparison, results: &[CellResult]) {
    let order: Vec<(&str, &str, &str)> = groups(results)
        .iter()
        .map(|g| (g.workload, g.platform, g.size))
        .collect();
    comparison.groups.sort_by_key(|g| {
        order
            .iter()
            .position(|&k| k == (g.workload.as_str(), g.platform.as_str(), g.size.as_str()))
    });
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::result::CellStatus;
    use crate::result::testing::{cell, result_from};

    fn res(target: &str, size: &str, rep: u32, latencies: &[u64]) -> CellResult {
        let ops: Vec<_> = latencies.iter().map(|&l| ("find", l, Ok(()))).collect();
        let mut r = result_from(
            cell(target, "n2", size, rep),
            Duration::from_secs(1),
            &ops,
            None,
        );
        r.dataset.seeded_documents = if size == "10k" { 10_000 } else { 4_000_000 };
        r
    }

    #[test]
    fn groups_order_sizes_by_documents_and_merge_valid_histograms_only() {
        let mut invalid = res("a", "4M", 3, &[9_000]);
        invalid.invalid_reasons = vec!["election".into()];
        let mut incomplete = res("a", "4M", 4, &[8_000]);
        incomplete.status = CellStatus::Incomplete {
            reason: "stopped".into(),
        };
        let results = vec![
            res("a", "4M", 2, &[300, 400]),
            res("a", "4M", 1, &[100, 200]),
            invalid,
            incomplete,
            res("b", "10k", 1, &[50]),
            res("a", "10k", 1, &[60]),
        ];
        let g = groups(&results);
        // "4M" sorts before "10k" as text; by documents 10k comes first.
        let order: Vec<(&str, Vec<&str>)> = g
            .iter()
            .map(|g| (g.size, g.targets.iter().map(|t| t.target).collect()))
            .collect();
        assert_eq!(order, [("10k", vec!["b", "a"]), ("4M", vec!["a"])]);
        let a = &g[1].targets[0];
        let reps: Vec<u32> = a.cells.iter().map(|c| c.cell.repetition).collect();
        assert_eq!(reps, [1, 2, 3, 4]);
        // Valid repetitions 1 and 2: 100, 200, 300, 400 µs; the invalid 9000 µs is left out.
        let merged = a.merged_latency(None).unwrap();
        assert_eq!((merged.len(), merged.max()), (4, 400));
        assert_eq!(a.throughput().unwrap().n, 2);
        assert_eq!(a.labels(), ["find"]);

        // A comparison lists groups as the results came (4M first); sorted, 10k comes first.
        let options = crate::verdict::CompareOptions {
            baseline: "a".into(),
            ..Default::default()
        };
        let mut c = crate::verdict::compare(&results, &options).unwrap();
        let sizes = |c: &Comparison| c.groups.iter().map(|g| g.size.clone()).collect::<Vec<_>>();
        assert_eq!(sizes(&c), ["4M", "10k"]);
        sort_like_groups(&mut c, &results);
        assert_eq!(sizes(&c), ["10k", "4M"]);
    }
}
