//! The import itself: plgm's two files in, the custom workload document (a YAML text with a
//! header of notes) out.

use serde_json::{Map, Value, json};

use super::cx::Cx;
use super::error::{FileKind, ImportError};
use super::{fields, queries};

/// The result of an import: the document and what it approximates.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// The custom workload document (version 1), a comment header first.
    pub yaml: String,
    /// One line per approximation or decision (also in the header).
    pub notes: Vec<String>,
}

const HEADER: &str = "\
# Imported from plgm's collection and query files by `mongobench import plgm`
# (docs/specs/custom.md §8). Weights are plgm's shipped mix with transactions off: find 54,
# update 21 (updateOne 90 %, updateMany 10 %), delete 10 (deleteOne 90 %, deleteMany 10 %),
# insert 5, insertMany 5 (10 documents), aggregate 5; a kind's share is split evenly among
# its queries (and collections, for inserts and fallbacks).
";

/// Imports plgm's collection file (an array of definitions, or `{"collections": [...]}`) and
/// query file (an array) as one custom workload document.
///
/// # Errors
/// An [`ImportError`] naming the file and the JSON path (or line and column) of the first
/// problem: a definition plgm refuses, or one a custom workload cannot express.
pub fn import(collections_json: &str, queries_json: &str) -> Result<Imported, ImportError> {
    let collections_root = parse_json(collections_json, FileKind::Collections)?;
    let queries_root = parse_json(queries_json, FileKind::Queries)?;
    let mut cx = Cx::new(FileKind::Collections);
    let (database, collections) = fields::collections(&collections_root, &mut cx)?;
    cx.kind = FileKind::Queries;
    let operations = queries::operations(&queries_root, &collections, &mut cx)?;

    let mut doc = Map::new();
    doc.insert("version".into(), json!(1));
    doc.insert("database".into(), json!(database));
    let entries: Vec<Value> = collections.iter().map(|c| c.entry.clone()).collect();
    doc.insert("collections".into(), Value::Array(entries));
    doc.insert("operations".into(), Value::Array(operations));
    doc.insert(
        "phases".into(),
        json!([{"name": "plgm", "duration": "10m"}]),
    );
    cx.note(
        "one measured phase of 10 minutes with the benchmark's workers \
         (plgm's config.yaml: duration 10s, concurrency 4)",
    );
    // Last: the `<string>` generator alone holds 1000 values.
    if !cx.generators.is_empty() {
        doc.insert(
            "generators".into(),
            Value::Object(std::mem::take(&mut cx.generators)),
        );
    }
    let notes = cx.finish();
    let body = serde_yaml::to_string(&Value::Object(doc)).expect("a JSON value serializes");
    let mut yaml = String::from(HEADER);
    yaml.push_str("# Approximations and decisions:\n");
    for note in &notes {
        yaml.push_str("# - ");
        yaml.push_str(note);
        yaml.push('\n');
    }
    yaml.push_str(&body);
    Ok(Imported { yaml, notes })
}

fn parse_json(text: &str, kind: FileKind) -> Result<Value, ImportError> {
    serde_json::from_str(text).map_err(|e| {
        let full = e.to_string();
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        ImportError::Syntax {
            kind,
            line: e.line(),
            column: e.column(),
            message: full.strip_suffix(&suffix).unwrap_or(&full).to_owned(),
        }
    })
}
