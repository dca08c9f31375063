//! `mongobench run -f`: the benchmark run on this machine against the `--target`s, in one
//! process or `--client-processes N`, with progress on the terminal and the results written to
//! `--out`.

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;

use crate::api::{MongoBenchmark, MongoBenchmarkSpec};
use crate::cli::gate::EXIT_GATE;
use crate::cli::input::invalid;
use crate::cli::report::Format;
use crate::cli::report::document;
use crate::cli::results_dir::{COMPARISON_JSON, VERDICTS_CSV};
use crate::contract::{CpuSet, JobPlan, Schedule, parse_sides};
use crate::plan::PlannedCell;
use crate::report::{render_csv, render_verdicts_csv};
use crate::result::{CellResult, CellStatus};
use crate::runner::{
    CUSTOM_WORKLOAD_FILE, CellProgress, Events, LocalError, LocalOptions, PrecisionOutcome, Seeded,
    SinkError, cell_line, follow_local, run_local as run_local_plan, seeded_line, write_file,
};
use crate::verdict::CompareOptions;

use super::args::RunArgs;
use super::progress::{Display, Ticker};
use super::start::{new_run_id, parse_server_canaries};
use super::targets::parse_targets;

/// A local run's progress on the terminal and its result files.
struct LocalEvents<'a> {
    display: Display,
    out: Option<&'a std::path::Path>,
    /// The running cells' progress (several in a simultaneous slot), by cell id.
    tickers: std::collections::BTreeMap<String, Ticker>,
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
        let ticker = self.display.track(cell, progress);
        self.tickers.insert(cell.id.clone(), ticker);
    }

    async fn finished(&mut self, cell: &PlannedCell, result: &CellResult) -> Result<(), SinkError> {
        if let Some(ticker) = self.tickers.remove(&cell.id) {
            ticker.finish();
        }
        self.display.line(&cell_line(cell, result));
        if let Some(dir) = self.out {
            write_file(dir, &cell.id, result)?;
        }
        Ok(())
    }

    fn precision(&mut self, size: &str, outcome: &PrecisionOutcome) {
        let line = format!("precision at {size}: {outcome}");
        self.display.line(&line);
        self.precision.push(line);
    }
}

pub(super) async fn run_local(args: &RunArgs) -> anyhow::Result<ExitCode> {
    let definition = super::quick::definition(args)?;
    let spec = &definition.spec;
    let targets = parse_targets(&args.targets)?;
    if args.gate.is_set() && targets.len() < 2 {
        return Err(invalid(
            "--fail-on-slower, --fail-on-costlier and --fail-on-inconclusive judge a comparison: \
             give two --target or more",
        ));
    }
    let plan = local_plan(args, &definition, &targets)?;
    let spawn = |index: u32, board: &Path| spawn_process(args, plan.run.client_pods, index, board);
    let options = LocalOptions {
        uris: &targets,
        connect_timeout: Duration::from_secs(args.connect_timeout),
        spawn: &spawn,
    };
    if let Some(index) = args.client_index {
        let board = args.board.as_deref().expect("clap requires --board");
        return match follow_local(&plan, &options, index, board).await {
            Ok(true) => Ok(ExitCode::SUCCESS),
            Ok(false) => Err(anyhow::anyhow!(
                "client process {index}: the board of the client processes is gone before the \
                 run ended"
            )),
            Err(e) => Err(refusal(e)),
        };
    }
    let mut events = LocalEvents {
        display: Display::new(&plan.run.settings),
        out: args.out.as_deref(),
        tickers: Default::default(),
        precision: Vec::new(),
    };
    let results = run_local_plan(&plan, &options, &mut events)
        .await
        .map_err(refusal)?;
    let compared = compare_options(spec, &targets);
    let mut report = crate::cli::report::render(&results, &compared, Format::Table)?;
    for line in &events.precision {
        report.push_str(&format!("{line}\n"));
    }
    println!("{report}");
    if let Some(dir) = &args.out {
        write_out(dir, &results, &report, spec)?;
    }
    let gate_failed = verdicts(args, &results, &compared)?;
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
    Ok(if !results.iter().all(CellResult::is_complete) {
        ExitCode::FAILURE
    } else if gate_failed {
        ExitCode::from(EXIT_GATE)
    } else {
        ExitCode::SUCCESS
    })
}

