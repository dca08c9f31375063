//! `spec.workload.custom`: where the document of a custom workload (docs/specs/custom.md) comes
//! from. The document is always text: the API server keeps objects as unordered maps, and the
//! order of index keys, sorts and document fields is part of a workload.

use kube::KubeSchema;
use serde::{Deserialize, Serialize};

/// Default of `spec.workload.custom.configMapRef.key`.
pub const DEFAULT_CONFIG_MAP_KEY: &str = "workload.yaml";

/// Largest custom workload document, in bytes (a ConfigMap holds at most 1 MiB).
pub const MAX_CUSTOM_BYTES: usize = 1024 * 1024;

/// The source of a custom workload document: exactly one of `inline`, `file`, `configMapRef`.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("[has(self.inline), has(self.file), has(self.configMapRef)].filter(x, x).size() == 1")
    .message("spec.workload.custom: set exactly one of inline, file, configMapRef"))]
pub struct CustomSource {
    /// The workload document as YAML text (docs/specs/custom.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1048576))]
    pub inline: Option<String>,

    /// A file holding the document, relative to the benchmark file; read by `mongobench run`
    /// and `mongobench validate`, refused by the operator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 4096))]
    pub file: Option<String>,

    /// A ConfigMap key holding the document, in the benchmark's namespace; read by the
    /// operator when it plans the run, refused by `mongobench run`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map_ref: Option<ConfigMapKeyRef>,
}

/// A key of a ConfigMap in the same namespace.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct ConfigMapKeyRef {
    /// Name of the ConfigMap.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// Key within the ConfigMap (default `workload.yaml`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253), extend("default" = "workload.yaml"))]
    pub key: Option<String>,
}

impl ConfigMapKeyRef {
    /// Effective key (default `workload.yaml`).
    pub fn key(&self) -> &str {
        self.key.as_deref().unwrap_or(DEFAULT_CONFIG_MAP_KEY)
    }
}

impl CustomSource {
    /// Where the document is, in words, prefixing every error about its content.
    pub fn origin(&self) -> String {
        match (&self.file, &self.config_map_ref) {
            (Some(file), _) => format!("spec.workload.custom.file ({file})"),
            (None, Some(cm)) => format!(
                "spec.workload.custom.configMapRef (ConfigMap {} key {})",
                cm.name,
                cm.key()
            ),
            (None, None) => "spec.workload.custom.inline".to_owned(),
        }
    }
}
