//! The workload identity of a cell (docs/results.md, "Workload identity") and the check of a
//! result's traffic fingerprint: the streams are generated again from the identity and the
//! per-worker operation counts, without a server, and fingerprinted.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::api::RunLength;
use crate::plan::{RunSettings, WorkloadPlan};
use crate::result::{CellResult, WorkloadIdentity};
use crate::runner::send::{Source, fingerprint, template_names};
use crate::workload::custom;
use crate::workload::flights::fingerprint::FingerprintVersion;
use crate::workload::flights::{self, DatasetInfo, Params};
use crate::workload::ycsb::{self, RawProperties, SharedState};

/// Prefix of the YCSB properties in an identity.
const YCSB_PREFIX: &str = "ycsb.";

/// The YCSB properties of a measured phase of `length` against `records` loaded records: the
/// plan's, with the record count, and for a time-bounded phase no operation bound.
pub fn measured_properties(raw: &RawProperties, records: u64, length: RunLength) -> RawProperties {
    let mut raw = raw.clone();
    raw.set("recordcount", records.to_string());
    match length {
        RunLength::Operations(total) => raw.set("operationcount", total.to_string()),
        RunLength::Duration(_) => {
            if !raw.contains("mongobench.headroom.operationcount") {
                // The workload's own operationcount sizes the insert headroom, as in stock
                // YCSB (specs/ycsb.md §4.5).
                let own = raw.get("operationcount").unwrap_or("0").to_owned();
                raw.set("mongobench.headroom.operationcount", own);
            }
            raw.set("operationcount", "0");
            // Unbounded by count: the phase's own deadline ends it.
            raw.set("maxexecutiontime", "1000000000");
        }
    }
    raw
}

fn length_text(length: RunLength) -> String {
    match length {
        RunLength::Operations(n) => format!("{n} operations"),
        RunLength::Duration(d) => format!("{} s", d.as_secs_f64()),
    }
}

/// The identity of a cell running `plan` with `settings` against `documents` seeded
/// documents (records), starting from the seeded state.
pub fn identity(plan: &WorkloadPlan, settings: &RunSettings, documents: u64) -> WorkloadIdentity {
    let mut p: BTreeMap<String, String> = BTreeMap::new();
    run_parameters(&mut p, plan, settings, documents);
    workload_parameters(&mut p, plan, settings, documents);
    WorkloadIdentity::new(p)
}

/// What every identity holds: the workload's name, its size and how the phases run.
fn run_parameters(
    p: &mut BTreeMap<String, String>,
    plan: &WorkloadPlan,
    settings: &RunSettings,
    documents: u64,
) {
    let mut put = |k: &str, v: String| {
        p.insert(k.to_owned(), v);
    };
    put("workload", plan.name());
    put("workers", settings.workers.max(1).to_string());
    put("documents", documents.to_string());
    put("run.measured", length_text(settings.measured));
    put("run.warmup", length_text(settings.warmup));
    if let Some(settle) = settings.warmup_settle {
        put(
            "run.warmupUntilSettled",
            format!(
                "at most {} rounds, within {}%",
                settle.max_rounds, settle.tolerance_percent
            ),
        );
    }
    put(
        "run.targetOpsPerSecond",
        settings
            .target_ops_per_sec
            .map_or("closed loop".into(), |r| r.to_string()),
    );
    if let Some(sweep) = &settings.sweep {
        put("run.sweep", sweep.describe());
    }
    put(
        "run.writeConcern",
        settings.write_concern.clone().unwrap_or("default".into()),
    );
    put(
        "run.readPreference",
        settings.read_preference.clone().unwrap_or("primary".into()),
    );
}

