//! The replica set of one provisioned target on one platform: a StatefulSet of `members`
//! mongod pods, a headless Service that publishes not-ready addresses (members resolve each
//! other before the set is initiated), and a NetworkPolicy that admits only this benchmark's
//! pods. Pure builders: plain k8s-openapi objects, no I/O.
//!
//! Pinning: the platform's effective node selector and tolerations (with `arch: arm64`, the
//! arch selector and the toleration of the arm64 taint), pod anti-affinity on
//! `kubernetes.io/hostname` (required: one member per node), the requested resources, and one
//! volume per member from the platform's StorageClass, deleted with the StatefulSet. With
//! authentication, each member gets the benchmark's keyfile (`keyfile.rs`).

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{
    StatefulSet, StatefulSetPersistentVolumeClaimRetentionPolicy, StatefulSetSpec,
};
use k8s_openapi::api::core::v1::{
    Affinity, Container, ContainerPort, EnvVar, PersistentVolumeClaim, PersistentVolumeClaimSpec,
    PodAffinity, PodAffinityTerm, PodAntiAffinity, PodSpec, PodTemplateSpec, Probe,
    ResourceRequirements, Service, ServicePort, ServiceSpec, TCPSocketAction, VolumeMount,
    VolumeResourceRequirements, WeightedPodAffinityTerm,
};
use k8s_openapi::api::networking::v1::{
    NetworkPolicy, NetworkPolicyEgressRule, NetworkPolicyIngressRule, NetworkPolicyPeer,
    NetworkPolicyPort, NetworkPolicySpec,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::ResourceExt;

use super::meta::{child_meta, non_empty};
use super::names::{self, Component, MONGOD_PORT};
use super::pod::{RunAs, container_security, pod_security, secret_env};
use super::secrets;
use crate::api::{
    AntiAffinity, Distribution, MongoBenchmark, MongoBenchmarkSpec, Placement, Platform, Target,
};
use crate::operator::Error;
use crate::operator::error::SpecError;

/// The three objects of one replica set.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerObjects {
    /// The members.
    pub stateful_set: StatefulSet,
    /// Headless Service giving each member a stable DNS name.
    pub service: Service,
    /// Admits only this benchmark's pods to mongod.
    pub network_policy: NetworkPolicy,
}

/// Name of the data volume claim template (claims are `data-<statefulset>-<ordinal>`).
pub const DATA_VOLUME: &str = "data";
/// The mongod arguments of `target`: replica-set name, bind address, with authentication
/// `--auth` and the keyfile, the WiredTiger cache (when known), then the target's own
/// `mongodArgs`.
///
/// # Errors
/// [`Error::Spec`] when the memory limit is not a quantity.
pub fn mongod_args(
    bench: &MongoBenchmark,
    target: &Target,
    replica_set: &str,
) -> Result<Vec<String>, Error> {
    set_args(bench, target, replica_set, SetRole::ReplicaSet)
}

/// What a replica set is to its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetRole {
    /// The whole target.
    ReplicaSet,
    /// The config server set of a sharded target.
    ConfigServer,
    /// One shard of a sharded target.
    Shard,
}

fn set_args(
    bench: &MongoBenchmark,
    target: &Target,
    replica_set: &str,
    role: SetRole,
) -> Result<Vec<String>, Error> {
    let mut args = vec!["--replSet".to_owned(), replica_set.to_owned()];
    // Both roles change the default port (27019, 27018); every member listens on 27017.
    match role {
        SetRole::ReplicaSet => {}
        SetRole::ConfigServer => args.push("--configsvr".to_owned()),
        SetRole::Shard => args.push("--shardsvr".to_owned()),
    }
    if role != SetRole::ReplicaSet {
        args.extend(["--port".to_owned(), MONGOD_PORT.to_string()]);
    }
    args.push("--bind_ip_all".to_owned());
    if bench.spec.replica_set().auth() {
        args.push("--auth".to_owned());
        args.push("--keyFile".to_owned());
        args.push(format!("{KEYFILE_DIR}/{}", secrets::KEYFILE_KEY));
    }
    let cache = bench
        .spec
        .replica_set()
        .wired_tiger_cache_size_gb()
        .map_err(|error| SpecError::Field {
            field: "spec.replicaSet.resources",
            error,
        })?;
    if let Some(gb) = cache {
        args.push("--wiredTigerCacheSizeGB".to_owned());
        args.push(format!("{gb}"));
    }
    args.extend(target.mongod_args.iter().cloned());
    Ok(args)
}

