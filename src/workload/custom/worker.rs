//! One worker's operation stream of one phase (§5, §6 Draws).

use std::sync::Arc;

use mongodb::bson::{Bson, doc};

use super::generator::{Env, Scope};
use super::model::TAG_PHASES;
use super::template::Body;
use super::workload::Workload;
use super::zipf::Zipf;
use crate::workload::rng::{Stream, key, scale};
use crate::workload::{Command, Operation, split_write};

/// Worker `w` of `W` in phase `p`: draws from `stream(key(seed, 32 + p, w))`, one draw for the
/// template, then one value per placeholder; an insert takes its documents from the dataset's
/// sequence past the seeded ones, in lanes of its own.
#[derive(Debug, Clone)]
pub struct Worker {
    workload: Arc<Workload>,
    stream: Stream,
    /// Running sums of the phase's weights, in operation order.
    cumulative: Vec<u64>,
    dataset_seed: u64,
    /// Seeded documents per collection of the cell.
    counts: Vec<u64>,
    /// Zipfian ranks over each collection's seeded documents (template refs).
    zipfs: Vec<Zipf>,
    worker: u64,
    workers: u64,
    /// Documents this worker has inserted into each collection (`k` of §5).
    inserted: Vec<u64>,
}

/// One generated operation and the operation (template) index it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Generated {
    pub operation: Operation,
    pub template: usize,
}

impl Worker {
    /// `worker` is the global index of `workers` in all; `dataset_seed` names the documents
    /// that inserts add (document `i` of §4, the same a larger dataset would hold); `counts` the
    /// seeded documents per collection of this cell. A `phase` past the last reads as the last.
    pub fn new(
        workload: &Arc<Workload>,
        seed: u64,
        dataset_seed: u64,
        phase: usize,
        worker: u32,
        workers: u32,
        counts: &[u64],
    ) -> Worker {
        debug_assert!(phase < workload.phases.len(), "phase {phase} out of range");
        let p = phase.min(workload.phases.len().saturating_sub(1));
        let mut sum = 0u64;
        let cumulative = workload
            .phases
            .get(p)
            .map(|ph| ph.weights.as_slice())
            .unwrap_or_default()
            .iter()
            .map(|w| {
                sum = sum.saturating_add(*w);
                sum
            })
            .collect();
        let n = workload.collections.len();
        let counts: Vec<u64> = (0..n)
            .map(|c| counts.get(c).copied().unwrap_or(0))
            .collect();
        Worker {
            zipfs: workload.ref_zipfs(&counts),
            workload: Arc::clone(workload),
            stream: Stream::new(key(seed, TAG_PHASES + p as u64, u64::from(worker))),
            cumulative,
            dataset_seed,
            counts,
            worker: u64::from(worker),
            workers: u64::from(workers.max(1)),
            inserted: vec![0; n],
        }
    }

    #[allow(clippy::should_implement_trait)] // endless, and paced by the runner: not an Iterator
    pub fn next(&mut self) -> Generated {
        let wl = Arc::clone(&self.workload);
        let total = self.cumulative.last().copied().unwrap_or(0).max(1);
        let r = scale(self.stream.next_u64(), 0, total - 1);
        let j = self
            .cumulative
            .partition_point(|&c| c <= r)
            .min(wl.ops.len() - 1);
        let op = &wl.ops[j];
        let env = Env {
            collections: &wl.collections,
            seq: 0,
            scope: Scope::Cell {
                counts: &self.counts,
                zipfs: &self.zipfs,
            },
        };
        let values = wl.draw_slots(op, &mut self.stream, &env);
        let commands = match &op.body {
            Body::Transaction { parts } => {
                let mut commands = Vec::new();
                for part in parts {
                    let part_values: Vec<Bson> =
                        part.slots.iter().map(|&s| values[s].clone()).collect();
                    commands.extend(self.commands(&wl, part.op, &part_values, true));
                }
                commands
            }
            _ => self.commands(&wl, j, &values, false),
        };
        Generated {
            operation: Operation {
                label: wl.operations[j].class,
                database: wl.database,
                commands,
            },
            template: j,
        }
    }

    /// The commands of single operation `j`; inside a transaction none is retryable on its own.
    fn commands(&mut self, wl: &Workload, j: usize, values: &[Bson], in_txn: bool) -> Vec<Command> {
        let op = &wl.ops[j];
        let c = op.collection;
        let name = &wl.collections[c].name;
        let sent = |command: Command, retryable: bool| {
            if retryable && !in_txn {
                command.retryable()
            } else {
                command
            }
        };
        if let Body::Insert { documents } = op.body {
            let seeded = self.counts[c];
            let mut docs = Vec::with_capacity(documents as usize);
            for _ in 0..documents {
                let k = self.inserted[c];
                self.inserted[c] += 1;
                let i = seeded
                    .wrapping_add(self.worker)
                    .wrapping_add(k.wrapping_mul(self.workers));
                docs.push(wl.document(self.dataset_seed, c, i));
            }
            let template = doc! { "insert": name.as_str(), "documents": [], "ordered": true };
            return split_write(&template, "documents", docs)
                .iter()
                .map(|d| sent(Command::new(d, false, in_txn), true))
                .collect();
        }
        match op.command(name, values) {
            Some(shape) => vec![sent(
                Command::new(&shape.body, shape.drain, in_txn),
                shape.retryable,
            )],
            None => Vec::new(),
        }
    }
}
