//! Validated CoreWorkload and mongobench generator properties (specs/ycsb.md §2) with YCSB's
//! defaults, read from a [`RawProperties`] bag. Only what the generator needs is interpreted here;
//! other properties (measurement, status, connection) stay in the raw bag for their owners.
//! Builds on `raw`, `settings`, `error` and `partition` of `ycsb/`; `interpret.rs` reads each
//! group of related properties, `read.rs` holds the typed accessors, `url.rs` the database a
//! `mongodb.url` names, `tests.rs` the unit tests.

mod interpret;
mod read;
mod url;

pub use super::error::PropertyError;
use super::partition::client_slice;
pub use super::raw::{CORE_WORKLOAD_CLASS, DEFAULT_MONGODB_URL, RawProperties};
pub use super::settings::{
    Compat, FieldLengthHistogram, FieldLengths, Proportions, RequestDistribution,
    ScanLengthDistribution, ZipfianMode,
};
pub use interpret::{MAX_RECORD_BYTES, max_record_bytes};
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

/// How many times the loaded keys the zipfian insert headroom may be (see
/// `Properties::check_zipfian_range`).
pub const MAX_HEADROOM_FACTOR: u64 = 1_000_000;

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
        let compat = interpret::compat(&r)?;
        let keys = interpret::key_range(&r)?;
        let proportions = interpret::proportions(&r)?;
        let (field_count, field_lengths) = interpret::fields(&r)?;
        let data_integrity = interpret::data_integrity(&r, &field_lengths)?;
        let read_all_fields_by_name =
            interpret::read_all_fields_by_name(&r, compat, &mut warnings)?;
        let request_distribution =
            interpret::request_distribution(&r, keys.insert_count, &mut warnings)?;
        let scan = interpret::scan_lengths(&r)?;
        let (batch_size, upsert) = interpret::batch_and_upsert(&r, compat)?;
        let database = database_for_url(raw.get("mongodb.url"), compat)?;
        let zero_padding = r.u32("zeropadding", 1)?;
        let field_name_prefix = r.string("fieldnameprefix", "field");
        interpret::check_record_size(
            field_count,
            &field_name_prefix,
            &field_lengths,
            zero_padding,
        )?;
        let thread_count = r.u32("threadcount", 1)?;
        if thread_count == 0 {
            return Err(r.invalid("threadcount", "0", "at least 1"));
        }
        let zipfian_mode = interpret::zipfian_mode(&r, &mut warnings)?;
        let seed = interpret::seed(&r)?;
        let (client_index, client_count) = interpret::client(&r)?;
        interpret::refuse_removed(&r)?;

        let props = Properties {
            workload: raw.preset_name().unwrap_or("custom").to_string(),
            compat,
            record_count: keys.record_count,
            operation_count: keys.operation_count,
            headroom_operation_count: keys.headroom_operation_count,
            insert_start: keys.insert_start,
            insert_count: keys.insert_count,
            insert_count_explicit: keys.insert_count_explicit,
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
            min_scan_length: scan.min,
            max_scan_length: scan.max,
            scan_length_distribution: scan.distribution,
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
        props.check_zipfian_range(interpret::headroom_property(&r))?;
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
