//! The plan file: what one runner process executes (its targets on one platform), written by
//! the operator into a ConfigMap the Job mounts. It carries the run already resolved from the
//! spec ([`RunDefinition`]: the generators' parameters, the phases' settings, the sizes, the
//! schedule), never the spec itself, so that its format moves only with [`PLAN_VERSION`], and
//! a local run builds the same definition in memory.

use serde::{Deserialize, Serialize};

use crate::api::{
    CanaryPolicy, MongoBenchmarkSpec, Precision, WireCompressor, WorkloadSharding, WorkloadType,
};
use crate::plan::{self, PlanError, RunSettings, WorkloadPlan};

/// Platform name of a local run (no Kubernetes).
pub const LOCAL_PLATFORM: &str = "local";

/// The `planVersion` this code writes and reads. A runner refuses a plan of any other version
/// (or without one) rather than guess what an operator of another release meant; raise it
/// whenever a field changes meaning or a required one is added.
pub const PLAN_VERSION: u64 = 2;

/// The key of the version in a plan file.
pub const PLAN_VERSION_KEY: &str = "planVersion";

/// One runner's assignment: the targets it benchmarks on one platform.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobPlan {
    /// [`PLAN_VERSION`] when written by this code; checked on read.
    pub plan_version: u64,
    /// Name of the MongoBenchmark.
    pub benchmark: String,
    /// Namespace of the MongoBenchmark (result ConfigMaps are written there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// UID of the MongoBenchmark, so result ConfigMaps can be owned by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// Identifier of this execution of the benchmark.
    pub run_id: String,
    /// The platform the targets run on.
    pub platform: String,
    /// The targets, in spec order.
    pub targets: Vec<JobTarget>,
    /// Cell ids already done (their results exist); the runner skips them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub completed_cells: Vec<String>,
    /// With more than one client pod: the ConfigMap the Job's pods coordinate through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub board: Option<String>,
    /// The run, resolved from the spec.
    pub run: RunDefinition,
}

/// A run resolved from a spec: everything a runner needs, in the runner's own terms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunDefinition {
    pub workload: WorkloadPlan,
    pub settings: RunSettings,
    /// Dataset sizes as the spec writes them (`1k`, `4GiB`), in its order (ascending).
    pub sizes: Vec<String>,
    pub repetitions: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<Precision>,
    pub canary_policy: CanaryPolicy,
    /// The target the others are compared with.
    pub baseline: String,
    /// Client pods (or local processes) that split the workers.
    pub client_pods: u32,
    /// Keep a stored dataset of the same identity whose digest verifies.
    #[serde(default)]
    pub reuse_dataset: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wire_compressors: Vec<WireCompressor>,
    /// How the workload's collections are sharded on targets reached through mongos.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sharding: Option<WorkloadSharding>,
    /// Limits of the runner's own steps.
    pub timeouts: Timeouts,
    /// How a slot's cells run: one after another, or at the same time.
    #[serde(default)]
    pub schedule: Schedule,
    /// With [`Schedule::Simultaneous`] on one machine: the CPU set of each side, one per
    /// target, which the targets trade slot by slot (`mongobench run --cpu-sets`); empty
    /// where the targets cannot trade places.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sides: Vec<super::cpus::CpuSet>,
}

/// How the cells of a slot run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Schedule {
    /// One after another, in an order drawn from the seed.
    #[default]
    InTurn,
    /// At the same time, measured over one common window (`parallelism: Simultaneous`).
    Simultaneous,
}

/// How long the runner's steps outside the cells may take, in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Timeouts {
    /// Bringing a provisioned sharded cluster up (its sets, shards and balancer policy).
    pub bring_up_seconds: u64,
    /// Initiating a provisioned replica set and waiting for its primary.
    pub initiate_seconds: u64,
}

impl Default for Timeouts {
    fn default() -> Timeouts {
        Timeouts {
            bring_up_seconds: 300,
            initiate_seconds: 300,
        }
    }
}