/// `comparison.json` and `verdicts.csv` in `--out`, and the gate: true when it failed a
/// verdict. Without a comparison (no result of the baseline) the gate is refused, the files
/// left out with a note.
fn verdicts(
    args: &RunArgs,
    results: &[CellResult],
    options: &CompareOptions,
) -> anyhow::Result<bool> {
    let doc = match document(results, options) {
        Ok(doc) => doc,
        Err(e) if !args.gate.wanted() => {
            eprintln!("mongobench run: no comparison.json: {e}");
            return Ok(false);
        }
        Err(e) => return Err(e),
    };
    if let Some(dir) = &args.out {
        let json = serde_json::to_string_pretty(&doc)? + "\n";
        for (file, text) in [
            (COMPARISON_JSON, json),
            (VERDICTS_CSV, render_verdicts_csv(&doc)),
        ] {
            std::fs::write(dir.join(file), text)
                .with_context(|| format!("writing {}/{file}", dir.display()))?;
        }
    }
    if args.gate.wanted() {
        return args.gate.check(&doc);
    }
    Ok(false)
}

/// A local run's error: what concerns its input (the spec, the targets, a server that does not
/// answer) is bad input (exit code 2), the rest a failure.
fn refusal(e: LocalError) -> anyhow::Error {
    match e {
        LocalError::Setup(_) => invalid(e.to_string()),
        other => anyhow::Error::new(other),
    }
}

/// The plan of a local run: the spec's run on `--target`s, split into `--client-processes`,
/// with the server canaries of `--server-canary`.
fn local_plan(
    args: &RunArgs,
    definition: &MongoBenchmark,
    targets: &[(String, String)],
) -> anyhow::Result<JobPlan> {
    let processes = args.client_processes;
    let workers = definition.spec.workload.workers();
    if processes > workers {
        return Err(invalid(format!(
            "--client-processes {processes}: more processes than the {workers} workers of \
             spec.workload.workers; each process runs at least one worker"
        )));
    }
    // The processes split the work as the pods of `client.pods` do, under the same rules.
    let mut spec = definition.spec.clone();
    spec.client.get_or_insert_default().pods = Some(processes);
    let name = definition.metadata.name.as_deref().unwrap_or("local");
    let names: Vec<String> = targets.iter().map(|(n, _)| n.clone()).collect();
    let mut plan =
        JobPlan::local(&spec, name, &new_run_id(), &names).map_err(|e| invalid(e.to_string()))?;
    for (target, canaries) in parse_server_canaries(&args.server_canaries, targets)? {
        if let Some(t) = plan.targets.iter_mut().find(|t| t.name == target) {
            t.server_canaries = canaries;
        }
    }
    if plan.run.schedule == Schedule::Simultaneous && processes > 1 {
        return Err(invalid(format!(
            "--client-processes {processes}: Simultaneous cells (spec.parallelism) are measured \
             from one process"
        )));
    }
    if let Some(text) = &args.cpu_sets {
        plan.run.sides = cpu_sets(text, &plan, targets.len())?;
    }
    Ok(plan)
}

/// The sides of `--cpu-sets`: one per target, for a simultaneous run.
fn cpu_sets(text: &str, plan: &JobPlan, targets: usize) -> anyhow::Result<Vec<CpuSet>> {
    let bad = |why: String| invalid(format!("--cpu-sets {text:?}: {why}"));
    if plan.run.schedule != Schedule::Simultaneous {
        return Err(bad(
            "sides apply to Simultaneous cells: set spec.parallelism to Simultaneous".into(),
        ));
    }
    let sides = parse_sides(text).map_err(bad)?;
    if sides.len() != targets {
        return Err(bad(format!(
            "{} sides for {targets} targets: give one CPU list per --target",
            sides.len()
        )));
    }
    Ok(sides)
}

/// `results.csv`, `report.txt` and a custom workload's document beside the results in `dir`.
fn write_out(
    dir: &Path,
    results: &[CellResult],
    report: &str,
    spec: &MongoBenchmarkSpec,
) -> anyhow::Result<()> {
    std::fs::write(dir.join("results.csv"), render_csv(results))
        .with_context(|| format!("writing {}/results.csv", dir.display()))?;
    std::fs::write(dir.join("report.txt"), report)
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
    Ok(())
}

/// Starts client process `index` of `processes`: this program with the same arguments, told
/// its index and the board.
fn spawn_process(
    args: &RunArgs,
    processes: u32,
    index: u32,
    board: &Path,
) -> std::io::Result<tokio::process::Child> {
    let file = args.file.as_ref().expect("a local run has -f");
    tokio::process::Command::new(std::env::current_exe()?)
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
        .kill_on_drop(true)
        .spawn()
}

/// What a local run is compared by: the spec's baseline if it is one of the targets, else the
/// first target; the spec's verdict metrics.
fn compare_options(spec: &MongoBenchmarkSpec, targets: &[(String, String)]) -> CompareOptions {
    let baseline = if targets.iter().any(|(name, _)| name == spec.baseline()) {
        spec.baseline().to_owned()
    } else {
        targets[0].0.clone()
    };
    CompareOptions {
        baseline,
        price_per_node_hour: Default::default(),
        metrics: spec.verdict_metrics(),
    }
}
