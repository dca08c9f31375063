//! `mongobench validate -f FILE...`: the offline rules of [`crate::api::validate`] over
//! manifest files, printing every violation as `FILE:LINE: spec.path: message`.
//!
//! Exit code 0 (one `OK` line per file, then its notes: settings that add noise to the figures,
//! [`crate::api::advice`]) when every MongoBenchmark in every file is valid, 2 when
//! any file holds a violation, is not YAML or cannot be read, or when no file holds a
//! MongoBenchmark at all. Documents of other kinds (a Secret, a Namespace) are skipped, and so
//! is a file of only such documents; an empty file, a file of only comments, a document that is
//! not a Kubernetes object (a list, a string, a mapping without `kind`) and two MongoBenchmarks
//! of the same name in one file are refused.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use serde::Deserialize;

pub use super::input::Problem;
use super::input::{MAX_MANIFEST_BYTES, label, read_text};
use super::manifest_kind::{expected, is_mongo_benchmark, not_an_object};
use super::yaml_lines::{LineIndex, first_control_character, scan_error};
use crate::api::{self, KIND};
use crate::plan::custom::{CustomError, parse_document};

/// Where an inline custom workload document is, the prefix of its problems.
const INLINE: &str = "spec.workload.custom.inline";

/// Exit code for invalid input.
pub const EXIT_INVALID: u8 = 2;

/// Arguments of `mongobench validate`.
#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// Manifest file to check (`-` reads standard input); repeat for several files.
    #[arg(short = 'f', long = "filename", value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
}

/// The outcome of checking one file's text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileReport {
    /// Names of the MongoBenchmarks found.
    pub benchmarks: Vec<String>,
    /// Every problem, in file order.
    pub problems: Vec<Problem>,
    /// Advice on the valid MongoBenchmarks, in file order: printed as notes, not refused.
    pub advice: Vec<Problem>,
    /// What each valid MongoBenchmark is expected to take, one line each.
    pub estimates: Vec<String>,
}

impl FileReport {
    /// True when the file holds no problem (it may hold no MongoBenchmark either).
    pub fn is_valid(&self) -> bool {
        self.problems.is_empty()
    }

    /// The lines `mongobench validate` prints for this file, labelled `file`.
    pub fn render(&self, file: &str) -> Vec<String> {
        if self.is_valid() && self.benchmarks.is_empty() {
            return vec![format!("{file}: skipped (no {KIND} in it)")];
        }
        if self.is_valid() {
            let noun = if self.benchmarks.len() == 1 {
                "MongoBenchmark"
            } else {
                "MongoBenchmarks"
            };
            let ok = format!("{file}: OK ({noun} {})", self.benchmarks.join(", "));
            let estimates = self.estimates.iter().map(|e| format!("{file}: {e}"));
            let notes = self.advice.iter().map(|a| {
                Problem {
                    line: a.line,
                    path: String::new(),
                    message: format!("note: {}: {}", a.path, a.message),
                }
                .render(file)
            });
            return std::iter::once(ok).chain(estimates).chain(notes).collect();
        }
        self.problems.iter().map(|p| p.render(file)).collect()
    }

    fn refuse(problem: Problem) -> FileReport {
        FileReport {
            problems: vec![problem],
            ..FileReport::default()
        }
    }
}