/// What the workload's own streams depend on.
fn workload_parameters(
    p: &mut BTreeMap<String, String>,
    plan: &WorkloadPlan,
    settings: &RunSettings,
    documents: u64,
) {
    let mut put = |k: &str, v: String| {
        p.insert(k.to_owned(), v);
    };
    match plan {
        WorkloadPlan::Flights(params) => {
            let dataset = DatasetInfo::fresh(params.dataset_seed, documents);
            put("insertBase", dataset.insert_base.to_string());
            put("tableHash", hex::encode(flights::data::table_hash()));
            put("indexSet", params.index_set.name().to_owned());
            put(
                "indexBuild",
                match params.index_build {
                    flights::IndexBuild::After => "after",
                    flights::IndexBuild::Before => "before",
                }
                .to_owned(),
            );
            put("thinkTimeMs", params.think_time_ms.to_string());
            put("thinkJitterMs", params.think_jitter_ms.to_string());
            for (k, v) in traffic_parameters(params) {
                put(k, v);
            }
        }
        WorkloadPlan::Custom(custom) => {
            put("seed", custom.seed.to_string());
            put("datasetSeed", custom.dataset_seed.to_string());
            put("custom.documentSha256", custom.workload.text_sha256());
            put("custom.dataset", custom.workload.dataset_identity());
            if let Some(load) = settings.warmup_load {
                put("run.warmupWorkers", load.workers.to_string());
                put(
                    "run.warmupOpsPerSecond",
                    load.target_ops_per_sec
                        .map_or("closed loop".into(), |r| r.to_string()),
                );
            }
            if let Ok(counts) = custom.counts(documents) {
                for (c, n) in custom.workload.collections().iter().zip(counts) {
                    put(&format!("custom.seeded.{}", c.name), n.to_string());
                }
            }
        }
        WorkloadPlan::Ycsb { raw, seed } => {
            put("seed", seed.to_string());
            for (k, v) in measured_properties(raw, documents, settings.measured).iter() {
                put(&format!("{YCSB_PREFIX}{k}"), v.to_owned());
            }
        }
    }
}

/// The flights knobs a worker's stream depends on, by their spec names (§9).
fn traffic_parameters(params: &Params) -> Vec<(&'static str, String)> {
    let (f, u, d, a) = (
        &params.find_split,
        &params.update_split,
        &params.delete_split,
        &params.aggregate_split,
    );
    vec![
        ("seed", params.seed.to_string()),
        ("datasetSeed", params.dataset_seed.to_string()),
        ("findPercent", params.find_percent.to_string()),
        ("updatePercent", params.update_percent.to_string()),
        ("deletePercent", params.delete_percent.to_string()),
        ("insertPercent", params.insert_percent.to_string()),
        ("aggregatePercent", params.aggregate_percent.to_string()),
        ("transactionPercent", params.transaction_percent.to_string()),
        ("findSplit.byFlightId", f.by_flight_id.to_string()),
        ("findSplit.byRoute", f.by_route.to_string()),
        ("findSplit.byStatus", f.by_status.to_string()),
        ("updateSplit.oneByFlightId", u.one_by_flight_id.to_string()),
        ("updateSplit.oneById", u.one_by_id.to_string()),
        (
            "updateSplit.manyByFlightId",
            u.many_by_flight_id.to_string(),
        ),
        ("deleteSplit.oneByFlightId", d.one_by_flight_id.to_string()),
        ("deleteSplit.oneById", d.one_by_id.to_string()),
        (
            "deleteSplit.manyByFlightId",
            d.many_by_flight_id.to_string(),
        ),
        (
            "aggregateSplit.aircraftWindow",
            a.aircraft_window.to_string(),
        ),
        ("aggregateSplit.routeSummary", a.route_summary.to_string()),
        ("hitRate", params.hit_rate.to_string()),
        ("findLimit", params.find_limit.to_string()),
        ("aggWindow", params.agg_window.to_string()),
        ("insertBatchSize", params.insert_batch_size.to_string()),
    ]
}