impl RunDefinition {
    /// The run `spec` describes.
    ///
    /// # Errors
    /// What [`plan::workload_plan`] and [`plan::run_settings`] refuse.
    pub fn of(spec: &MongoBenchmarkSpec) -> Result<RunDefinition, PlanError> {
        // A custom workload's shard keys are in its document; the balancer policy defaults.
        let sharding = spec.workload.sharding.clone().or_else(|| {
            (spec.workload.kind == WorkloadType::Custom).then(WorkloadSharding::default)
        });
        Ok(RunDefinition {
            workload: plan::workload_plan(spec)?,
            settings: plan::run_settings(spec)?,
            sizes: spec.dataset.sizes.clone(),
            repetitions: spec.repetitions(),
            precision: spec.precision.clone(),
            canary_policy: spec.canary_policy(),
            baseline: spec.baseline().to_owned(),
            client_pods: spec.client_pods(),
            reuse_dataset: spec.dataset.reuse_dataset(),
            wire_compressors: spec.workload.wire_compressors.clone(),
            sharding,
            timeouts: Timeouts::default(),
            schedule: match spec.parallelism() {
                crate::api::Parallelism::Simultaneous => Schedule::Simultaneous,
                _ => Schedule::InTurn,
            },
            sides: Vec::new(),
        })
    }
}

/// One target of a runner.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobTarget {
    /// The target's name.
    pub name: String,
    /// The environment variable holding its connection string.
    pub uri_env: String,
    /// `topology: sharded`: reached through mongos; its text (`sharded 2×3`) goes into results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sharded: Option<String>,
    /// Initiate the replica set before seeding (provisioned targets): the member addresses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub initiate_members: Vec<String>,
    /// The canaries beside a provisioned replica set's members (`host:port`), which the
    /// runner asks for a probe of their nodes before each cell.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_canaries: Vec<String>,
    /// Replica-set name for initiation (with `initiate_members`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica_set_name: Option<String>,
    /// A provisioned sharded target: its config server and shard sets, which the runner
    /// initiates and joins through the routers before seeding (plan/sharding).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<crate::plan::sharding::ClusterLayout>,
    /// What Kubernetes knows of a provisioned target's servers when the runner starts: the
    /// runner adds it to every result, since the servers cannot tell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub facts: Option<ServerFacts>,
}

/// The image and machines of a provisioned target, from its pods and their nodes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerFacts {
    /// The image the pods run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// The digest the kubelet pulled (`sha256:…`), from the pods' status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_digest: Option<String>,
    /// One entry per member, in ordinal order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<MemberFacts>,
}

/// The node one member runs on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemberFacts {
    /// Member address (`host:port`), as in the replica-set configuration.
    pub member: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_platform: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub architecture: Option<String>,
}

impl ServerFacts {
    /// Writes the facts into `result`: the image and digest, and each member's node facts
    /// into the node entry of the same address.
    pub fn fill(&self, result: &mut crate::result::CellResult) {
        if self.image.is_some() {
            result.server.image.clone_from(&self.image);
        }
        if self.image_digest.is_some() {
            result.server.image_digest.clone_from(&self.image_digest);
        }
        for node in &mut result.nodes {
            let Some(m) = self.members.iter().find(|m| m.member == node.member) else {
                continue;
            };
            node.node_name.clone_from(&m.node_name);
            node.zone.clone_from(&m.zone);
            node.instance_type.clone_from(&m.instance_type);
            node.cpu_platform.clone_from(&m.cpu_platform);
            node.architecture.clone_from(&m.architecture);
        }
    }
}

impl JobPlan {
    /// The plan of a run of `spec` on this machine (`mongobench run -f`): every one of
    /// `targets` (spec target names, or names of the user's own for a spec's single target),
    /// on [`LOCAL_PLATFORM`], nothing done yet.
    ///
    /// # Errors
    /// What [`RunDefinition::of`] refuses.
    pub fn local(
        spec: &MongoBenchmarkSpec,
        benchmark: &str,
        run_id: &str,
        targets: &[String],
    ) -> Result<JobPlan, PlanError> {
        Ok(JobPlan {
            plan_version: PLAN_VERSION,
            benchmark: benchmark.to_owned(),
            namespace: None,
            uid: None,
            run_id: run_id.to_owned(),
            platform: LOCAL_PLATFORM.to_owned(),
            targets: targets
                .iter()
                .map(|name| JobTarget {
                    name: name.clone(),
                    uri_env: String::new(),
                    sharded: spec.target(name).and_then(|t| t.topology_text()),
                    initiate_members: Vec::new(),
                    server_canaries: Vec::new(),
                    replica_set_name: None,
                    cluster: None,
                    facts: None,
                })
                .collect(),
            completed_cells: Vec::new(),
            board: None,
            run: RunDefinition::of(spec)?,
        })
    }

