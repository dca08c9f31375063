//! The hardware and image facts of a provisioned target, read from its pods and their nodes
//! when its runner's plan is written: node name, zone, instance type, CPU platform and
//! architecture per member, and the image digest the kubelet pulled. The runner copies them
//! into every result (mongod cannot tell which Kubernetes node it runs on).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Node, Pod};
use kube::Api;

use crate::api::{MongoBenchmark, Platform, Target};
use crate::contract::{MemberFacts, ServerFacts};
use crate::operator::Error;
use crate::operator::render::names;

/// Node labels the facts come from.
pub const ZONE_LABEL: &str = "topology.kubernetes.io/zone";
pub const INSTANCE_TYPE_LABEL: &str = "node.kubernetes.io/instance-type";
pub const ARCH_LABEL: &str = "kubernetes.io/arch";
/// Set by whoever runs the cluster; GKE does not label the CPU platform itself.
pub const CPU_PLATFORM_LABEL: &str = "mongobench.io/cpu-platform";
pub const MACHINE_FAMILY_LABEL: &str = "cloud.google.com/machine-family";

/// The facts of the members of replica set `server` from its pods (by ordinal; `None` for a
/// pod that is gone) and their nodes (by name).
pub fn server_facts(
    server: &str,
    namespace: &str,
    image: Option<&str>,
    pods: &[Option<Pod>],
    nodes: &BTreeMap<String, Node>,
) -> ServerFacts {
    let members = pods
        .iter()
        .enumerate()
        .map(|(ordinal, pod)| {
            let member = names::member_address(server, namespace, ordinal as u32);
            let node_name = pod
                .as_ref()
                .and_then(|p| p.spec.as_ref()?.node_name.clone());
            let node = node_name.as_ref().and_then(|n| nodes.get(n));
            let label =
                |key: &str| node.and_then(|n| n.metadata.labels.as_ref()?.get(key).cloned());
            MemberFacts {
                member,
                zone: label(ZONE_LABEL),
                instance_type: label(INSTANCE_TYPE_LABEL),
                cpu_platform: label(CPU_PLATFORM_LABEL).or_else(|| label(MACHINE_FAMILY_LABEL)),
                architecture: label(ARCH_LABEL).or_else(|| {
                    node.and_then(|n| {
                        Some(n.status.as_ref()?.node_info.as_ref()?.architecture.clone())
                    })
                }),
                node_name,
            }
        })
        .collect();
    ServerFacts {
        image: image.map(str::to_owned),
        image_digest: pods.iter().flatten().find_map(image_digest),
        members,
    }
}

/// The digest in the mongod container's `imageID` (`docker.io/library/mongo@sha256:…`).
fn image_digest(pod: &Pod) -> Option<String> {
    pod.status
        .as_ref()?
        .container_statuses
        .iter()
        .flatten()
        .find(|c| c.name == names::MONGOD_CONTAINER)?
        .image_id
        .split_once('@')
        .map(|(_, digest)| digest.to_owned())
}

