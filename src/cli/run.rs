//! `mongobench run`: runs a benchmark without Kubernetes against the deployments given on the
//! command line (`-f benchmark.yaml --target NAME=URI ...`), side by side, or, inside the
//! operator's Job, the plan file the operator wrote (`--plan FILE`).
//!
//! Bad input (a spec that does not validate, a malformed `--target`, a URI that does not parse,
//! a server that does not answer) ends with one clear message and exit code 2 before anything
//! is written. A cell that cannot finish is reported as incomplete, never as a result; the
//! exit code is then 1.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::Context;
use serde::Deserialize;

use super::input::{MAX_MANIFEST_BYTES, invalid, label, read_text};
use super::plan_file::read_plan;
use super::validate::check_text;
use crate::api::{KIND, MongoBenchmark, MongoBenchmarkSpec, RunLength};
use crate::plan::RunSettings;
use crate::plan::{self, CONNECT_TIMEOUT, Cell, JobPlan, LOCAL_PLATFORM};
use crate::report::render_csv;
use crate::result::{CellResult, CellStatus};
use crate::runner::activity::{self, Activity};
use crate::runner::benchmark::{self, Benchmark, Connected, Events};
use crate::runner::cell::CellProgress;
use crate::runner::crew::{
    Board, COMPLETION_INDEX_ENV, ClientSlice, ConfigMapBoard, Crew, JOB_UID_ENV, Member,
};
use crate::runner::dataset::Seeded;
use crate::runner::follower::Follower;
use crate::runner::send::ExecOptions;
use crate::runner::server::{connect_with, rs_init};
use crate::runner::sink;
use crate::runner::slots::PrecisionGoal;
use crate::verdict::CompareOptions;

/// Arguments of `mongobench run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The MongoBenchmark manifest whose dataset, workload and repetitions to run.
    #[arg(
        short = 'f',
        long = "filename",
        value_name = "FILE",
        required_unless_present = "plan",
        conflicts_with = "plan"
    )]
    pub file: Option<PathBuf>,
    /// A deployment to benchmark, as NAME=URI (mongodb://... or mongodb+srv://...); repeat to
    /// compare several side by side. The first is the baseline unless the spec names one of them.
    #[arg(long = "target", value_name = "NAME=URI")]
    pub targets: Vec<String>,
    /// Write each cell's result as JSON, plus results.csv and report.txt, into this directory.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Run the plan file the operator wrote (inside the runner Job); the target's URI comes
    /// from MONGOBENCH_TARGET_URI and results go to ConfigMaps.
    #[arg(long, value_name = "FILE")]
    pub plan: Option<PathBuf>,
    /// Seconds to wait for a server to answer before giving up.
    #[arg(long, value_name = "SECONDS", default_value_t = CONNECT_TIMEOUT.as_secs())]
    pub connect_timeout: u64,
    /// Run the workers in N processes of this machine, as `client.pods` runs them in N pods:
    /// process i runs workers [i·W/N, (i+1)·W/N), seeding is shared, and each cell's result
    /// merges theirs.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        conflicts_with = "plan",
        value_parser = clap::value_parser!(u32).range(1..=64)
    )]
    pub client_processes: u32,
    /// (Set by `--client-processes` for the processes it starts.) This process's index.
    #[arg(long, hide = true, requires = "board")]
    pub client_index: Option<u32>,
    /// (Set by `--client-processes`.) The directory the processes coordinate through.
    #[arg(long, hide = true, value_name = "DIR")]
    pub board: Option<PathBuf>,
}

/// Runs the subcommand; exit 0 when every cell is complete, 1 when any is not; bad input is an
/// [`Invalid`](super::input::Invalid) error (exit code 2).
pub fn run(args: &RunArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime.block_on(async {
        match &args.plan {
            Some(plan) => run_plan(plan, args).await,
            None => run_local(args).await,
        }
    })
}