/// The outcome of checking a result's fingerprint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verification {
    /// The regenerated traffic has the recorded fingerprint.
    Verified,
    /// It does not: the result does not describe the traffic its identity and counts imply.
    Mismatch {
        /// What the identity and counts give.
        expected: String,
        /// What the result records.
        recorded: String,
    },
    /// The traffic cannot be regenerated exactly (documented cases); the reason.
    NotReproducible(String),
}

/// Why a result cannot be checked at all.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum VerifyError {
    #[error("the result has no workload identity (it was never measured)")]
    NoIdentity,
    #[error("the result records no per-worker operation counts")]
    NoCounts,
    #[error("the identity's {0} is missing or not what a mongobench identity holds")]
    Parameter(String),
    #[error("the identity does not make a valid workload: {0}")]
    Workload(String),
}

fn parameter<T: std::str::FromStr>(
    identity: &WorkloadIdentity,
    name: &str,
) -> Result<T, VerifyError> {
    identity
        .parameters
        .get(name)
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| VerifyError::Parameter(name.to_owned()))
}

/// Regenerates the measured traffic of `result` from its identity and per-worker operation
/// counts and compares the fingerprints: a flights result's in the version it records (v1
/// results written before v2 are checked with v1).
pub fn verify(result: &CellResult) -> Result<Verification, VerifyError> {
    verify_with(result, None)
}

/// [`verify`], with the document of a custom workload at hand (a custom result's identity
/// holds only its SHA-256).
pub fn verify_with(
    result: &CellResult,
    document: Option<&Arc<custom::Workload>>,
) -> Result<Verification, VerifyError> {
    let identity = &result.identity;
    if identity.is_empty() {
        return Err(VerifyError::NoIdentity);
    }
    let counts = &result.worker_operations;
    if counts.is_empty() {
        return Err(VerifyError::NoCounts);
    }
    let workers: u32 = parameter(identity, "workers")?;
    if counts.len() != workers as usize {
        return Err(VerifyError::Parameter(format!(
            "workers ({workers}, but {} per-worker counts)",
            counts.len()
        )));
    }
    let workload: String = parameter(identity, "workload")?;
    let documents: u64 = parameter(identity, "documents")?;
    let sources = if workload == flights::VERSION {
        let version = FingerprintVersion::of(&result.fingerprint);
        Ok(flights_sources(
            identity, counts, workers, documents, version,
        )?)
    } else if workload == custom::VERSION {
        custom_sources(identity, counts, workers, document)?
    } else {
        ycsb_sources(identity, counts, workers, documents, &workload)?
    };
    let mut sources = match sources {
        Ok(sources) => sources,
        Err(why) => return Ok(Verification::NotReproducible(why)),
    };
    for source in &mut sources {
        while source.next_step().is_some() {
            source.complete();
        }
    }
    let expected = fingerprint(&workload, sources);
    Ok(if expected == result.fingerprint {
        Verification::Verified
    } else {
        Verification::Mismatch {
            expected,
            recorded: result.fingerprint.clone(),
        }
    })
}

fn workload_error(e: impl ToString) -> VerifyError {
    VerifyError::Workload(e.to_string())
}

