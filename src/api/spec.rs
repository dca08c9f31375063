//! `MongoBenchmarkSpec`: what one experiment compares (targets, `targets.rs`), where (platforms,
//! `targets.rs`), on what data (`dataset.rs`), on which servers (`replica_set.rs`) and under which
//! load (`workload.rs`), plus the client, repetitions, baseline and lifecycle settings.
//!
//! Optional fields stay `None` when the user leaves them out: the operator never writes defaults
//! into `spec` (GitOps drift, generation bumps). The schema still advertises each default, and
//! code reads the effective value through a helper method (`spec.repetitions()`, ...), which
//! applies the same default. Cross-field rules are CEL rules on the structs (enforced by the API
//! server) and, with precise field paths, in [`crate::api::validate`] (offline).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Toleration;
use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::dataset::Dataset;
use super::precision::Precision;
use super::replica_set::{ComputeResources, ReplicaSet};
use super::status::MongoBenchmarkStatus;
use super::targets::{Platform, Target};
use super::workload::Workload;

/// Default of `spec.repetitions`.
pub const DEFAULT_REPETITIONS: u32 = 3;

// Immutability: everything but suspend, cleanupPolicy and ttlSecondsAfterFinished. Optional
// fields compare presence too, since a transition rule on an absent field never runs.
macro_rules! immutable_optional {
    ($field:literal) => {
        concat!(
            "has(self.",
            $field,
            ") == has(oldSelf.",
            $field,
            ") && (!has(self.",
            $field,
            ") || self.",
            $field,
            " == oldSelf.",
            $field,
            ")"
        )
    };
}
macro_rules! immutable_message {
    ($field:literal) => {
        concat!(
            "spec.",
            $field,
            " is immutable: it defines the experiment; create a new ",
            "MongoBenchmark to run a different one"
        )
    };
}

/// One experiment: every target on every platform, at every dataset size, repeated
/// `repetitions` times, under one workload; results are compared against the baseline target.
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
// Repeated `type_`/`priority` arguments belong to different printer columns, not duplicates.
#[allow(clippy::duplicated_attributes)]
#[kube(
    group = "mongobench.io",
    version = "v1alpha1",
    kind = "MongoBenchmark",
    plural = "mongobenchmarks",
    singular = "mongobenchmark",
    namespaced,
    shortname = "mbench",
    category = "mongobench",
    status = "MongoBenchmarkStatus",
    doc = "A MongoBenchmark describes one benchmark experiment: MongoDB targets (versions, builds, \
           settings) measured on platforms (node pools) at dataset sizes under one workload, \
           repeated, and compared against a baseline target.",
    printcolumn(
        name = "Phase",
        type_ = "string",
        json_path = ".status.phase",
        description = "Where the experiment is"
    ),
    printcolumn(
        name = "Progress",
        type_ = "string",
        json_path = ".status.progress",
        description = "Cells finished out of all cells"
    ),
    printcolumn(
        name = "Baseline",
        type_ = "string",
        json_path = ".status.baseline",
        description = "The target the others are compared against"
    ),
    printcolumn(
        name = "Headline",
        type_ = "string",
        json_path = ".status.headline",
        description = "The main finding so far"
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    ),
    printcolumn(
        name = "Workload",
        type_ = "string",
        json_path = ".spec.workload.type",
        priority = 1,
        description = "Workload type"
    ),
    printcolumn(
        name = "Targets",
        type_ = "string",
        json_path = ".status.targetNames",
        priority = 1,
        description = "Target names"
    ),
    printcolumn(
        name = "Knee",
        type_ = "string",
        json_path = ".status.knees",
        priority = 1,
        description = "With a load sweep: each target's median knee"
    ),
    printcolumn(
        name = "Platforms",
        type_ = "string",
        json_path = ".status.platformNames",
        priority = 1,
        description = "Platform names"
    )
)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("self.targets.all(t, self.targets.exists_one(u, u.name == t.name))")
    .message("spec.targets: target names must be unique").field_path(".targets"))]
#[x_kube(validation = Rule::new("self.platforms.all(p, self.platforms.exists_one(q, q.name == p.name))")
    .message("spec.platforms: platform names must be unique").field_path(".platforms"))]
#[x_kube(validation = Rule::new("!has(self.baseline) || self.targets.exists(t, t.name == self.baseline)")
    .message("spec.baseline must be the name of one of spec.targets").field_path(".baseline"))]