/// A container of `image` serving the MongoDB port with `resources`, its TCP readiness probe
/// and the restricted security context; callers add the command, arguments, environment and
/// mounts.
pub(crate) fn serving_container(
    name: &str,
    image: &str,
    resources: ResourceRequirements,
) -> Container {
    Container {
        name: name.to_owned(),
        image: Some(image.to_owned()),
        ports: Some(vec![ContainerPort {
            name: Some("mongodb".to_owned()),
            container_port: MONGOD_PORT,
            ..ContainerPort::default()
        }]),
        resources: Some(resources),
        // TCP only: an RS-aware probe would keep members unready until the runner
        // initiates the set, and mongosh probes add CPU noise to the measurement.
        readiness_probe: Some(Probe {
            tcp_socket: Some(TCPSocketAction {
                port: IntOrString::Int(MONGOD_PORT),
                ..TCPSocketAction::default()
            }),
            period_seconds: Some(5),
            ..Probe::default()
        }),
        security_context: Some(container_security()),
        ..Container::default()
    }
}

/// A Service of the MongoDB port in front of the pods `labels` select.
pub(crate) fn mongodb_service(metadata: ObjectMeta, labels: &BTreeMap<String, String>) -> Service {
    Service {
        metadata,
        spec: Some(ServiceSpec {
            selector: Some(labels.clone()),
            ports: Some(vec![ServicePort {
                name: Some("mongodb".to_owned()),
                port: MONGOD_PORT,
                target_port: Some(IntOrString::Int(MONGOD_PORT)),
                ..ServicePort::default()
            }]),
            ..ServiceSpec::default()
        }),
        ..Service::default()
    }
}

pub(crate) fn match_labels(labels: &BTreeMap<String, String>) -> LabelSelector {
    LabelSelector {
        match_labels: Some(labels.clone()),
        ..LabelSelector::default()
    }
}

/// One member per node (`Required`) or spread where possible (`Preferred`).
pub(crate) fn anti_affinity(kind: AntiAffinity, selector: &LabelSelector) -> PodAntiAffinity {
    let term = PodAffinityTerm {
        label_selector: Some(selector.clone()),
        topology_key: "kubernetes.io/hostname".to_owned(),
        ..PodAffinityTerm::default()
    };
    match kind {
        AntiAffinity::Required => PodAntiAffinity {
            required_during_scheduling_ignored_during_execution: Some(vec![term]),
            ..PodAntiAffinity::default()
        },
        AntiAffinity::Preferred => PodAntiAffinity {
            preferred_during_scheduling_ignored_during_execution: Some(vec![
                WeightedPodAffinityTerm {
                    weight: 100,
                    pod_affinity_term: term,
                },
            ]),
            ..PodAntiAffinity::default()
        },
    }
}

/// Label the StatefulSet controller puts on each member pod: its ordinal.
const POD_INDEX_LABEL: &str = "apps.kubernetes.io/pod-index";

