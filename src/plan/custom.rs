//! A custom workload (docs/specs/custom.md) in the runner's terms: its parsed document with the
//! run's seeds ([`CustomPlan`]), and its phases as run settings. The document must be inline
//! here: `mongobench run` reads a `file` and the operator a `configMapRef` into `inline` before
//! a plan is made ([`resolved_text`] says which).

use std::sync::Arc;

use crate::api::{CustomSource, MongoBenchmarkSpec, RunLength, parse_duration};
use crate::workload::custom::{self, PhaseLength, Workload};

/// The workers and rate of one phase.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PhaseLoad {
    pub workers: u32,
    /// Open loop at this total rate; `None` is a closed loop.
    pub target_ops_per_sec: Option<f64>,
}

/// A custom workload and the seeds of its traffic and documents. In a plan file it is its
/// document's text, parsed again when the plan is read.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "CustomPlanText", into = "CustomPlanText")]
pub struct CustomPlan {
    pub workload: Arc<Workload>,
    /// The document's text and where it came from (for errors).
    pub text: Arc<str>,
    pub origin: String,
    /// `spec.workload.seed`: the operation streams.
    pub seed: u64,
    /// `spec.dataset.datasetSeed`: the seeded documents.
    pub dataset_seed: u64,
    /// `spec.dataset.seedBatchSize` and `seedWorkers`.
    pub seed_batch_size: u32,
    pub seed_workers: u32,
}

impl PartialEq for CustomPlan {
    /// Plans of the same document text and seeds are the same plan.
    fn eq(&self, other: &CustomPlan) -> bool {
        CustomPlanText::from(self.clone()) == CustomPlanText::from(other.clone())
    }
}

/// A [`CustomPlan`] as a plan file holds it.
#[derive(PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct CustomPlanText {
    document: String,
    origin: String,
    seed: u64,
    dataset_seed: u64,
    seed_batch_size: u32,
    seed_workers: u32,
}

impl TryFrom<CustomPlanText> for CustomPlan {
    type Error = CustomError;

    fn try_from(t: CustomPlanText) -> Result<CustomPlan, CustomError> {
        Ok(CustomPlan {
            workload: Arc::new(parse_document(&t.document, &t.origin)?),
            text: t.document.into(),
            origin: t.origin,
            seed: t.seed,
            dataset_seed: t.dataset_seed,
            seed_batch_size: t.seed_batch_size,
            seed_workers: t.seed_workers,
        })
    }
}

impl From<CustomPlan> for CustomPlanText {
    fn from(p: CustomPlan) -> CustomPlanText {
        CustomPlanText {
            document: p.text.to_string(),
            origin: p.origin,
            seed: p.seed,
            dataset_seed: p.dataset_seed,
            seed_batch_size: p.seed_batch_size,
            seed_workers: p.seed_workers,
        }
    }
}

impl CustomPlan {
    /// Seeded documents of each collection for a dataset of `records` documents.
    ///
    /// # Errors
    /// A size that leaves a collection empty.
    pub fn counts(&self, records: u64) -> Result<Vec<u64>, String> {
        self.workload.seeded_counts(records)
    }

    /// The index of the phase a cell runs as its warm-up (`warmup`) or measured phase.
    pub fn phase(&self, warmup: bool) -> usize {
        let last = self.workload.phases().len().saturating_sub(1);
        if warmup { 0 } else { last }
    }
}

/// Why a custom workload cannot be planned.
#[derive(Debug, thiserror::Error)]
pub enum CustomError {
    #[error(
        "spec.workload.custom: the document is not read yet ({0}); `mongobench run` reads a \
         file, the operator a ConfigMap"
    )]
    NotRead(String),
    #[error("{origin}: {error}")]
    Document {
        origin: String,
        error: custom::SpecError,
    },
}

/// The text of `source` once resolved (`inline`), else where it still is.
///
/// # Errors
/// [`CustomError::NotRead`] naming the unread source.
pub fn resolved_text(source: &CustomSource) -> Result<&str, CustomError> {
    match &source.inline {
        Some(text) => Ok(text),
        None => Err(CustomError::NotRead(source.origin())),
    }
}

/// Parses a custom workload document's `text`; errors are prefixed with `origin`.
///
/// # Errors
/// [`CustomError::Document`] at the first broken rule.
pub fn parse_document(text: &str, origin: &str) -> Result<Workload, CustomError> {
    custom::parse(text, |d| parse_duration(d).ok()).map_err(|error| CustomError::Document {
        origin: origin.to_owned(),
        error,
    })
}

/// The parsed document of the spec's custom workload (which must be resolved).
pub(super) fn workload_of(spec: &MongoBenchmarkSpec) -> Result<Workload, CustomError> {
    let source = spec.workload.custom.clone().unwrap_or_default();
    parse_document(resolved_text(&source)?, &source.origin())
}

/// The plan of the spec's custom workload.
pub(super) fn custom_plan(spec: &MongoBenchmarkSpec) -> Result<CustomPlan, CustomError> {
    let source = spec.workload.custom.clone().unwrap_or_default();
    let text = resolved_text(&source)?;
    Ok(CustomPlan {
        workload: Arc::new(parse_document(text, &source.origin())?),
        text: text.into(),
        origin: source.origin(),
        seed: spec.workload.seed(),
        dataset_seed: spec.dataset.dataset_seed(),
        seed_batch_size: spec.dataset.seed_batch_size(),
        seed_workers: spec.dataset.seed_workers(),
    })
}

/// The run settings a custom workload's phases make: the last phase's length, workers and rate
/// are the measured phase's; an earlier phase is the warm-up (none: no warm-up).
pub(super) struct PhaseSettings {
    pub measured: RunLength,
    pub load: PhaseLoad,
    pub warmup: RunLength,
    pub warmup_load: Option<PhaseLoad>,
}

pub(super) fn phase_settings(spec: &MongoBenchmarkSpec) -> Result<PhaseSettings, CustomError> {
    let workload = workload_of(spec)?;
    let w = &spec.workload;
    let load = |p: &custom::CustomPhase| PhaseLoad {
        workers: p.workers.unwrap_or(w.workers()),
        target_ops_per_sec: p
            .target_ops_per_second
            .or(w.target_ops_per_second)
            .filter(|&r| r > 0)
            .map(|r| r as f64),
    };
    let length = |p: &custom::CustomPhase| match p.length {
        PhaseLength::Duration(d) => RunLength::Duration(d),
        PhaseLength::Operations(n) => RunLength::Operations(n),
    };
    let phases = workload.phases();
    let last = phases.last().expect("a parsed workload has a phase");
    let warm = (phases.len() > 1).then(|| &phases[0]);
    Ok(PhaseSettings {
        measured: length(last),
        load: load(last),
        warmup: warm.map_or(RunLength::Operations(0), length),
        warmup_load: warm.map(load),
    })
}