/// Reads and validates the one MongoBenchmark in `file`.
///
/// # Errors
/// An [`Invalid`](super::input::Invalid) error naming the file, line and field: the file
/// cannot be read, a violation, no MongoBenchmark or more than one.
pub fn read_spec(file: &std::path::Path) -> anyhow::Result<MongoBenchmark> {
    let label = label(file);
    let text =
        read_text(file, MAX_MANIFEST_BYTES, "manifest").map_err(|p| invalid(p.render(&label)))?;
    let report = check_text(&text);
    if !report.is_valid() {
        return Err(invalid(report.render(&label).join("\n")));
    }
    if report.benchmarks.len() > 1 {
        return Err(invalid(format!(
            "{label}: holds {} {KIND}s ({}): run takes one; put each in a file of its own",
            report.benchmarks.len(),
            report.benchmarks.join(", ")
        )));
    }
    for document in serde_yaml::Deserializer::from_str(&text) {
        let value = serde_json::Value::deserialize(document)
            .map_err(|e| invalid(format!("{label}: {e}")))?;
        if value.get("kind").and_then(|k| k.as_str()) == Some(KIND) {
            return serde_json::from_value(value).map_err(|e| invalid(format!("{label}: {e}")));
        }
    }
    Err(invalid(format!(
        "{label}: no {KIND} in it: expected a {KIND} (apiVersion {}, kind {KIND})",
        crate::api::API_VERSION
    )))
}

