//! `MongoBenchmarkSpec`: what one experiment compares (targets), where (platforms), on what data
//! (dataset) and under which load (workload, in `workload.rs`).
//!
//! Optional fields stay `None` when the user leaves them out: the operator never writes defaults
//! into `spec` (GitOps drift, generation bumps). The schema still advertises each default, and
//! code reads the effective value through a helper method (`spec.repetitions()`, ...), which
//! applies the same default. Cross-field rules are CEL rules on the structs (enforced by the API
//! server) and, with precise field paths, in [`crate::api::validate`] (offline).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ResourceRequirements, Toleration};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::status::MongoBenchmarkStatus;
use super::units::{self, DatasetSize, UnitsError};
use super::workload::Workload;

/// Default of `spec.repetitions`.
pub const DEFAULT_REPETITIONS: u32 = 3;
/// Default of `spec.replicaSet.members`.
pub const DEFAULT_MEMBERS: u32 = 3;
/// Default of `spec.dataset.seedBatchSize`.
pub const DEFAULT_SEED_BATCH_SIZE: u32 = 1000;
/// Default of `spec.dataset.seedWorkers`.
pub const DEFAULT_SEED_WORKERS: u32 = 8;
/// Default of `spec.dataset.datasetSeed`.
pub const DEFAULT_DATASET_SEED: u64 = 1;
/// Default of `spec.targets[].external.uriSecretRef.key`.
pub const DEFAULT_URI_SECRET_KEY: &str = "uri";
/// Smallest WiredTiger cache mongod accepts, and the floor of the derived default (GiB).
pub const MIN_WIRED_TIGER_CACHE_GB: f64 = 0.25;

/// `pattern` of target and platform names: lowercase letters, digits, `-` and `.`, starting and
/// ending with a letter or digit (a valid label value, so `psmdb-8.0` is allowed).
pub const NAME_PATTERN: &str = "^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$";
/// Longest target or platform name.
pub const NAME_MAX_LENGTH: usize = 63;
/// Node label that selects an architecture, set from `platforms[].arch`.
pub const ARCH_LABEL: &str = "kubernetes.io/arch";

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

/// CEL expression for the numeric value of a dataset size held in the variable `$v`, valid for
/// strings that match the size patterns (the bounded digit counts keep it inside int64).
macro_rules! size_value {
    ($v:literal) => {
        concat!(
            "(int(",
            $v,
            ".matches('[KMGT]iB$') ? ",
            $v,
            ".substring(0, ",
            $v,
            ".size() - 3) : ",
            $v,
            ".matches('[kMG]$') ? ",
            $v,
            ".substring(0, ",
            $v,
            ".size() - 1) : ",
            $v,
            ") * (",
            $v,
            ".endsWith('k') ? 1000 : ",
            $v,
            ".endsWith('M') ? 1000000 : ",
            $v,
            ".endsWith('G') ? 1000000000 : ",
            $v,
            ".endsWith('KiB') ? 1024 : ",
            $v,
            ".endsWith('MiB') ? 1048576 : ",
            $v,
            ".endsWith('GiB') ? 1073741824 : ",
            $v,
            ".endsWith('TiB') ? 1099511627776 : 1))"
        )
    };
}

/// One experiment: every target on every platform, at every dataset size, repeated
/// `repetitions` times, under one workload; results are compared against the baseline target.
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
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
#[x_kube(validation = Rule::new(immutable_optional!("baseline"))
    .message(immutable_message!("baseline")))]
#[x_kube(validation = Rule::new(immutable_optional!("parallelism"))
    .message(immutable_message!("parallelism")))]
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

    /// Name of the target every other target is compared against (default: the first target).
    /// Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 63))]
    pub baseline: Option<String>,

    /// How cells are scheduled: `PerPlatform` (default) runs platforms at the same time and the
    /// targets of one platform one after another on the same nodes; `Sequential` runs one
    /// target on one platform at a time. Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "PerPlatform"))]
    pub parallelism: Option<Parallelism>,

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

/// A MongoDB deployment under test: exactly one of `image` (the operator provisions a replica
/// set from it on every platform) or `external` (an existing deployment reached by a URI).
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("has(self.image) != has(self.external)")
    .message("spec.targets[]: set exactly one of image (a server the operator provisions) or external (an existing deployment)"))]
#[x_kube(validation = Rule::new("!has(self.image) || has(self.distribution)")
    .message("spec.targets[].distribution (community or percona) is required with image")
    .field_path(".distribution"))]
#[x_kube(validation = Rule::new(
    "has(self.image) || (!has(self.distribution) && (!has(self.mongodArgs) || size(self.mongodArgs) == 0))")
    .message("spec.targets[]: distribution and mongodArgs apply only to a target with an image"))]
