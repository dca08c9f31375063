//! The one-line accounts of a run, shown by a local run and logged by a runner Job: a target
//! seeded to a size, a cell finished.

use crate::plan::PlannedCell;
use crate::result::{CellResult, CellStatus};

use super::dataset::Seeded;

/// One line of a target reaching a size.
pub fn seeded_line(target: &str, size: &str, seeded: &Seeded) -> String {
    let rate = if seeded.inserted > 0 && seeded.insert_seconds > 0.0 {
        format!(
            " (inserted {} at {:.0} documents/s)",
            seeded.inserted,
            seeded.inserted as f64 / seeded.insert_seconds
        )
    } else {
        String::new()
    };
    format!(
        "{target}: {} {size} ({} documents) in {:.1} s{rate}, digest {} {}",
        seeded.action,
        seeded.documents,
        seeded.seconds,
        seeded.digest.method,
        &seeded.digest.value[..seeded.digest.value.len().min(16)]
    )
}

/// One line of a finished cell: its figures, or why it is incomplete or invalid.
pub fn cell_line(cell: &PlannedCell, result: &CellResult) -> String {
    match (&result.status, &result.measured) {
        (CellStatus::Complete, Some(m)) => {
            let p99 = m.overall.latency_us.as_ref().map(|l| l.p99).unwrap_or(0);
            let restore: f64 = result.dataset.restores.iter().map(|r| r.seconds).sum();
            let invalid = if result.invalid_reasons.is_empty() {
                String::new()
            } else {
                format!(", INVALID: {}", result.invalid_reasons.join("; "))
            };
            format!(
                "{}: {:.0} ops/s, p99 {} µs, {} operations, restored in {restore:.1} s{invalid}",
                cell.id, m.overall.ops_per_sec, p99, m.overall.completed
            )
        }
        (CellStatus::Incomplete { reason }, _) => format!("{}: INCOMPLETE: {reason}", cell.id),
        _ => format!("{}: no measurement", cell.id),
    }
}
