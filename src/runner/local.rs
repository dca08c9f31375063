//! A run on this machine (`mongobench run -f`), behind two entry points: [`run_local`] for the
//! process the user started, which connects, starts the other client processes when the run
//! has several and runs the benchmark, and [`follow_local`] for each of those others.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::contract::JobPlan;
use crate::result::CellResult;

use super::benchmark::{self, Events};
use super::crew::{Board, ClientSlice, Crew, Member};
use super::follower::Follower;
use super::setup::{self, SetupError};
use super::sink::SinkError;

/// How a local run runs besides its plan.
pub struct LocalOptions<'a> {
    /// Each plan target's name and URI, in plan order.
    pub uris: &'a [(String, String)],
    pub connect_timeout: Duration,
    /// Starts client process `index` (from 1) of `plan.run.client_pods`, told the board
    /// directory they coordinate through.
    pub spawn: &'a dyn Fn(u32, &Path) -> std::io::Result<tokio::process::Child>,
}

/// Why a local run stopped before its cells could run or be kept.
#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    #[error("{0}")]
    Setup(#[from] SetupError),
    #[error("creating the processes' board {}", .0.display())]
    Board(PathBuf, #[source] std::io::Error),
    #[error("starting client process {index} of {of}")]
    Spawn {
        index: u32,
        of: u32,
        #[source]
        source: std::io::Error,
    },
    #[error("client processes: {0}")]
    Crew(String),
    #[error("{0}")]
    Results(#[from] SinkError),
}

/// Runs `plan` from this process; with several client pods in the plan, as the coordinator
/// of as many processes of this machine. Returns the results in the order they ran.
///
/// # Errors
/// [`LocalError`]: a target cannot be reached, the processes cannot start, a result cannot
/// be kept.
pub async fn run_local(
    plan: &JobPlan,
    options: &LocalOptions<'_>,
    events: &mut impl Events,
) -> Result<Vec<CellResult>, LocalError> {
    let bench = setup::benchmark(plan)?;
    let connected = setup::connect_all(plan, options.uris, options.connect_timeout).await?;
    setup::check_sides(plan, options.uris)?;
    let processes = plan.run.client_pods;
    if processes <= 1 {
        return Ok(benchmark::run(&bench, &connected, events).await?);
    }
    let board = std::env::temp_dir().join(format!("mongobench-board-{}", std::process::id()));
    std::fs::create_dir_all(&board).map_err(|e| LocalError::Board(board.clone(), e))?;
    let mut children = Vec::new();
    for index in 1..processes {
        let child = (options.spawn)(index, &board).map_err(|source| LocalError::Spawn {
            index,
            of: processes,
            source,
        })?;
        children.push(child);
    }
    let slice = ClientSlice::new(0, processes).map_err(LocalError::Crew)?;
    let crew = Crew::start(Board::Dir(board.clone()), slice)
        .await
        .map_err(|e| LocalError::Crew(format!("starting: {e}")))?;
    let results = benchmark::run_with(&bench, &connected, events, Some(&crew)).await;
    for (i, child) in children.iter_mut().enumerate() {
        match child.wait().await {
            Ok(status) if status.success() => {}
            Ok(status) => tracing::warn!(
                "client process {} of {processes} ended with {status}",
                i + 1
            ),
            Err(e) => tracing::warn!("waiting for client process {} of {processes}: {e}", i + 1),
        }
    }
    let _ = std::fs::remove_dir_all(&board);
    Ok(results?)
}

/// Runs client process `index` of a local run of `plan`, following the coordinator through
/// `board` until it says finish: `false` when the board went away first.
///
/// # Errors
/// [`LocalError`]: the plan cannot run, or the process cannot join the board.
pub async fn follow_local(
    plan: &JobPlan,
    options: &LocalOptions<'_>,
    index: u32,
    board: &Path,
) -> Result<bool, LocalError> {
    let bench = setup::benchmark(plan)?;
    let slice = ClientSlice::new(index, plan.run.client_pods).map_err(LocalError::Crew)?;
    let (member, after) = Member::join(Board::Dir(board.to_owned()), slice)
        .await
        .map_err(|e| LocalError::Crew(format!("{slice}: {e}")))?;
    tracing::info!(
        "{slice}: ready, runs workers {:?}",
        slice.workers(bench.settings.workers)
    );
    let follower = Follower {
        bench: &bench,
        targets: options.uris.to_vec(),
        compressors: plan.run.wire_compressors.clone(),
        connect_timeout: options.connect_timeout,
    };
    Ok(follower.run(&member, after).await)
}