/// Checks every MongoBenchmark in a YAML text (one or more documents).
pub fn check_text(text: &str) -> FileReport {
    if let Some((line, c)) = first_control_character(text) {
        return FileReport::refuse(Problem::at_line(
            line,
            format!(
                "control character U+{:04X} is not allowed in YAML: remove it",
                u32::from(c)
            ),
        ));
    }
    let lines = match LineIndex::parse(text) {
        Ok(lines) => lines,
        Err(e) => {
            let (line, message) = scan_error(text, &e);
            return FileReport::refuse(Problem::at_line(line, message));
        }
    };
    if text.trim().is_empty() {
        return FileReport::refuse(Problem::file(format!("the file is empty: {}", expected())));
    }
    if lines.documents() == 0 {
        return FileReport::refuse(Problem::file(format!(
            "the file holds only comments: {}",
            expected()
        )));
    }
    let mut report = FileReport::default();
    let mut names = Vec::new();
    // No more documents than the index found: after an error the YAML reader's iterator may
    // not end.
    let documents = serde_yaml::Deserializer::from_str(text).take(lines.documents());
    for (index, document) in documents.enumerate() {
        let checked = check_document(index, document, &lines, &mut names);
        report.benchmarks.extend(checked.name);
        report.problems.extend(checked.problems);
        report.advice.extend(checked.advice);
        report.estimates.extend(checked.estimate);
    }
    report
}

/// The MongoBenchmark's (namespace, name) and document number, of each one so far in a file.
type Names = Vec<(Option<String>, String, usize)>;

/// What one document of a file holds.
#[derive(Default)]
struct Checked {
    /// The MongoBenchmark's name (none for other kinds).
    name: Option<String>,
    /// Its problems, in line order.
    problems: Vec<Problem>,
    /// Advice on it, when it has no problem.
    advice: Vec<Problem>,
    /// What it is expected to take, when it has no problem.
    estimate: Option<String>,
}

impl Checked {
    /// A document that holds no MongoBenchmark: refused, or of another kind (skipped).
    fn without_benchmark(problems: Vec<Problem>) -> Checked {
        Checked {
            problems,
            ..Checked::default()
        }
    }
}

/// Checks document `index` of a file.
fn check_document(
    index: usize,
    document: serde_yaml::Deserializer<'_>,
    lines: &LineIndex,
    names: &mut Names,
) -> Checked {
    let number = index + 1;
    let prefix = if lines.documents() > 1 {
        format!("document {number}: ")
    } else {
        String::new()
    };
    let mut problems: Vec<Problem> = lines
        .flagged()
        .iter()
        .filter(|f| f.document == index)
        .map(|f| Problem {
            line: Some(f.line),
            path: f.path.clone(),
            message: f.message.clone(),
        })
        .collect();
    let value = match read_document(index, document, lines, &prefix) {
        Ok(value) => value,
        Err(problem) => {
            problems.push(problem);
            return Checked::without_benchmark(problems);
        }
    };
    if let Some(problem) = not_an_object(&value, &prefix) {
        let line = lines.line(index, &problem.path).or(problem.line);
        return Checked::without_benchmark(vec![Problem { line, ..problem }]);
    }
    if !is_mongo_benchmark(&value) {
        return Checked::without_benchmark(problems);
    }
    let name = value
        .pointer("/metadata/name")
        .and_then(|n| n.as_str())
        .unwrap_or("<unnamed>")
        .to_string();
    if let Some(first) = note_name(&value, &name, number, names) {
        problems.push(Problem {
            line: lines.line(index, "metadata.name"),
            path: "metadata.name".to_string(),
            message: format!(
                "a second {KIND} named {name:?} in this file (the first is document {first}): \
                 applying the file would replace the first with the second"
            ),
        });
    }
    problems.extend(api::validate_document(&value).into_iter().map(|v| Problem {
        line: lines.line(index, &v.path),
        path: v.path,
        message: v.message,
    }));
    if problems.is_empty() {
        problems.extend(inline_custom_problem(&value, index, lines));
    }
    problems.sort_by_key(|p| p.line.unwrap_or(usize::MAX));
    let spec = match value.get("spec").cloned().map(serde_json::from_value) {
        Some(Ok(spec)) if problems.is_empty() => Some(spec),
        _ => None,
    };
    Checked {
        advice: spec
            .as_ref()
            .map_or_else(Vec::new, |s| advice(s, index, lines)),
        estimate: spec.as_ref().map(|spec| estimate_line(&name, spec)),
        name: Some(name),
        problems,
    }
}

