//! What kstatus-based tools (Flux, kpt, cli-utils) conclude about a MongoBenchmark from the
//! conditions the operator sets (`status.rs`).

use super::spec::MongoBenchmark;
use super::status::condition_types;

/// What kstatus-based tools (Flux, kpt, cli-utils) conclude about a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KStatus {
    /// Fully reconciled.
    Current,
    /// Still being worked on (or the current generation not yet observed).
    InProgress,
    /// Stalled: needs a change to progress.
    Failed,
    /// Being deleted.
    Terminating,
}

/// The kstatus of a MongoBenchmark, by kstatus' rules in order: deletion → Terminating;
/// `observedGeneration` present and behind `generation` → InProgress; `Reconciling=True` →
/// InProgress; `Stalled=True` → Failed; `Ready` True → Current, False → InProgress; nothing
/// recognised → Current.
pub fn kstatus(mb: &MongoBenchmark) -> KStatus {
    if mb.metadata.deletion_timestamp.is_some() {
        return KStatus::Terminating;
    }
    let Some(status) = &mb.status else {
        return KStatus::Current;
    };
    if let (Some(observed), Some(generation)) = (status.observed_generation, mb.metadata.generation)
        && observed != generation
    {
        return KStatus::InProgress;
    }
    if status.condition_is_true(condition_types::RECONCILING) {
        return KStatus::InProgress;
    }
    if status.condition_is_true(condition_types::STALLED) {
        return KStatus::Failed;
    }
    match status
        .condition(condition_types::READY)
        .map(|c| c.status.as_str())
    {
        Some("False") => KStatus::InProgress,
        _ => KStatus::Current,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::spec::MongoBenchmarkSpec;
    use crate::api::status::MongoBenchmarkStatus;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
    use k8s_openapi::jiff::Timestamp;

    fn condition(type_: &str, status: &str) -> Condition {
        Condition {
            type_: type_.to_string(),
            status: status.to_string(),
            reason: "Test".to_string(),
            message: String::new(),
            last_transition_time: Time(Timestamp::UNIX_EPOCH),
            observed_generation: None,
        }
    }

    fn benchmark(generation: i64, status: Option<MongoBenchmarkStatus>) -> MongoBenchmark {
        let spec: MongoBenchmarkSpec = serde_yaml::from_str(
            "targets: [{name: a, external: {uriSecretRef: {name: s}}}]\n\
             platforms: [{name: p}]\ndataset: {sizes: [10k]}\nworkload: {type: flights}\n",
        )
        .unwrap();
        let mut mb = MongoBenchmark::new("kstatus-test", spec);
        mb.metadata.generation = Some(generation);
        mb.status = status;
        mb
    }

    fn status(observed: i64, conditions: &[(&str, &str)]) -> MongoBenchmarkStatus {
        MongoBenchmarkStatus {
            observed_generation: Some(observed),
            conditions: conditions.iter().map(|(t, s)| condition(t, s)).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn ready_at_the_current_generation_is_current() {
        let mb = benchmark(
            2,
            Some(status(2, &[("Ready", "True"), ("Reconciling", "False")])),
        );
        assert_eq!(kstatus(&mb), KStatus::Current);
    }

    #[test]
    fn an_old_observed_generation_is_in_progress_even_when_ready() {
        let mb = benchmark(3, Some(status(2, &[("Ready", "True")])));
        assert_eq!(kstatus(&mb), KStatus::InProgress);
    }

    #[test]
    fn reconciling_is_in_progress_and_wins_over_stalled() {
        let mb = benchmark(
            1,
            Some(status(1, &[("Reconciling", "True"), ("Stalled", "True")])),
        );
        assert_eq!(kstatus(&mb), KStatus::InProgress);
    }

    #[test]
    fn stalled_is_failed() {
        let mb = benchmark(
            1,
            Some(status(1, &[("Stalled", "True"), ("Ready", "False")])),
        );
        assert_eq!(kstatus(&mb), KStatus::Failed);
    }

    #[test]
    fn ready_false_is_in_progress() {
        let mb = benchmark(1, Some(status(1, &[("Ready", "False")])));
        assert_eq!(kstatus(&mb), KStatus::InProgress);
    }

    #[test]
    fn no_status_or_no_known_condition_is_current() {
        assert_eq!(kstatus(&benchmark(1, None)), KStatus::Current);
        let mb = benchmark(1, Some(status(1, &[("DataSeeded", "True")])));
        assert_eq!(kstatus(&mb), KStatus::Current);
    }

    #[test]
    fn deletion_is_terminating() {
        let mut mb = benchmark(1, Some(status(1, &[("Ready", "True")])));
        mb.metadata.deletion_timestamp = Some(Time(Timestamp::UNIX_EPOCH));
        assert_eq!(kstatus(&mb), KStatus::Terminating);
    }

    #[test]
    fn conditions_are_found_by_type() {
        let s = status(1, &[("Ready", "True"), ("Stalled", "False")]);
        assert_eq!(
            s.condition("Stalled").map(|c| c.status.as_str()),
            Some("False")
        );
        assert!(s.condition_is_true("Ready"));
        assert!(!s.condition_is_true("Stalled"));
        assert!(!s.condition_is_true("Reconciling"));
    }
}
