//! The runner of one target on a platform, or of every target of a platform interleaved: its
//! plan in a ConfigMap, and a Job running `mongobench run --plan /etc/mongobench/plan.yaml` on
//! the client pool with the i-th target's URI in [`target_uri_env`]`(i)`
//! (`MONGOBENCH_TARGET_URI`, `MONGOBENCH_TARGET_URI_1`, ...). The runners of a benchmark share
//! a ServiceAccount whose Role allows only what a runner does: create, read and patch its
//! result ConfigMaps. Pure builders.

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::{
    Affinity, ConfigMap, ConfigMapVolumeSource, Container, EnvVar, EnvVarSource,
    ObjectFieldSelector, PodAffinityTerm, PodAntiAffinity, PodSpec, PodTemplateSpec,
    ResourceRequirements, ServiceAccount, Volume, VolumeMount, WeightedPodAffinityTerm,
};
use k8s_openapi::api::rbac::v1::{PolicyRule, Role, RoleBinding, RoleRef, Subject};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kube::ResourceExt;

use super::names::{self, Component, PLAN_DIR, PLAN_KEY};
use super::secrets;
use super::servers::{
    RunAs, child_meta as meta, container_security, non_empty, pod_security, secret_env,
};
use crate::api::{MongoBenchmark, Platform, RunLength, Target};
use crate::operator::Error;
use crate::plan::{JobPlan, JobTarget, ServerFacts};
use crate::runner::cell::WorkloadPlan;
use crate::runner::{activity, sink};

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

