//! `mongobench operator`: runs the MongoBenchmark operator with the cluster credentials of
//! the environment (in-cluster ServiceAccount, else the kubeconfig), or of `--kubeconfig` and
//! `--context`.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;

use crate::api::parse_duration;
use crate::operator::leader::LeaderElection;
use crate::operator::{self, DEFAULT_IMAGE, OperatorOptions};

/// Arguments of `mongobench operator`.
#[derive(Debug, clap::Args)]
pub struct OperatorArgs {
    /// Watch only this namespace; repeat for several, or separate them by commas (default:
    /// all namespaces). With namespaces named, a Role in each is all the operator needs
    /// (besides reading nodes).
    #[arg(
        long,
        value_name = "NAMESPACE",
        env = "MONGOBENCH_NAMESPACES",
        value_delimiter = ','
    )]
    pub namespace: Vec<String>,

    /// Image of runner Jobs when a benchmark's `spec.client.image` is unset; normally the
    /// operator's own image.
    #[arg(long, env = "MONGOBENCH_IMAGE", default_value = DEFAULT_IMAGE)]
    pub image: String,

    /// Address of the /healthz and /readyz server for the probes (`none` for no server).
    #[arg(long, default_value = "0.0.0.0:8080")]
    pub listen: String,

    /// Address of the /metrics server, which answers anyone who reaches it: loopback only by
    /// default; the --listen address serves both from one server; `none` serves no metrics.
    #[arg(long, default_value = "127.0.0.1:9090")]
    pub metrics_listen: String,

    /// A runner image benchmarks may name in spec.client.image besides --image (always
    /// allowed): an exact reference, or a prefix ending in `*`; repeat for several.
    #[arg(long, value_name = "IMAGE")]
    pub allowed_runner_image: Vec<String>,

    /// Elect a leader through a Lease, so several replicas can run (one reconciles).
    #[arg(long)]
    pub leader_election: bool,

    /// Namespace of the leader Lease (default: the pod's namespace from POD_NAMESPACE).
    #[arg(long, env = "POD_NAMESPACE", default_value = "default")]
    pub lease_namespace: String,

    /// How long server pods may stay unschedulable or fail to pull their image before the
    /// benchmark is Stalled, e.g. `10m`, `90s`.
    #[arg(long, default_value = "10m", value_parser = duration)]
    pub stall_deadline: Duration,

    #[command(flatten)]
    pub kube: super::kube_args::KubeArgs,
}

fn duration(s: &str) -> Result<Duration, String> {
    parse_duration(s).map_err(|e| e.to_string())
}

/// The operator options the arguments describe.
///
/// # Errors
/// When `--listen` or `--metrics-listen` is neither `none` nor `HOST:PORT`, or an
/// `--allowed-runner-image` would allow every image.
pub fn options(args: &OperatorArgs) -> anyhow::Result<OperatorOptions> {
    let namespaces = args
        .namespace
        .iter()
        .map(|n| n.trim())
        .filter(|n| !n.is_empty());
    let mut options = OperatorOptions::new(namespaces.map(str::to_owned), args.image.clone());
    options.stall_deadline = args.stall_deadline;
    options.listen = address("--listen", &args.listen)?;
    options.metrics_listen = address("--metrics-listen", &args.metrics_listen)?;
    for image in &args.allowed_runner_image {
        if image.is_empty() || image == "*" {
            anyhow::bail!(
                "--allowed-runner-image {image:?}: expected an image reference or a prefix \
                 ending in * (a lone * would let benchmarks run any image)"
            );
        }
    }
    options.allowed_runner_images = args.allowed_runner_image.clone();
    if args.leader_election {
        let pod = std::env::var("POD_NAME")
            .unwrap_or_else(|_| std::env::var("HOSTNAME").unwrap_or_else(|_| "mongobench".into()));
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let identity = format!("{pod}-{:06x}", (nanos ^ std::process::id()) & 0xff_ffff);
        options.leader_election = Some(LeaderElection::new(args.lease_namespace.clone(), identity));
    }
    Ok(options)
}

/// `HOST:PORT`, or `None` for `none`.
fn address(flag: &str, value: &str) -> anyhow::Result<Option<SocketAddr>> {
    match value {
        "none" | "" => Ok(None),
        addr => addr
            .parse::<SocketAddr>()
            .map(Some)
            .with_context(|| format!("{flag} {addr:?}: expected HOST:PORT or none")),
    }
}

/// Runs the operator until a shutdown signal.
///
/// # Errors
/// When no cluster credentials are found, the CRD is not installed, or the operator stops
/// on an error (lost leadership).
pub fn run(args: &OperatorArgs) -> anyhow::Result<ExitCode> {
    let options = options(args)?;
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime.block_on(async move {
        let client =
            args.kube.client().await.context(
                "no Kubernetes credentials: run in a pod, set KUBECONFIG or --kubeconfig",
            )?;
        operator::run(client, options).await?;
        Ok(ExitCode::SUCCESS)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: OperatorArgs,
    }

    #[test]
    fn flags_become_options() {
        let cli = Cli::parse_from([
            "x",
            "--namespace",
            "bench",
            "--namespace",
            "lab",
            "--image",
            "reg/mb:1",
            "--listen",
            "127.0.0.1:9090",
            "--leader-election",
            "--lease-namespace",
            "ops",
            "--stall-deadline",
            "90s",
            "--metrics-listen",
            "0.0.0.0:9191",
            "--allowed-runner-image",
            "reg/mb:*",
        ]);
        let o = options(&cli.args).unwrap();
        assert_eq!(o.namespaces, ["bench", "lab"]);
        assert_eq!(o.image, "reg/mb:1");
        assert_eq!(o.listen, Some("127.0.0.1:9090".parse().unwrap()));
        assert_eq!(o.metrics_listen, Some("0.0.0.0:9191".parse().unwrap()));
        assert_eq!(o.allowed_runner_images, ["reg/mb:*"]);
        assert_eq!(o.stall_deadline, Duration::from_secs(90));
        let l = o.leader_election.unwrap();
        assert_eq!(
            (l.namespace.as_str(), l.lease_name.as_str()),
            ("ops", "mongobench-operator")
        );
        let none = Cli::parse_from(["x", "--listen", "none"]);
        let o = options(&none.args).unwrap();
        assert_eq!((o.listen, o.leader_election), (None, None));
        assert_eq!(o.metrics_listen, Some("127.0.0.1:9090".parse().unwrap()));
        assert!(o.namespaces.is_empty());
        assert!(o.allowed_runner_images.is_empty());
        let listed = Cli::parse_from(["x", "--namespace", "a, b,", "--metrics-listen", "none"]);
        let o = options(&listed.args).unwrap();
        assert_eq!(
            (o.namespaces.clone(), o.metrics_listen),
            (vec!["a".to_owned(), "b".to_owned()], None)
        );
        let any = Cli::parse_from(["x", "--allowed-runner-image", "*"]);
        assert!(
            options(&any.args)
                .unwrap_err()
                .to_string()
                .starts_with("--allowed-runner-image \"*\": expected an image reference")
        );
        assert_eq!(o.stall_deadline, Duration::from_secs(600));
        let bad = Cli::parse_from(["x", "--listen", "localhost"]);
        assert!(
            options(&bad.args)
                .unwrap_err()
                .to_string()
                .contains("--listen \"localhost\"")
        );
    }
}
