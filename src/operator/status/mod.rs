//! The status of a benchmark, pure: each cell's entry, the comparisons against the baseline
//! and the headline, conditions that keep their transition time (`cells.rs`), and the Events
//! of the transitions between two statuses (`events.rs`).

mod cells;
pub mod events;

pub use cells::{
    CellOutcome, cell_status, compare, comparisons, condition, headline, now_seconds, precision,
};
