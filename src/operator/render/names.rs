//! Names and labels of the objects the operator creates, derived from the benchmark, target
//! and platform names alone, so a restarted operator finds the same objects.
//!
//! Target and platform names may contain dots (`psmdb-8.0`); StatefulSet pods and Services
//! need DNS labels, so object names replace dots by `-`, and a name that would be too long is
//! cut and suffixed with a hash of the full name (stable and still unique).

use std::collections::BTreeMap;

use crate::plan::sanitize;

// The names the runner shares (`contract::names`), here beside the operator's own.
pub use crate::contract::names::{
    BENCHMARK_LABEL, CELL_LABEL, COMPONENT_LABEL, PLAN_KEY, PLATFORM_LABEL, RESULT_KEY,
    RUN_ID_LABEL, activity_name, label_value, result_name, results_selector, run_selector, shorten,
};

/// `app.kubernetes.io/name` of everything the operator creates.
pub const APP_NAME: &str = "mongobench";
/// `app.kubernetes.io/managed-by` of everything the operator creates.
pub const MANAGED_BY: &str = "mongobench-operator";
/// Label naming the target of a server or runner.
pub const TARGET_LABEL: &str = "mongobench.io/target";
/// `app.kubernetes.io/instance` label key.
pub const INSTANCE_LABEL: &str = "app.kubernetes.io/instance";
/// Where the runner container finds its plan.
pub const PLAN_DIR: &str = "/etc/mongobench";
/// Port mongod listens on.
pub const MONGOD_PORT: i32 = 27017;
/// Name of the mongod container of a server pod.
pub const MONGOD_CONTAINER: &str = "mongod";

/// Longest StatefulSet name: pods get a `controller-revision-hash` label
/// `<name>-<10 chars>`, which must fit a 63-character label value.
const STATEFULSET_NAME_MAX: usize = 52;
/// Longest Job name: its pods carry it as the `job-name` label value.
const JOB_NAME_MAX: usize = 63;

/// What a child object is for (`app.kubernetes.io/component`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Component {
    /// A replica-set member and its Service/NetworkPolicy.
    Server,
    /// A runner Job, its plan and its ServiceAccount/Role.
    Runner,
}

impl Component {
    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            Component::Server => "server",
            Component::Runner => "runner",
        }
    }
}

/// A DNS-1035 label from `parts` joined by `-`: lower case, dots replaced, starting with a
/// letter (`mb-` is put in front otherwise), at most `max` characters.
fn dns_label(parts: &[&str], max: usize) -> String {
    let joined = sanitize(&parts.join("-")).replace('.', "-");
    let trimmed = joined.trim_matches('-');
    let lettered = if trimmed.starts_with(|c: char| c.is_ascii_lowercase()) {
        trimmed.to_owned()
    } else {
        format!("mb-{trimmed}")
    };
    shorten(&lettered, max)
}

/// Name of the StatefulSet, headless Service and NetworkPolicy of `target` on `platform`;
/// also the replica-set name.
pub fn server_name(benchmark: &str, target: &str, platform: &str) -> String {
    dns_label(&[benchmark, target, platform], STATEFULSET_NAME_MAX)
}

/// Label telling the parts of a sharded target apart (`config`, `shard-<i>`, `mongos`), so each
/// StatefulSet and the Deployment select only their own pods.
pub const ROLE_LABEL: &str = "mongobench.io/role";

/// A part of a sharded target: its config server set, one shard's set, or its routers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Config,
    Shard(u32),
    Mongos,
}

impl Part {
    /// The [`ROLE_LABEL`] value and name suffix.
    pub fn as_label(self) -> String {
        match self {
            Part::Config => "config".to_owned(),
            Part::Shard(i) => format!("shard-{i}"),
            Part::Mongos => "mongos".to_owned(),
        }
    }
}

/// Name of one part of a sharded `target` on `platform` (StatefulSet, Service, replica-set
/// name; the Deployment and Service of the routers): `<benchmark>-<target>-<platform>-<part>`.
pub fn part_name(benchmark: &str, target: &str, platform: &str, part: Part) -> String {
    dns_label(
        &[benchmark, target, platform, &part.as_label()],
        STATEFULSET_NAME_MAX,
    )
}

