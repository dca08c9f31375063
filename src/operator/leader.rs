//! Leader election with a `coordination.k8s.io/v1` Lease, so two operator replicas never
//! reconcile at once. A replica takes the Lease when it is free, expired (its `renewTime` is
//! older than `leaseDurationSeconds`) or already its own, by a replace carrying the observed
//! `resourceVersion`: of two replicas racing for an expired Lease, the API server accepts only
//! one write. The leader renews well before expiry and stops leading (the operator exits)
//! when a renewal fails for a whole lease duration.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;
use kube::Client;
use kube::api::{Api, PostParams};

use super::error::Error;

/// Where and how to elect.
#[derive(Debug, Clone, PartialEq)]
pub struct LeaderElection {
    /// Namespace of the Lease.
    pub namespace: String,
    /// Name of the Lease.
    pub lease_name: String,
    /// This replica's identity (its pod name, plus a random suffix when run by hand).
    pub identity: String,
    /// How long a Lease is valid without renewal.
    pub lease_duration: Duration,
    /// How often the leader renews, and a standby retries.
    pub retry_period: Duration,
}

impl LeaderElection {
    /// Election on Lease `mongobench-operator` in `namespace` with a 15 s lease renewed every
    /// 5 s, as `identity`.
    pub fn new(namespace: impl Into<String>, identity: impl Into<String>) -> LeaderElection {
        LeaderElection {
            namespace: namespace.into(),
            lease_name: "mongobench-operator".into(),
            identity: identity.into(),
            lease_duration: Duration::from_secs(15),
            retry_period: Duration::from_secs(5),
        }
    }
}

/// True when `identity` may take (or keep) a Lease with `spec` at `now`.
pub fn may_take(spec: Option<&LeaseSpec>, identity: &str, now: Timestamp) -> bool {
    let Some(spec) = spec else { return true };
    match spec.holder_identity.as_deref() {
        None | Some("") => return true,
        Some(holder) if holder == identity => return true,
        Some(_) => {}
    }
    let (Some(renewed), Some(seconds)) = (&spec.renew_time, spec.lease_duration_seconds) else {
        return true;
    };
    let age = now.duration_since(renewed.0);
    age.as_secs_f64() > f64::from(seconds)
}

/// The Lease spec after `identity` takes or renews it at `now`.
pub fn taken(
    spec: Option<&LeaseSpec>,
    identity: &str,
    duration: Duration,
    now: Timestamp,
) -> LeaseSpec {
    let previous = spec.cloned().unwrap_or_default();
    let same_holder = previous.holder_identity.as_deref() == Some(identity);
    LeaseSpec {
        holder_identity: Some(identity.to_owned()),
        lease_duration_seconds: Some(i32::try_from(duration.as_secs().max(1)).unwrap_or(i32::MAX)),
        acquire_time: if same_holder {
            previous.acquire_time.clone()
        } else {
            Some(MicroTime(now))
        },
        renew_time: Some(MicroTime(now)),
        lease_transitions: Some(
            previous.lease_transitions.unwrap_or(0)
                + i32::from(!same_holder && previous.holder_identity.is_some()),
        ),
        ..previous
    }
}

/// One attempt to take or renew the Lease. `Ok(true)` when this replica holds it afterwards.
///
/// # Errors
/// [`Error::Kube`] for API errors other than a lost race (409).
pub async fn try_acquire(client: &Client, election: &LeaderElection) -> Result<bool, Error> {
    let api: Api<Lease> = Api::namespaced(client.clone(), &election.namespace);
    let now = Timestamp::now();
    let what = || format!("Lease {}/{}", election.namespace, election.lease_name);
    let current = api
        .get_opt(&election.lease_name)
        .await
        .map_err(|e| Error::kube(format!("reading {}", what()), e))?;
    let result = match current {
        None => {
            let lease = Lease {
                metadata: kube::api::ObjectMeta {
                    name: Some(election.lease_name.clone()),
                    namespace: Some(election.namespace.clone()),
                    ..Default::default()
                },
                spec: Some(taken(
                    None,
                    &election.identity,
                    election.lease_duration,
                    now,
                )),
            };
            api.create(&PostParams::default(), &lease).await.map(|_| ())
        }
        Some(lease) => {
            if !may_take(lease.spec.as_ref(), &election.identity, now) {
                return Ok(false);
            }
            let mut next = lease.clone();
            next.spec = Some(taken(
                lease.spec.as_ref(),
                &election.identity,
                election.lease_duration,
                now,
            ));
            // The replace carries the resourceVersion read above: a concurrent taker gets 409.
            api.replace(&election.lease_name, &PostParams::default(), &next)
                .await
                .map(|_| ())
        }
    };
    match result {
        Ok(()) => Ok(true),
        Err(kube::Error::Api(s)) if s.code == 409 => Ok(false),
        Err(e) => Err(Error::kube(format!("taking {}", what()), e)),
    }
}

