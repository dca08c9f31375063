//! An external target behind TLS with a private CA, end to end: a SecantusDB of the test's own
//! serves TLS with a certificate of a CA made here and requires a client certificate of the same
//! CA; the benchmark names the CA bundle and the client certificate in `tlsSecretRef`; the
//! operator mounts them into the runner Job, which the client-node kubelet harness runs for real,
//! and the runner connects through the MongoDB driver with them, seeds and measures. The same
//! benchmark without `tlsSecretRef` cannot connect (the server refuses anyone without a
//! certificate of its CA), so the figures come through the TLS path.
mod operator_common;
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, PostParams};
use mongobench::api::{CellPhase, StatusPhase};
use operator_common as common;
use serde_json::{Value, json};

/// Runs `openssl` with `args` in `dir`.
fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl on PATH (the testenv needs it too)");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A CA, a server certificate for 127.0.0.1 and a client certificate, both of that CA, in
/// `dir`: `ca.crt`, `server.crt`/`server.key`, and `client.pem` (certificate, then key).
fn certificates(dir: &Path) {
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let mut ca = vec![
        "req",
        "-x509",
        "-days",
        "2",
        "-subj",
        "/CN=mongobench test CA",
    ];
    ca.extend(ec);
    ca.extend(["-keyout", "ca.key", "-out", "ca.crt"]);
    openssl(dir, &ca);
    std::fs::write(dir.join("server.ext"), "subjectAltName=IP:127.0.0.1\n").unwrap();
    std::fs::write(dir.join("client.ext"), "extendedKeyUsage=clientAuth\n").unwrap();
    for (who, subject) in [
        ("server", "/CN=127.0.0.1"),
        ("client", "/CN=mongobench-runner"),
    ] {
        let (key, csr, crt, ext) = (
            format!("{who}.key"),
            format!("{who}.csr"),
            format!("{who}.crt"),
            format!("{who}.ext"),
        );
        let mut req = vec!["req", "-subj", subject];
        req.extend(ec);
        req.extend(["-keyout", key.as_str(), "-out", csr.as_str()]);
        openssl(dir, &req);
        openssl(
            dir,
            &[
                "x509",
                "-req",
                "-in",
                &csr,
                "-CA",
                "ca.crt",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-days",
                "2",
                "-extfile",
                &ext,
                "-out",
                &crt,
            ],
        );
    }
    let pem = [
        std::fs::read_to_string(dir.join("client.crt")).unwrap(),
        std::fs::read_to_string(dir.join("client.key")).unwrap(),
    ]
    .concat();
    std::fs::write(dir.join("client.pem"), pem).unwrap();
}

fn benchmark(name: &str, tls: bool) -> Value {
    let mut external = json!({"uriSecretRef": {"name": "db"}});
    if tls {
        external["tlsSecretRef"] = json!({"name": "db-tls", "clientCertificateKey": "client.pem"});
    }
    json!({
        "apiVersion": "mongobench.io/v1alpha1",
        "kind": "MongoBenchmark",
        "metadata": {"name": name},
        "spec": {
            "targets": [{"name": "secantus", "external": external}],
            "platforms": [{"name": "local"}],
            "client": {"nodeSelector": {"cloud.google.com/gke-nodepool": "client"}},
            "dataset": {"sizes": ["100"]},
            "workload": {"type": "flights", "workers": 2, "duration": "2s", "warmup": "0s", "seed": 5},
            "repetitions": 1
        }
    })
}

#[tokio::test]
async fn an_external_target_behind_a_private_ca_is_measured_over_tls_with_a_client_certificate() {
    let env = common::setup("e2e-tls").await;
    let dir: PathBuf = std::env::temp_dir().join(format!("mongobench-tls-{}", env.namespace));
    std::fs::create_dir_all(&dir).unwrap();
    certificates(&dir);
    let file = |f: &str| dir.join(f).display().to_string();
    let server = support::private_secantus_with(
        "e2e-tls",
        &[
            format!("--tls-cert-file={}", file("server.crt")),
            format!("--tls-key-file={}", file("server.key")),
            format!("--tls-ca-file={}", file("ca.crt")),
            "--tls-require-client-cert".to_owned(),
        ],
    );
    let secrets: Api<Secret> = Api::namespaced(env.client.clone(), &env.namespace);
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    for secret in [
        json!({"metadata": {"name": "db"},
               "stringData": {"uri": format!("{}?directConnection=true", server.uri)}}),
        json!({"metadata": {"name": "db-tls"},
               "stringData": {"ca.crt": read("ca.crt"), "client.pem": read("client.pem")}}),
    ] {
        let secret: Secret = serde_json::from_value(secret).unwrap();
        secrets
            .create(&PostParams::default(), &secret)
            .await
            .unwrap();
    }
    let _kubelet = testenv_kubelet::start(
        env.client.clone(),
        &env.namespace,
        &env.kubeconfig,
        Path::new(env!("CARGO_BIN_EXE_mongobench")),
    );
    let _operator = common::start(&env, common::options(&env.namespace));
    common::apply(&env, &benchmark("tls", true)).await;
    common::apply(&env, &benchmark("plain", false)).await;

    let ended = |name: &'static str| {
        common::status_until(&env, name, Duration::from_secs(240), "the end", |s| {
            matches!(s.phase, Some(StatusPhase::Completed | StatusPhase::Failed))
        })
    };
    let status = ended("tls").await;
    assert_eq!(status.phase, Some(StatusPhase::Completed), "{status:#?}");
    assert_eq!(status.cells.len(), 1);
    assert_eq!(
        status.cells[0].phase,
        CellPhase::Completed,
        "{:?}",
        status.cells
    );
    let results = common::cell_results(&env, "mongobench.io/benchmark=tls").await;
    assert_eq!(results.len(), 1);
    assert!(results[0].is_complete(), "{:?}", results[0].status);
    assert_eq!(results[0].dataset.seeded_documents, 100);
    assert!(results[0].measured.as_ref().unwrap().overall.completed > 0);

    // Without the CA and the client certificate, the same server is out of reach.
    let plain = ended("plain").await;
    assert_eq!(plain.phase, Some(StatusPhase::Failed), "{plain:#?}");
    assert_eq!(plain.cells[0].phase, CellPhase::Failed);
    let _ = std::fs::remove_dir_all(&dir);
}
