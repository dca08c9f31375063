//! `mongobench get`: the MongoBenchmarks of a namespace (or of all) with their phase,
//! progress, headline and age — what `kubectl get mongobenchmark` shows, also under the
//! kubectl plugin name (`kubectl mongobench get`); `-o wide` adds the workload, targets,
//! platforms and the expected completion, `-o json|yaml` prints the objects, and `-w` keeps
//! printing each benchmark again as it changes.

use std::process::ExitCode;

use anyhow::Context;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use kube::api::{Api, ListParams, WatchEvent, WatchParams};

use super::kube_args::KubeArgs;
use super::validate::EXIT_INVALID;
use crate::api::MongoBenchmark;
use crate::report::layout::fixed_width;

/// Output formats of `mongobench get`, as kubectl names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GetFormat {
    /// The table with the workload, targets, platforms and ETA added.
    Wide,
    /// The objects as JSON (one object for a NAME, else a List).
    Json,
    /// The objects as YAML (one object for a NAME, else a List).
    Yaml,
}

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
    /// Output format (default: the table).
    #[arg(short = 'o', long, value_enum)]
    pub output: Option<GetFormat>,
    /// After the list, watch: print each benchmark again whenever it changes, until stopped.
    #[arg(short = 'w', long)]
    pub watch: bool,
    #[command(flatten)]
    pub kube: KubeArgs,
}

pub fn run(args: &GetArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime.block_on(list(args))
}

async fn list(args: &GetArgs) -> anyhow::Result<ExitCode> {
    let client = args.kube.client().await?;
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
    let mut params = ListParams::default();
    if let Some(name) = &args.name {
        params = params.fields(&format!("metadata.name={name}"));
    }
    let listed = api
        .list(&params)
        .await
        .with_context(|| format!("listing the MongoBenchmarks of {searched}"))?;
    let benchmarks = listed.items;
    if benchmarks.is_empty() && !args.watch {
        return Ok(match &args.name {
            Some(name) => {
                eprintln!("mongobench get: no MongoBenchmark named {name} in {searched}");
                ExitCode::from(EXIT_INVALID)
            }
            None => {
                eprintln!("mongobench get: no MongoBenchmarks in {searched}");
                ExitCode::SUCCESS
            }
        });
    }
    let view = View {
        format: args.output,
        namespaces: args.all_namespaces,
        single: args.name.is_some(),
    };
    if !benchmarks.is_empty() {
        print!("{}", view.render(&benchmarks, true, Timestamp::now())?);
    }
    if args.watch {
        let since = listed.metadata.resource_version.unwrap_or_default();
        watch(&api, &params, since, &view, benchmarks.is_empty()).await?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints each benchmark again as it changes, from resource version `since`, until stopped
/// (a table's header first when `header`: the list printed none); a watch the API server
/// ends is started again where it ended.
async fn watch(
    api: &Api<MongoBenchmark>,
    params: &ListParams,
    mut since: String,
    view: &View,
    mut header: bool,
) -> anyhow::Result<()> {
    let mut watch_params = WatchParams::default();
    if let Some(fields) = &params.field_selector {
        watch_params = watch_params.fields(fields);
    }
    loop {
        let mut events = api
            .watch(&watch_params, &since)
            .await
            .context("watching the MongoBenchmarks")?
            .boxed();
        while let Some(event) = events
            .try_next()
            .await
            .context("watching the MongoBenchmarks")?
        {
            let changed = match event {
                WatchEvent::Added(b) | WatchEvent::Modified(b) | WatchEvent::Deleted(b) => b,
                WatchEvent::Bookmark(b) => {
                    since = b.metadata.resource_version;
                    continue;
                }
                WatchEvent::Error(e) if e.code == 410 => {
                    anyhow::bail!(
                        "the watch fell too far behind ({}): run get -w again",
                        e.message
                    )
                }
                WatchEvent::Error(e) => {
                    anyhow::bail!("watching the MongoBenchmarks: {}", e.message)
                }
            };
            since = changed.resource_version().unwrap_or_default();
            print!(
                "{}",
                view.render(std::slice::from_ref(&changed), header, Timestamp::now())?
            );
            header = false;
        }
    }
}

/// How `get` shows benchmarks.
struct View {
    format: Option<GetFormat>,
    namespaces: bool,
    /// One NAME asked for: JSON and YAML print the object, not a List.
    single: bool,
}

impl View {
    fn render(
        &self,
        benchmarks: &[MongoBenchmark],
        header: bool,
        now: Timestamp,
    ) -> anyhow::Result<String> {
        let objects = || -> serde_json::Value {
            let mut items: Vec<serde_json::Value> = benchmarks
                .iter()
                .map(|b| {
                    let mut b = b.clone();
                    b.metadata.managed_fields = None;
                    serde_json::to_value(b).unwrap_or_default()
                })
                .collect();
            if self.single && items.len() == 1 {
                return items.remove(0);
            }
            serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items})
        };
        Ok(match self.format {
            None => table(benchmarks, self.namespaces, false, header, now),
            Some(GetFormat::Wide) => table(benchmarks, self.namespaces, true, header, now),
            Some(GetFormat::Json) => format!("{}\n", serde_json::to_string_pretty(&objects())?),
            Some(GetFormat::Yaml) => format!("---\n{}", serde_yaml::to_string(&objects())?),
        })
    }
}