/// Reads the facts of every provisioned target of `targets` on `platform` (by target name).
///
/// # Errors
/// [`Error::Kube`] when a pod or node cannot be read.
pub async fn gather(
    client: &kube::Client,
    bench: &MongoBenchmark,
    namespace: &str,
    targets: &[&Target],
    platform: &Platform,
) -> Result<BTreeMap<String, ServerFacts>, Error> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let node_api: Api<Node> = Api::all(client.clone());
    let bench_name = kube::ResourceExt::name_any(bench);
    let mut nodes = BTreeMap::new();
    let mut out = BTreeMap::new();
    for target in targets.iter().filter(|t| t.is_provisioned()) {
        // A sharded target is described by its first shard: the members that hold data.
        let (server, count) = if target.is_sharded() {
            let shards = target.shards.clone().unwrap_or_default();
            let part = names::Part::Shard(0);
            let name = names::part_name(&bench_name, &target.name, &platform.name, part);
            (name, shards.members())
        } else {
            let name = names::server_name(&bench_name, &target.name, &platform.name);
            (name, bench.spec.replica_set().members())
        };
        let mut members = Vec::new();
        for ordinal in 0..count {
            let name = format!("{server}-{ordinal}");
            let pod = pods
                .get_opt(&name)
                .await
                .map_err(|e| Error::kube(format!("reading pod {namespace}/{name}"), e))?;
            if let Some(node) = pod
                .as_ref()
                .and_then(|p| p.spec.as_ref()?.node_name.clone())
                && !nodes.contains_key(&node)
                && let Some(n) = node_api
                    .get_opt(&node)
                    .await
                    .map_err(|e| Error::kube(format!("reading node {node}"), e))?
            {
                nodes.insert(node, n);
            }
            members.push(pod);
        }
        out.insert(
            target.name.clone(),
            server_facts(
                &server,
                namespace,
                target.image.as_deref(),
                &members,
                &nodes,
            ),
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn members_get_their_nodes_labels_and_the_pulled_digest() {
        let pod = |ordinal: u32, node: &str, image_id: &str| -> Option<Pod> {
            serde_json::from_value(json!({
                "metadata": {"name": format!("b-a-p-{ordinal}")},
                "spec": {"nodeName": node, "containers": []},
                "status": {"containerStatuses": [{
                    "name": "mongod", "image": "mongo:8.0.4", "imageID": image_id,
                    "ready": true, "restartCount": 0
                }]}
            }))
            .ok()
        };
        let node = |labels: serde_json::Value, arch: &str| -> Node {
            serde_json::from_value(json!({
                "metadata": {"name": "n", "labels": labels},
                "status": {"nodeInfo": {"architecture": arch, "bootID": "", "containerRuntimeVersion": "",
                    "kernelVersion": "", "kubeProxyVersion": "", "kubeletVersion": "", "machineID": "",
                    "operatingSystem": "linux", "osImage": "", "systemUUID": ""}}
            }))
            .unwrap()
        };
        let nodes = BTreeMap::from([
            (
                "c4a-0".to_owned(),
                node(
                    json!({ZONE_LABEL: "us-central1-a", INSTANCE_TYPE_LABEL: "c4a-standard-4",
                           ARCH_LABEL: "arm64", MACHINE_FAMILY_LABEL: "c4a"}),
                    "arm64",
                ),
            ),
            (
                "n2-1".to_owned(),
                node(
                    json!({ZONE_LABEL: "us-central1-b", CPU_PLATFORM_LABEL: "intel-icelake",
                           MACHINE_FAMILY_LABEL: "n2"}),
                    "amd64",
                ),
            ),
        ]);
        let digest = "sha256:0123abcd";
        let pods = [
            pod(0, "c4a-0", &format!("docker.io/library/mongo@{digest}")),
            pod(1, "n2-1", ""),
            None,
        ];
        let facts = server_facts("b-a-p", "perf", Some("mongo:8.0.4"), &pods, &nodes);
        assert_eq!(facts.image.as_deref(), Some("mongo:8.0.4"));
        assert_eq!(facts.image_digest.as_deref(), Some(digest));
        let some = |s: &str| Some(s.to_owned());
        assert_eq!(
            facts.members,
            [
                MemberFacts {
                    member: "b-a-p-0.b-a-p.perf.svc.cluster.local:27017".into(),
                    node_name: some("c4a-0"),
                    zone: some("us-central1-a"),
                    instance_type: some("c4a-standard-4"),
                    cpu_platform: some("c4a"),
                    architecture: some("arm64"),
                },
                MemberFacts {
                    member: "b-a-p-1.b-a-p.perf.svc.cluster.local:27017".into(),
                    node_name: some("n2-1"),
                    zone: some("us-central1-b"),
                    instance_type: None,
                    cpu_platform: some("intel-icelake"),
                    architecture: some("amd64"),
                },
                MemberFacts {
                    member: "b-a-p-2.b-a-p.perf.svc.cluster.local:27017".into(),
                    ..MemberFacts::default()
                },
            ]
        );
    }
}
