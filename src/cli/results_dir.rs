//! The result directory of a local run (`mongobench run --out DIR`), as `report --dir` and
//! `verify` read it: every `*.json` but the run's `comparison.json` is a result document, read
//! whole and checked, or the directory is refused, naming the file, line and field.
//!
//! Also refused: a directory that does not exist or holds no result document, two documents of
//! the same cell (a copied file would count a repetition twice), and a cell that the run's
//! `results.csv` lists but no document holds (a deleted result would silently leave the
//! comparison).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::input::{MAX_MANIFEST_BYTES, MAX_RESULT_BYTES, Problem, invalid, read_text};
use crate::report::{CSV_COLUMNS, unneutralise};
use crate::result::{CellId, CellResult};

/// The CSV `mongobench run --out` writes beside the documents.
pub const RESULTS_CSV: &str = "results.csv";
/// The report `mongobench run --out` writes beside the documents.
pub const REPORT_TXT: &str = "report.txt";
/// The comparison document `mongobench run --out` writes beside the documents: a rendering of
/// them, not a result.
pub const COMPARISON_JSON: &str = "comparison.json";
/// The verdicts as CSV `mongobench run --out` writes beside the documents.
pub const VERDICTS_CSV: &str = "verdicts.csv";

/// What a result directory is, quoted in refusals.
const EXPECTED: &str =
    "expected the --out directory of `mongobench run` (one <cell>.json per cell)";

/// The result documents in `dir`, in cell order.
///
/// # Errors
/// An [`Invalid`](super::input::Invalid) error, one line naming the file (and line, field).
pub fn read_results(dir: &Path) -> anyhow::Result<Vec<CellResult>> {
    let shown = dir.display().to_string();
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(invalid(format!("{shown}: not a directory: {EXPECTED}"))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(invalid(format!("{shown}: no such directory: {EXPECTED}")));
        }
        Err(e) => return Err(invalid(format!("{shown}: cannot read: {e}"))),
    }
    let files = json_files(dir).map_err(|e| invalid(format!("{shown}: cannot read: {e}")))?;
    if files.is_empty() {
        let renderings: Vec<&str> = [RESULTS_CSV, REPORT_TXT, COMPARISON_JSON, VERDICTS_CSV]
            .into_iter()
            .filter(|f| dir.join(f).exists())
            .collect();
        return Err(invalid(if renderings.is_empty() {
            format!("{shown}: holds no result documents (*.json): {EXPECTED}")
        } else {
            format!(
                "{shown}: holds {} but no result documents (*.json): the documents are missing, \
                 and those are renderings of them, not results",
                renderings.join(" and ")
            )
        }));
    }
    let mut results: Vec<CellResult> = Vec::new();
    let mut seen: BTreeMap<CellId, PathBuf> = BTreeMap::new();
    for path in files {
        let file = path.display().to_string();
        let result = read_one(&path).map_err(|p| invalid(p.render(&file)))?;
        if let Some(first) = seen.insert(result.cell.clone(), path.clone()) {
            return Err(invalid(format!(
                "{file}: holds the same cell as {} ({}): each cell's result appears once",
                first.display(),
                result.cell
            )));
        }
        results.push(result);
    }
    check_listed(dir, &seen)?;
    results.sort_by(|a, b| a.cell.cmp(&b.cell));
    Ok(results)
}