/// The connection string of the routers of a sharded target: their Service, which spreads
/// the client's connections over every router.
pub fn mongos_uri(mongos: &str, namespace: &str) -> String {
    format!("mongodb://{mongos}.{namespace}.svc.cluster.local:{MONGOD_PORT}/")
}

/// Name of the runner Job of `target` on `platform`.
pub fn runner_name(benchmark: &str, target: &str, platform: &str) -> String {
    dns_label(&[benchmark, "run", target, platform], JOB_NAME_MAX)
}

/// Name of the ConfigMap holding the plan of `target` on `platform`.
pub fn plan_name(benchmark: &str, target: &str, platform: &str) -> String {
    format!("{}-plan", runner_name(benchmark, target, platform))
}

/// Name of the runner Job of several targets of `platform`, interleaved:
/// `<benchmark>-run-<platform>`.
pub fn platform_runner_name(benchmark: &str, platform: &str) -> String {
    dns_label(&[benchmark, "run", platform], JOB_NAME_MAX)
}

/// Name of the runner Job of `targets` on `platform`: a runner of one target is named after
/// its slot ([`runner_name`]), a runner of several after the platform
/// ([`platform_runner_name`]).
pub fn runner_job_name<S: AsRef<str>>(benchmark: &str, platform: &str, targets: &[S]) -> String {
    match targets {
        [one] => runner_name(benchmark, one.as_ref(), platform),
        _ => platform_runner_name(benchmark, platform),
    }
}

/// Name of the ConfigMap holding the plan of the runner of `targets` on `platform`.
pub fn runner_plan_name<S: AsRef<str>>(benchmark: &str, platform: &str, targets: &[S]) -> String {
    format!("{}-plan", runner_job_name(benchmark, platform, targets))
}

/// Name of the ConfigMap the client pods of the runner of `targets` on `platform` coordinate
/// through (`client.pods` above 1).
pub fn runner_board_name<S: AsRef<str>>(benchmark: &str, platform: &str, targets: &[S]) -> String {
    format!("{}-crew", runner_job_name(benchmark, platform, targets))
}

/// Name of the ConfigMap holding the copy of a custom workload's document the operator took
/// from the user's ConfigMap when it first planned the run.
pub fn workload_copy_name(benchmark: &str) -> String {
    dns_label(&[benchmark, "workload"], JOB_NAME_MAX)
}

/// Name of the runners' ServiceAccount, Role and RoleBinding of a benchmark.
pub fn runner_account(benchmark: &str) -> String {
    dns_label(&[benchmark, "runner"], JOB_NAME_MAX)
}

/// Name of the Secret holding the keyfile of a benchmark's replica sets.
pub fn keyfile_secret(benchmark: &str) -> String {
    dns_label(&[benchmark, "keyfile"], JOB_NAME_MAX)
}

/// Name of the Secret holding the admin user and password of a benchmark's replica sets.
pub fn admin_secret(benchmark: &str) -> String {
    dns_label(&[benchmark, "admin"], JOB_NAME_MAX)
}

/// DNS name of member `ordinal` of a provisioned replica set (`host:port`).
pub fn member_address(server: &str, namespace: &str, ordinal: u32) -> String {
    format!("{}:{MONGOD_PORT}", member_host(server, namespace, ordinal))
}

/// The DNS name of member `ordinal`, through the set's headless Service.
fn member_host(server: &str, namespace: &str, ordinal: u32) -> String {
    format!("{server}-{ordinal}.{server}.{namespace}.svc.cluster.local")
}

/// The address of the noise canary beside member `ordinal` (its pod's sidecar).
pub fn member_canary_address(server: &str, namespace: &str, ordinal: u32) -> String {
    format!(
        "{}:{}",
        member_host(server, namespace, ordinal),
        crate::measure::canary::SERVER_CANARY_PORT
    )
}

