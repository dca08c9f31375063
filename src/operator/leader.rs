//! Leader election with a `coordination.k8s.io/v1` Lease, so two operator replicas never
//! reconcile at once. The design is client-go's:
//!
//! - A standby judges the Lease expired by its own monotonic clock: when the record (holder,
//!   times, transitions) has not changed for the record's `leaseDurationSeconds` since this
//!   replica last saw it change. The holder's `renewTime` is never compared with the local
//!   wall clock, so clocks that disagree cannot make a live leader look expired.
//! - The leader renews every `retry_period` and stops leading when no renewal succeeded
//!   within `renew_deadline` of the last successful one (counted from when that request was
//!   sent), shorter than the lease: it has stopped acting before any standby can judge the
//!   Lease expired.
//! - Every call on the Lease has a deadline (a renewal: the renew deadline; an attempt to
//!   take it: the renew deadline too), so a request that hangs cannot keep a replica leading.
//! - Taking and renewing replace the Lease with the `resourceVersion` read: of two replicas
//!   racing, the API server accepts one write.

use std::future::Future;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;
use kube::Client;
use kube::api::{Api, PostParams};
use tokio::time::Instant;

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
    /// How long a standby waits, after it last saw the Lease change, before taking it.
    pub lease_duration: Duration,
    /// How long the leader keeps leading without a successful renewal; shorter than
    /// `lease_duration`.
    pub renew_deadline: Duration,
    /// How often the leader renews, and a standby looks.
    pub retry_period: Duration,
}

impl LeaderElection {
    /// Election on Lease `mongobench-operator` in `namespace` as `identity`, with client-go's
    /// defaults: a 15 s lease, a 10 s renew deadline, a look every 2 s.
    pub fn new(namespace: impl Into<String>, identity: impl Into<String>) -> LeaderElection {
        LeaderElection {
            namespace: namespace.into(),
            lease_name: "mongobench-operator".into(),
            identity: identity.into(),
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
        }
    }

    /// Checks that the timings keep one leader at a time: a retry period shorter than the
    /// renew deadline, itself shorter than the lease.
    ///
    /// # Errors
    /// [`Error::Leader`] naming the setting that breaks the rule.
    pub fn check(&self) -> Result<(), Error> {
        if self.retry_period.is_zero() || self.retry_period >= self.renew_deadline {
            return Err(Error::Leader(format!(
                "retry period {:?} must be above zero and shorter than the renew deadline {:?}",
                self.retry_period, self.renew_deadline
            )));
        }
        if self.renew_deadline >= self.lease_duration {
            return Err(Error::Leader(format!(
                "renew deadline {:?} must be shorter than the lease duration {:?}: a leader \
                 must stop before a standby may take over",
                self.renew_deadline, self.lease_duration
            )));
        }
        Ok(())
    }

    fn what(&self) -> String {
        format!("Lease {}/{}", self.namespace, self.lease_name)
    }
}

/// What this replica last saw of the Lease and when it last saw it change, by its own
/// monotonic clock.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Observation {
    record: Option<LeaseSpec>,
    changed_at: Option<Instant>,
}

impl Observation {
    /// Records `spec` as seen at `now`; the change time moves only when it differs from the
    /// record seen before.
    pub fn see(&mut self, spec: Option<&LeaseSpec>, now: Instant) {
        if self.changed_at.is_none() || self.record.as_ref() != spec {
            self.record = spec.cloned();
            self.changed_at = Some(now);
        }
    }

    /// True when `identity` may take (or keep) the Lease last seen: it is free, its own, or
    /// unchanged for its whole `leaseDurationSeconds` since it was seen to change.
    pub fn may_take(&self, identity: &str, now: Instant) -> bool {
        let Some(spec) = &self.record else {
            return true;
        };
        match spec.holder_identity.as_deref() {
            None | Some("") => return true,
            Some(holder) if holder == identity => return true,
            Some(_) => {}
        }
        let (Some(seconds), Some(at)) = (spec.lease_duration_seconds, self.changed_at) else {
            return true;
        };
        let lease = Duration::from_secs(u64::try_from(seconds.max(0)).unwrap_or(0));
        now.saturating_duration_since(at) > lease
    }
}

/// The Lease spec after `identity` takes or renews it at `now` (wall-clock times, for
/// people and other tools; expiry is never judged by them).
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

/// One replica's part in the election.
pub struct Candidate {
    client: Client,
    election: LeaderElection,
    observed: Observation,
}

impl Candidate {
    /// A candidate for `election`, using `client`.
    ///
    /// # Errors
    /// [`Error::Leader`] when the timings would let two replicas lead ([`LeaderElection::check`]).
    pub fn new(client: Client, election: LeaderElection) -> Result<Candidate, Error> {
        election.check()?;
        Ok(Candidate {
            client,
            election,
            observed: Observation::default(),
        })
    }

