//! The groups of related properties [`Properties::from_raw`](super::Properties::from_raw) reads
//! and checks together. Each reader is called in the order `from_raw` reports errors, so the
//! first invalid property stays the one named. Also the largest record the properties make.

use std::fs;

use super::read::Reader;
use super::{
    CORE_WORKLOAD_CLASS, Compat, FieldLengthHistogram, FieldLengths, PropertyError, Proportions,
    RequestDistribution, ScanLengthDistribution, ZipfianMode,
};

/// MongoDB's largest document (`maxBsonObjectSize`): a record above it can never be inserted.
pub const MAX_RECORD_BYTES: u64 = 16 * 1024 * 1024;

/// The BSON size of the largest record the properties can produce (§6): the `_id` string of up
/// to 20 digits (or `zeropadding`) after `user`, and every field at its longest length.
pub fn max_record_bytes(
    field_count: u32,
    field_name_prefix: &str,
    lengths: &FieldLengths,
    zero_padding: u32,
) -> u64 {
    let key = 4 + u64::from(zero_padding).max(20);
    // Document length, `_id` element (type, name, string length, text, NUL), trailing NUL.
    let mut bytes = 4 + (1 + 4 + 4 + key + 1) + 1;
    for i in 0..field_count {
        let name = (field_name_prefix.len() + i.to_string().len()) as u64;
        // Type, name, NUL, binary length, subtype, bytes.
        bytes = bytes.saturating_add(1 + name + 1 + 4 + 1 + lengths.max());
    }
    bytes
}

/// The key numbers a run loads and inserts.
pub(super) struct KeyRange {
    pub(super) record_count: u64,
    pub(super) operation_count: u64,
    pub(super) headroom_operation_count: u64,
    pub(super) insert_start: u64,
    pub(super) insert_count: u64,
    pub(super) insert_count_explicit: bool,
}

/// The scan length bounds and their distribution.
pub(super) struct ScanLengths {
    pub(super) min: u64,
    pub(super) max: u64,
    pub(super) distribution: ScanLengthDistribution,
}

/// mongobench properties that no longer exist, with what replaced them: setting one is an error,
/// never silently ignored.
const REMOVED: [(&str, &str); 1] = [(
    "mongobench.txninsert.start",
    "the runner starts run-phase inserts after max(recordcount, documents already in the \
     collection), so a second D/E run never reuses a key; remove the property",
)];

/// `workload` (only CoreWorkload) and `mongobench.compat`.
pub(super) fn compat(r: &Reader) -> Result<Compat, PropertyError> {
    if let Some(class) = r.raw.get("workload") {
        let class = class.trim();
        if class != CORE_WORKLOAD_CLASS && class != "com.yahoo.ycsb.workloads.CoreWorkload" {
            return Err(r.invalid("workload", class, CORE_WORKLOAD_CLASS));
        }
    }
    match r.raw.get("mongobench.compat").map(str::trim) {
        None | Some("0.17.0") => Ok(Compat::V0_17_0),
        Some("master") => Ok(Compat::Master),
        Some(v) => Err(r.invalid("mongobench.compat", v, "0.17.0 or master")),
    }
}

/// `recordcount`, `operationcount`, its headroom override, `insertstart` and `insertcount`.
pub(super) fn key_range(r: &Reader) -> Result<KeyRange, PropertyError> {
    let record_count = r.u64("recordcount", 0)?;
    if record_count == 0 {
        return Err(PropertyError::Required {
            property: "recordcount",
            reason: "give the number of loaded records (> 0), the same in load and run; \
                     YCSB's silent default of 2147483647 is not accepted",
        });
    }
    let operation_count = r.u64("operationcount", 0)?;
    let headroom_operation_count = r.u64("mongobench.headroom.operationcount", operation_count)?;
    let insert_start = r.u64("insertstart", 0)?;
    if insert_start > record_count {
        return Err(PropertyError::InsertRange {
            insertstart: insert_start,
            insertcount: 0,
            recordcount: record_count,
        });
    }
    let insert_count_explicit = r.raw.contains("insertcount");
    let insert_count = r.u64("insertcount", record_count - insert_start)?;
    if insert_start
        .checked_add(insert_count)
        .is_none_or(|end| end > record_count)
    {
        return Err(PropertyError::InsertRange {
            insertstart: insert_start,
            insertcount: insert_count,
            recordcount: record_count,
        });
    }
    Ok(KeyRange {
        record_count,
        operation_count,
        headroom_operation_count,
        insert_start,
        insert_count,
        insert_count_explicit,
    })
}

