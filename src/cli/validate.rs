//! `mongobench validate -f FILE...`: the offline rules of [`crate::api::validate`] over
//! manifest files, printing every violation as `FILE:LINE: spec.path: message`.
//!
//! Exit code 0 (one `OK` line per file) when every MongoBenchmark in every file is valid, 2 when
//! any file holds a violation or is not YAML, or when no file holds a MongoBenchmark at all.
//! Documents of other kinds (a Secret, a Namespace) are skipped, and so is a file of only such
//! documents.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use serde::Deserialize;

use super::yaml_lines::LineIndex;
use crate::api::{self, GROUP, KIND};

/// Exit code for invalid input.
pub const EXIT_INVALID: u8 = 2;

/// Arguments of `mongobench validate`.
#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// Manifest file to check (`-` reads standard input); repeat for several files.
    #[arg(short = 'f', long = "filename", value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
}

/// One problem found in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// 1-based line, when it could be found.
    pub line: Option<usize>,
    /// Field path (`spec.workload.workers`), empty for file-level problems.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

/// The outcome of checking one file's text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileReport {
    /// Names of the MongoBenchmarks found.
    pub benchmarks: Vec<String>,
    /// Every problem, in file order.
    pub problems: Vec<Problem>,
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
            return vec![format!(
                "{file}: OK ({noun} {})",
                self.benchmarks.join(", ")
            )];
        }
        self.problems
            .iter()
            .map(|p| {
                let at = match p.line {
                    Some(line) => format!("{file}:{line}"),
                    None => file.to_string(),
                };
                if p.path.is_empty() {
                    format!("{at}: {}", p.message)
                } else {
                    format!("{at}: {}: {}", p.path, p.message)
                }
            })
            .collect()
    }
}

/// Checks every MongoBenchmark in a YAML text (one or more documents).
pub fn check_text(text: &str) -> FileReport {
    let mut report = FileReport::default();
    let lines = match LineIndex::parse(text) {
        Ok(lines) => lines,
        Err(e) => {
            report.problems.push(Problem {
                line: Some(e.marker().line()),
                path: String::new(),
                message: format!("invalid YAML: {}", e.info()),
            });
            return report;
        }
    };
    for (index, document) in serde_yaml::Deserializer::from_str(text).enumerate() {
        let value = match serde_json::Value::deserialize(document) {
            Ok(value) => value,
            Err(e) => {
                report.problems.push(Problem {
                    line: e.location().map(|l| l.line()),
                    path: String::new(),
                    message: format!("cannot read document {}: {e}", index + 1),
                });
                continue;
            }
        };
        if !is_mongo_benchmark(&value) {
            continue;
        }
        let name = value
            .pointer("/metadata/name")
            .and_then(|n| n.as_str())
            .unwrap_or("<unnamed>");
        report.benchmarks.push(name.to_string());
        let mut problems: Vec<Problem> = api::validate_document(&value)
            .into_iter()
            .map(|v| Problem {
                line: lines.line(index, &v.path),
                path: v.path,
                message: v.message,
            })
            .collect();
        problems.sort_by_key(|p| p.line.unwrap_or(usize::MAX));
        report.problems.extend(problems);
    }
    report
}

/// A document meant as a MongoBenchmark: its kind, or any apiVersion of our group.
fn is_mongo_benchmark(value: &serde_json::Value) -> bool {
    let kind = value.get("kind").and_then(|k| k.as_str());
    let group = value
        .get("apiVersion")
        .and_then(|v| v.as_str())
        .and_then(|v| v.split_once('/'))
        .map(|(group, _)| group);
    kind == Some(KIND) || group == Some(GROUP)
}

/// Runs `mongobench validate`, writing the report to `out`.
///
/// # Errors
/// When a file cannot be read or `out` cannot be written (invalid content is not an error: it
/// is reported and gives exit code 2).
pub fn run(args: &ValidateArgs, out: &mut impl Write) -> anyhow::Result<ExitCode> {
    let mut all_valid = true;
    let mut benchmarks = 0;
    for file in &args.files {
        let (label, text) = if file.as_os_str() == "-" {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("cannot read standard input")?;
            ("<stdin>".to_string(), text)
        } else {
            let text = std::fs::read_to_string(file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            (file.display().to_string(), text)
        };
        let report = check_text(&text);
        all_valid &= report.is_valid();
        benchmarks += report.benchmarks.len();
        for line in report.render(&label) {
            writeln!(out, "{line}")?;
        }
    }
    if benchmarks == 0 && all_valid {
        writeln!(
            out,
            "no {KIND} found (apiVersion {}, kind {KIND})",
            api::API_VERSION
        )?;
    }
    Ok(if all_valid && benchmarks > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_INVALID)
    })
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

    #[test]
    fn a_valid_file_gives_one_ok_line() {
        let report = check_text(VALID);
        assert!(report.is_valid(), "{report:?}");
        assert_eq!(
            report.render("demo.yaml"),
            ["demo.yaml: OK (MongoBenchmark demo)"]
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
                "{}: skipped (no MongoBenchmark in it)\n{}: OK (MongoBenchmark demo)\n",
                secret.display(),
                demo.display()
            )
        );
        std::fs::remove_dir_all(&dir).unwrap();
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
