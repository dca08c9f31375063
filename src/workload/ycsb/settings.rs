//! Typed values of individual CoreWorkload and mongobench properties.

/// Which YCSB line a run is compatible with (`mongobench.compat`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compat {
    /// YCSB 0.17.0, the last release (default).
    V0_17_0,
    /// YCSB master (0.18.0-SNAPSHOT).
    Master,
}

/// `requestdistribution` with its parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RequestDistribution {
    /// Uniform over `[insertstart, insertstart + insertcount − 1]`.
    Uniform,
    /// Scrambled Zipfian with insert headroom (or an exact Zipfian, see [`ZipfianMode`]).
    Zipfian,
    /// Skewed towards the newest acknowledged key.
    Latest,
    /// A hot set of the lowest keys.
    Hotspot {
        /// `hotspotdatafraction` (out-of-range values already replaced by 0).
        data_fraction: f64,
        /// `hotspotopnfraction` (out-of-range values already replaced by 0).
        opn_fraction: f64,
    },
    /// A counter cycling through the key range.
    Sequential,
    /// Exponential distance back from the newest acknowledged key.
    Exponential {
        /// `exponential.percentile`.
        percentile: f64,
        /// `exponential.frac`.
        frac: f64,
    },
}

/// `fieldlengthdistribution` with its parameters.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldLengths {
    /// Every value `fieldlength` bytes.
    Constant(u64),
    /// Uniform in `[minfieldlength, fieldlength]`.
    Uniform {
        /// `minfieldlength`.
        min: u64,
        /// `fieldlength`.
        max: u64,
    },
    /// Zipfian (§4.4 sampler) over `[minfieldlength, fieldlength]`.
    Zipfian {
        /// `minfieldlength`.
        min: u64,
        /// `fieldlength`.
        max: u64,
    },
    /// From a histogram file.
    Histogram(FieldLengthHistogram),
}

impl FieldLengths {
    /// The longest value the distribution can produce.
    pub fn max(&self) -> u64 {
        match self {
            FieldLengths::Constant(n) => *n,
            FieldLengths::Uniform { max, .. } | FieldLengths::Zipfian { max, .. } => *max,
            FieldLengths::Histogram(h) => h
                .buckets
                .iter()
                .rposition(|&count| count > 0)
                .map_or(0, |bucket| (bucket as u64 + 1).saturating_mul(h.block_size)),
        }
    }
}

/// A `fieldlengthhistogram` file: first line `BlockSize<TAB>b`, then `bucket<TAB>count` lines;
/// length = (bucket + 1) · b with the bucket chosen in proportion to its count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldLengthHistogram {
    /// Bytes per bucket.
    pub block_size: u64,
    /// Count per bucket number (missing bucket numbers count 0).
    pub buckets: Vec<u64>,
}

impl FieldLengthHistogram {
    /// Parses the file text.
    ///
    /// # Errors
    /// A reason naming the line and the expected form.
    pub fn parse(text: &str) -> Result<FieldLengthHistogram, String> {
        let mut lines = text.lines().filter(|l| !l.trim().is_empty());
        let first = lines
            .next()
            .ok_or("empty file: expected \"BlockSize<TAB>b\" first")?;
        let block_size = match first.split('\t').collect::<Vec<_>>().as_slice() {
            ["BlockSize", b] => b.trim().parse::<u64>().ok(),
            _ => None,
        }
        .filter(|b| *b > 0)
        .ok_or_else(|| format!("first line {first:?}: expected \"BlockSize<TAB>b\" with b > 0"))?;
        let mut buckets = Vec::new();
        for line in lines {
            let parsed = match line.split('\t').collect::<Vec<_>>().as_slice() {
                [bucket, count] => bucket
                    .trim()
                    .parse::<usize>()
                    .ok()
                    .zip(count.trim().parse::<u64>().ok()),
                _ => None,
            };
            let (bucket, count) =
                parsed.ok_or_else(|| format!("line {line:?}: expected \"bucket<TAB>count\""))?;
            if bucket >= buckets.len() {
                buckets.resize(bucket + 1, 0);
            }
            buckets[bucket] = count;
        }
        if buckets.iter().sum::<u64>() == 0 {
            return Err("no bucket has a positive count".into());
        }
        Ok(FieldLengthHistogram {
            block_size,
            buckets,
        })
    }
}

/// `scanlengthdistribution`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanLengthDistribution {
    /// Uniform in `[minscanlength, maxscanlength]`.
    Uniform,
    /// Zipfian (§4.4 sampler) over that range: short scans favoured.
    Zipfian,
}

/// `mongobench.zipfian.mode` (§10).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ZipfianMode {
    /// YCSB's scrambled Zipfian (default).
    Ycsb,
    /// True Zipfian over the key range with exponent `theta`, ranks permuted.
    Exact {
        /// `mongobench.zipfian.theta`.
        theta: f64,
    },
}

/// The five operation weights as given (≤ 0 means "not in the mix").
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Proportions {
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

impl Proportions {
    /// Positive weights normalised by their sum, in the order read, update, insert, scan, RMW
    /// (dropped ones are 0).
    pub fn normalised(&self) -> [f64; 5] {
        let raw = [
            self.read,
            self.update,
            self.insert,
            self.scan,
            self.read_modify_write,
        ];
        let sum: f64 = raw.iter().filter(|w| **w > 0.0).sum();
        raw.map(|w| if w > 0.0 { w / sum } else { 0.0 })
    }
}