pub struct Target {
    /// Unique name of the target, shown in results and comparisons (e.g. `psmdb-8.0`):
    /// lowercase letters, digits, `-` and `.`, at most 63 characters.
    #[schemars(length(min = 1, max = 63), pattern(NAME_PATTERN))]
    pub name: String,

    /// Container image of mongod for a target the operator provisions, e.g. `mongo:9.0.4` or
    /// `percona/percona-server-mongodb:8.0.34-15`. Pin a tag or digest; the resolved digest is
    /// recorded in status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    pub image: Option<String>,

    /// Which build the image is (`community` or `percona`); decides entrypoint, user and
    /// server-statistics handling. Required with `image`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distribution: Option<Distribution>,

    /// Extra mongod command-line arguments, e.g. `--wiredTigerCollectionBlockCompressor=zstd`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 32), inner(length(min = 1, max = 256)))]
    pub mongod_args: Vec<String>,

    /// Version label for display, e.g. `8.0.34-15` (the server's own version is also read and
    /// recorded in status).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 63))]
    pub version: Option<String>,

    /// An existing deployment to benchmark instead of provisioning one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external: Option<ExternalTarget>,
}

impl Target {
    /// True when the operator provisions this target (it has an `image`).
    pub fn is_provisioned(&self) -> bool {
        self.image.is_some()
    }
}

/// Which MongoDB build an image contains.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[schemars(transform = crate::api::drop_description)]
#[serde(rename_all = "lowercase")]
pub enum Distribution {
    /// MongoDB Community Server (`mongo`, `mongodb/mongodb-community-server`).
    Community,
    /// Percona Server for MongoDB (`percona/percona-server-mongodb`).
    Percona,
}

/// An existing MongoDB deployment, reached through a connection string kept in a Secret.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct ExternalTarget {
    /// The Secret (in the MongoBenchmark's namespace) that holds the `mongodb://` or
    /// `mongodb+srv://` connection string.
    pub uri_secret_ref: SecretKeyRef,
}

/// A key of a Secret in the same namespace.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct SecretKeyRef {
    /// Name of the Secret.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// Key within the Secret (default `uri`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253), extend("default" = "uri"))]
    pub key: Option<String>,
}

impl SecretKeyRef {
    /// Effective key (default `uri`).
    pub fn key(&self) -> &str {
        self.key.as_deref().unwrap_or(DEFAULT_URI_SECRET_KEY)
    }
}

/// A node pool the servers (and, by default, nothing else) run on.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new(
    "!has(self.arch) || !has(self.nodeSelector) || !('kubernetes.io/arch' in self.nodeSelector) || self.nodeSelector['kubernetes.io/arch'] == self.arch")
    .message("spec.platforms[].nodeSelector['kubernetes.io/arch'] contradicts arch")
    .field_path(".arch"))]
pub struct Platform {
    /// Unique name of the platform, shown in results (e.g. `x86-icelake`): lowercase letters,
    /// digits, `-` and `.`, at most 63 characters.
    #[schemars(length(min = 1, max = 63), pattern(NAME_PATTERN))]
    pub name: String,

    /// Human description, e.g. `n2-standard-4, Intel Ice Lake, pd-ssd`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 256))]
    pub description: Option<String>,

    /// Node labels the servers are pinned to, e.g.
    /// `cloud.google.com/gke-nodepool: n2-icelake`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("maxProperties" = 32))]
    pub node_selector: BTreeMap<String, String>,

    /// Tolerations for the taints of the pool.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 16))]
    pub tolerations: Vec<Toleration>,

    /// StorageClass of the servers' volumes (e.g. `pd-ssd`); unset uses the cluster default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    pub storage_class_name: Option<String>,

    /// CPU architecture of the pool. When set, the operator adds the node selector
    /// `kubernetes.io/arch` and, for `arm64`, the toleration of the standard arm64 taint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arch: Option<Arch>,

    /// Price of one node for one hour, a decimal in the user's currency (e.g. 0.2330), for
    /// cost per million operations in comparisons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0))]
    pub price_per_node_hour: Option<f64>,
}

impl Platform {
    /// `nodeSelector` plus `kubernetes.io/arch` when `arch` is set.
    pub fn effective_node_selector(&self) -> BTreeMap<String, String> {
        let mut selector = self.node_selector.clone();
        if let Some(arch) = self.arch {
            selector.insert(ARCH_LABEL.to_string(), arch.as_str().to_string());
        }
        selector
    }