/// The `*.json` entries of `dir`, by name.
fn json_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "json")
            && path.file_name().is_some_and(|n| n != COMPARISON_JSON)
        {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// One result document, checked.
fn read_one(path: &Path) -> Result<CellResult, Problem> {
    let dangling = std::fs::symlink_metadata(path).is_ok_and(|m| m.is_symlink())
        && std::fs::metadata(path).is_err();
    if dangling {
        let target = std::fs::read_link(path).unwrap_or_default();
        return Err(Problem::file(format!(
            "a symbolic link to {}, which does not exist: the result document is missing",
            target.display()
        )));
    }
    let text = read_text(path, MAX_RESULT_BYTES, "result document")?;
    if text.trim().is_empty() {
        return Err(Problem::file(
            "the file is empty: expected a result document (JSON, see docs/results.md)",
        ));
    }
    CellResult::from_json(&text).map_err(|e| Problem {
        line: e.line(),
        path: String::new(),
        message: e.to_string(),
    })
}

/// Every cell `results.csv` lists must have its document: the CSV is written last, from the
/// documents, so a listed cell without one was removed.
fn check_listed(dir: &Path, found: &BTreeMap<CellId, PathBuf>) -> anyhow::Result<()> {
    let path = dir.join(RESULTS_CSV);
    if !path.exists() {
        return Ok(());
    }
    let file = path.display().to_string();
    let text =
        read_text(&path, MAX_MANIFEST_BYTES * 16, "CSV").map_err(|p| invalid(p.render(&file)))?;
    let records = csv_records(&text);
    let key_columns = &CSV_COLUMNS[..7];
    match records.first() {
        Some((_, header)) if header.len() >= 7 && header[..7] == *key_columns => {}
        _ => {
            return Err(invalid(format!(
                "{file}:1: not the {RESULTS_CSV} mongobench run writes: expected a header \
                 starting {}",
                key_columns.join(",")
            )));
        }
    }
    for (line, fields) in records.iter().skip(1) {
        let cell = match fields.as_slice() {
            [
                benchmark,
                run_id,
                workload,
                target,
                platform,
                size,
                repetition,
                ..,
            ] => repetition.parse().ok().map(|repetition| CellId {
                benchmark: benchmark.clone(),
                run_id: run_id.clone(),
                workload: workload.clone(),
                target: target.clone(),
                platform: platform.clone(),
                size: size.clone(),
                repetition,
            }),
            _ => None,
        };
        let Some(cell) = cell else {
            return Err(invalid(format!(
                "{file}:{line}: not a row of the {RESULTS_CSV} mongobench run writes (expected \
                 {} columns, the 7th a repetition number)",
                CSV_COLUMNS.len()
            )));
        };
        if !found.contains_key(&cell) {
            let id =
                crate::plan::cell_id(&cell.target, &cell.platform, &cell.size, cell.repetition);
            return Err(invalid(format!(
                "{file}:{line}: lists cell {cell}, but no result document in {} holds it \
                 ({id}.json is missing)",
                dir.display()
            )));
        }
    }
    Ok(())
}

/// The records of CSV text (RFC 4180: quoted fields may hold commas, quotes and line breaks),
/// each with the line it starts on; empty lines are skipped.
fn csv_records(text: &str) -> Vec<(usize, Vec<String>)> {
    let mut records = Vec::new();
    let (mut fields, mut field) = (Vec::new(), String::new());
    let (mut line, mut start, mut quoted) = (1, 1, false);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', true) => quoted = false,
            ('"', false) if field.is_empty() => quoted = true,
            (',', false) => fields.push(cell(&mut field)),
            ('\n', false) => {
                fields.push(cell(&mut field));
                if fields.len() > 1 || !fields[0].is_empty() {
                    records.push((start, std::mem::take(&mut fields)));
                }
                fields.clear();
                line += 1;
                start = line;
            }
            ('\r', false) => {}
            (c, _) => {
                if c == '\n' {
                    line += 1;
                }
                field.push(c);
            }
        }
    }
    if !field.is_empty() || !fields.is_empty() {
        fields.push(cell(&mut field));
        records.push((start, fields));
    }
    records
}

/// The field of a cell read into `field`, its formula neutralisation undone.
fn cell(field: &mut String) -> String {
    let text = std::mem::take(field);
    match unneutralise(&text) {
        kept if kept.len() == text.len() => text,
        undone => undone.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_records_keep_quoted_commas_quotes_and_line_breaks() {
        let text = "a,b,c\n1,\"x, \"\"y\"\"\",3\n\n2,\"two\nlines\",4\n5,,";
        assert_eq!(
            csv_records(text),
            [
                (1, vec!["a".into(), "b".into(), "c".into()]),
                (2, vec!["1".into(), "x, \"y\"".into(), "3".into()]),
                (4, vec!["2".into(), "two\nlines".into(), "4".into()]),
                (6, vec!["5".into(), String::new(), String::new()]),
            ]
        );
    }

    #[test]
    fn the_csv_of_rendered_results_lists_their_cells() {
        let result = crate::operator::testing::result(
            "b",
            "-t",
            "local",
            "1k",
            2,
            10,
            &[("find", 5, 100)],
            None,
        );
        let csv = crate::report::render_csv(std::slice::from_ref(&result));
        let records = csv_records(&csv);
        assert_eq!(records[0].1[..7], CSV_COLUMNS[..7]);
        let row = &records[1].1;
        assert_eq!(
            (row[3].as_str(), row[5].as_str(), row[6].as_str()),
            ("-t", "1k", "2")
        );
    }
}