/// The ServiceAccount, Role and RoleBinding the runners of a benchmark use.
#[derive(Debug, Clone, PartialEq)]
pub struct RunnerAccess {
    /// The runners' identity.
    pub service_account: ServiceAccount,
    /// configmaps: create, get, patch, in the benchmark's namespace only.
    pub role: Role,
    /// Binds the Role to the ServiceAccount.
    pub role_binding: RoleBinding,
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
) -> JobPlan {
    let bench_name = bench.name_any();
    let namespace = bench.namespace().unwrap_or_default();
    let targets: Vec<JobTarget> = targets
        .iter()
        .enumerate()
        .map(|(i, target)| {
            let (initiate_members, replica_set_name) = if target.is_provisioned() {
                let server = names::server_name(&bench_name, &target.name, &platform.name);
                let members = (0..bench.spec.replica_set().members())
                    .map(|m| names::member_address(&server, &namespace, m))
                    .collect();
                (members, Some(server))
            } else {
                (Vec::new(), None)
            };
            JobTarget {
                name: target.name.clone(),
                uri_env: target_uri_env(i),
                initiate_members,
                replica_set_name,
                facts: facts.get(&target.name).cloned(),
            }
        })
        .collect();
    let target_names: Vec<&str> = targets
        .iter()
        .map(|t: &JobTarget| t.name.as_str())
        .collect();
    let board = (bench.spec.client_pods() > 1)
        .then(|| names::runner_board_name(&bench_name, &platform.name, &target_names));
    JobPlan {
        benchmark: bench_name,
        namespace: Some(namespace),
        uid: bench.metadata.uid.clone(),
        run_id: run_id(bench),
        platform: platform.name.clone(),
        targets,
        completed_cells,
        board,
        spec: bench.spec.clone(),
    }
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
    let namespace = bench
        .namespace()
        .ok_or_else(|| Error::Incomplete(bench_name.clone()))?;
    if targets.is_empty() {
        return Err(Error::Spec(format!(
            "a runner on platform {} without targets",
            platform.name
        )));
    }
    let plan = job_plan(bench, targets, platform, completed_cells, facts);
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

    let client = bench.spec.client.clone().unwrap_or_default();
    let (node_selector, tolerations) = match &client.platform {
        Some(name) => {
            let p = bench.spec.platform(name).ok_or_else(|| {
                Error::Spec(format!(
                    "spec.client.platform {name:?} is not one of spec.platforms"
                ))
            })?;
            (p.effective_node_selector(), p.effective_tolerations())
        }
        None => (client.node_selector.clone(), client.tolerations.clone()),
    };
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
                let server = names::server_name(&bench_name, &target.name, &platform.name);
                let members = bench.spec.replica_set().members();
                let uri = if bench.spec.replica_set().auth() {
                    // The credentials come from the admin Secret; the URI names them with
                    // the kubelet's $(VAR) expansion, so no spec or plan holds them.
                    let admin = names::admin_secret(&bench_name);
                    let (user, password) =
                        (format!("{uri_env}_USERNAME"), format!("{uri_env}_PASSWORD"));
                    env.push(secret_env(&user, &admin, secrets::USERNAME_KEY));
                    env.push(secret_env(&password, &admin, secrets::PASSWORD_KEY));
                    names::replica_set_uri_with_credentials(
                        &server, &namespace, members, &user, &password,
                    )
                } else {
                    names::replica_set_uri(&server, &namespace, members)
                };
                env.push(EnvVar {
                    name: uri_env.clone(),
                    value: Some(uri),
                    ..EnvVar::default()
                });
            }
        }
    }
    let pods = bench.spec.client_pods();
    if pods > 1 {
        // The pods' board keys carry the Job's uid (crew.rs).
        env.push(EnvVar {
            name: crate::runner::crew::JOB_UID_ENV.to_owned(),
            value_from: Some(EnvVarSource {
                field_ref: Some(ObjectFieldSelector {
                    field_path: format!("metadata.labels['{JOB_UID_LABEL}']"),
                    ..ObjectFieldSelector::default()
                }),
                ..EnvVarSource::default()
            }),
            ..EnvVar::default()
        });
    }
    let container = Container {
        name: "runner".to_owned(),
        image: Some(client.image.as_deref().unwrap_or(default_image).to_owned()),
        command: Some(vec!["mongobench".to_owned()]),
        args: Some(vec![
            "run".to_owned(),
            "--plan".to_owned(),
            format!("{PLAN_DIR}/{PLAN_KEY}"),
        ]),
        env: Some(env),
        volume_mounts: Some(vec![VolumeMount {
            name: "plan".to_owned(),
            mount_path: PLAN_DIR.to_owned(),
            read_only: Some(true),
            ..VolumeMount::default()
        }]),
        resources: Some(runner_resources(&bench.spec)),
        termination_message_policy: Some("FallbackToLogsOnError".to_owned()),
        security_context: Some(container_security()),
        ..Container::default()
    };
    let pod_spec = PodSpec {
        service_account_name: Some(names::runner_account(&bench_name)),
        restart_policy: Some("Never".to_owned()),
        containers: vec![container],
        volumes: Some(vec![Volume {
            name: "plan".to_owned(),
            config_map: Some(ConfigMapVolumeSource {
                name: plan_name.clone(),
                ..ConfigMapVolumeSource::default()
            }),
            ..Volume::default()
        }]),
        node_selector: non_empty(node_selector),
        tolerations: non_empty(tolerations),
        affinity: (pods > 1).then(|| spread(&job_name)),
        security_context: Some(pod_security(
            RunAs {
                user: RUNNER_USER,
                group: RUNNER_USER,
                fs_group: RUNNER_USER,
            },
            false,
        )),
        ..PodSpec::default()
    };
    let deadline = active_deadline_seconds(bench, targets, platform)?;
    let job = Job {
        metadata: meta(bench, &job_name, &labels)?,
        spec: Some(JobSpec {
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
        }),
        ..Job::default()
    };
    Ok(RunnerObjects {
        plan: config_map,
        job,
    })
}

/// Client CPU microseconds per operation a runner needs at most (BENCHMARKS.md measures about
/// 250 for flights, 65 for YCSB reads and updates and 330 for YCSB scans), with a margin.
pub const FLIGHTS_CPU_US_PER_OP: f64 = 333.0;
pub const YCSB_CPU_US_PER_OP: f64 = 100.0;
pub const YCSB_SCAN_CPU_US_PER_OP: f64 = 400.0;
/// Operations per second a closed-loop worker is assumed to complete: 2 ms per round trip, a
/// replica set answering from its cache.
pub const WORKER_OPS_PER_SECOND: f64 = 500.0;
/// Most cores a runner pod requests by the rule (a larger client takes more pods).
pub const MAX_RUNNER_CORES: f64 = 16.0;
/// Memory a runner pod requests unless the spec says: seeding holds a batch pipeline, not the
/// dataset.
pub const RUNNER_MEMORY: &str = "512Mi";

