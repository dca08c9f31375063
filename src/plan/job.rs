//! The plan file: what one runner process executes (its targets on one platform, side by
//! side), written by the operator into a ConfigMap the Job mounts, or built in memory by
//! `mongobench run`.

use serde::{Deserialize, Serialize};

use crate::api::MongoBenchmarkSpec;

/// Platform name of a local run (no Kubernetes).
pub const LOCAL_PLATFORM: &str = "local";

/// The `planVersion` this code writes and reads. A runner refuses a plan of any other version
/// (or without one) rather than guess what an operator of another release meant; raise it
/// whenever a field changes meaning or a required one is added.
pub const PLAN_VERSION: u64 = 1;

/// The key of the version in a plan file.
pub const PLAN_VERSION_KEY: &str = "planVersion";

/// One runner's assignment: the targets it benchmarks on one platform, side by side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobPlan {
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
    /// The targets, in spec order; their repetitions run interleaved.
    pub targets: Vec<JobTarget>,
    /// Cell ids already done (their results exist); the runner skips them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub completed_cells: Vec<String>,
    /// The whole spec: the runner derives the workload and cells from it with the same code
    /// as the operator.
    pub spec: MongoBenchmarkSpec,
}

/// One target of a runner.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobTarget {
    /// The target's name.
    pub name: String,
    /// The environment variable holding its connection string.
    pub uri_env: String,
    /// Initiate the replica set before seeding (provisioned targets): the member addresses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub initiate_members: Vec<String>,
    /// Replica-set name for initiation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica_set_name: Option<String>,
}

impl JobPlan {
    /// The plan file's text: YAML with [`PLAN_VERSION_KEY`] first, then the plan.
    pub fn to_yaml(&self) -> String {
        let plan = serde_yaml::to_value(self).expect("a plan serializes");
        let mut versioned = serde_yaml::Mapping::new();
        versioned.insert(PLAN_VERSION_KEY.into(), PLAN_VERSION.into());
        if let serde_yaml::Value::Mapping(fields) = plan {
            versioned.extend(fields);
        }
        serde_yaml::to_string(&versioned).expect("a plan serializes")
    }
}
