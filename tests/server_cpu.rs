//! Server CPU per operation where the server reports none of its own, through `mongobench run`
//! (the real binary) against private SecantusDB servers: SecantusDB has no CPU times in
//! `serverStatus.extra_info`, so the runner reads the server process's CPU time from procfs
//! (this machine's `/proc`), at the start and the end of each measured phase.
//!
//! - An A/A comparison (one server under two names) shows CPU per operation with an interval and
//!   an MDE, from procfs, and does not call the two different.
//! - WiredTiger's zlib block compressor costs more CPU per operation than lz4 once the data
//!   outgrows the cache (every page read into the cache is decompressed), and the regime of the
//!   cells shows the data outgrowing it: cache-resident at the small size, I/O-bound at the
//!   large one (BENCHMARKS.md, "Server CPU per operation: lz4 against zlib").
//!
//! The tests take turns (one lock), so that neither measures the other's load.
mod support;

use std::path::Path;

use mongobench::api::VerdictMetric;
use mongobench::measure::server::{CpuSource, FoundBy, Regime};
use mongobench::result::CellResult;
use mongobench::verdict::{CompareOptions, Comparison, ComparisonRow, Verdict, compare};

/// One measuring test at a time.
static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs `spec` (a MongoBenchmark's YAML) with `mongobench run` on `targets` (name, URI) and
/// returns its result documents.
fn run(name: &str, spec: &str, targets: &[(&str, &str)]) -> Vec<CellResult> {
    let dir = support::run_dir()
        .join("private")
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("spec.yaml");
    std::fs::write(&file, spec).unwrap();
    let out = dir.join("results");
    let mut args = vec![
        "run".to_owned(),
        "-f".to_owned(),
        file.display().to_string(),
        "--out".to_owned(),
        out.display().to_string(),
    ];
    for (target, uri) in targets {
        args.extend(["--target".to_owned(), format!("{target}={uri}")]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, stdout, stderr) = support::mongobench(&args);
    eprintln!("{stdout}");
    assert_eq!(code, 0, "mongobench run failed:\n{stdout}\n{stderr}");
    let results = read_results(&out);
    // The HTML report's CPU section draws the figures, with their source.
    let (code, html, stderr) =
        support::mongobench(&["report", "--dir", &out.display().to_string(), "-o", "html"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        html.contains("data-plot=\"cpu\""),
        "no CPU plot in the report"
    );
    assert!(
        html.contains("procfs (runner)"),
        "no CPU source in the report"
    );
    assert!(
        !html.contains("not reported"),
        "a target without CPU figures in the report"
    );
    std::fs::remove_dir_all(&dir).unwrap();
    results
}

fn read_results(dir: &Path) -> Vec<CellResult> {
    let mut results = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        // Every `*.json` but the run's comparison document is a result.
        if path.extension().is_some_and(|e| e == "json")
            && path.file_name().is_some_and(|n| n != "comparison.json")
        {
            let text = std::fs::read_to_string(&path).unwrap();
            results.push(
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
            );
        }
    }
    results
}

fn row<'c>(c: &'c Comparison, size: &str, target: &str) -> &'c ComparisonRow {
    let group = c
        .groups
        .iter()
        .find(|g| g.size == size)
        .unwrap_or_else(|| panic!("no comparison at size {size}"));
    group.rows.iter().find(|r| r.target == target).unwrap()
}

/// Every result's server CPU is the SecantusDB process's, from procfs, read by the runner.
fn assert_cpu_from_procfs(results: &[CellResult], pid: impl Fn(&str) -> u32) {
    for r in results {
        assert!(
            r.is_valid(),
            "{}: {:?} {:?}",
            r.cell,
            r.status,
            r.invalid_reasons
        );
        let stats = r.server_stats.as_ref().expect("server figures");
        assert_eq!(stats.cpu_sources, [CpuSource::Procfs], "{}", r.cell);
        let cpu = stats.cpu_us_per_op.expect("CPU per operation");
        assert!(cpu > 0.0, "{}: {cpu}", r.cell);
        assert_eq!(stats.os_cpu_us_per_op, Some(cpu));
        assert!(stats.cpu_disagreements.is_empty(), "no second source");
        let os = stats.members[0].os_cpu.as_ref().expect("the OS reading");
        assert_eq!(os.source, CpuSource::Procfs);
        assert_eq!(os.read_by, "runner");
        assert_eq!(os.process, "secantusd-rs");
        assert_eq!(os.found_by, FoundBy::ListeningPort);
        assert_eq!(os.pid, pid(&r.cell.target), "{}", r.cell);
        let fallback = r
            .fallbacks
            .iter()
            .find(|f| f.capability == "serverStatus.extra_info")
            .expect("SecantusDB has no extra_info CPU times");
        assert_eq!(
            fallback.fallback,
            "server CPU from the operating system (procfs, read by runner)"
        );
    }
}

/// One server under two names, three sizes: three independent A/A comparisons of CPU per
/// operation, each paired by slot over 3 slots. A comparison at the 5 % level calls a perfect
/// measurement different one time in twenty, so at most one of the three may exclude 0 (two
/// or more false alarms happen 0.7 % of the time).
#[test]
fn a_a_shows_cpu_per_operation_from_procfs_with_an_interval_and_no_difference() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let server = support::private_secantus("server-cpu-a-a");
    let spec = "apiVersion: mongobench.io/v1alpha1
kind: MongoBenchmark
metadata: {name: cpu-a-a}
spec:
  targets:
    - {name: a, external: {uriSecretRef: {name: x, key: uri}}}
    - {name: b, external: {uriSecretRef: {name: x, key: uri}}}
  baseline: a
  platforms: [{name: local}]
  dataset: {sizes: ['1000', '1500', '2000']}
  workload: {type: ycsb, ycsb: {workload: c}, workers: 4, duration: 2s, warmup: 500ms, seed: 3}
  repetitions: 3
  verdict: {metrics: [throughput, cpuPerOperation]}
