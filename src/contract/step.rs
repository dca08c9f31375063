//! What a runner is doing, in words both sides share: the phase of a cell ([`CellStep`]) and
//! the runner's activity around it ([`RunnerStep`]). Each has one text form, written by the
//! runner and parsed by the operator.

use std::fmt;
use std::str::FromStr;

/// The phase of a running cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CellStep {
    /// Preparing: connecting to the members, reading their hosts.
    #[default]
    Preparing,
    /// A warm-up round.
    Warmup,
    /// Putting the collection back to its seeded state.
    Restoring,
    /// Waiting for replication to settle.
    Settling,
    /// Ready to measure, waiting for the cells measured at the same time.
    Waiting,
    /// The measured phase.
    Measuring,
    /// Capturing explain() plans.
    Explaining,
}

impl CellStep {
    const ALL: [CellStep; 7] = [
        CellStep::Preparing,
        CellStep::Warmup,
        CellStep::Restoring,
        CellStep::Settling,
        CellStep::Waiting,
        CellStep::Measuring,
        CellStep::Explaining,
    ];

    /// The phase's text.
    pub fn as_str(self) -> &'static str {
        match self {
            CellStep::Preparing => "preparing",
            CellStep::Warmup => "warmup",
            CellStep::Restoring => "restoring",
            CellStep::Settling => "settling",
            CellStep::Waiting => "waiting for the simultaneous cells",
            CellStep::Measuring => "measuring",
            CellStep::Explaining => "explaining",
        }
    }
}

impl fmt::Display for CellStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a runner is doing: seeding a target, bringing a sharded cluster up, or a phase of a
/// cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunnerStep {
    Seeding,
    /// A step of bringing a sharded cluster up (`adding shard b-t-p-shard-1`).
    BringingUp(String),
    Cell(CellStep),
}

/// The text before a [`RunnerStep::BringingUp`] step.
const BRINGING_UP: &str = "bringing up the sharded cluster";

impl fmt::Display for RunnerStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunnerStep::Seeding => f.write_str("seeding"),
            RunnerStep::BringingUp(step) => write!(f, "{BRINGING_UP}: {step}"),
            RunnerStep::Cell(phase) => phase.fmt(f),
        }
    }
}

/// A phase text no runner writes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a runner phase")]
pub struct UnknownStep(pub String);

impl FromStr for RunnerStep {
    type Err = UnknownStep;

    fn from_str(s: &str) -> Result<RunnerStep, UnknownStep> {
        if s == "seeding" {
            return Ok(RunnerStep::Seeding);
        }
        if let Some(step) = s
            .strip_prefix(BRINGING_UP)
            .and_then(|rest| rest.strip_prefix(": "))
        {
            return Ok(RunnerStep::BringingUp(step.to_owned()));
        }
        CellStep::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .map(RunnerStep::Cell)
            .ok_or_else(|| UnknownStep(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_phase_parses_from_its_own_text_and_nothing_else_does() {
        let mut all: Vec<RunnerStep> = CellStep::ALL.into_iter().map(RunnerStep::Cell).collect();
        all.push(RunnerStep::Seeding);
        all.push(RunnerStep::BringingUp("adding shard s-1".into()));
        for phase in all {
            assert_eq!(phase.to_string().parse::<RunnerStep>(), Ok(phase));
        }
        assert_eq!(
            RunnerStep::BringingUp("adding shard s-1".into()).to_string(),
            "bringing up the sharded cluster: adding shard s-1"
        );
        assert_eq!(
            "measured".parse::<RunnerStep>(),
            Err(UnknownStep("measured".into()))
        );
    }
}
