//! JSON: the result documents themselves, as one array, each with its `status` (so an
//! incomplete result carries `"status": "incomplete"` and its reason).

use super::ReportError;
use crate::result::CellResult;

/// A pretty-printed JSON array of `results`.
///
/// # Errors
/// [`ReportError::Json`] if a histogram cannot be serialized.
pub fn render_json(results: &[CellResult]) -> Result<String, ReportError> {
    Ok(serde_json::to_string_pretty(results)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::testing::sample_result;

    #[test]
    fn array_of_documents_reads_back() {
        let results = vec![
            sample_result("psmdb-8.0", 1, 100.0),
            sample_result("mongo-9.0", 1, 120.0),
        ];
        let text = render_json(&results).unwrap();
        let values: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
        assert_eq!(values.len(), 2);
        let back: Vec<CellResult> = values
            .iter()
            .map(|v| CellResult::from_json(&v.to_string()).unwrap())
            .collect();
        assert_eq!(back, results);
        assert_eq!(values[1]["cell"]["target"], "mongo-9.0");
        assert_eq!(values[1]["measured"]["overall"]["opsPerSec"], 120.0);
    }
}
