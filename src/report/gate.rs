//! The CI gate: which verdicts of a comparison document fail a pipeline (`--fail-on-slower`,
//! `--fail-on-costlier`, `--fail-on-inconclusive`), and every compared target × declared metric
//! as a case a CI system can show (docs/results.md, "CI gate").
//!
//! The rule, per target and declared metric against the baseline:
//! - `--fail-on-slower P`: the throughput verdict is `slower` (significant after Holm: its
//!   interval lies wholly below 0) and the estimate is below −P %;
//! - `--fail-on-costlier P`: the CPU-per-operation verdict is `costlier` and the estimate is
//!   above +P %;
//! - `--fail-on-inconclusive`: the verdict is `inconclusive`, `notComparable` or `noBaseline`
//!   (no verdict was reached).

use super::comparison_json::{ComparisonDocument, MetricDocument};
use crate::api::VerdictMetric;
use crate::verdict::Verdict;

/// What fails the gate; the default fails nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Gate {
    /// Fail a throughput verdict `slower` by more than this many percent.
    pub fail_on_slower: Option<f64>,
    /// Fail a CPU-per-operation verdict `costlier` by more than this many percent.
    pub fail_on_costlier: Option<f64>,
    /// Fail any declared metric without a verdict.
    pub fail_on_inconclusive: bool,
}

/// One compared target × declared metric, as the gate judged it.
#[derive(Debug, Clone, PartialEq)]
pub struct GateCase {
    /// The group's workload.
    pub workload: String,
    /// `<platform>/<size>/<target> vs <baseline> <metric>`.
    pub name: String,
    /// The verdict in one line: `slower -12.0% [-15.1%, -8.8%] (95%), MDE 4.1% (cautious
    /// 6.3%)`.
    pub verdict_line: String,
    /// The rule it fails, e.g. `slower by more than 5% (--fail-on-slower 5)`.
    pub failure: Option<Failure>,
}

/// A failed rule: the flag and what it says of this case.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// The flag, without dashes: `fail-on-slower`.
    pub flag: &'static str,
    /// The rule in words, with the flag's value.
    pub message: String,
}

/// Why a gate cannot judge a document.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum GateError {
    /// A flag gates a metric the comparison has no verdict on.
    #[error(
        "--{flag}: {metric} is not a verdict metric of these results (declared: {declared}); \
         declare it in spec.verdict.metrics"
    )]
    Undeclared {
        /// The flag.
        flag: &'static str,
        /// The metric it gates.
        metric: &'static str,
        /// The declared metrics, comma-separated.
        declared: String,
    },
    /// No target was compared with the baseline, so a gate would pass on nothing.
    #[error("the gate has nothing to judge: no target was compared with baseline {baseline}")]
    NothingCompared {
        /// The baseline.
        baseline: String,
    },
    /// A percentage that is negative or not a number.
    #[error("--{flag} {value}: expected a percentage of 0 or more")]
    BadPercent {
        /// The flag.
        flag: &'static str,
        /// Its value.
        value: f64,
    },
}

impl Gate {
    /// Whether any rule is set.
    pub fn is_set(&self) -> bool {
        self.fail_on_slower.is_some()
            || self.fail_on_costlier.is_some()
            || self.fail_on_inconclusive
    }

    /// Every compared target × declared metric of `doc` with the rule it fails, if any.
    ///
    /// # Errors
    /// [`GateError`] when a set rule cannot be judged: a percentage below 0, its metric not
    /// declared, or no target compared.
    pub fn judge(&self, doc: &ComparisonDocument) -> Result<Vec<GateCase>, GateError> {
        self.check(doc)?;
        let mut cases = Vec::new();
        for g in &doc.groups {
            for r in g.rows.iter().filter(|r| r.verdict != Verdict::Baseline) {
                for m in &r.verdicts {
                    cases.push(GateCase {
                        workload: g.workload.clone(),
                        name: format!(
                            "{}/{}/{} vs {} {}",
                            g.platform,
                            g.size,
                            r.target,
                            r.baseline,
                            m.metric.name()
                        ),
                        verdict_line: verdict_line(m),
                        failure: self.failure(m),
                    });
                }
            }
        }
        Ok(cases)
    }

    fn check(&self, doc: &ComparisonDocument) -> Result<(), GateError> {
        let rules = [
            (
                "fail-on-slower",
                self.fail_on_slower,
                VerdictMetric::Throughput,
            ),
            (
                "fail-on-costlier",
                self.fail_on_costlier,
                VerdictMetric::CpuPerOperation,
            ),
        ];
        for (flag, percent, metric) in rules {
            let Some(value) = percent else { continue };
            if value.is_nan() || value < 0.0 {
                return Err(GateError::BadPercent { flag, value });
            }
            if !doc.metrics.contains(&metric) {
                let declared: Vec<&str> = doc.metrics.iter().map(|m| m.name()).collect();
                return Err(GateError::Undeclared {
                    flag,
                    metric: metric.name(),
                    declared: declared.join(", "),
                });
            }
        }
        let compared = doc
            .groups
            .iter()
            .flat_map(|g| &g.rows)
            .any(|r| r.verdict != Verdict::Baseline);
        if self.is_set() && !compared {
            return Err(GateError::NothingCompared {
                baseline: doc.baseline.clone(),
            });
        }
        Ok(())
    }

    /// The rule `m` fails, if any.
    fn failure(&self, m: &MetricDocument) -> Option<Failure> {
        let estimate = m.estimate_percent.unwrap_or(0.0);
        match (m.metric, m.verdict) {
            (VerdictMetric::Throughput, Verdict::Slower) => {
                let p = self.fail_on_slower?;
                (estimate < -p).then(|| Failure {
                    flag: "fail-on-slower",
                    message: format!("slower by more than {p}% (--fail-on-slower {p})"),
                })
            }
            (VerdictMetric::CpuPerOperation, Verdict::Costlier) => {
                let p = self.fail_on_costlier?;
                (estimate > p).then(|| Failure {
                    flag: "fail-on-costlier",
                    message: format!("costlier by more than {p}% (--fail-on-costlier {p})"),
                })
            }
            (_, Verdict::Inconclusive | Verdict::NotComparable | Verdict::NoBaseline)
                if self.fail_on_inconclusive =>
            {
                Some(Failure {
                    flag: "fail-on-inconclusive",
                    message: "no verdict (--fail-on-inconclusive)".to_owned(),
                })
            }
            _ => None,
        }
    }
}

/// A metric's verdict in one line: the verdict word, the estimate, the interval at its level,
/// the MDE, or why there is no verdict.
pub fn verdict_line(m: &MetricDocument) -> String {
    let mut out = m.verdict.text().to_owned();
    if let Some(e) = m.estimate_percent {
        out.push_str(&format!(" {e:+.1}%"));
    }
    if let Some(i) = m.interval {
        out.push_str(&format!(
            " [{:+.1}%, {:+.1}%] ({}%)",
            i.low_percent,
            i.high_percent,
            trimmed(i.confidence * 100.0)
        ));
    }
    if let Some(mde) = m.mde_percent {
        out.push_str(&format!(", MDE {mde:.1}%"));
        if let Some(c) = m.cautious_mde_percent {
            out.push_str(&format!(" (cautious {c:.1}%)"));
        }
    }
    if let Some(reason) = &m.reason {
        out.push_str(&format!(" ({reason})"));
    }
    out
}

/// `95`, `97.5`: two decimals at most, trailing zeros cut.
fn trimmed(percent: f64) -> String {
    let text = format!("{percent:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

#[cfg(test)]
#[path = "gate_tests.rs"]
mod tests;
