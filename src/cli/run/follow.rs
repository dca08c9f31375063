//! A client process other than the coordinator (a local run's `--client-index`, or a Job's
//! pod above 0), and how a process of the Job ends with a message for the operator.

use std::process::ExitCode;
use std::time::Duration;

use crate::api::MongoBenchmarkSpec;
use crate::runner::benchmark::Benchmark;
use crate::runner::crew::{Board, ClientSlice, Member};
use crate::runner::follower::Follower;

/// Runs a client process other than the coordinator until the coordinator says finish.
pub(super) async fn follow(
    board: Board,
    slice: ClientSlice,
    bench: &Benchmark,
    targets: Vec<(String, String)>,
    spec: &MongoBenchmarkSpec,
    connect_timeout: Duration,
) -> anyhow::Result<ExitCode> {
    let (member, after) = Member::join(board, slice)
        .await
        .map_err(|e| anyhow::anyhow!("{slice}: {e}"))?;
    eprintln!(
        "{slice}: ready, runs workers {:?}",
        slice.workers(bench.settings.workers)
    );
    let follower = Follower {
        bench,
        targets,
        compressors: spec.workload.wire_compressors.clone(),
        connect_timeout,
    };
    if follower.run(&member, after).await {
        Ok(ExitCode::SUCCESS)
    } else {
        fail(&format!(
            "{slice}: the board of the client processes is gone before the run ended"
        ))
    }
}

/// Ends the Job with `message` as its termination message (what the operator reports).
pub(super) fn fail(message: &str) -> anyhow::Result<ExitCode> {
    eprintln!("mongobench run: {message}");
    let _ = std::fs::write(
        "/dev/termination-log",
        message.chars().take(4000).collect::<String>(),
    );
    Ok(ExitCode::FAILURE)
}