/// Waits until this replica holds the Lease.
///
/// # Errors
/// Never returns an error for a held Lease; API errors are retried after `retry_period`.
pub async fn acquire(client: &Client, election: &LeaderElection) {
    loop {
        match try_acquire(client, election).await {
            Ok(true) => return,
            Ok(false) => {}
            Err(e) => tracing::warn!(error = %e, "leader election attempt failed"),
        }
        tokio::time::sleep(election.retry_period).await;
    }
}

/// Renews the Lease every `retry_period` while leading; returns an error when leadership is
/// lost (another replica took it) or could not be renewed for a lease duration.
///
/// # Errors
/// [`Error::Leader`] saying why leadership ended.
pub async fn keep(client: &Client, election: &LeaderElection) -> Error {
    let mut last_renewal = tokio::time::Instant::now();
    loop {
        tokio::time::sleep(election.retry_period).await;
        match try_acquire(client, election).await {
            Ok(true) => last_renewal = tokio::time::Instant::now(),
            Ok(false) => {
                return Error::Leader(format!(
                    "Lease {}/{} was taken by another replica",
                    election.namespace, election.lease_name
                ));
            }
            Err(e) => {
                tracing::warn!(error = %e, "renewing the leader lease failed");
                if last_renewal.elapsed() >= election.lease_duration {
                    return Error::Leader(format!(
                        "could not renew Lease {}/{} for {:?}: {e}",
                        election.namespace, election.lease_name, election.lease_duration
                    ));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: i64) -> Timestamp {
        Timestamp::from_second(s).unwrap()
    }

    fn held_by(holder: &str, renewed: i64) -> LeaseSpec {
        LeaseSpec {
            holder_identity: Some(holder.into()),
            renew_time: Some(MicroTime(at(renewed))),
            acquire_time: Some(MicroTime(at(renewed))),
            lease_duration_seconds: Some(15),
            lease_transitions: Some(2),
            ..Default::default()
        }
    }

    #[test]
    fn a_lease_is_taken_only_when_free_expired_or_own() {
        assert!(may_take(None, "a", at(100)));
        assert!(may_take(Some(&LeaseSpec::default()), "a", at(100)));
        assert!(may_take(Some(&held_by("a", 99)), "a", at(100)));
        assert!(!may_take(Some(&held_by("b", 90)), "a", at(100)));
        // Exactly at the duration it is still valid; one second later it has expired.
        assert!(!may_take(Some(&held_by("b", 85)), "a", at(100)));
        assert!(may_take(Some(&held_by("b", 84)), "a", at(100)));
    }

    #[test]
    fn taking_counts_transitions_and_renewing_keeps_the_acquire_time() {
        let renewed = taken(
            Some(&held_by("a", 90)),
            "a",
            Duration::from_secs(15),
            at(100),
        );
        assert_eq!(renewed.acquire_time, Some(MicroTime(at(90))));
        assert_eq!(renewed.renew_time, Some(MicroTime(at(100))));
        assert_eq!(renewed.lease_transitions, Some(2));
        let stolen = taken(
            Some(&held_by("b", 50)),
            "a",
            Duration::from_secs(15),
            at(100),
        );
        assert_eq!(stolen.holder_identity.as_deref(), Some("a"));
        assert_eq!(stolen.acquire_time, Some(MicroTime(at(100))));
        assert_eq!(stolen.lease_transitions, Some(3));
        let first = taken(None, "a", Duration::from_secs(15), at(100));
        assert_eq!(first.lease_transitions, Some(0));
        assert_eq!(first.lease_duration_seconds, Some(15));
    }
}
