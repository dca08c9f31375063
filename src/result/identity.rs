//! The workload identity of a result: every parameter the generated traffic and the measured
//! conditions depend on, and a hash of them. Two results are comparable only when their
//! identities are equal; when they are not, the differing parameters are named.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The workload identity of one cell.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadIdentity {
    /// SHA-256 (hex) over the parameters, one `name=value` line each (`\n`-terminated), in
    /// name order.
    pub hash: String,
    /// Every parameter the identity covers, by name: the workload version and each effective
    /// generator parameter, the seed, the worker count, the dataset identity and the measured
    /// conditions (run length, warm-up, target rate, write concern, read preference).
    pub parameters: BTreeMap<String, String>,
}

impl WorkloadIdentity {
    /// The identity of `parameters`.
    pub fn new(parameters: BTreeMap<String, String>) -> WorkloadIdentity {
        let mut hasher = Sha256::new();
        for (name, value) in &parameters {
            hasher.update(name.as_bytes());
            hasher.update(b"=");
            hasher.update(value.as_bytes());
            hasher.update(b"\n");
        }
        WorkloadIdentity {
            hash: hex::encode(hasher.finalize()),
            parameters,
        }
    }

    /// The parameters whose values differ between `self` and `other`, as `name (a vs b)`, in
    /// name order; a parameter only one side has shows `-` for the other.
    pub fn differences(&self, other: &WorkloadIdentity) -> Vec<String> {
        let names: std::collections::BTreeSet<&String> = self
            .parameters
            .keys()
            .chain(other.parameters.keys())
            .collect();
        names
            .into_iter()
            .filter_map(|name| {
                let a = self.parameters.get(name);
                let b = other.parameters.get(name);
                (a != b).then(|| {
                    format!(
                        "{name} ({} vs {})",
                        a.map_or("-", String::as_str),
                        b.map_or("-", String::as_str)
                    )
                })
            })
            .collect()
    }

    /// Whether the identity says anything (results written before identities existed, or
    /// cells that never started, have none).
    pub fn is_empty(&self) -> bool {
        self.parameters.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity(pairs: &[(&str, &str)]) -> WorkloadIdentity {
        WorkloadIdentity::new(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn the_hash_covers_names_and_values_in_name_order() {
        // printf 'seed=1\nworkers=16\n' | sha256sum
        let a = identity(&[("workers", "16"), ("seed", "1")]);
        assert_eq!(
            a.hash,
            "411458d2a0fa1a61609905703ab9284a431daf2bbe9ae7baab6beb24a7d404d0"
        );
        assert_eq!(a, identity(&[("seed", "1"), ("workers", "16")]));
        assert_ne!(a.hash, identity(&[("seed", "2"), ("workers", "16")]).hash);
        assert_ne!(
            a.hash,
            identity(&[("seed", "1"), ("workers", "1"), ("6", "")]).hash
        );
    }

    #[test]
    fn differences_name_each_parameter_with_both_values() {
        let a = identity(&[("seed", "1"), ("workers", "16"), ("documents", "1000")]);
        let b = identity(&[("seed", "2"), ("workers", "16"), ("hitRate", "0.9")]);
        assert_eq!(
            a.differences(&b),
            [
                "documents (1000 vs -)",
                "hitRate (- vs 0.9)",
                "seed (1 vs 2)"
            ]
        );
        assert!(a.differences(&a).is_empty());
    }
}
