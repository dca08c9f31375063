//! The operator's small HTTP servers: `/healthz` (the process is alive) and `/readyz`
//! (start-up checks passed: the CRD is installed) for the kubelet's probes, and `/metrics`
//! (Prometheus text format), unauthenticated, so served on an address of its own (loopback by
//! default) unless it is given the probes' address.

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

/// What one server answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Routes {
    /// `/healthz` and `/readyz`.
    pub probes: bool,
    /// `/metrics`.
    pub metrics: bool,
}

/// Binds `addr` and serves `routes` in a background task; returns the bound address (useful
/// with port 0).
///
/// # Errors
/// [`Error::Http`] when the address cannot be bound.
pub async fn serve(
    addr: SocketAddr,
    routes: Routes,
    metrics: Arc<Metrics>,
    ready: Arc<AtomicBool>,
) -> Result<SocketAddr, Error> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| Error::Http { addr, source })?;
    let bound = listener
        .local_addr()
        .map_err(|source| Error::Http { addr, source })?;
    let mut app = Router::new();
    if routes.probes {
        app = app
            .route("/healthz", get(healthz))
            .route("/readyz", get(readyz));
    }
    if routes.metrics {
        app = app.route("/metrics", get(metrics_text));
    }
    let app = app.with_state(Shared { metrics, ready });
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
        let all = Routes {
            probes: true,
            metrics: true,
        };
        let addr = serve("127.0.0.1:0".parse().unwrap(), all, metrics, ready.clone())
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

    #[tokio::test]
    async fn probes_and_metrics_can_be_served_apart() {
        let (metrics, ready) = (Arc::new(Metrics::new()), Arc::new(AtomicBool::new(true)));
        let any = "127.0.0.1:0".parse().unwrap();
        let probes = Routes {
            probes: true,
            metrics: false,
        };
        let only_metrics = Routes {
            probes: false,
            metrics: true,
        };
        let a = serve(any, probes, metrics.clone(), ready.clone())
            .await
            .unwrap();
        let b = serve(any, only_metrics, metrics, ready).await.unwrap();
        assert!(get(a, "/readyz").await.starts_with("HTTP/1.1 200"));
        assert!(get(a, "/metrics").await.starts_with("HTTP/1.1 404"));
        assert!(get(b, "/metrics").await.starts_with("HTTP/1.1 200"));
        assert!(get(b, "/healthz").await.starts_with("HTTP/1.1 404"));
    }
}
