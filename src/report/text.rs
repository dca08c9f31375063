//! The text report (`report -o table`, `run`'s report.txt): the answer first, the comparison
//! with the baseline and its headline; then the notes on cells (warm-ups that had not
//! settled, load sweeps, shards, noise canaries); then every cell's figures. Cells and groups
//! are in the order of `groups` (sizes from the smallest up), as in every other report.

use std::collections::BTreeSet;

use super::comparison::render_comparison;
use super::groups::{compare_in_order, in_group_order};
use super::{canary_text, settle, sharding_text, sweep_text, table::render_table};
use crate::result::CellResult;
use crate::verdict::CompareOptions;

/// The text of `results`, compared as `options` say when there is more than one target.
pub fn render_text(results: &[CellResult], options: &CompareOptions) -> String {
    let cells: Vec<CellResult> = in_group_order(results).into_iter().cloned().collect();
    let mut out = String::new();
    let targets: BTreeSet<&str> = cells.iter().map(|r| r.cell.target.as_str()).collect();
    if targets.len() > 1 {
        match compare_in_order(&cells, options) {
            Ok(c) => out.push_str(&render_comparison(&c)),
            Err(e) => out.push_str(&format!("no comparison: {e}\n")),
        }
        out.push('\n');
    }
    let notes = settle::render_unsettled(&cells)
        + &sweep_text::render_sweeps(&cells)
        + &sharding_text::render_shards(&cells)
        + &canary_text::render_canaries(&cells);
    if !notes.is_empty() {
        out.push_str(&notes);
        out.push('\n');
    }
    out.push_str(&render_table(&cells));
    out
}