/// The table of `benchmarks`, ages taken at `now`; with `namespaces`, a NAMESPACE column;
/// `wide`, the workload, targets, platforms and ETA; without `header`, the rows alone.
pub fn table(
    benchmarks: &[MongoBenchmark],
    namespaces: bool,
    wide: bool,
    header: bool,
    now: Timestamp,
) -> String {
    let mut headers = vec!["NAME", "PHASE", "PROGRESS", "HEADLINE", "AGE"];
    if wide {
        headers.extend(["WORKLOAD", "TARGETS", "PLATFORMS", "ETA"]);
    }
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
            if wide {
                row.extend([
                    b.spec.workload.kind.as_str().to_owned(),
                    b.spec.target_names(),
                    b.spec.platform_names(),
                    status
                        .estimated_completion_time
                        .map(|t| eta(t.0.duration_since(now)))
                        .unwrap_or_default(),
                ]);
            }
            if namespaces {
                row.insert(0, b.namespace().unwrap_or_default());
            }
            row
        })
        .collect();
    let text = fixed_width(&headers, &[], &rows);
    if header {
        text
    } else {
        text.split_once('\n')
            .map(|(_, rows)| rows.to_owned())
            .unwrap_or_default()
    }
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

/// Time left until an expected completion: `in 12m`, or `due` once it has passed.
pub fn eta(left: k8s_openapi::jiff::SignedDuration) -> String {
    if left.as_secs() <= 0 {
        "due".to_owned()
    } else {
        format!("in {}", age(left))
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
        assert_eq!(eta(secs(-1)), "due");
        assert_eq!(eta(secs(300)), "in 5m");
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
            table(std::slice::from_ref(&b), false, false, true, now),
            "NAME          PHASE    PROGRESS  HEADLINE                                              AGE\n\
             pg-vs-sqlite  Running  3/12      sqlite -99.9% ±24.0% ops/s vs postgres at 1k, 3 reps  5m\n"
        );
        assert!(
            table(std::slice::from_ref(&b), true, false, true, now).starts_with("NAMESPACE  NAME")
        );
        // Wide: what it runs and when it is expected to end; a watch's rows come alone.
        b.status.as_mut().unwrap().estimated_completion_time =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                "2026-12-01T10:17:30Z".parse().unwrap(),
            ));
        assert_eq!(
            table(std::slice::from_ref(&b), false, true, false, now),
            "pg-vs-sqlite  Running  3/12      sqlite -99.9% ±24.0% ops/s vs postgres at 1k, 3 reps  5m   \
             ycsb      lz4,zlib  local      in 12m\n"
        );
    }
}