#[x_kube(validation = Rule::new(
    "!has(self.client) || !has(self.client.platform) || self.platforms.exists(p, p.name == self.client.platform)")
    .message("spec.client.platform must be the name of one of spec.platforms")
    .field_path(".client.platform"))]
#[x_kube(validation = Rule::new(
    "!has(self.client) || !has(self.client.pods) || (has(self.workload.sweep) && has(self.workload.sweep.workers) && size(self.workload.sweep.workers) > 0 ? self.workload.sweep.workers.all(w, w >= self.client.pods) : self.client.pods <= (has(self.workload.workers) ? self.workload.workers : 16))")
    .message("spec.client.pods must not exceed spec.workload.workers (or the fewest of sweep.workers): each client pod runs at least one worker")
    .field_path(".client.pods"))]
#[x_kube(validation = Rule::new(
    "self.targets.all(t, has(t.external)) || (has(self.replicaSet) && has(self.replicaSet.storageSize))")
    .message("spec.replicaSet.storageSize is required when a target has an image (the operator provisions its volumes)")
    .field_path(".replicaSet"))]
#[x_kube(validation = Rule::new("self.targets == oldSelf.targets")
    .message(immutable_message!("targets")).field_path(".targets"))]
#[x_kube(validation = Rule::new("self.platforms == oldSelf.platforms")
    .message(immutable_message!("platforms")).field_path(".platforms"))]
#[x_kube(validation = Rule::new("self.dataset == oldSelf.dataset")
    .message(immutable_message!("dataset")).field_path(".dataset"))]
#[x_kube(validation = Rule::new("self.workload == oldSelf.workload")
    .message(immutable_message!("workload")).field_path(".workload"))]
#[x_kube(validation = Rule::new(immutable_optional!("replicaSet"))
    .message(immutable_message!("replicaSet")))]
#[x_kube(validation = Rule::new(immutable_optional!("client"))
    .message(immutable_message!("client")))]
#[x_kube(validation = Rule::new(immutable_optional!("repetitions"))
    .message(immutable_message!("repetitions")))]
#[x_kube(validation = Rule::new(immutable_optional!("canaryPolicy"))
    .message(immutable_message!("canaryPolicy")))]
#[x_kube(validation = Rule::new(immutable_optional!("precision"))
    .message(immutable_message!("precision")))]
#[x_kube(validation = Rule::new(
    "!has(self.precision) || size(self.targets) >= 2")
    .message("spec.precision needs at least two targets: it is the resolving power of their comparison")
    .field_path(".precision"))]
#[x_kube(validation = Rule::new(
    "!has(self.precision) || !has(self.precision.maxRepetitions) || self.precision.maxRepetitions >= (has(self.repetitions) ? self.repetitions : 3)")
    .message("spec.precision.maxRepetitions must be at least spec.repetitions (default 3)")
    .field_path(".precision.maxRepetitions"))]
#[x_kube(validation = Rule::new(
    "self.targets.all(t, !has(t.topology) || t.topology != 'sharded') || has(self.workload.sharding)")
    .message("spec.workload.sharding is required when a target is sharded: it names each collection's shard key")
    .field_path(".workload"))]
#[x_kube(validation = Rule::new(
    "!has(self.workload.sharding) || self.targets.exists(t, has(t.topology) && t.topology == 'sharded')")
    .message("spec.workload.sharding applies only to targets with topology sharded, and no target is")
    .field_path(".workload.sharding"))]
#[x_kube(validation = Rule::new(immutable_optional!("baseline"))
    .message(immutable_message!("baseline")))]
#[x_kube(validation = Rule::new(immutable_optional!("parallelism"))
    .message(immutable_message!("parallelism")))]
#[x_kube(validation = Rule::new(
    "!has(self.parallelism) || self.parallelism != 'Simultaneous' || !has(self.client) || !has(self.client.pods) || self.client.pods == 1")
    .message("spec.client.pods: Simultaneous cells are measured from one client pod; set pods to 1 or parallelism to PerPlatform")
    .field_path(".client.pods"))]
#[x_kube(validation = Rule::new(
    "!has(self.parallelism) || self.parallelism != 'Simultaneous' || (!has(self.workload.sweep) && !has(self.workload.operations))")
    .message("spec.workload: Simultaneous cells share one measured window of time; set duration, not operations or sweep")
    .field_path(".workload"))]
