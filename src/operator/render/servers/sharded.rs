//! The servers of a sharded target on one platform: the config server replica set, one
//! replica set per shard (each as `replica_set_objects` builds a target's set, with
//! `--configsvr`/`--shardsvr`), the mongos routers as a Deployment behind a ClusterIP
//! Service, a NetworkPolicy for the routers, and a PodDisruptionBudget per part that allows
//! no voluntary eviction while the benchmark holds the servers. Pure builders.
//!
//! Every part carries the slot's labels plus [`names::ROLE_LABEL`], so the StatefulSets and
//! the Deployment each select their own pods while the operator still finds them all by slot.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{Affinity, Container, PodSpec, PodTemplateSpec, Service};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::ResourceExt;

use super::{
    KEYFILE_DIR, Keyfile, ServerObjects, SetRole, SetShape, admit_benchmark_pods, anti_affinity,
    image_of, match_labels, mongodb_service, replica_set_objects, serving_container,
};
use crate::api::{AntiAffinity, MongoBenchmark, MongosPool, Platform, Target};
use crate::operator::Error;
use crate::operator::render::meta::{child_meta, non_empty};
use crate::operator::render::names::{self, Component, MONGOD_PORT, Part};
use crate::operator::render::pod::{RunAs, pod_security};
use crate::operator::render::secrets;
use crate::plan::sharding::{ClusterLayout, SetLayout, configdb};

/// Name of the routers' container.
pub const MONGOS_CONTAINER: &str = "mongos";

/// Everything a sharded target runs on one platform.
#[derive(Debug, Clone, PartialEq)]
pub struct ShardedObjects {
    /// The config server set first, then the shards in order.
    pub sets: Vec<ServerObjects>,
    pub mongos: Deployment,
    pub mongos_service: Service,
    pub mongos_policy: NetworkPolicy,
    /// One per set, then the routers'.
    pub budgets: Vec<PodDisruptionBudget>,
}

/// The parts of a sharded target, in the order they are created and initiated.
pub fn set_parts(target: &Target) -> Vec<Part> {
    let shards = target.shards.clone().unwrap_or_default().count();
    std::iter::once(Part::Config)
        .chain((0..shards).map(Part::Shard))
        .collect()
}

fn set_shape(bench_name: &str, target: &Target, platform: &Platform, part: Part) -> SetShape {
    let (members, role) = match part {
        Part::Config => (
            target.config_servers.clone().unwrap_or_default().members(),
            SetRole::ConfigServer,
        ),
        _ => (
            target.shards.clone().unwrap_or_default().members(),
            SetRole::Shard,
        ),
    };
    SetShape {
        name: names::part_name(bench_name, &target.name, &platform.name, part),
        labels: part_labels(bench_name, target, platform, part),
        members,
        role,
        // The runner asks only a replica set's members (plan.targets[].serverCanaries).
        canary_image: None,
    }
}

fn part_labels(
    bench_name: &str,
    target: &Target,
    platform: &Platform,
    part: Part,
) -> BTreeMap<String, String> {
    let mut labels =
        names::slot_labels(bench_name, Component::Server, &target.name, &platform.name);
    labels.insert(names::ROLE_LABEL.to_owned(), part.as_label());
    labels
}

/// The replica sets of a sharded target with their member addresses, as the runner
/// initiates them.
pub fn cluster_layout(
    bench_name: &str,
    namespace: &str,
    target: &Target,
    platform: &Platform,
) -> ClusterLayout {
    let layout = |part| {
        let shape = set_shape(bench_name, target, platform, part);
        SetLayout {
            members: (0..shape.members)
                .map(|m| names::member_address(&shape.name, namespace, m))
                .collect(),
            name: shape.name,
        }
    };
    let mut sets = set_parts(target).into_iter().map(layout);
    let config = sets
        .next()
        .expect("a sharded target has a config server set");
    ClusterLayout {
        config,
        shards: sets.collect(),
    }
}

/// Pods ready when every part of a sharded target is: all set members and every router.
pub fn ready_pods_wanted(target: &Target) -> u32 {
    let shards = target.shards.clone().unwrap_or_default();
    target.config_servers.clone().unwrap_or_default().members()
        + shards.count() * shards.members()
        + target.mongos.clone().unwrap_or_default().replicas()
}