    /// One attempt to take or renew the Lease, every call ending by `deadline`. `Ok(true)`
    /// when this replica holds it afterwards.
    ///
    /// # Errors
    /// [`Error::Kube`] for API errors other than a lost race (409); [`Error::Leader`] when a
    /// call has no answer by `deadline`.
    pub async fn try_acquire_by(&mut self, deadline: Instant) -> Result<bool, Error> {
        let e = &self.election;
        let api: Api<Lease> = Api::namespaced(self.client.clone(), &e.namespace);
        let params = PostParams::default();
        let current = by(deadline, e, "reading", api.get_opt(&e.lease_name))
            .await?
            .map_err(|err| Error::kube(format!("reading {}", e.what()), err))?;
        self.observed.see(
            current.as_ref().and_then(|l| l.spec.as_ref()),
            Instant::now(),
        );
        if !self.observed.may_take(&e.identity, Instant::now()) {
            return Ok(false);
        }
        let spec = taken(
            current.as_ref().and_then(|l| l.spec.as_ref()),
            &e.identity,
            e.lease_duration,
            Timestamp::now(),
        );
        let written = match current {
            None => {
                let lease = Lease {
                    metadata: kube::api::ObjectMeta {
                        name: Some(e.lease_name.clone()),
                        namespace: Some(e.namespace.clone()),
                        ..Default::default()
                    },
                    spec: Some(spec),
                };
                by(deadline, e, "creating", api.create(&params, &lease)).await?
            }
            Some(mut lease) => {
                lease.spec = Some(spec);
                // The replace carries the resourceVersion read above: a concurrent taker gets
                // 409.
                let replace = api.replace(&e.lease_name, &params, &lease);
                by(deadline, e, "renewing", replace).await?
            }
        };
        match written {
            Ok(lease) => {
                self.observed.see(lease.spec.as_ref(), Instant::now());
                Ok(true)
            }
            Err(kube::Error::Api(s)) if s.code == 409 => Ok(false),
            Err(err) => Err(Error::kube(format!("taking {}", e.what()), err)),
        }
    }

    /// [`Candidate::try_acquire_by`] with the renew deadline from now.
    ///
    /// # Errors
    /// As [`Candidate::try_acquire_by`].
    pub async fn try_acquire(&mut self) -> Result<bool, Error> {
        let deadline = Instant::now() + self.election.renew_deadline;
        self.try_acquire_by(deadline).await
    }

    /// Waits until this replica holds the Lease; failed attempts are logged and retried
    /// every retry period.
    pub async fn acquire(&mut self) {
        loop {
            match self.try_acquire().await {
                Ok(true) => return,
                Ok(false) => {}
                Err(e) => tracing::warn!(error = %e, "leader election attempt failed"),
            }
            tokio::time::sleep(self.election.retry_period).await;
        }
    }

    /// Renews the Lease every retry period while leading; returns why leadership ended:
    /// another replica took the Lease, or no renewal succeeded within the renew deadline of
    /// the last one (counted from when that one was sent). Never later than that deadline.
    pub async fn keep(&mut self) -> Error {
        let e = self.election.clone();
        let mut renewed = Instant::now();
        loop {
            tokio::time::sleep_until(
                (Instant::now() + e.retry_period).min(renewed + e.renew_deadline),
            )
            .await;
            let deadline = renewed + e.renew_deadline;
            let sent = Instant::now();
            if sent >= deadline {
                return Error::Leader(format!(
                    "no renewal of {} succeeded within the renew deadline {:?}; stepping down",
                    e.what(),
                    e.renew_deadline
                ));
            }
            match self.try_acquire_by(deadline).await {
                Ok(true) => renewed = sent,
                Ok(false) => {
                    return Error::Leader(format!("{} was taken by another replica", e.what()));
                }
                Err(err) => tracing::warn!(error = %err, "renewing the leader lease failed"),
            }
        }
    }
}

/// `call`, or [`Error::Leader`] when it has no answer by `deadline`.
async fn by<T>(
    deadline: Instant,
    election: &LeaderElection,
    doing: &str,
    call: impl Future<Output = T>,
) -> Result<T, Error> {
    tokio::time::timeout_at(deadline, call).await.map_err(|_| {
        Error::Leader(format!(
            "{doing} {}: no answer by the deadline",
            election.what()
        ))
    })
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
    fn a_lease_expires_only_after_it_stayed_unchanged_for_its_duration() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let mut seen = Observation::default();
        assert!(seen.may_take("a", t0), "nothing seen: free");
        seen.see(Some(&LeaseSpec::default()), t0);
        assert!(seen.may_take("a", t0), "no holder: free");
        // A renewTime a day old (the holder's clock is wrong) says nothing: what counts is
        // when this replica saw the record change.
        seen.see(Some(&held_by("b", 0)), t0);
        assert!(
            !seen.may_take("a", t0 + s(15)),
            "exactly the duration: valid"
        );
        assert!(seen.may_take("a", t0 + s(16)));
        assert!(seen.may_take("b", t0), "its own");
        // Seeing the same record again keeps the time it changed; a renewal moves it.
        seen.see(Some(&held_by("b", 0)), t0 + s(10));
        assert!(seen.may_take("a", t0 + s(16)));
        seen.see(Some(&held_by("b", 1)), t0 + s(10));
        assert!(!seen.may_take("a", t0 + s(16)));
        assert!(seen.may_take("a", t0 + s(26)));
    }

    #[test]
    fn timings_that_would_let_two_replicas_lead_are_refused() {
        let ok = LeaderElection::new("ns", "a");
        ok.check().unwrap();
        let late = LeaderElection {
            renew_deadline: Duration::from_secs(15),
            ..ok.clone()
        };
        assert_eq!(
            late.check().unwrap_err().to_string(),
            "leader election: renew deadline 15s must be shorter than the lease duration 15s: \
             a leader must stop before a standby may take over"
        );
        let slow = LeaderElection {
            retry_period: Duration::from_secs(10),
            ..ok
        };
        assert_eq!(
            slow.check().unwrap_err().to_string(),
            "leader election: retry period 10s must be above zero and shorter than the renew \
             deadline 10s"
        );
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
