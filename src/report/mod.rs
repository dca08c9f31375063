//! Renderers for a set of result documents: a fixed-width table for people, YCSB 0.17.0's
//! text report, CSV, JSON, a comparison of targets against a baseline, a self-contained HTML
//! page with plots, Markdown for issues and pull requests, and a long-form history CSV for
//! change-point tools; and for pipelines the comparison document (JSON), its verdicts as CSV,
//! the CI gate over them and its JUnit XML.
//!
//! No renderer passes an incomplete result off as valid: the table and CSV mark it (NOTE
//! `INCOMPLETE`, `status` column), JSON keeps its `status`, and the YCSB text and the
//! comparison refuse it, because their readers could not see a mark.
//!
//! Renderers only: what a comparison concludes comes from `verdict`, the figures from
//! `result` and `measure`. Files that render one format sit on `layout` (fixed-width
//! columns), `groups` (cells by target), `plots` and `error`.
#![deny(missing_docs)]

pub mod canary_text;
mod comparison;
mod comparison_json;
mod csv;
mod error;
mod estimate;
mod gate;
mod groups;
mod history;
mod html;
pub mod java_format;
mod json;
mod junit;
pub(crate) mod layout;
mod markdown;
mod plots;
pub mod settle;
pub mod sharding_text;
#[cfg(test)]
mod study;
mod summary;
pub mod sweep_text;
mod table;
mod text;
mod verdicts_csv;
mod ycsb_text;

pub use comparison::render_comparison;
pub use comparison_json::{
    COMPARISON_KIND, COMPARISON_VERSION, ComparisonDocument, GroupDocument, IntervalDocument,
    MetricDocument, RowDocument, render_comparison_json,
};
pub use csv::{CSV_COLUMNS, OVERALL, render_csv, unneutralise};
pub use error::ReportError;
pub use estimate::{Estimate, MAX_SLOTS, estimate, render_estimate};
pub use gate::{Failure, Gate, GateCase, GateError, verdict_line};
pub use groups::{compare_in_order, in_group_order};
pub use history::{HISTORY_COLUMNS, render_history_csv};
pub use html::render_html;
pub use json::render_json;
pub use junit::render_junit;
pub use markdown::render_markdown;
pub use table::render_table;
pub use text::render_text;
pub use verdicts_csv::{VERDICT_COLUMNS, render_verdicts_csv};
pub use ycsb_text::{YcsbOptions, render_ycsb};
