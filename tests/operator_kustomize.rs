//! `kubectl apply -k manifests`, with the testenv's kubectl against its real API server: the
//! kustomization holds exactly the shipped manifests (the CRD, rbac.yaml and operator.yaml),
//! and every object it renders is accepted by the API server (server-side dry run; only the
//! install's two empty namespaces are created, so that the objects in them can be judged).
mod support;

use std::path::Path;
use std::process::Command;

use serde::Deserialize;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn documents(text: &str) -> Vec<serde_json::Value> {
    serde_yaml::Deserializer::from_str(text)
        .map(|d| serde_json::to_value(serde_yaml::Value::deserialize(d).unwrap()).unwrap())
        .filter(|v| !v.is_null())
        .collect()
}

/// (kind, name, namespace) of every object, sorted.
fn objects(docs: &[serde_json::Value]) -> Vec<(String, String, String)> {
    let mut out: Vec<_> = docs
        .iter()
        .map(|d| {
            let field = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_owned();
            (
                field(&d["kind"]),
                field(&d["metadata"]["name"]),
                field(&d["metadata"]["namespace"]),
            )
        })
        .collect();
    out.sort();
    out
}

fn kubectl(kubeconfig: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(support::kubectl())
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test]
async fn kubectl_apply_k_manifests_is_accepted_by_the_api_server() {
    let env = support::kube("kustomize").await;
    let manifests = repo().join("manifests");

    // The kustomization is the three files, nothing more, nothing less.
    let (ok, rendered, err) = kubectl(&env.kubeconfig, &["kustomize", manifests.to_str().unwrap()]);
    assert!(ok, "kubectl kustomize manifests: {err}");
    let mut shipped = Vec::new();
    for file in ["crd.yaml", "rbac.yaml", "operator.yaml"] {
        shipped.extend(documents(
            &std::fs::read_to_string(manifests.join(file)).unwrap(),
        ));
    }
    assert_eq!(objects(&documents(&rendered)), objects(&shipped));

    // The install's own namespaces exist (created once, empty: nothing else uses them), so the
    // API server can judge every object in them; then the whole kustomization as a dry run.
    let namespaces: std::collections::BTreeSet<String> = shipped
        .iter()
        .filter(|d| d["kind"] == "Namespace")
        .map(|d| d["metadata"]["name"].as_str().unwrap().to_owned())
        .collect();
    for ns in &namespaces {
        let (ok, _, err) = kubectl(&env.kubeconfig, &["create", "namespace", ns]);
        assert!(
            ok || err.contains("AlreadyExists"),
            "kubectl create namespace {ns}: {err}"
        );
    }
    let (ok, out, err) = kubectl(
        &env.kubeconfig,
        &[
            "apply",
            "-k",
            manifests.to_str().unwrap(),
            "--dry-run=server",
        ],
    );
    assert!(ok, "kubectl apply -k: {err}\n{out}");
    // Every object rendered is applied: `kind.group/name created|configured|unchanged`.
    for doc in documents(&rendered) {
        let kind = doc["kind"].as_str().unwrap().to_lowercase();
        let api = doc["apiVersion"].as_str().unwrap();
        let resource = match api.split_once('/') {
            Some((group, _)) => format!("{kind}.{group}"),
            None => kind,
        };
        let name = doc["metadata"]["name"].as_str().unwrap();
        let applied = ["created", "configured", "unchanged"]
            .map(|how| format!("{resource}/{name} {how} (server dry run)"));
        assert!(
            out.lines().any(|l| applied.iter().any(|a| a == l)),
            "{resource}/{name} not applied:\n{out}"
        );
    }
}