/// Document `index` as JSON, or the reader's problem with the best line found for it.
fn read_document(
    index: usize,
    document: serde_yaml::Deserializer<'_>,
    lines: &LineIndex,
    prefix: &str,
) -> Result<serde_json::Value, Problem> {
    serde_json::Value::deserialize(document).map_err(|e| {
        let mut problem = reader_problem(&e);
        let fallback = if problem.message.contains("repetition limit") {
            lines.first_alias(index)
        } else {
            None
        };
        problem.line = problem.line.or(fallback).or_else(|| lines.line(index, ""));
        problem.message = format!("{prefix}{}", problem.message);
        problem
    })
}

/// Notes the benchmark `name` of document `number` in `names`; the number of the document that
/// already holds one of that namespace and name, if any.
fn note_name(
    value: &serde_json::Value,
    name: &str,
    number: usize,
    names: &mut Names,
) -> Option<usize> {
    let namespace = value
        .pointer("/metadata/namespace")
        .and_then(|n| n.as_str())
        .map(str::to_string);
    if let Some((_, _, first)) = names
        .iter()
        .find(|(ns, n, _)| *ns == namespace && *n == name)
    {
        return Some(*first);
    }
    if value.pointer("/metadata/name").is_some() {
        names.push((namespace, name.to_owned(), number));
    }
    None
}

/// The first problem of an inline custom workload document.
fn inline_custom_problem(
    value: &serde_json::Value,
    index: usize,
    lines: &LineIndex,
) -> Option<Problem> {
    let text = value
        .pointer("/spec/workload/custom/inline")
        .and_then(|t| t.as_str())?;
    let Err(CustomError::Document { origin, error }) = parse_document(text, INLINE) else {
        return None;
    };
    Some(Problem {
        line: lines.line(index, &origin),
        message: error.to_string(),
        path: origin,
    })
}

/// The notes on a valid benchmark: [`api::advice`] and what its access needs.
fn advice(spec: &api::MongoBenchmarkSpec, index: usize, lines: &LineIndex) -> Vec<Problem> {
    let access = crate::operator::access::offline_notes(spec, crate::operator::DEFAULT_IMAGE);
    api::advice(spec)
        .into_iter()
        .map(|a| (a.path, a.message))
        .chain(access)
        .map(|(path, message)| Problem {
            line: lines.line(index, &path),
            path,
            message,
        })
        .collect()
}

/// What benchmark `name` is expected to take, at the typical rates of
/// [`EXPECTED_RATES`](crate::plan::duration::EXPECTED_RATES).
fn estimate_line(name: &str, spec: &api::MongoBenchmarkSpec) -> String {
    use crate::plan::duration::{EXPECTED_RATES, estimate};
    match estimate(spec, &EXPECTED_RATES) {
        Ok(e) => format!("estimate: {KIND} {name}: {}", e.summary(spec)),
        Err(e) => format!("estimate: {KIND} {name}: none ({e})"),
    }
}

/// A YAML reader error as a problem: its line, the field path it names and the message without
/// the location, in the words of a manifest.
pub(crate) fn reader_problem(e: &serde_yaml::Error) -> Problem {
    let text = e.to_string();
    let line = e.location().map(|l| l.line());
    let text = match e.location() {
        Some(l) => text
            .strip_suffix(&format!(" at line {} column {}", l.line(), l.column()))
            .unwrap_or(&text)
            .to_string(),
        None => text,
    };
    // serde_yaml puts the field path first: `spec.workload.workers: message`.
    let (path, message) = match text.split_once(": ") {
        Some((path, message))
            if !path.is_empty()
                && path
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-[]".contains(c)) =>
        {
            (path.to_string(), message.to_string())
        }
        _ => (String::new(), text),
    };
    // `missing field `runId`` names the field: put it in the path, as the schema check does.
    if let Some(field) = message
        .strip_prefix("missing field `")
        .and_then(|m| m.strip_suffix('`'))
    {
        let path = if path.is_empty() {
            field.to_string()
        } else {
            format!("{path}.{field}")
        };
        return Problem {
            line,
            path,
            message: "required field is missing".to_string(),
        };
    }
    let message = match message.as_str() {
        "JSON number out of range" => "number out of range: an integer here must fit in 64 bits \
                                       (-9223372036854775808 to 18446744073709551615)"
            .to_string(),
        "invalid type: enum, expected any valid JSON value" => {
            "a YAML tag (such as !custom or !!binary) is not allowed in a Kubernetes object"
                .to_string()
        }
        "repetition limit exceeded" => {
            "YAML aliases expand to too many nodes (repetition limit exceeded)".to_string()
        }
        other => other.to_string(),
    };
    Problem {
        line,
        path,
        message,
    }
}

