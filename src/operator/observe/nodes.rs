//! The Nodes of a platform, read before its first runner: what each allocates, whether it is
//! ready and not cordoned. `decide/placement.rs` counts whether the replica sets fit on them.

use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, ListParams};
use kube::{Client, ResourceExt};

use crate::api::Platform;
use crate::api::units::{parse_quantity_bytes, parse_quantity_millis};
use crate::operator::Error;

/// What a pass read of one node of a platform.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeCapacity {
    /// Node name.
    pub name: String,
    /// Its `Ready` condition is `True`.
    pub ready: bool,
    /// Not cordoned (`spec.unschedulable` unset or false).
    pub schedulable: bool,
    /// Allocatable CPU, millicores.
    pub cpu_millis: Option<u64>,
    /// Allocatable memory, bytes.
    pub memory_bytes: Option<u64>,
    /// Allocatable pods.
    pub pods: Option<u64>,
}

/// The nodes of one platform, as a pass could read them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlatformNodes {
    /// The nodes matching the platform's effective node selector.
    Listed(Vec<NodeCapacity>),
    /// The list failed (RBAC without `nodes: list`, for one); the message says why.
    Unreadable(String),
}

/// What a pass needs of a Node.
pub fn node_capacity(node: &Node) -> NodeCapacity {
    let status = node.status.as_ref();
    let ready = status
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"));
    let allocatable = status.and_then(|s| s.allocatable.as_ref());
    let quantity = |name: &str, parse: fn(&str) -> Result<u64, crate::api::UnitsError>| {
        allocatable
            .and_then(|a| a.get(name))
            .and_then(|q| parse(&q.0).ok())
    };
    NodeCapacity {
        name: node.name_any(),
        ready,
        schedulable: !node
            .spec
            .as_ref()
            .and_then(|s| s.unschedulable)
            .unwrap_or(false),
        cpu_millis: quantity("cpu", parse_quantity_millis),
        memory_bytes: quantity("memory", parse_quantity_bytes),
        pods: quantity("pods", parse_quantity_bytes),
    }
}

/// The nodes matching `platform`'s effective node selector. A list the operator may not make
/// (401, 403, 404) is reported, not an error; other failures fail the pass, which is retried
/// rather than deciding on missing facts.
pub(super) async fn platform_nodes(
    client: &Client,
    platform: &Platform,
) -> Result<PlatformNodes, Error> {
    let selector: Vec<String> = platform
        .effective_node_selector()
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let nodes: Api<Node> = Api::all(client.clone());
    match nodes
        .list(&ListParams::default().labels(&selector.join(",")))
        .await
    {
        Ok(list) => Ok(PlatformNodes::Listed(
            list.items.iter().map(node_capacity).collect(),
        )),
        Err(kube::Error::Api(s)) if matches!(s.code, 401 | 403 | 404) => Ok(
            PlatformNodes::Unreadable(format!("listing nodes: {}", s.message)),
        ),
        Err(e) => Err(Error::kube(
            format!("listing the nodes of platform {}", platform.name),
            e,
        )),
    }
}
