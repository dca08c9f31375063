//! A slot whose cells run at the same time (`parallelism: Simultaneous`): each target warms
//! up, restores and is checked by digest on its own, they meet, and all measure over one
//! window of time; on one machine each runs on a side of CPUs of its own, traded slot by
//! slot. A slot whose cell is incomplete or invalid is void for every target (its cells stay
//! in the results, invalid with the reason) and runs again.

use std::sync::Arc;

use crate::contract::CpuSet;
use crate::measure::canary;
use crate::result::{CellResult, CellStatus, Simultaneous, Slot};

use super::super::canaries::{self, Probes};
use super::super::cell::{CellProgress, MEETING_STEP, run_cell_together};
use super::super::server::process_of_uri;
use super::super::sink::SinkError;
use super::seeding::reseed;
use super::sides::{self, pin_process, pinned_runtime};
use super::size::{Size, SlotOutcome, TargetState};
use crate::runner::cell::Meeting;
use crate::runner::definition::Events;

/// The sides of a run on this machine, with a runtime each for its client workers.
pub(crate) struct Sides {
    sets: Vec<CpuSet>,
    runtimes: Vec<tokio::runtime::Runtime>,
}

impl Sides {
    /// Runtimes for `sets` (none for none).
    ///
    /// # Errors
    /// A runtime cannot be built.
    pub fn start(sets: &[CpuSet]) -> std::io::Result<Sides> {
        Ok(Sides {
            sets: sets.to_vec(),
            runtimes: sets.iter().map(pinned_runtime).collect::<Result<_, _>>()?,
        })
    }

    /// Stops the runtimes without waiting in this (async) context.
    pub fn stop(self) {
        for rt in self.runtimes {
            rt.shutdown_background();
        }
    }
}

/// One target's cell of the slot, owning what it runs with so that it can run on its side's
/// runtime.
struct Entry {
    target: usize,
    cell: crate::plan::PlannedCell,
    side: Option<usize>,
    progress: CellProgress,
}

/// Runs slot `slot` of `size`: every target's pending cell at the same time.
///
/// # Errors
/// Only what [`Events::finished`] returns.
pub(crate) async fn together(
    size: &Size<'_>,
    slot: u32,
    states: &mut [TargetState],
    probes: &mut Probes,
    sides: &Sides,
    events: &mut impl Events,
) -> Result<SlotOutcome, SinkError> {
    let bench = size.bench;
    let n = size.targets.len();
    let assignment =
        (!sides.sets.is_empty()).then(|| sides::assignment(bench.plan.seed(), size.index, slot, n));
    let mut entries = Vec::new();
    let mut outcome = SlotOutcome::default();
    for i in 0..n {
        let cell = bench.cell(&size.targets[i].target.name, size.size, slot);
        if bench.completed.contains(&cell.id) {
            continue;
        }
        if let TargetState::Broken(reason) = &states[i] {
            let result = CellResult::empty(
                bench.cell_id(&cell),
                CellStatus::Incomplete {
                    reason: reason.clone(),
                },
            );
            events.finished(&cell, &result).await?;
            outcome.results.push(result);
            continue;
        }
        entries.push(Entry {
            target: i,
            cell,
            side: assignment.as_ref().map(|a| a[i]),
            progress: CellProgress::default(),
        });
    }
    if entries.is_empty() {
        return Ok(outcome);
    }
    // One probe of the client for the slot; each target's server nodes, one after another.
    let client = tokio::task::spawn_blocking(canary::probe).await.ok();
    let mut servers = Vec::new();
    for e in &entries {
        let name = &size.targets[e.target].target.name;
        servers.push(match bench.server_canaries.get(name) {
            Some(addresses) => canaries::probe_all(addresses).await,
            None => Vec::new(),
        });
    }
    let meeting = Arc::new(Meeting::new(entries.len()));
    let mut running = Vec::new();
    for e in &entries {
        events.started(&e.cell, &e.progress);
        running.push(start_cell(size, e, states, sides, &meeting));
    }
    let mut results = Vec::new();
    for (e, handle) in entries.iter().zip(running) {
        let (result, state) = match handle.await {
            Ok(done) => done,
            Err(e) => panic!("a simultaneous cell's task ended without its result: {e}"),
        };
        states[e.target] = state;
        results.push(result);
    }
    for ((e, result), servers) in entries.iter().zip(&mut results).zip(servers) {
        if !result.is_complete() && !stopped_at_meeting(result) {
            // The collection's state is unknown after a cell that stopped early.
            states[e.target] = reseed(size, e.target).await;
        }
        outcome.void |= probes.keep(result, client, servers, bench.canary_policy);
        result.slot = Some(Slot {
            number: slot,
            position: 0,
        });
        result.simultaneous = meeting.start().map(|start| Simultaneous {
            window_start_unix_ms: start.at_unix_ms,
            side: e.side.map(|s| s as u32),
            side_cpus: e.side.map(|s| sides.sets[s].to_string()),
        });
    }
    outcome.void |= void_all(&mut results);
    for (e, result) in entries.iter().zip(results) {
        events.finished(&e.cell, &result).await?;
        outcome.results.push(result);
    }
    Ok(outcome)
}

