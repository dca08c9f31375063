//! `mongobench run -f`: the benchmark run on this machine against the `--target`s, in one
//! process or `--client-processes N`, with progress on the terminal and the results written to
//! `--out`.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;

use crate::api::MongoBenchmarkSpec;
use crate::cli::input::invalid;
use crate::plan::{LOCAL_PLATFORM, PlannedCell};
use crate::report::render_csv;
use crate::result::{CellResult, CellStatus};
use crate::runner::benchmark::{self, Connected, Events};
use crate::runner::cell::CellProgress;
use crate::runner::cell::identity::CUSTOM_WORKLOAD_FILE;
use crate::runner::crew::{Board, ClientSlice, Crew};
use crate::runner::dataset::Seeded;
use crate::runner::sink;
use crate::verdict::CompareOptions;

use super::args::RunArgs;
use super::follow::follow;
use super::progress::{Display, Ticker, seeded_line, summary};
use super::start::{benchmark, connect_all, new_run_id, parse_server_canaries, read_spec};
use super::targets::parse_targets;

/// A local run's progress on the terminal and its result files.
struct LocalEvents<'a> {
    display: Display,
    out: Option<&'a std::path::Path>,
    ticker: Option<Ticker>,
    /// Where each size stopped under the precision goal, for the report.
    precision: Vec<String>,
}

impl Events for LocalEvents<'_> {
    fn seeding(&mut self, target: &str, size: &str, documents: u64) {
        self.display.line(&format!(
            "{target}: seeding to {size} ({documents} documents)"
        ));
    }

    fn seeded(&mut self, target: &str, size: &str, seeded: &Seeded) {
        self.display.line(&seeded_line(target, size, seeded));
    }

    fn started(&mut self, cell: &PlannedCell, progress: &CellProgress) {
        self.ticker = Some(self.display.track(cell, progress));
    }

    async fn finished(&mut self, cell: &PlannedCell, result: &CellResult) -> anyhow::Result<()> {
        if let Some(ticker) = self.ticker.take() {
            ticker.finish();
        }
        self.display.line(&summary(cell, result));
        if let Some(dir) = self.out {
            sink::write_file(dir, &cell.id, result)?;
        }
        Ok(())
    }

    fn precision(&mut self, size: &str, outcome: &benchmark::PrecisionOutcome) {
        let line = format!("precision at {size}: {outcome}");
        self.display.line(&line);
        self.precision.push(line);
    }
}

