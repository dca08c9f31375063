//! Several client processes running one runner's work together (`client.pods`, or
//! `mongobench run --client-processes N`). Process 0, the coordinator, runs the benchmark loop
//! as a single process would; at the steps whose work is split it writes an [`Order`] on a
//! shared [`Board`], does its own share, and collects every other process's [`Reply`]:
//!
//! - `seed`: each process loads its share of the documents being added; the coordinator
//!   checks the count and takes the digest once, after all replied;
//! - `warmup`: each runs its workers' warm-up from a common start time, keeping what they
//!   changed;
//! - `measure`: each runs its workers' measured phase from a common start time and replies with
//!   its partial result (histograms, counts, CPU, fingerprint shares), keeping what its workers
//!   changed;
//! - `restore`: one process at a time (restores rewrite documents by deleting and inserting
//!   them, and two processes' workers may have changed the same one) restores what its
//!   workers changed in the last phase, after the coordinator took the server's figures; the
//!   coordinator then verifies the digest.
//!
//! The board is a directory (local processes) or a ConfigMap (the pods of an Indexed Job);
//! each key is written by one process only, so writers never race. A process that does not
//! reply in time, or replies with an error, is named in the error, and the coordinator's cell
//! ends incomplete: a result of fewer processes is never passed off as whole.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde::{Deserialize, Serialize};

use super::split::ClientSlice;

/// Environment variable with a pod's index in an Indexed Job (set by Kubernetes).
pub const COMPLETION_INDEX_ENV: &str = "JOB_COMPLETION_INDEX";
/// Environment variable with the runner Job's uid (from the pod's labels), the prefix of its
/// pods' board keys.
pub const JOB_UID_ENV: &str = "MONGOBENCH_JOB_UID";

/// Key of the coordinator's current order.
const ORDER_KEY: &str = "order";

/// The key a process writes when it is ready, and its replies.
fn ready_key(index: u32) -> String {
    format!("ready-{index}")
}
fn reply_key(index: u32) -> String {
    format!("reply-{index}")
}

/// A place every client process can read and write small JSON values.
#[derive(Clone)]
pub enum Board {
    /// One file per key in a directory (processes on one machine).
    Dir(PathBuf),
    /// One data key per key of a ConfigMap (pods of a Job).
    ConfigMap(Box<ConfigMapBoard>),
}

/// Where the pods of a Job coordinate: a ConfigMap created by the coordinator and owned by
/// `owner`. Keys carry `prefix` (the Job's uid): what the pods of an earlier Job of the same
/// name left is never read.
#[derive(Clone)]
pub struct ConfigMapBoard {
    pub api: Api<ConfigMap>,
    pub name: String,
    pub prefix: String,
    pub owner: Option<OwnerReference>,
}

impl Board {
    /// How often a waiting process looks at the board.
    fn poll(&self) -> Duration {
        match self {
            Board::Dir(_) => Duration::from_millis(50),
            Board::ConfigMap(_) => Duration::from_millis(400),
        }
    }

    /// How far ahead of now a common start time is set: every process must have seen the
    /// order by then.
    fn lead(&self) -> Duration {
        match self {
            Board::Dir(_) => Duration::from_millis(500),
            Board::ConfigMap(_) => Duration::from_secs(3),
        }
    }

    /// Creates the board if it does not exist (the coordinator, at start).
    pub async fn create(&self) -> Result<(), String> {
        match self {
            Board::Dir(dir) => std::fs::create_dir_all(dir)
                .map_err(|e| format!("creating the board {}: {e}", dir.display())),
            Board::ConfigMap(board) => {
                let ConfigMapBoard {
                    api, name, owner, ..
                } = &**board;
                let cm = ConfigMap {
                    metadata: kube::api::ObjectMeta {
                        name: Some(name.clone()),
                        owner_references: owner.clone().map(|o| vec![o]),
                        ..Default::default()
                    },
                    ..ConfigMap::default()
                };
                match api.create(&PostParams::default(), &cm).await {
                    Ok(_) => Ok(()),
                    Err(kube::Error::Api(e)) if e.code == 409 => Ok(()),
                    Err(e) => Err(format!("creating the board ConfigMap {name}: {e}")),
                }
            }
        }
    }

