//! The raw, layered property bag (specs/ycsb.md §2): preset or `-P` files in order (later files
//! override earlier ones), then `-p` overrides, which win regardless of their position.

use std::collections::BTreeMap;

use super::error::PropertyError;
use super::java_properties;

/// The preset workload files (our copies of YCSB's `workloads/workload[a-f]`).
const PRESETS: [(&str, &str); 6] = [
    ("workloada", include_str!("workloads/workloada")),
    ("workloadb", include_str!("workloads/workloadb")),
    ("workloadc", include_str!("workloads/workloadc")),
    ("workloadd", include_str!("workloads/workloadd")),
    ("workloade", include_str!("workloads/workloade")),
    ("workloadf", include_str!("workloads/workloadf")),
];

/// The class name CoreWorkload files set in `workload`.
pub const CORE_WORKLOAD_CLASS: &str = "site.ycsb.workloads.CoreWorkload";

/// Default `mongodb.url` (§6); a defaulted URL always means database `ycsb`.
pub const DEFAULT_MONGODB_URL: &str = "mongodb://localhost:27017/ycsb?w=1";

/// A layered property bag: later files override earlier ones, overrides win over every file.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RawProperties {
    values: BTreeMap<String, String>,
    name: Option<String>,
}

impl RawProperties {
    /// An empty bag.
    pub fn new() -> RawProperties {
        RawProperties::default()
    }

    /// The bag of a preset workload file: `a`..`f` or `workloada`..`workloadf`.
    ///
    /// # Errors
    /// [`PropertyError::UnknownPreset`] for any other name.
    pub fn preset(name: &str) -> Result<RawProperties, PropertyError> {
        let lower = name.to_ascii_lowercase();
        let full = if lower.len() == 1 {
            format!("workload{lower}")
        } else {
            lower
        };
        let (file, text) = PRESETS.iter().find(|(n, _)| *n == full).ok_or_else(|| {
            PropertyError::UnknownPreset {
                name: name.to_string(),
            }
        })?;
        let mut raw = RawProperties::new();
        raw.load_str(file, text)?;
        raw.name = Some((*file).to_string());
        Ok(raw)
    }

    /// Names of the presets, `workloada`..`workloadf`.
    pub fn preset_names() -> impl Iterator<Item = &'static str> {
        PRESETS.iter().map(|(n, _)| *n)
    }

    /// Applies a properties file's text (`-P`): its entries override earlier ones.
    ///
    /// # Errors
    /// [`PropertyError::Syntax`] naming `source_name` and the line.
    pub fn load_str(&mut self, source_name: &str, text: &str) -> Result<(), PropertyError> {
        let pairs = java_properties::parse(text).map_err(|error| PropertyError::Syntax {
            source_name: source_name.to_string(),
            error,
        })?;
        self.values.extend(pairs);
        Ok(())
    }

    /// Sets one property.
    pub fn set(&mut self, key: impl Into<String>, value: impl Into<String>) {
        self.values.insert(key.into(), value.into());
    }

    /// Applies a `-p name=value` argument (split at the first `=`).
    ///
    /// # Errors
    /// [`PropertyError::Override`] when there is no `=`.
    pub fn set_override(&mut self, argument: &str) -> Result<(), PropertyError> {
        let (k, v) = argument
            .split_once('=')
            .ok_or_else(|| PropertyError::Override {
                argument: argument.to_string(),
            })?;
        self.set(k, v);
        Ok(())
    }

    /// YCSB's precedence: `files` (name, text) in order, then every override regardless of where
    /// it appeared on the command line.
    ///
    /// # Errors
    /// As [`RawProperties::load_str`] and [`RawProperties::set_override`].
    pub fn layered(files: &[(&str, &str)], overrides: &[&str]) -> Result<Self, PropertyError> {
        let mut raw = RawProperties::new();
        for (name, text) in files {
            raw.load_str(name, text)?;
        }
        for o in overrides {
            raw.set_override(o)?;
        }
        Ok(raw)
    }

    /// The value of `key`, if set.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    /// Whether `key` is set (YCSB distinguishes a missing `insertcount` from any value).
    pub fn contains(&self, key: &str) -> bool {
        self.values.contains_key(key)
    }

    /// All properties in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.values.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Preset name this bag started from, if any.
    pub fn preset_name(&self) -> Option<&str> {
        self.name.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_files_override_earlier_and_p_overrides_win() {
        let r = RawProperties::layered(
            &[
                ("one", "recordcount=10\nreadproportion=0.1\n"),
                ("two", "recordcount=20\n"),
            ],
            &["readproportion=0.7", "table=t=x"],
        )
        .expect("valid");
        assert_eq!(r.get("recordcount"), Some("20"));
        assert_eq!(r.get("readproportion"), Some("0.7"));
        assert_eq!(r.get("table"), Some("t=x"));
        assert!(matches!(
            RawProperties::new().set_override("novalue"),
            Err(PropertyError::Override { .. })
        ));
    }
}
