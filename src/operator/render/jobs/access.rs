//! The identity the runners of a benchmark share: a ServiceAccount whose Role allows only what
//! a runner does, create, read and patch its own ConfigMaps.

use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::{PolicyRule, Role, RoleBinding, RoleRef, Subject};
use kube::ResourceExt;

use crate::api::MongoBenchmark;
use crate::operator::Error;
use crate::operator::error::SpecError;
use crate::operator::render::meta::child_meta as meta;
use crate::operator::render::names::{self, Component};

/// The ServiceAccount, Role and RoleBinding the runners of a benchmark use.
#[derive(Debug, Clone, PartialEq)]
pub struct RunnerAccess {
    /// The runners' identity.
    pub service_account: ServiceAccount,
    /// configmaps: create, get, patch, in the benchmark's namespace only.
    pub role: Role,
    /// Binds the Role to the ServiceAccount.
    pub role_binding: RoleBinding,
}

/// The names of every ConfigMap a runner of `bench` writes: a result per cell, an activity
/// per platform and, with several client pods, the board of every runner it may have (one
/// per platform interleaving its targets, or one per target).
fn runner_configmaps(bench: &MongoBenchmark) -> Result<Vec<String>, Error> {
    let bench_name = bench.name_any();
    // Every cell a runner may write, the slots a precision goal may add included.
    let cells = crate::plan::cells_with_added(&bench.spec, |_| true).map_err(SpecError::from)?;
    let mut names: Vec<String> = cells
        .iter()
        .map(|c| names::result_name(&bench_name, &c.id))
        .chain(
            bench
                .spec
                .platforms
                .iter()
                .map(|p| names::activity_name(&bench_name, &p.name)),
        )
        .collect();
    if bench.spec.client_pods() > 1 {
        let all: Vec<&str> = bench.spec.targets.iter().map(|t| t.name.as_str()).collect();
        for p in &bench.spec.platforms {
            names.push(names::runner_board_name(&bench_name, &p.name, &all));
            for t in &all {
                names.push(names::runner_board_name(&bench_name, &p.name, &[t]));
            }
        }
        names.dedup();
    }
    names.sort();
    names.dedup();
    Ok(names)
}

/// Builds the runners' ServiceAccount, Role and RoleBinding.
///
/// # Errors
/// [`Error::Incomplete`] for a MongoBenchmark without namespace or uid.
pub fn runner_access(bench: &MongoBenchmark) -> Result<RunnerAccess, Error> {
    let bench_name = bench.name_any();
    let name = names::runner_account(&bench_name);
    let labels = names::benchmark_labels(&bench_name, Component::Runner);
    let metadata = meta(bench, &name, &labels)?;
    let configmaps = |verbs: &[&str], resource_names: Option<Vec<String>>| PolicyRule {
        api_groups: Some(vec![String::new()]),
        resources: Some(vec!["configmaps".to_owned()]),
        verbs: verbs.iter().map(|v| (*v).to_owned()).collect(),
        resource_names,
        ..PolicyRule::default()
    };
    let role = Role {
        metadata: metadata.clone(),
        rules: Some(vec![
            // Kubernetes cannot limit create by name; creating is harmless, reading or changing
            // another's ConfigMap is what the names below prevent.
            configmaps(&["create"], None),
            configmaps(&["get", "patch"], Some(runner_configmaps(bench)?)),
        ]),
    };
    let role_binding = RoleBinding {
        metadata: metadata.clone(),
        role_ref: RoleRef {
            api_group: Some("rbac.authorization.k8s.io".to_owned()),
            kind: "Role".to_owned(),
            name: name.clone(),
        },
        subjects: Some(vec![Subject {
            kind: "ServiceAccount".to_owned(),
            name,
            namespace: bench.namespace(),
            ..Subject::default()
        }]),
    };
    Ok(RunnerAccess {
        service_account: ServiceAccount {
            metadata,
            ..ServiceAccount::default()
        },
        role,
        role_binding,
    })
}
