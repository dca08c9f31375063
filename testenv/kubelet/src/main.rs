//! `testenv-kubelet --namespace NS --binary PATH [--secantus PATH]`: runs the harness until
//! interrupted, so the local demo's runner Jobs execute on this machine like they would on a
//! client node, and, with `--secantus`, provisioned members on the `local-wt` pool as
//! SecantusDB.

use std::path::PathBuf;

#[tokio::main]
async fn main() {
    let mut namespace = None;
    let mut binary = None;
    let mut secantus = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--namespace" => namespace = args.next(),
            "--binary" => binary = args.next().map(PathBuf::from),
            "--secantus" => secantus = args.next().map(PathBuf::from),
            other => {
                eprintln!(
                    "testenv-kubelet: unknown argument {other:?}; usage: testenv-kubelet --namespace NS --binary PATH [--secantus PATH]"
                );
                std::process::exit(2);
            }
        }
    }
    let (Some(namespace), Some(binary)) = (namespace, binary) else {
        eprintln!(
            "usage: testenv-kubelet --namespace NS --binary PATH [--secantus PATH] (KUBECONFIG names the cluster)"
        );
        std::process::exit(2);
    };
    // The pod's process runs in a scratch directory: a relative binary path would not resolve.
    let absolute = |flag: &str, path: PathBuf| {
        std::fs::canonicalize(&path).unwrap_or_else(|e| {
            eprintln!("testenv-kubelet: {flag} {}: {e}", path.display());
            std::process::exit(2);
        })
    };
    let binary = absolute("--binary", binary);
    let secantus = secantus.map(|p| absolute("--secantus", p));
    let kubeconfig = PathBuf::from(
        std::env::var("KUBECONFIG").expect("KUBECONFIG names the testenv kubeconfig"),
    );
    let client = kube::Client::try_default()
        .await
        .expect("a client from KUBECONFIG");
    let _kubelet = match &secantus {
        Some(s) => {
            testenv_kubelet::start_with_secantus(client, &namespace, &kubeconfig, &binary, s)
        }
        None => testenv_kubelet::start(client, &namespace, &kubeconfig, &binary),
    };
    eprintln!(
        "testenv-kubelet: running pods of namespace {namespace} bound to {:?} and {:?}",
        testenv_kubelet::CLIENT_NODES,
        testenv_kubelet::SERVER_NODES
    );
    tokio::signal::ctrl_c().await.ok();
}
