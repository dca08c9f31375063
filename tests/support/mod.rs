//! Test support: attaches each test binary to the real components of `testenv/` (a Kubernetes
//! control plane with kwok nodes, FerretDB on PostgreSQL as the MongoDB-wire server, FerretDB
//! on SQLite as a second one and SecantusDB (WiredTiger) as a third), starting them through `testenv/up` when they are not running, and
//! gives every test its own namespace or database so tests run in parallel. A component that
//! cannot be reached fails the test with what is missing and how to start it; nothing is skipped.
#![allow(dead_code)] // each test binary uses a different part of this module

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use kube::api::{Api, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};

pub mod passwords;
mod private;
pub mod proxy;
pub mod runs;
pub mod wait;

#[allow(unused_imports)] // like dead_code above: not every test binary starts a server
pub use private::*;

/// What `testenv/up` reported for one component, read from its env file.
#[derive(Debug, Clone)]
struct Endpoints {
    kubeconfig: Option<PathBuf>,
    mongodb_uri: Option<String>,
    mongodb_sqlite_uri: Option<String>,
    mongodb_secantus_uri: Option<String>,
    /// The PostgreSQL database of the `mongo` server's FerretDB, and the psql that reaches it:
    /// private servers get a database of their own on the same cluster.
    postgresql_url: Option<String>,
    psql: Option<PathBuf>,
    /// Where the testenv's binaries are (every component's file names it).
    bin: Option<PathBuf>,
}

fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

pub fn run_dir() -> PathBuf {
    if let Ok(dir) = std::env::var("MONGOBENCH_TESTENV_RUN") {
        return dir.into();
    }
    let cache = std::env::var("MONGOBENCH_TESTENV_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            std::env::var("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|_| {
                    PathBuf::from(std::env::var("HOME").expect("HOME is set")).join(".cache")
                })
                .join("mongobench-testenv")
        });
    cache.join("run")
}

fn read_env(component: &str) -> Endpoints {
    let path = run_dir().join(format!("env.{component}"));
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let value = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
            .map(str::to_owned)
    };
    Endpoints {
        kubeconfig: value("KUBECONFIG").map(PathBuf::from),
        mongodb_uri: value("MONGODB_URI"),
        mongodb_sqlite_uri: value("MONGODB_SQLITE_URI"),
        mongodb_secantus_uri: value("MONGODB_SECANTUS_URI"),
        postgresql_url: value("MONGOBENCH_POSTGRESQL_URL"),
        psql: value("MONGOBENCH_PSQL").map(PathBuf::from),
        bin: value("MONGOBENCH_TESTENV_BIN").map(PathBuf::from),
    }
}

/// The testenv's binary `name`, from the env file of `component` (started if needed). Each
/// component's own file is read: `$RUN/env` is rewritten by every `testenv/up`.
fn testenv_bin(component: &'static str, name: &str) -> PathBuf {
    ensure_up(component)
        .bin
        .unwrap_or_else(|| {
            panic!(
                "testenv/up {component} wrote no MONGOBENCH_TESTENV_BIN to {}",
                run_dir().join(format!("env.{component}")).display()
            )
        })
        .join(name)
}

