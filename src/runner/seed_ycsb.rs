//! The YCSB load phase as seeding: inserts records [N, M) so a benchmark's ascending sizes grow
//! one `usertable`, and records the loaded count in `mongobench.datasets` so a later step knows
//! what is there (run-phase inserts of workloads D and E add documents beyond it).

use std::sync::Arc;
use std::time::Instant;

use mongodb::Client;
use mongodb::bson::{Document, doc};
use serde::{Deserialize, Serialize};

use crate::workload::ycsb::{self, Phase, Properties, RawProperties, SharedState};

use super::execute::ExecOptions;
use super::phase::{PhaseConfig, Progress, Stop, run_phase};
use super::seed_flights::{META_COLLECTION, META_DATABASE};
use super::source::Source;

/// Why loading failed.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("loading YCSB records: {0}")]
    Properties(#[from] ycsb::PropertyError),
    #[error("loading YCSB records: {0}")]
    Worker(#[from] ycsb::WorkerError),
    #[error("loading YCSB records: {step}: {source}")]
    Server {
        step: &'static str,
        source: mongodb::error::Error,
    },
    #[error(
        "loading YCSB records: {failed} of {attempted} inserts failed (first failure kinds: {kinds})"
    )]
    Failed {
        failed: u64,
        attempted: u64,
        kinds: String,
    },
    #[error("loading YCSB records: the server went away: {0}")]
    Unreachable(String),
}

/// The stored description of a loaded `usertable`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadRecord {
    #[serde(rename = "_id")]
    pub id: String,
    pub workload: String,
    /// Records loaded by load phases: keys [0, records).
    pub records: i64,
}

/// What one load step did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadReport {
    pub from: u64,
    pub to: u64,
    pub load_seconds: f64,
    pub docs_per_second: f64,
}

fn record_id(props: &Properties) -> String {
    format!("{}.{}", props.database, props.table)
}

/// Loads records until `records` are present, with `workers` workers.
pub async fn load(
    client: &Client,
    raw: &RawProperties,
    seed: u64,
    records: u64,
    workers: u32,
) -> Result<LoadReport, LoadError> {
    let base = Properties::from_raw(raw)?;
    let meta = client
        .database(META_DATABASE)
        .collection::<LoadRecord>(META_COLLECTION);
    let server = |step| move |source| LoadError::Server { step, source };
    let existing = meta
        .find_one(doc! {"_id": record_id(&base)})
        .await
        .map_err(server("reading the load record"))?;
    let from = match existing {
        Some(r) if (r.records as u64) <= records => r.records as u64,
        _ => {
            client
                .database(&base.database)
                .collection::<Document>(&base.table)
                .drop()
                .await
                .map_err(server("dropping the old table"))?;
            0
        }
    };
    let started = Instant::now();
    if from < records {
        let mut raw = raw.clone();
        raw.set("recordcount", records.to_string());
        raw.set("insertstart", from.to_string());
        raw.set("insertcount", (records - from).to_string());
        let props = Properties::from_raw(&raw)?;
        let shared = SharedState::new(from);
        let mut sources = Vec::new();
        for w in 0..workers {
            sources.push(Source::ycsb(ycsb::Worker::new(
                &props,
                seed,
                w,
                workers,
                Phase::Load,
                &shared,
            )?));
        }
        let think = (0..workers).map(|_| None).collect();
        let config = PhaseConfig {
            stop: Stop::Exhausted,
            target_ops_per_sec: None,
            exec: ExecOptions::default(),
        };
        let outcome = run_phase(
            client,
            sources,
            think,
            &config,
            Arc::new(Progress::default()),
        )
        .await;
        if let Some(fatal) = outcome.fatal {
            return Err(LoadError::Unreachable(fatal));
        }
        let overall = outcome.recorder.overall();
        let failed = overall.completed() - overall.succeeded();
        if failed > 0 {
            return Err(LoadError::Failed {
                failed,
                attempted: overall.completed(),
                kinds: format!("{:?}", overall.errors()),
            });
        }
        meta.replace_one(
            doc! {"_id": record_id(&base)},
            LoadRecord {
                id: record_id(&base),
                workload: "ycsb".to_owned(),
                records: records as i64,
            },
        )
        .upsert(true)
        .await
        .map_err(server("writing the load record"))?;
    }
    let load_seconds = started.elapsed().as_secs_f64();
    let inserted = (records - from) as f64;
    Ok(LoadReport {
        from,
        to: records,
        load_seconds,
        docs_per_second: if load_seconds > 0.0 {
            inserted / load_seconds
        } else {
            0.0
        },
    })
}
