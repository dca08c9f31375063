//! [`Reader`]: typed access to a raw property bag, with YCSB's defaults for absent properties and
//! errors that name the property. Stricter than YCSB where YCSB silently misreads (booleans).

use crate::workload::ycsb::error::PropertyError;
use crate::workload::ycsb::raw::RawProperties;

/// Typed access to a raw bag, with errors naming the property.
pub(super) struct Reader<'a> {
    pub(super) raw: &'a RawProperties,
}

impl Reader<'_> {
    pub(super) fn invalid(&self, property: &str, value: &str, expected: &str) -> PropertyError {
        PropertyError::Invalid {
            property: property.to_string(),
            value: value.to_string(),
            expected: expected.to_string(),
        }
    }

    pub(super) fn string(&self, key: &str, default: &str) -> String {
        self.raw.get(key).unwrap_or(default).to_string()
    }

    pub(super) fn u64(&self, key: &str, default: u64) -> Result<u64, PropertyError> {
        match self.raw.get(key) {
            None => Ok(default),
            Some(v) => v
                .trim()
                .parse()
                .map_err(|_| self.invalid(key, v, "a non-negative integer")),
        }
    }

    pub(super) fn u32(&self, key: &str, default: u32) -> Result<u32, PropertyError> {
        match self.raw.get(key) {
            None => Ok(default),
            Some(v) => v
                .trim()
                .parse()
                .map_err(|_| self.invalid(key, v, "a non-negative integer below 2^32")),
        }
    }

    pub(super) fn f64(&self, key: &str, default: f64) -> Result<f64, PropertyError> {
        match self.raw.get(key) {
            None => Ok(default),
            Some(v) => v
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|f| f.is_finite())
                .ok_or_else(|| self.invalid(key, v, "a finite decimal number")),
        }
    }

    /// `true`/`false` (any case). YCSB reads every other word as false; mongobench refuses it.
    pub(super) fn bool(&self, key: &str, default: bool) -> Result<bool, PropertyError> {
        match self.raw.get(key) {
            None => Ok(default),
            Some(v) if v.trim().eq_ignore_ascii_case("true") => Ok(true),
            Some(v) if v.trim().eq_ignore_ascii_case("false") => Ok(false),
            Some(v) => Err(self.invalid(key, v, "true or false")),
        }
    }
}