/// Under `placement: SharedNodes`, member i of every provisioned target but the anchor (the
/// baseline if provisioned, else the first provisioned target) must run on the node of the
/// anchor's member i: the scheduler adds the pod's own ordinal to the selector
/// (`matchLabelKeys`). `None` for the anchor and under `OwnNodes`.
fn shared_nodes(
    bench: &MongoBenchmark,
    target: &Target,
    platform: &Platform,
) -> Option<PodAffinity> {
    if bench.spec.placement() != Placement::SharedNodes {
        return None;
    }
    let anchor = shared_nodes_anchor(&bench.spec)?;
    if anchor.name == target.name {
        return None;
    }
    let anchor_labels = names::slot_labels(
        &bench.name_any(),
        Component::Server,
        &anchor.name,
        &platform.name,
    );
    Some(PodAffinity {
        required_during_scheduling_ignored_during_execution: Some(vec![PodAffinityTerm {
            label_selector: Some(match_labels(&anchor_labels)),
            match_label_keys: Some(vec![POD_INDEX_LABEL.to_owned()]),
            topology_key: "kubernetes.io/hostname".to_owned(),
            ..PodAffinityTerm::default()
        }]),
        ..PodAffinity::default()
    })
}

/// The target whose members the others follow onto their nodes under `SharedNodes`.
pub(crate) fn shared_nodes_anchor(spec: &MongoBenchmarkSpec) -> Option<&Target> {
    let provisioned = |t: &&Target| t.is_provisioned();
    spec.target(spec.baseline())
        .filter(provisioned)
        .or_else(|| spec.targets.iter().find(provisioned))
}

/// Builds the replica set of `target` on `platform`.
///
/// # Errors
/// [`Error::Spec`] for a target without an image, a missing `replicaSet.storageSize` or a bad
/// memory limit; [`Error::Incomplete`] for a MongoBenchmark without namespace or uid.
pub fn server_objects(
    bench: &MongoBenchmark,
    target: &Target,
    platform: &Platform,
    runner_image: &str,
) -> Result<ServerObjects, Error> {
    let bench_name = bench.name_any();
    let set = SetShape {
        name: names::server_name(&bench_name, &target.name, &platform.name),
        labels: names::slot_labels(&bench_name, Component::Server, &target.name, &platform.name),
        members: bench.spec.replica_set().members(),
        role: SetRole::ReplicaSet,
        canary_image: Some(runner_image.to_owned()),
    };
    replica_set_objects(bench, target, platform, &set)
}

/// The image and distribution of a provisioned `target`.
///
/// # Errors
/// [`Error::Spec`] for an external target or one without a distribution.
pub(crate) fn image_of(target: &Target) -> Result<(&str, Distribution), Error> {
    let image = target
        .image
        .as_deref()
        .ok_or_else(|| Error::from(SpecError::ExternalHasNoServers(target.name.clone())))?;
    let distribution = target
        .distribution
        .ok_or_else(|| Error::from(SpecError::NoDistribution(target.name.clone())))?;
    Ok((image, distribution))
}

/// One replica set of a target: its name (also the StatefulSet's and the Service's), the
/// labels its pods carry and select on, its size and role.
#[derive(Debug, Clone, PartialEq)]
pub struct SetShape {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub members: u32,
    pub role: SetRole,
    /// The image of the noise canary beside each member (the runner's); `None` for none.
    pub canary_image: Option<String>,
}

