//! The cross-field rules of `spec.workload`: run length and warm-up, the block of the
//! workload type, the flights mix and splits, the YCSB proportions and lengths.

use super::violation::Violation;
use crate::api::flights::Flights;
use crate::api::units::parse_duration;
use crate::api::workload::{Workload, WorkloadType};
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
    if let Some(duration) = &workload.duration
        && parse_duration(duration).is_ok_and(|d| d.is_zero())
    {
        out.push(Violation::new(
            "spec.workload.duration",
            format!("must be longer than 0, got {duration:?}"),
        ));
    }
    if let Some(flights) = &workload.flights {
        check_flights(flights, out);
    }
    if let Some(ycsb) = &workload.ycsb {
        check_ycsb(ycsb, out);
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
