//! The spec's workload in the generators' and the runner's own terms.

use std::time::Duration;

use crate::api::{
    DatasetSize, IndexBuild, IndexSet, MongoBenchmarkSpec, ReadPreference, RunLength, UnitsError,
    WorkloadType, WriteConcern,
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
    let w = &spec.workload;
    match w.kind {
        WorkloadType::Flights => {
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
            Ok(WorkloadPlan::Flights(Box::new(params)))
        }
        WorkloadType::Ycsb => {
            let y = w.ycsb.as_ref().ok_or(PlanError::MissingYcsb)?;
            let preset = format!("workload{}", json_name(&y.workload));
            let mut raw = RawProperties::preset(&preset)?;
            let mut set = |key: &str, value: Option<String>| {
                if let Some(v) = value {
                    raw.set(key, v);
                }
            };
            set("readproportion", y.read_proportion.map(|v| v.to_string()));
            set(
                "updateproportion",
                y.update_proportion.map(|v| v.to_string()),
            );
            set(
                "insertproportion",
                y.insert_proportion.map(|v| v.to_string()),
            );
            set("scanproportion", y.scan_proportion.map(|v| v.to_string()));
            set(
                "readmodifywriteproportion",
                y.read_modify_write_proportion.map(|v| v.to_string()),
            );
            set(
                "requestdistribution",
                y.request_distribution.as_ref().map(json_name),
            );
            set(
                "hotspotdatafraction",
                y.hotspot_data_fraction.map(|v| v.to_string()),
            );
            set(
                "hotspotopnfraction",
                y.hotspot_opn_fraction.map(|v| v.to_string()),
            );
            set(
                "exponential.percentile",
                y.exponential_percentile.map(|v| v.to_string()),
            );
            set(
                "exponential.frac",
                y.exponential_frac.map(|v| v.to_string()),
            );
            set("fieldcount", y.field_count.map(|v| v.to_string()));
            set("fieldlength", y.field_length.map(|v| v.to_string()));
            set("minfieldlength", y.min_field_length.map(|v| v.to_string()));
            set(
                "fieldlengthdistribution",
                y.field_length_distribution.as_ref().map(json_name),
            );
            set("fieldnameprefix", y.field_name_prefix.clone());
            set("table", y.table.clone());
            set("readallfields", y.read_all_fields.map(|v| v.to_string()));
            set("writeallfields", y.write_all_fields.map(|v| v.to_string()));
            set("dataintegrity", y.data_integrity.map(|v| v.to_string()));
            set("insertorder", y.insert_order.as_ref().map(json_name));
            set("zeropadding", y.zero_padding.map(|v| v.to_string()));
            set("minscanlength", y.min_scan_length.map(|v| v.to_string()));
            set("maxscanlength", y.max_scan_length.map(|v| v.to_string()));
            set(
                "scanlengthdistribution",
                y.scan_length_distribution.as_ref().map(json_name),
            );
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
        WorkloadType::Custom => Ok(WorkloadPlan::Custom(Box::new(custom_plan(spec)?))),
    }
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
}
