//! The cross-field rules of `spec.workload`: run length and warm-up, the block of the
//! workload type, the flights mix and splits, the YCSB proportions and lengths.

use super::violation::Violation;
use crate::api::flights::Flights;
use crate::api::sweep::Sweep;
use crate::api::units::parse_duration;
use crate::api::warmup::MIN_ROUND_SECONDS;
use crate::api::workload::{RunLength, Workload, WorkloadType};
use crate::api::ycsb::{FieldLengthDistribution, Ycsb};

pub(super) fn check_workload(workload: &Workload, out: &mut Vec<Violation>) {
    let kind = workload.kind.as_str();
    if workload.kind != WorkloadType::Flights && workload.flights.is_some() {
        out.push(Violation::new(
            "spec.workload.flights",
            format!("applies only to type flights; this workload is type {kind}"),
        ));
    }
    if workload.kind != WorkloadType::Ycsb && workload.ycsb.is_some() {
        out.push(Violation::new(
            "spec.workload.ycsb",
            format!("applies only to type ycsb; this workload is type {kind}"),
        ));
    }
    if workload.kind == WorkloadType::Ycsb && workload.ycsb.is_none() {
        out.push(Violation::new(
            "spec.workload.ycsb",
            "required when type is ycsb: name the YCSB workload, e.g. ycsb: {workload: a}",
        ));
    }
    check_custom(workload, out);
    if workload.duration.is_some() && workload.operations.is_some() {
        out.push(Violation::new(
            "spec.workload.operations",
            "set duration or operations, not both",
        ));
    }
    if workload.warmup.is_some() && workload.warmup_operations.is_some() {
        out.push(Violation::new(
            "spec.workload.warmupOperations",
            "set warmup or warmupOperations, not both",
        ));
    }
    if workload.warmup_until_settled.is_some() && workload.kind != WorkloadType::Custom {
        check_settle(workload, out);
    }
    if let Some(duration) = &workload.duration
        && parse_duration(duration).is_ok_and(|d| d.is_zero())
    {
        out.push(Violation::new(
            "spec.workload.duration",
            format!("must be longer than 0, got {duration:?}"),
        ));
    }
    if let Some(sweep) = &workload.sweep {
        check_sweep(workload, sweep, out);
    }
    if let Some(flights) = &workload.flights {
        check_flights(flights, out);
    }
    if let Some(ycsb) = &workload.ycsb {
        check_ycsb(ycsb, out);
    }
}

/// Rounds of `warmup` must be a duration the settle criterion can judge.
fn check_settle(workload: &Workload, out: &mut Vec<Violation>) {
    let path = "spec.workload.warmupUntilSettled";
    if workload.warmup_operations.is_some() {
        out.push(Violation::new(
            path,
            "rounds last warmup, a duration; leave warmupOperations unset",
        ));
        return;
    }
    // Unset, the warm-up is the default minute.
    if let (Some(warmup), Ok(RunLength::Duration(d))) = (&workload.warmup, workload.warmup())
        && d.as_secs() < MIN_ROUND_SECONDS
    {
        out.push(Violation::new(
            path,
            format!(
                "each round lasts warmup, {warmup:?} here; the settle criterion judges rounds of \
                 at least {MIN_ROUND_SECONDS}s (a middle and a last third of 2 whole seconds \
                 each)"
            ),
        ));
    }
}

/// The CEL rules of `type: custom` with paths. The document itself is read where its text is
/// at hand (`plan::custom`), not here.
fn check_custom(workload: &Workload, out: &mut Vec<Violation>) {
    let custom = workload.kind == WorkloadType::Custom;
    if !custom && workload.custom.is_some() {
        out.push(Violation::new(
            "spec.workload.custom",
            format!(
                "applies only to type custom; this workload is type {}",
                workload.kind.as_str()
            ),
        ));
    }
    if !custom {
        return;
    }
    match &workload.custom {
        None => out.push(Violation::new(
            "spec.workload.custom",
            "required when type is custom: give the workload document as inline, file or \
             configMapRef (docs/specs/custom.md)",
        )),
        Some(source) => {
            let given = [
                source.inline.is_some(),
                source.file.is_some(),
                source.config_map_ref.is_some(),
            ];
            if given.iter().filter(|&&g| g).count() != 1 {
                out.push(Violation::new(
                    "spec.workload.custom",
                    "set exactly one of inline, file, configMapRef",
                ));
            }
        }
    }
    let set: Vec<&str> = [
        ("duration", workload.duration.is_some()),
        ("operations", workload.operations.is_some()),
        ("warmup", workload.warmup.is_some()),
        ("warmupOperations", workload.warmup_operations.is_some()),
        (
            "warmupUntilSettled",
            workload.warmup_until_settled.is_some(),
        ),
        ("sweep", workload.sweep.is_some()),
    ]
    .into_iter()
    .filter_map(|(field, set)| set.then_some(field))
    .collect();
    if !set.is_empty() {
        out.push(Violation::new(
            "spec.workload.custom",
            format!(
                "a custom workload's phases set its run length and warm-up (phases[].duration \
                 or operations); leave spec.workload.{} unset",
                set.join(", ")
            ),
        ));
    }
}

