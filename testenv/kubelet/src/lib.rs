//! The kubelet of the testenv's harness nodes. kwok runs the server pools (pods there start
//! and Job pods succeed at once, since no container ever runs), but pods bound to the client
//! nodes (`client-0`, `client-1`) and to the `local-wt` nodes are left alone: this harness
//! runs them for real. For each such pod it takes the container's own command, arguments and
//! environment (Secret and ConfigMap references resolved), materialises its ConfigMap and
//! Secret volumes in a scratch directory (mount paths in its files, environment and arguments
//! written as those directories), gives the process the credentials of the pod's ServiceAccount (a
//! token from the TokenRequest API, as the kubelet would mount), runs the project's binary in
//! place of the image, and writes the pod's status: Running, then Succeeded or Failed with the
//! exit code and the termination message. The real Job controller takes it from there.
//!
//! A provisioned target's replica-set member (the operator's `mongod` container) is run as
//! SecantusDB instead, on a loopback address of its own ([`server`]), and the names the
//! operator gives members are written as those addresses in what later pods are started with
//! ([`names`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::authentication::v1::TokenRequest;
use k8s_openapi::api::core::v1::{ConfigMap, Container, Pod, Secret, ServiceAccount};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

pub mod names;
pub mod server;

pub use server::Member;

/// Client nodes: their pods (runner Jobs) run the project's binary.
pub const CLIENT_NODES: [&str; 2] = ["client-0", "client-1"];
/// The `local-wt` pool: its pods run like the client nodes', and `mongod` containers there
/// run as SecantusDB. Tainted `mongobench.io/testenv-harness=true:NoSchedule`, so only pods
/// that ask for it land there.
pub const SERVER_NODES: [&str; 3] = ["local-wt-0", "local-wt-1", "local-wt-2"];

/// A running harness; dropping it stops it (Job processes already started run to their end;
/// members are killed).
pub struct Kubelet {
    task: tokio::task::JoinHandle<()>,
    /// Pods started so far (namespace/name), in start order.
    pub started: Arc<Mutex<Vec<String>>>,
    /// Replica-set members started so far, in start order.
    pub members: Arc<Mutex<Vec<Member>>>,
    shared: Arc<Shared>,
    namespace: String,
}

