//! The result directories of the bad-input cases: a fresh `run --out` directory, then one
//! mistake made in it (or the directory itself missing, empty or not one).

use std::path::{Path, PathBuf};

use mongobench::operator::testing::result;
use mongobench::result::CellResult;

use super::{Made, made};

/// What `run --out` leaves for three cells: a document each, results.csv and report.txt.
pub(super) fn run_out(dir: &Path) -> Vec<(PathBuf, CellResult)> {
    let results: Vec<CellResult> = (1..=3)
        .map(|rep| {
            result(
                "study",
                "mongodb-8.0",
                "local",
                "10k",
                rep,
                10,
                &[("find", 200, 150)],
                Some(40),
            )
        })
        .collect();
    let mut files = Vec::new();
    for r in &results {
        let id = mongobench::plan::cell_id(
            &r.cell.target,
            &r.cell.platform,
            &r.cell.size,
            r.cell.repetition,
        );
        let path = dir.join(format!("{id}.json"));
        std::fs::write(&path, r.to_json().unwrap()).unwrap();
        files.push((path, r.clone()));
    }
    std::fs::write(
        dir.join("results.csv"),
        mongobench::report::render_csv(&results),
    )
    .unwrap();
    std::fs::write(dir.join("report.txt"), "a report\n").unwrap();
    files
}

/// The first document of a fresh run directory, rewritten by `edit`, refused at the line of
/// the first line of the new text that contains `at` (None: no line).
fn edited(dir: &Path, at: Option<&str>, edit: impl Fn(String) -> String) -> Made {
    let (path, _) = run_out(dir).remove(0);
    let text = edit(std::fs::read_to_string(&path).unwrap());
    std::fs::write(&path, &text).unwrap();
    let line = at.map(|needle| {
        1 + text
            .lines()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("{needle:?} is not in the edited document"))
    });
    Made {
        arg: dir.to_path_buf(),
        names: path,
        line,
    }
}

pub(super) fn results_dir_missing(dir: &Path) -> Made {
    let missing = dir.join("no-such-run");
    Made {
        arg: missing.clone(),
        names: missing,
        line: None,
    }
}

pub(super) fn results_dir_empty(dir: &Path) -> Made {
    made(dir.to_path_buf(), None)
}

pub(super) fn results_dir_is_a_file(dir: &Path) -> Made {
    let file = dir.join("results.txt");
    std::fs::write(&file, "not a directory\n").unwrap();
    made(file, None)
}

pub(super) fn results_only_renderings(dir: &Path) -> Made {
    for (path, _) in run_out(dir) {
        std::fs::remove_file(path).unwrap();
    }
    made(dir.to_path_buf(), None)
}

pub(super) fn results_listed_cell_missing(dir: &Path) -> Made {
    let files = run_out(dir);
    std::fs::remove_file(&files[1].0).unwrap();
    // results.csv: the header, then one row per cell (each has only the OVERALL and find rows).
    let csv = std::fs::read_to_string(dir.join("results.csv")).unwrap();
    let line = 1 + csv
        .lines()
        .position(|l| l.contains(",10k,2,"))
        .expect("the row of repetition 2");
    Made {
        arg: dir.to_path_buf(),
        names: dir.join("results.csv"),
        line: Some(line),
    }
}

pub(super) fn results_truncated(dir: &Path) -> Made {
    let (path, _) = run_out(dir).remove(0);
    let text = std::fs::read_to_string(&path).unwrap();
    let cut = &text[..text.len() / 2];
    std::fs::write(&path, cut).unwrap();
    Made {
        arg: dir.to_path_buf(),
        names: path,
        // The text ends on this line.
        line: Some(1 + cut.matches('\n').count()),
    }
}

pub(super) fn results_field_wrong_type(dir: &Path) -> Made {
    edited(dir, Some("\"opsPerSec\": \"fast\""), |t| {
        let start = t.find("\"opsPerSec\": ").unwrap();
        let end = start + t[start..].find(',').unwrap();
        format!("{}\"opsPerSec\": \"fast\"{}", &t[..start], &t[end..])
    })
}

pub(super) fn results_negative_count(dir: &Path) -> Made {
    edited(dir, Some("\"completed\": -5"), |t| {
        let start = t.find("\"completed\": ").unwrap();
        let end = start + t[start..].find(',').unwrap();
        format!("{}\"completed\": -5{}", &t[..start], &t[end..])
    })
}