/// A loopback port that is free now, below the kernel's ephemeral range (so no outgoing
/// connection or `bind(0)` elsewhere can take it meanwhile) and never handed out twice by this
/// process. A server started on it may still find it taken by another program: callers that
/// start one retry with another port when it exits at start.
pub fn free_port() -> u16 {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    // Ports 28000..32500: none of the testenv's fixed ports (testenv/lib.sh), under the
    // ephemeral range (32768 up). Walked from a per-process offset, so that test binaries run
    // one after another do not reuse each other's ports while old sockets linger.
    const FIRST: u32 = 28_000;
    const SPAN: u32 = 4_500;
    let start = std::process::id().wrapping_mul(2_654_435_761) % SPAN;
    for _ in 0..SPAN {
        let port = (FIRST + (start + NEXT.fetch_add(1, Ordering::Relaxed)) % SPAN) as u16;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free loopback port in {FIRST}..{}", FIRST + SPAN)
}

/// Runs `testenv/up COMPONENT` once per test binary (idempotent: running components are kept)
/// and returns what it reported. Panics with the script's own error when it fails.
fn ensure_up(component: &'static str) -> Endpoints {
    static K8S: OnceLock<Result<Endpoints, String>> = OnceLock::new();
    static MONGO: OnceLock<Result<Endpoints, String>> = OnceLock::new();
    static MONGO_SQLITE: OnceLock<Result<Endpoints, String>> = OnceLock::new();
    static SECANTUS: OnceLock<Result<Endpoints, String>> = OnceLock::new();
    let cell = match component {
        "k8s" => &K8S,
        "mongo-sqlite" => &MONGO_SQLITE,
        "secantus" => &SECANTUS,
        _ => &MONGO,
    };
    let result = cell.get_or_init(|| {
        let script = repo_root().join("testenv/up");
        let out = Command::new(&script)
            .arg(component)
            .output()
            .map_err(|e| format!("could not run {}: {e}", script.display()))?;
        if !out.status.success() {
            return Err(format!(
                "testenv component '{component}' is not available: `testenv/up {component}` failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(read_env(component))
    });
    match result {
        Ok(e) => e.clone(),
        Err(e) => {
            panic!("{e}\nStart it by hand with `testenv/up {component}` to see the full output.")
        }
    }
}

fn unique_suffix() -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!(
        "{:x}{n}",
        (nanos ^ std::process::id().rotate_left(16)) & 0xffffff
    )
}

/// Turns a test name into something valid as a namespace or database name.
fn slug(name: &str, max: usize) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    s.trim_matches('-')
        .chars()
        .take(max)
        .collect::<String>()
        .trim_end_matches('-')
        .to_owned()
}

/// A Kubernetes client on the testenv control plane and a namespace of this test's own.
pub struct KubeEnv {
    pub client: kube::Client,
    pub namespace: String,
    pub kubeconfig: PathBuf,
}

/// Path of the testenv's kubectl (built at the control plane's version).
pub fn kubectl() -> PathBuf {
    testenv_bin("k8s", "kubectl")
}

/// The testenv's helm, built if missing (cached by version like every testenv binary).
pub fn helm() -> PathBuf {
    let out = Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("testenv/build"))
        .arg("helm")
        .output()
        .expect("running testenv/build helm");
    assert!(
        out.status.success(),
        "`testenv/build helm` failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    kubectl().with_file_name("helm")
}

/// The objects of the chart rendered as release `release` in `namespace` with `--set` values.
pub fn helm_template(
    helm: &Path,
    release: &str,
    namespace: &str,
    values: &[&str],
) -> Vec<serde_json::Value> {
    let mut cmd = Command::new(helm);
    cmd.args(["template", release])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("charts/mongobench"))
        .args(["--namespace", namespace]);
    for v in values {
        cmd.args(["--set", v]);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "helm template: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_yaml::Deserializer::from_str(&String::from_utf8(out.stdout).unwrap())
        .map(|d| {
            use serde::Deserialize;
            serde_json::to_value(serde_yaml::Value::deserialize(d).unwrap()).unwrap()
        })
        .filter(|v| !v.is_null())
        .collect()
}

/// Admin client for the testenv control plane (no namespace created).
pub async fn kube_client() -> (kube::Client, PathBuf) {
    let kubeconfig = ensure_up("k8s")
        .kubeconfig
        .expect("testenv/up k8s reported no KUBECONFIG");
    let kc = Kubeconfig::read_from(&kubeconfig).unwrap_or_else(|e| {
        panic!(
            "reading the testenv kubeconfig {}: {e}",
            kubeconfig.display()
        )
    });
    let config = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .expect("the testenv kubeconfig is usable");
    let client = kube::Client::try_from(config).expect("a kube client from the testenv kubeconfig");
    (client, kubeconfig)
}

/// An admin client on the testenv control plane whose every request goes through a
/// [`proxy::TcpProxy`] of its own, and that proxy: stalling it cuts this client (an operator
/// replica) off from the API server while every other client goes on.
pub async fn kube_client_through_proxy() -> (kube::Client, proxy::TcpProxy) {
    let (_, kubeconfig) = kube_client().await;
    let kc = Kubeconfig::read_from(&kubeconfig).unwrap();
    let mut config = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .expect("the testenv kubeconfig is usable");
    let host = config
        .cluster_url
        .host()
        .expect("a host in the API server URL");
    let port = config.cluster_url.port_u16().unwrap_or(443);
    let upstream = std::net::ToSocketAddrs::to_socket_addrs(&(host, port))
        .unwrap()
        .next()
        .expect("the API server's address");
    let proxy = proxy::TcpProxy::start(upstream);
    config.cluster_url = format!("https://{}/", proxy.addr).parse().unwrap();
    let client = kube::Client::try_from(config).expect("a kube client through the proxy");
    (client, proxy)
}

/// A client plus a fresh namespace named after the test, whose default ServiceAccount exists
/// (pods are refused until it does). Benchmarks there may read every Secret of it (the
/// namespace's `mongobench.io/readable-secrets: "*"`); the tests of that opt-in change it.
pub async fn kube(test: &str) -> KubeEnv {
    let (client, kubeconfig) = kube_client().await;
    let namespace = format!("{}-{}", slug(test, 40), unique_suffix());
    let ns: Namespace = serde_json::from_value(serde_json::json!({
        "metadata": {"name": namespace, "labels": {"mongobench.io/test": slug(test, 60)},
                     "annotations": {"mongobench.io/readable-secrets": "*"}}
    }))
    .unwrap();
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await
        .unwrap_or_else(|e| panic!("creating test namespace {namespace}: {e}"));
    let sas: Api<ServiceAccount> = Api::namespaced(client.clone(), &namespace);
    wait::until(
        Duration::from_secs(60),
        "the namespace's default ServiceAccount",
        || {
            let sas = sas.clone();
            async move { sas.get_opt("default").await.ok().flatten() }
        },
    )
    .await;
    KubeEnv {
        client,
        namespace,
        kubeconfig,
    }
}

/// A MongoDB client on the testenv's MongoDB-wire server and a database of this test's own.
pub struct MongoEnv {
    pub client: mongodb::Client,
    pub uri: String,
    pub database: String,
}

impl MongoEnv {
    pub fn db(&self) -> mongodb::Database {
        self.client.database(&self.database)
    }
}

/// The URI of the testenv's MongoDB-wire server (FerretDB on PostgreSQL), starting it if needed.
pub fn mongo_uri() -> String {
    ensure_up("mongo")
        .mongodb_uri
        .expect("testenv/up mongo reported no MONGODB_URI")
}

/// The URI of the testenv's second MongoDB-wire server (FerretDB on SQLite), starting it if
/// needed.
pub fn mongo_sqlite_uri() -> String {
    ensure_up("mongo-sqlite")
        .mongodb_sqlite_uri
        .expect("testenv/up mongo-sqlite reported no MONGODB_SQLITE_URI")
}

/// The URI of the testenv's WiredTiger-backed server (SecantusDB), starting it if needed.
pub fn secantus_uri() -> String {
    ensure_up("secantus")
        .mongodb_secantus_uri
        .expect("testenv/up secantus reported no MONGODB_SECANTUS_URI")
}

/// A client on the testenv's SecantusDB server and a database of this test's own.
pub async fn secantus(test: &str) -> MongoEnv {
    mongo_at(secantus_uri(), test).await
}

/// A client on the testenv's MongoDB-wire server (FerretDB on PostgreSQL) and a database of
/// this test's own.
pub async fn mongo(test: &str) -> MongoEnv {
    mongo_at(mongo_uri(), test).await
}

/// A client on the testenv's second MongoDB-wire server (FerretDB on SQLite) and a database of
/// this test's own.
pub async fn mongo_sqlite(test: &str) -> MongoEnv {
    mongo_at(mongo_sqlite_uri(), test).await
}

async fn mongo_at(uri: String, test: &str) -> MongoEnv {
    let client = mongodb::Client::with_uri_str(&uri)
        .await
        .unwrap_or_else(|e| panic!("connecting to the testenv MongoDB-wire server at {uri}: {e}"));
    let database = format!("t_{}_{}", slug(test, 30).replace('-', "_"), unique_suffix());
    MongoEnv {
        client,
        uri,
        database,
    }
}

/// Kills the testenv's kube-apiserver (SIGKILL: a crash; a graceful stop drains watches for
/// a minute), leaves it down for `down`, and starts it again with the same command line on the same etcd, so every
/// object survives; returns once it answers `/readyz`. The pid file is updated, so
/// `testenv/down` stops the new process.
pub fn restart_apiserver(down: Duration) {
    let env = ensure_up("k8s");
    let run = run_dir();
    let pid_file = run.join("kube-apiserver.pid");
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .expect("testenv/up wrote kube-apiserver.pid")
        .trim()
        .parse()
        .expect("a pid in kube-apiserver.pid");
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
        .unwrap_or_else(|e| panic!("the command line of kube-apiserver (pid {pid}): {e}"));
    let args: Vec<String> = cmdline
        .split(|&b| b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    assert!(
        args.first().is_some_and(|a| a.ends_with("kube-apiserver")),
        "pid {pid} of kube-apiserver.pid is not kube-apiserver: {args:?}"
    );
    // SAFETY: kill(2) on the kube-apiserver of the testenv's own pid file.
    assert_eq!(
        unsafe { libc::kill(pid, libc::SIGKILL) },
        0,
        "killing kube-apiserver"
    );
    let gone = std::time::Instant::now() + Duration::from_secs(30);
    // Gone, or a zombie its parent has not reaped yet.
    let exited = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map_or(true, |stat| stat.contains(") Z "))
    };
    while !exited() {
        assert!(
            std::time::Instant::now() < gone,
            "kube-apiserver did not stop"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(down);
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(run.join("log/kube-apiserver.log"))
        .unwrap();
    // Not waited on: the API server is the testenv's and outlives this test (testenv/down
    // stops it by its pid file).
    #[allow(clippy::zombie_processes)]
    let child = Command::new(&args[0])
        .args(&args[1..])
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap_or_else(|e| panic!("starting kube-apiserver again: {e}"));
    std::fs::write(&pid_file, child.id().to_string()).unwrap();
    let kubeconfig = env
        .kubeconfig
        .expect("testenv/up k8s reported a KUBECONFIG");
    let ready = std::time::Instant::now() + Duration::from_secs(180);
    loop {
        let probe = Command::new(kubectl())
            .arg(format!("--kubeconfig={}", kubeconfig.display()))
            .args(["get", "--raw", "/readyz"])
            .output()
            .unwrap();
        if probe.status.success() {
            return;
        }
        assert!(
            std::time::Instant::now() < ready,
            "kube-apiserver not ready 180 s after its restart"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// `mongobench import plgm` of the fixture in plgm's format (tests/fixtures/plgm/, shaped like
/// plgm's default flights files), its 10-minute phase bounded by `length` instead, a YAML
/// line: `operations: 300` sends the same operations however fast the server is.
pub fn imported_plgm(dir: &Path, length: &str) -> PathBuf {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/plgm");
    let out = dir.join("plgm.yaml");
    let run = Command::new(env!("CARGO_BIN_EXE_mongobench"))
        .args([
            "import",
            "plgm",
            "--collections",
            fixtures.join("flights-collections.json").to_str().unwrap(),
            "--queries",
            fixtures.join("flights-queries.json").to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let text = std::fs::read_to_string(&out).unwrap();
    let phase = "phases:\n- name: plgm\n  duration: 10m\n";
    assert!(text.contains(phase), "{text}");
    std::fs::write(
        &out,
        text.replace(phase, &format!("phases:\n- name: plgm\n  {length}\n")),
    )
    .unwrap();
    out
}

/// Runs the built binary with `args`: its exit code, standard output and standard error.
pub fn mongobench(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mongobench"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
