//! Parsing of the human-friendly units a `MongoBenchmark` spec uses: dataset sizes (`500k`, `1M`,
//! `4GiB`), durations (`90s`, `10m`, `1h30m`, `250ms`) and Kubernetes memory quantities (`8Gi`).
//!
//! The grammars are deliberately small and bounded so that the CRD can enforce the same syntax
//! with a `pattern` and compute the same values in CEL without 64-bit overflow; the `pattern`
//! constants below are the single source for both.

use std::fmt;
use std::time::Duration;

/// `pattern` of a dataset size that is a document count: 1 to 9 digits without a leading zero,
/// optionally followed by `k` (×1,000), `M` (×1,000,000) or `G` (×1,000,000,000).
pub const DOCUMENT_COUNT_PATTERN: &str = "^[1-9][0-9]{0,8}[kMG]?$";
/// `pattern` of a dataset size that is a data size: 1 to 6 digits without a leading zero followed
/// by `KiB`, `MiB`, `GiB` or `TiB` (powers of 1024).
pub const DATA_SIZE_PATTERN: &str = "^[1-9][0-9]{0,5}(KiB|MiB|GiB|TiB)$";
/// `pattern` of a dataset size of either kind.
pub const DATASET_SIZE_PATTERN: &str = "^([1-9][0-9]{0,8}[kMG]?|[1-9][0-9]{0,5}(KiB|MiB|GiB|TiB))$";
/// `pattern` of a duration: `0`, or 1 to 4 components in the order hours, minutes, seconds,
/// milliseconds, each 1 to 6 digits followed by `h`, `m`, `s` or `ms` (`90s`, `1h30m`, `250ms`).
pub const DURATION_PATTERN: &str =
    "^(0|([0-9]{1,6}h)?([0-9]{1,6}m)?([0-9]{1,6}s)?([0-9]{1,6}ms)?)$";

/// The expected form of a dataset size, quoted in every error about one.
pub const DATASET_SIZE_FORM: &str = "a document count such as 250000, 500k, 1M or 2G \
     (1 to 9 digits, optional suffix k, M or G) or a data size such as 512MiB or 4GiB \
     (1 to 6 digits followed by KiB, MiB, GiB or TiB)";
/// The expected form of a duration, quoted in every error about one.
pub const DURATION_FORM: &str = "a duration such as 90s, 10m, 1h30m or 250ms \
     (components h, m, s, ms in that order, each 1 to 6 digits) or 0";

/// Errors from parsing a unit string. Each names the offending value and the expected form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitsError {
    /// The value is not a dataset size.
    #[error("invalid dataset size {value:?}: expected {DATASET_SIZE_FORM}")]
    DatasetSize {
        /// The rejected text.
        value: String,
    },
    /// The value is not a duration.
    #[error("invalid duration {value:?}: expected {DURATION_FORM}")]
    Duration {
        /// The rejected text.
        value: String,
    },
    /// The value is not a non-negative Kubernetes quantity.
    #[error(
        "invalid quantity {value:?}: expected a non-negative Kubernetes quantity such as 512Mi, \
         8Gi, 1.5Gi, 1G or 1e9"
    )]
    Quantity {
        /// The rejected text.
        value: String,
    },
    /// A latency goal that bounds no percentile, or several.
    #[error("spec.workload.sweep.latency: set exactly one of p50, p95, p99, p999")]
    LatencyGoal,
}

/// A parsed dataset size: how big the seeded collection must be before a cell is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DatasetSize {
    /// A number of documents (YCSB records).
    Documents(u64),
    /// Uncompressed data in bytes; the generator turns it into a document count.
    Bytes(u64),
}

impl DatasetSize {
    /// The number inside, documents or bytes.
    pub fn value(self) -> u64 {
        match self {
            DatasetSize::Documents(n) | DatasetSize::Bytes(n) => n,
        }
    }