    /// `tolerations` plus, for `arch: arm64`, the toleration of the `kubernetes.io/arch=arm64`
    /// `NoSchedule` taint that GKE puts on Arm nodes (unless an equal one is already listed).
    pub fn effective_tolerations(&self) -> Vec<Toleration> {
        let mut tolerations = self.tolerations.clone();
        if self.arch == Some(Arch::Arm64) {
            let arm = Toleration {
                key: Some(ARCH_LABEL.to_string()),
                operator: Some("Equal".to_string()),
                value: Some("arm64".to_string()),
                effect: Some("NoSchedule".to_string()),
                toleration_seconds: None,
            };
            if !tolerations.contains(&arm) {
                tolerations.push(arm);
            }
        }
        tolerations
    }
}

/// A CPU architecture, as in the `kubernetes.io/arch` node label.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[schemars(transform = crate::api::drop_description)]
#[serde(rename_all = "lowercase")]
pub enum Arch {
    /// x86-64.
    Amd64,
    /// 64-bit Arm.
    Arm64,
}

impl Arch {
    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            Arch::Amd64 => "amd64",
            Arch::Arm64 => "arm64",
        }
    }
}

/// The replica set provisioned for each target with an `image` on each platform.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct ReplicaSet {
    /// Number of members: 1, 3 (default), 5 or 7; each member gets its own node under
    /// `antiAffinity: Required`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 3))]
    #[x_kube(validation = Rule::new("self in [1, 3, 5, 7]")
        .message("spec.replicaSet.members must be 1, 3, 5 or 7"))]
    pub members: Option<u32>,

    /// CPU and memory requests and limits of each mongod container. Equal requests and limits
    /// (Guaranteed QoS) keep measurements stable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ComputeResources>,

    /// Size of each member's data volume, e.g. `50Gi`. Required when a target has an image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "quantity_schema")]
    pub storage_size: Option<Quantity>,

    /// WiredTiger cache size in GiB (0.25 to 10000). Default: mongod's own rule applied to the
    /// memory limit, 0.5 × (limit − 1 GiB) and at least 0.25; unset without a memory limit
    /// lets mongod size it from the node's memory.
    #[serde(
        default,
        rename = "wiredTigerCacheSizeGB",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(range(min = 0.25, max = 10000.0))]
    pub wired_tiger_cache_size_gb: Option<f64>,

    /// Pod anti-affinity between members: `Required` (default; one member per node) or
    /// `Preferred`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "Required"))]
    pub anti_affinity: Option<AntiAffinity>,
}

impl ReplicaSet {
    /// Effective `members` (default 3).
    pub fn members(&self) -> u32 {
        self.members.unwrap_or(DEFAULT_MEMBERS)
    }

    /// Effective `antiAffinity` (default `Required`).
    pub fn anti_affinity(&self) -> AntiAffinity {
        self.anti_affinity.unwrap_or_default()
    }

    /// The memory limit of the mongod container in bytes, if one is set.
    ///
    /// # Errors
    /// [`UnitsError::Quantity`] when the limit is not a valid quantity.
    pub fn memory_limit_bytes(&self) -> Result<Option<u64>, UnitsError> {
        let limit = self.resources.as_ref().and_then(|r| r.limits.get("memory"));
        limit.map(|q| units::parse_quantity_bytes(&q.0)).transpose()
    }

    /// Effective WiredTiger cache size in GiB: `wiredTigerCacheSizeGB`, else
    /// max(0.25, 0.5 × (memory limit − 1 GiB)), else `None` (no memory limit: mongod decides).
    ///
    /// # Errors
    /// [`UnitsError::Quantity`] when the memory limit is not a valid quantity.
    pub fn wired_tiger_cache_size_gb(&self) -> Result<Option<f64>, UnitsError> {
        if let Some(gb) = self.wired_tiger_cache_size_gb {
            return Ok(Some(gb));
        }
        Ok(self.memory_limit_bytes()?.map(|bytes| {
            let gib = bytes as f64 / (1u64 << 30) as f64;
            (0.5 * (gib - 1.0)).max(MIN_WIRED_TIGER_CACHE_GB)
        }))
    }
}

/// How replica-set members are spread over nodes.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[schemars(transform = crate::api::drop_description)]
pub enum AntiAffinity {
    /// Each member on its own node; members stay Pending when nodes are missing.
    #[default]
    Required,
    /// Spread members when possible.
    Preferred,
}

