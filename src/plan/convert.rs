//! The spec's workload in the generators' and the runner's own terms.

use std::time::Duration;

use crate::api::{
    DatasetSize, IndexBuild, IndexSet, MongoBenchmarkSpec, ReadPreference, RunLength, UnitsError,
    WorkloadType, WriteConcern, Ycsb,
};
use crate::workload::flights::{self, AggregateSplit, FindSplit, Params, WriteSplit};
use crate::workload::ycsb::RawProperties;

use super::custom::{CustomError, PhaseLoad, custom_plan, phase_settings};
use super::sweep::SweepPlan;
use super::workload::{RunSettings, WarmupSettle, WorkloadPlan};

/// Why a spec cannot be turned into a run.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("{0}")]
    Units(#[from] UnitsError),
    #[error("spec.workload.ycsb: required when spec.workload.type is ycsb")]
    MissingYcsb,
    #[error("spec.workload: {0}")]
    Flights(#[from] flights::ParamsError),
    #[error("spec.workload.ycsb: {0}")]
    Ycsb(#[from] crate::workload::ycsb::PropertyError),
    #[error(
        "spec.client.pods: {pods} client pods cannot share YCSB's insert key counter, and this \
         workload inserts (insertProportion {insert}): run it with one client pod"
    )]
    SharedInsertCounter { pods: u32, insert: f64 },
    #[error("{0}")]
    Custom(#[from] CustomError),
}

/// The generator configuration of the spec's workload.
pub fn workload_plan(spec: &MongoBenchmarkSpec) -> Result<WorkloadPlan, PlanError> {
    match spec.workload.kind {
        WorkloadType::Flights => Ok(WorkloadPlan::Flights(Box::new(flights_params(spec)?))),
        WorkloadType::Ycsb => ycsb_plan(spec),
        WorkloadType::Custom => Ok(WorkloadPlan::Custom(Box::new(custom_plan(spec)?))),
    }
}

/// The flights generator's parameters.
fn flights_params(spec: &MongoBenchmarkSpec) -> Result<Params, PlanError> {
    let w = &spec.workload;
    let f = w.flights();
    let mix = f.mix();
    let find = f.find_split().shares();
    let update = f.update_split().shares();
    let delete = f.delete_split().shares();
    let aggregate = f.aggregate_split().shares();
    let params = Params {
        workers: w.workers(),
        think_time_ms: w.think_time()?.as_millis() as u64,
        think_jitter_ms: w.think_jitter()?.as_millis() as u64,
        find_percent: mix.find,
        update_percent: mix.update,
        delete_percent: mix.delete,
        insert_percent: mix.insert,
        aggregate_percent: mix.aggregate,
        transaction_percent: mix.transaction,
        find_split: FindSplit {
            by_flight_id: find[0],
            by_route: find[1],
            by_status: find[2],
        },
        update_split: WriteSplit {
            one_by_flight_id: update[0],
            one_by_id: update[1],
            many_by_flight_id: update[2],
        },
        delete_split: WriteSplit {
            one_by_flight_id: delete[0],
            one_by_id: delete[1],
            many_by_flight_id: delete[2],
        },
        aggregate_split: AggregateSplit {
            aircraft_window: aggregate[0],
            route_summary: aggregate[1],
        },
        hit_rate: f.hit_rate(),
        find_limit: f.find_limit(),
        agg_window: f.agg_window(),
        insert_batch_size: f.insert_batch_size(),
        seed: w.seed(),
        dataset_seed: spec.dataset.dataset_seed(),
        seed_batch_size: spec.dataset.seed_batch_size(),
        seed_workers: spec.dataset.seed_workers(),
        index_build: match spec.dataset.index_build() {
            IndexBuild::After => flights::IndexBuild::After,
            IndexBuild::Before => flights::IndexBuild::Before,
        },
        index_set: match f.index_set() {
            IndexSet::Plgm6 => flights::IndexSet::Plgm6,
            IndexSet::Seven => flights::IndexSet::Seven,
        },
        reuse_dataset: spec.dataset.reuse_dataset(),
        explain_samples: f.explain_samples(),
        ..Params::default()
    };
    params.validate_traffic()?;
    params.validate_traffic()?;
    Ok(params)
}

/// A YCSB plan: the preset with the spec's properties over it, checked.
fn ycsb_plan(spec: &MongoBenchmarkSpec) -> Result<WorkloadPlan, PlanError> {
    let w = &spec.workload;
    let y = w.ycsb.as_ref().ok_or(PlanError::MissingYcsb)?;
    let raw = ycsb_properties(y)?;
    // Checked with a placeholder record count; each cell sets its own.
    let mut probe = raw.clone();
    probe.set("recordcount", "1000");
    let props = crate::workload::ycsb::Properties::from_raw(&probe)?;
    // Run-phase inserts take keys from one counter shared by a process's workers, which
    // processes on several pods cannot share.
    let insert = props.proportions.normalised()[2];
    if spec.client_pods() > 1 && insert > 0.0 && !props.txninsert_partition {
        return Err(PlanError::SharedInsertCounter {
            pods: spec.client_pods(),
            insert,
        });
    }
    Ok(WorkloadPlan::Ycsb {
        raw,
        seed: w.seed(),
    })
}

/// The YCSB properties of `spec.workload.ycsb`: its preset's, with each field given set over
/// them.
fn ycsb_properties(y: &Ycsb) -> Result<RawProperties, PlanError> {
    let preset = format!("workload{}", json_name(&y.workload));
    let mut raw = RawProperties::preset(&preset)?;
    let given = [
        ("readproportion", text(y.read_proportion)),
        ("updateproportion", text(y.update_proportion)),
        ("insertproportion", text(y.insert_proportion)),
        ("scanproportion", text(y.scan_proportion)),
        (
            "readmodifywriteproportion",
            text(y.read_modify_write_proportion),
        ),
        (
            "requestdistribution",
            y.request_distribution.as_ref().map(json_name),
        ),
        ("hotspotdatafraction", text(y.hotspot_data_fraction)),
        ("hotspotopnfraction", text(y.hotspot_opn_fraction)),
        ("exponential.percentile", text(y.exponential_percentile)),
        ("exponential.frac", text(y.exponential_frac)),
        ("fieldcount", text(y.field_count)),
        ("fieldlength", text(y.field_length)),
        ("minfieldlength", text(y.min_field_length)),
        (
            "fieldlengthdistribution",
            y.field_length_distribution.as_ref().map(json_name),
        ),
        ("fieldnameprefix", y.field_name_prefix.clone()),
        ("table", y.table.clone()),
        ("readallfields", text(y.read_all_fields)),
        ("writeallfields", text(y.write_all_fields)),
        ("dataintegrity", text(y.data_integrity)),
        ("insertorder", y.insert_order.as_ref().map(json_name)),
        ("zeropadding", text(y.zero_padding)),
        ("minscanlength", text(y.min_scan_length)),
        ("maxscanlength", text(y.max_scan_length)),
        (
            "scanlengthdistribution",
            y.scan_length_distribution.as_ref().map(json_name),
        ),
    ];
    for (key, value) in given {
        if let Some(v) = value {
            raw.set(key, v);
        }
    }
    Ok(raw)
}

/// A property's value as YCSB reads it.
fn text<T: ToString>(value: Option<T>) -> Option<String> {
    value.map(|v| v.to_string())
}

/// The serialized (CRD) name of an enum value, which is also YCSB's property value.
fn json_name<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The runner's phase settings from the spec.
pub fn run_settings(spec: &MongoBenchmarkSpec) -> Result<RunSettings, PlanError> {
    let w = &spec.workload;
    let sweep = w.sweep.as_ref().map(SweepPlan::of).transpose()?;
    let custom = match w.kind {
        WorkloadType::Custom => Some(phase_settings(spec)?),
        _ => None,
    };
    let mut settings = RunSettings {
        workers: sweep
            .as_ref()
            .and_then(SweepPlan::first_workers)
            .unwrap_or(w.workers()),
        measured: match &sweep {
            Some(s) => RunLength::Duration(s.step),
            None => w.run_length()?,
        },
        warmup: w.warmup()?,
        target_ops_per_sec: match &sweep {
            Some(s) => s.first_rate().map(|r| r as f64),
            None => w.target_ops_per_second().map(|r| r as f64),
        },
        write_concern: match w.write_concern() {
            WriteConcern::Default => None,
            WriteConcern::Majority => Some("majority".to_owned()),
            WriteConcern::Nodes(n) => Some(n.to_string()),
        },
        read_preference: match w.read_preference() {
            ReadPreference::Primary => None,
            other => Some(json_name(&other)),
        },
        operation_timeout: w.operation_timeout()?,
        sweep,
        warmup_load: None,
        warmup_settle: w.warmup_until_settled.as_ref().map(|s| WarmupSettle {
            max_rounds: s.max_rounds(),
            tolerance_percent: s.tolerance_percent(),
        }),
    };
    if let Some(phases) = custom {
        let PhaseLoad {
            workers,
            target_ops_per_sec,
        } = phases.load;
        settings.workers = workers;
        settings.target_ops_per_sec = target_ops_per_sec;
        settings.measured = phases.measured;
        settings.warmup = phases.warmup;
        settings.warmup_load = phases.warmup_load;
    }
    Ok(settings)
}

/// Documents a dataset size stands for: counts as they are; byte sizes through the workload's
/// mean document size.
pub fn documents(plan: &WorkloadPlan, size: DatasetSize) -> u64 {
    match (size, plan) {
        (DatasetSize::Documents(n), _) => n,
        (DatasetSize::Bytes(b), WorkloadPlan::Flights(_)) => flights::documents_for_data_bytes(b),
        (DatasetSize::Bytes(b), WorkloadPlan::Ycsb { .. }) => b.div_ceil(YCSB_RECORD_BYTES),
        (DatasetSize::Bytes(b), WorkloadPlan::Custom(c)) => c.workload.documents_for_bytes(b),
    }
}

/// BSON size of a default YCSB record (10 fields of 100 bytes, 19-digit key): specs/ycsb.md §6.
const YCSB_RECORD_BYTES: u64 = 1168;

/// How long a run waits for a target to answer before giving up.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::MongoBenchmark;

    fn spec(workload: &str) -> MongoBenchmarkSpec {
        let text = format!(
            "apiVersion: mongobench.io/v1alpha1\nkind: MongoBenchmark\nmetadata: {{name: t}}\n\
             spec:\n  targets: [{{name: local, external: {{uriSecretRef: {{name: s, key: uri}}}}}}]\n  \
             platforms: [{{name: local}}]\n  dataset: {{sizes: [1k]}}\n  workload: {workload}\n"
        );
        serde_yaml::from_str::<MongoBenchmark>(&text).unwrap().spec
    }

    #[test]
    fn a_warmup_until_settled_reaches_the_runner_with_its_defaults() {
        let settle = |extra: &str| {
            run_settings(&spec(&format!("{{type: flights, warmup: 10s{extra}}}")))
                .unwrap()
                .warmup_settle
        };
        assert_eq!(settle(""), None);
        assert_eq!(
            settle(", warmupUntilSettled: {}"),
            Some(WarmupSettle {
                max_rounds: 5,
                tolerance_percent: 5.0
            })
        );
        assert_eq!(
            settle(", warmupUntilSettled: {maxRounds: 8, tolerancePercent: 2.5}"),
            Some(WarmupSettle {
                max_rounds: 8,
                tolerance_percent: 2.5
            })
        );
    }

    #[test]
    fn ycsb_writes_with_w1_unless_the_spec_says_otherwise() {
        let ycsb = |extra: &str| {
            run_settings(&spec(&format!(
                "{{type: ycsb, ycsb: {{workload: a}}{extra}}}"
            )))
            .unwrap()
            .write_concern
        };
        assert_eq!(ycsb(""), Some("1".to_owned()));
        assert_eq!(
            ycsb(", writeConcern: majority"),
            Some("majority".to_owned())
        );
        assert_eq!(ycsb(", writeConcern: '2'"), Some("2".to_owned()));
        assert_eq!(ycsb(", writeConcern: default"), None);
        // Flights keeps the server's (or the URI's) default.
        let flights = |extra: &str| {
            run_settings(&spec(&format!("{{type: flights{extra}}}")))
                .unwrap()
                .write_concern
        };
        assert_eq!(flights(""), None);
        assert_eq!(
            flights(", writeConcern: majority"),
            Some("majority".to_owned())
        );
    }

    #[test]
    fn ycsb_fields_given_are_set_over_the_preset() {
        let y: Ycsb = serde_yaml::from_str(
            "{workload: b, readProportion: 0.5, requestDistribution: hotspot, fieldCount: 3, \
             table: orders, readAllFields: false, scanLengthDistribution: zipfian}",
        )
        .unwrap();
        let raw = ycsb_properties(&y).unwrap();
        let preset = RawProperties::preset("workloadb").unwrap();
        assert_eq!(raw.get("readproportion"), Some("0.5"));
        assert_eq!(raw.get("requestdistribution"), Some("hotspot"));
        assert_eq!(raw.get("fieldcount"), Some("3"));
        assert_eq!(raw.get("table"), Some("orders"));
        assert_eq!(raw.get("readallfields"), Some("false"));
        assert_eq!(raw.get("scanlengthdistribution"), Some("zipfian"));
        // Fields not given keep the preset's value (or stay unset).
        assert_eq!(raw.get("updateproportion"), preset.get("updateproportion"));
        assert_eq!(raw.get("fieldlength"), preset.get("fieldlength"));
        assert_eq!(raw.get("insertorder"), None);
        assert_eq!(preset.get("readproportion"), Some("0.95"));
    }
}