    /// The plan file's text.
    pub fn to_yaml(&self) -> String {
        serde_yaml::to_string(self).expect("a plan serializes")
    }

    /// The ids of the planned cells of `target` (its `repetitions` at every size), in the
    /// order they run.
    pub fn planned_cell_ids(&self, target: &str) -> Vec<String> {
        self.run
            .sizes
            .iter()
            .flat_map(|size| {
                (1..=self.run.repetitions)
                    .map(move |r| crate::plan::cell_id(target, &self.platform, size, r))
            })
            .collect()
    }

    /// What makes this plan one no operator writes: each a field path and what is wrong there.
    pub fn problems(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        if self.targets.is_empty() {
            out.push(("targets".into(), "must list at least one target".into()));
        }
        for (i, t) in self.targets.iter().enumerate() {
            if self.targets[..i].iter().any(|o| o.name == t.name) {
                out.push((
                    format!("targets[{i}].name"),
                    format!("{:?} is given twice", t.name),
                ));
            }
            if !t.initiate_members.is_empty() && t.replica_set_name.is_none() {
                out.push((
                    format!("targets[{i}].replicaSetName"),
                    "required with initiateMembers".into(),
                ));
            }
        }
        let run = &self.run;
        if run.sizes.is_empty() {
            out.push(("run.sizes".into(), "must list at least one size".into()));
        }
        for (i, size) in run.sizes.iter().enumerate() {
            if let Err(e) = crate::api::units::parse_dataset_size(size) {
                out.push((format!("run.sizes[{i}]"), e.to_string()));
            }
        }
        for (path, value) in [
            ("run.repetitions", run.repetitions),
            ("run.settings.workers", run.settings.workers),
            ("run.clientPods", run.client_pods),
        ] {
            if value == 0 {
                out.push((path.into(), "must be at least 1, got 0".into()));
            }
        }
        out
    }

    /// The target named `name`.
    pub fn target(&self, name: &str) -> Option<&JobTarget> {
        self.targets.iter().find(|t| t.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{CellId, CellResult, CellStatus, NodeInfo};

    #[test]
    fn facts_fill_the_image_and_the_nodes_of_the_same_address() {
        let cell = CellId {
            benchmark: "b".into(),
            run_id: "r".into(),
            workload: "flights".into(),
            target: "a".into(),
            platform: "p".into(),
            size: "1k".into(),
            repetition: 1,
        };
        let mut result = CellResult::empty(cell, CellStatus::Complete);
        result.server.version = Some("8.0.4".into());
        result.nodes = ["a-0.a:27017", "a-1.a:27017"]
            .iter()
            .map(|m| NodeInfo {
                member: (*m).into(),
                ..NodeInfo::default()
            })
            .collect();
        let member = |m: &str, node: &str| MemberFacts {
            member: m.into(),
            node_name: Some(node.into()),
            zone: Some("z".into()),
            instance_type: Some("c4a-standard-4".into()),
            cpu_platform: Some("c4a".into()),
            architecture: Some("arm64".into()),
        };
        let facts = ServerFacts {
            image: Some("mongo:8.0.4".into()),
            image_digest: Some("sha256:0123".into()),
            // The second member's pod was gone; a member the server does not list is ignored.
            members: vec![member("a-0.a:27017", "n0"), member("a-9.a:27017", "n9")],
        };
        facts.fill(&mut result);
        assert_eq!(result.server.image.as_deref(), Some("mongo:8.0.4"));
        assert_eq!(result.server.image_digest.as_deref(), Some("sha256:0123"));
        assert_eq!(result.server.version.as_deref(), Some("8.0.4"));
        let n0 = &result.nodes[0];
        assert_eq!(
            (
                n0.node_name.as_deref(),
                n0.cpu_platform.as_deref(),
                n0.architecture.as_deref()
            ),
            (Some("n0"), Some("c4a"), Some("arm64"))
        );
        assert_eq!(
            result.nodes[1],
            NodeInfo {
                member: "a-1.a:27017".into(),
                ..NodeInfo::default()
            }
        );
    }
}