pub(super) fn results_histogram_garbage(dir: &Path) -> Made {
    edited(dir, Some("not base64!"), |t| {
        let start = t.find("\"latency\": \"").unwrap() + "\"latency\": \"".len();
        let end = start + t[start..].find('"').unwrap();
        format!("{}not base64!{}", &t[..start], &t[end..])
    })
}

pub(super) fn results_other_schema_version(dir: &Path) -> Made {
    edited(dir, None, |t| {
        t.replacen("\"schemaVersion\": 2", "\"schemaVersion\": 1", 1)
    })
}

pub(super) fn results_not_a_result(dir: &Path) -> Made {
    edited(dir, None, |_| {
        "{\"name\": \"mongobench\", \"version\": \"0.1.0\"}\n".into()
    })
}

pub(super) fn results_json_array(dir: &Path) -> Made {
    edited(dir, Some("["), |t| format!("[{t}]"))
}

pub(super) fn results_not_json(dir: &Path) -> Made {
    edited(dir, Some("mongod"), |_| {
        "2025-01-01T12:00:00.000+00:00 I NETWORK [listener] mongod waiting for connections\n".into()
    })
}

pub(super) fn results_trailing_text(dir: &Path) -> Made {
    let (path, _) = run_out(dir).remove(0);
    let text = std::fs::read_to_string(&path).unwrap();
    let first = format!("{text}\n");
    std::fs::write(&path, format!("{first}{text}")).unwrap();
    Made {
        arg: dir.to_path_buf(),
        names: path,
        // The second document starts on the line after the first.
        line: Some(1 + first.matches('\n').count()),
    }
}

pub(super) fn results_empty_file(dir: &Path) -> Made {
    edited(dir, None, |_| String::new())
}

pub(super) fn results_missing_field(dir: &Path) -> Made {
    let (path, _) = run_out(dir).remove(0);
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    doc.as_object_mut().unwrap().remove("cell");
    let text = serde_json::to_string_pretty(&doc).unwrap();
    std::fs::write(&path, &text).unwrap();
    Made {
        arg: dir.to_path_buf(),
        names: path,
        // A field is known missing only where the document ends.
        line: Some(text.lines().count()),
    }
}

pub(super) fn results_duplicate_key(dir: &Path) -> Made {
    // A second "fingerprint" before the real one: refused where the real one comes.
    edited(dir, Some("\"fingerprint\": \"0"), |t| {
        t.replacen(
            "\"schemaVersion\": 2,",
            "\"schemaVersion\": 2,\n  \"fingerprint\": \"twice\",",
            1,
        )
    })
}

pub(super) fn results_broken_invariant(dir: &Path) -> Made {
    edited(dir, None, |t| {
        let mut doc: serde_json::Value = serde_json::from_str(&t).unwrap();
        doc["measured"] = serde_json::Value::Null;
        serde_json::to_string_pretty(&doc).unwrap()
    })
}

pub(super) fn results_not_utf8(dir: &Path) -> Made {
    let (path, _) = run_out(dir).remove(0);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut bytes = text.replacen("\"study\"", "\"stud\u{1}\"", 1).into_bytes();
    let at = bytes.iter().position(|b| *b == 1).unwrap();
    bytes[at] = 0xff;
    let line = 1 + bytes[..at].iter().filter(|b| **b == b'\n').count();
    std::fs::write(&path, bytes).unwrap();
    Made {
        arg: dir.to_path_buf(),
        names: path,
        line: Some(line),
    }
}

pub(super) fn results_duplicate_cell(dir: &Path) -> Made {
    let (path, _) = run_out(dir).remove(0);
    // A copy as a file manager names it; it sorts first, so the original is the second read.
    let copy = dir.join(format!(
        "{} (copy).json",
        path.file_stem().unwrap().to_string_lossy()
    ));
    std::fs::copy(&path, &copy).unwrap();
    Made {
        arg: dir.to_path_buf(),
        names: path,
        line: None,
    }
}

pub(super) fn results_dangling_link(dir: &Path) -> Made {
    run_out(dir);
    let link = dir.join("zz-moved.json");
    std::os::unix::fs::symlink(dir.join("moved-away.json"), &link).unwrap();
    Made {
        arg: dir.to_path_buf(),
        names: link,
        line: None,
    }
}

pub(super) fn results_too_large(dir: &Path) -> Made {
    run_out(dir);
    let big = dir.join("zz-big.json");
    std::fs::write(&big, vec![b' '; 10 << 20]).unwrap();
    Made {
        arg: dir.to_path_buf(),
        names: big,
        line: None,
    }
}