/// The five operation proportions; at least one must be positive.
pub(super) fn proportions(r: &Reader) -> Result<Proportions, PropertyError> {
    let proportions = Proportions {
        read: r.f64("readproportion", 0.95)?,
        update: r.f64("updateproportion", 0.05)?,
        insert: r.f64("insertproportion", 0.0)?,
        scan: r.f64("scanproportion", 0.0)?,
        read_modify_write: r.f64("readmodifywriteproportion", 0.0)?,
    };
    if proportions.normalised().iter().all(|w| *w == 0.0) {
        return Err(PropertyError::NoOperation);
    }
    Ok(proportions)
}

/// `fieldcount` and the field lengths (`fieldlength`, `minfieldlength`,
/// `fieldlengthdistribution`, and the `fieldlengthhistogram` file it may name).
pub(super) fn fields(r: &Reader) -> Result<(u32, FieldLengths), PropertyError> {
    let field_count = r.u32("fieldcount", 10)?;
    if field_count == 0 {
        return Err(r.invalid("fieldcount", "0", "at least 1 field"));
    }
    let field_length = r.u64("fieldlength", 100)?;
    let min_field_length = r.u64("minfieldlength", 1)?;
    let lengths = match r.string("fieldlengthdistribution", "constant").trim() {
        "constant" => FieldLengths::Constant(field_length),
        kind @ ("uniform" | "zipfian") => {
            if min_field_length > field_length {
                return Err(r.invalid(
                    "minfieldlength",
                    &min_field_length.to_string(),
                    &format!("at most fieldlength ({field_length})"),
                ));
            }
            let (min, max) = (min_field_length, field_length);
            if kind == "uniform" {
                FieldLengths::Uniform { min, max }
            } else {
                FieldLengths::Zipfian { min, max }
            }
        }
        "histogram" => FieldLengths::Histogram(histogram(r)?),
        other => {
            return Err(r.invalid(
                "fieldlengthdistribution",
                other,
                "constant, uniform, zipfian or histogram",
            ));
        }
    };
    Ok((field_count, lengths))
}

/// The `fieldlengthhistogram` file, read and parsed.
fn histogram(r: &Reader) -> Result<FieldLengthHistogram, PropertyError> {
    let path = r.string("fieldlengthhistogram", "hist.txt");
    let text = fs::read_to_string(&path).map_err(|e| PropertyError::Histogram {
        path: path.clone(),
        reason: format!("cannot read the file: {e}"),
    })?;
    FieldLengthHistogram::parse(&text).map_err(|reason| PropertyError::Histogram { path, reason })
}

/// `dataintegrity`, which needs constant field lengths.
pub(super) fn data_integrity(r: &Reader, lengths: &FieldLengths) -> Result<bool, PropertyError> {
    let data_integrity = r.bool("dataintegrity", false)?;
    if data_integrity && !matches!(lengths, FieldLengths::Constant(_)) {
        return Err(PropertyError::Conflict {
            property: "dataintegrity",
            reason: "dataintegrity=true requires fieldlengthdistribution=constant".into(),
        });
    }
    Ok(data_integrity)
}

/// `readallfieldsbyname`, dropped with a warning under 0.17.0 (it exists only on master).
pub(super) fn read_all_fields_by_name(
    r: &Reader,
    compat: Compat,
    warnings: &mut Vec<String>,
) -> Result<bool, PropertyError> {
    let by_name = r.bool("readallfieldsbyname", false)?;
    if by_name && compat == Compat::V0_17_0 {
        warnings.push(
            "readallfieldsbyname is ignored under mongobench.compat=0.17.0 (it exists only on master)"
                .into(),
        );
        return Ok(false);
    }
    Ok(by_name)
}

