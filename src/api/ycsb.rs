//! `spec.workload.ycsb`: a YCSB core workload (A to F) and overrides of its CoreWorkload
//! properties (ycsb.md §2), named as YCSB's in camelCase.

use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// CEL: the effective value of a YCSB proportion, from the override or the workload file.
macro_rules! ycsb_proportion {
    ($field:literal, $a:literal, $b:literal, $c:literal, $d:literal, $e:literal, $f:literal) => {
        concat!(
            "(has(self.",
            $field,
            ") ? self.",
            $field,
            " : {'a': ",
            $a,
            ", 'b': ",
            $b,
            ", 'c': ",
            $c,
            ", 'd': ",
            $d,
            ", 'e': ",
            $e,
            ", 'f': ",
            $f,
            "}[self.workload])"
        )
    };
}

/// A YCSB core workload (A to F) and optional overrides of its CoreWorkload properties (named
/// as YCSB's, in camelCase). The record count comes from `dataset.sizes` and the operation
/// count from `workload.operations`.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new(concat!(
    ycsb_proportion!("readProportion", "0.5", "0.95", "1.0", "0.95", "0.0", "0.5"), " + ",
    ycsb_proportion!("updateProportion", "0.5", "0.05", "0.0", "0.0", "0.0", "0.0"), " + ",
    ycsb_proportion!("insertProportion", "0.0", "0.0", "0.0", "0.05", "0.05", "0.0"), " + ",
    ycsb_proportion!("scanProportion", "0.0", "0.0", "0.0", "0.0", "0.95", "0.0"), " + ",
    ycsb_proportion!("readModifyWriteProportion", "0.0", "0.0", "0.0", "0.0", "0.0", "0.5"),
    " > 0.0"))
    .message("spec.workload.ycsb: the read, update, insert, scan and readModifyWrite proportions must not all be 0"))]
#[x_kube(validation = Rule::new(
    "(has(self.minScanLength) ? self.minScanLength : 1) <= (has(self.maxScanLength) ? self.maxScanLength : (self.workload == 'e' ? 100 : 1000))")
    .message("spec.workload.ycsb.minScanLength must not exceed maxScanLength")
    .field_path(".minScanLength"))]
#[x_kube(validation = Rule::new(
    "(has(self.minFieldLength) ? self.minFieldLength : 1) <= (has(self.fieldLength) ? self.fieldLength : 100)")
    .message("spec.workload.ycsb.minFieldLength must not exceed fieldLength")
    .field_path(".minFieldLength"))]
#[x_kube(validation = Rule::new(
    "(has(self.fieldCount) ? self.fieldCount : 10) * ((has(self.fieldLength) ? self.fieldLength : 100) + (has(self.fieldNamePrefix) ? size(self.fieldNamePrefix) : 5) + 10) + 64 <= 16777216")
    .message("spec.workload.ycsb.fieldLength × fieldCount make records above MongoDB's 16 MiB document limit")
    .field_path(".fieldLength"))]
#[x_kube(validation = Rule::new(
    "!has(self.dataIntegrity) || !self.dataIntegrity || !has(self.fieldLengthDistribution) || self.fieldLengthDistribution == 'constant'")
    .message("spec.workload.ycsb.dataIntegrity requires fieldLengthDistribution constant")
    .field_path(".dataIntegrity"))]
pub struct Ycsb {
    /// The core workload: `a` (update heavy), `b` (read mostly), `c` (read only), `d` (read
    /// latest), `e` (short ranges) or `f` (read-modify-write).
    pub workload: YcsbWorkload,

    /// `readproportion` override, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub read_proportion: Option<f64>,
    /// `updateproportion` override, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub update_proportion: Option<f64>,
    /// `insertproportion` override, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub insert_proportion: Option<f64>,
    /// `scanproportion` override, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub scan_proportion: Option<f64>,
    /// `readmodifywriteproportion` override, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub read_modify_write_proportion: Option<f64>,

    /// `requestdistribution` override (the workload's own: `zipfian`, `latest` for D).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_distribution: Option<RequestDistribution>,
    /// `hotspotdatafraction`, 0 to 1 (default 0.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub hotspot_data_fraction: Option<f64>,
    /// `hotspotopnfraction`, 0 to 1 (default 0.8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub hotspot_opn_fraction: Option<f64>,
    /// `exponential.percentile`, 0 to 100 (default 95).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 100.0))]
    pub exponential_percentile: Option<f64>,
    /// `exponential.frac`, 0 to 1 (default 0.8571428571).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub exponential_frac: Option<f64>,

