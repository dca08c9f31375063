//! The noise canary beside every member of a provisioned replica set: a sidecar running
//! `mongobench canary --serve <pod IP>`, which the runner asks for a probe of the member's
//! node before each cell (docs/results.md, "Noise canaries"). It is idle between probes.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Container, ContainerPort, EnvVar, EnvVarSource, ObjectFieldSelector, ResourceRequirements,
};
use k8s_openapi::api::networking::v1::{NetworkPolicy, NetworkPolicyPort};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::super::pod::read_only_container_security;
use crate::measure::canary::SERVER_CANARY_PORT;

/// Name of the sidecar.
pub const CANARY_CONTAINER: &str = "canary";
/// The sidecar's CPU when the member is Guaranteed (requests = limits): a probe's CPU work
/// (tens of milliseconds of one core) fits one 100 ms CFS period of this quota.
pub const CANARY_CPU: &str = "500m";
/// Its memory then: the probe's two 16 MiB buffers beside the binary.
pub const CANARY_MEMORY: &str = "96Mi";

/// The sidecar, of `image` (the runner's), beside a mongod container of `mongod` resources.
/// A pod is Guaranteed only when every container's requests equal its limits, so the sidecar
/// is given equal ones when mongod has limits, and none otherwise (the pod's class stays what
/// mongod's resources make it).
pub fn canary_container(image: &str, mongod: &ResourceRequirements) -> Container {
    let guaranteed = mongod.limits.as_ref().is_some_and(|l| !l.is_empty());
    let resources = guaranteed.then(|| {
        let amounts = BTreeMap::from([
            ("cpu".to_owned(), Quantity(CANARY_CPU.to_owned())),
            ("memory".to_owned(), Quantity(CANARY_MEMORY.to_owned())),
        ]);
        ResourceRequirements {
            requests: Some(amounts.clone()),
            limits: Some(amounts),
            ..ResourceRequirements::default()
        }
    });
    Container {
        name: CANARY_CONTAINER.to_owned(),
        image: Some(image.to_owned()),
        command: Some(vec!["mongobench".to_owned()]),
        args: Some(vec![
            "canary".to_owned(),
            "--serve".to_owned(),
            "$(POD_IP)".to_owned(),
            "--port".to_owned(),
            SERVER_CANARY_PORT.to_string(),
        ]),
        env: Some(vec![EnvVar {
            name: "POD_IP".to_owned(),
            value_from: Some(EnvVarSource {
                field_ref: Some(ObjectFieldSelector {
                    field_path: "status.podIP".to_owned(),
                    ..ObjectFieldSelector::default()
                }),
                ..EnvVarSource::default()
            }),
            ..EnvVar::default()
        }]),
        ports: Some(vec![ContainerPort {
            name: Some("canary".to_owned()),
            container_port: i32::from(SERVER_CANARY_PORT),
            ..ContainerPort::default()
        }]),
        resources,
        security_context: Some(read_only_container_security()),
        ..Container::default()
    }
}

/// Opens the canary's port to the pods `policy` already admits (the benchmark's runners).
pub fn admit_probes(policy: &mut NetworkPolicy) {
    let rules = policy.spec.as_mut().and_then(|s| s.ingress.as_mut());
    for rule in rules.into_iter().flatten() {
        rule.ports
            .get_or_insert_with(Vec::new)
            .push(NetworkPolicyPort {
                protocol: Some("TCP".to_owned()),
                port: Some(IntOrString::Int(i32::from(SERVER_CANARY_PORT))),
                ..NetworkPolicyPort::default()
            });
    }
}