    /// True for the same kind of size (both counts or both byte sizes), which is what makes two
    /// sizes comparable.
    pub fn same_kind(self, other: DatasetSize) -> bool {
        matches!(
            (self, other),
            (DatasetSize::Documents(_), DatasetSize::Documents(_))
                | (DatasetSize::Bytes(_), DatasetSize::Bytes(_))
        )
    }
}

impl fmt::Display for DatasetSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DatasetSize::Documents(n) => write!(f, "{n} documents"),
            DatasetSize::Bytes(n) => write!(f, "{n} bytes"),
        }
    }
}

/// Splits `s` into its leading ASCII digits and the rest.
fn split_digits(s: &str) -> (&str, &str) {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    s.split_at(end)
}

/// Parses a dataset size (see [`DATASET_SIZE_PATTERN`]): `250000`, `500k`, `1M`, `8M`, `2G`
/// are document counts; `512MiB`, `4GiB` are byte sizes.
///
/// # Errors
/// [`UnitsError::DatasetSize`] when `s` does not match the grammar (zero, leading zeros,
/// decimals, unknown suffix, too many digits).
pub fn parse_dataset_size(s: &str) -> Result<DatasetSize, UnitsError> {
    let err = || UnitsError::DatasetSize {
        value: s.to_string(),
    };
    let (digits, suffix) = split_digits(s);
    if digits.is_empty() || digits.starts_with('0') {
        return Err(err());
    }
    let (max_digits, size): (usize, fn(u64) -> DatasetSize) = match suffix {
        "" | "k" | "M" | "G" => (9, DatasetSize::Documents),
        "KiB" | "MiB" | "GiB" | "TiB" => (6, DatasetSize::Bytes),
        _ => return Err(err()),
    };
    if digits.len() > max_digits {
        return Err(err());
    }
    let multiplier: u64 = match suffix {
        "" => 1,
        "k" => 1_000,
        "M" => 1_000_000,
        "G" => 1_000_000_000,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        _ => 1 << 40, // "TiB", the only suffix left
    };
    // At most 9 digits times 10^9, or 6 digits times 2^40: both fit in u64 (and i64).
    let n: u64 = digits.parse().map_err(|_| err())?;
    Ok(size(n * multiplier))
}

/// Parses a duration (see [`DURATION_PATTERN`]): `0`, `90s`, `10m`, `1h30m`, `250ms`,
/// `1h0m30s`.
///
/// # Errors
/// [`UnitsError::Duration`] when `s` is empty, has an unknown or repeated unit, has units out of
/// order (`30s1m`), a component of more than 6 digits, a sign or a fraction.
pub fn parse_duration(s: &str) -> Result<Duration, UnitsError> {
    let err = || UnitsError::Duration {
        value: s.to_string(),
    };
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    if s.is_empty() {
        return Err(err());
    }
    // Units in the only allowed order, with their length in milliseconds.
    const UNITS: [(&str, u64); 4] = [("h", 3_600_000), ("m", 60_000), ("s", 1_000), ("ms", 1)];
    let mut rest = s;
    let mut next_unit = 0;
    let mut total_ms: u64 = 0;
    while !rest.is_empty() {
        let (digits, after) = split_digits(rest);
        if digits.is_empty() || digits.len() > 6 {
            return Err(err());
        }
        let unit_len = after
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(after.len());
        let unit = &after[..unit_len];
        let position = UNITS[next_unit..]
            .iter()
            .position(|(u, _)| *u == unit)
            .ok_or_else(err)?;
        let (_, ms) = UNITS[next_unit + position];
        next_unit += position + 1;
        let n: u64 = digits.parse().map_err(|_| err())?;
        total_ms += n * ms;
        rest = &after[unit_len..];
    }
    Ok(Duration::from_millis(total_ms))
}

/// Parses a Kubernetes quantity (as in `resources.limits.memory`) into bytes, rounding a
/// fractional byte up as Kubernetes does: `8Gi` → 8589934592, `1.5Gi` → 1610612736,
/// `1G` → 1000000000, `1e3` → 1000, `500m` → 1.
///
/// # Errors
/// [`UnitsError::Quantity`] when `s` is not a non-negative quantity, or exceeds u64 bytes.
pub fn parse_quantity_bytes(s: &str) -> Result<u64, UnitsError> {
    parse_quantity_scaled(s, 1)
}