/// The runner pod's resources: `spec.client.resources`, completed where it names no CPU or no
/// memory by the rule: a CPU request of the cores the pod's share of the load needs at the
/// workload's client cost — `ceil(rate × CPU per operation)`, between 1 and
/// [`MAX_RUNNER_CORES`], where the rate is the pod's share of `targetOpsPerSecond`, or its
/// workers × [`WORKER_OPS_PER_SECOND`] in a closed loop — and [`RUNNER_MEMORY`]. No limit is
/// added: the client may use a node's idle cores, and `clientSaturated` compares its CPU
/// with the cores its cgroup allows.
pub fn runner_resources(spec: &crate::api::MongoBenchmarkSpec) -> ResourceRequirements {
    let given = spec
        .client
        .as_ref()
        .and_then(|c| c.resources.as_ref())
        .map(|r| r.to_resource_requirements())
        .unwrap_or_default();
    let names = |m: &Option<BTreeMap<String, Quantity>>, key: &str| {
        m.as_ref().is_some_and(|m| m.contains_key(key))
    };
    let mut requests = given.requests.clone().unwrap_or_default();
    if !names(&given.requests, "cpu") && !names(&given.limits, "cpu") {
        let pods = f64::from(spec.client_pods());
        let workers = (f64::from(spec.workload.workers()) / pods).ceil();
        let rate = match spec.workload.target_ops_per_second() {
            Some(total) => total as f64 / pods,
            None => workers * WORKER_OPS_PER_SECOND,
        };
        let cores = (rate * client_cpu_us_per_op(spec) / 1e6)
            .ceil()
            .clamp(1.0, MAX_RUNNER_CORES);
        requests.insert("cpu".to_owned(), Quantity(format!("{cores}")));
    }
    if !names(&given.requests, "memory") && !names(&given.limits, "memory") {
        requests.insert("memory".to_owned(), Quantity(RUNNER_MEMORY.to_owned()));
    }
    ResourceRequirements {
        requests: Some(requests),
        ..given
    }
}