/// The StatefulSet, headless Service and NetworkPolicy of one replica set of `target`.
pub(crate) fn replica_set_objects(
    bench: &MongoBenchmark,
    target: &Target,
    platform: &Platform,
    set: &SetShape,
) -> Result<ServerObjects, Error> {
    let bench_name = bench.name_any();
    if bench.namespace().is_none() {
        return Err(Error::Incomplete(bench_name));
    }
    let (image, distribution) = image_of(target)?;
    let storage = bench
        .spec
        .replica_set()
        .storage_size
        .clone()
        .ok_or_else(|| Error::from(SpecError::NoStorageSize))?;
    let metadata = child_meta(bench, &set.name, &set.labels)?;
    let selector = match_labels(&set.labels);
    let member = Member {
        image,
        distribution,
        args: set_args(bench, target, &set.name, set.role)?,
    };
    let pod_spec = member.pod(bench, target, platform, set, &selector);
    let stateful_set = StatefulSet {
        metadata: metadata.clone(),
        spec: Some(StatefulSetSpec {
            replicas: Some(i32::try_from(set.members).unwrap_or(i32::MAX)),
            service_name: Some(set.name.clone()),
            pod_management_policy: Some("Parallel".to_owned()),
            persistent_volume_claim_retention_policy: Some(
                StatefulSetPersistentVolumeClaimRetentionPolicy {
                    when_deleted: Some("Delete".to_owned()),
                    when_scaled: Some("Retain".to_owned()),
                },
            ),
            selector: selector.clone(),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(set.labels.clone()),
                    ..ObjectMeta::default()
                }),
                spec: Some(pod_spec),
            },
            volume_claim_templates: Some(vec![data_claim(set, platform, storage)]),
            ..StatefulSetSpec::default()
        }),
        ..StatefulSet::default()
    };
    let mut service = mongodb_service(metadata.clone(), &set.labels);
    if let Some(spec) = service.spec.as_mut() {
        spec.cluster_ip = Some("None".to_owned());
        spec.publish_not_ready_addresses = Some(true);
    }
    let mut network_policy = admit_benchmark_pods(&bench_name, metadata, selector);
    if set.canary_image.is_some() {
        canary::admit_probes(&mut network_policy);
    }
    Ok(ServerObjects {
        stateful_set,
        service,
        network_policy,
    })
}

/// One member's volume from the platform's StorageClass.
fn data_claim(set: &SetShape, platform: &Platform, storage: Quantity) -> PersistentVolumeClaim {
    PersistentVolumeClaim {
        metadata: ObjectMeta {
            name: Some(DATA_VOLUME.to_owned()),
            labels: Some(set.labels.clone()),
            ..ObjectMeta::default()
        },
        spec: Some(PersistentVolumeClaimSpec {
            access_modes: Some(vec!["ReadWriteOnce".to_owned()]),
            resources: Some(VolumeResourceRequirements {
                requests: Some(BTreeMap::from([("storage".to_owned(), storage)])),
                ..VolumeResourceRequirements::default()
            }),
            storage_class_name: platform.storage_class_name.clone(),
            ..PersistentVolumeClaimSpec::default()
        }),
        ..PersistentVolumeClaim::default()
    }
}

/// The mongod of one member: its image, distribution and arguments.
struct Member<'a> {
    image: &'a str,
    distribution: Distribution,
    args: Vec<String>,
}

impl Member<'_> {
    /// The pod of a member of `set`: mongod (with the keyfile under authentication) and the
    /// canary beside it, pinned to the platform's nodes, one member per node.
    fn pod(
        self,
        bench: &MongoBenchmark,
        target: &Target,
        platform: &Platform,
        set: &SetShape,
        selector: &LabelSelector,
    ) -> PodSpec {
        let rs = bench.spec.replica_set();
        let resources = rs
            .resources
            .as_ref()
            .map(|r| r.to_resource_requirements())
            .unwrap_or_default();
        let mut env = self.env();
        let mut mounts = vec![VolumeMount {
            name: DATA_VOLUME.to_owned(),
            mount_path: "/data/db".to_owned(),
            ..VolumeMount::default()
        }];
        let mut volumes = Vec::new();
        let mut init_containers = Vec::new();
        if rs.auth() {
            // Both images' entrypoints create this user (role root) on an empty data
            // directory, before mongod starts with --replSet (specs/kubernetes.md §11).
            let admin = secrets::admin_name(bench);
            env.push(secret_env(
                "MONGO_INITDB_ROOT_USERNAME",
                &admin,
                secrets::USERNAME_KEY,
            ));
            env.push(secret_env(
                "MONGO_INITDB_ROOT_PASSWORD",
                &admin,
                secrets::PASSWORD_KEY,
            ));
            let keyfile = Keyfile::of(bench, self.image, &resources);
            mounts.push(keyfile.mount);
            volumes.extend(keyfile.volumes);
            init_containers.push(keyfile.init_container);
        }
        let canary = set
            .canary_image
            .as_deref()
            .map(|canary_image| canary::canary_container(canary_image, &resources));
        let container = Container {
            args: Some(self.args),
            env: non_empty(env),
            volume_mounts: Some(mounts),
            ..serving_container(names::MONGOD_CONTAINER, self.image, resources)
        };
        PodSpec {
            affinity: Some(Affinity {
                pod_anti_affinity: Some(anti_affinity(rs.anti_affinity(), selector)),
                pod_affinity: shared_nodes(bench, target, platform),
                ..Affinity::default()
            }),
            containers: std::iter::once(container).chain(canary).collect(),
            init_containers: non_empty(init_containers),
            // Neither mongod nor the canary calls the Kubernetes API: no token in their pods.
            automount_service_account_token: Some(false),
            node_selector: non_empty(platform.effective_node_selector()),
            tolerations: non_empty(platform.effective_tolerations()),
            security_context: Some(pod_security(RunAs::of(self.distribution), true)),
            // The canary reads the server process's CPU time (docs/design.md, "Where the
            // server figures come from"): it must see the process.
            share_process_namespace: set.canary_image.is_some().then_some(true),
            volumes: non_empty(volumes),
            ..PodSpec::default()
        }
    }

    /// The environment its distribution's entrypoint needs before authentication's.
    fn env(&self) -> Vec<EnvVar> {
        if self.distribution == Distribution::Percona {
            // The entrypoint otherwise starts a telemetry agent beside mongod: CPU the
            // measurement does not want.
            vec![EnvVar {
                name: "PERCONA_TELEMETRY_DISABLE".to_owned(),
                value: Some("1".to_owned()),
                ..EnvVar::default()
            }]
        } else {
            Vec::new()
        }
    }
}

