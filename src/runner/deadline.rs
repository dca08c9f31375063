//! Bounds on waiting for a server. The driver has no socket timeout, so a server that stops
//! answering (a paused process, a partitioned node) would hold a request forever; every call
//! the runner makes is bounded here instead, and a call that runs out ends the cell as
//! INCOMPLETE naming what it waited for.

use std::fmt::Display;
use std::future::{Future, IntoFuture};
use std::time::Duration;

/// Commands whose work grows with the collection (index builds, the dataset digest, drops,
/// counts and `collStats`, which some servers compute by reading the collection) may take this
/// many operation timeouts.
pub const WHOLE_COLLECTION_FACTOR: u32 = 10;

/// The message of a call that got no reply in time.
pub fn timed_out(what: &str, limit: Duration) -> String {
    format!("{what}: {}", no_reply(limit))
}

/// What a call that got no reply in time failed with.
pub fn no_reply(limit: Duration) -> String {
    format!(
        "no reply within {} (workload.operationTimeout); the server stalled or is unreachable",
        crate::api::units::format_duration(limit)
    )
}

/// Awaits `call`, failing with [`timed_out`] after `limit`; its own error is kept as text.
pub async fn bounded<T, E: Display>(
    limit: Duration,
    what: &str,
    call: impl Future<Output = Result<T, E>>,
) -> Result<T, String> {
    match tokio::time::timeout(limit, call).await {
        Ok(result) => result.map_err(|e| e.to_string()),
        Err(_) => Err(timed_out(what, limit)),
    }
}

/// [`bounded`] for driver calls whose errors stay driver errors: a call that runs out fails
/// with a driver error saying so, which the caller's error mapping names as for any other.
pub async fn within<T>(
    limit: Duration,
    call: impl IntoFuture<Output = mongodb::error::Result<T>>,
) -> mongodb::error::Result<T> {
    tokio::time::timeout(limit, call)
        .await
        .unwrap_or_else(|_| Err(mongodb::error::Error::custom(no_reply(limit))))
}

/// A driver error as a reason: the words of a call that ran out of time (see [`within`]) as
/// they are, a server's refusal as its code, name and message (the driver's own rendering adds
/// the raw reply's bytes), any other as the driver writes it.
pub fn describe(e: &mongodb::error::Error) -> String {
    if let Some(words) = e.get_custom::<String>() {
        return words.clone();
    }
    match &*e.kind {
        mongodb::error::ErrorKind::Command(c) => {
            format!("error {} ({}): {}", c.code, c.code_name, c.message)
        }
        _ => e.to_string(),
    }
}

/// The limit of commands whose work grows with the collection.
pub fn whole_collection(limit: Duration) -> Duration {
    limit * WHOLE_COLLECTION_FACTOR
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_call_that_outlives_the_limit_is_refused_naming_it() {
        let slow = async {
            tokio::time::sleep(Duration::from_secs(60)).await;
            Ok::<_, String>(1)
        };
        let err = bounded(Duration::from_millis(50), "serverStatus", slow)
            .await
            .unwrap_err();
        assert_eq!(
            err,
            "serverStatus: no reply within 50ms (workload.operationTimeout); the server stalled or is unreachable"
        );
    }

    #[tokio::test]
    async fn a_call_within_the_limit_keeps_its_value_and_its_error() {
        let ok = bounded(Duration::from_secs(30), "x", async { Ok::<_, String>(7) }).await;
        assert_eq!(ok, Ok(7));
        let err = bounded(Duration::from_secs(30), "x", async {
            Err::<u8, _>("refused")
        })
        .await;
        assert_eq!(err, Err("refused".to_owned()));
    }
}