fn check_sweep(workload: &Workload, sweep: &Sweep, out: &mut Vec<Violation>) {
    const AT: &str = "spec.workload.sweep";
    if workload.duration.is_some() || workload.operations.is_some() {
        out.push(Violation::new(
            AT,
            "a sweep's steps last sweep.stepDuration; set neither duration nor operations",
        ));
    }
    if workload.target_ops_per_second().is_some() {
        out.push(Violation::new(
            AT,
            "a sweep sets each step's rate; leave targetOpsPerSecond unset",
        ));
    }
    let kinds = [
        !sweep.rates.is_empty(),
        !sweep.workers.is_empty(),
        sweep.find_max.is_some(),
    ];
    if kinds.iter().filter(|&&k| k).count() != 1 {
        out.push(Violation::new(
            AT,
            "set rates, workers or findMax, exactly one",
        ));
    }
    if !sweep.workers.is_empty() && workload.workers.is_some() {
        out.push(Violation::new(
            &format!("{AT}.workers"),
            "a ladder of workers sets each step's workers; leave spec.workload.workers unset",
        ));
    }
    let rates: Vec<u64> = sweep.rates.clone();
    let workers: Vec<u64> = sweep.workers.iter().map(|&w| u64::from(w)).collect();
    for (field, ladder, what) in [("rates", rates, "rate"), ("workers", workers, "count")] {
        let mut seen = std::collections::BTreeSet::new();
        for (i, value) in ladder.iter().enumerate() {
            if !seen.insert(value) {
                out.push(Violation::new(
                    &format!("{AT}.{field}[{i}]"),
                    format!("{value} is already in the ladder: each {what} once"),
                ));
            }
        }
    }
    if let Some(growth) = sweep.find_max.as_ref().and_then(|f| f.growth)
        && !(growth > 1.0 && growth <= 10.0)
    {
        out.push(Violation::new(
            &format!("{AT}.findMax.growth"),
            format!("must be above 1 and at most 10, got {growth}"),
        ));
    }
    if let Some(step) = &sweep.step_duration
        && parse_duration(step).is_ok_and(|d| d.is_zero())
    {
        out.push(Violation::new(
            &format!("{AT}.stepDuration"),
            format!("must be longer than 0, got {step:?}"),
        ));
    }
    let Some(goal) = &sweep.latency else {
        return;
    };
    let at = format!("{AT}.latency");
    match goal.bound() {
        None => out.push(Violation::new(
            &at,
            "set exactly one of p50, p95, p99, p999",
        )),
        Some((p, bound)) if parse_duration(bound).is_ok_and(|d| d.is_zero()) => {
            out.push(Violation::new(
                &format!("{at}.{}", p.as_str()),
                "must be longer than 0, got \"0\"",
            ))
        }
        Some(_) => {}
    }
    let classes = op_classes(workload);
    let op = goal.op();
    if op != "any" && !classes.contains(&op) {
        out.push(Violation::new(
            &format!("{at}.op"),
            format!(
                "{op:?} is not an operation this workload sends; expected any or one of: {}",
                classes.join(", ")
            ),
        ));
    }
}

