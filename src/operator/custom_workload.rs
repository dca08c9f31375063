//! The document of a custom workload as the operator finds it (docs/specs/custom.md §1). A
//! `configMapRef` is read once, when the run is first planned, into a copy the benchmark owns
//! (`<benchmark>-workload`); every later pass and every runner reads the copy, so editing or
//! deleting the user's ConfigMap mid-run cannot mix two workloads in one run; a ConfigMap of the
//! copy's name the benchmark does not control is refused, never taken for the copy. `inline` is
//! used as it is; `file` is refused (the operator cannot read the user's disk).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use kube::{Client, ResourceExt};

use super::error::Error;
use super::render::meta::{child_meta, controlled_by};
use super::render::names::{self, Component};
use crate::api::{CustomSource, MongoBenchmark};
use crate::plan::custom::parse_document;

/// The key of the document in the operator's copy.
const COPY_KEY: &str = "workload.yaml";

/// Why a custom workload cannot be used; the benchmark waits until it can.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable {
    /// The condition reason: `WorkloadNotFound` or `InvalidWorkload`.
    pub reason: &'static str,
    pub message: String,
}

/// `bench` with its custom workload's document inline, checked; other workloads unchanged.
///
/// # Errors
/// [`Unavailable`] when the document cannot be found or is broken; [`Error::Kube`] when the
/// API fails.
pub async fn resolve(
    client: &Client,
    mut bench: MongoBenchmark,
) -> Result<Result<MongoBenchmark, Unavailable>, Error> {
    let Some(source) = bench.spec.workload.custom.clone() else {
        return Ok(Ok(bench));
    };
    let origin = source.origin();
    let ns = bench.namespace().unwrap_or_default();
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    let copy_name = names::workload_copy_name(&bench.name_any());
    // The text, and whether it still has to be copied.
    let (text, to_copy) = match (&source.inline, &source.file, &source.config_map_ref) {
        (Some(text), _, _) => (text.clone(), false),
        (None, Some(_), _) => {
            return Ok(Err(invalid(format!(
                "{origin}: the operator cannot read files; put the document in a ConfigMap \
                 (kubectl create configmap NAME --from-file=workload.yaml=FILE) and name it in \
                 configMapRef, or inline"
            ))));
        }
        (None, None, Some(reference)) => {
            let read = |name: String| {
                let maps = maps.clone();
                let ns = ns.clone();
                async move {
                    maps.get_opt(&name)
                        .await
                        .map_err(|e| Error::kube(format!("reading ConfigMap {ns}/{name}"), e))
                }
            };
            let copy = read(copy_name.clone()).await?;
            if let Some(found) = copy
                .as_ref()
                .filter(|c| !controlled_by(&c.metadata, &bench))
            {
                return Ok(Err(Unavailable {
                    reason: super::owned::NAME_TAKEN,
                    message: format!(
                        "ConfigMap {ns}/{} exists and MongoBenchmark {} does not own it: the \
                         operator does not take it for the benchmark's copy of its workload; \
                         delete or rename it (or the benchmark)",
                        found.name_any(),
                        bench.name_any()
                    ),
                }));
            }
            match copy.as_ref().and_then(|c| data(c, COPY_KEY)) {
                Some(text) => (text, false),
                None => {
                    let found = read(reference.name.clone()).await?;
                    let Some(text) = found.as_ref().and_then(|c| data(c, reference.key())) else {
                        return Ok(Err(Unavailable {
                            reason: "WorkloadNotFound",
                            message: format!(
                                "{origin}: {} in namespace {ns}; the benchmark waits for it",
                                if found.is_some() {
                                    "the ConfigMap has no such key"
                                } else {
                                    "no such ConfigMap"
                                }
                            ),
                        }));
                    };
                    (text, true)
                }
            }
        }
        (None, None, None) => {
            return Ok(Err(invalid(format!(
                "{origin}: set one of inline, file, configMapRef"
            ))));
        }
    };
    if let Err(e) = parse_document(&text, &origin) {
        return Ok(Err(invalid(e.to_string())));
    }
    if to_copy {
        keep_copy(&maps, &bench, &copy_name, &text).await?;
    }
    bench.spec.workload.custom = Some(CustomSource {
        inline: Some(text),
        ..CustomSource::default()
    });
    Ok(Ok(bench))
}

fn invalid(message: String) -> Unavailable {
    Unavailable {
        reason: "InvalidWorkload",
        message,
    }
}

fn data(map: &ConfigMap, key: &str) -> Option<String> {
    map.data.as_ref()?.get(key).cloned()
}

/// Creates the benchmark's copy of the document; one already there (another pass's) is kept.
async fn keep_copy(
    maps: &Api<ConfigMap>,
    bench: &MongoBenchmark,
    name: &str,
    text: &str,
) -> Result<(), Error> {
    let labels = names::benchmark_labels(&bench.name_any(), Component::Runner);
    let copy = ConfigMap {
        metadata: child_meta(bench, name, &labels)?,
        data: Some(BTreeMap::from([(COPY_KEY.to_owned(), text.to_owned())])),
        ..ConfigMap::default()
    };
    match maps.create(&PostParams::default(), &copy).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(e)) if e.code == 409 => Ok(()),
        Err(e) => Err(Error::kube(format!("creating ConfigMap {name}"), e)),
    }
}

/// The status of a benchmark waiting for its workload: Pending, Stalled with the reason, the
/// rest of the stored status kept.
pub fn waiting_status(
    bench: &MongoBenchmark,
    why: &Unavailable,
    now: k8s_openapi::jiff::Timestamp,
) -> crate::api::MongoBenchmarkStatus {
    use super::status::condition;
    use crate::api::{StatusPhase, condition_types as types};
    let mut status = bench.status.clone().unwrap_or_default();
    let old = std::mem::take(&mut status.conditions);
    let generation = bench.metadata.generation;
    let types_set = [types::READY, types::RECONCILING, types::STALLED];
    let mut conditions: Vec<_> = types_set
        .iter()
        .map(|&t| {
            let stalled = t == types::STALLED;
            condition(
                &old,
                t,
                stalled,
                why.reason,
                why.message.clone(),
                generation,
                now,
            )
        })
        .collect();
    conditions.extend(
        old.into_iter()
            .filter(|c| !types_set.contains(&c.type_.as_str())),
    );
    status.conditions = conditions;
    status.phase = Some(StatusPhase::Pending);
    status.observed_generation = generation;
    status.progress = Some(why.message.clone());
    status
}