/// Starts `e`'s cell on its side's runtime (its server process pinned to the side first), or
/// on this one; the handle gives its result and its target's state after it.
fn start_cell(
    size: &Size<'_>,
    e: &Entry,
    states: &mut [TargetState],
    sides: &Sides,
    meeting: &Arc<Meeting>,
) -> tokio::task::JoinHandle<(CellResult, TargetState)> {
    let bench = size.bench;
    let t = &size.targets[e.target];
    let TargetState::Seeded(seeded) = std::mem::replace(&mut states[e.target], TargetState::Idle)
    else {
        unreachable!("only seeded targets run a cell")
    };
    let (target, uri) = (t.target.clone(), t.uri.clone());
    let (plan, settings) = (bench.plan.clone(), bench.settings.clone());
    let (id, progress, meeting) = (bench.cell_id(&e.cell), e.progress.clone(), meeting.clone());
    let pinned = e.side.map(|s| pin_server(&uri, &sides.sets[s])).transpose();
    let run = async move {
        let mut seeded = seeded;
        let result = match pinned {
            Ok(_) => {
                run_cell_together(
                    &target,
                    &uri,
                    &plan,
                    &settings,
                    id,
                    &mut seeded,
                    &progress,
                    &meeting,
                )
                .await
            }
            Err(why) => {
                meeting.leave();
                CellResult::empty(
                    id,
                    CellStatus::Incomplete {
                        reason: format!("target {}: pinning to its side: {why}", target.name),
                    },
                )
            }
        };
        (result, TargetState::Seeded(seeded))
    };
    match e.side {
        Some(s) => sides.runtimes[s].spawn(run),
        None => tokio::spawn(run),
    }
}

/// Pins the server process listening at `uri` (on this machine) to `cpus`.
fn pin_server(uri: &str, cpus: &CpuSet) -> Result<(), String> {
    let pid = process_of_uri(uri)?;
    pin_process(pid, cpus)
}

/// A cell that stopped because another of its slot did: its collection was left seeded.
fn stopped_at_meeting(result: &CellResult) -> bool {
    matches!(&result.status, CellStatus::Incomplete { reason } if reason.contains(MEETING_STEP))
}

/// When one cell of the slot is incomplete or invalid, marks every other valid one invalid
/// too, naming it: the slot cannot be compared and runs again. Returns whether it did.
fn void_all(results: &mut [CellResult]) -> bool {
    let why: Vec<String> = results
        .iter()
        .filter(|r| !r.is_valid())
        .map(|r| match &r.status {
            CellStatus::Incomplete { reason } => format!("cell {} incomplete: {reason}", r.cell),
            CellStatus::Complete => {
                format!("cell {} invalid: {}", r.cell, r.invalid_reasons.join("; "))
            }
        })
        .collect();
    if why.is_empty() {
        return false;
    }
    let reason = format!("its simultaneous slot is void: {}", why.join("; "));
    for r in results.iter_mut().filter(|r| r.is_valid()) {
        r.invalid_reasons.push(reason.clone());
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::testing::slotted_result;

    #[test]
    fn one_invalid_cell_voids_the_others_of_its_slot_naming_it() {
        let mut ok = vec![slotted_result("a", 1, 100.0), slotted_result("b", 1, 101.0)];
        assert!(!void_all(&mut ok));
        assert!(ok.iter().all(CellResult::is_valid));
        let mut one_bad = ok.clone();
        one_bad[1].invalid_reasons.push("an election".into());
        assert!(void_all(&mut one_bad));
        assert_eq!(
            one_bad[0].invalid_reasons,
            [format!(
                "its simultaneous slot is void: cell {} invalid: an election",
                one_bad[1].cell
            )]
        );
        assert_eq!(one_bad[1].invalid_reasons, ["an election"]);
    }
}
