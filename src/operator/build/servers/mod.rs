//! The replica set of one provisioned target on one platform: a StatefulSet of `members`
//! mongod pods, a headless Service that publishes not-ready addresses (members resolve each
//! other before the set is initiated), and a NetworkPolicy that admits only this benchmark's
//! pods. Pure builders: plain k8s-openapi objects, no I/O.
//!
//! Pinning: the platform's effective node selector and tolerations (with `arch: arm64`, the
//! arch selector and the toleration of the arm64 taint), pod anti-affinity on
//! `kubernetes.io/hostname` (required: one member per node), the requested resources, and one
//! volume per member from the platform's StorageClass, deleted with the StatefulSet.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{
    StatefulSet, StatefulSetPersistentVolumeClaimRetentionPolicy, StatefulSetSpec,
};
use k8s_openapi::api::core::v1::{
    Affinity, Capabilities, Container, ContainerPort, EmptyDirVolumeSource, EnvVar, EnvVarSource,
    KeyToPath, PersistentVolumeClaim, PersistentVolumeClaimSpec, PodAffinityTerm, PodAntiAffinity,
    PodSecurityContext, PodSpec, PodTemplateSpec, Probe, SeccompProfile, SecretKeySelector,
    SecretVolumeSource, SecurityContext, Service, ServicePort, ServiceSpec, TCPSocketAction,
    Volume, VolumeMount, VolumeResourceRequirements, WeightedPodAffinityTerm,
};
use k8s_openapi::api::networking::v1::{
    NetworkPolicy, NetworkPolicyIngressRule, NetworkPolicyPeer, NetworkPolicyPort,
    NetworkPolicySpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::{Resource, ResourceExt};

use super::names::{self, Component, MONGOD_PORT};
use super::secrets;
use crate::api::{AntiAffinity, Distribution, MongoBenchmark, Platform, Target};
use crate::operator::Error;

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
/// Where the keyfile Secret is mounted (group-readable under `fsGroup`, which mongod refuses).
pub const KEYFILE_SECRET_DIR: &str = "/etc/mongodb-keyfile-secret";
/// Where the init container puts the keyfile with mode 0400, for mongod.
pub const KEYFILE_DIR: &str = "/etc/mongodb-keyfile";
/// Name of the init container that copies the keyfile.
pub const KEYFILE_CONTAINER: &str = "keyfile";

/// The user, group and volume group a distribution's image runs mongod as
/// (specs/kubernetes.md §11).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunAs {
    /// `runAsUser`.
    pub user: i64,
    /// `runAsGroup`.
    pub group: i64,
    /// `fsGroup`: owns the data volume.
    pub fs_group: i64,
}

impl RunAs {
    /// The user of `distribution`'s images: `mongodb` (999:999) in the official `mongo`
    /// image, uid 1001 with primary group 0 in Percona's.
    pub fn of(distribution: Distribution) -> RunAs {
        match distribution {
            Distribution::Community => RunAs {
                user: 999,
                group: 999,
                fs_group: 999,
            },
            Distribution::Percona => RunAs {
                user: 1001,
                group: 0,
                fs_group: 1001,
            },
        }
    }
}

/// The pod security context of the `restricted` Pod Security level: not root, the runtime's
/// default seccomp profile, running as `run_as` (and, with a volume, `fsGroup`).
pub fn pod_security(run_as: RunAs, with_volume: bool) -> PodSecurityContext {
    PodSecurityContext {
        run_as_non_root: Some(true),
        run_as_user: Some(run_as.user),
        run_as_group: Some(run_as.group),
        fs_group: with_volume.then_some(run_as.fs_group),
        // A volume whose root already has the group is not walked again on every start.
        fs_group_change_policy: with_volume.then(|| "OnRootMismatch".to_owned()),
        seccomp_profile: Some(SeccompProfile {
            type_: "RuntimeDefault".to_owned(),
            ..SeccompProfile::default()
        }),
        ..PodSecurityContext::default()
    }
}

