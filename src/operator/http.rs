//! The operator's small HTTP server: `/healthz` (the process is alive), `/readyz` (start-up
//! checks passed: the CRD is installed) and `/metrics` (Prometheus text format).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;

use super::error::Error;
use super::metrics::Metrics;

#[derive(Clone)]
struct Shared {
    metrics: Arc<Metrics>,
    ready: Arc<AtomicBool>,
}

async fn healthz() -> &'static str {
    "ok"
}

async fn readyz(State(s): State<Shared>) -> impl IntoResponse {
    if s.ready.load(Ordering::Relaxed) {
        (StatusCode::OK, "ready")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "starting")
    }
}

async fn metrics_text(State(s): State<Shared>) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        s.metrics.encode(),
    )
}

/// Binds `addr` and serves in a background task; returns the bound address (useful with port
/// 0).
///
/// # Errors
/// [`Error::Http`] when the address cannot be bound.
pub async fn serve(
    addr: SocketAddr,
    metrics: Arc<Metrics>,
    ready: Arc<AtomicBool>,
) -> Result<SocketAddr, Error> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| Error::Http { addr, source })?;
    let bound = listener
        .local_addr()
        .map_err(|source| Error::Http { addr, source })?;
    let app = Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics_text))
        .with_state(Shared { metrics, ready });
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!(error = %e, "the HTTP server stopped");
        }
    });
    Ok(bound)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn get(addr: SocketAddr, path: &str) -> String {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.write_all(
            format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes(),
        )
        .await
        .unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).await.unwrap();
        out
    }

    #[tokio::test]
    async fn serves_health_readiness_and_metrics() {
        let metrics = Arc::new(Metrics::new());
        metrics.wrote("status");
        let ready = Arc::new(AtomicBool::new(false));
        let addr = serve("127.0.0.1:0".parse().unwrap(), metrics, ready.clone())
            .await
            .unwrap();
        assert!(get(addr, "/healthz").await.starts_with("HTTP/1.1 200"));
        assert!(get(addr, "/readyz").await.starts_with("HTTP/1.1 503"));
        ready.store(true, Ordering::Relaxed);
        assert!(get(addr, "/readyz").await.starts_with("HTTP/1.1 200"));
        let m = get(addr, "/metrics").await;
        assert!(m.starts_with("HTTP/1.1 200"), "{m}");
        assert!(
            m.contains("mongobench_api_writes_total{kind=\"status\"} 1"),
            "{m}"
        );
        assert!(get(addr, "/nope").await.starts_with("HTTP/1.1 404"));
    }
}