/// Runs `mongobench validate`, writing the report to `out`.
///
/// # Errors
/// When `out` cannot be written (invalid or unreadable input is not an error: it is reported
/// and gives exit code 2).
pub fn run(args: &ValidateArgs, out: &mut impl Write) -> anyhow::Result<ExitCode> {
    let mut all_valid = true;
    let mut benchmarks = 0;
    let mut lines = Vec::new();
    for file in &args.files {
        let label = label(file);
        let (report, files) = match read_text(file, MAX_MANIFEST_BYTES, "manifest") {
            Ok(text) => {
                let report = check_text(&text);
                let files = if report.is_valid() {
                    custom_files(&text, file)
                } else {
                    Vec::new()
                };
                (report, files)
            }
            Err(problem) => (FileReport::refuse(problem), Vec::new()),
        };
        all_valid &= report.is_valid() && files.is_empty();
        benchmarks += report.benchmarks.len();
        lines.extend(report.render(&label));
        lines.extend(files);
    }
    if benchmarks == 0 && all_valid {
        // One message: a lone file's skip line becomes the refusal.
        if let [file] = args.files.as_slice() {
            lines = vec![format!("{}: no {KIND} in it: {}", label(file), expected())];
        } else {
            lines.push(format!("no {KIND} in any file: {}", expected()));
        }
    }
    for line in lines {
        writeln!(out, "{line}")?;
    }
    Ok(if all_valid && benchmarks > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_INVALID)
    })
}