/// The connection string of a provisioned replica set with `members` members.
pub fn replica_set_uri(server: &str, namespace: &str, members: u32) -> String {
    let hosts: Vec<String> = (0..members)
        .map(|i| member_address(server, namespace, i))
        .collect();
    format!("mongodb://{}/?replicaSet={server}", hosts.join(","))
}

/// `uri` with the user and password of the environment variables `user_env` and
/// `password_env` (expanded by Kubernetes from `$(NAME)`) and `authSource=admin`.
pub fn with_credentials(uri: &str, user_env: &str, password_env: &str) -> String {
    let rest = uri.strip_prefix("mongodb://").unwrap_or(uri);
    let sep = if rest.contains('?') { '&' } else { '?' };
    format!("mongodb://$({user_env}):$({password_env})@{rest}{sep}authSource=admin")
}

/// Labels every object of `benchmark` carries.
pub fn benchmark_labels(benchmark: &str, component: Component) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app.kubernetes.io/name".to_owned(), APP_NAME.to_owned()),
        (INSTANCE_LABEL.to_owned(), label_value(benchmark)),
        (COMPONENT_LABEL.to_owned(), component.as_str().to_owned()),
        (
            "app.kubernetes.io/managed-by".to_owned(),
            MANAGED_BY.to_owned(),
        ),
        (BENCHMARK_LABEL.to_owned(), label_value(benchmark)),
    ])
}

/// Labels of the objects of one slot (target on platform).
pub fn slot_labels(
    benchmark: &str,
    component: Component,
    target: &str,
    platform: &str,
) -> BTreeMap<String, String> {
    let mut labels = benchmark_labels(benchmark, component);
    labels.insert(TARGET_LABEL.to_owned(), label_value(target));
    labels.insert(PLATFORM_LABEL.to_owned(), label_value(platform));
    labels
}

/// Labels of the runner Job and plan of `targets` on `platform`: a runner of one target
/// carries its slot's labels; a runner of several targets the platform label and no target
/// label (which is how a pass tells the two apart).
pub fn runner_labels<S: AsRef<str>>(
    benchmark: &str,
    platform: &str,
    targets: &[S],
) -> BTreeMap<String, String> {
    match targets {
        [one] => slot_labels(benchmark, Component::Runner, one.as_ref(), platform),
        _ => {
            let mut labels = benchmark_labels(benchmark, Component::Runner);
            labels.insert(PLATFORM_LABEL.to_owned(), label_value(platform));
            labels
        }
    }
}