/// The container security context of the `restricted` level: no privilege escalation, no
/// capabilities.
pub fn container_security() -> SecurityContext {
    SecurityContext {
        allow_privilege_escalation: Some(false),
        capabilities: Some(Capabilities {
            drop: Some(vec!["ALL".to_owned()]),
            ..Capabilities::default()
        }),
        ..SecurityContext::default()
    }
}

/// An environment variable from key `key` of Secret `secret`.
pub fn secret_env(name: &str, secret: &str, key: &str) -> EnvVar {
    EnvVar {
        name: name.to_owned(),
        value_from: Some(EnvVarSource {
            secret_key_ref: Some(SecretKeySelector {
                name: secret.to_owned(),
                key: key.to_owned(),
                ..SecretKeySelector::default()
            }),
            ..EnvVarSource::default()
        }),
        ..EnvVar::default()
    }
}

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
    let mut args = vec![
        "--replSet".to_owned(),
        replica_set.to_owned(),
        "--bind_ip_all".to_owned(),
    ];
    if bench.spec.replica_set().auth() {
        args.push("--auth".to_owned());
        args.push("--keyFile".to_owned());
        args.push(format!("{KEYFILE_DIR}/{}", secrets::KEYFILE_KEY));
    }
    let cache = bench
        .spec
        .replica_set()
        .wired_tiger_cache_size_gb()
        .map_err(|e| Error::Spec(format!("spec.replicaSet.resources: {e}")))?;
    if let Some(gb) = cache {
        args.push("--wiredTigerCacheSizeGB".to_owned());
        args.push(format!("{gb}"));
    }
    args.extend(target.mongod_args.iter().cloned());
    Ok(args)
}

/// Metadata of a child of `bench`: its name, the benchmark's namespace, `labels`, and the
/// benchmark as controlling owner.
///
/// # Errors
/// [`Error::Incomplete`] for a MongoBenchmark without namespace or uid.
pub fn child_meta(
    bench: &MongoBenchmark,
    name: &str,
    labels: &BTreeMap<String, String>,
) -> Result<ObjectMeta, Error> {
    let owner = bench
        .controller_owner_ref(&())
        .ok_or_else(|| Error::Incomplete(bench.name_any()))?;
    Ok(ObjectMeta {
        name: Some(name.to_owned()),
        namespace: bench.namespace(),
        labels: Some(labels.clone()),
        owner_references: Some(vec![owner]),
        ..ObjectMeta::default()
    })
}

/// `Some(v)` unless `v` is empty: absent and empty lists and maps mean the same to the API
/// server, and leaving them out keeps applied objects as small as the spec asks.
pub fn non_empty<T: IsEmpty>(v: T) -> Option<T> {
    (!v.is_empty()).then_some(v)
}

/// Collections [`non_empty`] understands.
pub trait IsEmpty {
    /// True when there is nothing in it.
    fn is_empty(&self) -> bool;
}

impl<T> IsEmpty for Vec<T> {
    fn is_empty(&self) -> bool {
        Vec::is_empty(self)
    }
}

impl<K, V> IsEmpty for BTreeMap<K, V> {
    fn is_empty(&self) -> bool {
        BTreeMap::is_empty(self)
    }
}

fn match_labels(labels: &BTreeMap<String, String>) -> LabelSelector {
    LabelSelector {
        match_labels: Some(labels.clone()),
        ..LabelSelector::default()
    }
}

