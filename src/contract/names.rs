//! The names both sides use for what the runner writes and the operator reads: label keys,
//! ConfigMap keys and the names of result and activity ConfigMaps, each from one function, so
//! that the object a runner writes, the RBAC rule that lets it and the object the operator
//! reads are always the same.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

use crate::plan::sanitize;

/// Environment variable with the runner Job's uid, which the operator sets from the pod's
/// labels: the prefix of its pods' board keys.
pub const JOB_UID_ENV: &str = "MONGOBENCH_JOB_UID";
/// Environment variable with the name of the runner's Job (the Job controller's pod label
/// `batch.kubernetes.io/job-name`), which the operator sets by the downward API.
pub const JOB_NAME_ENV: &str = "MONGOBENCH_JOB_NAME";

/// Label naming the benchmark (on its children, results and activity).
pub const BENCHMARK_LABEL: &str = "mongobench.io/benchmark";
/// Label naming the cell of a result ConfigMap.
pub const CELL_LABEL: &str = "mongobench.io/cell";
/// Label naming the run of a result or activity ConfigMap, or of a runner.
pub const RUN_ID_LABEL: &str = "mongobench.io/run-id";
/// Label naming the platform of a server, runner or activity.
pub const PLATFORM_LABEL: &str = "mongobench.io/platform";
/// `app.kubernetes.io/component` label key.
pub const COMPONENT_LABEL: &str = "app.kubernetes.io/component";
/// [`COMPONENT_LABEL`] of activity ConfigMaps (which carry no cell label).
pub const ACTIVITY_COMPONENT: &str = "activity";
/// Key of the result document in a result ConfigMap.
pub const RESULT_KEY: &str = "result.json";
/// Key of the plan in a plan ConfigMap.
pub const PLAN_KEY: &str = "plan.yaml";
/// Field manager of the runner's writes.
pub const RUNNER_FIELD_MANAGER: &str = "mongobench-runner";

/// Longest Kubernetes object name (a DNS subdomain).
const OBJECT_NAME_MAX: usize = 253;
/// Longest label value.
const LABEL_VALUE_MAX: usize = 63;

/// A label value for `s`: lower case, characters outside `[a-z0-9.-]` replaced by `-`, its
/// ends alphanumeric, at most 63 characters (a longer one is cut and suffixed with a hash of
/// the whole, so it stays unique).
pub fn label_value(s: &str) -> String {
    shorten(trim_ends(&sanitize(s)), LABEL_VALUE_MAX)
}

/// Name of the result ConfigMap of `cell_id` in `benchmark`: `<benchmark>-<cell id>`, as
/// [`label_value`] forms it but up to 253 characters.
pub fn result_name(benchmark: &str, cell_id: &str) -> String {
    object_name(&format!("{benchmark}-{cell_id}"))
}

/// Name of the activity ConfigMap of the runner of `platform` in `benchmark`.
pub fn activity_name(benchmark: &str, platform: &str) -> String {
    object_name(&format!("{benchmark}-{platform}-activity"))
}

/// The labels of the result ConfigMap of `cell_id`.
pub fn result_labels(benchmark: &str, run_id: &str, cell_id: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        (BENCHMARK_LABEL.to_owned(), label_value(benchmark)),
        (CELL_LABEL.to_owned(), label_value(cell_id)),
        (RUN_ID_LABEL.to_owned(), label_value(run_id)),
    ])
}

/// The labels of the activity ConfigMap of `platform`.
pub fn activity_labels(benchmark: &str, run_id: &str, platform: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        (BENCHMARK_LABEL.to_owned(), label_value(benchmark)),
        (RUN_ID_LABEL.to_owned(), label_value(run_id)),
        (PLATFORM_LABEL.to_owned(), label_value(platform)),
        (COMPONENT_LABEL.to_owned(), ACTIVITY_COMPONENT.to_owned()),
    ])
}

/// Selector of what the runners of one run of `benchmark` write: result and activity
/// ConfigMaps.
pub fn run_selector(benchmark: &str, run_id: &str) -> String {
    format!(
        "{BENCHMARK_LABEL}={},{RUN_ID_LABEL}={}",
        label_value(benchmark),
        label_value(run_id)
    )
}

/// Selector of the result ConfigMaps of one run of `benchmark`.
pub fn results_selector(benchmark: &str, run_id: &str) -> String {
    format!("{},{CELL_LABEL}", run_selector(benchmark, run_id))
}

fn object_name(s: &str) -> String {
    shorten(trim_ends(&sanitize(s)), OBJECT_NAME_MAX)
}

fn trim_ends(s: &str) -> &str {
    s.trim_matches(['-', '.'])
}

/// The first characters of a SHA-256 of `s`, in hex.
pub fn short_hash(s: &str) -> String {
    let digest = Sha256::digest(s.as_bytes());
    hex::encode(&digest[..3])
}

/// `s` when at most `max` characters, else cut and suffixed with `-` and a hash of the whole.
pub fn shorten(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let keep = s[..max - 7].trim_end_matches(['-', '.']);
    format!("{keep}-{}", short_hash(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_sanitized_and_kept_within_the_limits_of_their_kind() {
        assert_eq!(result_name("Study", "a.x86.1k.r1"), "study-a.x86.1k.r1");
        assert_eq!(
            activity_name("study", "c4a_axion"),
            "study-c4a-axion-activity"
        );
        assert_eq!(label_value("Psmdb_8.0"), "psmdb-8.0");
        let long = "b".repeat(300);
        let name = result_name(&long, "t.p.1k.r1");
        assert_eq!(name.len(), 253);
        assert_eq!(
            name,
            format!(
                "{}-{}",
                "b".repeat(246),
                short_hash(&format!("{long}-t.p.1k.r1"))
            )
        );
        // At the limit: kept as it is.
        let exact = "c".repeat(253 - "-t.p.1k.r1".len());
        assert_eq!(result_name(&exact, "t.p.1k.r1").len(), 253);
        assert_eq!(
            result_name(&exact, "t.p.1k.r1"),
            format!("{exact}-t.p.1k.r1")
        );
        assert_eq!(label_value(&long).len(), 63);
        assert_ne!(label_value(&long), label_value(&"b".repeat(301)));
    }
}
