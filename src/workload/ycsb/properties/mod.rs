//! Validated CoreWorkload and mongobench generator properties (specs/ycsb.md §2) with YCSB's
//! defaults, read from a [`RawProperties`] bag. Only what the generator needs is interpreted here;
//! other properties (measurement, status, connection) stay in the raw bag for their owners.
//! Builds on `raw`, `settings`, `error` and `partition` of `ycsb/`; `read.rs` holds the typed
//! accessors, `url.rs` the database a `mongodb.url` names, `tests.rs` the unit tests.

mod read;
mod url;

use std::fs;

pub use super::error::PropertyError;
use super::partition::client_slice;
pub use super::raw::{CORE_WORKLOAD_CLASS, DEFAULT_MONGODB_URL, RawProperties};
pub use super::settings::{
    Compat, FieldLengthHistogram, FieldLengths, Proportions, RequestDistribution,
    ScanLengthDistribution, ZipfianMode,
};
use read::Reader;
pub use url::database_for_url;

/// Validated CoreWorkload and mongobench generator properties. Construct with
/// [`Properties::from_raw`] or [`Properties::preset`]; fields are public for reading and for
/// deliberate adjustments (e.g. a runner applying a client's slice), not re-validated afterwards.
#[derive(Debug, Clone, PartialEq)]
pub struct Properties {
    /// Workload name for the traffic fingerprint: the preset file name (`workloada`…) or `custom`.
    pub workload: String,
    /// `mongobench.compat`.
    pub compat: Compat,
    /// `recordcount` (required, > 0: mongobench rejects YCSB's 0 → 2^31 − 1).
    pub record_count: u64,
    /// `operationcount`; 0 = unbounded (ends by `maxexecutiontime`).
    pub operation_count: u64,
    /// `mongobench.headroom.operationcount`: the operation count the zipfian insert headroom
    /// (`expectednewkeys`) is computed from; defaults to `operationcount`. A runner that bounds a
    /// run by time sets `operationcount=0` and keeps the workload's own `operationcount` here,
    /// so the hot keys are those of stock YCSB run with that workload file.
    pub headroom_operation_count: u64,
    /// `insertstart`.
    pub insert_start: u64,
    /// `insertcount` (defaults to `recordcount − insertstart`).
    pub insert_count: u64,
    /// Whether `insertcount` was set (the load phase inserts `recordcount` records otherwise).
    pub insert_count_explicit: bool,
    /// `insertorder=hashed` (default) hashes key numbers; anything else keeps them ordered.
    pub hashed_keys: bool,
    /// `zeropadding`.
    pub zero_padding: u32,
    /// `table`: the MongoDB collection.
    pub table: String,
    /// Database from `mongodb.url` (§6): `ycsb` unless the URL was given and names another
    /// database than `admin`.
    pub database: String,
    /// `fieldcount`.
    pub field_count: u32,
    /// `fieldnameprefix`.
    pub field_name_prefix: String,
    /// `fieldlengthdistribution` and its parameters.
    pub field_lengths: FieldLengths,
    /// `readallfields`.
    pub read_all_fields: bool,
    /// `readallfieldsbyname` (master only; ignored with a warning under 0.17.0).
    pub read_all_fields_by_name: bool,
    /// `writeallfields`.
    pub write_all_fields: bool,
    /// `dataintegrity`.
    pub data_integrity: bool,
    /// The operation proportions.
    pub proportions: Proportions,
    /// `requestdistribution`.
    pub request_distribution: RequestDistribution,
    /// `minscanlength`.
    pub min_scan_length: u64,
    /// `maxscanlength`.
    pub max_scan_length: u64,
    /// `scanlengthdistribution`.
    pub scan_length_distribution: ScanLengthDistribution,
    /// `core_workload_insertion_retry_limit` (load phase).
    pub insertion_retry_limit: u32,
    /// `core_workload_insertion_retry_interval` in seconds.
    pub insertion_retry_interval: u64,
    /// `batchsize` (the binding's; `mongodb.batchsize` is ignored as in YCSB).
    pub batch_size: u32,
    /// `mongodb.upsert`.
    pub upsert: bool,
    /// `threadcount` (`-threads`).
    pub thread_count: u32,
    /// `maxexecutiontime` in seconds (0 = none).
    pub max_execution_time: u64,
    /// `mongobench.seed` (random if unset; the runner picks and records one).
    pub seed: Option<u64>,
    /// `mongobench.zipfian.mode` / `mongobench.zipfian.theta`.
    pub zipfian_mode: ZipfianMode,
    /// `mongobench.client.index` (this pod).
    pub client_index: u32,
    /// `mongobench.client.count` (pods).
    pub client_count: u32,
    /// `mongobench.txninsert.partition`: per-worker insert lanes (see the module docs).
    pub txninsert_partition: bool,
    /// `mongobench.batch.flush`: write the unflushed batch remainder after the last operation.
    pub batch_flush: bool,
    /// Warnings YCSB would print (replaced values, ignored properties).
    pub warnings: Vec<String>,
}

