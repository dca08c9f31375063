//! The CI gate of `run` and `report`: `--fail-on-slower`, `--fail-on-costlier` and
//! `--fail-on-inconclusive` set the exit code from the comparison's verdicts ([`EXIT_GATE`]),
//! `--junit FILE` writes each compared target × declared metric as a JUnit test case.

use std::path::PathBuf;

use anyhow::Context;

use crate::cli::input::invalid;
use crate::report::{ComparisonDocument, Gate, render_junit};

/// The exit code when the gate fails a verdict (1 is a failed or incomplete run, 2 bad input).
pub const EXIT_GATE: u8 = 3;

/// The gate's flags, shared by `run` and `report`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct GateArgs {
    /// Exit with code 3 when a target's throughput verdict is `slower` (significant, its
    /// interval below 0) with the estimate more than PERCENT below the baseline (0: any
    /// significant slowdown).
    #[arg(long, value_name = "PERCENT")]
    pub fail_on_slower: Option<f64>,
    /// Exit with code 3 when a target's CPU-per-operation verdict is `costlier` with the
    /// estimate more than PERCENT above the baseline (needs cpuPerOperation among the verdict
    /// metrics).
    #[arg(long, value_name = "PERCENT")]
    pub fail_on_costlier: Option<f64>,
    /// Exit with code 3 when a target's declared metric has no verdict (inconclusive, not
    /// comparable, or no baseline result in its group).
    #[arg(long)]
    pub fail_on_inconclusive: bool,
    /// Write every compared target × declared metric as a JUnit XML test case to FILE, those
    /// the gate fails as failures.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
}

impl GateArgs {
    fn gate(&self) -> Gate {
        Gate {
            fail_on_slower: self.fail_on_slower,
            fail_on_costlier: self.fail_on_costlier,
            fail_on_inconclusive: self.fail_on_inconclusive,
        }
    }

    /// Whether a rule is set (the run must compare something).
    pub fn is_set(&self) -> bool {
        self.gate().is_set()
    }

    /// Whether the gate has anything to do.
    pub fn wanted(&self) -> bool {
        self.is_set() || self.junit.is_some()
    }

    /// Judges `doc`: prints a line on standard error for each case the gate fails, writes the
    /// JUnit file if asked; true when a case failed.
    ///
    /// # Errors
    /// An [`Invalid`](crate::cli::input::Invalid) error when a rule cannot be judged (its
    /// metric not declared, nothing compared); the JUnit file cannot be written.
    pub fn check(&self, doc: &ComparisonDocument) -> anyhow::Result<bool> {
        let cases = self.gate().judge(doc).map_err(|e| invalid(e.to_string()))?;
        for case in &cases {
            if let Some(f) = &case.failure {
                eprintln!("FAIL {}: {}: {}", case.name, case.verdict_line, f.message);
            }
        }
        if let Some(file) = &self.junit {
            let suite = format!("comparison vs {}", doc.baseline);
            std::fs::write(file, render_junit(&suite, &cases))
                .with_context(|| format!("writing the JUnit file {}", file.display()))?;
        }
        Ok(cases.iter().any(|c| c.failure.is_some()))
    }
}
