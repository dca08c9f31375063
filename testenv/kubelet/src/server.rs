//! Replica-set members run for real. A pod whose container is the operator's `mongod`
//! (a provisioned target's StatefulSet member), bound to a node the harness runs, is started
//! as SecantusDB (`secantusd-rs`, a MongoDB-wire server over the real WiredTiger library) in
//! place of the image's mongod: on a loopback address of its own, reported as the pod's IP,
//! at the container's port, with its data in the pod's scratch directory. mongod's arguments
//! are translated (see [`secantus_args`]); the image entrypoint's part, creating the `root`
//! user from `MONGO_INITDB_ROOT_USERNAME`/`_PASSWORD` on the empty data directory, is done
//! through the server's localhost exception. The pod is reported Running and Ready once the
//! port accepts connections (the operator's readiness probe is a TCP one); the process is
//! stopped (SIGTERM, then SIGKILL) when the pod is deleted, and a process that exits on its
//! own fails its pod, which the StatefulSet controller then replaces. As with a member's
//! volume, the replacement finds the data its predecessor left (the root user included), and
//! as with its stable DNS name, it listens at the same address when that is free: a crashed
//! member comes back as itself. Only member 0 of a set
//! runs: a SecantusDB server is a replica set of one, and further members would be sets of
//! their own, so their pods stay Pending, waiting with the reason.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Container, Pod};
use serde_json::json;

use crate::RunContext;
use crate::names::{SECANTUS_SET, pod_dns_name};

/// Name of the operator's server container.
pub const MONGOD_CONTAINER: &str = "mongod";
/// The StatefulSet controller's label of a pod's ordinal.
const POD_INDEX_LABEL: &str = "apps.kubernetes.io/pod-index";
/// mongod's port, when the container names none.
const DEFAULT_PORT: u16 = 27017;

/// A member the harness started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// `namespace/name` of its pod.
    pub pod: String,
    /// Where it listens: the pod IP and the container's port.
    pub address: SocketAddr,
    /// The `secantusd-rs` process.
    pub pid: u32,
}

/// A member's process while it runs, to stop it.
pub(crate) struct Handle {
    pub(crate) pid: u32,
    /// The pod's other containers (the noise canary), run as the project's binary.
    pub(crate) sidecars: Vec<u32>,
    pub(crate) stop: Arc<tokio::sync::Notify>,
    pub(crate) data: PathBuf,
}

/// Running members by pod uid.
pub(crate) type Running = BTreeMap<String, Handle>;

/// True for a pod whose first container is the operator's `mongod`.
pub fn is_member(pod: &Pod) -> bool {
    pod.spec
        .as_ref()
        .and_then(|s| s.containers.first())
        .is_some_and(|c| c.name == MONGOD_CONTAINER)
}

/// What `secantusd-rs` is started with for a mongod container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Translated {
    pub args: Vec<String>,
    /// The `--replSet` name mongod was given.
    pub set: Option<String>,
    /// `--auth`: the entrypoint's root user is created.
    pub auth: bool,
}

/// The `secantusd-rs` arguments standing for `mongod_args`, listening on `address` with its
/// data in `storage` and `config` as its (empty) configuration file, so that no
/// `secantusd.toml` of the machine applies:
/// - `--replSet NAME`: recorded; the server advertises the one-member set `secantus`;
/// - `--bind_ip_all`: `--host <pod IP>` (all of the pod's addresses);
/// - `--auth`: `--auth` (SCRAM-SHA-256);
/// - `--keyFile PATH`: dropped; it authenticates members to each other, and a server of one
///   member has nobody to authenticate to;
/// - `--wiredTigerCacheSizeGB N`: `--cache-size` of the same size, in MiB.
///
/// # Errors
/// Any other argument, which would otherwise be silently lost, names itself.
pub fn secantus_args(
    mongod_args: &[String],
    address: SocketAddr,
    storage: &Path,
    config: &Path,
) -> Result<Translated, String> {
    let mut args = vec![
        format!("--config={}", config.display()),
        format!("--host={}", address.ip()),
        format!("--port={}", address.port()),
        format!("--storage-path={}", storage.display()),
        "--log-level=WARNING".to_owned(),
    ];
    let (mut set, mut auth) = (None, false);
    let mut it = mongod_args.iter();
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) => (f, Some(v.to_owned())),
            None => (arg.as_str(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| it.next().cloned())
                .ok_or_else(|| format!("mongod argument {flag} has no value"))
        };
        match flag {
            "--replSet" => set = Some(value()?),
            "--bind_ip_all" => {}
            "--auth" => {
                auth = true;
                args.push("--auth".to_owned());
            }
            "--keyFile" => {
                value()?;
            }
            "--wiredTigerCacheSizeGB" => {
                let v = value()?;
                let gb: f64 = v
                    .parse()
                    .map_err(|_| format!("--wiredTigerCacheSizeGB {v:?} is not a number"))?;
                args.push(format!("--cache-size={}M", (gb * 1024.0).round() as u64));
            }
            other => {
                return Err(format!(
                    "mongod argument {other:?} has no secantusd-rs counterpart in the testenv harness"
                ));
            }
        }
    }
    Ok(Translated { args, set, auth })
}

