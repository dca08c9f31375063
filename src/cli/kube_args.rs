//! `--kubeconfig` and `--context`, the same on every subcommand that talks to Kubernetes, as
//! kubectl spells them: without either, the usual search (in-cluster ServiceAccount, else
//! `KUBECONFIG`, else `~/.kube/config`) and its current context.

use std::path::PathBuf;

use anyhow::Context as _;
use kube::config::{KubeConfigOptions, Kubeconfig};

/// Which cluster credentials to use.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct KubeArgs {
    /// The kubeconfig file to use (default: in-cluster credentials, else KUBECONFIG, else
    /// ~/.kube/config).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use (default: its current context).
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
}

impl KubeArgs {
    /// A client with the credentials the flags name; its default namespace is the context's.
    ///
    /// # Errors
    /// Naming the kubeconfig or context when they cannot be read or used.
    pub async fn client(&self) -> anyhow::Result<kube::Client> {
        if self.kubeconfig.is_none() && self.context.is_none() {
            return kube::Client::try_default()
                .await
                .context("connecting to the Kubernetes API");
        }
        let kubeconfig = match &self.kubeconfig {
            Some(path) => Kubeconfig::read_from(path)
                .with_context(|| format!("--kubeconfig {}: cannot be read", path.display()))?,
            None => Kubeconfig::read()
                .context("reading the kubeconfig (KUBECONFIG or ~/.kube/config)")?,
        };
        let options = KubeConfigOptions {
            context: self.context.clone(),
            ..KubeConfigOptions::default()
        };
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
            .await
            .with_context(|| match &self.context {
                Some(c) => format!("--context {c}: not usable from the kubeconfig"),
                None => "the kubeconfig's current context is not usable".to_owned(),
            })?;
        kube::Client::try_from(config).context("connecting to the Kubernetes API")
    }
}