/// Parses `--target NAME=URI` arguments: names unique, URIs with a MongoDB scheme.
pub fn parse_targets(args: &[String]) -> anyhow::Result<Vec<(String, String)>> {
    if args.is_empty() {
        return Err(invalid(
            "no --target given: name at least one deployment as --target NAME=mongodb://HOST:PORT/",
        ));
    }
    let mut out: Vec<(String, String)> = Vec::new();
    for arg in args {
        let Some((name, uri)) = arg.split_once('=') else {
            return Err(invalid(format!(
                "--target {arg:?}: expected NAME=URI, e.g. mongo-8=mongodb://127.0.0.1:27017/"
            )));
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        {
            return Err(invalid(format!(
                "--target {arg:?}: the name {name:?} must be letters, digits, '-', '_' or '.'"
            )));
        }
        if !(uri.starts_with("mongodb://") || uri.starts_with("mongodb+srv://")) {
            return Err(invalid(format!(
                "--target {arg:?}: the URI must start with mongodb:// or mongodb+srv://"
            )));
        }
        if out.iter().any(|(n, _)| n == name) {
            return Err(invalid(format!("--target {name}: given twice")));
        }
        out.push((name.to_owned(), uri.to_owned()));
    }
    Ok(out)
}

/// The run of `spec` on `platform`, everything derived from the spec once.
fn benchmark(
    spec: &MongoBenchmarkSpec,
    name: &str,
    run_id: &str,
    platform: &str,
    completed: &[String],
) -> anyhow::Result<Benchmark> {
    let plan = plan::workload_plan(spec).map_err(|e| invalid(e.to_string()))?;
    let settings = plan::run_settings(spec).map_err(|e| invalid(e.to_string()))?;
    ExecOptions::from_settings(&settings).map_err(|e| invalid(e.to_string()))?;
    let sizes = spec
        .dataset
        .parsed_sizes()
        .map_err(|e| invalid(e.to_string()))?;
    Ok(Benchmark {
        name: name.to_owned(),
        run_id: run_id.to_owned(),
        platform: platform.to_owned(),
        plan,
        settings,
        reuse_dataset: spec.dataset.reuse_dataset(),
        sizes: spec.dataset.sizes.iter().cloned().zip(sizes).collect(),
        repetitions: spec.repetitions(),
        precision: PrecisionGoal::of(spec).map_err(|e| invalid(format!("spec.precision: {e}")))?,
        canary_policy: spec.canary_policy(),
        baseline: spec.baseline().to_owned(),
        completed: completed.iter().cloned().collect(),
    })
}

async fn connect_all(
    targets: &[(String, String)],
    spec: &MongoBenchmarkSpec,
    timeout: Duration,
) -> anyhow::Result<Vec<Connected>> {
    let workers = spec.workload.workers();
    let mut out = Vec::new();
    for (name, uri) in targets {
        let target = connect_with(name, uri, workers, timeout, &spec.workload.wire_compressors)
            .await
            .map_err(|e| invalid(e.to_string()))?;
        tracing::info!(target = %name, version = %target.server.version, topology = %target.server.topology, "connected");
        out.push(Connected {
            target,
            uri: uri.clone(),
        });
    }
    Ok(out)
}

/// A default run id: the start time, `YYYYMMDD-HHMMSS` in UTC.
fn new_run_id() -> String {
    k8s_openapi::jiff::Timestamp::now()
        .strftime("%Y%m%d-%H%M%S")
        .to_string()
}

fn seeded_line(target: &str, size: &str, seeded: &Seeded) -> String {
    let rate = if seeded.inserted > 0 && seeded.insert_seconds > 0.0 {
        format!(
            " (inserted {} at {:.0} documents/s)",
            seeded.inserted,
            seeded.inserted as f64 / seeded.insert_seconds
        )
    } else {
        String::new()
    };
    format!(
        "{target}: {} {size} ({} documents) in {:.1} s{rate}, digest {} {}",
        seeded.action,
        seeded.documents,
        seeded.seconds,
        seeded.digest.method,
        &seeded.digest.value[..seeded.digest.value.len().min(16)]
    )
}

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

    fn started(&mut self, cell: &Cell, progress: &CellProgress) {
        self.ticker = Some(self.display.track(cell, progress));
    }

    async fn finished(&mut self, cell: &Cell, result: &CellResult) -> anyhow::Result<()> {
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

async fn run_local(args: &RunArgs) -> anyhow::Result<ExitCode> {
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
    let bench = benchmark(spec, &name, &new_run_id(), LOCAL_PLATFORM, &[])?;
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

/// Runs a client process other than the coordinator until the coordinator says finish.
async fn follow(
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
    super::report::render(results, &options, super::report::Format::Table)
}

fn summary(cell: &Cell, result: &CellResult) -> String {
    match (&result.status, &result.measured) {
        (CellStatus::Complete, Some(m)) => {
            let p99 = m.overall.latency_us.as_ref().map(|l| l.p99).unwrap_or(0);
            let restore: f64 = result.dataset.restores.iter().map(|r| r.seconds).sum();
            let invalid = if result.invalid_reasons.is_empty() {
                String::new()
            } else {
                format!(", INVALID: {}", result.invalid_reasons.join("; "))
            };
            format!(
                "{}: {:.0} ops/s, p99 {} µs, {} operations, restored in {restore:.1} s{invalid}",
                cell.id, m.overall.ops_per_sec, p99, m.overall.completed
            )
        }
        (CellStatus::Incomplete { reason }, _) => format!("{}: INCOMPLETE: {reason}", cell.id),
        _ => format!("{}: no measurement", cell.id),
    }
}

/// Progress output: on a terminal, a progress bar per cell with its phase and live ops/s;
/// plain log lines otherwise.
struct Display {
    terminal: bool,
    planned: Option<Duration>,
    warmup: Option<Duration>,
}

/// The bar of a cell of `total_secs` seconds (warm-up and measurement), or a spinner when the
/// run is bounded by operations.
fn cell_bar(id: &str, total_secs: Option<u64>) -> indicatif::ProgressBar {
    let (bar, template) = match total_secs {
        Some(secs) => (
            indicatif::ProgressBar::new(secs),
            "{prefix} [{bar:30}] {pos:>4}/{len}s  {msg}",
        ),
        None => (
            indicatif::ProgressBar::new_spinner(),
            "{prefix} {spinner} {elapsed}  {msg}",
        ),
    };
    let style = indicatif::ProgressStyle::with_template(template)
        .expect("a valid template")
        .progress_chars("=> ");
    bar.set_style(style);
    bar.set_prefix(id.to_owned());
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

impl Display {
    fn new(settings: &RunSettings) -> Display {
        let seconds = |l: RunLength| match l {
            RunLength::Duration(d) => Some(d),
            RunLength::Operations(_) => None,
        };
        Display {
            terminal: std::io::stderr().is_terminal(),
            planned: seconds(settings.measured),
            warmup: seconds(settings.warmup),
        }
    }

    fn line(&self, text: &str) {
        eprintln!("{text}");
    }

    /// Reports the phase, throughput and time left of a running cell until `finish`.
    fn track(&self, cell: &Cell, progress: &CellProgress) -> Ticker {
        let ops = progress.ops.clone();
        let phase = progress.phase.clone();
        let id = cell.id.clone();
        let total = self.planned.zip(self.warmup).map(|(p, w)| p + w);
        let bar = self
            .terminal
            .then(|| cell_bar(&id, total.map(|t| t.as_secs())));
        let bar_task = bar.clone();
        let handle = tokio::spawn(async move {
            let started = Instant::now();
            let mut last_ops = 0;
            let mut last_print = Instant::now();
            // When warm-up (or measurement, without one) began: what the run length counts.
            let mut timed: Option<Instant> = None;
            let mut interval = tokio::time::interval(Duration::from_secs(1));
            loop {
                interval.tick().await;
                let now_ops = ops.completed.load(Ordering::Relaxed);
                let rate = now_ops.saturating_sub(last_ops);
                last_ops = now_ops;
                let phase = match *phase.lock().expect("phase lock") {
                    "" => "starting",
                    p => p,
                };
                let elapsed = started.elapsed();
                if matches!(phase, "warmup" | "measuring") && timed.is_none() {
                    timed = Some(Instant::now());
                }
                // Time left is known only while the timed phases run.
                let in_timed = timed
                    .filter(|_| matches!(phase, "warmup" | "measuring"))
                    .map(|t| t.elapsed());
                let left = total
                    .zip(in_timed)
                    .map(|(t, e)| format!(", ~{}s left", t.saturating_sub(e).as_secs()))
                    .unwrap_or_default();
                let text = format!(
                    "{id}: {phase}, {rate} ops/s, {}s elapsed{left}",
                    elapsed.as_secs()
                );
                match &bar_task {
                    Some(bar) => {
                        // The bar counts the timed phases; restoring and settling hold it.
                        if let Some(e) = in_timed {
                            bar.set_position(e.as_secs());
                        }
                        bar.set_message(format!("{phase}, {rate} ops/s"));
                    }
                    None if last_print.elapsed() >= Duration::from_secs(10) => {
                        eprintln!("{text}");
                        last_print = Instant::now();
                    }
                    None => {}
                }
            }
        });
        Ticker { handle, bar }
    }
}

struct Ticker {
    handle: tokio::task::JoinHandle<()>,
    bar: Option<indicatif::ProgressBar>,
}

impl Ticker {
    fn finish(self) {
        self.handle.abort();
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}

/// The runner Job's results: each written to its ConfigMap as it lands; what it is doing,
/// published for the operator.
struct JobEvents<'a> {
    client: kube::Client,
    job: &'a JobPlan,
    failures: Vec<String>,
    activity: activity::Publisher,
    /// Follows the phases of the running cell.
    phases: Option<tokio::task::JoinHandle<()>>,
}

impl Events for JobEvents<'_> {
    fn seeding(&mut self, target: &str, size: &str, documents: u64) {
        eprintln!("{target}: seeding to {size} ({documents} documents)");
        self.activity.publish(Activity {
            target: target.to_owned(),
            size: size.to_owned(),
            cell: None,
            phase: "seeding".to_owned(),
        });
    }

    fn seeded(&mut self, target: &str, size: &str, seeded: &Seeded) {
        eprintln!("{}", seeded_line(target, size, seeded));
    }

    fn started(&mut self, cell: &Cell, progress: &CellProgress) {
        eprintln!("{}: running", cell.id);
        let phase = progress.phase.clone();
        let publisher = self.activity.clone();
        let (target, size, id) = (cell.target.clone(), cell.size.clone(), cell.id.clone());
        self.phases = Some(tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(250));
            loop {
                tick.tick().await;
                let now = *phase.lock().expect("phase lock");
                publisher.publish(Activity {
                    target: target.clone(),
                    size: size.clone(),
                    cell: Some(id.clone()),
                    phase: now.to_owned(),
                });
            }
        }));
    }

    async fn finished(&mut self, cell: &Cell, result: &CellResult) -> anyhow::Result<()> {
        if let Some(phases) = self.phases.take() {
            phases.abort();
        }
        eprintln!("{}", summary(cell, result));
        let facts = self
            .job
            .targets
            .iter()
            .find(|t| t.name == cell.target)
            .and_then(|t| t.facts.as_ref());
        match facts {
            Some(facts) => {
                let mut result = result.clone();
                facts.fill(&mut result);
                sink::write_configmap(&self.client, self.job, &cell.id, &result).await?;
            }
            None => sink::write_configmap(&self.client, self.job, &cell.id, result).await?,
        }
        if let CellStatus::Incomplete { reason } = &result.status {
            self.failures.push(reason.clone());
        }
        Ok(())
    }
}

