//! What a pass knows of one benchmark's children, as plain data: [`Observed`] and the parts it
//! is made of. The decision that follows is a pure function of it.

use std::collections::BTreeMap;

use k8s_openapi::jiff::Timestamp;

use super::nodes::PlatformNodes;
use crate::contract::Activity;
use crate::result::CellResult;

/// One target on one platform: `(target name, platform name)` as the spec writes them.
pub type Slot = (String, String);

/// What one runner Job runs.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RunnerKey {
    /// One target on a platform.
    Target(Slot),
    /// Every target of a platform (named as the spec writes it), interleaved.
    Platform(String),
}

impl RunnerKey {
    /// The key of the runner of `targets` on `platform`.
    pub fn of<S: AsRef<str>>(platform: &str, targets: &[S]) -> RunnerKey {
        match targets {
            [one] => RunnerKey::Target((one.as_ref().to_owned(), platform.to_owned())),
            _ => RunnerKey::Platform(platform.to_owned()),
        }
    }

    /// The platform it runs on.
    pub fn platform(&self) -> &str {
        match self {
            RunnerKey::Target((_, p)) | RunnerKey::Platform(p) => p,
        }
    }
}

/// The state of a runner Job.
#[derive(Debug, Clone, PartialEq)]
pub enum JobState {
    /// Pods are pending or running (or being retried).
    Active,
    /// The runner exited 0.
    Succeeded,
    /// The runner failed after its retries; the message is the pod's termination message
    /// (or the Job's own reason when no pod said anything).
    Failed {
        /// Why.
        message: String,
    },
}

/// Why a server pod is not running.
#[derive(Debug, Clone, PartialEq)]
pub enum PodProblem {
    /// The scheduler found no node (its message says why).
    Unschedulable {
        /// The scheduler's message.
        message: String,
    },
    /// The image cannot be pulled.
    ImagePull {
        /// The image reference.
        image: String,
        /// `ErrImagePull`, `ImagePullBackOff`, `InvalidImageName`.
        reason: String,
        /// The kubelet's message.
        message: String,
    },
    /// A container keeps exiting and the kubelet backs off restarting it.
    CrashLoop {
        /// The container.
        container: String,
        /// Restarts so far.
        restarts: i32,
        /// Why it last ended (`OOMKilled`, `Error`, ...), with its exit code.
        last: String,
    },
}

/// A server pod of the benchmark.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerPod {
    /// Pod name.
    pub name: String,
    /// Its slot.
    pub slot: Slot,
    /// Node it is bound to.
    pub node: Option<String>,
    /// When it was created (problems count from then).
    pub created: Option<Timestamp>,
    /// Why it cannot run, if it cannot.
    pub problem: Option<PodProblem>,
}

/// A runner pod that cannot run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunnerPod {
    /// Pod name.
    pub name: String,
    /// Its runner.
    pub runner: RunnerKey,
    /// When it was created (problems count from then).
    pub created: Option<Timestamp>,
    /// Why it cannot run.
    pub problem: PodProblem,
}

/// Whose pods a refused creation was for.
#[derive(Debug, Clone, PartialEq)]
pub enum Creator {
    /// The StatefulSet of a slot.
    Servers(Slot),
    /// A runner Job.
    Runner(RunnerKey),
}

/// A StatefulSet or Job whose controller cannot create its pods: admission (Pod Security,
/// a ResourceQuota, a webhook) refused them, so no Pod exists to say why, only the
/// controller's `FailedCreate` Event.
#[derive(Debug, Clone, PartialEq)]
pub struct FailedCreate {
    /// Whose pods.
    pub creator: Creator,
    /// `StatefulSet` or `Job`.
    pub kind: &'static str,
    /// The object's name.
    pub name: String,
    /// When the object was created (the deadline counts from then).
    pub created: Option<Timestamp>,
    /// The latest refusal, as the controller reported it.
    pub message: String,
}

/// A result ConfigMap of the current run.
#[derive(Debug, Clone, PartialEq)]
pub enum ObservedResult {
    /// A readable result document (complete or incomplete).
    Document {
        /// ConfigMap name.
        config_map: String,
        /// The document.
        result: Box<CellResult>,
    },
    /// A ConfigMap labelled as a result whose document cannot be read.
    Unreadable {
        /// ConfigMap name.
        config_map: String,
        /// Why.
        message: String,
    },
}

impl ObservedResult {
    /// Name of the ConfigMap.
    pub fn config_map(&self) -> &str {
        match self {
            ObservedResult::Document { config_map, .. }
            | ObservedResult::Unreadable { config_map, .. } => config_map,
        }
    }
}

/// Everything a pass needs to know about one benchmark's children.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Observed {
    /// Result documents by cell id.
    pub results: BTreeMap<String, ObservedResult>,
    /// Ready server pods of each slot: its StatefulSet's members, or a sharded target's
    /// members of every set plus its routers (present = its servers exist).
    pub stateful_sets: BTreeMap<Slot, u32>,
    /// Server pods of the benchmark, on any slot.
    pub server_pods: Vec<ServerPod>,
    /// Pods of active runner Jobs that cannot run (unschedulable, image not pullable).
    pub runner_pods: Vec<RunnerPod>,
    /// Server StatefulSets and active runner Jobs whose pods are refused at creation.
    pub failed_creates: Vec<FailedCreate>,
    /// Runner Jobs.
    pub jobs: BTreeMap<RunnerKey, JobState>,
    /// True when the runners' ServiceAccount exists (with its Role and RoleBinding).
    pub runner_access: bool,
    /// The `completedCells` of each runner's plan ConfigMap.
    pub plans: BTreeMap<RunnerKey, Vec<String>>,
    /// What each platform's runner last said it is doing (by platform name).
    pub activities: BTreeMap<String, Activity>,
    /// The nodes of each platform that has two or more provisioned targets and no runner Job
    /// yet: what decides whether its replica sets are created together (by platform name).
    pub nodes: BTreeMap<String, PlatformNodes>,
}