/// `requestdistribution` and the parameters of the hotspot and exponential kinds.
pub(super) fn request_distribution(
    r: &Reader,
    insert_count: u64,
    warnings: &mut Vec<String>,
) -> Result<RequestDistribution, PropertyError> {
    match r.string("requestdistribution", "uniform").trim() {
        "uniform" => Ok(RequestDistribution::Uniform),
        "zipfian" => Ok(RequestDistribution::Zipfian),
        "latest" => Ok(RequestDistribution::Latest),
        "sequential" => Ok(RequestDistribution::Sequential),
        "hotspot" => hotspot(r, insert_count, warnings),
        "exponential" => exponential(r),
        other => Err(r.invalid(
            "requestdistribution",
            other,
            "uniform, zipfian, latest, hotspot, sequential or exponential",
        )),
    }
}

/// A hotspot fraction: outside [0, 1] it becomes 0 with a warning, as in YCSB.
fn fraction(
    r: &Reader,
    key: &str,
    default: f64,
    warnings: &mut Vec<String>,
) -> Result<f64, PropertyError> {
    let f = r.f64(key, default)?;
    if (0.0..=1.0).contains(&f) {
        Ok(f)
    } else {
        warnings.push(format!("{key}={f} is outside [0, 1]; using 0 (as YCSB)"));
        Ok(0.0)
    }
}

/// The hotspot distribution, refused when an operation would draw from an empty set.
fn hotspot(
    r: &Reader,
    insert_count: u64,
    warnings: &mut Vec<String>,
) -> Result<RequestDistribution, PropertyError> {
    let data_fraction = fraction(r, "hotspotdatafraction", 0.2, warnings)?;
    let opn_fraction = fraction(r, "hotspotopnfraction", 0.8, warnings)?;
    let hot = (insert_count as f64 * data_fraction) as u64;
    if (opn_fraction > 0.0 && hot == 0) || (opn_fraction < 1.0 && hot == insert_count) {
        return Err(PropertyError::Conflict {
            property: "hotspotdatafraction",
            reason: format!(
                "the hot set has {hot} of {insert_count} keys but hotspotopnfraction={opn_fraction} \
                 draws from an empty set (YCSB divides by zero)"
            ),
        });
    }
    Ok(RequestDistribution::Hotspot {
        data_fraction,
        opn_fraction,
    })
}

/// The exponential distribution's percentile and fraction.
fn exponential(r: &Reader) -> Result<RequestDistribution, PropertyError> {
    let percentile = r.f64("exponential.percentile", 95.0)?;
    if !(percentile > 0.0 && percentile < 100.0) {
        return Err(r.invalid(
            "exponential.percentile",
            &percentile.to_string(),
            "a percentile strictly between 0 and 100",
        ));
    }
    let frac = r.f64("exponential.frac", 0.857_142_857_1)?;
    if frac <= 0.0 {
        return Err(r.invalid("exponential.frac", &frac.to_string(), "a positive fraction"));
    }
    Ok(RequestDistribution::Exponential { percentile, frac })
}

/// `minscanlength`, `maxscanlength` and `scanlengthdistribution`.
pub(super) fn scan_lengths(r: &Reader) -> Result<ScanLengths, PropertyError> {
    let min = r.u64("minscanlength", 1)?;
    let max = r.u64("maxscanlength", 1000)?;
    if min == 0 {
        // A limit of 0 means "no limit" to MongoDB: the scan would return the whole collection.
        return Err(r.invalid("minscanlength", "0", "at least 1"));
    }
    if min > max {
        return Err(r.invalid(
            "maxscanlength",
            &max.to_string(),
            &format!("at least minscanlength ({min})"),
        ));
    }
    if max > i32::MAX as u64 {
        return Err(r.invalid("maxscanlength", &max.to_string(), "at most 2147483647"));
    }
    let distribution = match r.string("scanlengthdistribution", "uniform").trim() {
        "uniform" => ScanLengthDistribution::Uniform,
        "zipfian" => ScanLengthDistribution::Zipfian,
        other => return Err(r.invalid("scanlengthdistribution", other, "uniform or zipfian")),
    };
    Ok(ScanLengths {
        min,
        max,
        distribution,
    })
}

