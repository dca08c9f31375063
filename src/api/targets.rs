//! Targets (the MongoDB deployments compared) and platforms (the node pools they run on).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Toleration;
use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::sharding::{ConfigServers, Mongos, Shards, Topology};

/// Default of `spec.targets[].external.uriSecretRef.key`.
pub const DEFAULT_URI_SECRET_KEY: &str = "uri";
/// `pattern` of target and platform names: lowercase letters, digits, `-` and `.`, starting and
/// ending with a letter or digit (a valid label value, so `psmdb-8.0` is allowed).
pub const NAME_PATTERN: &str = "^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$";
/// Longest target or platform name.
pub const NAME_MAX_LENGTH: usize = 63;
/// Node label that selects an architecture, set from `platforms[].arch`.
pub const ARCH_LABEL: &str = "kubernetes.io/arch";

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
#[x_kube(validation = Rule::new(
    "(has(self.topology) && self.topology == 'sharded') || (!has(self.shards) && !has(self.configServers) && !has(self.mongos))")
    .message("spec.targets[]: shards, configServers and mongos apply only to topology sharded"))]
#[x_kube(validation = Rule::new(
    "has(self.image) || (!has(self.shards) && !has(self.configServers) && !has(self.mongos))")
    .message("spec.targets[]: shards, configServers and mongos shape a cluster the operator provisions; an external sharded target is reached through its URI"))]
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

    /// `replicaSet` (default) or `sharded`: shards of `shards`, a config server replica set
    /// of `configServers` and `mongos` routers (provisioned with `image`; an external
    /// sharded target is its mongos URI). The workload's collections are sharded as
    /// `spec.workload.sharding` says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "replicaSet"))]
    pub topology: Option<Topology>,

    /// The shards of a provisioned sharded target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shards: Option<Shards>,

    /// The config server replica set of a provisioned sharded target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_servers: Option<ConfigServers>,

    /// The routers of a provisioned sharded target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mongos: Option<Mongos>,
}

impl Target {
    /// True when the operator provisions this target (it has an `image`).
    pub fn is_provisioned(&self) -> bool {
        self.image.is_some()
    }

    /// Effective `topology` (default `replicaSet`).
    pub fn topology(&self) -> Topology {
        self.topology.unwrap_or_default()
    }

    /// True for `topology: sharded`.
    pub fn is_sharded(&self) -> bool {
        self.topology() == Topology::Sharded
    }

    /// The shape of a sharded target, for status and reports: `sharded: 2 shards × 3
    /// members, 3 config servers, 2 mongos`, or `sharded (external)`; `None` for a replica set.
    pub fn topology_text(&self) -> Option<String> {
        if !self.is_sharded() {
            return None;
        }
        if !self.is_provisioned() {
            return Some("sharded (external)".to_owned());
        }
        let shards = self.shards.clone().unwrap_or_default();
        Some(format!(
            "sharded: {} shards × {} members, {} config servers, {} mongos",
            shards.count(),
            shards.members(),
            self.config_servers.clone().unwrap_or_default().members(),
            self.mongos.clone().unwrap_or_default().replicas()
        ))
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
    /// `mongodb+srv://` connection string. The namespace must list it in its annotation
    /// `mongobench.io/readable-secrets`.
    pub uri_secret_ref: SecretKeyRef,

    /// TLS to the deployment with a private CA: a Secret (in the MongoBenchmark's namespace,
    /// listed in `mongobench.io/readable-secrets` too) holding the CA bundle that signs the
    /// servers' certificates and, optionally, a client certificate. Turns TLS on; the runner
    /// connects through the MongoDB driver.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_secret_ref: Option<TlsSecretRef>,
}

/// Default of `spec.targets[].external.tlsSecretRef.caKey`.
pub const DEFAULT_CA_KEY: &str = "ca.crt";

/// The TLS material of an external target, in a Secret of the same namespace.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct TlsSecretRef {
    /// Name of the Secret.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// Key of the PEM CA bundle (default `ca.crt`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253), pattern(SECRET_KEY_PATTERN), extend("default" = "ca.crt"))]
    pub ca_key: Option<String>,
    /// Key of the client certificate followed by its private key, in one PEM (what a URI's
    /// `tlsCertificateKeyFile` names); unset, no client certificate is offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253), pattern(SECRET_KEY_PATTERN))]
    pub client_certificate_key: Option<String>,
}

