//! Result documents as JSON: reading one with errors that name the line and field, the
//! invariants serde cannot express, writing, and the JSON Schema of the format.

use super::cell::CellStatus;
use super::document::{CellResult, SCHEMA_VERSION};
use super::error::{ResultError, without_location};
use super::measured::MeasuredPhase;

impl CellResult {
    /// The JSON Schema (draft 2020-12) of result documents; `docs/result.schema.json` holds
    /// the committed copy.
    pub fn json_schema() -> serde_json::Value {
        serde_json::to_value(schemars::schema_for!(CellResult))
            .expect("a generated schema is always representable as JSON")
    }

    /// The measured phase of a complete result.
    ///
    /// # Errors
    /// [`ResultError::Incomplete`] for an incomplete result, [`ResultError::MissingMeasurement`]
    /// for a complete one without measurements.
    pub fn require_complete(&self) -> Result<&MeasuredPhase, ResultError> {
        match &self.status {
            CellStatus::Incomplete { reason } => Err(ResultError::Incomplete {
                cell: Box::new(self.cell.clone()),
                reason: reason.clone(),
            }),
            CellStatus::Complete => {
                self.measured
                    .as_ref()
                    .ok_or_else(|| ResultError::MissingMeasurement {
                        cell: Box::new(self.cell.clone()),
                    })
            }
        }
    }

    /// Checks the invariants serde cannot express.
    ///
    /// # Errors
    /// [`ResultError::UnsupportedVersion`], [`ResultError::MissingMeasurement`] or
    /// [`ResultError::EmptyReason`].
    pub fn validate(&self) -> Result<(), ResultError> {
        if self.schema_version != SCHEMA_VERSION {
            return Err(ResultError::UnsupportedVersion {
                found: u64::from(self.schema_version),
            });
        }
        match &self.status {
            CellStatus::Complete if self.measured.is_none() => {
                Err(ResultError::MissingMeasurement {
                    cell: Box::new(self.cell.clone()),
                })
            }
            CellStatus::Incomplete { reason } if reason.trim().is_empty() => {
                Err(ResultError::EmptyReason {
                    cell: Box::new(self.cell.clone()),
                })
            }
            _ => Ok(()),
        }
    }

    /// Reads and validates a result document.
    ///
    /// # Errors
    /// [`ResultError`] naming what is wrong and, where it can, the line and field: not JSON,
    /// not an object, wrong or missing schema version, wrong shape, or broken invariants.
    pub fn from_json(text: &str) -> Result<CellResult, ResultError> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| ResultError::syntax(&e))?;
        if !value.is_object() {
            let shape = match value {
                serde_json::Value::Array(_) => "an array",
                serde_json::Value::String(_) => "a string",
                serde_json::Value::Number(_) => "a number",
                serde_json::Value::Bool(_) => "a boolean",
                _ => "null",
            };
            return Err(ResultError::Shape {
                line: 1,
                path: String::new(),
                message: format!(
                    "{shape}, not a result document (an object with schemaVersion \
                     {SCHEMA_VERSION})"
                ),
            });
        }
        let version = value
            .get("schemaVersion")
            .and_then(serde_json::Value::as_u64)
            .ok_or(ResultError::MissingVersion)?;
        if version != u64::from(SCHEMA_VERSION) {
            return Err(ResultError::UnsupportedVersion { found: version });
        }
        // Read from the text again rather than the value: errors keep their line and field.
        let mut reader = serde_json::Deserializer::from_str(text);
        let result: CellResult = serde_path_to_error::deserialize(&mut reader).map_err(|e| {
            let path = e.path().to_string();
            ResultError::Shape {
                line: e.inner().line(),
                path: if path == "." { String::new() } else { path },
                message: without_location(e.inner()),
            }
        })?;
        result.validate()?;
        Ok(result)
    }

    /// The document as pretty-printed JSON.
    ///
    /// # Errors
    /// [`ResultError::Json`] if a histogram cannot be serialized.
    pub fn to_json(&self) -> Result<String, ResultError> {
        Ok(serde_json::to_string_pretty(self)?)
    }
}