#[x_kube(validation = Rule::new(
    "!has(self.placement) || self.placement != 'SharedNodes' || self.targets.all(t, !has(t.topology) || t.topology != 'sharded')")
    .message("spec.placement: SharedNodes places replica sets' members side by side; a sharded target's sets and routers have no such place, so use OwnNodes")
    .field_path(".placement"))]
#[x_kube(validation = Rule::new(immutable_optional!("placement"))
    .message(immutable_message!("placement")))]
pub struct MongoBenchmarkSpec {
    /// The MongoDB deployments to compare (1 to 10). A target with `image` is provisioned by
    /// the operator on every platform; a target with `external` is an existing deployment that
    /// is only benchmarked. Names must be unique. Immutable.
    #[schemars(length(min = 1, max = 10))]
    pub targets: Vec<Target>,

    /// The node pools to run on (1 to 6). Every provisioned target runs on every platform.
    /// Names must be unique. Immutable.
    #[schemars(length(min = 1, max = 6))]
    pub platforms: Vec<Platform>,

    /// Shape of the replica set the operator provisions for each target with an `image`.
    /// Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica_set: Option<ReplicaSet>,

    /// The data every cell is measured on. Immutable.
    pub dataset: Dataset,

    /// The load applied in each cell. Immutable.
    pub workload: Workload,

    /// The load-generator pod. Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<Client>,

    /// Measured runs per target, platform and dataset size (1 to 100, default 3); more
    /// repetitions give narrower confidence intervals. Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 100), extend("default" = 3))]
    pub repetitions: Option<u32>,

    /// The resolving power to reach: after `repetitions` slots, the runner adds slots (one
    /// more repetition of every target, interleaved) until every comparison's minimum
    /// detectable effect is at most `mdePercent`, or `maxRepetitions` or `maxDuration` is
    /// reached; `status.conditions` says which (`Precision`). Unset: exactly `repetitions`.
    /// Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<Precision>,

    /// What a noise canary that deviates does to its cell: `Flag` (default) keeps the cell and
    /// marks its canary; `Void` makes the cell invalid (left out of the statistics) and runs
    /// its slot again. The canary is a fixed CPU, memory and loopback probe of the client, and
    /// of each provisioned replica-set member's node (through its sidecar), taken before every
    /// cell; it deviates when a figure is over 25 % from the median of the same machine's
    /// earlier probes in the run (docs/results.md, "Noise canaries"). Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "Flag"))]
    pub canary_policy: Option<CanaryPolicy>,

    /// Name of the target every other target is compared against (default: the first target).
    /// Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 63))]
    pub baseline: Option<String>,

    /// How cells are scheduled: `PerPlatform` (default) runs platforms at the same time and the
    /// targets of one platform one after another on the same nodes; `Simultaneous` runs
    /// platforms at the same time and every target's cell of a slot at the same time too, each
    /// warmed up, restored and checked on its own, then measured over one common window of
    /// time, so that what the machines do in that window weighs on every target alike (needs a
    /// time-bounded measured phase and one client pod); `Sequential` runs one target on one
    /// platform at a time. Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "PerPlatform"))]
    pub parallelism: Option<Parallelism>,

    /// Where provisioned targets' members run relative to each other: `OwnNodes` (default)
    /// gives every target nodes of its own; `SharedNodes` puts member i of every target on
    /// node i of the platform (member i of the baseline's set decides), so targets measured at
    /// the same time share their nodes' disturbances; give members Guaranteed whole CPUs and
    /// nodes a static CPU manager so each gets cores of its own (docs/operator.md,
    /// "Placement"). Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "OwnNodes"))]
    pub placement: Option<Placement>,

    /// What happens to provisioned servers and their volumes: `DeleteServers` (default)
    /// deletes them once their cells are done; `Retain` keeps them for inspection. Results are
    /// always kept. May be changed at any time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "DeleteServers"))]
    pub cleanup_policy: Option<CleanupPolicy>,

    /// Pauses the experiment before its next cell when true (default false); the running cell
    /// finishes. May be changed at any time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = false))]
    pub suspend: Option<bool>,

    /// Seconds after completion (or failure) when the MongoBenchmark deletes itself, with its
    /// results; unset keeps it forever. May be changed at any time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub ttl_seconds_after_finished: Option<i32>,
}

