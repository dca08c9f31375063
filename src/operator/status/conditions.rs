//! Conditions whose `lastTransitionTime` moves only when their status does, at the second the
//! API server stores.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;

/// `now` at the second: the API server stores times at that precision, and a stored time
/// must compare equal to the one computed, or every pass would rewrite status.
pub fn now_seconds(now: Timestamp) -> Time {
    Time(Timestamp::from_second(now.as_second()).expect("a valid time"))
}

/// A condition with `lastTransitionTime` kept from `old` when the status is unchanged.
pub fn condition(
    old: &[Condition],
    type_: &str,
    status: bool,
    reason: &str,
    message: String,
    generation: Option<i64>,
    now: Timestamp,
) -> Condition {
    let status = if status { "True" } else { "False" };
    let last_transition_time = old
        .iter()
        .find(|c| c.type_ == type_ && c.status == status)
        .map(|c| c.last_transition_time.clone())
        .unwrap_or_else(|| now_seconds(now));
    Condition {
        type_: type_.to_owned(),
        status: status.to_owned(),
        reason: reason.to_owned(),
        message,
        last_transition_time,
        observed_generation: generation,
    }
}
