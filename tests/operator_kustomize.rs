//! `kubectl apply -k manifests`, with the testenv's kubectl against its real API server: the
//! kustomization holds exactly the shipped manifests (the CRD, rbac.yaml and operator.yaml),
//! and every object it renders is accepted by the API server (server-side dry run, placed in
//! this test's namespace by an overlay, as a user's overlay would place it; nothing is
//! created).
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

    // A user's overlay over it, in this test's namespace (kustomize renames the Namespace and
    // the bindings' subjects with it), applied by the API server as a dry run.
    let overlay = Path::new(env!("CARGO_TARGET_TMPDIR")).join(&env.namespace);
    std::fs::create_dir_all(&overlay).unwrap();
    std::fs::write(
        overlay.join("kustomization.yaml"),
        format!(
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n\
             namespace: {}\nresources:\n  - ../../../manifests\n",
            env.namespace
        ),
    )
    .unwrap();
    let (ok, out, err) = kubectl(
        &env.kubeconfig,
        &["apply", "-k", overlay.to_str().unwrap(), "--dry-run=server"],
    );
    assert!(ok, "kubectl apply -k: {err}\n{out}");
    for (kind, name) in [
        (
            "customresourcedefinition.apiextensions.k8s.io",
            "mongobenchmarks.mongobench.io",
        ),
        ("serviceaccount", "mongobench-operator"),
        (
            "clusterrole.rbac.authorization.k8s.io",
            "mongobench-operator",
        ),
        (
            "clusterrolebinding.rbac.authorization.k8s.io",
            "mongobench-operator-nodes",
        ),
        (
            "role.rbac.authorization.k8s.io",
            "mongobench-operator-leader",
        ),
        ("deployment.apps", "mongobench-operator"),
    ] {
        let applied = ["created", "configured", "unchanged"]
            .map(|how| format!("{kind}/{name} {how} (server dry run)"));
        assert!(
            out.lines().any(|l| applied.iter().any(|a| a == l)),
            "{kind}/{name} not applied:\n{out}"
        );
    }
    std::fs::remove_dir_all(&overlay).unwrap();
}