pub(super) async fn run_local(args: &RunArgs) -> anyhow::Result<ExitCode> {
    let file = args.file.as_ref().expect("clap requires -f without --plan");
    let mut definition = read_spec(file)?;
    let processes = args.client_processes;
    let workers = definition.spec.workload.workers();
    if processes > workers {
        return Err(invalid(format!(
            "--client-processes {processes}: more processes than the {workers} workers of \
             spec.workload.workers; each process runs at least one worker"
        )));
    }
    // The processes split the work as the pods of `client.pods` do, under the same rules.
    definition.spec.client.get_or_insert_default().pods = Some(processes);
    let spec = &definition.spec;
    let name = definition
        .metadata
        .name
        .clone()
        .unwrap_or_else(|| "local".to_owned());
    let targets = parse_targets(&args.targets)?;
    let mut bench = benchmark(spec, &name, &new_run_id(), LOCAL_PLATFORM, &[])?;
    bench.server_canaries = parse_server_canaries(&args.server_canaries, &targets)?;
    let timeout = Duration::from_secs(args.connect_timeout);
    if let Some(index) = args.client_index {
        let slice = ClientSlice::new(index, processes).map_err(invalid)?;
        let board = Board::Dir(args.board.clone().expect("clap requires --board"));
        return follow(board, slice, &bench, targets, spec, timeout).await;
    }
    let connected = connect_all(&targets, spec, timeout).await?;
    let mut events = LocalEvents {
        display: Display::new(&bench.settings),
        out: args.out.as_deref(),
        ticker: None,
        precision: Vec::new(),
    };
    let results = if processes > 1 {
        let board = std::env::temp_dir().join(format!("mongobench-board-{}", std::process::id()));
        std::fs::create_dir_all(&board)
            .with_context(|| format!("creating the processes' board {}", board.display()))?;
        let mut children = spawn_processes(args, processes, &board)?;
        let slice = ClientSlice::new(0, processes).map_err(invalid)?;
        let crew = Crew::start(Board::Dir(board.clone()), slice)
            .await
            .map_err(|e| anyhow::anyhow!("starting the client processes: {e}"))?;
        let results = benchmark::run_with(&bench, &connected, &mut events, Some(&crew)).await;
        for (i, child) in children.iter_mut().enumerate() {
            let status = child.wait().await.context("waiting for a client process")?;
            if !status.success() {
                eprintln!(
                    "mongobench run: client process {} of {processes} ended with {status}",
                    i + 1
                );
            }
        }
        let _ = std::fs::remove_dir_all(&board);
        results?
    } else {
        benchmark::run(&bench, &connected, &mut events).await?
    };

    let mut report = final_report(&results, spec, &connected)?;
    for line in &events.precision {
        report.push_str(&format!("{line}\n"));
    }
    println!("{report}");
    if let Some(dir) = &args.out {
        std::fs::write(dir.join("results.csv"), render_csv(&results))
            .with_context(|| format!("writing {}/results.csv", dir.display()))?;
        std::fs::write(dir.join("report.txt"), &report)
            .with_context(|| format!("writing {}/report.txt", dir.display()))?;
        // A custom result names its document by SHA-256 only: keep it for `verify`.
        if let Some(text) = spec
            .workload
            .custom
            .as_ref()
            .and_then(|c| c.inline.as_ref())
        {
            let file = dir.join(CUSTOM_WORKLOAD_FILE);
            std::fs::write(&file, text).with_context(|| format!("writing {}", file.display()))?;
        }
    }
    for r in &results {
        match &r.status {
            CellStatus::Incomplete { reason } => {
                eprintln!("mongobench run: cell {} is INCOMPLETE: {reason}", r.cell);
            }
            CellStatus::Complete if !r.is_valid() => eprintln!(
                "mongobench run: cell {} is INVALID (left out of the comparison): {}",
                r.cell,
                r.invalid_reasons.join("; ")
            ),
            CellStatus::Complete => {}
        }
    }
    Ok(if results.iter().all(CellResult::is_complete) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Starts processes 1..N of a local run: this program with the same arguments, each told its
/// index and the board.
fn spawn_processes(
    args: &RunArgs,
    processes: u32,
    board: &std::path::Path,
) -> anyhow::Result<Vec<tokio::process::Child>> {
    let program = std::env::current_exe().context("finding this program to start processes")?;
    let file = args.file.as_ref().expect("a local run has -f");
    (1..processes)
        .map(|index| {
            let mut command = tokio::process::Command::new(&program);
            command
                .arg("run")
                .arg("-f")
                .arg(file)
                .args(args.targets.iter().flat_map(|t| ["--target", t.as_str()]))
                .arg("--connect-timeout")
                .arg(args.connect_timeout.to_string())
                .arg("--client-processes")
                .arg(processes.to_string())
                .arg("--client-index")
                .arg(index.to_string())
                .arg("--board")
                .arg(board)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .kill_on_drop(true);
            command
                .spawn()
                .with_context(|| format!("starting client process {index} of {processes}"))
        })
        .collect()
}

/// The table of every cell and, with two or more targets, the comparison with the baseline:
/// the spec's if it is one of the targets, else the first target.
fn final_report(
    results: &[CellResult],
    spec: &MongoBenchmarkSpec,
    connected: &[Connected],
) -> anyhow::Result<String> {
    let baseline = if connected.iter().any(|c| c.target.name == spec.baseline()) {
        spec.baseline().to_owned()
    } else {
        connected[0].target.name.clone()
    };
    let options = CompareOptions {
        baseline,
        price_per_node_hour: Default::default(),
    };
    crate::cli::report::render(results, &options, crate::cli::report::Format::Table)
}