/// mongobench properties that no longer exist, with what replaced them: setting one is an error,
/// never silently ignored.
const REMOVED: [(&str, &str); 1] = [(
    "mongobench.txninsert.start",
    "the runner starts run-phase inserts after max(recordcount, documents already in the \
     collection), so a second D/E run never reuses a key; remove the property",
)];

/// How many times the loaded keys the zipfian insert headroom may be (see
/// `Properties::check_zipfian_range`).
pub const MAX_HEADROOM_FACTOR: u64 = 1_000_000;

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

impl Properties {
    /// A preset workload (`a`..`f`) with YCSB's defaults for everything it does not set.
    ///
    /// # Errors
    /// [`PropertyError::UnknownPreset`].
    pub fn preset(name: &str) -> Result<Properties, PropertyError> {
        Properties::from_raw(&RawProperties::preset(name)?)
    }

    /// Interprets and validates a property bag. Reads the `fieldlengthhistogram` file when
    /// `fieldlengthdistribution=histogram` (the only file access).
    ///
    /// # Errors
    /// The first invalid property, see [`PropertyError`].
    pub fn from_raw(raw: &RawProperties) -> Result<Properties, PropertyError> {
        let r = Reader { raw };
        let mut warnings = Vec::new();

        if let Some(class) = raw.get("workload") {
            let class = class.trim();
            if class != CORE_WORKLOAD_CLASS && class != "com.yahoo.ycsb.workloads.CoreWorkload" {
                return Err(r.invalid("workload", class, CORE_WORKLOAD_CLASS));
            }
        }
        let compat = match raw.get("mongobench.compat").map(str::trim) {
            None | Some("0.17.0") => Compat::V0_17_0,
            Some("master") => Compat::Master,
            Some(v) => return Err(r.invalid("mongobench.compat", v, "0.17.0 or master")),
        };

        let record_count = r.u64("recordcount", 0)?;
        if record_count == 0 {
            return Err(PropertyError::Required {
                property: "recordcount",
                reason: "give the number of loaded records (> 0), the same in load and run; \
                         YCSB's silent default of 2147483647 is not accepted",
            });
        }
        let operation_count = r.u64("operationcount", 0)?;
        let headroom_operation_count =
            r.u64("mongobench.headroom.operationcount", operation_count)?;
        let insert_start = r.u64("insertstart", 0)?;
        if insert_start > record_count {
            return Err(PropertyError::InsertRange {
                insertstart: insert_start,
                insertcount: 0,
                recordcount: record_count,
            });
        }
        let insert_count_explicit = raw.contains("insertcount");
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

        let field_count = r.u32("fieldcount", 10)?;
        if field_count == 0 {
            return Err(r.invalid("fieldcount", "0", "at least 1 field"));
        }
        let field_length = r.u64("fieldlength", 100)?;
        let min_field_length = r.u64("minfieldlength", 1)?;
        let field_lengths = match r.string("fieldlengthdistribution", "constant").trim() {
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
            "histogram" => {
                let path = r.string("fieldlengthhistogram", "hist.txt");
                let text = fs::read_to_string(&path).map_err(|e| PropertyError::Histogram {
                    path: path.clone(),
                    reason: format!("cannot read the file: {e}"),
                })?;
                let h = FieldLengthHistogram::parse(&text)
                    .map_err(|reason| PropertyError::Histogram { path, reason })?;
                FieldLengths::Histogram(h)
            }
            other => {
                return Err(r.invalid(
                    "fieldlengthdistribution",
                    other,
                    "constant, uniform, zipfian or histogram",
                ));
            }
        };

        let data_integrity = r.bool("dataintegrity", false)?;
        if data_integrity && !matches!(field_lengths, FieldLengths::Constant(_)) {
            return Err(PropertyError::Conflict {
                property: "dataintegrity",
                reason: "dataintegrity=true requires fieldlengthdistribution=constant".into(),
            });
        }
        let mut read_all_fields_by_name = r.bool("readallfieldsbyname", false)?;
        if read_all_fields_by_name && compat == Compat::V0_17_0 {
            warnings.push(
                "readallfieldsbyname is ignored under mongobench.compat=0.17.0 (it exists only on master)"
                    .into(),
            );
            read_all_fields_by_name = false;
        }

        let request_distribution = match r.string("requestdistribution", "uniform").trim() {
            "uniform" => RequestDistribution::Uniform,
            "zipfian" => RequestDistribution::Zipfian,
            "latest" => RequestDistribution::Latest,
            "sequential" => RequestDistribution::Sequential,
            "hotspot" => {
                let mut fraction = |key: &str, default: f64| -> Result<f64, PropertyError> {
                    let f = r.f64(key, default)?;
                    if (0.0..=1.0).contains(&f) {
                        Ok(f)
                    } else {
                        warnings.push(format!("{key}={f} is outside [0, 1]; using 0 (as YCSB)"));
                        Ok(0.0)
                    }
                };
                let data_fraction = fraction("hotspotdatafraction", 0.2)?;
                let opn_fraction = fraction("hotspotopnfraction", 0.8)?;
                let interval = insert_count as f64;
                let hot = (interval * data_fraction) as u64;
                if (opn_fraction > 0.0 && hot == 0) || (opn_fraction < 1.0 && hot == insert_count) {
                    return Err(PropertyError::Conflict {
                        property: "hotspotdatafraction",
                        reason: format!(
                            "the hot set has {hot} of {insert_count} keys but hotspotopnfraction={opn_fraction} \
                             draws from an empty set (YCSB divides by zero)"
                        ),
                    });
                }
                RequestDistribution::Hotspot {
                    data_fraction,
                    opn_fraction,
                }
            }
            "exponential" => {
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
                    return Err(r.invalid(
                        "exponential.frac",
                        &frac.to_string(),
                        "a positive fraction",
                    ));
                }
                RequestDistribution::Exponential { percentile, frac }
            }
            other => {
                return Err(r.invalid(
                    "requestdistribution",
                    other,
                    "uniform, zipfian, latest, hotspot, sequential or exponential",
                ));
            }
        };