/// The client CPU one operation of the spec's workload needs (YCSB: by its share of scans).
fn client_cpu_us_per_op(spec: &crate::api::MongoBenchmarkSpec) -> f64 {
    match crate::plan::workload_plan(spec) {
        Ok(WorkloadPlan::Ycsb { raw, .. }) => {
            let mut probe = raw;
            probe.set("recordcount", "1000");
            let scans = crate::workload::ycsb::Properties::from_raw(&probe)
                .map_or(0.0, |p| p.proportions.normalised()[3]);
            (1.0 - scans) * YCSB_CPU_US_PER_OP + scans * YCSB_SCAN_CPU_US_PER_OP
        }
        _ => FLIGHTS_CPU_US_PER_OP,
    }
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

/// Seconds the runner of `targets` on `platform` may run in all, retries included (the Job's
/// `activeDeadlineSeconds`), so that a hung runner ends and its cells fail instead of the
/// benchmark waiting for ever: twice an estimate that is generous on purpose, over every cell
/// it may run (up to `precision.maxRepetitions`). Per target,
/// [`INITIATE_SECONDS`] and seeding each size at [`SEED_FLOOR`] documents per second; per
/// cell, its warm-up and measured phase (an operation-bounded phase at [`OPS_FLOOR`]
/// operations per second) and [`CELL_OVERHEAD_SECONDS`] for restoring, settling and explaining.
pub fn active_deadline_seconds(
    bench: &MongoBenchmark,
    targets: &[&Target],
    platform: &Platform,
) -> Result<u64, Error> {
    let spec = &bench.spec;
    let plan = crate::plan::workload_plan(spec).map_err(|e| Error::Spec(e.to_string()))?;
    let settings = crate::plan::run_settings(spec).map_err(|e| Error::Spec(e.to_string()))?;
    let phase = |l: RunLength| match l {
        RunLength::Duration(d) => d.as_secs_f64(),
        RunLength::Operations(n) => n as f64 / OPS_FLOOR,
    };
    let per_cell = phase(settings.warmup) + phase(settings.measured) + CELL_OVERHEAD_SECONDS;
    let mut total = 0.0;
    for target in targets {
        total += INITIATE_SECONDS;
        let cells = crate::plan::possible_cells_of(spec, &target.name, &platform.name)
            .map_err(|e| Error::Spec(e.to_string()))?;
        let mut seeded = std::collections::BTreeSet::new();
        for cell in &cells {
            if seeded.insert(cell.size.clone()) {
                total += crate::plan::documents(&plan, cell.dataset) as f64 / SEED_FLOOR;
            }
            total += per_cell;
        }
    }
    Ok((2.0 * total).ceil() as u64)
}

/// Allowance for initiating a provisioned replica set (the runner waits up to 300 s).
pub const INITIATE_SECONDS: f64 = 300.0;
/// Documents per second seeding is assumed to reach at least.
pub const SEED_FLOOR: f64 = 200.0;
/// Operations per second an operation-bounded phase is assumed to reach at least.
pub const OPS_FLOOR: f64 = 20.0;
/// Allowance per cell for restoring the data, settling, server figures and explain.
pub const CELL_OVERHEAD_SECONDS: f64 = 300.0;

/// The names of every ConfigMap a runner of `bench` writes: a result per cell, an activity
/// per platform and, with several client pods, the board of every runner it may have (one
/// per platform interleaving its targets, or one per target).
fn runner_configmaps(bench: &MongoBenchmark) -> Result<Vec<String>, Error> {
    let bench_name = bench.name_any();
    // Every cell a runner may write, the slots a precision goal may add included.
    let cells = crate::plan::cells_with_added(&bench.spec, |_| true)
        .map_err(|e| Error::Spec(e.to_string()))?;
    let mut names: Vec<String> = cells
        .iter()
        .map(|c| sink::configmap_name(&bench_name, &c.id))
        .chain(
            bench
                .spec
                .platforms
                .iter()
                .map(|p| activity::configmap_name(&bench_name, &p.name)),
        )
        .collect();
    if bench.spec.client_pods() > 1 {
        let all: Vec<&str> = bench.spec.targets.iter().map(|t| t.name.as_str()).collect();
        for p in &bench.spec.platforms {
            names.push(names::runner_board_name(&bench_name, &p.name, &all));
            for t in &all {
                names.push(names::runner_board_name(&bench_name, &p.name, &[t]));
            }
        }
        names.dedup();
    }
    names.sort();
    names.dedup();
    Ok(names)
}

/// Builds the runners' ServiceAccount, Role and RoleBinding.
///
/// # Errors
/// [`Error::Incomplete`] for a MongoBenchmark without namespace or uid.
pub fn runner_access(bench: &MongoBenchmark) -> Result<RunnerAccess, Error> {
    let bench_name = bench.name_any();
    let name = names::runner_account(&bench_name);
    let labels = names::benchmark_labels(&bench_name, Component::Runner);
    let metadata = meta(bench, &name, &labels)?;
    let configmaps = |verbs: &[&str], resource_names: Option<Vec<String>>| PolicyRule {
        api_groups: Some(vec![String::new()]),
        resources: Some(vec!["configmaps".to_owned()]),
        verbs: verbs.iter().map(|v| (*v).to_owned()).collect(),
        resource_names,
        ..PolicyRule::default()
    };
    let role = Role {
        metadata: metadata.clone(),
        rules: Some(vec![
            // Kubernetes cannot limit create by name; creating is harmless, reading or changing
            // another's ConfigMap is what the names below prevent.
            configmaps(&["create"], None),
            configmaps(&["get", "patch"], Some(runner_configmaps(bench)?)),
        ]),
    };
    let role_binding = RoleBinding {
        metadata: metadata.clone(),
        role_ref: RoleRef {
            api_group: Some("rbac.authorization.k8s.io".to_owned()),
            kind: "Role".to_owned(),
            name: name.clone(),
        },
        subjects: Some(vec![Subject {
            kind: "ServiceAccount".to_owned(),
            name,
            namespace: bench.namespace(),
            ..Subject::default()
        }]),
    };
    Ok(RunnerAccess {
        service_account: ServiceAccount {
            metadata,
            ..ServiceAccount::default()
        },
        role,
        role_binding,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::build::servers::tests::{STUDY, bench};
    use serde_json::json;

    fn value<T: serde::Serialize>(t: &T) -> serde_json::Value {
        serde_json::to_value(t).unwrap()
    }

    #[test]
    fn provisioned_target_job_gets_the_replica_set_uri_and_the_client_pool() {
        let b = bench("study", STUDY);
        let facts = ServerFacts {
            image_digest: Some("sha256:0123abcd".into()),
            ..ServerFacts::default()
        };
        let objects = runner_objects(
            &b,
            &[&b.spec.targets[0]],
            &b.spec.platforms[0],
            vec!["psmdb-8.0.axion.1m.r1".into()],
            &BTreeMap::from([(b.spec.targets[0].name.clone(), facts.clone())]),
            "registry.example/mongobench:1.0",
        )
        .unwrap();
        let plan: JobPlan =
            serde_yaml::from_str(&objects.plan.data.as_ref().unwrap()[PLAN_KEY]).unwrap();
        assert_eq!(plan.targets[0].facts, Some(facts));
        let job = value(&objects.job);
        assert_eq!(job["metadata"]["name"], "study-run-psmdb-8-0-axion");
        assert_eq!(
            job["metadata"]["labels"]["mongobench.io/run-id"],
            "0f3c9a527d1e"
        );
        assert_eq!(job["metadata"]["ownerReferences"][0]["controller"], true);
        assert_eq!(job["spec"]["backoffLimit"], 1);
        // STUDY: flights with the default 10 min after a 1 min warm-up, 1M and 4M documents,
        // 2 repetitions, one target: 2 × (300 + (1M + 4M) / 200 + 4 × (60 + 600 + 300)).
        assert_eq!(
            job["spec"]["activeDeadlineSeconds"],
            2 * (300 + 5_000_000 / 200 + 4 * (60 + 600 + 300))
        );
        let pod = &job["spec"]["template"]["spec"];
        assert_eq!(pod["serviceAccountName"], "study-runner");
        assert_eq!(pod["restartPolicy"], "Never");
        // client.platform x86: its selector, no arm toleration.
        assert_eq!(
            pod["nodeSelector"],
            json!({"cloud.google.com/gke-nodepool": "n2-icelake"})
        );
        assert!(pod.get("tolerations").is_none());
        let c = &pod["containers"][0];
        assert_eq!(c["image"], "registry.example/mongobench:1.0");
        assert_eq!(c["command"], json!(["mongobench"]));
        assert_eq!(
            c["args"],
            json!(["run", "--plan", "/etc/mongobench/plan.yaml"])
        );
        // The credentials come from the admin Secret and enter the URI by $(VAR) expansion.
        let admin = |name: &str, key: &str| json!({"name": name, "valueFrom": {"secretKeyRef": {"name": "study-admin", "key": key}}});
        assert_eq!(
            c["env"],
            json!([
                admin("MONGOBENCH_TARGET_URI_USERNAME", "username"),
                admin("MONGOBENCH_TARGET_URI_PASSWORD", "password"),
                {"name": "MONGOBENCH_TARGET_URI", "value":
                "mongodb://$(MONGOBENCH_TARGET_URI_USERNAME):$(MONGOBENCH_TARGET_URI_PASSWORD)@\
                 study-psmdb-8-0-axion-0.study-psmdb-8-0-axion.lab.svc.cluster.local:27017,\
                 study-psmdb-8-0-axion-1.study-psmdb-8-0-axion.lab.svc.cluster.local:27017,\
                 study-psmdb-8-0-axion-2.study-psmdb-8-0-axion.lab.svc.cluster.local:27017/\
                 ?replicaSet=study-psmdb-8-0-axion&authSource=admin"}])
        );
        assert_eq!(
            pod["securityContext"],
            json!({"runAsNonRoot": true, "runAsUser": 65532, "runAsGroup": 65532,
                   "seccompProfile": {"type": "RuntimeDefault"}})
        );
        assert_eq!(
            c["securityContext"],
            json!({"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}})
        );
        assert_eq!(
            pod["volumes"],
            json!([{"name": "plan", "configMap": {"name": "study-run-psmdb-8-0-axion-plan"}}])
        );
        assert_eq!(
            c["volumeMounts"],
            json!([{"name": "plan", "mountPath": "/etc/mongobench", "readOnly": true}])
        );

        // The runner reads the plan the operator wrote: its version and spec pass.
        let plan: JobPlan =
            crate::cli::plan_file::parse_plan(&objects.plan.data.as_ref().unwrap()["plan.yaml"])
                .unwrap();
        assert_eq!(plan.benchmark, "study");
        assert_eq!(plan.namespace.as_deref(), Some("lab"));
        assert_eq!(
            plan.uid.as_deref(),
            Some("0f3c9a52-7d1e-4c55-9b0e-6a1d2f3e4b5c")
        );
        assert_eq!(plan.run_id, "0f3c9a527d1e");
        assert_eq!(plan.targets.len(), 1);
        let target = &plan.targets[0];
        assert_eq!(
            (
                target.name.as_str(),
                target.uri_env.as_str(),
                plan.platform.as_str()
            ),
            ("psmdb-8.0", "MONGOBENCH_TARGET_URI", "axion")
        );
        assert_eq!(
            target.initiate_members,
            [
                "study-psmdb-8-0-axion-0.study-psmdb-8-0-axion.lab.svc.cluster.local:27017",
                "study-psmdb-8-0-axion-1.study-psmdb-8-0-axion.lab.svc.cluster.local:27017",
                "study-psmdb-8-0-axion-2.study-psmdb-8-0-axion.lab.svc.cluster.local:27017"
            ]
        );
        assert_eq!(
            target.replica_set_name.as_deref(),
            Some("study-psmdb-8-0-axion")
        );
        assert_eq!(plan.completed_cells, ["psmdb-8.0.axion.1m.r1"]);
        assert_eq!(plan.spec, b.spec);
    }

    #[test]
    fn external_target_job_reads_the_uri_from_its_secret() {
        let yaml = STUDY.replace(
            "client: {platform: x86}",
            "client:\n  image: registry.example/client:2\n  nodeSelector: {pool: clients}\n  \
             tolerations: [{key: dedicated, operator: Exists, effect: NoSchedule}]\n  \
             resources: {requests: {cpu: '4'}, limits: {cpu: '4'}}",
        );
        let b = bench("study", &yaml);
        let objects = runner_objects(
            &b,
            &[&b.spec.targets[1]],
            &b.spec.platforms[1],
            vec![],
            &BTreeMap::new(),
            "default:1",
        )
        .unwrap();
        let pod = value(&objects.job)["spec"]["template"]["spec"].clone();
        assert_eq!(pod["nodeSelector"], json!({"pool": "clients"}));
        assert_eq!(
            pod["tolerations"],
            json!([{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}])
        );
        let c = &pod["containers"][0];
        assert_eq!(c["image"], "registry.example/client:2");
        assert_eq!(
            c["env"],
            json!([{"name": "MONGOBENCH_TARGET_URI",
                    "valueFrom": {"secretKeyRef": {"name": "ext-uri", "key": "uri"}}}])
        );
        assert_eq!(
            c["resources"],
            json!({"requests": {"cpu": "4", "memory": "512Mi"}, "limits": {"cpu": "4"}})
        );
        let plan: JobPlan =
            serde_yaml::from_str(&objects.plan.data.as_ref().unwrap()["plan.yaml"]).unwrap();
        assert!(plan.targets[0].initiate_members.is_empty());
        assert_eq!(plan.targets[0].replica_set_name, None);
        assert!(plan.completed_cells.is_empty());
    }

    #[test]
    fn a_platform_runner_lists_every_target_with_an_env_var_each() {
        let b = bench(
            "study",
            &STUDY.replace("  storageSize: 50Gi", "  storageSize: 50Gi\n  auth: false"),
        );
        let targets: Vec<&Target> = b.spec.targets.iter().collect();
        let objects = runner_objects(
            &b,
            &targets,
            &b.spec.platforms[1],
            vec![],
            &BTreeMap::new(),
            "img:1",
        )
        .unwrap();
        let job = value(&objects.job);
        assert_eq!(job["metadata"]["name"], "study-run-x86");
        let labels = &job["metadata"]["labels"];
        assert_eq!(labels["mongobench.io/platform"], "x86");
        assert!(labels.get("mongobench.io/target").is_none(), "{labels}");
        assert_eq!(job["spec"]["template"]["metadata"]["labels"], *labels);
        let pod = &job["spec"]["template"]["spec"];
        assert_eq!(
            pod["containers"][0]["env"],
            json!([
                {"name": "MONGOBENCH_TARGET_URI", "value":
                    "mongodb://study-psmdb-8-0-x86-0.study-psmdb-8-0-x86.lab.svc.cluster.local:27017,\
                     study-psmdb-8-0-x86-1.study-psmdb-8-0-x86.lab.svc.cluster.local:27017,\
                     study-psmdb-8-0-x86-2.study-psmdb-8-0-x86.lab.svc.cluster.local:27017/\
                     ?replicaSet=study-psmdb-8-0-x86"},
                {"name": "MONGOBENCH_TARGET_URI_1",
                 "valueFrom": {"secretKeyRef": {"name": "ext-uri", "key": "uri"}}}
            ])
        );
        assert_eq!(
            pod["volumes"],
            json!([{"name": "plan", "configMap": {"name": "study-run-x86-plan"}}])
        );
        assert_eq!(
            objects.plan.metadata.name.as_deref(),
            Some("study-run-x86-plan")
        );
        let plan: JobPlan =
            serde_yaml::from_str(&objects.plan.data.as_ref().unwrap()["plan.yaml"]).unwrap();
        let listed: Vec<(&str, &str)> = plan
            .targets
            .iter()
            .map(|t| (t.name.as_str(), t.uri_env.as_str()))
            .collect();
        assert_eq!(
            listed,
            [
                ("psmdb-8.0", "MONGOBENCH_TARGET_URI"),
                ("ext", "MONGOBENCH_TARGET_URI_1")
            ]
        );
        assert_eq!(plan.targets[0].initiate_members.len(), 3);
        assert!(plan.targets[1].initiate_members.is_empty());
        assert_eq!(plan.platform, "x86");
        assert!(
            runner_objects(
                &b,
                &[],
                &b.spec.platforms[1],
                vec![],
                &BTreeMap::new(),
                "img:1"
            )
            .is_err()
        );
    }

    #[test]
    fn under_a_precision_goal_the_runner_may_write_and_run_every_slot_up_to_the_limit() {
        let goal = format!("{STUDY}precision: {{mdePercent: 2, maxRepetitions: 7}}\n");
        let with_goal = bench("study", &goal);
        let role = value(&runner_access(&with_goal).unwrap().role);
        let names = role["rules"][1]["resourceNames"].as_array().unwrap();
        let has = |id: &str| names.contains(&json!(format!("study-{id}")));
        assert!(
            has("psmdb-8.0.axion.1m.r7") && !has("psmdb-8.0.axion.1m.r8"),
            "{names:?}"
        );
        let plain = bench("study", STUDY);
        let (p, t) = (&plain.spec.platforms[0], &plain.spec.targets[0]);
        let short = active_deadline_seconds(&plain, &[t], p).unwrap();
        let long = active_deadline_seconds(&with_goal, &[&with_goal.spec.targets[0]], p).unwrap();
        assert!(long > short, "{long} vs {short}");
    }

    #[test]
    fn runner_role_allows_only_its_configmaps() {
        let b = bench("study", STUDY);
        let access = runner_access(&b).unwrap();
        let role = value(&access.role);
        // Every cell's result and each platform's activity, by name.
        let cells = crate::plan::cells(&b.spec).unwrap();
        let mut names: Vec<String> = cells
            .iter()
            .map(|c| format!("study-{}", c.id))
            .chain(
                b.spec
                    .platforms
                    .iter()
                    .map(|p| format!("study-{}-activity", p.name)),
            )
            .collect();
        names.sort();
        assert!(
            names.contains(&"study-psmdb-8.0.axion.1m.r1".to_owned()),
            "{names:?}"
        );
        assert_eq!(
            role["rules"],
            json!([
                {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create"]},
                {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "patch"],
                 "resourceNames": names}
            ])
        );
        let binding = value(&access.role_binding);
        assert_eq!(
            binding["roleRef"],
            json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "study-runner"})
        );
        assert_eq!(
            binding["subjects"],
            json!([{"kind": "ServiceAccount", "name": "study-runner", "namespace": "lab"}])
        );
        assert_eq!(
            access.service_account.metadata.name.as_deref(),
            Some("study-runner")
        );
    }

    #[test]
    fn several_client_pods_make_an_indexed_job_spread_over_nodes_with_a_board() {
        let b = bench(
            "study",
            &STUDY.replace(
                "client: {platform: x86}",
                "client: {platform: x86, pods: 3}",
            ),
        );
        let objects = runner_objects(
            &b,
            &[&b.spec.targets[1]],
            &b.spec.platforms[1],
            Vec::new(),
            &BTreeMap::new(),
            "img:1",
        )
        .unwrap();
        let plan: JobPlan =
            serde_yaml::from_str(&objects.plan.data.as_ref().unwrap()[PLAN_KEY]).unwrap();
        assert_eq!(plan.board.as_deref(), Some("study-run-ext-x86-crew"));
        let job = value(&objects.job);
        assert_eq!(job["spec"]["completionMode"], "Indexed");
        assert_eq!(job["spec"]["completions"], 3);
        assert_eq!(job["spec"]["parallelism"], 3);
        let pod = &job["spec"]["template"]["spec"];
        assert_eq!(
            pod["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"],
            json!([{"weight": 100, "podAffinityTerm": {
                "topologyKey": "kubernetes.io/hostname",
                "labelSelector": {"matchLabels": {"batch.kubernetes.io/job-name": "study-run-ext-x86"}}
            }}])
        );
        let env = pod["containers"][0]["env"].as_array().unwrap();
        assert!(
            env.contains(
                &json!({"name": "MONGOBENCH_JOB_UID", "valueFrom": {"fieldRef":
                {"fieldPath": "metadata.labels['batch.kubernetes.io/controller-uid']"}}})
            ),
            "{env:?}"
        );
        // The runners may read and write every board they may have, and no other.
        let role = value(&runner_access(&b).unwrap().role);
        let names = role["rules"][1]["resourceNames"].as_array().unwrap();
        let boards: Vec<&str> = names
            .iter()
            .filter_map(|n| n.as_str())
            .filter(|n| n.ends_with("-crew"))
            .collect();
        assert_eq!(
            boards,
            [
                "study-run-axion-crew",
                "study-run-ext-axion-crew",
                "study-run-ext-x86-crew",
                "study-run-psmdb-8-0-axion-crew",
                "study-run-psmdb-8-0-x86-crew",
                "study-run-x86-crew"
            ]
        );

        // One pod: a plain Job, no board.
        let one = bench("study", STUDY);
        let objects = runner_objects(
            &one,
            &[&one.spec.targets[1]],
            &one.spec.platforms[1],
            Vec::new(),
            &BTreeMap::new(),
            "img:1",
        )
        .unwrap();
        let job = value(&objects.job);
        assert_eq!(job["spec"].get("completionMode"), None);
        assert_eq!(job["spec"]["template"]["spec"].get("affinity"), None);
        let plan: JobPlan =
            serde_yaml::from_str(&objects.plan.data.as_ref().unwrap()[PLAN_KEY]).unwrap();
        assert_eq!(plan.board, None);
    }

    #[test]
    fn runner_cpu_follows_the_load_of_its_pod_unless_the_spec_names_it() {
        let cpu = |yaml: &str| {
            let (workload, client) = yaml
                .split_once('\n')
                .unwrap_or((yaml, "client: {platform: x86}"));
            let spec = STUDY
                .replace("workload: {type: flights}", workload)
                .replace("client: {platform: x86}", client);
            let b = bench("study", &spec);
            let r = runner_resources(&b.spec);
            let requests = r.requests.unwrap();
            (
                requests.get("cpu").map(|q| q.0.clone()),
                requests.get("memory").map(|q| q.0.clone()),
                r.limits,
            )
        };
        // flights, 16 workers × 500 ops/s × 333 µs = 2.7 → 3 cores.
        assert_eq!(cpu("workload: {type: flights}").0.as_deref(), Some("3"));
        // Over 4 pods: 4 workers each → 1 core.
        let four = cpu("workload: {type: flights}\nclient: {platform: x86, pods: 4}");
        assert_eq!(four.0.as_deref(), Some("1"));
        // YCSB A at 64 workers: 32000 × 100 µs = 3.2 → 4 cores; a target rate decides instead;
        // E's scans cost 4 times as much: 8000 × (0.95 × 400 + 0.05 × 100) µs = 3.08 → 4.
        let ycsb = "workload: {type: ycsb, ycsb: {workload: a}, workers: 64}";
        assert_eq!(cpu(ycsb).0.as_deref(), Some("4"));
        let paced =
            "workload: {type: ycsb, ycsb: {workload: a}, workers: 64, targetOpsPerSecond: 95000}";
        assert_eq!(cpu(paced).0.as_deref(), Some("10"));
        let scans = "workload: {type: ycsb, ycsb: {workload: e}, workers: 16}";
        assert_eq!(cpu(scans).0.as_deref(), Some("4"));
        let huge = "workload: {type: flights, workers: 4096}";
        assert_eq!(cpu(huge).0.as_deref(), Some("16"));
        assert_eq!(cpu(huge).1.as_deref(), Some("512Mi"));
        // What the spec names is kept; only what it leaves out is added.
        let named = cpu(
            "workload: {type: flights}\nclient: {platform: x86, resources: {limits: {cpu: '2'}}}",
        );
        assert_eq!(named.0, None);
        assert_eq!(named.2.unwrap()["cpu"].0, "2");
        let memory = cpu(
            "workload: {type: flights}\nclient: {platform: x86, resources: {requests: {memory: 1Gi}}}",
        );
        assert_eq!(
            (memory.0.as_deref(), memory.1.as_deref()),
            (Some("3"), Some("1Gi"))
        );
    }

    #[test]
    fn run_id_prefers_status_and_is_stable_otherwise() {
        let mut b = bench("study", STUDY);
        assert_eq!(run_id(&b), "0f3c9a527d1e");
        b.status = Some(crate::api::MongoBenchmarkStatus {
            run_id: Some("kept".into()),
            ..Default::default()
        });
        assert_eq!(run_id(&b), "kept");
    }
}