/// The flights parameters an identity records.
fn flights_params(identity: &WorkloadIdentity, workers: u32) -> Result<Params, VerifyError> {
    let p = |n: &str| parameter::<u32>(identity, n);
    let write_split = |split: &str| -> Result<flights::WriteSplit, VerifyError> {
        Ok(flights::WriteSplit {
            one_by_flight_id: p(&format!("{split}.oneByFlightId"))?,
            one_by_id: p(&format!("{split}.oneById"))?,
            many_by_flight_id: p(&format!("{split}.manyByFlightId"))?,
        })
    };
    Ok(Params {
        workers,
        seed: parameter(identity, "seed")?,
        dataset_seed: parameter(identity, "datasetSeed")?,
        find_percent: p("findPercent")?,
        update_percent: p("updatePercent")?,
        delete_percent: p("deletePercent")?,
        insert_percent: p("insertPercent")?,
        aggregate_percent: p("aggregatePercent")?,
        transaction_percent: p("transactionPercent")?,
        find_split: flights::FindSplit {
            by_flight_id: p("findSplit.byFlightId")?,
            by_route: p("findSplit.byRoute")?,
            by_status: p("findSplit.byStatus")?,
        },
        update_split: write_split("updateSplit")?,
        delete_split: write_split("deleteSplit")?,
        aggregate_split: flights::AggregateSplit {
            aircraft_window: p("aggregateSplit.aircraftWindow")?,
            route_summary: p("aggregateSplit.routeSummary")?,
        },
        hit_rate: parameter(identity, "hitRate")?,
        find_limit: p("findLimit")?,
        agg_window: p("aggWindow")?,
        insert_batch_size: p("insertBatchSize")?,
        ..Params::default()
    })
}

/// The measured streams of a flights result, fingerprinted in `version`.
fn flights_sources(
    identity: &WorkloadIdentity,
    counts: &[u64],
    workers: u32,
    documents: u64,
    version: FingerprintVersion,
) -> Result<Vec<Source>, VerifyError> {
    let params = flights_params(identity, workers)?;
    let dataset = DatasetInfo {
        dataset_seed: params.dataset_seed,
        documents,
        insert_base: parameter(identity, "insertBase")?,
    };
    let mut sources = Vec::new();
    for (w, &count) in counts.iter().enumerate() {
        let worker = flights::Worker::new(&params, &dataset, w as u32, flights::RunPhase::Measured)
            .map_err(workload_error)?;
        sources.push(Source::flights_as(
            version,
            worker,
            Some(count),
            Default::default(),
        ));
    }
    Ok(sources)
}

/// The measured streams of a YCSB result, or why they cannot be made: several workers share
/// the insert counter.
fn ycsb_sources(
    identity: &WorkloadIdentity,
    counts: &[u64],
    workers: u32,
    documents: u64,
    workload: &str,
) -> Result<Result<Vec<Source>, String>, VerifyError> {
    let mut raw = RawProperties::new();
    for (k, v) in &identity.parameters {
        if let Some(key) = k.strip_prefix(YCSB_PREFIX) {
            raw.set(key, v.as_str());
        }
    }
    let props = ycsb::Properties::from_raw(&raw).map_err(workload_error)?;
    let seed: u64 = parameter(identity, "seed")?;
    let shared = SharedState::new(documents);
    let mut sources = Vec::new();
    for (w, &count) in counts.iter().enumerate() {
        let mut worker = ycsb::Worker::new(
            &props,
            seed,
            w as u32,
            workers,
            ycsb::YcsbPhase::Run,
            &shared,
        )
        .map_err(workload_error)?;
        if !worker.is_deterministic() {
            return Ok(Err(format!(
                "{workload} inserts from a counter {workers} workers share, so which keys \
                 they insert and later choose depends on timing (specs/ycsb.md §5); the \
                 identity and the counts still describe the run"
            )));
        }
        worker.set_remaining(Some(count));
        sources.push(Source::ycsb(worker, Default::default()));
    }
    Ok(Ok(sources))
}

