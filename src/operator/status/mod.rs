//! The status of a benchmark, pure: each cell's entry (`cells.rs`), the comparisons against the
//! baseline and the headline (`comparisons.rs`), conditions that keep their transition time
//! (`conditions.rs`), the expected completion time (`eta.rs`), and the Events of the transitions between two statuses (`events.rs`).
//! The same inputs always give the same status, so a pass that observed nothing new writes
//! nothing. Uses `api/`, `plan/`, `result/`, `report/` and the names of `build/`.

mod cells;
mod comparisons;
mod conditions;
mod eta;
pub mod events;

pub use cells::{CellOutcome, cell_status, knees};
pub use comparisons::{compare, comparisons, headline, precision};
pub use conditions::{condition, now_seconds};
pub use eta::estimated_completion;

#[cfg(test)]
mod tests;