/// A loopback address of 127.3.0.0/16 (kwok's pod IPs are in 127.1.0.0/24) where `port` is
/// free, tried first at a place drawn from `seed` (the pod's namespace and name: a replaced
/// member gets its predecessor's address back), so harnesses of concurrent test binaries
/// rarely try the same one.
pub fn pick_address(seed: &str, port: u16) -> Option<SocketAddr> {
    const HOSTS: u64 = 256 * 254;
    // FNV-1a: stable across runs and processes.
    let start = seed.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    }) % HOSTS;
    (0..HOSTS).take(4096).find_map(|i| {
        let n = (start + i) % HOSTS;
        let ip = Ipv4Addr::new(127, 3, (n / 254) as u8, (n % 254 + 1) as u8);
        let address = SocketAddr::new(IpAddr::V4(ip), port);
        std::net::TcpListener::bind(address).ok().map(|_| address)
    })
}

fn container_port(container: &Container) -> u16 {
    container
        .ports
        .iter()
        .flatten()
        .next()
        .and_then(|p| u16::try_from(p.container_port).ok())
        .unwrap_or(DEFAULT_PORT)
}

/// The last lines of a log file, for a pod's termination message.
fn tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().rev().take(5).collect();
    lines.into_iter().rev().collect::<Vec<_>>().join(" | ")
}

/// What the official images' entrypoint does on an empty data directory: the `root` user.
async fn create_root(address: SocketAddr, user: &str, password: &str) -> Result<(), String> {
    use mongodb::bson::doc;
    let uri = format!("mongodb://{address}/?directConnection=true&serverSelectionTimeoutMS=10000");
    let client = mongodb::Client::with_uri_str(&uri)
        .await
        .map_err(|e| e.to_string())?;
    let command =
        doc! {"createUser": user, "pwd": password, "roles": [{"role": "root", "db": "admin"}]};
    let created = client.database("admin").run_command(command).await;
    client.shutdown().await;
    created
        .map(drop)
        .map_err(|e| format!("creating the root user: {e}"))
}

fn kill(pid: u32, signal: libc::c_int) {
    // SAFETY: kill(2) on a process this harness started and has not reaped.
    unsafe { libc::kill(pid as libc::pid_t, signal) };
}

impl RunContext {
    /// Leaves pod `name` Pending, its container waiting for `reason`.
    async fn waiting(&self, name: &str, container: &Container, reason: &str, message: &str) {
        eprintln!("kubelet harness: pod {name}: {reason}: {message}");
        self.status(name, json!({"status": {
            "conditions": [{"type": "Ready", "status": "False", "reason": "ContainersNotReady"},
                           {"type": "ContainersReady", "status": "False", "reason": "ContainersNotReady"}],
            "containerStatuses": [{"name": container.name, "image": container.image, "imageID": "", "ready": false,
                "started": false, "restartCount": 0, "state": {"waiting": {"reason": reason, "message": message}}}]
        }}))
        .await;
    }