/// This pod's share of the plan's client pods.
fn plan_slice(job: &JobPlan) -> anyhow::Result<ClientSlice> {
    let index = match std::env::var(COMPLETION_INDEX_ENV) {
        Ok(v) => v.parse::<u32>().map_err(|_| {
            invalid(format!(
                "{COMPLETION_INDEX_ENV}={v:?}: expected the pod's completion index, a number"
            ))
        })?,
        Err(_) => 0,
    };
    ClientSlice::new(index, job.spec.client_pods())
        .map_err(|e| invalid(format!("{COMPLETION_INDEX_ENV}: {e}")))
}

/// The board of a plan's client pods.
fn plan_board(job: &JobPlan, client: &kube::Client) -> anyhow::Result<Board> {
    let name = job.board.clone().ok_or_else(|| {
        invalid(format!(
            "the plan runs {} client pods but names no board ConfigMap for them",
            job.spec.client_pods()
        ))
    })?;
    let prefix = std::env::var(JOB_UID_ENV)
        .map(|uid| format!("{}.", uid.chars().take(8).collect::<String>()))
        .unwrap_or_default();
    let namespace = job.namespace.as_deref().unwrap_or("default");
    Ok(Board::ConfigMap(Box::new(ConfigMapBoard {
        api: kube::Api::namespaced(client.clone(), namespace),
        name,
        prefix,
        owner: sink::owner_reference(job),
    })))
}

