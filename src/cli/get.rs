//! `mongobench get`: the MongoBenchmarks of a namespace (or of all) with their phase,
//! progress, headline and age — what `kubectl get mongobenchmark` shows, also under the
//! kubectl plugin name (`kubectl mongobench get`).

use std::process::ExitCode;

use anyhow::Context;
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use kube::api::{Api, ListParams};

use super::validate::EXIT_INVALID;
use crate::api::MongoBenchmark;
use crate::report::layout::fixed_width;

/// Arguments of `mongobench get`.
#[derive(Debug, clap::Args)]
pub struct GetArgs {
    /// Show only this MongoBenchmark.
    #[arg(value_name = "NAME")]
    pub name: Option<String>,
    /// Namespace to list (default: the kubeconfig's namespace).
    #[arg(short = 'n', long, conflicts_with = "all_namespaces")]
    pub namespace: Option<String>,
    /// List the MongoBenchmarks of every namespace.
    #[arg(short = 'A', long)]
    pub all_namespaces: bool,
}

pub fn run(args: &GetArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime.block_on(list(args))
}

async fn list(args: &GetArgs) -> anyhow::Result<ExitCode> {
    let client = kube::Client::try_default()
        .await
        .context("connecting to the Kubernetes API")?;
    let namespace = args
        .namespace
        .clone()
        .unwrap_or_else(|| client.default_namespace().to_owned());
    let (api, searched) = if args.all_namespaces {
        (
            Api::<MongoBenchmark>::all(client),
            "any namespace".to_owned(),
        )
    } else {
        (
            Api::namespaced(client, &namespace),
            format!("namespace {namespace}"),
        )
    };
    let mut benchmarks = api
        .list(&ListParams::default())
        .await
        .with_context(|| format!("listing the MongoBenchmarks of {searched}"))?
        .items;
    if let Some(name) = &args.name {
        benchmarks.retain(|b| b.name_any() == *name);
        if benchmarks.is_empty() {
            eprintln!("mongobench get: no MongoBenchmark named {name} in {searched}");
            return Ok(ExitCode::from(EXIT_INVALID));
        }
    }
    if benchmarks.is_empty() {
        eprintln!("mongobench get: no MongoBenchmarks in {searched}");
        return Ok(ExitCode::SUCCESS);
    }
    print!(
        "{}",
        table(&benchmarks, args.all_namespaces, Timestamp::now())
    );
    Ok(ExitCode::SUCCESS)
}

/// The table of `benchmarks`, ages taken at `now`; with `namespaces`, a NAMESPACE column.
pub fn table(benchmarks: &[MongoBenchmark], namespaces: bool, now: Timestamp) -> String {
    let mut headers = vec!["NAME", "PHASE", "PROGRESS", "HEADLINE", "AGE"];
    if namespaces {
        headers.insert(0, "NAMESPACE");
    }
    let rows: Vec<Vec<String>> = benchmarks
        .iter()
        .map(|b| {
            let status = b.status.clone().unwrap_or_default();
            let mut row = vec![
                b.name_any(),
                status.phase.map(|p| format!("{p:?}")).unwrap_or_default(),
                status.progress.unwrap_or_default(),
                status.headline.unwrap_or_default(),
                b.metadata
                    .creation_timestamp
                    .as_ref()
                    .map(|t| age(now.duration_since(t.0)))
                    .unwrap_or_default(),
            ];
            if namespaces {
                row.insert(0, b.namespace().unwrap_or_default());
            }
            row
        })
        .collect();
    fixed_width(&headers, &[], &rows)
}

/// An age as kubectl shows it: `45s`, `12m`, `5h`, `3d`.
pub fn age(elapsed: k8s_openapi::jiff::SignedDuration) -> String {
    let s = elapsed.as_secs().max(0);
    match s {
        0..120 => format!("{s}s"),
        120..7_200 => format!("{}m", s / 60),
        7_200..172_800 => format!("{}h", s / 3_600),
        _ => format!("{}d", s / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::jiff::SignedDuration;

    use super::*;

    #[test]
    fn ages_read_like_kubectls() {
        let secs = SignedDuration::from_secs;
        assert_eq!(age(secs(-3)), "0s");
        assert_eq!(age(secs(45)), "45s");
        assert_eq!(age(secs(119)), "119s");
        assert_eq!(age(secs(120)), "2m");
        assert_eq!(age(secs(7_199)), "119m");
        assert_eq!(age(secs(7_200)), "2h");
        assert_eq!(age(secs(172_800)), "2d");
    }

    #[test]
    fn the_table_has_a_namespace_column_only_across_namespaces() {
        let mut b: MongoBenchmark = serde_json::from_value(serde_json::json!({
            "apiVersion": "mongobench.io/v1alpha1",
            "kind": "MongoBenchmark",
            "metadata": {"name": "pg-vs-sqlite", "namespace": "perf",
                         "creationTimestamp": "2026-12-01T10:00:00Z"},
            "spec": serde_yaml::from_str::<serde_json::Value>(
                &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/quickstart.yaml")).unwrap()
            ).unwrap()["spec"].clone(),
        }))
        .unwrap();
        b.status = Some(crate::api::MongoBenchmarkStatus {
            phase: Some(crate::api::StatusPhase::Running),
            progress: Some("3/12".into()),
            headline: Some("sqlite -99.9% ±24.0% ops/s vs postgres at 1k, 3 reps".into()),
            ..Default::default()
        });
        let now: Timestamp = "2026-12-01T10:05:30Z".parse().unwrap();
        assert_eq!(
            table(std::slice::from_ref(&b), false, now),
            "NAME          PHASE    PROGRESS  HEADLINE                                              AGE\n\
             pg-vs-sqlite  Running  3/12      sqlite -99.9% ±24.0% ops/s vs postgres at 1k, 3 reps  5m\n"
        );
        assert!(table(&[b], true, now).starts_with("NAMESPACE  NAME"));
    }
}