    /// `fieldcount`: fields per record (1 to 1000, default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1000))]
    pub field_count: Option<u32>,
    /// `fieldlength`: bytes per field, the maximum for non-constant distributions (1 to
    /// 1048576, default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1048576))]
    pub field_length: Option<u32>,
    /// `minfieldlength` (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1048576))]
    pub min_field_length: Option<u32>,
    /// `fieldlengthdistribution`: `constant` (default), `uniform` or `zipfian`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_length_distribution: Option<FieldLengthDistribution>,
    /// `fieldnameprefix` (default `field`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub field_name_prefix: Option<String>,
    /// `table`: the collection name (default `usertable`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 120))]
    pub table: Option<String>,
    /// `readallfields` (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_all_fields: Option<bool>,
    /// `writeallfields` (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_all_fields: Option<bool>,
    /// `dataintegrity`: verify read values (default false; needs constant field length).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_integrity: Option<bool>,
    /// `insertorder`: `hashed` (default) or `ordered`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insert_order: Option<InsertOrder>,
    /// `zeropadding`: digit width of key numbers (1 to 32, default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 32))]
    pub zero_padding: Option<u32>,

    /// `minscanlength` (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1000000))]
    pub min_scan_length: Option<u32>,
    /// `maxscanlength` (default 1000; 100 in workload E).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1000000))]
    pub max_scan_length: Option<u32>,
    /// `scanlengthdistribution`: `uniform` (default) or `zipfian`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scan_length_distribution: Option<ScanLengthDistribution>,
}

/// Operation proportions of a YCSB workload, before YCSB's normalisation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct YcsbProportions {
    /// `readproportion`.
    pub read: f64,
    /// `updateproportion`.
    pub update: f64,
    /// `insertproportion`.
    pub insert: f64,
    /// `scanproportion`.
    pub scan: f64,
    /// `readmodifywriteproportion`.
    pub read_modify_write: f64,
}

impl YcsbProportions {
    /// Sum of the positive proportions (YCSB drops the others and divides by this).
    pub fn positive_total(&self) -> f64 {
        [
            self.read,
            self.update,
            self.insert,
            self.scan,
            self.read_modify_write,
        ]
        .iter()
        .filter(|p| **p > 0.0)
        .sum()
    }
}

impl Ycsb {
    /// Effective proportions: each override, else the value of the workload file.
    pub fn proportions(&self) -> YcsbProportions {
        let file = self.workload.file_proportions();
        YcsbProportions {
            read: self.read_proportion.unwrap_or(file.read),
            update: self.update_proportion.unwrap_or(file.update),
            insert: self.insert_proportion.unwrap_or(file.insert),
            scan: self.scan_proportion.unwrap_or(file.scan),
            read_modify_write: self
                .read_modify_write_proportion
                .unwrap_or(file.read_modify_write),
        }
    }

    /// Effective `minscanlength` (default 1).
    pub fn min_scan_length(&self) -> u32 {
        self.min_scan_length.unwrap_or(1)
    }

    /// Effective `maxscanlength` (workload E: 100, otherwise 1000).
    pub fn max_scan_length(&self) -> u32 {
        self.max_scan_length
            .unwrap_or(if self.workload == YcsbWorkload::E {
                100
            } else {
                1000
            })
    }

    /// Effective `fieldlength` (default 100).
    pub fn field_length(&self) -> u32 {
        self.field_length.unwrap_or(100)
    }

    /// Effective `minfieldlength` (default 1).
    pub fn min_field_length(&self) -> u32 {
        self.min_field_length.unwrap_or(1)
    }

    /// Effective `fieldlengthdistribution` (default `constant`).
    pub fn field_length_distribution(&self) -> FieldLengthDistribution {
        self.field_length_distribution.unwrap_or_default()
    }

    /// An upper bound of a record's BSON size (the CEL rule's formula): per field its bytes, the
    /// name (prefix and up to 3 digits) and 7 bytes of framing; 64 bytes for the document
    /// framing and an `_id` of up to 36 characters.
    pub fn max_record_bytes(&self) -> u64 {
        let prefix = self.field_name_prefix.as_deref().map_or(5, str::len) as u64;
        u64::from(self.field_count.unwrap_or(10)) * (u64::from(self.field_length()) + prefix + 10)
            + 64
    }

    /// Effective `requestdistribution`: the override, else the workload file's.
    pub fn request_distribution(&self) -> RequestDistribution {
        self.request_distribution.unwrap_or(match self.workload {
            YcsbWorkload::D => RequestDistribution::Latest,
            _ => RequestDistribution::Zipfian,
        })
    }
}