impl MongoBenchmarkSpec {
    /// Effective `client.pods` (default 1).
    pub fn client_pods(&self) -> u32 {
        self.client.as_ref().map_or(1, Client::pods)
    }

    /// Effective `canaryPolicy` (default `Flag`).
    pub fn canary_policy(&self) -> CanaryPolicy {
        self.canary_policy.unwrap_or_default()
    }

    /// Effective `repetitions` (default 3).
    pub fn repetitions(&self) -> u32 {
        self.repetitions.unwrap_or(DEFAULT_REPETITIONS)
    }

    /// Effective baseline target name: `baseline`, else the first target's name.
    pub fn baseline(&self) -> &str {
        match &self.baseline {
            Some(b) => b,
            None => self.targets.first().map(|t| t.name.as_str()).unwrap_or(""),
        }
    }

    /// The target that `baseline()` names, if it exists.
    pub fn baseline_target(&self) -> Option<&Target> {
        let name = self.baseline();
        self.targets.iter().find(|t| t.name == name)
    }

    /// Effective `parallelism` (default `PerPlatform`).
    pub fn parallelism(&self) -> Parallelism {
        self.parallelism.unwrap_or_default()
    }

    /// Effective `placement` (default `OwnNodes`).
    pub fn placement(&self) -> Placement {
        self.placement.unwrap_or_default()
    }

    /// Effective `cleanupPolicy` (default `DeleteServers`).
    pub fn cleanup_policy(&self) -> CleanupPolicy {
        self.cleanup_policy.unwrap_or_default()
    }

    /// Effective `suspend` (default false).
    pub fn suspend(&self) -> bool {
        self.suspend.unwrap_or(false)
    }

    /// Effective replica-set settings (all defaults when `replicaSet` is absent).
    pub fn replica_set(&self) -> ReplicaSet {
        self.replica_set.clone().unwrap_or_default()
    }

    /// The platform named `name`.
    pub fn platform(&self, name: &str) -> Option<&Platform> {
        self.platforms.iter().find(|p| p.name == name)
    }

    /// The target named `name`.
    pub fn target(&self, name: &str) -> Option<&Target> {
        self.targets.iter().find(|t| t.name == name)
    }

    /// True when at least one target is provisioned by the operator (has an `image`).
    pub fn provisions_servers(&self) -> bool {
        self.targets.iter().any(|t| t.image.is_some())
    }

    /// Target names joined by commas, for `status.targetNames` (the wide `Targets` column).
    pub fn target_names(&self) -> String {
        join_names(self.targets.iter().map(|t| t.name.as_str()))
    }

    /// Platform names joined by commas, for `status.platformNames` (the wide `Platforms`
    /// column).
    pub fn platform_names(&self) -> String {
        join_names(self.platforms.iter().map(|p| p.name.as_str()))
    }
}

fn join_names<'a>(names: impl Iterator<Item = &'a str>) -> String {
    names.collect::<Vec<_>>().join(",")
}

/// The load-generator pod.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new(
    "!has(self.platform) || ((!has(self.nodeSelector) || size(self.nodeSelector) == 0) && (!has(self.tolerations) || size(self.tolerations) == 0))")
    .message("spec.client: set either platform or nodeSelector/tolerations, not both")
    .field_path(".platform"))]
pub struct Client {
    /// Name of the platform whose nodes run the client (it then uses that platform's node
    /// selector and tolerations). Unset: `nodeSelector`/`tolerations` below, or anywhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 63))]
    pub platform: Option<String>,

    /// Node labels for the client when it has no `platform`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("maxProperties" = 32))]
    pub node_selector: BTreeMap<String, String>,

    /// Tolerations for the client when it has no `platform`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 16))]
    pub tolerations: Vec<Toleration>,

    /// Image of the client (a `mongobench` image); default: the operator's own image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    pub image: Option<String>,

    /// CPU and memory of the client container. Give the client enough CPU: a saturated client
    /// is flagged and its cell is not reported as a server result. Where it names no CPU (or no
    /// memory), the operator requests the cores the pod's share of the load needs at the
    /// workload's client cost, and 512Mi (docs/operator.md, "Runner resources").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ComputeResources>,