/// Runs a plan file inside the runner Job: the whole plan, or with `client.pods` above 1,
/// pod 0 as the coordinator and the others following it.
async fn run_plan(path: &std::path::Path, args: &RunArgs) -> anyhow::Result<ExitCode> {
    let job = read_plan(path)?;
    let mut bench = benchmark(
        &job.spec,
        &job.benchmark,
        &job.run_id,
        &job.platform,
        &job.completed_cells,
    )?;
    let slice = plan_slice(&job)?;

    let mut targets = Vec::new();
    for t in &job.targets {
        let uri = std::env::var(&t.uri_env).map_err(|_| {
            invalid(format!(
                "{} is not set: the Job passes target {}'s URI in it",
                t.uri_env, t.name
            ))
        })?;
        if !t.initiate_members.is_empty() && slice.is_coordinator() {
            let set = t
                .replica_set_name
                .clone()
                .unwrap_or_else(|| "rs0".to_owned());
            if let Err(e) =
                rs_init::initiate(&set, &t.initiate_members, &uri, Duration::from_secs(300)).await
            {
                return fail(&format!("target {}: replica-set initiation: {e}", t.name));
            }
        }
        targets.push((t.name.clone(), uri));
    }
    let timeout = Duration::from_secs(args.connect_timeout);
    let client = kube::Client::try_default()
        .await
        .context("connecting to the Kubernetes API for results")?;
    if !slice.is_coordinator() {
        let board = plan_board(&job, &client)?;
        return follow(board, slice, &bench, targets, &job.spec, timeout).await;
    }
    let connected = match connect_all(&targets, &job.spec, timeout).await {
        Ok(c) => c,
        Err(e) => return fail(&e.to_string()),
    };
    // A retried pod of the Job resumes after the cells its killed predecessor finished.
    bench
        .completed
        .extend(sink::written_cells(&client, &job).await);
    let crew = if slice.count > 1 {
        match Crew::start(plan_board(&job, &client)?, slice).await {
            Ok(crew) => Some(crew),
            Err(e) => return fail(&format!("client pods: {e}")),
        }
    } else {
        None
    };
    let mut events = JobEvents {
        activity: activity::Publisher::start(client.clone(), &job),
        client,
        job: &job,
        failures: Vec::new(),
        phases: None,
    };
    benchmark::run_with(&bench, &connected, &mut events, crew.as_ref()).await?;
    if events.failures.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        fail(&events.failures.join("; "))
    }
}