/// A NetworkPolicy for the server pods `selector` picks: in, only `bench_name`'s pods, on the
/// mongod port; out, only to `bench_name`'s pods on the mongod port (replication, a sharded
/// cluster's parts) and to DNS. A server has no business reaching anything else.
pub(crate) fn admit_benchmark_pods(
    bench_name: &str,
    metadata: ObjectMeta,
    selector: LabelSelector,
) -> NetworkPolicy {
    let benchmark_pods = vec![NetworkPolicyPeer {
        pod_selector: Some(match_labels(&BTreeMap::from([
            (
                "app.kubernetes.io/name".to_owned(),
                names::APP_NAME.to_owned(),
            ),
            (
                names::BENCHMARK_LABEL.to_owned(),
                names::label_value(bench_name),
            ),
        ]))),
        ..NetworkPolicyPeer::default()
    }];
    let port = |protocol: &str, port: i32| NetworkPolicyPort {
        protocol: Some(protocol.to_owned()),
        port: Some(IntOrString::Int(port)),
        ..NetworkPolicyPort::default()
    };
    NetworkPolicy {
        metadata,
        spec: Some(NetworkPolicySpec {
            pod_selector: Some(selector),
            policy_types: Some(vec!["Ingress".to_owned(), "Egress".to_owned()]),
            ingress: Some(vec![NetworkPolicyIngressRule {
                from: Some(benchmark_pods.clone()),
                ports: Some(vec![port("TCP", MONGOD_PORT)]),
            }]),
            egress: Some(vec![
                NetworkPolicyEgressRule {
                    to: Some(benchmark_pods),
                    ports: Some(vec![port("TCP", MONGOD_PORT)]),
                },
                // Member and router names are resolved through the cluster's DNS, wherever
                // it runs.
                NetworkPolicyEgressRule {
                    to: None,
                    ports: Some(vec![port("UDP", DNS_PORT), port("TCP", DNS_PORT)]),
                },
            ]),
        }),
    }
}

/// The DNS port servers may reach.
pub const DNS_PORT: i32 = 53;

pub mod canary;
mod keyfile;
pub mod sharded;

pub(crate) use keyfile::Keyfile;
pub use keyfile::{KEYFILE_CONTAINER, KEYFILE_DIR, KEYFILE_SECRET_DIR};

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_placement;
#[cfg(test)]
mod tests_sharded;
