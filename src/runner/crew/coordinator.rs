//! The coordinator's side (process 0): it starts the board, writes orders with a common start
//! time ahead for timed phases, and collects every other process's reply within a grace.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use super::board::Board;
use super::orders::{ORDER_KEY, Order, Reply, Task, epoch_ms, instant_of, ready_key, reply_key};
use super::split::ClientSlice;

/// Longest wait for the other client processes past the end of this one's share of a step
/// bounded by `limit` per operation: an operation in flight may take it, twice for good
/// measure.
pub fn grace(limit: Duration) -> Duration {
    2 * limit + Duration::from_secs(10)
}

impl Helpers<'_> {
    /// Orders a share of adding documents `[from, to)` to the target, runs this process's
    /// share with `load`, and waits for the others'; returns every process's payload, this
    /// one's first.
    ///
    /// # Errors
    /// This process's load error, or a message naming the process that failed or did not
    /// reply.
    pub async fn split_load<E: From<String>, F: Future<Output = Result<serde_json::Value, E>>>(
        &self,
        from: u64,
        to: u64,
        limit: Duration,
        load: impl FnOnce(std::ops::Range<u64>, ClientSlice) -> F,
    ) -> Result<Vec<serde_json::Value>, E> {
        let issued = self
            .crew
            .order(self.target, to, |_| Task::Seed { from, to })
            .await?;
        let started = Instant::now();
        let slice = self.crew.slice();
        let own = load(slice.documents(from..to), slice).await?;
        let wait = started.elapsed() + grace(limit);
        let mut all = vec![own];
        all.extend(self.crew.collect(&issued, wait).await?);
        Ok(all)
    }
}

/// The other client processes of a coordinator, working on the runner's `target`-th target.
#[derive(Clone, Copy)]
pub struct Helpers<'a> {
    pub crew: &'a Crew,
    pub target: usize,
}

/// The coordinator's side of a run with other client processes.
pub struct Crew {
    board: Board,
    slice: ClientSlice,
    seq: AtomicU64,
}

/// An order written, with the local instant of its start time if it has one.
pub struct Issued {
    pub seq: u64,
    /// The one process it is for, if not every one.
    pub only: Option<u32>,
    pub start: Option<Instant>,
    pub start_at_ms: u64,
}

impl Crew {
    /// Longest wait for every other process to be ready at the start.
    pub const READY_TIMEOUT: Duration = Duration::from_secs(300);

    /// Sets up the board and waits until every other process of `slice` is ready (so none
    /// misses the first order); continues the order numbers of a coordinator that ran before
    /// in the same Job.
    ///
    /// # Errors
    /// The board cannot be used, or a process was not ready within [`Crew::READY_TIMEOUT`].
    pub async fn start(board: Board, slice: ClientSlice) -> Result<Crew, String> {
        board.create().await?;
        let started = Instant::now();
        loop {
            let data = board.read().await?;
            let missing: Vec<u32> = (1..slice.count)
                .filter(|i| !data.contains_key(&ready_key(*i)))
                .collect();
            if missing.is_empty() {
                let seq = data
                    .get(ORDER_KEY)
                    .and_then(|o| serde_json::from_str::<Order>(o).ok())
                    .map_or(0, |o| o.seq);
                return Ok(Crew {
                    board,
                    slice,
                    seq: AtomicU64::new(seq),
                });
            }
            if started.elapsed() > Self::READY_TIMEOUT {
                return Err(format!(
                    "client processes {missing:?} of {} were not ready after {} s",
                    slice.count,
                    Self::READY_TIMEOUT.as_secs()
                ));
            }
            tokio::time::sleep(board.poll()).await;
        }
    }

    /// The coordinator's own slice.
    pub fn slice(&self) -> ClientSlice {
        self.slice
    }

    /// Writes the next order for every other process; phases get a start time far enough
    /// ahead for every process.
    pub async fn order(
        &self,
        target: usize,
        records: u64,
        task: impl FnOnce(u64) -> Task,
    ) -> Result<Issued, String> {
        self.order_to(target, records, task, None).await
    }

    /// Writes the next order, for process `only` or (`None`) every other process.
    pub async fn order_to(
        &self,
        target: usize,
        records: u64,
        task: impl FnOnce(u64) -> Task,
        only: Option<u32>,
    ) -> Result<Issued, String> {
        let seq = self.seq.fetch_add(1, Ordering::SeqCst) + 1;
        let start_at_ms = epoch_ms(SystemTime::now() + self.board.lead());
        let task = task(start_at_ms);
        let timed = matches!(task, Task::Warmup { .. } | Task::Measure { .. });
        let order = Order {
            seq,
            target,
            records,
            task,
            only,
        };
        let text = serde_json::to_string(&order).expect("an order serializes");
        self.board.write(ORDER_KEY, text).await?;
        Ok(Issued {
            seq,
            only,
            start: timed.then(|| instant_of(start_at_ms)),
            start_at_ms,
        })
    }

    /// Waits for every other process's reply to `issued`, at most `grace` past the moment the
    /// coordinator finished its own share; returns their payloads in process order.
    ///
    /// # Errors
    /// Names the first process that replied with an error or did not reply in time.
    pub async fn collect(
        &self,
        issued: &Issued,
        grace: Duration,
    ) -> Result<Vec<serde_json::Value>, String> {
        let deadline = Instant::now() + grace;
        loop {
            let data = self.board.read().await?;
            let mut payloads = Vec::new();
            let mut waiting = None;
            for slice in self.slice.all().skip(1) {
                if issued.only.is_some_and(|only| only != slice.index) {
                    continue;
                }
                let reply = data
                    .get(&reply_key(slice.index))
                    .and_then(|r| serde_json::from_str::<Reply>(r).ok())
                    .filter(|r| r.seq == issued.seq);
                match reply {
                    Some(Reply { outcome: Ok(v), .. }) => payloads.push(v),
                    Some(Reply {
                        outcome: Err(e), ..
                    }) => return Err(format!("{slice}: {e}")),
                    None => {
                        waiting.get_or_insert(slice);
                    }
                }
            }
            let Some(missing) = waiting else {
                return Ok(payloads);
            };
            if Instant::now() >= deadline {
                return Err(format!(
                    "{missing} did not reply within {} s of this process finishing its share \
                     (it stopped, or cannot reach the server or the board)",
                    grace.as_secs()
                ));
            }
            tokio::time::sleep(self.board.poll()).await;
        }
    }

    /// Tells every other process the run is over.
    pub async fn finish(&self) -> Result<(), String> {
        self.order(0, 0, |_| Task::Finish).await.map(|_| ())
    }
}
