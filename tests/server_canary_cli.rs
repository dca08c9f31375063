//! A local run's server-node canaries: `mongobench canary --serve` on a "server host" (here,
//! this machine), named to `mongobench run` with `--server-canary`, probes that node before
//! every cell and reads the CPU time of the server beside it around every measured phase; the
//! results keep its figures and the HTML report draws them.
mod support;

use std::net::TcpStream;
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
    let port = support::free_port();
    let child = Command::new(env!("CARGO_BIN_EXE_mongobench"))
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
