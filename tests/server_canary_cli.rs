//! A local run's server-node canaries: `mongobench canary --serve` on a "server host" (here,
//! this machine), named to `mongobench run` with `--server-canary`, probes that node before
//! every cell, samples it once a second during every measured phase and reads the CPU time of
//! the server beside it around the phase; the results keep its figures and the HTML report
//! draws them. A node that slowed during a phase is flagged, and under `canaryPolicy: Void`
//! its slot runs again.
mod support;

use std::collections::BTreeSet;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use mongobench::measure::server::CpuSource;

/// The canary process, killed when dropped.
struct Canary(Child);

impl Drop for Canary {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve_canary() -> (Canary, String) {
    serve_canary_with(&[])
}

/// A canary with `env` set: the test hook that slows its light probe.
fn serve_canary_with(env: &[(&str, &Path)]) -> (Canary, String) {
    let port = support::free_port();
    let child = Command::new(env!("CARGO_BIN_EXE_mongobench"))
        .envs(env.iter().copied())
        .args([
            "canary",
            "--serve",
            "127.0.0.1",
            "--port",
            &port.to_string(),
        ])
        .spawn()
        .unwrap();
    let address = format!("127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(&address).is_err() {
        assert!(
            Instant::now() < deadline,
            "the canary never listened on {address}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    (Canary(child), address)
}

#[test]
fn a_local_run_probes_the_server_nodes_it_is_told_of_before_every_cell() {
    let server = support::private_secantus("server-canary");
    let (_canary, address) = serve_canary();
    let dir = std::env::temp_dir().join(format!("mongobench-server-canary-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let spec = dir.join("spec.yaml");
    std::fs::write(
        &spec,
        "apiVersion: mongobench.io/v1alpha1\nkind: MongoBenchmark\nmetadata: {name: canary}\n\
         spec:\n  targets: [{name: a, external: {uriSecretRef: {name: s}}}]\n\
         \x20 platforms: [{name: local}]\n  dataset: {sizes: ['100']}\n\
         \x20 workload: {type: flights, workers: 1, duration: 1s, warmup: 0s}\n\
         \x20 repetitions: 2\n",
    )
    .unwrap();
    let out = dir.join("out");
    let (spec, out_dir) = (spec.to_str().unwrap(), out.to_str().unwrap());
    let target = format!("a={}", server.uri);

    let run = |canary: &str| {
        support::mongobench(&[
            "run",
            "-f",
            spec,
            "--target",
            &target,
            "--server-canary",
            canary,
            "--out",
            out_dir,
        ])
    };

    // A canary of a target not run is refused before anything is written.
    let (code, _, err) = run("b=127.0.0.1:1");
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--server-canary \"b=127.0.0.1:1\": \"b\" is not one of the --target names"),
        "{err}"
    );
    assert!(!out.exists());

    let (code, _, err) = run(&format!("a={address}"));
    assert_eq!(code, 0, "{err}");
    let results = support::runs::read_results(&out);
    assert_eq!(results.len(), 2, "one result per cell");
    for r in &results {
        assert_eq!(r.server_canaries.len(), 1, "{:?}", r.server_canaries);
        let node = &r.server_canaries[0];
        assert_eq!(
            (node.address.as_str(), node.error.as_deref()),
            (address.as_str(), None)
        );
        let figures = node.figures.expect("the node's probe");
        assert!(
            figures.cpu_us > 0.0 && figures.memory_gbps > 0.0,
            "{figures:?}"
        );
        assert!(figures.loopback_rtt_us.is_some(), "{figures:?}");
        // SecantusDB's CPU time, read by the canary on its host rather than by the runner.
        let stats = r.server_stats.as_ref().expect("server figures");
        assert!(stats.cpu_us_per_op.is_some_and(|c| c > 0.0), "{stats:?}");
        let os = stats.members[0]
            .os_cpu
            .as_ref()
            .expect("the canary's reading");
        assert_eq!(os.read_by, format!("canary {address}"));
        assert_eq!(os.source, CpuSource::Procfs);
        assert_eq!(
            (os.process.as_str(), os.pid),
            ("secantusd-rs", server.pid())
        );
    }

    let (code, html, err) = support::mongobench(&["report", "--dir", out_dir, "-o", "html"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        html.contains("data-plot=\"canary-servers\""),
        "no server nodes' plot"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A fresh directory for one test's spec and results, with the spec `yaml` written in it.
fn workspace(test: &str, yaml: &str) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("mongobench-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let spec = dir.join("spec.yaml");
    std::fs::write(&spec, yaml).unwrap();
    (dir, spec)
}

/// A spec of one target `a` measured `repetitions` times for `seconds`, with `extra` spec
/// lines.
fn spec_yaml(repetitions: u32, seconds: u32, extra: &str) -> String {
    format!(
        "apiVersion: mongobench.io/v1alpha1\nkind: MongoBenchmark\nmetadata: {{name: phase}}\n\
         spec:\n  targets: [{{name: a, external: {{uriSecretRef: {{name: s}}}}}}]\n\
         \x20 platforms: [{{name: local}}]\n  dataset: {{sizes: ['100']}}\n\
         \x20 workload: {{type: flights, workers: 1, duration: {seconds}s, warmup: 0s}}\n\
         \x20 repetitions: {repetitions}\n{extra}"
    )
}

/// The names of the result files in `out` so far.
fn result_files(out: &Path) -> BTreeSet<String> {
    let Ok(entries) = std::fs::read_dir(out) else {
        return BTreeSet::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".json") && n != "comparison.json")
        .collect()
}

#[test]
fn the_server_node_is_sampled_every_second_of_the_measured_phase() {
    let server = support::private_secantus("server-phase-canary");
    let (_canary, address) = serve_canary();
    let (dir, spec) = workspace("server-phase-canary", &spec_yaml(1, 4, ""));
    let out = dir.join("out");
    let target = format!("a={}", server.uri);
    let canary = format!("a={address}");
    let (code, _, err) = support::mongobench(&[
        "run",
        "-f",
        spec.to_str().unwrap(),
        "--target",
        &target,
        "--server-canary",
        &canary,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let results = support::runs::read_results(&out);
    assert_eq!(results.len(), 1);
    let r = &results[0];
    let measured = r.measured.as_ref().expect("a measured phase");
    let phase_seconds = measured.duration().as_secs_f64();
    assert_eq!(r.server_phase_canaries.len(), 1, "{r:?}");
    let node = &r.server_phase_canaries[0];
    assert_eq!(
        (node.address.as_str(), node.error.as_deref()),
        (address.as_str(), None)
    );
    let during = &node.during;
    assert!(
        f64::from(during.seconds) >= phase_seconds - 1.0,
        "{during:?} over a phase of {phase_seconds} s"
    );
    // This machine runs Linux: the canary read /proc/stat.
    let (steal, max) = (
        during.steal_percent.unwrap(),
        during.steal_percent_max.unwrap(),
    );
    assert!(
        (0.0..=100.0).contains(&steal) && (steal..=100.0).contains(&max),
        "{during:?}"
    );
    // A sixteenth of the full probe's chain: well under its time, and more than nothing.
    let probe = r.server_canaries[0]
        .figures
        .expect("the node's probe before the cell");
    let light = during.cpu_us.unwrap();
    assert!(
        light > 0.0 && light < probe.cpu_us,
        "{during:?} against {probe:?}"
    );
    // No earlier phase of this node: nothing to judge its probe against.
    assert_eq!(during.deviation, None);
    // The client's own, beside it, over the same phase.
    let client = r.phase_canary.as_ref().expect("the client's phase canary");
    assert!(
        client.seconds.abs_diff(during.seconds) <= 1,
        "{client:?} {during:?}"
    );

    let (code, text, err) = support::mongobench(&["report", "--dir", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    // The probe before the cell may deviate from the reference on a busy machine; the phase's
    // light probe has no earlier phase to deviate from.
    let line = text
        .lines()
        .find(|l| {
            l.starts_with(&format!(
                "noise canary of the server node {address}: probed before 1 cell"
            ))
        })
        .unwrap_or_else(|| panic!("no line of the server node: {text}"));
    assert!(
        line.contains("; sampled during 1 measured phase, 0 deviated, steal at most "),
        "{line}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_server_node_that_slows_during_a_phase_voids_its_slot() {
    let server = support::private_secantus("server-phase-slowed");
    let (dir, spec) = workspace(
        "server-phase-slowed",
        &spec_yaml(3, 3, "  canaryPolicy: Void\n"),
    );
    // While this file exists the canary's light probe does its work twice over.
    let slow = dir.join("slow");
    let (_canary, address) = serve_canary_with(&[("MONGOBENCH_CANARY_SLOW_FILE", &slow)]);
    let out = dir.join("out");
    let mut run = Command::new(env!("CARGO_BIN_EXE_mongobench"))
        .args(["run", "-f", spec.to_str().unwrap(), "--target"])
        .arg(format!("a={}", server.uri))
        .arg("--server-canary")
        .arg(format!("a={address}"))
        .arg("--out")
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Two cells at the node's own speed, then the third measured while it is slowed: each
    // earlier phase of the node is its reference.
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut before_slow = BTreeSet::new();
    let slowed_cell = loop {
        assert!(Instant::now() < deadline, "the run took over 300 s");
        assert!(run.try_wait().unwrap().is_none(), "the run ended early");
        let files = result_files(&out);
        if files.len() == 2 && !slow.exists() {
            std::fs::write(&slow, "").unwrap();
            before_slow = files.clone();
        }
        if files.len() == 3 {
            std::fs::remove_file(&slow).unwrap();
            break files.difference(&before_slow).next().unwrap().clone();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let finished = run.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&finished.stderr);
    assert!(finished.status.success(), "{err}");

    let text = std::fs::read_to_string(out.join(&slowed_cell)).unwrap();
    let slowed = mongobench::result::CellResult::from_json(&text).unwrap();
    let node = &slowed.server_phase_canaries[0];
    let deviation = node
        .during
        .deviation
        .as_ref()
        .expect("the slowed node flagged");
    assert_eq!(
        deviation.figure, "CPU during the measured phase",
        "{node:?}"
    );
    // Twice the work: about 100 % slower than the node's earlier phases.
    assert!(deviation.percent > 50.0, "{node:?}");
    // The probe before the cell is left alone by the hook; on a busy machine it may deviate
    // too, so the reason is looked for among the cell's.
    let reason = format!(
        "noise canary: the CPU during the measured phase of the server node at {address} was \
         {:.0}% slower than the run's median (canaryPolicy Void; its slot runs again)",
        deviation.percent
    );
    assert!(
        slowed.invalid_reasons.contains(&reason),
        "{:?}",
        slowed.invalid_reasons
    );
    // Its slot ran again: a cell past the three planned.
    let results = support::runs::read_results(&out);
    let repetitions: Vec<u32> = results.iter().map(|r| r.cell.repetition).collect();
    assert!(repetitions.iter().any(|&n| n > 3), "{repetitions:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}
