//! What every pod the operator renders shares: the security contexts of the `restricted` Pod
//! Security level, and environment variables read from Secrets.

use k8s_openapi::api::core::v1::{
    Capabilities, EnvVar, EnvVarSource, PodSecurityContext, SeccompProfile, SecretKeySelector,
    SecurityContext,
};

use crate::api::Distribution;

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

/// [`container_security`] with a read-only root filesystem: for the containers of the
/// mongobench image (runner, canary) and the keyfile's init container, which write only to
/// their volumes (and the termination message, its own mount).
pub fn read_only_container_security() -> SecurityContext {
    SecurityContext {
        read_only_root_filesystem: Some(true),
        ..container_security()
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
