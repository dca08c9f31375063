//! Polling with a deadline: the control plane is eventually consistent, so tests wait for the
//! outcome they assert, and fail naming what never happened.
use std::future::Future;
use std::time::{Duration, Instant};

/// Polls `probe` every 200 ms until it yields `Some`, panicking after `limit` with `what`.
pub async fn until<T, F, Fut>(limit: Duration, what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = probe().await {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {limit:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
