//! `mongobench report`: renders the results of a benchmark, from the cluster (the result
//! ConfigMaps of a MongoBenchmark) or from a directory written by `mongobench run --out`:
//! a table of every cell and, with two or more targets, the comparison with the baseline; or
//! the comparison document (JSON) or its verdicts as CSV, the cells as CSV or JSON, YCSB
//! 0.17.0 text per cell, a self-contained HTML page, Markdown, or the long-form history CSV.
//! The gate's flags (`gate`) set the exit code from the verdicts.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams};

use super::gate::{EXIT_GATE, GateArgs};
use super::input::invalid;
use super::validate::EXIT_INVALID;
use crate::api::MongoBenchmark;
use crate::contract::names::{BENCHMARK_LABEL, RESULT_KEY};
use crate::plan::sanitize;
use crate::report::{
    ComparisonDocument, render_comparison_json, render_csv, render_history_csv, render_html,
    render_json, render_markdown, render_verdicts_csv, render_ycsb,
};
use crate::result::CellResult;
use crate::verdict::{CompareOptions, compare_options};

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Table of every cell plus the comparison with the baseline.
    Table,
    /// One row per cell and operation label, for spreadsheets.
    Csv,
    /// The comparison document (`kind: mongobench.io/comparison`): headline, method, and per
    /// target and declared metric its verdict, estimate, interval and MDE.
    Json,
    /// One row per compared target and declared metric: verdict, estimate, interval, MDE.
    VerdictsCsv,
    /// The result documents as one JSON array.
    CellsJson,
    /// YCSB 0.17.0 text, one block per complete cell.
    Ycsb,
    /// One self-contained HTML page: verdicts, plots (inline SVG) and the facts behind them.
    Html,
    /// Headline, comparison table and how it was measured, to paste into an issue.
    Markdown,
    /// One row per benchmark, run, target, platform, size and metric, for change-point tools.
    HistoryCsv,
}

/// Where results are read from: a MongoBenchmark's result ConfigMaps, or the files of a local
/// run (`report` and `plan` alike).
#[derive(Debug, clap::Args)]
pub struct ResultsSource {
    /// The MongoBenchmark whose results to read.
    #[arg(
        value_name = "NAME",
        required_unless_present = "dir",
        conflicts_with = "dir"
    )]
    pub name: Option<String>,
    /// Namespace of the MongoBenchmark (default: the kubeconfig's namespace).
    #[arg(short = 'n', long)]
    pub namespace: Option<String>,
    /// Read the result files a local run wrote (`mongobench run --out DIR`) instead.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    #[command(flatten)]
    pub kube: super::kube_args::KubeArgs,
}

impl ResultsSource {
    /// The results and the comparison options they come with (the benchmark's, or for a
    /// directory the first target in name order as baseline).
    pub fn load(&self) -> anyhow::Result<(Vec<CellResult>, CompareOptions)> {
        match (&self.dir, &self.name) {
            (Some(dir), _) => from_dir(dir),
            (None, Some(name)) => tokio::runtime::Runtime::new()
                .context("starting the async runtime")?
                .block_on(from_cluster(name, self.namespace.as_deref(), &self.kube)),
            (None, None) => unreachable!("clap requires NAME or --dir"),
        }
    }
}

/// Arguments of `mongobench report`.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    #[command(flatten)]
    pub source: ResultsSource,
    /// The output format.
    #[arg(short = 'o', long, value_enum, default_value_t = Format::Table)]
    pub output: Format,
    /// The target to compare the others with (default: the benchmark's baseline; with
    /// --dir, the first target in name order).
    #[arg(long, value_name = "TARGET")]
    pub baseline: Option<String>,
    #[command(flatten)]
    pub gate: GateArgs,
}