    /// Every key and value on the board (empty before it exists).
    pub async fn read(&self) -> Result<BTreeMap<String, String>, String> {
        match self {
            Board::Dir(dir) => {
                let mut out = BTreeMap::new();
                let entries = match std::fs::read_dir(dir) {
                    Ok(e) => e,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
                    Err(e) => return Err(format!("reading the board {}: {e}", dir.display())),
                };
                for entry in entries.flatten() {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    if name.starts_with('.') {
                        continue;
                    }
                    if let Ok(text) = std::fs::read_to_string(entry.path()) {
                        out.insert(name, text);
                    }
                }
                Ok(out)
            }
            Board::ConfigMap(board) => match board.api.get_opt(&board.name).await {
                Ok(cm) => Ok(cm
                    .and_then(|c| c.data)
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|(k, v)| {
                        Some((k.strip_prefix(board.prefix.as_str())?.to_owned(), v))
                    })
                    .collect()),
                Err(e) => Err(format!("reading the board ConfigMap {}: {e}", board.name)),
            },
        }
    }

    /// Sets one key (each key has one writer).
    pub async fn write(&self, key: &str, value: String) -> Result<(), String> {
        match self {
            Board::Dir(dir) => {
                // Written aside and renamed, so a reader never sees half a value.
                let aside = dir.join(format!(".{key}"));
                std::fs::write(&aside, value)
                    .and_then(|()| std::fs::rename(&aside, dir.join(key)))
                    .map_err(|e| format!("writing {key} on the board {}: {e}", dir.display()))
            }
            Board::ConfigMap(board) => {
                let ConfigMapBoard {
                    api, name, prefix, ..
                } = &**board;
                let patch = serde_json::json!({"data": {format!("{prefix}{key}"): value}});
                api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
                    .map(|_| ())
                    .map_err(|e| format!("writing {key} on the board ConfigMap {name}: {e}"))
            }
        }
    }
}

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

/// Milliseconds since the Unix epoch of `t`.
fn epoch_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The local instant of a wall-clock start time (now, if it has passed).
pub fn instant_of(start_at_ms: u64) -> Instant {
    let now_ms = epoch_ms(SystemTime::now());
    Instant::now() + Duration::from_millis(start_at_ms.saturating_sub(now_ms))
}

/// Milliseconds this process started after the common start time (negative: early).
pub fn skew_ms(start_at_ms: u64) -> f64 {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64() * 1000.0)
        .unwrap_or(0.0);
    now - start_at_ms as f64
}

/// What the coordinator asks of the other processes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "task",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Task {
    /// Load your share of documents `[from, to)` into the target's collection.
    Seed { from: u64, to: u64 },
    /// Run your workers' warm-up from `start_at_ms`; reply with its per-second completions.
    Warmup { start_at_ms: u64 },
    /// Run your workers' measured phase from `start_at_ms`; reply with a
    /// [`Partial`](super::partial::Partial).
    Measure { start_at_ms: u64 },
    /// Restore what your workers changed in the last phase.
    Restore,
    /// The run is over: exit.
    Finish,
}

/// One order: a task on one of the runner's targets, whose collection holds `records` seeded
/// documents.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Order {
    pub seq: u64,
    pub target: usize,
    pub records: u64,
    #[serde(flatten)]
    pub task: Task,
    /// For this process only; `None`: for every process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub only: Option<u32>,
}

impl Order {
    /// Whether process `index` is to carry it out.
    pub fn is_for(&self, index: u32) -> bool {
        self.only.is_none_or(|only| only == index)
    }
}

/// A process's answer to order `seq`: its payload, or why it could not do the task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reply {
    pub seq: u64,
    pub outcome: Result<serde_json::Value, String>,
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

/// The other processes' side: their board access.
pub struct Member {
    board: Board,
    slice: ClientSlice,
}

impl Member {
    /// Announces this process and returns the order number current before it did: a process
    /// that (re)starts mid-run skips the order under way, as it has none of its state.
    ///
    /// # Errors
    /// The board could not be written for [`Crew::READY_TIMEOUT`] (the coordinator creates it).
    pub async fn join(board: Board, slice: ClientSlice) -> Result<(Member, u64), String> {
        let started = Instant::now();
        loop {
            let written = async {
                let data = board.read().await?;
                let current = data
                    .get(ORDER_KEY)
                    .and_then(|o| serde_json::from_str::<Order>(o).ok())
                    .map_or(0, |o| o.seq);
                let now = epoch_ms(SystemTime::now()).to_string();
                board.write(&ready_key(slice.index), now).await?;
                Ok::<u64, String>(current)
            };
            match written.await {
                Ok(current) => return Ok((Member { board, slice }, current)),
                Err(e) if started.elapsed() > Crew::READY_TIMEOUT => return Err(e),
                // The coordinator may not have created the board yet.
                Err(e) => tracing::debug!("{e}; trying again"),
            }
            tokio::time::sleep(board.poll()).await;
        }
    }

    /// This process's slice.
    pub fn slice(&self) -> ClientSlice {
        self.slice
    }