/// One member per node (`Required`) or spread where possible (`Preferred`).
fn anti_affinity(kind: AntiAffinity, selector: &LabelSelector) -> PodAntiAffinity {
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

/// Builds the replica set of `target` on `platform`.
///
/// # Errors
/// [`Error::Spec`] for a target without an image, a missing `replicaSet.storageSize` or a bad
/// memory limit; [`Error::Incomplete`] for a MongoBenchmark without namespace or uid.
pub fn server_objects(
    bench: &MongoBenchmark,
    target: &Target,
    platform: &Platform,
) -> Result<ServerObjects, Error> {
    let bench_name = bench.name_any();
    if bench.namespace().is_none() {
        return Err(Error::Incomplete(bench_name));
    }
    let image = target.image.as_deref().ok_or_else(|| {
        Error::Spec(format!(
            "spec.targets[{}]: an external target gets no servers",
            target.name
        ))
    })?;
    let distribution = target.distribution.ok_or_else(|| {
        Error::Spec(format!(
            "spec.targets[{}].distribution is required with image",
            target.name
        ))
    })?;
    let rs = bench.spec.replica_set();
    let auth = rs.auth();
    let storage = rs.storage_size.as_ref().ok_or_else(|| {
        Error::Spec("spec.replicaSet.storageSize is required when a target has an image".into())
    })?;
    let name = names::server_name(&bench_name, &target.name, &platform.name);
    let labels = names::slot_labels(&bench_name, Component::Server, &target.name, &platform.name);
    let metadata = child_meta(bench, &name, &labels)?;
    let selector = match_labels(&labels);
    let resources = rs
        .resources
        .as_ref()
        .map(|r| r.to_resource_requirements())
        .unwrap_or_default();
    let mut env = Vec::new();
    let mut mounts = vec![VolumeMount {
        name: DATA_VOLUME.to_owned(),
        mount_path: "/data/db".to_owned(),
        ..VolumeMount::default()
    }];
    let mut volumes = Vec::new();
    let mut init_containers = Vec::new();
    if distribution == Distribution::Percona {
        // The entrypoint otherwise starts a telemetry agent beside mongod: CPU the
        // measurement does not want.
        env.push(EnvVar {
            name: "PERCONA_TELEMETRY_DISABLE".to_owned(),
            value: Some("1".to_owned()),
            ..EnvVar::default()
        });
    }
    if auth {
        // Both images' entrypoints create this user (role root) on an empty data directory,
        // before mongod starts with --replSet (specs/kubernetes.md §11).
        let admin = names::admin_secret(&bench_name);
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
        mounts.push(VolumeMount {
            name: "keyfile".to_owned(),
            mount_path: KEYFILE_DIR.to_owned(),
            read_only: Some(true),
            ..VolumeMount::default()
        });
        volumes.push(Volume {
            name: "keyfile-secret".to_owned(),
            secret: Some(SecretVolumeSource {
                secret_name: Some(names::keyfile_secret(&bench_name)),
                items: Some(vec![KeyToPath {
                    key: secrets::KEYFILE_KEY.to_owned(),
                    path: secrets::KEYFILE_KEY.to_owned(),
                    ..KeyToPath::default()
                }]),
                default_mode: Some(0o400),
                ..SecretVolumeSource::default()
            }),
            ..Volume::default()
        });
        volumes.push(Volume {
            name: "keyfile".to_owned(),
            empty_dir: Some(EmptyDirVolumeSource {
                medium: Some("Memory".to_owned()),
                ..EmptyDirVolumeSource::default()
            }),
            ..Volume::default()
        });
        // fsGroup makes the kubelet add group read to the Secret's files, and mongod refuses
        // a keyfile any group can read: a copy the same user makes is 0400.
        let key = secrets::KEYFILE_KEY;
        init_containers.push(Container {
            name: KEYFILE_CONTAINER.to_owned(),
            image: Some(image.to_owned()),
            command: Some(vec![
                "install".to_owned(),
                "-m".to_owned(),
                "0400".to_owned(),
                format!("{KEYFILE_SECRET_DIR}/{key}"),
                format!("{KEYFILE_DIR}/{key}"),
            ]),
            // The members' requests and limits: a pod is Guaranteed only when its init
            // containers are too, and the larger of the two is what the pod requests.
            resources: Some(resources.clone()),
            security_context: Some(container_security()),
            volume_mounts: Some(vec![
                VolumeMount {
                    name: "keyfile-secret".to_owned(),
                    mount_path: KEYFILE_SECRET_DIR.to_owned(),
                    read_only: Some(true),
                    ..VolumeMount::default()
                },
                VolumeMount {
                    name: "keyfile".to_owned(),
                    mount_path: KEYFILE_DIR.to_owned(),
                    ..VolumeMount::default()
                },
            ]),
            ..Container::default()
        });
    }
    let container = Container {
        name: names::MONGOD_CONTAINER.to_owned(),
        image: Some(image.to_owned()),
        args: Some(mongod_args(bench, target, &name)?),
        env: non_empty(env),
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
        volume_mounts: Some(mounts),
        security_context: Some(container_security()),
        ..Container::default()
    };
    let pod_spec = PodSpec {
        affinity: Some(Affinity {
            pod_anti_affinity: Some(anti_affinity(rs.anti_affinity(), &selector)),
            ..Affinity::default()
        }),
        containers: vec![container],
        init_containers: non_empty(init_containers),
        node_selector: non_empty(platform.effective_node_selector()),
        tolerations: non_empty(platform.effective_tolerations()),
        security_context: Some(pod_security(RunAs::of(distribution), true)),
        volumes: non_empty(volumes),
        ..PodSpec::default()
    };
    let claim = PersistentVolumeClaim {
        metadata: ObjectMeta {
            name: Some(DATA_VOLUME.to_owned()),
            labels: Some(labels.clone()),
            ..ObjectMeta::default()
        },
        spec: Some(PersistentVolumeClaimSpec {
            access_modes: Some(vec!["ReadWriteOnce".to_owned()]),
            resources: Some(VolumeResourceRequirements {
                requests: Some(BTreeMap::from([("storage".to_owned(), storage.clone())])),
                ..VolumeResourceRequirements::default()
            }),
            storage_class_name: platform.storage_class_name.clone(),
            ..PersistentVolumeClaimSpec::default()
        }),
        ..PersistentVolumeClaim::default()
    };
    let stateful_set = StatefulSet {
        metadata: metadata.clone(),
        spec: Some(StatefulSetSpec {
            replicas: Some(i32::try_from(rs.members()).unwrap_or(i32::MAX)),
            service_name: Some(name.clone()),
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
                    labels: Some(labels.clone()),
                    ..ObjectMeta::default()
                }),
                spec: Some(pod_spec),
            },
            volume_claim_templates: Some(vec![claim]),
            ..StatefulSetSpec::default()
        }),
        ..StatefulSet::default()
    };
    let service = Service {
        metadata: metadata.clone(),
        spec: Some(ServiceSpec {
            cluster_ip: Some("None".to_owned()),
            publish_not_ready_addresses: Some(true),
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
    };
    let benchmark_pods = BTreeMap::from([
        (
            "app.kubernetes.io/name".to_owned(),
            names::APP_NAME.to_owned(),
        ),
        (
            names::BENCHMARK_LABEL.to_owned(),
            names::label_value(&bench_name),
        ),
    ]);
    let network_policy = NetworkPolicy {
        metadata,
        spec: Some(NetworkPolicySpec {
            pod_selector: Some(selector),
            policy_types: Some(vec!["Ingress".to_owned()]),
            ingress: Some(vec![NetworkPolicyIngressRule {
                from: Some(vec![NetworkPolicyPeer {
                    pod_selector: Some(match_labels(&benchmark_pods)),
                    ..NetworkPolicyPeer::default()
                }]),
                ports: Some(vec![NetworkPolicyPort {
                    protocol: Some("TCP".to_owned()),
                    port: Some(IntOrString::Int(MONGOD_PORT)),
                    ..NetworkPolicyPort::default()
                }]),
            }]),
            ..NetworkPolicySpec::default()
        }),
    };
    Ok(ServerObjects {
        stateful_set,
        service,
        network_policy,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::api::MongoBenchmarkSpec;
    use serde_json::json;

    /// A benchmark as read from the API server (namespace and uid set).
    pub(crate) fn bench(name: &str, spec_yaml: &str) -> MongoBenchmark {
        let spec: MongoBenchmarkSpec = serde_yaml::from_str(spec_yaml).unwrap();
        let mut b = MongoBenchmark::new(name, spec);
        b.metadata.namespace = Some("lab".into());
        b.metadata.uid = Some("0f3c9a52-7d1e-4c55-9b0e-6a1d2f3e4b5c".into());
        b.metadata.generation = Some(1);
        b
    }

    pub(crate) const STUDY: &str = "\
targets:
  - {name: psmdb-8.0, image: 'percona/percona-server-mongodb:8.0.34-15', distribution: percona,
     mongodArgs: ['--wiredTigerCollectionBlockCompressor=zstd']}
  - {name: ext, external: {uriSecretRef: {name: ext-uri}}}
platforms:
  - {name: axion, arch: arm64, nodeSelector: {cloud.google.com/gke-nodepool: c4a-axion},
     storageClassName: hyperdisk-balanced}
  - {name: x86, nodeSelector: {cloud.google.com/gke-nodepool: n2-icelake}}
replicaSet:
  members: 3
  resources: {requests: {cpu: '3', memory: 12Gi}, limits: {cpu: '3', memory: 12Gi}}
  storageSize: 50Gi
dataset: {sizes: [1M, 4M]}
workload: {type: flights}
client: {platform: x86}
repetitions: 2
";

    fn value<T: serde::Serialize>(t: &T) -> serde_json::Value {
        serde_json::to_value(t).unwrap()
    }

    #[test]
    fn stateful_set_is_pinned_spread_sized_and_owned() {
        let b = bench("study", STUDY);
        let objects = server_objects(&b, &b.spec.targets[0], &b.spec.platforms[0]).unwrap();
        let sts = value(&objects.stateful_set);
        let labels = json!({
            "app.kubernetes.io/name": "mongobench",
            "app.kubernetes.io/instance": "study",
            "app.kubernetes.io/component": "server",
            "app.kubernetes.io/managed-by": "mongobench-operator",
            "mongobench.io/benchmark": "study",
            "mongobench.io/target": "psmdb-8.0",
            "mongobench.io/platform": "axion"
        });
        assert_eq!(
            sts["metadata"],
            json!({
                "name": "study-psmdb-8-0-axion",
                "namespace": "lab",
                "labels": labels,
                "ownerReferences": [{
                    "apiVersion": "mongobench.io/v1alpha1",
                    "kind": "MongoBenchmark",
                    "name": "study",
                    "uid": "0f3c9a52-7d1e-4c55-9b0e-6a1d2f3e4b5c",
                    "controller": true
                }]
            })
        );
        let spec = &sts["spec"];
        assert_eq!(spec["replicas"], 3);
        assert_eq!(spec["serviceName"], "study-psmdb-8-0-axion");
        assert_eq!(spec["podManagementPolicy"], "Parallel");
        assert_eq!(
            spec["persistentVolumeClaimRetentionPolicy"],
            json!({"whenDeleted": "Delete", "whenScaled": "Retain"})
        );
        assert_eq!(spec["selector"], json!({"matchLabels": labels}));
        let pod = &spec["template"]["spec"];
        assert_eq!(
            pod["nodeSelector"],
            json!({"cloud.google.com/gke-nodepool": "c4a-axion", "kubernetes.io/arch": "arm64"})
        );
        assert_eq!(
            pod["tolerations"],
            json!([{"key": "kubernetes.io/arch", "operator": "Equal", "value": "arm64",
                    "effect": "NoSchedule"}])
        );
        assert_eq!(
            pod["affinity"],
            json!({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
                "labelSelector": {"matchLabels": labels},
                "topologyKey": "kubernetes.io/hostname"
            }]}})
        );
        let container = &pod["containers"][0];
        assert_eq!(
            container["image"],
            "percona/percona-server-mongodb:8.0.34-15"
        );
        // 0.5 × (12 GiB − 1 GiB) = 5.5 GiB of WiredTiger cache.
        assert_eq!(
            container["args"],
            json!([
                "--replSet",
                "study-psmdb-8-0-axion",
                "--bind_ip_all",
                "--auth",
                "--keyFile",
                "/etc/mongodb-keyfile/keyfile",
                "--wiredTigerCacheSizeGB",
                "5.5",
                "--wiredTigerCollectionBlockCompressor=zstd"
            ])
        );
        assert_eq!(
            container["resources"],
            json!({"requests": {"cpu": "3", "memory": "12Gi"},
                   "limits": {"cpu": "3", "memory": "12Gi"}})
        );
        assert_eq!(
            container["volumeMounts"],
            json!([{"name": "data", "mountPath": "/data/db"},
                   {"name": "keyfile", "mountPath": "/etc/mongodb-keyfile", "readOnly": true}])
        );
        assert_eq!(
            spec["volumeClaimTemplates"][0]["spec"],
            json!({"accessModes": ["ReadWriteOnce"],
                   "storageClassName": "hyperdisk-balanced",
                   "resources": {"requests": {"storage": "50Gi"}}})
        );
        assert_eq!(spec["volumeClaimTemplates"][0]["metadata"]["name"], "data");
    }

    #[test]
    fn x86_platform_has_no_arch_toleration_and_preferred_anti_affinity_is_soft() {
        let yaml = STUDY.replace("members: 3", "members: 3\n  antiAffinity: Preferred");
        let b = bench("study", &yaml);
        let objects = server_objects(&b, &b.spec.targets[0], &b.spec.platforms[1]).unwrap();
        let pod = value(&objects.stateful_set)["spec"]["template"]["spec"].clone();
        assert_eq!(
            pod["nodeSelector"],
            json!({"cloud.google.com/gke-nodepool": "n2-icelake"})
        );
        assert!(pod.get("tolerations").is_none());
        let preferred = &pod["affinity"]["podAntiAffinity"];
        assert!(
            preferred
                .get("requiredDuringSchedulingIgnoredDuringExecution")
                .is_none()
        );
        assert_eq!(
            preferred["preferredDuringSchedulingIgnoredDuringExecution"][0]["weight"],
            100
        );
        assert_eq!(
            preferred["preferredDuringSchedulingIgnoredDuringExecution"][0]["podAffinityTerm"]["topologyKey"],
            "kubernetes.io/hostname"
        );
        // No StorageClass on the platform: the claim leaves it to the cluster default.
        let claim = value(&objects.stateful_set)["spec"]["volumeClaimTemplates"][0]["spec"].clone();
        assert!(claim.get("storageClassName").is_none());
    }

    #[test]
    fn service_is_headless_and_publishes_not_ready_members() {
        let b = bench("study", STUDY);
        let objects = server_objects(&b, &b.spec.targets[0], &b.spec.platforms[0]).unwrap();
        let svc = value(&objects.service);
        assert_eq!(svc["metadata"]["name"], "study-psmdb-8-0-axion");
        assert_eq!(svc["spec"]["clusterIP"], "None");
        assert_eq!(svc["spec"]["publishNotReadyAddresses"], true);
        assert_eq!(svc["spec"]["selector"]["mongobench.io/target"], "psmdb-8.0");
        assert_eq!(
            svc["spec"]["ports"],
            json!([{"name": "mongodb", "port": 27017, "targetPort": 27017}])
        );
    }

    #[test]
    fn network_policy_admits_only_this_benchmarks_pods() {
        let b = bench("study", STUDY);
        let objects = server_objects(&b, &b.spec.targets[0], &b.spec.platforms[0]).unwrap();
        let np = value(&objects.network_policy);
        assert_eq!(np["spec"]["policyTypes"], json!(["Ingress"]));
        assert_eq!(
            np["spec"]["ingress"],
            json!([{
                "from": [{"podSelector": {"matchLabels": {
                    "app.kubernetes.io/name": "mongobench",
                    "mongobench.io/benchmark": "study"
                }}}],
                "ports": [{"protocol": "TCP", "port": 27017}]
            }])
        );
        assert_eq!(
            np["spec"]["podSelector"]["matchLabels"]["mongobench.io/platform"],
            "axion"
        );
    }

    #[test]
    fn no_memory_limit_leaves_the_cache_to_mongod_and_external_targets_get_nothing() {
        let yaml = STUDY.replace(
            "  resources: {requests: {cpu: '3', memory: 12Gi}, limits: {cpu: '3', memory: 12Gi}}\n",
            "",
        );
        let b = bench(
            "study",
            &yaml.replace("  storageSize: 50Gi", "  storageSize: 50Gi\n  auth: false"),
        );
        let args = mongod_args(&b, &b.spec.targets[0], "rs").unwrap();
        assert_eq!(
            args,
            [
                "--replSet",
                "rs",
                "--bind_ip_all",
                "--wiredTigerCollectionBlockCompressor=zstd"
            ]
        );
        let e = server_objects(&b, &b.spec.targets[1], &b.spec.platforms[0]).unwrap_err();
        assert!(matches!(e, Error::Spec(_)), "{e}");
    }

    #[test]
    fn server_pods_run_as_the_image_user_under_the_restricted_level() {
        let yaml = STUDY.replace(
            "  - {name: ext, external: {uriSecretRef: {name: ext-uri}}}",
            "  - {name: mongo-8.0, image: 'mongo:8.0.26', distribution: community}",
        );
        let b = bench("study", &yaml);
        for (target, user, group) in [(0, 1001, 0), (1, 999, 999)] {
            let objects =
                server_objects(&b, &b.spec.targets[target], &b.spec.platforms[0]).unwrap();
            let pod = value(&objects.stateful_set)["spec"]["template"]["spec"].clone();
            assert_eq!(
                pod["securityContext"],
                json!({"runAsNonRoot": true, "runAsUser": user, "runAsGroup": group,
                       "fsGroup": user,
                       "fsGroupChangePolicy": "OnRootMismatch",
                       "seccompProfile": {"type": "RuntimeDefault"}})
            );
            let restricted =
                json!({"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}});
            assert_eq!(pod["containers"][0]["securityContext"], restricted);
            assert_eq!(pod["initContainers"][0]["securityContext"], restricted);
        }
    }

    #[test]
    fn authentication_copies_the_keyfile_and_hands_the_admin_user_to_the_entrypoint() {
        let b = bench("study", STUDY);
        let objects = server_objects(&b, &b.spec.targets[0], &b.spec.platforms[0]).unwrap();
        let pod = value(&objects.stateful_set)["spec"]["template"]["spec"].clone();
        assert_eq!(
            pod["volumes"],
            json!([
                {"name": "keyfile-secret", "secret": {"secretName": "study-keyfile",
                    "items": [{"key": "keyfile", "path": "keyfile"}], "defaultMode": 0o400}},
                {"name": "keyfile", "emptyDir": {"medium": "Memory"}}
            ])
        );
        let init = &pod["initContainers"][0];
        assert_eq!(init["image"], "percona/percona-server-mongodb:8.0.34-15");
        assert_eq!(
            init["command"],
            json!([
                "install",
                "-m",
                "0400",
                "/etc/mongodb-keyfile-secret/keyfile",
                "/etc/mongodb-keyfile/keyfile"
            ])
        );
        // Same requests and limits as mongod: the pod stays Guaranteed.
        assert_eq!(init["resources"], pod["containers"][0]["resources"]);
        let secret = |name: &str, key: &str| json!({"name": name, "valueFrom": {"secretKeyRef": {"name": "study-admin", "key": key}}});
        assert_eq!(
            pod["containers"][0]["env"],
            json!([
                {"name": "PERCONA_TELEMETRY_DISABLE", "value": "1"},
                secret("MONGO_INITDB_ROOT_USERNAME", "username"),
                secret("MONGO_INITDB_ROOT_PASSWORD", "password")
            ])
        );

        // auth: false: no keyfile, no user, no init container; the rest as before.
        let off = bench(
            "study",
            &STUDY.replace("  storageSize: 50Gi", "  storageSize: 50Gi\n  auth: false"),
        );
        let objects = server_objects(&off, &off.spec.targets[0], &off.spec.platforms[0]).unwrap();
        let pod = value(&objects.stateful_set)["spec"]["template"]["spec"].clone();
        assert!(
            pod.get("volumes").is_none() && pod.get("initContainers").is_none(),
            "{pod}"
        );
        assert_eq!(
            pod["containers"][0]["env"],
            json!([{"name": "PERCONA_TELEMETRY_DISABLE", "value": "1"}])
        );
        assert!(
            !pod["containers"][0]["args"]
                .as_array()
                .unwrap()
                .contains(&json!("--auth"))
        );
        assert_eq!(pod["securityContext"]["runAsUser"], 1001);
    }
}
