//! The replica set provisioned for each target with an image, and container resources.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ResourceRequirements;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::units::{self, UnitsError};

/// Default of `spec.replicaSet.members`.
pub const DEFAULT_MEMBERS: u32 = 3;
/// Smallest WiredTiger cache mongod accepts, and the floor of the derived default (GiB).
pub const MIN_WIRED_TIGER_CACHE_GB: f64 = 0.25;

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

    /// Access control (default true): mongod runs with `--auth` and a keyfile, both generated
    /// per benchmark into Secrets, and the runner connects as the generated `root` user.
    /// `false` runs the replica sets without authentication.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = true))]
    pub auth: Option<bool>,

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

    /// Effective `auth` (default true).
    pub fn auth(&self) -> bool {
        self.auth.unwrap_or(true)
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

/// `pattern` of a non-negative Kubernetes quantity: the API server's own quantity pattern
/// without the leading minus, since a negative volume size, CPU or memory is refused only when
/// the operator creates the pod or claim, long after admission.
pub const QUANTITY_PATTERN: &str = "^\\+?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$";

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

#[cfg(test)]
mod tests {
    use super::*;

    fn with_limit(memory: &str) -> ReplicaSet {
        ReplicaSet {
            resources: Some(ComputeResources {
                limits: [("memory".to_string(), Quantity(memory.to_string()))].into(),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn wired_tiger_cache_follows_the_memory_limit() {
        // 0.5 x (12 - 1) = 5.5; 0.5 x (16 - 1) = 7.5; 0.5 x (1.25 - 1) = 0.125 -> floor 0.25.
        assert_eq!(
            with_limit("12Gi").wired_tiger_cache_size_gb(),
            Ok(Some(5.5))
        );
        assert_eq!(
            with_limit("16Gi").wired_tiger_cache_size_gb(),
            Ok(Some(7.5))
        );
        assert_eq!(
            with_limit("1280Mi").wired_tiger_cache_size_gb(),
            Ok(Some(0.25))
        );
        assert_eq!(
            with_limit("512Mi").wired_tiger_cache_size_gb(),
            Ok(Some(0.25))
        );
        assert_eq!(
            with_limit("12Gi").memory_limit_bytes(),
            Ok(Some(12_884_901_888))
        );
        let explicit = ReplicaSet {
            wired_tiger_cache_size_gb: Some(2.0),
            ..with_limit("16Gi")
        };
        assert_eq!(explicit.wired_tiger_cache_size_gb(), Ok(Some(2.0)));
        assert_eq!(ReplicaSet::default().wired_tiger_cache_size_gb(), Ok(None));
        assert_eq!(
            with_limit("lots").wired_tiger_cache_size_gb(),
            Err(UnitsError::Quantity {
                value: "lots".into()
            })
        );
    }

    #[test]
    fn members_and_anti_affinity_defaults() {
        let defaults = ReplicaSet::default();
        assert_eq!(defaults.members(), 3);
        assert_eq!(defaults.anti_affinity(), AntiAffinity::Required);
        let five = ReplicaSet {
            members: Some(5),
            anti_affinity: Some(AntiAffinity::Preferred),
            ..Default::default()
        };
        assert_eq!(five.members(), 5);
        assert_eq!(five.anti_affinity(), AntiAffinity::Preferred);
    }

    #[test]
    fn compute_resources_convert_to_resource_requirements() {
        let resources = ComputeResources {
            requests: [("cpu".to_string(), Quantity("3".to_string()))].into(),
            limits: BTreeMap::new(),
        };
        let requirements = resources.to_resource_requirements();
        assert_eq!(
            requirements.requests.unwrap()["cpu"],
            Quantity("3".to_string())
        );
        assert_eq!(requirements.limits, None);
        assert_eq!(requirements.claims, None);
    }
}
