//! Why a report could not be rendered.

use crate::result::ResultError;

/// Why a report could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The result cannot be rendered in this format (for instance, it is incomplete).
    #[error("cannot render: {0}")]
    Invalid(#[from] ResultError),
    /// JSON serialization failed.
    #[error("cannot render JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// The results cannot be placed in a performance history (a run without a start time).
    #[error("cannot export a history: {0}")]
    History(String),
    /// A plot could not be drawn.
    #[error("cannot draw the plot {plot}: {reason}")]
    Plot {
        /// The plot's title.
        plot: String,
        /// What the plotting library said.
        reason: String,
    },
}