/// The data each cell is measured on.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct Dataset {
    /// Dataset sizes, strictly ascending (1 to 10). Each is a document count (`250000`, `500k`,
    /// `1M`, `8M`) or a data size (`512MiB`, `4GiB`), all of the same kind. The collection is
    /// seeded to the first size and grown to each next one.
    #[schemars(
        length(min = 1, max = 10),
        inner(length(min = 1, max = 16), pattern(units::DATASET_SIZE_PATTERN))
    )]
    #[x_kube(validation = Rule::new(concat!(
        "self.all(s, s.matches('^[1-9][0-9]{0,8}[kMG]?$')) || ",
        "self.all(s, s.matches('^[1-9][0-9]{0,5}(KiB|MiB|GiB|TiB)$'))"))
        .message("spec.dataset.sizes must be all document counts (500k, 1M) or all data sizes (4GiB)"))]
    #[x_kube(validation = Rule::new(concat!(
        "self.map(s, ", size_value!("s"), ").isSorted() && ",
        "self.all(a, self.exists_one(b, ", size_value!("b"), " == ", size_value!("a"), "))"))
        .message("spec.dataset.sizes must be strictly ascending (each size larger than the one before)"))]
    pub sizes: Vec<String>,

    /// Documents per insert command while seeding (1 to 100000, default 1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 100000), extend("default" = 1000))]
    pub seed_batch_size: Option<u32>,

    /// Concurrent seeding tasks (1 to 256, default 8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 256), extend("default" = 8))]
    pub seed_workers: Option<u32>,

    /// When secondary indexes are built: `after` loading (default; compact indexes) or `before`
    /// (on the empty collection, as plgm does). Results of the two are not comparable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "after"))]
    pub index_build: Option<IndexBuild>,

    /// Seed of the generated document content (default 1); the dataset's identity includes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 1))]
    pub dataset_seed: Option<u64>,

    /// Keep and reuse an already seeded, verified dataset of the same identity instead of
    /// dropping it (default false); useful for external targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = false))]
    pub reuse_dataset: Option<bool>,
}

impl Dataset {
    /// The parsed `sizes`, in order.
    ///
    /// # Errors
    /// The first size that does not parse.
    pub fn parsed_sizes(&self) -> Result<Vec<DatasetSize>, UnitsError> {
        self.sizes
            .iter()
            .map(|s| units::parse_dataset_size(s))
            .collect()
    }

    /// Effective `seedBatchSize` (default 1000).
    pub fn seed_batch_size(&self) -> u32 {
        self.seed_batch_size.unwrap_or(DEFAULT_SEED_BATCH_SIZE)
    }

    /// Effective `seedWorkers` (default 8).
    pub fn seed_workers(&self) -> u32 {
        self.seed_workers.unwrap_or(DEFAULT_SEED_WORKERS)
    }

    /// Effective `indexBuild` (default `after`).
    pub fn index_build(&self) -> IndexBuild {
        self.index_build.unwrap_or_default()
    }

    /// Effective `datasetSeed` (default 1).
    pub fn dataset_seed(&self) -> u64 {
        self.dataset_seed.unwrap_or(DEFAULT_DATASET_SEED)
    }

    /// Effective `reuseDataset` (default false).
    pub fn reuse_dataset(&self) -> bool {
        self.reuse_dataset.unwrap_or(false)
    }
}

/// When secondary indexes are built relative to loading.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[schemars(transform = crate::api::drop_description)]
#[serde(rename_all = "lowercase")]
pub enum IndexBuild {
    /// Load first, then build the indexes.
    #[default]
    After,
    /// Build the indexes on the empty collection, then load.
    Before,
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
    /// is flagged and its cell is not reported as a server result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ComputeResources>,
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

/// `pattern` of a Kubernetes quantity, as the API server's own types declare it.
pub const QUANTITY_PATTERN: &str = "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$";

/// Schema of one quantity (int or string; a string must match the quantity pattern), without
/// the long description k8s-openapi attaches to `Quantity`.
fn quantity_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "pattern": QUANTITY_PATTERN,
        "x-kubernetes-int-or-string": true
    })
}

/// Schema of a resource-name → quantity map.
fn quantity_map_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "maxProperties": 8,
        "additionalProperties": quantity_schema(generator)
    })
}

/// CPU and memory of a container: the `requests` and `limits` of a Kubernetes container,
/// without the rest of `ResourceRequirements`.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct ComputeResources {
    /// Resources reserved for the container, e.g. `cpu: "3"`, `memory: 12Gi`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(schema_with = "quantity_map_schema")]
    pub requests: BTreeMap<String, Quantity>,
    /// Most the container may use, e.g. `cpu: "3"`, `memory: 12Gi`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(schema_with = "quantity_map_schema")]
    pub limits: BTreeMap<String, Quantity>,
}

impl ComputeResources {
    /// The same requests and limits as Kubernetes `ResourceRequirements`.
    pub fn to_resource_requirements(&self) -> ResourceRequirements {
        let non_empty = |m: &BTreeMap<String, Quantity>| (!m.is_empty()).then(|| m.clone());
        ResourceRequirements {
            requests: non_empty(&self.requests),
            limits: non_empty(&self.limits),
            ..Default::default()
        }
    }
}