    /// Waits for the first order numbered above `after`; `None` once the board is gone (its
    /// run was deleted, or ended and removed it) or cannot be read for [`Crew::READY_TIMEOUT`].
    pub async fn next_order(&self, after: u64) -> Option<Order> {
        let mut last_read = Instant::now();
        loop {
            match self.board.read().await {
                Ok(data) if !data.contains_key(&ready_key(self.slice.index)) => return None,
                Ok(data) => {
                    last_read = Instant::now();
                    if let Some(order) = data
                        .get(ORDER_KEY)
                        .and_then(|o| serde_json::from_str::<Order>(o).ok())
                        .filter(|o| o.seq > after)
                    {
                        return Some(order);
                    }
                }
                Err(e) if last_read.elapsed() > Crew::READY_TIMEOUT => {
                    tracing::warn!("{e}: giving up");
                    return None;
                }
                Err(_) => {}
            }
            tokio::time::sleep(self.board.poll()).await;
        }
    }

    /// Replies to order `seq`, trying again while the board cannot be written (the coordinator
    /// waits only so long).
    pub async fn reply(&self, seq: u64, outcome: Result<serde_json::Value, String>) {
        let text = serde_json::to_string(&Reply { seq, outcome }).expect("a reply serializes");
        for _ in 0..20 {
            match self
                .board
                .write(&reply_key(self.slice.index), text.clone())
                .await
            {
                Ok(()) => return,
                Err(e) => tracing::warn!("{e}; trying again"),
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_and_replies_round_trip_as_json() {
        let order = Order {
            seq: 7,
            target: 1,
            records: 1000,
            task: Task::Measure { start_at_ms: 42 },
            only: None,
        };
        let text = serde_json::to_string(&order).unwrap();
        assert_eq!(
            text,
            r#"{"seq":7,"target":1,"records":1000,"task":"measure","startAtMs":42}"#
        );
        assert_eq!(serde_json::from_str::<Order>(&text).unwrap(), order);
        let reply = Reply {
            seq: 7,
            outcome: Err("no server".into()),
        };
        let text = serde_json::to_string(&reply).unwrap();
        assert_eq!(serde_json::from_str::<Reply>(&text).unwrap(), reply);
    }

    #[tokio::test]
    async fn a_coordinator_collects_every_reply_and_names_a_silent_process() {
        let dir = std::env::temp_dir().join(format!("mongobench-crew-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let board = Board::Dir(dir.clone());
        board.create().await.unwrap();
        let slices: Vec<_> = ClientSlice::new(0, 3).unwrap().all().collect();
        let (one, _) = Member::join(board.clone(), slices[1]).await.unwrap();
        let (two, _) = Member::join(board.clone(), slices[2]).await.unwrap();
        let crew = Crew::start(board.clone(), slices[0]).await.unwrap();
        let issued = crew.order(0, 10, |_| Task::Restore).await.unwrap();
        assert_eq!(one.next_order(0).await.unwrap().task, Task::Restore);
        one.reply(issued.seq, Ok(serde_json::json!(1))).await;
        let silent = crew.collect(&issued, Duration::from_millis(200)).await;
        assert_eq!(
            silent.unwrap_err(),
            "client process 2 of 3 did not reply within 0 s of this process finishing its \
             share (it stopped, or cannot reach the server or the board)"
        );
        two.reply(issued.seq, Ok(serde_json::json!(2))).await;
        assert_eq!(
            crew.collect(&issued, Duration::from_secs(1)).await.unwrap(),
            [serde_json::json!(1), serde_json::json!(2)]
        );
        let next = crew.order(0, 10, |_| Task::Restore).await.unwrap();
        two.reply(next.seq, Err("restoring: no server".into()))
            .await;
        one.reply(next.seq, Ok(serde_json::Value::Null)).await;
        assert_eq!(
            crew.collect(&next, Duration::from_secs(1))
                .await
                .unwrap_err(),
            "client process 2 of 3: restoring: no server"
        );
        // An order for one process waits for that one only.
        let one_only = crew
            .order_to(0, 10, |_| Task::Restore, Some(1))
            .await
            .unwrap();
        let order = one.next_order(next.seq).await.unwrap();
        assert!(order.is_for(1) && !order.is_for(2));
        one.reply(one_only.seq, Ok(serde_json::Value::Null)).await;
        assert_eq!(
            crew.collect(&one_only, Duration::from_secs(1))
                .await
                .unwrap(),
            [serde_json::Value::Null]
        );
        std::fs::remove_dir_all(dir).unwrap();
        // A board that is gone ends a member's wait.
        assert_eq!(two.next_order(0).await, None);
    }
}
