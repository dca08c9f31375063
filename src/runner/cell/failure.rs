//! Why a cell stopped before its end: the step it was at and what went wrong there. The cell's
//! result is then incomplete with this as its reason, never a partial result.

/// A cell that could not finish.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{step}: {detail}")]
pub struct CellFailure {
    /// Where, e.g. `measured phase`, `restoring after the warm-up`.
    pub step: &'static str,
    pub detail: String,
}

impl CellFailure {
    pub fn at(step: &'static str, detail: impl Into<String>) -> CellFailure {
        CellFailure {
            step,
            detail: detail.into(),
        }
    }
}