/// Runs the subcommand. A result directory that cannot be read, or holds a document that is
/// not a result, is an [`Invalid`](super::input::Invalid) error (exit code 2); a verdict the
/// gate fails exits with [`EXIT_GATE`].
pub fn run(args: &ReportArgs) -> anyhow::Result<ExitCode> {
    let (mut results, mut options) = args.source.load()?;
    if let Some(baseline) = &args.baseline {
        options.baseline = baseline.clone();
    }
    if results.is_empty() {
        eprintln!("mongobench report: no results yet");
        return Ok(ExitCode::from(EXIT_INVALID));
    }
    results.sort_by(|a, b| a.cell.cmp(&b.cell));
    print!("{}", render(&results, &options, args.output)?);
    if args.gate.wanted() && args.gate.check(&document(&results, &options)?)? {
        return Ok(ExitCode::from(EXIT_GATE));
    }
    Ok(ExitCode::SUCCESS)
}

/// The comparison document of `results`; a comparison that cannot be made (no result of the
/// baseline) is bad input.
pub fn document(
    results: &[CellResult],
    options: &CompareOptions,
) -> anyhow::Result<ComparisonDocument> {
    crate::report::compare_in_order(results, options)
        .map(|c| ComparisonDocument::of(&c))
        .map_err(|e| invalid(e.to_string()))
}

/// Renders `results` in `format`; the comparison is left out (with the reason) when it cannot
/// be made, e.g. because a cell is incomplete.
pub fn render(
    results: &[CellResult],
    options: &CompareOptions,
    format: Format,
) -> anyhow::Result<String> {
    Ok(match format {
        Format::Table => crate::report::render_text(results, options),
        Format::Csv => render_csv(results),
        Format::Json => render_comparison_json(
            &crate::report::compare_in_order(results, options)
                .map_err(|e| invalid(e.to_string()))?,
        ),
        Format::VerdictsCsv => render_verdicts_csv(&document(results, options)?),
        Format::CellsJson => render_json(results)?,
        Format::Html => render_html(results, options)?,
        Format::Markdown => render_markdown(results, options),
        Format::HistoryCsv => render_history_csv(results)?,
        Format::Ycsb => {
            let mut out = String::new();
            for r in results.iter().filter(|r| r.is_complete()) {
                out.push_str(&format!("# {}\n", r.cell));
                out.push_str(&render_ycsb(r, &Default::default())?);
            }
            out
        }
    })
}

fn from_dir(dir: &std::path::Path) -> anyhow::Result<(Vec<CellResult>, CompareOptions)> {
    let results = super::results_dir::read_results(dir)?;
    // Without --baseline, the first target in name order.
    let baseline = results
        .first()
        .map(|r| r.cell.target.clone())
        .unwrap_or_default();
    Ok((
        results,
        // The verdict metrics are those the results record.
        CompareOptions {
            baseline,
            ..CompareOptions::default()
        },
    ))
}

async fn from_cluster(
    name: &str,
    namespace: Option<&str>,
    kube: &super::kube_args::KubeArgs,
) -> anyhow::Result<(Vec<CellResult>, CompareOptions)> {
    let client = kube.client().await?;
    let namespace = namespace.unwrap_or(client.default_namespace()).to_owned();
    let bench = Api::<MongoBenchmark>::namespaced(client.clone(), &namespace)
        .get_opt(name)
        .await
        .with_context(|| format!("reading MongoBenchmark {namespace}/{name}"))?
        .ok_or_else(|| {
            anyhow::anyhow!(
                "no MongoBenchmark named {name} in namespace {namespace} (-n selects another)"
            )
        })?;
    let configmaps = Api::<ConfigMap>::namespaced(client, &namespace)
        .list(&ListParams::default().labels(&format!("{BENCHMARK_LABEL}={}", sanitize(name))))
        .await
        .with_context(|| format!("listing the result ConfigMaps of {namespace}/{name}"))?;
    let mut results = Vec::new();
    for cm in configmaps.items {
        let cm_name = cm.metadata.name.clone().unwrap_or_default();
        if let Some(json) = cm.data.and_then(|mut d| d.remove(RESULT_KEY)) {
            results.push(
                CellResult::from_json(&json)
                    .with_context(|| format!("ConfigMap {namespace}/{cm_name}"))?,
            );
        }
    }
    Ok((results, compare_options(&bench.spec)))
}