/// Parses a Kubernetes quantity into thousandths, rounding up as Kubernetes does: the
/// millicores of a CPU quantity (`3` → 3000, `500m` → 500, `1.5` → 1500, `0.1m` → 1).
///
/// # Errors
/// [`UnitsError::Quantity`] when `s` is not a non-negative quantity, or exceeds u64.
pub fn parse_quantity_millis(s: &str) -> Result<u64, UnitsError> {
    parse_quantity_scaled(s, 1000)
}

/// The value of quantity `s` times `scale`, rounded up.
fn parse_quantity_scaled(s: &str, scale: u128) -> Result<u64, UnitsError> {
    let err = || UnitsError::Quantity {
        value: s.to_string(),
    };
    let body = s.strip_prefix('+').unwrap_or(s);
    let (int_part, rest) = split_digits(body);
    let (frac_part, suffix) = match rest.strip_prefix('.') {
        Some(after_dot) => split_digits(after_dot),
        None => ("", rest),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return Err(err());
    }
    // value = mantissa / 10^frac_len * base^exp, computed exactly in u128.
    let mantissa: u128 = format!("{int_part}{frac_part}")
        .parse()
        .map_err(|_| err())?;
    let mut denominator: u128 = 10u128
        .checked_pow(u32::try_from(frac_part.len()).map_err(|_| err())?)
        .ok_or_else(err)?;
    let mut multiplier: u128 = 1;
    match suffix {
        "" => {}
        "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" => {
            let power = ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
                .iter()
                .position(|p| *p == suffix)
                .expect("suffix is in the list") as u32;
            multiplier = 1u128 << (10 * (power + 1));
        }
        "m" => denominator = denominator.checked_mul(1000).ok_or_else(err)?,
        "k" => multiplier = 1_000,
        "M" => multiplier = 1_000_000,
        "G" => multiplier = 1_000_000_000,
        "T" => multiplier = 1_000_000_000_000,
        "P" => multiplier = 1_000_000_000_000_000,
        "E" => multiplier = 1_000_000_000_000_000_000,
        _ => {
            let exponent = suffix
                .strip_prefix('e')
                .or_else(|| suffix.strip_prefix('E'))
                .ok_or_else(err)?;
            let exponent: i32 = exponent.parse().map_err(|_| err())?;
            if exponent.unsigned_abs() > 30 {
                return Err(err());
            }
            if exponent >= 0 {
                multiplier = 10u128.pow(exponent as u32);
            } else {
                denominator = denominator
                    .checked_mul(10u128.pow(exponent.unsigned_abs()))
                    .ok_or_else(err)?;
            }
        }
    }
    let numerator = mantissa
        .checked_mul(multiplier)
        .and_then(|n| n.checked_mul(scale))
        .ok_or_else(err)?;
    let bytes = numerator.div_ceil(denominator);
    u64::try_from(bytes).map_err(|_| err())
}

