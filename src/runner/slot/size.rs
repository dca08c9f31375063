//! What one size's slots run with and what a slot gives.

use crate::api::DatasetSize;
use crate::result::CellResult;
use crate::runner::crew::{Crew, Helpers};
use crate::runner::dataset::Seeded;
use crate::runner::definition::{Benchmark, Connected};

/// What one size's slots run with.
pub(crate) struct Size<'a> {
    pub bench: &'a Benchmark,
    pub targets: &'a [Connected],
    /// The size as the spec writes it, and its value.
    pub size: &'a (String, DatasetSize),
    /// Its place among the sizes, from 0 (slot orders and sides are drawn per size).
    pub index: usize,
    /// Documents it holds.
    pub documents: u64,
    pub crew: Option<&'a Crew>,
}

impl Size<'_> {
    /// The other client processes, working on target `i`.
    pub fn helpers(&self, i: usize) -> Option<Helpers<'_>> {
        self.crew.map(|crew| Helpers { crew, target: i })
    }
}

/// What a target has at a size: its collection in a known seeded state, or why it cannot go
/// on at this size.
pub(crate) enum TargetState {
    Seeded(Seeded),
    Broken(String),
    /// Not brought to this size (its cells here were all done).
    Idle,
}

/// What a slot gave: its cells' results in the order they ran, and whether it is void (one of
/// its cells could not count, so its slot runs again), with why.
#[derive(Default)]
pub(crate) struct SlotOutcome {
    pub results: Vec<CellResult>,
    pub void: bool,
}