/// The refusals of the custom workload files the MongoBenchmarks of `text` (read from `path`)
/// name: read relative to it and checked, one line each.
fn custom_files(text: &str, path: &std::path::Path) -> Vec<String> {
    serde_yaml::Deserializer::from_str(text)
        .filter_map(|d| serde_json::Value::deserialize(d).ok())
        .filter(|v| v.pointer("/spec/workload/custom/file").is_some())
        .filter_map(|v| serde_json::from_value::<api::MongoBenchmark>(v).ok())
        .filter_map(|mut bench| crate::cli::custom::resolve(&mut bench, path).err())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALID: &str = "\
apiVersion: mongobench.io/v1alpha1
kind: MongoBenchmark
metadata:
  name: demo
spec:
  targets:
    - name: local
      external:
        uriSecretRef: {name: local-mongodb}
  platforms:
    - name: laptop
  dataset:
    sizes: [10k]
  workload:
    type: flights
";

    /// The note on the Secret `VALID` reads, which its namespace must list.
    const SECRET_NOTE: &str = "demo.yaml:6: note: spec.targets[local].external.uriSecretRef.name: \
        the benchmark's namespace must list Secret \"local-mongodb\" in its annotation \
        mongobench.io/readable-secrets, or the operator refuses to run it";

    #[test]
    fn a_valid_file_gives_an_ok_line_its_estimate_and_the_notes() {
        let report = check_text(VALID);
        assert!(report.is_valid(), "{report:?}");
        assert_eq!(
            report.render("demo.yaml"),
            [
                "demo.yaml: OK (MongoBenchmark demo)",
                "demo.yaml: estimate: MongoBenchmark demo: 3 cells in about 35m17s (1 platform), \
                 0.6 client pod-hours",
                SECRET_NOTE
            ]
        );
        // A runner image the operator would not run with its default flags is noted too.
        let imaged = VALID.replace(
            "  workload:\n",
            "  client: {image: 'reg.example/mb:1'}\n  workload:\n",
        );
        let notes = check_text(&imaged).render("demo.yaml");
        assert_eq!(notes.len(), 4, "{notes:?}");
        assert!(
            notes[3].contains(
                "note: spec.client.image: \"reg.example/mb:1\" runs only where the operator \
                 allows it with --allowed-runner-image"
            ),
            "{notes:?}"
        );
    }

    #[test]
    fn violations_carry_lines_and_paths() {
        let text = VALID
            .replace("sizes: [10k]", "sizes: [10k, 5k]")
            .replace("type: flights", "type: flights\n    workers: 0");
        let report = check_text(&text);
        assert_eq!(
            report.render("bad.yaml"),
            [
                "bad.yaml:13: spec.dataset.sizes[1]: \"5k\" (5000 documents) must be larger than \
                 the size before it, \"10k\" (10000 documents): sizes must be strictly ascending",
                "bad.yaml:16: spec.workload.workers: must be at least 1, got 0",
            ]
        );
    }

    #[test]
    fn other_kinds_are_skipped() {
        let secret = "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n";
        let report = check_text(&format!("{secret}---\n{VALID}"));
        assert!(report.is_valid());
        assert_eq!(report.benchmarks, ["demo"]);
        assert_eq!(
            check_text(secret).render("secret.yaml"),
            ["secret.yaml: skipped (no MongoBenchmark in it)"]
        );
    }

    #[test]
    fn exit_code_is_2_without_any_benchmark_and_0_with_valid_ones() {
        let dir = std::env::temp_dir().join(format!("mongobench-validate-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let secret = dir.join("secret.yaml");
        let demo = dir.join("demo.yaml");
        std::fs::write(
            &secret,
            "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n",
        )
        .unwrap();
        std::fs::write(&demo, VALID).unwrap();
        let mut out = Vec::new();
        let args = ValidateArgs {
            files: vec![secret.clone()],
        };
        assert_eq!(run(&args, &mut out).unwrap(), ExitCode::from(EXIT_INVALID));
        let mut out = Vec::new();
        let args = ValidateArgs {
            files: vec![secret.clone(), demo.clone()],
        };
        assert_eq!(run(&args, &mut out).unwrap(), ExitCode::SUCCESS);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!(
                "{}: skipped (no MongoBenchmark in it)\n{}: OK (MongoBenchmark demo)\n\
                 {}: estimate: MongoBenchmark demo: 3 cells in about 35m17s (1 platform), \
                 0.6 client pod-hours\n{}\n",
                secret.display(),
                demo.display(),
                demo.display(),
                SECRET_NOTE.replacen("demo.yaml", &demo.display().to_string(), 1)
            )
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_control_character_is_refused_with_its_line_at_once() {
        // The YAML readers disagreed on this text, and reading it never ended.
        let text = VALID.replace("name: demo", "name: de\u{7}mo");
        let report = check_text(&text);
        assert_eq!(
            report.render("bell.yaml"),
            ["bell.yaml:4: control character U+0007 is not allowed in YAML: remove it"]
        );
    }

    #[test]
    fn broken_yaml_is_refused_with_its_line() {
        let report = check_text("spec:\n  targets: [a\n  b: c\n");
        assert!(!report.is_valid());
        assert_eq!(report.problems.len(), 1);
        assert!(
            report.render("broken.yaml")[0].starts_with("broken.yaml:"),
            "{report:?}"
        );
        assert!(report.problems[0].message.starts_with("invalid YAML: "));
    }
}