/// Formats a duration in the grammar [`parse_duration`] reads, largest units first:
/// 5400 s → `1h30m`, 250 ms → `250ms`, zero → `0`. A component holds at most 6 digits, so
/// what does not fit in the hours moves to the minutes (`999999h60m`), and every duration
/// `parse_duration` returns formats back to itself.
pub fn format_duration(d: Duration) -> String {
    let mut ms = d.as_millis();
    if ms == 0 {
        return "0".to_string();
    }
    let mut out = String::new();
    for (unit, len) in [("h", 3_600_000u128), ("m", 60_000), ("s", 1_000), ("ms", 1)] {
        let n = if unit == "ms" {
            ms
        } else {
            (ms / len).min(999_999)
        };
        if n > 0 {
            out.push_str(&format!("{n}{unit}"));
            ms -= n * len;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn document_counts_parse_with_decimal_suffixes() {
        assert_eq!(
            parse_dataset_size("250000"),
            Ok(DatasetSize::Documents(250_000))
        );
        assert_eq!(
            parse_dataset_size("500k"),
            Ok(DatasetSize::Documents(500_000))
        );
        assert_eq!(
            parse_dataset_size("1M"),
            Ok(DatasetSize::Documents(1_000_000))
        );
        assert_eq!(
            parse_dataset_size("8M"),
            Ok(DatasetSize::Documents(8_000_000))
        );
        assert_eq!(
            parse_dataset_size("10k"),
            Ok(DatasetSize::Documents(10_000))
        );
        assert_eq!(
            parse_dataset_size("2G"),
            Ok(DatasetSize::Documents(2_000_000_000))
        );
        assert_eq!(
            parse_dataset_size("999999999G"),
            Ok(DatasetSize::Documents(999_999_999_000_000_000))
        );
    }

    #[test]
    fn data_sizes_parse_with_binary_suffixes() {
        assert_eq!(
            parse_dataset_size("4GiB"),
            Ok(DatasetSize::Bytes(4_294_967_296))
        );
        assert_eq!(
            parse_dataset_size("512MiB"),
            Ok(DatasetSize::Bytes(536_870_912))
        );
        assert_eq!(parse_dataset_size("1KiB"), Ok(DatasetSize::Bytes(1024)));
        assert_eq!(
            parse_dataset_size("3TiB"),
            Ok(DatasetSize::Bytes(3_298_534_883_328))
        );
        // 999999 × 2^40 = 1099510528264372224, still below i64::MAX (CEL computes it too).
        assert_eq!(
            parse_dataset_size("999999TiB"),
            Ok(DatasetSize::Bytes(1_099_510_528_264_372_224))
        );
    }

    #[test]
    fn malformed_dataset_sizes_are_refused_with_value_and_form() {
        for bad in [
            "",
            "0",
            "0k",
            "01M",
            "1.5M",
            "1m",
            "1K",
            "1Mi",
            "4GB",
            "4gib",
            "k",
            "-1",
            "1 M",
            "1000000000",
            "1234567KiB",
            "1M ",
        ] {
            let e = parse_dataset_size(bad).unwrap_err();
            assert_eq!(e, UnitsError::DatasetSize { value: bad.into() }, "{bad:?}");
        }
        let msg = parse_dataset_size("1.5M").unwrap_err().to_string();
        assert!(msg.starts_with("invalid dataset size \"1.5M\": expected a document count"));
        assert!(msg.contains("4GiB"), "{msg}");
    }

    #[test]
    fn dataset_size_kinds() {
        let docs = DatasetSize::Documents(1);
        let bytes = DatasetSize::Bytes(1);
        assert!(docs.same_kind(DatasetSize::Documents(7)));
        assert!(!docs.same_kind(bytes));
        assert_eq!(bytes.value(), 1);
        assert_eq!(
            DatasetSize::Documents(500_000).to_string(),
            "500000 documents"
        );
    }

    #[test]
    fn durations_parse_to_exact_milliseconds() {
        assert_eq!(parse_duration("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("20s"), Ok(Duration::from_secs(20)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("1m1s1ms"), Ok(Duration::from_millis(61_001)));
        assert_eq!(parse_duration("1h0m30s"), Ok(Duration::from_secs(3630)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert_eq!(parse_duration("0s"), Ok(Duration::ZERO));
        assert_eq!(
            parse_duration("999999h"),
            Ok(Duration::from_secs(999_999 * 3600))
        );
    }

    #[test]
    fn malformed_durations_are_refused_with_value_and_form() {
        for bad in [
            "", "10", "1.5h", "-1m", "10 m", "1d", "30s1m", "1m1m", "1s1h", "ms", "h", "1234567s",
            "10M", "1us", "5sm",
        ] {
            let e = parse_duration(bad).unwrap_err();
            assert_eq!(e, UnitsError::Duration { value: bad.into() }, "{bad:?}");
        }
        assert_eq!(
            parse_duration("10 minutes").unwrap_err().to_string(),
            format!("invalid duration \"10 minutes\": expected {DURATION_FORM}")
        );
    }

    #[test]
    fn quantities_parse_to_bytes() {
        assert_eq!(parse_quantity_bytes("8Gi"), Ok(8_589_934_592));
        assert_eq!(parse_quantity_bytes("1.5Gi"), Ok(1_610_612_736));
        assert_eq!(parse_quantity_bytes("512Mi"), Ok(536_870_912));
        assert_eq!(parse_quantity_bytes("1G"), Ok(1_000_000_000));
        assert_eq!(parse_quantity_bytes("16000M"), Ok(16_000_000_000));
        assert_eq!(parse_quantity_bytes("1e3"), Ok(1_000));
        assert_eq!(parse_quantity_bytes("1E3"), Ok(1_000));
        assert_eq!(parse_quantity_bytes("129e6"), Ok(129_000_000));
        assert_eq!(parse_quantity_bytes("2048"), Ok(2_048));
        assert_eq!(parse_quantity_bytes("+1Ki"), Ok(1_024));
        assert_eq!(parse_quantity_bytes(".5Ki"), Ok(512));
        // Fractions of a byte round up: 500m = 0.5 → 1; 0.1Ki = 102.4 → 103.
        assert_eq!(parse_quantity_bytes("500m"), Ok(1));
        assert_eq!(parse_quantity_bytes("0.1Ki"), Ok(103));
        assert_eq!(parse_quantity_bytes("0"), Ok(0));
        assert_eq!(parse_quantity_millis("3"), Ok(3_000));
        assert_eq!(parse_quantity_millis("500m"), Ok(500));
        assert_eq!(parse_quantity_millis("1.5"), Ok(1_500));
        assert_eq!(parse_quantity_millis("0.1m"), Ok(1));
        assert_eq!(parse_quantity_millis("2k"), Ok(2_000_000));
    }

    #[test]
    fn a_quantity_with_38_decimals_and_a_milli_suffix_is_refused_not_overflowed() {
        // Found by fuzzing: 10^38 (the decimals) times 1000 (`m`) overflowed u128.
        let text = ".50200000000000145542104905810581640142m";
        assert_eq!(
            parse_quantity_millis(text),
            Err(UnitsError::Quantity { value: text.into() })
        );
        // With 35 decimals 10^38 fits: 0.502… thousandths of a unit, rounded up to 1.
        assert_eq!(
            parse_quantity_millis(".50200000000000145542104905810581640m"),
            Ok(1)
        );
    }

    #[test]
    fn malformed_quantities_are_refused() {
        for bad in [
            "", "Gi", "-1Gi", "1GiB", "1gi", "1.2.3", "abc", "1e", "100Ei", "1e99",
        ] {
            assert_eq!(
                parse_quantity_bytes(bad),
                Err(UnitsError::Quantity { value: bad.into() }),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn durations_format_back_to_the_grammar() {
        assert_eq!(format_duration(Duration::from_secs(5400)), "1h30m");
        assert_eq!(format_duration(Duration::from_millis(250)), "250ms");
        assert_eq!(
            format_duration(Duration::from_millis(3_661_001)),
            "1h1m1s1ms"
        );
        assert_eq!(format_duration(Duration::ZERO), "0");
        // Found by fuzzing: 999500h300500m is 1004508h20m, and 7 digits of hours do not parse.
        let long = parse_duration("999500h300500m").unwrap();
        assert_eq!(format_duration(long), "999999h270560m");
        assert_eq!(parse_duration(&format_duration(long)), Ok(long));
        let longest = parse_duration("999999h999999m999999s999999ms").unwrap();
        assert_eq!(parse_duration(&format_duration(longest)), Ok(longest));
        assert_eq!(
            parse_duration(&format_duration(Duration::from_secs(600))),
            Ok(Duration::from_secs(600))
        );
    }
}