/// The measured streams of a custom result, or why they cannot be made: its document is not
/// at hand, or another one is.
fn custom_sources(
    identity: &WorkloadIdentity,
    counts: &[u64],
    workers: u32,
    document: Option<&Arc<custom::Workload>>,
) -> Result<Result<Vec<Source>, String>, VerifyError> {
    let wanted: String = parameter(identity, "custom.documentSha256")?;
    let Some(workload) = document.filter(|w| w.text_sha256() == wanted) else {
        return Ok(Err(format!(
            "its custom workload's document (SHA-256 {}) is not at hand: give it with \
             --workload FILE, or keep the {CUSTOM_WORKLOAD_FILE} a run writes beside its results",
            &wanted[..wanted.len().min(16)]
        )));
    };
    let seed: u64 = parameter(identity, "seed")?;
    let dataset_seed: u64 = parameter(identity, "datasetSeed")?;
    let seeded = workload
        .collections()
        .iter()
        .map(|c| parameter(identity, &format!("custom.seeded.{}", c.name)))
        .collect::<Result<Vec<u64>, _>>()?;
    let names = template_names(workload);
    let measured = workload.phases().len() - 1;
    Ok(Ok(counts
        .iter()
        .enumerate()
        .map(|(w, &count)| {
            let worker = custom::Worker::new(
                workload,
                seed,
                dataset_seed,
                measured,
                w as u32,
                workers,
                &seeded,
            );
            Source::custom(worker, Some(count), Default::default(), names.clone())
        })
        .collect()))
}

/// The file a local run writes a custom workload's document to, beside its results.
pub const CUSTOM_WORKLOAD_FILE: &str = "custom-workload.yaml";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::DEFAULT_OPERATION_TIMEOUT;
    use crate::result::testing::sample_result;

    /// 2 workers and 9 operations, no warm-up.
    fn two_workers() -> RunSettings {
        RunSettings {
            workers: 2,
            measured: RunLength::Operations(9),
            warmup: RunLength::Operations(0),
            target_ops_per_sec: None,
            write_concern: None,
            read_preference: None,
            operation_timeout: DEFAULT_OPERATION_TIMEOUT,
            sweep: None,
            warmup_load: None,
            warmup_settle: None,
        }
    }

    /// A flights result of the default mix: 2 workers, 5 and 4 operations, 1,000 documents.
    fn flights_result(fingerprint: &str) -> CellResult {
        let params = Params {
            workers: 2,
            documents: Some(1000),
            ..Params::default()
        };
        let settings = two_workers();
        let mut r = sample_result("t", 1, 10.0);
        r.identity = identity(&WorkloadPlan::Flights(Box::new(params)), &settings, 1000);
        r.worker_operations = vec![5, 4];
        r.fingerprint = fingerprint.to_owned();
        r
    }

    #[test]
    fn a_warmup_in_rounds_is_part_of_the_identity() {
        let plan = WorkloadPlan::Flights(Box::default());
        let mut settings = two_workers();
        assert_eq!(
            identity(&plan, &settings, 10)
                .parameters
                .get("run.warmupUntilSettled"),
            None
        );
        settings.warmup_settle = Some(crate::plan::WarmupSettle {
            max_rounds: 5,
            tolerance_percent: 2.5,
        });
        assert_eq!(
            identity(&plan, &settings, 10).parameters["run.warmupUntilSettled"],
            "at most 5 rounds, within 2.5%"
        );
    }

    // The traffic's fingerprints in either version (workload/flights/fingerprint's tests).
    const V1: &str = "b51595b4eecc8981055169077b2af5a07fb24cfebc1008189afe7c13a280f49e";
    const V2: &str = "v2:df54b7c3a8d09abf0b59fe5e228e1f7b";

    #[test]
    fn a_result_is_checked_in_the_fingerprint_version_it_records() {
        assert_eq!(verify(&flights_result(V1)), Ok(Verification::Verified));
        assert_eq!(verify(&flights_result(V2)), Ok(Verification::Verified));
        let wrong_v1 = V1.replace('b', "c");
        assert_eq!(
            verify(&flights_result(&wrong_v1)),
            Ok(Verification::Mismatch {
                expected: V1.to_owned(),
                recorded: wrong_v1,
            })
        );
        let mut one_more = flights_result(V2);
        one_more.worker_operations = vec![5, 5];
        let Ok(Verification::Mismatch { expected, .. }) = verify(&one_more) else {
            panic!("a count that was not sent verified");
        };
        assert!(expected.starts_with("v2:") && expected != V2, "{expected}");
    }
}
