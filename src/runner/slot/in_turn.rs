//! A slot whose cells run one after another, in an order drawn from the seed (A B, B A, …), so
//! that slow drift of the machines favours none of the targets and the comparison can pair the
//! cells of a slot.

use crate::measure::canary;
use crate::result::{CellResult, CellStatus, Slot};

use super::super::canaries::{self, Probes};
use super::super::cell::{CellProgress, run_cell_with};
use super::super::sink::SinkError;
use super::seeding::reseed;
use super::size::{Size, SlotOutcome, TargetState};
use crate::contract::slot_order;
use crate::runner::definition::Events;

/// Runs slot `slot` of `size`: every target's cell not done yet, in the slot's order.
///
/// # Errors
/// Only what [`Events::finished`] returns.
pub(crate) async fn in_turn(
    size: &Size<'_>,
    slot: u32,
    states: &mut [TargetState],
    probes: &mut Probes,
    events: &mut impl Events,
) -> Result<SlotOutcome, SinkError> {
    let bench = size.bench;
    let order = slot_order::order(bench.plan.seed(), size.index, slot, size.targets.len());
    let mut outcome = SlotOutcome::default();
    for (position, &i) in order.iter().enumerate() {
        let name = size.targets[i].target.name.as_str();
        let cell = bench.cell(name, size.size, slot);
        if bench.completed.contains(&cell.id) {
            continue;
        }
        let id = bench.cell_id(&cell);
        let mut result = match &mut states[i] {
            TargetState::Broken(reason) => CellResult::empty(
                id,
                CellStatus::Incomplete {
                    reason: reason.clone(),
                },
            ),
            TargetState::Idle => {
                unreachable!("a target with a pending cell was brought to its size")
            }
            TargetState::Seeded(seeded) => {
                let t = &size.targets[i];
                let probe = tokio::task::spawn_blocking(canary::probe).await.ok();
                let servers = match bench.server_canaries.get(name) {
                    Some(addresses) => canaries::probe_all(addresses).await,
                    None => Vec::new(),
                };
                let progress = CellProgress::default();
                events.started(&cell, &progress);
                let mut result = run_cell_with(
                    &t.target,
                    &t.uri,
                    &bench.plan,
                    &bench.settings,
                    id,
                    seeded,
                    &progress,
                    size.helpers(i),
                )
                .await;
                if !result.is_complete() {
                    // The collection's state is unknown after a cell that stopped early: seed
                    // this size again before the next repetition.
                    states[i] = reseed(size, i).await;
                }
                probes.keep(&mut result, probe, servers, bench.canary_policy);
                outcome.void |= crate::runner::slots::voids_slot(&result);
                result
            }
        };
        if size.targets.len() > 1 {
            result.slot = Some(Slot {
                number: slot,
                position: position as u32,
            });
        }
        result.design = Some(bench.design());
        events.finished(&cell, &result).await?;
        outcome.results.push(result);
    }
    Ok(outcome)
}
