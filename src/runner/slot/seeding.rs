//! Bringing a target to a size, and again after a cell left its collection in an unknown
//! state: alone, or with the other client processes loading their shares.

use crate::runner::crew::Helpers;
use crate::runner::dataset::{self, Seeded};
use crate::runner::definition::{Benchmark, Connected};

use super::size::{Size, TargetState};

/// Seeds target `i` of `size` again, after a cell left its collection in an unknown state.
pub(crate) async fn reseed(size: &Size<'_>, i: usize) -> TargetState {
    let t = &size.targets[i];
    match seed(size.bench, t, size.documents, None, size.helpers(i)).await {
        Ok(again) => TargetState::Seeded(again),
        Err(e) => TargetState::Broken(format!(
            "target {}: seeding to {} again after an incomplete cell: {e}",
            t.target.name, size.size.0
        )),
    }
}

pub(crate) async fn seed(
    bench: &Benchmark,
    t: &Connected,
    documents: u64,
    current: Option<&Seeded>,
    crew: Option<Helpers<'_>>,
) -> Result<Seeded, dataset::DatasetError> {
    let prepare = |current, crew| {
        dataset::prepare_with(
            &t.target,
            &bench.plan,
            bench.settings.workers,
            documents,
            current,
            bench.reuse_dataset,
            bench.settings.operation_timeout,
            crew,
        )
    };
    match prepare(current, crew).await {
        // A client process that stopped (its pod is being replaced) leaves its share undone:
        // this process seeds the size afresh on its own instead.
        Err(e) if crew.is_some() => {
            tracing::warn!(target = %t.target.name, "seeding with the other client processes: {e}; seeding alone");
            prepare(None, None).await
        }
        other => other,
    }
}