    /// Starts `container`, another container of member `pod` (the noise canary), as the
    /// project's binary with its arguments and environment, the pod's IP being the member's
    /// `address`; it shares the member's network, so it is ready once its port accepts
    /// connections (the first it declares).
    async fn start_sidecar(
        &self,
        pod: &Pod,
        address: SocketAddr,
        container: &Container,
        scratch: &Path,
    ) -> Result<tokio::process::Child, String> {
        let mut pod = pod.clone();
        pod.status.get_or_insert_with(Default::default).pod_ip = Some(address.ip().to_string());
        let dir = scratch.join(&container.name);
        std::fs::create_dir_all(&dir).unwrap();
        let (args, env) = self.prepare(&pod, container, &dir).await?;
        let log = dir.join("stderr.log");
        let mut command = tokio::process::Command::new(&self.binary);
        command
            .args(&args)
            .env_clear()
            .envs(env)
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .current_dir(&dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .kill_on_drop(true);
        // SAFETY: as for the member's process.
        unsafe {
            command.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let mut child = command
            .spawn()
            .map_err(|e| format!("starting {}: {e}", self.binary.display()))?;
        let Some(port) = container.ports.iter().flatten().next() else {
            return Ok(child);
        };
        let listening = SocketAddr::new(address.ip(), port.container_port as u16);
        let deadline = Instant::now() + Duration::from_secs(30);
        while tokio::net::TcpStream::connect(listening).await.is_err() {
            if let Ok(Some(status)) = child.try_wait() {
                return Err(format!("exited at start ({status}): {}", tail(&log)));
            }
            if Instant::now() > deadline {
                return Err(format!("not listening on {listening} after 30 s"));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Ok(child)
    }

    /// Runs the member `pod` until it is deleted or its process exits.
    pub(crate) async fn run_member(self, pod: Pod) {
        let name = pod.metadata.name.clone().unwrap_or_default();
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        let spec = pod.spec.clone().unwrap_or_default();
        let container = spec.containers.first().cloned().unwrap_or_default();
        let scratch = self.scratch(&name);
        // As a kubelet does, a container it cannot create leaves the pod Pending, waiting
        // with the reason; one that fails once started fails the pod.
        let waiting = |reason: &'static str, message: String| {
            let this = &self;
            let (name, container) = (name.clone(), container.clone());
            async move { this.waiting(&name, &container, reason, &message).await }
        };
        let failed = |message: String| {
            let this = &self;
            let (name, container) = (name.clone(), container.clone());
            async move { this.finish(&name, &container, 1, "Error", &message).await }
        };
        let ordinal = pod
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(POD_INDEX_LABEL));
        if ordinal.is_some_and(|o| o != "0") {
            let message = "a SecantusDB server is a replica set of one member: the harness runs member 0 only";
            return waiting("CreateContainerError", message.into()).await;
        }
        let Some(secantus) = self.secantus.clone() else {
            let message = "this harness runs mongod containers as secantusd-rs and was started without one (--secantus)";
            return waiting("CreateContainerConfigError", message.into()).await;
        };
        let (args, env) = match self.prepare(&pod, &container, &scratch).await {
            Ok(p) => p,
            Err(message) => return waiting("CreateContainerConfigError", message).await,
        };
        let seed = format!("{}/{name}", self.namespace);
        let Some(address) = pick_address(&seed, container_port(&container)) else {
            return waiting("CreateContainerError", "no free loopback address".into()).await;
        };
        // Beside the scratch directory, which every start empties: the member's volume.
        let data =
            std::env::temp_dir().join(format!("mongobench-kubelet-data-{}-{name}", self.namespace));
        let (config, log) = (
            scratch.join("secantusd.toml"),
            scratch.join("secantusd.log"),
        );
        let fresh = !data.exists();
        std::fs::create_dir_all(&data).unwrap();
        std::fs::write(&config, "").unwrap();
        let translated = match secantus_args(&args, address, &data, &config) {
            Ok(t) => t,
            Err(message) => return waiting("CreateContainerError", message).await,
        };
        let log_file = std::fs::File::create(&log).unwrap();
        let mut command = tokio::process::Command::new(&secantus);
        command
            .args(&translated.args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .current_dir(&scratch)
            .stdout(log_file.try_clone().unwrap())
            .stderr(log_file)
            .kill_on_drop(true);
        // SAFETY: prctl is async-signal-safe; the member dies with the harness's process even
        // when that is killed before its destructors run.
        unsafe {
            command.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let mut child = match command.spawn() {
            Ok(c) => c,
            Err(e) => {
                let message = format!("starting {}: {e}", secantus.display());
                return waiting("CreateContainerError", message).await;
            }
        };
        let pid = child.id().unwrap_or_default();
        let deadline = Instant::now() + Duration::from_secs(30);
        while tokio::net::TcpStream::connect(address).await.is_err() {
            if let Ok(Some(status)) = child.try_wait() {
                let message = format!("secantusd-rs exited at start ({status}): {}", tail(&log));
                return failed(message).await;
            }
            if Instant::now() > deadline {
                return failed(format!("not listening on {address} after 30 s")).await;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let root = (
            env.get("MONGO_INITDB_ROOT_USERNAME"),
            env.get("MONGO_INITDB_ROOT_PASSWORD"),
        );
        // As the images' entrypoint does, on an empty data directory only.
        if let (true, true, (Some(user), Some(password))) = (fresh, translated.auth, root)
            && let Err(message) = create_root(address, user, password).await
        {
            return failed(message).await;
        }

        // Resolvable before it is Ready: the operator starts the runner once it is.
        let dns = spec.subdomain.as_ref().map(|sub| {
            pod_dns_name(
                spec.hostname.as_ref().unwrap_or(&name),
                sub,
                &self.namespace,
            )
        });
        {
            let mut names = self.shared.names.lock().unwrap();
            if let Some(dns) = &dns {
                names.add_host(dns.clone(), address.ip().to_string());
            }
            if let Some(set) = &translated.set {
                names.add_set(set.clone(), SECANTUS_SET.to_owned());
            }
        }
        let mut sidecars = Vec::new();
        for sidecar in spec.containers.iter().skip(1) {
            match self.start_sidecar(&pod, address, sidecar, &scratch).await {
                Ok(child) => sidecars.push(child),
                Err(message) => {
                    kill(pid, libc::SIGKILL);
                    return failed(format!("sidecar {}: {message}", sidecar.name)).await;
                }
            }
        }
        let stop = Arc::new(tokio::sync::Notify::new());
        self.shared.running.lock().unwrap().insert(
            uid.clone(),
            Handle {
                pid,
                sidecars: sidecars.iter().filter_map(|c| c.id()).collect(),
                stop: stop.clone(),
                data: data.clone(),
            },
        );
        self.members.lock().unwrap().push(Member {
            pod: format!("{}/{name}", self.namespace),
            address,
            pid,
        });
        let ip = address.ip().to_string();
        let conditions: Vec<_> = ["PodScheduled", "Initialized", "ContainersReady", "Ready"]
            .into_iter()
            .map(|c| json!({"type": c, "status": "True", "lastTransitionTime": crate::now()}))
            .collect();
        self.status(&name, json!({"status": {
            "phase": "Running", "startTime": crate::now(),
            "hostIP": "127.0.0.1", "hostIPs": [{"ip": "127.0.0.1"}],
            "podIP": ip, "podIPs": [{"ip": ip}],
            "conditions": conditions,
            "containerStatuses": [{"name": container.name, "image": container.image, "imageID": "", "ready": true,
                "started": true, "restartCount": 0, "state": {"running": {"startedAt": crate::now()}}}]
        }}))
        .await;

        let exited = tokio::select! {
            status = child.wait() => Some(status),
            () = stop.notified() => None,
        };
        for mut sidecar in sidecars {
            let _ = sidecar.kill().await;
        }
        if exited.is_none() {
            kill(pid, libc::SIGTERM);
            if tokio::time::timeout(Duration::from_secs(10), child.wait())
                .await
                .is_err()
            {
                let _ = child.kill().await;
            }
        }
        if let Some(dns) = &dns {
            self.shared.names.lock().unwrap().remove_host(dns);
        }
        self.shared.running.lock().unwrap().remove(&uid);
        // A deleted pod's volume goes with it; a crashed member's stays for its replacement.
        if exited.is_none() {
            let _ = std::fs::remove_dir_all(&data);
        }
        if let Some(status) = exited
            && !self
                .shared
                .closing
                .load(std::sync::atomic::Ordering::SeqCst)
        {
            let code = status.ok().and_then(|s| s.code()).unwrap_or(137);
            let reason = if code == 0 { "Completed" } else { "Error" };
            self.finish(&name, &container, code, reason, &tail(&log))
                .await;
        }
    }
}

/// Stops every member at once (the harness is going away): SIGKILL, and their data removed.
pub(crate) fn kill_all(running: &mut Running) {
    for (_, handle) in std::mem::take(running) {
        kill(handle.pid, libc::SIGKILL);
        for sidecar in handle.sidecars {
            kill(sidecar, libc::SIGKILL);
        }
        let _ = std::fs::remove_dir_all(&handle.data);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(s: &[&str]) -> Vec<String> {
        s.iter().map(|&a| a.to_owned()).collect()
    }

    #[test]
    fn the_operator_s_mongod_arguments_become_secantus_flags() {
        let address: SocketAddr = "127.3.0.7:27017".parse().unwrap();
        let args = strings(&[
            "--replSet",
            "b-t-p",
            "--bind_ip_all",
            "--auth",
            "--keyFile",
            "/etc/mongodb-keyfile/keyfile",
            "--wiredTigerCacheSizeGB",
            "0.5",
        ]);
        let t = secantus_args(
            &args,
            address,
            Path::new("/s/data/db"),
            Path::new("/s/c.toml"),
        )
        .unwrap();
        assert_eq!(
            t,
            Translated {
                args: strings(&[
                    "--config=/s/c.toml",
                    "--host=127.3.0.7",
                    "--port=27017",
                    "--storage-path=/s/data/db",
                    "--log-level=WARNING",
                    "--auth",
                    "--cache-size=512M",
                ]),
                set: Some("b-t-p".into()),
                auth: true,
            }
        );
        // Without authentication (and `=` forms): no --auth, no root user.
        let plain = strings(&[
            "--replSet=rs",
            "--bind_ip_all",
            "--wiredTigerCacheSizeGB=5.5",
        ]);
        let t = secantus_args(&plain, address, Path::new("/d"), Path::new("/c")).unwrap();
        assert_eq!((t.set.as_deref(), t.auth), (Some("rs"), false));
        assert_eq!(
            t.args.last().map(String::as_str),
            Some("--cache-size=5632M")
        );
    }

    #[test]
    fn an_argument_without_a_counterpart_fails_the_pod_instead_of_being_lost() {
        let address: SocketAddr = "127.3.0.7:27017".parse().unwrap();
        let (d, c) = (Path::new("/d"), Path::new("/c"));
        let e = secantus_args(
            &strings(&["--wiredTigerCollectionBlockCompressor=zstd"]),
            address,
            d,
            c,
        )
        .unwrap_err();
        assert_eq!(
            e,
            "mongod argument \"--wiredTigerCollectionBlockCompressor\" has no secantusd-rs counterpart in the testenv harness"
        );
        let e = secantus_args(&strings(&["--replSet"]), address, d, c).unwrap_err();
        assert_eq!(e, "mongod argument --replSet has no value");
    }

    #[test]
    fn a_member_gets_a_free_loopback_address_of_its_own_at_its_port() {
        let a = pick_address("2a0c5e1f-uid-a", 27017).unwrap();
        assert_eq!(a.port(), 27017);
        let IpAddr::V4(ip) = a.ip() else {
            panic!("{a}")
        };
        assert_eq!(ip.octets()[..2], [127, 3]);
        assert_ne!(ip.octets()[3], 0);
        assert_eq!(pick_address("2a0c5e1f-uid-a", 27017), Some(a), "stable");
        // Taken: the next one.
        let _held = std::net::TcpListener::bind(a).unwrap();
        let b = pick_address("2a0c5e1f-uid-a", 27017).unwrap();
        assert_ne!(a, b);
    }
}