/// The operation classes a latency goal may name: those the workload sends (a share above 0),
/// as written in the spec.
fn op_classes(workload: &Workload) -> Vec<&'static str> {
    match (workload.kind, &workload.ycsb) {
        (WorkloadType::Ycsb, Some(ycsb)) => {
            let p = ycsb.proportions();
            [
                ("read", p.read),
                ("update", p.update),
                ("insert", p.insert),
                ("scan", p.scan),
                ("readModifyWrite", p.read_modify_write),
            ]
            .into_iter()
            .filter(|(_, share)| *share > 0.0)
            .map(|(name, _)| name)
            .collect()
        }
        // Custom workloads refuse sweeps; none has a latency goal to check.
        (WorkloadType::Ycsb, None) | (WorkloadType::Custom, _) => Vec::new(),
        (WorkloadType::Flights, _) => {
            let m = workload.flights().mix();
            [
                ("find", m.find),
                ("update", m.update),
                ("delete", m.delete),
                ("insert", m.insert),
                ("aggregate", m.aggregate),
                ("transaction", m.transaction),
            ]
            .into_iter()
            .filter(|(_, share)| *share > 0)
            .map(|(name, _)| name)
            .collect()
        }
    }
}

fn check_flights(flights: &Flights, out: &mut Vec<Violation>) {
    let mix = flights.mix();
    if mix.total() != 100 {
        out.push(Violation::new(
            "spec.workload.flights",
            format!(
                "findPercent + updatePercent + deletePercent + insertPercent + aggregatePercent + \
                 transactionPercent must sum to 100, got {} + {} + {} + {} + {} + {} = {}",
                mix.find,
                mix.update,
                mix.delete,
                mix.insert,
                mix.aggregate,
                mix.transaction,
                mix.total()
            ),
        ));
    }
    let mut split = |field: &str, names: &str, shares: &[u32]| {
        let total: u32 = shares.iter().sum();
        if total != 100 {
            let terms: Vec<String> = shares.iter().map(u32::to_string).collect();
            out.push(Violation::new(
                &format!("spec.workload.flights.{field}"),
                format!(
                    "{names} must sum to 100, got {} = {total}",
                    terms.join(" + ")
                ),
            ));
        }
    };
    if let Some(s) = &flights.find_split {
        split("findSplit", "byFlightId + byRoute + byStatus", &s.shares());
    }
    let write_names = "oneByFlightId + oneById + manyByFlightId";
    if let Some(s) = &flights.update_split {
        split("updateSplit", write_names, &s.shares());
    }
    if let Some(s) = &flights.delete_split {
        split("deleteSplit", write_names, &s.shares());
    }
    if let Some(s) = &flights.aggregate_split {
        split(
            "aggregateSplit",
            "aircraftWindow + routeSummary",
            &s.shares(),
        );
    }
}

/// MongoDB's `maxBsonObjectSize`.
const MAX_DOCUMENT_BYTES: u64 = 16 * 1024 * 1024;

fn check_ycsb(ycsb: &Ycsb, out: &mut Vec<Violation>) {
    if ycsb.proportions().positive_total() <= 0.0 {
        out.push(Violation::new(
            "spec.workload.ycsb",
            "the read, update, insert, scan and readModifyWrite proportions (overrides, else \
             those of the workload) must not all be 0",
        ));
    }
    let (min_scan, max_scan) = (ycsb.min_scan_length(), ycsb.max_scan_length());
    if min_scan > max_scan {
        out.push(Violation::new(
            "spec.workload.ycsb.minScanLength",
            format!("{min_scan} exceeds maxScanLength {max_scan}"),
        ));
    }
    let (min_field, field) = (ycsb.min_field_length(), ycsb.field_length());
    if min_field > field {
        out.push(Violation::new(
            "spec.workload.ycsb.minFieldLength",
            format!("{min_field} exceeds fieldLength {field}"),
        ));
    }
    let record = ycsb.max_record_bytes();
    if record > MAX_DOCUMENT_BYTES {
        out.push(Violation::new(
            "spec.workload.ycsb.fieldLength",
            format!(
                "fieldCount {} × fieldLength {} make records of up to {record} bytes, above \
                 MongoDB's 16 MiB document limit ({MAX_DOCUMENT_BYTES} bytes)",
                ycsb.field_count.unwrap_or(10),
                ycsb.field_length()
            ),
        ));
    }
    if ycsb.data_integrity == Some(true)
        && let Some(distribution) = ycsb.field_length_distribution
        && distribution != FieldLengthDistribution::Constant
    {
        out.push(Violation::new(
            "spec.workload.ycsb.dataIntegrity",
            format!(
                "requires fieldLengthDistribution constant, got {}",
                serde_json::to_value(distribution).expect("an enum serializes")
            ),
        ));
    }
}