/// `pattern` of a Secret key: what Kubernetes allows as a data key.
pub const SECRET_KEY_PATTERN: &str = "^[-._a-zA-Z0-9]+$";

impl TlsSecretRef {
    /// Effective `caKey` (default `ca.crt`).
    pub fn ca_key(&self) -> &str {
        self.ca_key.as_deref().unwrap_or(DEFAULT_CA_KEY)
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_adds_the_selector_and_the_arm64_toleration() {
        let arm = Platform {
            name: "axion".into(),
            arch: Some(Arch::Arm64),
            node_selector: [("pool".to_string(), "c4a".to_string())].into(),
            ..Default::default()
        };
        assert_eq!(
            arm.effective_node_selector(),
            BTreeMap::from([
                ("kubernetes.io/arch".to_string(), "arm64".to_string()),
                ("pool".to_string(), "c4a".to_string()),
            ])
        );
        let tolerations = arm.effective_tolerations();
        assert_eq!(tolerations.len(), 1);
        assert_eq!(tolerations[0].key.as_deref(), Some("kubernetes.io/arch"));
        assert_eq!(tolerations[0].operator.as_deref(), Some("Equal"));
        assert_eq!(tolerations[0].value.as_deref(), Some("arm64"));
        assert_eq!(tolerations[0].effect.as_deref(), Some("NoSchedule"));
        // Listed already: not added twice.
        let listed = Platform {
            tolerations: tolerations.clone(),
            ..arm.clone()
        };
        assert_eq!(listed.effective_tolerations(), tolerations);
        let x86 = Platform {
            arch: Some(Arch::Amd64),
            ..Default::default()
        };
        assert!(x86.effective_tolerations().is_empty());
        assert_eq!(x86.effective_node_selector()["kubernetes.io/arch"], "amd64");
        let unset = Platform::default();
        assert!(unset.effective_node_selector().is_empty());
    }

    #[test]
    fn a_sharded_target_describes_its_shape() {
        let mut t = Target {
            name: "a".into(),
            image: Some("mongo:9.0.4".into()),
            ..Default::default()
        };
        assert_eq!(t.topology_text(), None);
        t.topology = Some(Topology::Sharded);
        assert_eq!(
            t.topology_text().as_deref(),
            Some("sharded: 2 shards × 3 members, 3 config servers, 2 mongos")
        );
        t.shards = Some(Shards {
            count: Some(4),
            members: Some(1),
        });
        assert_eq!(
            t.topology_text().as_deref(),
            Some("sharded: 4 shards × 1 members, 3 config servers, 2 mongos")
        );
        t.image = None;
        assert_eq!(t.topology_text().as_deref(), Some("sharded (external)"));
    }

    #[test]
    fn secret_key_defaults_to_uri() {
        let mut reference = SecretKeyRef {
            name: "s".into(),
            key: None,
        };
        assert_eq!(reference.key(), "uri");
        reference.key = Some("connection".into());
        assert_eq!(reference.key(), "connection");
    }

    #[test]
    fn a_target_is_provisioned_when_it_has_an_image() {
        let image = Target {
            name: "a".into(),
            image: Some("mongo:8.0.26".into()),
            ..Default::default()
        };
        assert!(image.is_provisioned());
        let external = Target {
            name: "b".into(),
            external: Some(ExternalTarget::default()),
            ..Default::default()
        };
        assert!(!external.is_provisioned());
    }
}