/// Builds the servers of sharded `target` on `platform`.
///
/// # Errors
/// As [`super::server_objects`].
pub fn sharded_objects(
    bench: &MongoBenchmark,
    target: &Target,
    platform: &Platform,
) -> Result<ShardedObjects, Error> {
    let bench_name = bench.name_any();
    let namespace = bench
        .namespace()
        .ok_or_else(|| Error::Incomplete(bench_name.clone()))?;
    let mut sets = Vec::new();
    let mut budgets = Vec::new();
    for part in set_parts(target) {
        let shape = set_shape(&bench_name, target, platform, part);
        budgets.push(budget(bench, &shape.name, &shape.labels)?);
        sets.push(replica_set_objects(bench, target, platform, &shape)?);
    }
    let layout = cluster_layout(&bench_name, &namespace, target, platform);
    let name = names::part_name(&bench_name, &target.name, &platform.name, Part::Mongos);
    let labels = part_labels(&bench_name, target, platform, Part::Mongos);
    let metadata = child_meta(bench, &name, &labels)?;
    let mongos = mongos_deployment(bench, target, platform, &layout, metadata.clone())?;
    budgets.push(budget(bench, &name, &labels)?);
    let mongos_service = mongodb_service(metadata.clone(), &labels);
    let mongos_policy = admit_benchmark_pods(&bench_name, metadata, match_labels(&labels));
    Ok(ShardedObjects {
        sets,
        mongos,
        mongos_service,
        mongos_policy,
        budgets,
    })
}

/// No voluntary eviction (a node drain) of a part while its benchmark holds it: a member
/// evicted mid-measurement is an election in the figures.
fn budget(
    bench: &MongoBenchmark,
    name: &str,
    labels: &BTreeMap<String, String>,
) -> Result<PodDisruptionBudget, Error> {
    Ok(PodDisruptionBudget {
        metadata: child_meta(bench, name, labels)?,
        spec: Some(PodDisruptionBudgetSpec {
            max_unavailable: Some(IntOrString::Int(0)),
            selector: Some(match_labels(labels)),
            ..PodDisruptionBudgetSpec::default()
        }),
        ..PodDisruptionBudget::default()
    })
}

fn mongos_deployment(
    bench: &MongoBenchmark,
    target: &Target,
    platform: &Platform,
    layout: &ClusterLayout,
    metadata: ObjectMeta,
) -> Result<Deployment, Error> {
    let (image, distribution) = image_of(target)?;
    let settings = target.mongos.clone().unwrap_or_default();
    let resources = settings
        .resources
        .as_ref()
        .map(|r| r.to_resource_requirements())
        .unwrap_or_default();
    let labels = metadata.labels.clone().unwrap_or_default();
    let mut args = vec![
        "--configdb".to_owned(),
        configdb(layout),
        "--bind_ip_all".to_owned(),
        "--port".to_owned(),
        MONGOD_PORT.to_string(),
    ];
    let (mut mounts, mut volumes, mut init_containers) = (Vec::new(), Vec::new(), Vec::new());
    let auth = bench.spec.replica_set().auth();
    if auth {
        args.push("--keyFile".to_owned());
        args.push(format!("{KEYFILE_DIR}/{}", secrets::KEYFILE_KEY));
        let keyfile = Keyfile::of(bench, image, &resources);
        mounts.push(keyfile.mount);
        volumes.extend(keyfile.volumes);
        init_containers.push(keyfile.init_container);
    }
    let (node_selector, tolerations) = match settings.pool() {
        MongosPool::Target => (
            platform.effective_node_selector(),
            platform.effective_tolerations(),
        ),
        MongosPool::Client => {
            let client = bench.spec.client.clone().unwrap_or_default();
            match client
                .platform
                .as_deref()
                .and_then(|p| bench.spec.platform(p))
            {
                Some(p) => (p.effective_node_selector(), p.effective_tolerations()),
                None => (client.node_selector.clone(), client.tolerations.clone()),
            }
        }
    };
    let container = Container {
        command: Some(vec!["mongos".to_owned()]),
        args: Some(args),
        volume_mounts: non_empty(mounts),
        ..serving_container(MONGOS_CONTAINER, image, resources)
    };
    let selector = match_labels(&labels);
    let pod_spec = PodSpec {
        affinity: Some(Affinity {
            // Spread where possible: routers are stateless, and a pool may have fewer nodes.
            pod_anti_affinity: Some(anti_affinity(AntiAffinity::Preferred, &selector)),
            ..Affinity::default()
        }),
        containers: vec![container],
        init_containers: non_empty(init_containers),
        // mongos never calls the Kubernetes API: no token in its pods.
        automount_service_account_token: Some(false),
        node_selector: non_empty(node_selector),
        tolerations: non_empty(tolerations),
        // fsGroup lets the init container read the keyfile Secret (as for mongod).
        security_context: Some(pod_security(RunAs::of(distribution), auth)),
        volumes: non_empty(volumes),
        ..PodSpec::default()
    };
    Ok(Deployment {
        metadata,
        spec: Some(DeploymentSpec {
            replicas: Some(i32::try_from(settings.replicas()).unwrap_or(i32::MAX)),
            selector,
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(pod_spec),
            },
            ..DeploymentSpec::default()
        }),
        ..Deployment::default()
    })
}