/// Selector of every child of `benchmark` the operator created.
pub fn children_selector(benchmark: &str) -> String {
    format!(
        "{BENCHMARK_LABEL}={},app.kubernetes.io/managed-by={MANAGED_BY}",
        label_value(benchmark)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_replace_dots_and_stay_dns_labels() {
        assert_eq!(
            server_name("percona-9-vs-8", "psmdb-8.0", "x86-icelake"),
            "percona-9-vs-8-psmdb-8-0-x86-icelake"
        );
        assert_eq!(
            runner_name("percona-9-vs-8", "psmdb-8.0", "x86-icelake"),
            "percona-9-vs-8-run-psmdb-8-0-x86-icelake"
        );
        assert_eq!(plan_name("b", "t", "p"), "b-run-t-p-plan".to_owned());
        assert_eq!(
            platform_runner_name("percona-9-vs-8", "x86-icelake"),
            "percona-9-vs-8-run-x86-icelake"
        );
        assert_eq!(runner_job_name("b", "p.1", &["t"]), "b-run-t-p-1");
        assert_eq!(runner_job_name("b", "p.1", &["t", "u"]), "b-run-p-1");
        assert_eq!(runner_plan_name("b", "p", &["t", "u"]), "b-run-p-plan");
        assert_eq!(runner_plan_name("b", "p", &["t"]), "b-run-t-p-plan");
        assert_eq!(runner_account("b"), "b-runner");
        // A leading digit is not a DNS-1035 label.
        assert_eq!(server_name("1st", "a", "b"), "mb-1st-a-b");
    }

    #[test]
    fn long_names_are_cut_with_a_stable_hash() {
        let long = "a".repeat(60);
        let name = server_name(&long, "psmdb-8.0", "x86");
        assert_eq!(name.len(), 52);
        // 45 characters kept, then '-' and 6 hex digits of sha256 of the full label.
        let full = format!("{long}-psmdb-8-0-x86");
        let digest = <sha2::Sha256 as sha2::Digest>::digest(full.as_bytes());
        assert_eq!(
            name,
            format!("{}-{}", &long[..45], hex::encode(&digest[..3]))
        );
        assert_eq!(server_name(&long, "psmdb-8.0", "x86"), name);
        assert_ne!(server_name(&long, "psmdb-8.1", "x86"), name);
        assert_eq!(runner_name(&long, "t", "p").len(), 63);
        let platform_runner = platform_runner_name(&long, "x86");
        assert_eq!(platform_runner.len(), 63);
        assert_ne!(platform_runner, platform_runner_name(&long, "arm"));
        assert_eq!(label_value(&"x".repeat(63)), "x".repeat(63));
        assert_eq!(label_value(&"x".repeat(64)).len(), 63);
    }

    #[test]
    fn result_names_follow_the_runner_contract() {
        assert_eq!(
            result_name("percona-9-vs-8", "psmdb-8.0.x86-icelake.1m.r2"),
            "percona-9-vs-8-psmdb-8.0.x86-icelake.1m.r2"
        );
    }

    #[test]
    fn replica_set_uri_lists_every_member() {
        assert_eq!(
            replica_set_uri("b-t-p", "ns", 3),
            "mongodb://b-t-p-0.b-t-p.ns.svc.cluster.local:27017,\
             b-t-p-1.b-t-p.ns.svc.cluster.local:27017,\
             b-t-p-2.b-t-p.ns.svc.cluster.local:27017/?replicaSet=b-t-p"
        );
    }

    #[test]
    fn sharded_parts_and_the_routers_uri() {
        assert_eq!(
            part_name("b", "psmdb-8.0", "x86", Part::Config),
            "b-psmdb-8-0-x86-config"
        );
        assert_eq!(part_name("b", "t", "p", Part::Shard(1)), "b-t-p-shard-1");
        assert_eq!(part_name("b", "t", "p", Part::Mongos), "b-t-p-mongos");
        assert_eq!(part_name(&"a".repeat(60), "t", "p", Part::Mongos).len(), 52);
        assert_eq!(
            mongos_uri("b-t-p-mongos", "ns"),
            "mongodb://b-t-p-mongos.ns.svc.cluster.local:27017/"
        );
        assert_eq!(
            with_credentials(&mongos_uri("m", "ns"), "U", "P"),
            "mongodb://$(U):$(P)@m.ns.svc.cluster.local:27017/?authSource=admin"
        );
        assert_eq!(
            with_credentials(&replica_set_uri("s", "ns", 1), "U", "P"),
            "mongodb://$(U):$(P)@s-0.s.ns.svc.cluster.local:27017/?replicaSet=s&authSource=admin"
        );
    }

    #[test]
    fn selectors_select_the_benchmark() {
        assert_eq!(
            children_selector("b"),
            "mongobench.io/benchmark=b,app.kubernetes.io/managed-by=mongobench-operator"
        );
        assert_eq!(
            results_selector("b", "r1"),
            "mongobench.io/benchmark=b,mongobench.io/run-id=r1,mongobench.io/cell"
        );
        let labels = slot_labels("b", Component::Server, "psmdb-8.0", "x86");
        assert_eq!(labels["mongobench.io/target"], "psmdb-8.0");
        assert_eq!(labels["app.kubernetes.io/component"], "server");
        assert_eq!(labels.len(), 7);
        let runner = runner_labels("b", "x86", &["a", "c"]);
        assert_eq!(runner["mongobench.io/platform"], "x86");
        assert_eq!(runner["app.kubernetes.io/component"], "runner");
        assert!(!runner.contains_key("mongobench.io/target"));
        assert_eq!(
            runner_labels("b", "x86", &["a"]),
            slot_labels("b", Component::Runner, "a", "x86")
        );
    }
}