        let min_scan_length = r.u64("minscanlength", 1)?;
        let max_scan_length = r.u64("maxscanlength", 1000)?;
        if min_scan_length == 0 {
            // A limit of 0 means "no limit" to MongoDB: the scan would return the whole collection.
            return Err(r.invalid("minscanlength", "0", "at least 1"));
        }
        if min_scan_length > max_scan_length {
            return Err(r.invalid(
                "maxscanlength",
                &max_scan_length.to_string(),
                &format!("at least minscanlength ({min_scan_length})"),
            ));
        }
        if max_scan_length > i32::MAX as u64 {
            return Err(r.invalid(
                "maxscanlength",
                &max_scan_length.to_string(),
                "at most 2147483647",
            ));
        }
        let scan_length_distribution = match r.string("scanlengthdistribution", "uniform").trim() {
            "uniform" => ScanLengthDistribution::Uniform,
            "zipfian" => ScanLengthDistribution::Zipfian,
            other => return Err(r.invalid("scanlengthdistribution", other, "uniform or zipfian")),
        };

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
        let database = database_for_url(raw.get("mongodb.url"), compat)?;
        let zero_padding = r.u32("zeropadding", 1)?;
        let field_name_prefix = r.string("fieldnameprefix", "field");
        let record_bytes = max_record_bytes(
            field_count,
            &field_name_prefix,
            &field_lengths,
            zero_padding,
        );
        if record_bytes > MAX_RECORD_BYTES {
            return Err(PropertyError::Conflict {
                property: "fieldlength",
                reason: format!(
                    "fieldcount={field_count} fields of up to {} bytes make records of up to \
                     {record_bytes} BSON bytes, above MongoDB's document limit of \
                     {MAX_RECORD_BYTES} (16 MiB): lower fieldlength or fieldcount",
                    field_lengths.max()
                ),
            });
        }

        let thread_count = r.u32("threadcount", 1)?;
        if thread_count == 0 {
            return Err(r.invalid("threadcount", "0", "at least 1"));
        }

        let zipfian_mode = match r.string("mongobench.zipfian.mode", "ycsb").trim() {
            "ycsb" => {
                if raw.contains("mongobench.zipfian.theta") {
                    warnings.push(
                        "mongobench.zipfian.theta applies only to mongobench.zipfian.mode=exact"
                            .into(),
                    );
                }
                ZipfianMode::Ycsb
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
                ZipfianMode::Exact { theta }
            }
            other => return Err(r.invalid("mongobench.zipfian.mode", other, "ycsb or exact")),
        };
        let seed = match raw.get("mongobench.seed") {
            None => None,
            Some(v) => Some(
                v.trim()
                    .parse::<u64>()
                    .map_err(|_| r.invalid("mongobench.seed", v, "an unsigned 64-bit integer"))?,
            ),
        };
        let client_count = r.u32("mongobench.client.count", 1)?;
        let client_index = r.u32("mongobench.client.index", 0)?;
        if client_count == 0 || client_index >= client_count {
            return Err(r.invalid(
                "mongobench.client.index",
                &client_index.to_string(),
                &format!(
                    "an index below mongobench.client.count ({client_count}), which must be ≥ 1"
                ),
            ));
        }
        for (property, reason) in REMOVED {
            if raw.contains(property) {
                return Err(PropertyError::Removed { property, reason });
            }
        }

