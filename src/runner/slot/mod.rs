//! One slot of a size: repetition k of every target. Its cells run one after another in a
//! seeded order (`in_turn.rs`), or at the same time (`together.rs`, `parallelism:
//! Simultaneous`), meeting before their measured phases (`cell::Meeting`) and, on one
//! machine, each on a side of its own that the targets trade slot by slot (`sides.rs`).
//! `size.rs` holds what a size's slots share, `seeding.rs` how a target reaches a size.

mod in_turn;
mod seeding;
pub mod sides;
mod size;
mod together;

pub(crate) use in_turn::in_turn;
pub(crate) use seeding::seed;
pub(crate) use size::{Size, TargetState};
pub(crate) use together::{Sides, together};