/// Ends the Job with `message` as its termination message (what the operator reports).
fn fail(message: &str) -> anyhow::Result<ExitCode> {
    eprintln!("mongobench run: {message}");
    let _ = std::fs::write(
        "/dev/termination-log",
        message.chars().take(4000).collect::<String>(),
    );
    Ok(ExitCode::FAILURE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timed_cell_gets_a_bar_of_its_seconds_and_a_bounded_one_a_spinner() {
        let bar = cell_bar("a.local.1k.r1", Some(15));
        assert_eq!(bar.length(), Some(15));
        assert_eq!(bar.prefix(), "a.local.1k.r1");
        bar.finish_and_clear();
        let spinner = cell_bar("a.local.1k.r1", None);
        assert_eq!(spinner.length(), None);
        spinner.finish_and_clear();
    }

    #[test]
    fn targets_parse_and_refuse_bad_forms() {
        let ok =
            parse_targets(&["a=mongodb://h:1/".into(), "b.8=mongodb+srv://x/".into()]).unwrap();
        assert_eq!(
            ok,
            [
                ("a".to_owned(), "mongodb://h:1/".to_owned()),
                ("b.8".to_owned(), "mongodb+srv://x/".to_owned())
            ]
        );
        for (bad, needle) in [
            ("noequals", "expected NAME=URI"),
            ("a=http://h/", "must start with mongodb://"),
            ("=mongodb://h/", "the name"),
        ] {
            let e = parse_targets(&[bad.into()]).unwrap_err().to_string();
            assert!(e.contains(needle), "{bad}: {e}");
        }
        let dup = parse_targets(&["a=mongodb://h/".into(), "a=mongodb://g/".into()]).unwrap_err();
        assert!(dup.to_string().contains("given twice"));
        assert!(
            parse_targets(&[])
                .unwrap_err()
                .to_string()
                .contains("no --target")
        );
    }

    #[test]
    fn run_ids_are_utc_timestamps() {
        let id = new_run_id();
        assert_eq!(id.len(), 15, "{id}");
        assert!(id.starts_with("20") && id.as_bytes()[8] == b'-', "{id}");
    }
}