/// `batchsize` and `mongodb.upsert`, which 0.17.0 cannot combine.
pub(super) fn batch_and_upsert(r: &Reader, compat: Compat) -> Result<(u32, bool), PropertyError> {
    let batch_size = r.u32("batchsize", 1)?;
    if batch_size == 0 {
        return Err(r.invalid("batchsize", "0", "at least 1"));
    }
    let upsert = r.bool("mongodb.upsert", false)?;
    if upsert && batch_size > 1 && compat == Compat::V0_17_0 {
        return Err(PropertyError::Conflict {
            property: "mongodb.upsert",
            reason: "mongodb.upsert=true with batchsize > 1 fails every batch in YCSB 0.17.0 \
                     (whole-document update models); use mongobench.compat=master or batchsize=1"
                .into(),
        });
    }
    Ok((batch_size, upsert))
}

/// Refuses records that could exceed MongoDB's document limit.
pub(super) fn check_record_size(
    field_count: u32,
    field_name_prefix: &str,
    lengths: &FieldLengths,
    zero_padding: u32,
) -> Result<(), PropertyError> {
    let record_bytes = max_record_bytes(field_count, field_name_prefix, lengths, zero_padding);
    if record_bytes <= MAX_RECORD_BYTES {
        return Ok(());
    }
    Err(PropertyError::Conflict {
        property: "fieldlength",
        reason: format!(
            "fieldcount={field_count} fields of up to {} bytes make records of up to \
             {record_bytes} BSON bytes, above MongoDB's document limit of \
             {MAX_RECORD_BYTES} (16 MiB): lower fieldlength or fieldcount",
            lengths.max()
        ),
    })
}

/// `mongobench.zipfian.mode` and, for `exact`, `mongobench.zipfian.theta`.
pub(super) fn zipfian_mode(
    r: &Reader,
    warnings: &mut Vec<String>,
) -> Result<ZipfianMode, PropertyError> {
    match r.string("mongobench.zipfian.mode", "ycsb").trim() {
        "ycsb" => {
            if r.raw.contains("mongobench.zipfian.theta") {
                warnings.push(
                    "mongobench.zipfian.theta applies only to mongobench.zipfian.mode=exact".into(),
                );
            }
            Ok(ZipfianMode::Ycsb)
        }
        "exact" => {
            let theta = r.f64("mongobench.zipfian.theta", 0.99)?;
            if !(theta > 0.0 && theta < 1.0) {
                return Err(r.invalid(
                    "mongobench.zipfian.theta",
                    &theta.to_string(),
                    "an exponent strictly between 0 and 1",
                ));
            }
            Ok(ZipfianMode::Exact { theta })
        }
        other => Err(r.invalid("mongobench.zipfian.mode", other, "ycsb or exact")),
    }
}

/// `mongobench.seed`, if given.
pub(super) fn seed(r: &Reader) -> Result<Option<u64>, PropertyError> {
    r.raw
        .get("mongobench.seed")
        .map(|v| {
            v.trim()
                .parse::<u64>()
                .map_err(|_| r.invalid("mongobench.seed", v, "an unsigned 64-bit integer"))
        })
        .transpose()
}

/// `mongobench.client.index` and `mongobench.client.count`, the index below the count.
pub(super) fn client(r: &Reader) -> Result<(u32, u32), PropertyError> {
    let client_count = r.u32("mongobench.client.count", 1)?;
    let client_index = r.u32("mongobench.client.index", 0)?;
    if client_count == 0 || client_index >= client_count {
        return Err(r.invalid(
            "mongobench.client.index",
            &client_index.to_string(),
            &format!("an index below mongobench.client.count ({client_count}), which must be ≥ 1"),
        ));
    }
    Ok((client_index, client_count))
}

/// Refuses a property mongobench no longer has.
pub(super) fn refuse_removed(r: &Reader) -> Result<(), PropertyError> {
    for (property, reason) in REMOVED {
        if r.raw.contains(property) {
            return Err(PropertyError::Removed { property, reason });
        }
    }
    Ok(())
}

/// The property the zipfian insert headroom was computed from, for its error.
pub(super) fn headroom_property(r: &Reader) -> &'static str {
    if r.raw.contains("mongobench.headroom.operationcount") {
        "mongobench.headroom.operationcount"
    } else {
        "operationcount"
    }
}