/// A YCSB core workload.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[schemars(transform = crate::api::drop_description)]
#[serde(rename_all = "lowercase")]
pub enum YcsbWorkload {
    /// Update heavy: 50 % reads, 50 % updates, zipfian.
    A,
    /// Read mostly: 95 % reads, 5 % updates, zipfian.
    B,
    /// Read only, zipfian.
    C,
    /// Read latest: 95 % reads, 5 % inserts, latest.
    D,
    /// Short ranges: 95 % scans, 5 % inserts, zipfian.
    E,
    /// Read-modify-write: 50 % reads, 50 % read-modify-writes, zipfian.
    F,
}

impl YcsbWorkload {
    /// The proportions the official workload file sets.
    pub fn file_proportions(self) -> YcsbProportions {
        let (read, update, insert, scan, read_modify_write) = match self {
            YcsbWorkload::A => (0.5, 0.5, 0.0, 0.0, 0.0),
            YcsbWorkload::B => (0.95, 0.05, 0.0, 0.0, 0.0),
            YcsbWorkload::C => (1.0, 0.0, 0.0, 0.0, 0.0),
            YcsbWorkload::D => (0.95, 0.0, 0.05, 0.0, 0.0),
            YcsbWorkload::E => (0.0, 0.0, 0.05, 0.95, 0.0),
            YcsbWorkload::F => (0.5, 0.0, 0.0, 0.0, 0.5),
        };
        YcsbProportions {
            read,
            update,
            insert,
            scan,
            read_modify_write,
        }
    }
}

/// YCSB `requestdistribution`.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[schemars(transform = crate::api::drop_description)]
#[serde(rename_all = "lowercase")]
pub enum RequestDistribution {
    /// Every key equally likely.
    Uniform,
    /// Scrambled Zipfian, θ = 0.99.
    Zipfian,
    /// Zipfian over the most recently inserted keys.
    Latest,
    /// `hotspotopnfraction` of operations on `hotspotdatafraction` of keys.
    Hotspot,
    /// Keys in order.
    Sequential,
    /// Exponential over the key space.
    Exponential,
}

/// YCSB `fieldlengthdistribution`.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[schemars(transform = crate::api::drop_description)]
#[serde(rename_all = "lowercase")]
pub enum FieldLengthDistribution {
    /// Every field `fieldlength` bytes.
    #[default]
    Constant,
    /// Uniform between `minfieldlength` and `fieldlength`.
    Uniform,
    /// Zipfian between `minfieldlength` and `fieldlength`.
    Zipfian,
}

/// YCSB `scanlengthdistribution`.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[schemars(transform = crate::api::drop_description)]
#[serde(rename_all = "lowercase")]
pub enum ScanLengthDistribution {
    /// Uniform between `minscanlength` and `maxscanlength`.
    Uniform,
    /// Zipfian between `minscanlength` and `maxscanlength`.
    Zipfian,
}

/// YCSB `insertorder`.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[schemars(transform = crate::api::drop_description)]
#[serde(rename_all = "lowercase")]
pub enum InsertOrder {
    /// Keys hashed (scattered).
    Hashed,
    /// Keys in insertion order.
    Ordered,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ycsb_effective_properties_come_from_the_workload_file() {
        let y = |yaml: &str| -> Ycsb { serde_yaml::from_str(yaml).unwrap() };
        let a = y("workload: a");
        assert_eq!(
            a.proportions(),
            YcsbProportions {
                read: 0.5,
                update: 0.5,
                insert: 0.0,
                scan: 0.0,
                read_modify_write: 0.0
            }
        );
        assert_eq!(a.request_distribution(), RequestDistribution::Zipfian);
        assert_eq!(a.max_scan_length(), 1000);
        assert_eq!(
            y("workload: d").request_distribution(),
            RequestDistribution::Latest
        );
        assert_eq!(y("workload: e").max_scan_length(), 100);
        assert_eq!(y("workload: e").proportions().scan, 0.95);
        assert_eq!(y("workload: f").proportions().read_modify_write, 0.5);
        let c = y("{workload: c, readProportion: 0, updateProportion: 0.25}");
        assert_eq!(c.proportions().positive_total(), 0.25);
        assert_eq!(
            y("{workload: b, requestDistribution: uniform}").request_distribution(),
            RequestDistribution::Uniform
        );
        assert_eq!(
            y("workload: a").field_length_distribution(),
            FieldLengthDistribution::Constant
        );
        assert_eq!(
            (a.min_field_length(), a.field_length(), a.min_scan_length()),
            (1, 100, 1)
        );
    }
}