        let props = Properties {
            workload: raw.preset_name().unwrap_or("custom").to_string(),
            compat,
            record_count,
            operation_count,
            headroom_operation_count,
            insert_start,
            insert_count,
            insert_count_explicit,
            hashed_keys: r.string("insertorder", "hashed") == "hashed",
            zero_padding,
            table: r.string("table", "usertable"),
            database,
            field_count,
            field_name_prefix,
            field_lengths,
            read_all_fields: r.bool("readallfields", true)?,
            read_all_fields_by_name,
            write_all_fields: r.bool("writeallfields", false)?,
            data_integrity,
            proportions,
            request_distribution,
            min_scan_length,
            max_scan_length,
            scan_length_distribution,
            insertion_retry_limit: r.u32("core_workload_insertion_retry_limit", 0)?,
            insertion_retry_interval: r.u64("core_workload_insertion_retry_interval", 3)?,
            batch_size,
            upsert,
            thread_count,
            max_execution_time: r.u64("maxexecutiontime", 0)?,
            seed,
            zipfian_mode,
            client_index,
            client_count,
            txninsert_partition: r.bool("mongobench.txninsert.partition", false)?,
            batch_flush: r.bool("mongobench.batch.flush", false)?,
            warnings,
        };
        let headroom_property = if raw.contains("mongobench.headroom.operationcount") {
            "mongobench.headroom.operationcount"
        } else {
            "operationcount"
        };
        props.check_zipfian_range(headroom_property)?;
        Ok(props)
    }

    /// A zipfian key range must fit in u64 and must not dwarf the keys that exist: reads draw
    /// from the whole range, inserted keys included, and draw again until a key exists, so a
    /// range a million times the loaded keys would draw about a million keys per read (YCSB
    /// would loop as long).
    fn check_zipfian_range(&self, property: &'static str) -> Result<(), PropertyError> {
        if self.request_distribution != RequestDistribution::Zipfian {
            return Ok(());
        }
        let new_keys = self.expected_new_keys();
        let fits = self
            .insert_start
            .checked_add(self.insert_count)
            .and_then(|end| end.checked_add(new_keys))
            .is_some_and(|end| end < u64::MAX);
        let keys = self.insert_count.max(1);
        if fits && new_keys / keys <= MAX_HEADROOM_FACTOR {
            return Ok(());
        }
        Err(PropertyError::Conflict {
            property,
            reason: format!(
                "{property} × insertproportion × 2 = {new_keys} expected new keys, more than \
                 {MAX_HEADROOM_FACTOR} times the {keys} loaded keys: zipfian reads draw from \
                 the whole range and would draw about {} keys for each one that exists; lower \
                 {property} or insertproportion, or bound the run by time",
                new_keys / keys
            ),
        })
    }

    /// Field names `field0` … `field{n−1}` (with `fieldnameprefix`).
    pub fn field_names(&self) -> Vec<String> {
        (0..self.field_count)
            .map(|i| format!("{}{i}", self.field_name_prefix))
            .collect()
    }

    /// `expectednewkeys = trunc(operationcount × insertproportion × 2.0)` from the property as
    /// given (not normalised); a negative proportion counts as 0. The operation count is
    /// `mongobench.headroom.operationcount` when set.
    pub fn expected_new_keys(&self) -> u64 {
        (self.headroom_operation_count as f64 * self.proportions.insert.max(0.0) * 2.0) as u64
    }

    /// Operations of a load: `insertcount` if it was set, else `recordcount` (keys
    /// `[insertstart, insertstart + n)`).
    pub fn load_operation_count(&self) -> u64 {
        if self.insert_count_explicit {
            self.insert_count
        } else {
            self.record_count
        }
    }

    /// The keys this client pod loads, as `(first key number, count)`: with several pods
    /// (`mongobench.client.count > 1`) and neither `insertstart` nor `insertcount` given, the
    /// pod's [`client_slice`] of `recordcount`; otherwise `insertstart` and
    /// [`Properties::load_operation_count`], as YCSB.
    pub fn load_range(&self) -> (u64, u64) {
        if self.client_count > 1 && !self.insert_count_explicit && self.insert_start == 0 {
            client_slice(self.record_count, self.client_index, self.client_count)
        } else {
            (self.insert_start, self.load_operation_count())
        }
    }
}

#[cfg(test)]
mod tests;
