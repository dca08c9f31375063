//! The runner of one target on a platform, or of every target of a platform interleaved: its
//! plan in a ConfigMap, and a Job running `mongobench run --plan /etc/mongobench/plan.yaml` on
//! the client pool with the i-th target's URI in [`target_uri_env`]`(i)`
//! (`MONGOBENCH_TARGET_URI`, `MONGOBENCH_TARGET_URI_1`, ...). The runners of a benchmark share
//! a ServiceAccount whose Role allows only what a runner does: create, read and patch its
//! result ConfigMaps (`access.rs`). How big the pod and how long the Job may be is estimated in
//! `sizing.rs`. Pure builders.

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::{
    Affinity, ConfigMap, ConfigMapVolumeSource, Container, EnvVar, EnvVarSource, KeyToPath,
    ObjectFieldSelector, PodAffinityTerm, PodAntiAffinity, PodSpec, PodTemplateSpec,
    SecretVolumeSource, Toleration, Volume, VolumeMount, WeightedPodAffinityTerm,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kube::ResourceExt;

use super::meta::{child_meta as meta, non_empty};
use super::names::{self, PLAN_DIR, PLAN_KEY, Part};
use super::pod::{RunAs, pod_security, read_only_container_security, secret_env};
use super::secrets;
use super::servers;
use crate::api::{MongoBenchmark, Platform, Target};
use crate::contract::{JobPlan, JobTarget, RunDefinition, ServerFacts, TlsFiles};
use crate::operator::Error;
use crate::operator::error::SpecError;

mod access;
mod sizing;

pub use access::{RunnerAccess, runner_access};
pub use sizing::{
    FLIGHTS_CPU_US_PER_OP, MAX_RUNNER_CORES, RUNNER_MEMORY, WORKER_OPS_PER_SECOND,
    YCSB_CPU_US_PER_OP, YCSB_SCAN_CPU_US_PER_OP, active_deadline_seconds, runner_resources,
};

/// Retries of a failed runner pod before its Job counts as failed.
pub const BACKOFF_LIMIT: i32 = 1;
/// Environment variable with the connection string of a runner's first target; the i-th
/// target's is this with `_<i>` appended after the first.
pub const TARGET_URI_ENV: &str = "MONGOBENCH_TARGET_URI";

/// User and group of the mongobench image (as in the operator's Deployment).
pub const RUNNER_USER: i64 = 65532;

/// The environment variable of a runner's `index`-th target.
pub fn target_uri_env(index: usize) -> String {
    if index == 0 {
        TARGET_URI_ENV.to_owned()
    } else {
        format!("{TARGET_URI_ENV}_{index}")
    }
}

/// The plan ConfigMap and the Job of one runner.
#[derive(Debug, Clone, PartialEq)]
pub struct RunnerObjects {
    /// Holds `plan.yaml`.
    pub plan: ConfigMap,
    /// Runs the plan.
    pub job: Job,
}

/// The run identifier of `bench`: the one in status, else derived from its uid (stable, so a
/// first pass that fails before writing status still picks the same one).
pub fn run_id(bench: &MongoBenchmark) -> String {
    if let Some(id) = bench.status.as_ref().and_then(|s| s.run_id.clone()) {
        return id;
    }
    let uid = bench.metadata.uid.as_deref().unwrap_or("local");
    uid.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .take(12)
        .collect()
}

/// The plan of the runner of `targets` (in spec order) on `platform`, skipping
/// `completed_cells`: the i-th target's URI is in [`target_uri_env`]`(i)`.
pub fn job_plan(
    bench: &MongoBenchmark,
    targets: &[&Target],
    platform: &Platform,
    completed_cells: Vec<String>,
    facts: &BTreeMap<String, ServerFacts>,
) -> Result<JobPlan, Error> {
    let run = RunDefinition::of(&bench.spec).map_err(SpecError::from)?;
    let bench_name = bench.name_any();
    let namespace = bench.namespace().unwrap_or_default();
    let targets: Vec<JobTarget> = targets
        .iter()
        .enumerate()
        .map(|(i, target)| {
            let cluster = (target.is_provisioned() && target.is_sharded()).then(|| {
                servers::sharded::cluster_layout(&bench_name, &namespace, target, platform)
            });
            let (initiate_members, server_canaries, replica_set_name) =
                if target.is_provisioned() && !target.is_sharded() {
                    let server = names::server_name(&bench_name, &target.name, &platform.name);
                    let ordinals = 0..bench.spec.replica_set().members();
                    let members = ordinals
                        .clone()
                        .map(|m| names::member_address(&server, &namespace, m))
                        .collect();
                    let canaries = ordinals
                        .map(|m| names::member_canary_address(&server, &namespace, m))
                        .collect();
                    (members, canaries, Some(server))
                } else {
                    (Vec::new(), Vec::new(), None)
                };
            JobTarget {
                name: target.name.clone(),
                uri_env: target_uri_env(i),
                sharded: target.topology_text(),
                initiate_members,
                server_canaries,
                replica_set_name,
                cluster,
                facts: facts.get(&target.name).cloned(),
                tls: tls_files(target, i),
            }
        })
        .collect();
    let target_names: Vec<&str> = targets
        .iter()
        .map(|t: &JobTarget| t.name.as_str())
        .collect();
    let board = (bench.spec.client_pods() > 1)
        .then(|| names::runner_board_name(&bench_name, &platform.name, &target_names));
    Ok(JobPlan {
        plan_version: crate::contract::PLAN_VERSION,
        benchmark: bench_name,
        namespace: Some(namespace),
        uid: bench.metadata.uid.clone(),
        run_id: run_id(bench),
        platform: platform.name.clone(),
        targets,
        completed_cells,
        board,
        run,
    })
}

/// Where the runner's `index`-th target's TLS Secret is mounted.
pub fn tls_dir(index: usize) -> String {
    format!("{TLS_DIR}/{index}")
}

/// Where the Job mounts the TLS Secrets of its targets, one directory per target index
/// (outside the plan's directory, so neither mount hides the other).
pub const TLS_DIR: &str = "/etc/mongobench-tls";
/// File name of a TLS Secret's CA bundle in its directory.
pub const CA_FILE: &str = "ca.crt";
/// File name of a TLS Secret's client certificate and key in its directory.
pub const CERTIFICATE_KEY_FILE: &str = "client.pem";

/// The files of `target`'s TLS Secret, as the Job mounts them for its `index`-th target.
fn tls_files(target: &Target, index: usize) -> Option<TlsFiles> {
    let tls = target.external.as_ref()?.tls_secret_ref.as_ref()?;
    let dir = tls_dir(index);
    Some(TlsFiles {
        ca_file: format!("{dir}/{CA_FILE}"),
        certificate_key_file: tls
            .client_certificate_key
            .as_ref()
            .map(|_| format!("{dir}/{CERTIFICATE_KEY_FILE}")),
    })
}

/// The volume and mount of `target`'s TLS Secret, for its `index`-th target.
fn tls_volume(target: &Target, index: usize) -> Option<(Volume, VolumeMount)> {
    let tls = target.external.as_ref()?.tls_secret_ref.as_ref()?;
    let item = |key: &str, path: &str| KeyToPath {
        key: key.to_owned(),
        path: path.to_owned(),
        ..KeyToPath::default()
    };
    let mut items = vec![item(tls.ca_key(), CA_FILE)];
    if let Some(key) = &tls.client_certificate_key {
        items.push(item(key, CERTIFICATE_KEY_FILE));
    }
    let name = format!("tls-{index}");
    let volume = Volume {
        name: name.clone(),
        secret: Some(SecretVolumeSource {
            secret_name: Some(tls.name.clone()),
            items: Some(items),
            ..SecretVolumeSource::default()
        }),
        ..Volume::default()
    };
    let mount = VolumeMount {
        name,
        mount_path: tls_dir(index),
        read_only: Some(true),
        ..VolumeMount::default()
    };
    Some((volume, mount))
}

/// The image runner pods (and the members' canary sidecars) run: `spec.client.image`, else
/// `default_image` (the operator's own).
pub fn runner_image<'a>(bench: &'a MongoBenchmark, default_image: &'a str) -> &'a str {
    bench
        .spec
        .client
        .as_ref()
        .and_then(|c| c.image.as_deref())
        .unwrap_or(default_image)
}

/// Builds the plan ConfigMap and the Job of the runner of `targets` (one, or every target of
/// the platform, interleaved) on `platform`.
///
/// # Errors
/// [`Error::Incomplete`] for a MongoBenchmark without namespace or uid; [`Error::Spec`] when
/// `spec.client.platform` names no platform or `targets` is empty.
pub fn runner_objects(
    bench: &MongoBenchmark,
    targets: &[&Target],
    platform: &Platform,
    completed_cells: Vec<String>,
    facts: &BTreeMap<String, ServerFacts>,
    default_image: &str,
) -> Result<RunnerObjects, Error> {
    let bench_name = bench.name_any();
    if bench.namespace().is_none() {
        return Err(Error::Incomplete(bench_name));
    }
    if targets.is_empty() {
        return Err(SpecError::RunnerWithoutTargets(platform.name.clone()).into());
    }
    let plan = job_plan(bench, targets, platform, completed_cells, facts)?;
    let target_names: Vec<&str> = targets.iter().map(|t| t.name.as_str()).collect();
    let mut labels = names::runner_labels(&bench_name, &platform.name, &target_names);
    labels.insert(names::RUN_ID_LABEL.into(), names::label_value(&plan.run_id));
    let job_name = names::runner_job_name(&bench_name, &platform.name, &target_names);
    let plan_name = names::runner_plan_name(&bench_name, &platform.name, &target_names);
    let plan_yaml = plan.to_yaml();
    let config_map = ConfigMap {
        metadata: meta(bench, &plan_name, &labels)?,
        data: Some(BTreeMap::from([(PLAN_KEY.to_owned(), plan_yaml)])),
        ..ConfigMap::default()
    };

    let (tls_volumes, tls_mounts): (Vec<Volume>, Vec<VolumeMount>) = targets
        .iter()
        .enumerate()
        .filter_map(|(i, t)| tls_volume(t, i))
        .unzip();
    let image = runner_image(bench, default_image);
    let container = runner_container(bench, targets, platform, &plan, image, tls_mounts);
    let pod_spec = runner_pod(bench, container, &plan_name, tls_volumes, &job_name)?;
    let deadline = active_deadline_seconds(bench, targets, platform)?;
    let job = Job {
        metadata: meta(bench, &job_name, &labels)?,
        spec: Some(job_spec(bench, deadline, &labels, pod_spec)),
        ..Job::default()
    };
    Ok(RunnerObjects {
        plan: config_map,
        job,
    })
}

/// Where the client pods run: on `spec.client.platform`'s nodes, else by the client's own
/// node selector and tolerations.
fn client_pinning(
    bench: &MongoBenchmark,
) -> Result<(BTreeMap<String, String>, Vec<Toleration>), Error> {
    let client = bench.spec.client.clone().unwrap_or_default();
    Ok(match &client.platform {
        Some(name) => {
            let p = bench
                .spec
                .platform(name)
                .ok_or_else(|| SpecError::Unknown {
                    field: "spec.client.platform",
                    name: name.clone(),
                    among: "spec.platforms",
                })?;
            (p.effective_node_selector(), p.effective_tolerations())
        }
        None => (client.node_selector, client.tolerations),
    })
}

/// The runner container: `mongobench run` on the plan, with its targets' URIs and the TLS
/// files of `tls_mounts`.
fn runner_container(
    bench: &MongoBenchmark,
    targets: &[&Target],
    platform: &Platform,
    plan: &JobPlan,
    image: &str,
    tls_mounts: Vec<VolumeMount>,
) -> Container {
    Container {
        name: "runner".to_owned(),
        image: Some(image.to_owned()),
        command: Some(vec!["mongobench".to_owned()]),
        args: Some(vec![
            "run".to_owned(),
            "--plan".to_owned(),
            format!("{PLAN_DIR}/{PLAN_KEY}"),
        ]),
        env: Some(runner_env(bench, targets, platform, plan)),
        volume_mounts: Some(
            std::iter::once(VolumeMount {
                name: "plan".to_owned(),
                mount_path: PLAN_DIR.to_owned(),
                read_only: Some(true),
                ..VolumeMount::default()
            })
            .chain(tls_mounts)
            .collect(),
        ),
        resources: Some(runner_resources(&bench.spec)),
        termination_message_policy: Some("FallbackToLogsOnError".to_owned()),
        security_context: Some(read_only_container_security()),
        ..Container::default()
    }
}

/// The runner pod: `container` with the plan ConfigMap `plan_name` and the TLS Secrets as
/// volumes, on the client's nodes, its pods spread when there are several.
///
/// # Errors
/// [`Error::Spec`] when `spec.client.platform` names no platform.
fn runner_pod(
    bench: &MongoBenchmark,
    container: Container,
    plan_name: &str,
    tls_volumes: Vec<Volume>,
    job_name: &str,
) -> Result<PodSpec, Error> {
    let (node_selector, tolerations) = client_pinning(bench)?;
    Ok(PodSpec {
        service_account_name: Some(names::runner_account(&bench.name_any())),
        restart_policy: Some("Never".to_owned()),
        containers: vec![container],
        volumes: Some(
            std::iter::once(Volume {
                name: "plan".to_owned(),
                config_map: Some(ConfigMapVolumeSource {
                    name: plan_name.to_owned(),
                    ..ConfigMapVolumeSource::default()
                }),
                ..Volume::default()
            })
            .chain(tls_volumes)
            .collect(),
        ),
        node_selector: non_empty(node_selector),
        tolerations: non_empty(tolerations),
        affinity: (bench.spec.client_pods() > 1).then(|| spread(job_name)),
        security_context: Some(pod_security(
            RunAs {
                user: RUNNER_USER,
                group: RUNNER_USER,
                fs_group: RUNNER_USER,
            },
            false,
        )),
        ..PodSpec::default()
    })
}

/// The Job around `pod_spec`: one retry, `deadline` seconds at most, and with several client
/// pods, one indexed completion each.
fn job_spec(
    bench: &MongoBenchmark,
    deadline: u64,
    labels: &BTreeMap<String, String>,
    pod_spec: PodSpec,
) -> JobSpec {
    let pods = bench.spec.client_pods();
    JobSpec {
        backoff_limit: Some(BACKOFF_LIMIT),
        completions: (pods > 1).then_some(pods as i32),
        parallelism: (pods > 1).then_some(pods as i32),
        completion_mode: (pods > 1).then(|| "Indexed".to_owned()),
        active_deadline_seconds: Some(i64::try_from(deadline).unwrap_or(i64::MAX)),
        template: PodTemplateSpec {
            metadata: Some(ObjectMeta {
                labels: Some(labels.clone()),
                ..ObjectMeta::default()
            }),
            spec: Some(pod_spec),
        },
        ..JobSpec::default()
    }
}

/// The runner container's environment: each target's URI (from its Secret, or the
/// provisioned servers' with the admin Secret's credentials), and the Job's uid and name.
fn runner_env(
    bench: &MongoBenchmark,
    targets: &[&Target],
    platform: &Platform,
    plan: &JobPlan,
) -> Vec<EnvVar> {
    let bench_name = bench.name_any();
    let namespace = bench.namespace().unwrap_or_default();
    let mut env: Vec<EnvVar> = Vec::new();
    for (target, planned) in targets.iter().zip(&plan.targets) {
        let uri_env = &planned.uri_env;
        match &target.external {
            Some(external) => env.push(secret_env(
                uri_env,
                &external.uri_secret_ref.name,
                external.uri_secret_ref.key(),
            )),
            None => {
                let plain = if target.is_sharded() {
                    let mongos =
                        names::part_name(&bench_name, &target.name, &platform.name, Part::Mongos);
                    names::mongos_uri(&mongos, &namespace)
                } else {
                    let server = names::server_name(&bench_name, &target.name, &platform.name);
                    names::replica_set_uri(&server, &namespace, bench.spec.replica_set().members())
                };
                let uri = if bench.spec.replica_set().auth() {
                    // The credentials come from the admin Secret; the URI names them with
                    // the kubelet's $(VAR) expansion, so no spec or plan holds them.
                    let admin = secrets::admin_name(bench);
                    let (user, password) =
                        (format!("{uri_env}_USERNAME"), format!("{uri_env}_PASSWORD"));
                    env.push(secret_env(&user, &admin, secrets::USERNAME_KEY));
                    env.push(secret_env(&password, &admin, secrets::PASSWORD_KEY));
                    names::with_credentials(&plain, &user, &password)
                } else {
                    plain
                };
                env.push(EnvVar {
                    name: uri_env.clone(),
                    value: Some(uri),
                    ..EnvVar::default()
                });
            }
        }
    }
    // The Job's uid and name: the runner's results are controlled by its Job, which is how
    // the operator knows them for its own (sink.rs); the pods' board keys carry the uid too
    // (crew.rs).
    let label_env = |name: &str, label: &str| EnvVar {
        name: name.to_owned(),
        value_from: Some(EnvVarSource {
            field_ref: Some(ObjectFieldSelector {
                field_path: format!("metadata.labels['{label}']"),
                ..ObjectFieldSelector::default()
            }),
            ..EnvVarSource::default()
        }),
        ..EnvVar::default()
    };
    env.push(label_env(
        crate::contract::names::JOB_UID_ENV,
        JOB_UID_LABEL,
    ));
    env.push(label_env(
        crate::contract::names::JOB_NAME_ENV,
        JOB_NAME_LABEL,
    ));
    env
}

/// Label the Job controller puts on its pods with the Job's uid.
pub const JOB_UID_LABEL: &str = "batch.kubernetes.io/controller-uid";
/// Label the Job controller puts on its pods with the Job's name.
pub const JOB_NAME_LABEL: &str = "batch.kubernetes.io/job-name";

/// Client pods of one runner on different nodes where the nodes allow: two on one node share
/// its cores and network, which is what splitting the client avoids.
fn spread(job_name: &str) -> Affinity {
    Affinity {
        pod_anti_affinity: Some(PodAntiAffinity {
            preferred_during_scheduling_ignored_during_execution: Some(vec![
                WeightedPodAffinityTerm {
                    weight: 100,
                    pod_affinity_term: PodAffinityTerm {
                        topology_key: "kubernetes.io/hostname".to_owned(),
                        label_selector: Some(LabelSelector {
                            match_labels: Some(BTreeMap::from([(
                                JOB_NAME_LABEL.to_owned(),
                                job_name.to_owned(),
                            )])),
                            ..LabelSelector::default()
                        }),
                        ..PodAffinityTerm::default()
                    },
                },
            ]),
            ..PodAntiAffinity::default()
        }),
        ..Affinity::default()
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_names;
#[cfg(test)]
mod tests_simultaneous;
#[cfg(test)]
mod tests_tls;