";
    let results = run("cpu-a-a", spec, &[("a", &server.uri), ("b", &server.uri)]);
    assert_eq!(results.len(), 18, "3 sizes × 2 targets × 3 repetitions");
    assert_cpu_from_procfs(&results, |_| server.pid());
    let c = compare(
        &results,
        &CompareOptions {
            baseline: "a".into(),
            ..CompareOptions::default()
        },
    )
    .unwrap();
    let mut different = 0;
    for size in ["1000", "1500", "2000"] {
        let b = row(&c, size, "b");
        let cpu = b.cpu_us_per_op.expect("a summary of CPU per operation");
        let half = cpu.ci95_half_width.expect("an interval of the mean");
        let verdict = b
            .verdict_on(VerdictMetric::CpuPerOperation)
            .expect("CPU per operation is declared");
        let delta = verdict.delta.expect("a tested CPU difference");
        let (low, high) = verdict
            .interval_percent
            .expect("an interval of the difference");
        let mde = verdict.mde_percent.expect("an MDE");
        eprintln!(
            "A/A at {size}: b {:.1} ±{half:.1} µs/op vs a {:.1}; Δ {:+.2}% [{low:+.2}%, \
             {high:+.2}%], MDE {mde:.1}%, paired CV {:?}: {}",
            cpu.mean,
            row(&c, size, "a").cpu_us_per_op.unwrap().mean,
            delta.percent,
            delta.ratio_cv,
            verdict.verdict.text()
        );
        assert_eq!(delta.pairs, Some(3), "paired by slot");
        assert!(mde > 0.0 && mde.is_finite(), "{mde}");
        if verdict.verdict != Verdict::NoSignificantDifference {
            different += 1;
        }
    }
    assert!(
        different <= 1,
        "{different} of 3 A/A comparisons called CPU per operation different"
    );
}

/// lz4 and zlib under YCSB C (uniform reads) on SecantusDB with a 16 MiB cache: 2,000 records
/// (about 2.3 MB) fit in it, 40,000 (about 47 MB) do not. Out of the cache every read brings
/// pages in and decompresses them, which costs zlib about 2.4 times lz4's CPU per operation on
/// this machine (BENCHMARKS.md); in the cache the two cost the same. The run takes about 90 s.
#[test]
fn zlib_costs_more_cpu_per_operation_than_lz4_once_the_data_outgrows_the_cache() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let lz4 = support::private_secantus_with(
        "server-cpu-lz4",
        &[
            "--cache-size=16M".to_owned(),
            "--block-compressor=lz4".to_owned(),
        ],
    );
    let zlib = support::private_secantus_with(
        "server-cpu-zlib",
        &[
            "--cache-size=16M".to_owned(),
            "--block-compressor=zlib".to_owned(),
        ],
    );
    let spec = "apiVersion: mongobench.io/v1alpha1
kind: MongoBenchmark
metadata: {name: compressors}
spec:
  targets:
    - {name: lz4, external: {uriSecretRef: {name: x, key: uri}}}
    - {name: zlib, external: {uriSecretRef: {name: x, key: uri}}}
  baseline: lz4
  platforms: [{name: local}]
  dataset: {sizes: ['2000', '40000']}
  workload:
    type: ycsb
    ycsb: {workload: c, requestDistribution: uniform}
    workers: 4
    duration: 2s
    warmup: 500ms
    seed: 1
  repetitions: 3
  verdict: {metrics: [cpuPerOperation]}
";
    let results = run(
        "compressors",
        spec,
        &[("lz4", &lz4.uri), ("zlib", &zlib.uri)],
    );
    assert_eq!(results.len(), 12, "2 sizes × 2 targets × 3 repetitions");
    assert_cpu_from_procfs(&results, |target| {
        if target == "lz4" {
            lz4.pid()
        } else {
            zlib.pid()
        }
    });
    // The regime shows the data outgrowing the cache.
    for r in &results {
        let stats = r.server_stats.as_ref().unwrap();
        let want = if r.cell.size == "2000" {
            Regime::CacheResident
        } else {
            Regime::IoBound
        };
        assert_eq!(
            stats.regime,
            Some(want),
            "{}: {:?}",
            r.cell,
            stats.members[0].load
        );
    }
    let c = compare(
        &results,
        &CompareOptions {
            baseline: "lz4".into(),
            ..CompareOptions::default()
        },
    )
    .unwrap();
    for size in ["2000", "40000"] {
        let (b, z) = (row(&c, size, "lz4"), row(&c, size, "zlib"));
        let verdict = z.verdict_on(VerdictMetric::CpuPerOperation).unwrap();
        eprintln!(
            "{size}: lz4 {:.1} µs/op, zlib {:.1} µs/op: {:+.1}% {:?}, MDE {:?}: {}",
            b.cpu_us_per_op.unwrap().mean,
            z.cpu_us_per_op.unwrap().mean,
            verdict.delta.map_or(0.0, |d| d.percent),
            verdict.interval_percent,
            verdict.mde_percent,
            verdict.verdict.text()
        );
    }
    // Out of the cache, zlib is called costlier in CPU per operation.
    let z = row(&c, "40000", "zlib");
    let verdict = z.verdict_on(VerdictMetric::CpuPerOperation).unwrap();
    assert_eq!(
        verdict.delta.and_then(|d| d.pairs),
        Some(3),
        "paired by slot"
    );
    assert_eq!(verdict.verdict, Verdict::Costlier, "{verdict:?}");
}
