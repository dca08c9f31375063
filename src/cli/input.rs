//! The files the CLI reads (manifests, plans, result documents): read with a size bound, as
//! UTF-8, and every refusal as one [`Problem`] naming the file and, where known, the line and
//! field.
//!
//! Bad input ends a subcommand with [`Invalid`]: one message, exit code 2 (`main` prints it as
//! `mongobench <subcommand>: <message>`). `mongobench validate` prints its problems on standard
//! output instead, one line each.

use std::fmt;
use std::io::Read;
use std::path::Path;

/// The largest manifest or plan file read, in bytes (1 MiB): the API server keeps an object in
/// etcd only up to 1.5 MiB, so a larger manifest could never be applied; refusing it before
/// reading keeps a wrong file (a log, an image) from being parsed at all.
pub const MAX_MANIFEST_BYTES: u64 = 1 << 20;

/// The largest result document read, in bytes (4 MiB): a result travels in a ConfigMap of at
/// most 1 MiB, so anything near this bound is not a result.
pub const MAX_RESULT_BYTES: u64 = 4 << 20;

/// One problem with an input: where (line, field) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// 1-based line, when it could be found.
    pub line: Option<usize>,
    /// Field path (`spec.workload.workers`), empty for file-level problems.
    pub path: String,
    /// What is wrong and what was expected.
    pub message: String,
}

impl Problem {
    /// A file-level problem (no line, no field).
    pub fn file(message: impl Into<String>) -> Problem {
        Problem {
            line: None,
            path: String::new(),
            message: message.into(),
        }
    }

    /// A problem at `line`, without a field.
    pub fn at_line(line: usize, message: impl Into<String>) -> Problem {
        Problem {
            line: Some(line),
            path: String::new(),
            message: message.into(),
        }
    }

    /// The problem as one line about `file`: `FILE:LINE: field: message`.
    pub fn render(&self, file: &str) -> String {
        let at = match self.line {
            Some(line) => format!("{file}:{line}"),
            None => file.to_string(),
        };
        if self.path.is_empty() {
            format!("{at}: {}", self.message)
        } else {
            format!("{at}: {}: {}", self.path, self.message)
        }
    }
}

/// Bad input: the message is printed as it is, and the exit code is 2.
#[derive(Debug)]
pub struct Invalid(pub String);

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Invalid {}

/// An [`Invalid`] error with `message`.
pub fn invalid(message: impl Into<String>) -> anyhow::Error {
    Invalid(message.into()).into()
}

/// How `path` is shown in messages (`<stdin>` for `-`).
pub fn label(path: &Path) -> String {
    if path.as_os_str() == "-" {
        "<stdin>".to_string()
    } else {
        path.display().to_string()
    }
}

/// Reads `path` (standard input for `-`) as UTF-8 text of at most `max` bytes; `what` names
/// the expected content in messages ("manifest", "plan", "result document").
///
/// # Errors
/// A [`Problem`] (to render with [`label`]) when the file is missing, a directory, larger than
/// `max` (refused from its size, before reading), unreadable or not UTF-8 (with the line of
/// the first invalid byte).
pub fn read_text(path: &Path, max: u64, what: &str) -> Result<String, Problem> {
    let bytes = if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .take(max + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| Problem::file(format!("cannot read standard input: {e}")))?;
        if bytes.len() as u64 > max {
            return Err(too_large(None, max, what));
        }
        bytes
    } else {
        let metadata = std::fs::metadata(path).map_err(|e| not_readable(&e, what))?;
        if metadata.is_dir() {
            return Err(Problem::file(format!(
                "is a directory, expected a {what} file"
            )));
        }
        if metadata.len() > max {
            return Err(too_large(Some(metadata.len()), max, what));
        }
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .and_then(|f| f.take(max + 1).read_to_end(&mut bytes))
            .map_err(|e| not_readable(&e, what))?;
        // A file that grew since its size was read (a pipe, a log) is held to the same bound.
        if bytes.len() as u64 > max {
            return Err(too_large(None, max, what));
        }
        bytes
    };
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = 1 + valid.iter().filter(|b| **b == b'\n').count();
        let byte = e.as_bytes()[valid.len()];
        Problem::at_line(
            line,
            format!("not UTF-8 text (byte 0x{byte:02x}); a {what} is UTF-8 text"),
        )
    })
}

fn not_readable(e: &std::io::Error, what: &str) -> Problem {
    match e.kind() {
        std::io::ErrorKind::NotFound => Problem::file(format!("no such file (expected a {what})")),
        _ => Problem::file(format!("cannot read: {e}")),
    }
}

fn too_large(size: Option<u64>, max: u64, what: &str) -> Problem {
    let size = size.map_or_else(|| "more than".to_string(), |s| format!("{s} bytes,"));
    let bound = if max >= 1 << 20 && max.is_multiple_of(1 << 20) {
        format!("{} MiB", max >> 20)
    } else {
        format!("{max} bytes")
    };
    Problem::file(format!("{size} larger than a {what} may be ({bound})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("mongobench-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    #[test]
    fn problems_render_with_file_line_and_field() {
        let p = Problem {
            line: Some(7),
            path: "spec.workload".into(),
            message: "must be an object".into(),
        };
        assert_eq!(
            p.render("a.yaml"),
            "a.yaml:7: spec.workload: must be an object"
        );
        assert_eq!(Problem::file("empty").render("a.yaml"), "a.yaml: empty");
    }

    #[test]
    fn files_over_the_bound_are_refused_from_their_size() {
        let path = temp("big.yaml", &[b'a'; 2049]);
        let e = read_text(&path, 2048, "manifest").unwrap_err();
        assert_eq!(
            e.message,
            "2049 bytes, larger than a manifest may be (2048 bytes)"
        );
        assert_eq!(
            read_text(&temp("ok.yaml", b"a: 1\n"), 2048, "x").unwrap(),
            "a: 1\n"
        );
    }

    #[test]
    fn invalid_utf8_is_refused_with_its_line() {
        let path = temp("latin1.yaml", b"a: 1\nb: caf\xe9\n");
        let e = read_text(&path, 2048, "manifest").unwrap_err();
        assert_eq!(e.line, Some(2));
        assert_eq!(
            e.message,
            "not UTF-8 text (byte 0xe9); a manifest is UTF-8 text"
        );
    }

    #[test]
    fn missing_files_and_directories_are_named_as_such() {
        let missing = std::env::temp_dir().join("mongobench-input-no-such-file.yaml");
        assert_eq!(
            read_text(&missing, 10, "plan").unwrap_err().message,
            "no such file (expected a plan)"
        );
        let dir = std::env::temp_dir();
        assert_eq!(
            read_text(&dir, 10, "plan").unwrap_err().message,
            "is a directory, expected a plan file"
        );
    }
}