impl Drop for Kubelet {
    fn drop(&mut self) {
        self.task.abort();
        self.shared.closing.store(true, Ordering::SeqCst);
        server::kill_all(&mut self.shared.running.lock().unwrap());
        // The volumes crashed members left for replacements that never came.
        let prefix = format!("mongobench-kubelet-data-{}-", self.namespace);
        for entry in std::fs::read_dir(std::env::temp_dir())
            .into_iter()
            .flatten()
            .flatten()
        {
            if entry.file_name().to_string_lossy().starts_with(&prefix) {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
}

/// What the pods' tasks share.
#[derive(Default)]
struct Shared {
    names: Mutex<names::Names>,
    running: Mutex<server::Running>,
    /// The harness is being dropped: a member's end is not reported.
    closing: AtomicBool,
}

/// Starts the harness for pods in `namespace`, running `binary` for every container; a
/// `mongod` member fails to start (there is no server to run it with).
pub fn start(client: kube::Client, namespace: &str, kubeconfig: &Path, binary: &Path) -> Kubelet {
    launch(client, namespace, kubeconfig, binary, None)
}

/// [`start`], running `mongod` members with `secantus` (a `secantusd-rs` binary).
pub fn start_with_secantus(
    client: kube::Client,
    namespace: &str,
    kubeconfig: &Path,
    binary: &Path,
    secantus: &Path,
) -> Kubelet {
    launch(client, namespace, kubeconfig, binary, Some(secantus))
}

fn launch(
    client: kube::Client,
    namespace: &str,
    kubeconfig: &Path,
    binary: &Path,
    secantus: Option<&Path>,
) -> Kubelet {
    let started = Arc::new(Mutex::new(Vec::new()));
    let members = Arc::new(Mutex::new(Vec::new()));
    let shared = Arc::new(Shared::default());
    let ctx = RunContext {
        client: client.clone(),
        namespace: namespace.to_owned(),
        kubeconfig: kubeconfig.to_owned(),
        binary: binary.to_owned(),
        secantus: secantus.map(Path::to_owned),
        shared: shared.clone(),
        members: members.clone(),
    };
    let seen_names = started.clone();
    let task = tokio::spawn(async move {
        let pods: Api<Pod> = Api::namespaced(client.clone(), &ctx.namespace);
        // Pod uids already taken: a StatefulSet's replacement pod has its predecessor's name.
        let mut seen = std::collections::BTreeSet::new();
        loop {
            if let Ok(list) = pods.list(&ListParams::default()).await {
                let mut live = std::collections::BTreeSet::new();
                for pod in list.items {
                    let name = pod.metadata.name.clone().unwrap_or_default();
                    let uid = pod.metadata.uid.clone().unwrap_or_default();
                    let ours = pod
                        .spec
                        .as_ref()
                        .and_then(|s| s.node_name.as_deref())
                        .is_some_and(|n| CLIENT_NODES.contains(&n) || SERVER_NODES.contains(&n));
                    let pending = pod
                        .status
                        .as_ref()
                        .and_then(|s| s.phase.as_deref())
                        .unwrap_or("Pending")
                        == "Pending";
                    if pod.metadata.deletion_timestamp.is_none() {
                        live.insert(uid.clone());
                    }
                    if !ours || !pending || !live.contains(&uid) || seen.contains(&uid) {
                        continue;
                    }
                    seen.insert(uid);
                    seen_names
                        .lock()
                        .unwrap()
                        .push(format!("{}/{name}", ctx.namespace));
                    let ctx = ctx.clone();
                    if server::is_member(&pod) {
                        tokio::spawn(async move { ctx.run_member(pod).await });
                    } else {
                        tokio::spawn(async move { ctx.run_pod(pod).await });
                    }
                }
                // Members whose pod is gone or being deleted stop.
                for (uid, handle) in ctx.shared.running.lock().unwrap().iter() {
                    if !live.contains(uid) {
                        handle.stop.notify_one();
                    }
                }
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    });
    Kubelet {
        task,
        started,
        members,
        shared,
        namespace: namespace.to_owned(),
    }
}

#[derive(Clone)]
struct RunContext {
    client: kube::Client,
    namespace: String,
    kubeconfig: PathBuf,
    binary: PathBuf,
    secantus: Option<PathBuf>,
    shared: Arc<Shared>,
    members: Arc<Mutex<Vec<Member>>>,
}

impl RunContext {
    /// A fresh scratch directory for pod `name` (its process's working directory).
    fn scratch(&self, name: &str) -> PathBuf {
        let scratch =
            std::env::temp_dir().join(format!("mongobench-kubelet-{}-{name}", self.namespace));
        let _ = std::fs::remove_dir_all(&scratch);
        std::fs::create_dir_all(&scratch).unwrap();
        scratch
    }

    async fn run_pod(self, pod: Pod) {
        let name = pod.metadata.name.clone().unwrap_or_default();
        let spec = pod.spec.clone().unwrap_or_default();
        let container = spec.containers.first().cloned().unwrap_or_default();
        let scratch = self.scratch(&name);

        let prepared = self.prepare(&pod, &container, &scratch).await;
        let (args, env) = match prepared {
            Ok(p) => p,
            Err(message) => {
                self.finish(
                    &name,
                    &container,
                    128,
                    "CreateContainerConfigError",
                    &message,
                )
                .await;
                return;
            }
        };
        self.status(&name, json!({"status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True"}, {"type": "ContainersReady", "status": "True"}],
            "containerStatuses": [{"name": container.name, "image": container.image, "imageID": "", "ready": true,
                "started": true, "restartCount": 0, "state": {"running": {"startedAt": now()}}}]
        }}))
        .await;

        // Written as the process goes, so a pod still running can be looked into.
        let (stdout, stderr) = (scratch.join("stdout.log"), scratch.join("stderr.log"));
        let status = tokio::process::Command::new(&self.binary)
            .args(&args)
            .env_clear()
            .envs(env)
            .env("KUBECONFIG", scratch.join("kubeconfig"))
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("RUST_LOG", "info")
            .current_dir(&scratch)
            .stdout(std::fs::File::create(&stdout).unwrap())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .status()
            .await;
        let (code, message) = match status {
            Ok(status) => {
                let text = std::fs::read_to_string(&stderr).unwrap_or_default();
                let tail: String = text.lines().rev().take(5).collect::<Vec<_>>().join(" | ");
                (status.code().unwrap_or(137), tail)
            }
            Err(e) => (127, format!("starting {}: {e}", self.binary.display())),
        };
        let reason = if code == 0 { "Completed" } else { "Error" };
        self.finish(&name, &container, code, reason, &message).await;
    }

    /// The process's arguments and environment, with ConfigMap volumes materialised under
    /// `scratch` (paths in the arguments are rewritten to them) and a kubeconfig holding the
    /// pod's ServiceAccount token. The names of the members this harness runs are written as
    /// their addresses in all three ([`names`]).
    async fn prepare(
        &self,
        pod: &Pod,
        container: &Container,
        scratch: &Path,
    ) -> Result<(Vec<String>, BTreeMap<String, String>), String> {
        let spec = pod.spec.clone().unwrap_or_default();
        let names = self.shared.names.lock().unwrap().clone();
        let mut args: Vec<String> = container
            .command
            .clone()
            .unwrap_or_default()
            .into_iter()
            .skip(1)
            .collect();
        args.extend(container.args.clone().unwrap_or_default());
        let configmaps: Api<ConfigMap> = Api::namespaced(self.client.clone(), &self.namespace);
        let secrets: Api<Secret> = Api::namespaced(self.client.clone(), &self.namespace);

        // Every ConfigMap and Secret volume in a directory of the scratch directory at its
        // mount path; the mount paths in the files, environment and arguments are those
        // directories.
        let mut mounts: Vec<(String, BTreeMap<String, Vec<u8>>)> = Vec::new();
        for mount in container.volume_mounts.clone().unwrap_or_default() {
            let Some(volume) = spec.volumes.iter().flatten().find(|v| v.name == mount.name) else {
                continue;
            };
            let files = if let Some(cm) = &volume.config_map {
                let data = configmaps
                    .get(&cm.name)
                    .await
                    .map_err(|e| format!("configmap {}: {e}", cm.name))?;
                data.data
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(k, v)| (k, names.rewrite(&v).into_bytes()))
                    .collect()
            } else if let Some(source) = &volume.secret {
                let name = source.secret_name.clone().unwrap_or_default();
                let secret = secrets
                    .get(&name)
                    .await
                    .map_err(|e| format!("secret {name}: {e}"))?;
                let mut data: BTreeMap<String, Vec<u8>> = secret
                    .data
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(k, v)| (k, v.0))
                    .collect();
                match &source.items {
                    Some(items) => items
                        .iter()
                        .map(|i| {
                            let bytes = data.remove(&i.key).ok_or(format!(
                                "secret {name} has no key {} (volume {})",
                                i.key, volume.name
                            ))?;
                            Ok((i.path.clone(), bytes))
                        })
                        .collect::<Result<_, String>>()?,
                    None => data,
                }
            } else {
                continue;
            };
            mounts.push((mount.mount_path.clone(), files));
        }
        let local: Vec<(String, String)> = mounts
            .iter()
            .map(|(path, _)| {
                let dir = scratch.join(path.trim_start_matches('/'));
                (path.clone(), dir.to_string_lossy().into_owned())
            })
            .collect();
        for ((_, files), (_, dir)) in mounts.iter().zip(&local) {
            std::fs::create_dir_all(dir).unwrap();
            for (key, bytes) in files {
                let bytes = match std::str::from_utf8(bytes) {
                    Ok(text) => local_paths(text, &local).into_bytes(),
                    Err(_) => bytes.clone(),
                };
                std::fs::write(Path::new(dir).join(key), bytes).unwrap();
            }
        }

        let mut env = BTreeMap::new();
        for e in container.env.clone().unwrap_or_default() {
            let value = match (e.value, e.value_from) {
                (Some(v), _) => expand(&v, &env),
                (None, Some(from)) => match (from.secret_key_ref, from.config_map_key_ref) {
                    (Some(s), _) => {
                        let secret = secrets
                            .get(&s.name)
                            .await
                            .map_err(|err| format!("secret {}: {err}", s.name))?;
                        let bytes = secret
                            .data
                            .unwrap_or_default()
                            .remove(&s.key)
                            .ok_or(format!("secret {} has no key {}", s.name, s.key))?;
                        String::from_utf8(bytes.0).map_err(|err| err.to_string())?
                    }
                    (None, Some(c)) => {
                        let cm = configmaps
                            .get(&c.name)
                            .await
                            .map_err(|err| format!("configmap {}: {err}", c.name))?;
                        cm.data
                            .unwrap_or_default()
                            .remove(&c.key)
                            .ok_or(format!("configmap {} has no key {}", c.name, c.key))?
                    }
                    _ => match from.field_ref {
                        Some(field) => field_value(pod, &field.field_path)
                            .ok_or(format!("env {}: no value at {}", e.name, field.field_path))?,
                        None => continue,
                    },
                },
                _ => String::new(),
            };
            env.insert(e.name, value);
        }
        // As a kubelet does, `$(VAR)` in the arguments is the container's variable.
        for a in &mut args {
            *a = expand(a, &env);
        }
        for value in env.values_mut().chain(args.iter_mut()) {
            *value = local_paths(&names.rewrite(value), &local);
        }

        let account = spec
            .service_account_name
            .clone()
            .unwrap_or_else(|| "default".into());
        let token = Api::<ServiceAccount>::namespaced(self.client.clone(), &self.namespace)
            .create_token_request(&account, &PostParams::default(), &TokenRequest::default())
            .await
            .map_err(|e| format!("token for serviceaccount {account}: {e}"))?
            .status
            .and_then(|s| s.token)
            .unwrap_or_default();
        let admin =
            kube::config::Kubeconfig::read_from(&self.kubeconfig).map_err(|e| e.to_string())?;
        let cluster = admin
            .clusters
            .iter()
            .find_map(|c| c.cluster.as_ref())
            .ok_or("no cluster in the testenv kubeconfig")?;
        let server = cluster
            .server
            .clone()
            .ok_or("no server in the testenv kubeconfig")?;
        // The pod trusts the API server as the testenv's kubeconfig does: its CA once the
        // API server has written it.
        let tls = match (
            &cluster.certificate_authority,
            &cluster.certificate_authority_data,
        ) {
            (Some(path), _) => format!("certificate-authority: \"{path}\""),
            (None, Some(data)) => format!("certificate-authority-data: \"{data}\""),
            (None, None) => "insecure-skip-tls-verify: true".to_owned(),
        };
        let kubeconfig = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {{server: \"{server}\", {tls}}}\nusers:\n- name: sa\n  user: {{token: \"{token}\"}}\ncontexts:\n- name: c\n  context: {{cluster: c, user: sa, namespace: {ns}}}\ncurrent-context: c\n",
            ns = self.namespace
        );
        std::fs::write(scratch.join("kubeconfig"), kubeconfig).unwrap();
        Ok((args, env))
    }

    async fn finish(
        &self,
        name: &str,
        container: &Container,
        code: i32,
        reason: &str,
        message: &str,
    ) {
        let phase = if code == 0 { "Succeeded" } else { "Failed" };
        self.status(name, json!({"status": {
            "phase": phase,
            "conditions": [{"type": "Ready", "status": "False"}, {"type": "ContainersReady", "status": "False"}],
            "containerStatuses": [{"name": container.name, "image": container.image, "imageID": "", "ready": false,
                "started": false, "restartCount": 0,
                "state": {"terminated": {"exitCode": code, "reason": reason, "message": message,
                    "startedAt": now(), "finishedAt": now()}}}]
        }}))
        .await;
    }

    /// Writes a pod's status; like a kubelet, keeps trying (for up to 3 minutes) while the API
    /// server cannot be reached, so a pod's end is never lost to a restart of it.
    async fn status(&self, name: &str, patch: serde_json::Value) {
        let pods: Api<Pod> = Api::namespaced(self.client.clone(), &self.namespace);
        let started = std::time::Instant::now();
        loop {
            match pods
                .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
            {
                Ok(_) => return,
                Err(kube::Error::Api(s)) if s.code < 500 => {
                    eprintln!("kubelet harness: status of pod {name}: {s}");
                    return;
                }
                Err(e) if started.elapsed() > Duration::from_secs(180) => {
                    eprintln!("kubelet harness: status of pod {name}: {e}; gave up");
                    return;
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(500)).await,
            }
        }
    }
}

/// `text` with every mount path of `mounts` (mount path, local directory) written as its local
/// directory, where the path stands whole: not preceded by a path character, not followed by
/// one other than `/` (so `/etc/a` is not found in `/etc/a-b` or `/x/etc/a`).
pub fn local_paths(text: &str, mounts: &[(String, String)]) -> String {
    let path_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/');
    let mut out = text.to_owned();
    for (path, dir) in mounts {
        let mut replaced = String::with_capacity(out.len());
        let mut rest = out.as_str();
        while let Some(at) = rest.find(path.as_str()) {
            let before = rest[..at].chars().next_back();
            let after = rest[at + path.len()..].chars().next();
            replaced.push_str(&rest[..at]);
            let whole =
                !before.is_some_and(path_char) && !after.is_some_and(|c| c != '/' && path_char(c));
            replaced.push_str(if whole { dir } else { path });
            rest = &rest[at + path.len()..];
        }
        replaced.push_str(rest);
        out = replaced;
    }
    out
}

/// The value of a pod's field as the downward API gives it: `metadata.name`,
/// `metadata.namespace`, `metadata.uid`, `metadata.labels['KEY']`, `metadata.annotations['KEY']`,
/// `status.podIP`.
pub fn field_value(pod: &Pod, path: &str) -> Option<String> {
    let meta = &pod.metadata;
    let keyed = |prefix: &str, map: &Option<BTreeMap<String, String>>| {
        let key = path.strip_prefix(prefix)?.strip_suffix("']")?;
        map.as_ref()?.get(key).cloned()
    };
    match path {
        "metadata.name" => meta.name.clone(),
        "metadata.namespace" => meta.namespace.clone(),
        "metadata.uid" => meta.uid.clone(),
        "status.podIP" => pod.status.as_ref()?.pod_ip.clone(),
        _ => keyed("metadata.labels['", &meta.labels)
            .or_else(|| keyed("metadata.annotations['", &meta.annotations)),
    }
}

/// `value` with each `$(NAME)` of a variable defined before it replaced by its value, `$$`
/// by `$`, and anything else left as written: what the kubelet does to a container's
/// environment values ("dependent environment variables").
pub fn expand(value: &str, env: &BTreeMap<String, String>) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        if let Some(after) = tail.strip_prefix("$$") {
            out.push('$');
            rest = after;
        } else if let Some(name) = tail
            .strip_prefix("$(")
            .and_then(|t| t.split_once(')'))
            .and_then(|(name, _)| env.get(name).map(|v| (name, v)))
        {
            out.push_str(name.1);
            rest = &tail[name.0.len() + 3..];
        } else {
            out.push('$');
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    out
}

fn now() -> String {
    k8s_openapi::jiff::Timestamp::now()
        .round(k8s_openapi::jiff::Unit::Second)
        .unwrap()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_refs_resolve_like_the_downward_api() {
        let pod: Pod = serde_json::from_value(json!({"metadata": {
            "name": "r-0-abc", "namespace": "ns",
            "labels": {"batch.kubernetes.io/controller-uid": "u-1"},
            "annotations": {"batch.kubernetes.io/job-completion-index": "2"}
        }}))
        .unwrap();
        assert_eq!(
            field_value(&pod, "metadata.name").as_deref(),
            Some("r-0-abc")
        );
        assert_eq!(
            field_value(
                &pod,
                "metadata.labels['batch.kubernetes.io/controller-uid']"
            )
            .as_deref(),
            Some("u-1")
        );
        assert_eq!(
            field_value(
                &pod,
                "metadata.annotations['batch.kubernetes.io/job-completion-index']"
            )
            .as_deref(),
            Some("2")
        );
        assert_eq!(field_value(&pod, "metadata.labels['missing']"), None);
    }

    #[test]
    fn mount_paths_become_the_local_directories_where_they_stand_whole() {
        let mounts = [
            ("/etc/mongobench".to_owned(), "/s/etc/mongobench".to_owned()),
            (
                "/etc/mongobench-tls/1".to_owned(),
                "/s/etc/mongobench-tls/1".to_owned(),
            ),
        ];
        assert_eq!(
            local_paths(
                "plan: /etc/mongobench/plan.yaml\ncaFile: /etc/mongobench-tls/1/ca.crt\nx: /opt/etc/mongobench",
                &mounts
            ),
            "plan: /s/etc/mongobench/plan.yaml\ncaFile: /s/etc/mongobench-tls/1/ca.crt\nx: /opt/etc/mongobench"
        );
        assert_eq!(
            local_paths("--plan=/etc/mongobench", &mounts),
            "--plan=/s/etc/mongobench"
        );
    }

    #[test]
    fn dependent_variables_expand_like_the_kubelet() {
        let env = BTreeMap::from([
            ("USER".to_owned(), "mongobench".to_owned()),
            ("PASS".to_owned(), "s3cret".to_owned()),
        ]);
        assert_eq!(
            expand("mongodb://$(USER):$(PASS)@h/?a=1", &env),
            "mongodb://mongobench:s3cret@h/?a=1"
        );
        // Unknown names and unclosed references stay as written; $$ escapes.
        assert_eq!(
            expand("$(NOPE) $$(USER) $(USER", &env),
            "$(NOPE) $(USER) $(USER"
        );
        assert_eq!(expand("cost: 5$", &env), "cost: 5$");
    }
}