    /// Client pods per runner (default 1): an Indexed Job whose pod `i` of `N` runs workers
    /// `[i·W/N, (i+1)·W/N)`, so together they send exactly the traffic of one pod with all `W`
    /// workers; their measured phases start together and their results are merged into one
    /// per cell. At most `workload.workers`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 64))]
    pub pods: Option<u32>,
}

impl Client {
    /// Effective `pods` (default 1).
    pub fn pods(&self) -> u32 {
        self.pods.unwrap_or(1)
    }
}

/// How cells are scheduled across platforms.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[schemars(transform = crate::api::drop_description)]
pub enum Parallelism {
    /// Platforms at the same time; within a platform, one target after another.
    #[default]
    PerPlatform,
    /// One target on one platform at a time.
    Sequential,
    /// Platforms at the same time; within a platform, every target's cell of a slot at the
    /// same time, measured over one common window.
    Simultaneous,
}

/// Where provisioned targets' members run relative to each other.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[schemars(transform = crate::api::drop_description)]
pub enum Placement {
    /// Every target on nodes of its own.
    #[default]
    OwnNodes,
    /// Member i of every target on the same node.
    SharedNodes,
}

/// What a deviating noise canary does to its cell.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[schemars(transform = crate::api::drop_description)]
pub enum CanaryPolicy {
    /// Keep the cell; its canary says how far it deviated.
    #[default]
    Flag,
    /// Make the cell invalid and run its slot again.
    Void,
}

/// What happens to provisioned servers after their cells.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[schemars(transform = crate::api::drop_description)]
pub enum CleanupPolicy {
    /// Delete servers and their volumes once their cells are done.
    #[default]
    DeleteServers,
    /// Keep servers and volumes for inspection.
    Retain,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(yaml: &str) -> MongoBenchmarkSpec {
        serde_yaml::from_str(yaml).unwrap()
    }

    const MINIMAL: &str = "\
targets:
  - {name: psmdb-8.0, image: 'percona/percona-server-mongodb:8.0.34-15', distribution: percona}
  - {name: mongodb-9.0, image: 'mongo:9.0.4', distribution: community}
platforms: [{name: x86}]
dataset: {sizes: [1M]}
workload: {type: flights}
";

    #[test]
    fn omitted_fields_read_as_their_defaults() {
        let s = spec(MINIMAL);
        assert_eq!(s.repetitions(), 3);
        assert_eq!(s.baseline(), "psmdb-8.0");
        assert_eq!(
            s.baseline_target().map(|t| t.name.as_str()),
            Some("psmdb-8.0")
        );
        assert_eq!(s.parallelism(), Parallelism::PerPlatform);
        assert_eq!(s.cleanup_policy(), CleanupPolicy::DeleteServers);
        assert!(!s.suspend());
        assert_eq!(s.replica_set().members(), 3);
        assert_eq!(
            s.replica_set().anti_affinity(),
            crate::api::AntiAffinity::Required
        );
        assert_eq!(s.dataset.seed_batch_size(), 1000);
        assert_eq!(s.dataset.seed_workers(), 8);
        assert_eq!(s.dataset.index_build(), crate::api::IndexBuild::After);
        assert_eq!(s.dataset.dataset_seed(), 1);
        assert!(!s.dataset.reuse_dataset());
        assert!(s.provisions_servers());
        assert_eq!(s.target_names(), "psmdb-8.0,mongodb-9.0");
        assert_eq!(s.platform_names(), "x86");
        assert_eq!(s.platform("x86").map(|p| p.name.as_str()), Some("x86"));
        assert_eq!(s.target("nope"), None);
        // Nothing is written back: the serialized spec has no defaults in it.
        let written = serde_json::to_value(&s).unwrap();
        let mut keys: Vec<&String> = written.as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(keys, ["dataset", "platforms", "targets", "workload"]);
    }

    #[test]
    fn explicit_values_win_over_defaults() {
        let s = spec(&format!(
            "{MINIMAL}repetitions: 5\nbaseline: mongodb-9.0\nparallelism: Sequential\n\
             cleanupPolicy: Retain\nsuspend: true\n"
        ));
        assert_eq!(s.repetitions(), 5);
        assert_eq!(s.baseline(), "mongodb-9.0");
        assert_eq!(s.parallelism(), Parallelism::Sequential);
        assert_eq!(s.cleanup_policy(), CleanupPolicy::Retain);
        assert!(s.suspend());
    }
}
