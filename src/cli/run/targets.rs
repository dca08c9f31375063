//! `--target NAME=URI`, `NAME=env:VAR` and `NAME=file:PATH`: the deployments of a local run,
//! each URI given on the command line or read from an environment variable or a file, so that
//! a password need not be on the command line (where `ps` and shell histories show it). No
//! message quotes a URI but redacted.

use std::path::Path;

use crate::cli::input::{invalid, read_text};
use crate::runner::{check_uri, redact_uri};

/// The largest file a URI is read from: a URI is a line, not a file's worth.
const MAX_URI_FILE: u64 = 16 * 1024;

/// Parses `--target` arguments: names unique, each URI read from where its value says, with a
/// MongoDB scheme and its user and password percent-encoded.
///
/// # Errors
/// An [`Invalid`](crate::cli::input::Invalid) error naming the argument (its URI redacted) and
/// what is wrong.
pub fn parse_targets(args: &[String]) -> anyhow::Result<Vec<(String, String)>> {
    if args.is_empty() {
        return Err(invalid(
            "no --target given: name at least one deployment as --target NAME=mongodb://HOST:PORT/",
        ));
    }
    let mut out: Vec<(String, String)> = Vec::new();
    for arg in args {
        let (name, value) = name_and_value(arg).map_err(invalid)?;
        let uri = target_uri(name, value).map_err(invalid)?;
        if out.iter().any(|(n, _)| n == name) {
            return Err(invalid(format!("--target {name}: given twice")));
        }
        out.push((name.to_owned(), uri));
    }
    Ok(out)
}

/// `NAME=VALUE` split at its first `=`, the name checked.
fn name_and_value(arg: &str) -> Result<(&str, &str), String> {
    let Some((name, value)) = arg.split_once('=') else {
        return Err(format!(
            "--target {}: expected NAME=URI, NAME=env:VARIABLE or NAME=file:PATH, e.g. \
             mongo-8=mongodb://127.0.0.1:27017/",
            redact_uri(arg)
        ));
    };
    let named = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if !named {
        // The name is not quoted alone: a URI given without one splits at an option's '='.
        return Err(format!(
            "--target {}: the NAME before the first '=' must be letters, digits, '-', '_' or '.'",
            redact_uri(arg)
        ));
    }
    Ok((name, value))
}

/// The URI `--target NAME=VALUE` stands for: VALUE itself, or read from the environment
/// variable (`env:VARIABLE`) or file (`file:PATH`, its one line) it names; checked with
/// [`check_uri`].
fn target_uri(name: &str, value: &str) -> Result<String, String> {
    let (uri, shown) = if let Some(variable) = value.strip_prefix("env:") {
        let shown = format!("--target {name}=env:{variable}");
        let read = from_env(variable, std::env::var(variable));
        (read.map_err(|e| format!("{shown}: {e}"))?, shown)
    } else if let Some(path) = value.strip_prefix("file:") {
        let shown = format!("--target {name}=file:{path}");
        (
            from_file(Path::new(path)).map_err(|e| format!("{shown}: {e}"))?,
            shown,
        )
    } else {
        (
            value.to_owned(),
            format!("--target {name}={}", redact_uri(value)),
        )
    };
    check_uri(&uri).map_err(|problem| format!("{shown}: {problem}"))?;
    Ok(uri)
}

/// The URI in `variable`, whose value was `read`.
fn from_env(variable: &str, read: Result<String, std::env::VarError>) -> Result<String, String> {
    match read {
        Ok(uri) if uri.trim().is_empty() => Err(format!("{variable} is empty; expected a URI")),
        Ok(uri) => Ok(uri.trim().to_owned()),
        Err(std::env::VarError::NotPresent) => Err(format!("{variable} is not set")),
        Err(std::env::VarError::NotUnicode(_)) => Err(format!("{variable} is not UTF-8")),
    }
}

fn from_file(path: &Path) -> Result<String, String> {
    let text = read_text(path, MAX_URI_FILE, "URI").map_err(|p| p.message)?;
    let text = text.trim();
    if text.is_empty() {
        return Err("the file is empty; expected a URI".to_owned());
    }
    if text.contains('\n') {
        return Err("the file holds more than one line; expected the URI alone".to_owned());
    }
    Ok(text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(args: &[&str]) -> String {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        parse_targets(&args).unwrap_err().to_string()
    }

    #[test]
    fn targets_parse_and_refuse_bad_forms() {
        let ok =
            parse_targets(&["a=mongodb://h:1/".into(), "b.8=mongodb+srv://x/".into()]).unwrap();
        assert_eq!(
            ok,
            [
                ("a".to_owned(), "mongodb://h:1/".to_owned()),
                ("b.8".to_owned(), "mongodb+srv://x/".to_owned())
            ]
        );
        for (bad, message) in [
            (
                "noequals",
                "--target noequals: expected NAME=URI, NAME=env:VARIABLE or NAME=file:PATH, e.g. \
                 mongo-8=mongodb://127.0.0.1:27017/",
            ),
            (
                "a=http://h/",
                "--target a=http://h/: the URI must start with mongodb:// or mongodb+srv://",
            ),
            (
                "=mongodb://h/",
                "--target =mongodb://h/: the NAME before the first '=' must be letters, digits, \
                 '-', '_' or '.'",
            ),
        ] {
            assert_eq!(refusal(&[bad]), message);
        }
        assert_eq!(
            refusal(&["a=mongodb://h/", "a=mongodb://g/"]),
            "--target a: given twice"
        );
        assert!(refusal(&[]).starts_with("no --target given"));
    }

    /// Every refusal of a `--target` holding a password: none quotes any of it.
    #[test]
    fn no_refusal_quotes_a_password() {
        let password = "Kv7Qx?Zw3Jm";
        for (arg, message) in [
            (
                format!("mongodb://bench:{password}@h/?w=1"),
                "--target mongodb://***@h/?w=1: the NAME before the first '=' must be letters, \
                 digits, '-', '_' or '.'",
            ),
            (
                format!("mongodb://bench:{password}@h/"),
                "--target mongodb://***@h/: expected NAME=URI, NAME=env:VARIABLE or \
                 NAME=file:PATH, e.g. mongo-8=mongodb://127.0.0.1:27017/",
            ),
            (
                format!("a=mongodb://bench:{password}@h/"),
                "--target a=mongodb://***@h/: the password holds a character that must be \
                 percent-encoded (':' %3A, '/' %2F, '?' %3F, '#' %23, '[' %5B, ']' %5D, '@' \
                 %40); an '@' anywhere but before the hosts is written %40 too",
            ),
            (
                format!("a=mongodb:/bench:{password}@h/"),
                "--target a=***@h/: the URI must start with mongodb:// or mongodb+srv://",
            ),
        ] {
            assert_eq!(refusal(&[&arg]), message);
        }
    }

    #[test]
    fn uris_are_read_from_an_environment_variable_or_a_file() {
        let uri = "mongodb://bench:Kv7Qx%3FZw3Jm@h:1/";
        let dir = std::env::temp_dir().join(format!("mongobench-targets-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("uri");
        std::fs::write(&file, format!("{uri}\r\n")).unwrap();
        let two = dir.join("two-lines");
        std::fs::write(&two, format!("{uri}\n{uri}\n")).unwrap();
        let ok = parse_targets(&[format!("f=file:{}", file.display()), format!("l={uri}")]);
        let uris: Vec<String> = ok.unwrap().into_iter().map(|(_, u)| u).collect();
        assert_eq!(uris, [uri, uri]);
        assert_eq!(from_env("V", Ok(format!(" {uri}\n"))), Ok(uri.to_owned()));
        assert_eq!(
            from_env("V", Err(std::env::VarError::NotPresent)),
            Err("V is not set".to_owned())
        );
        assert_eq!(
            from_env("V", Ok(" ".into())),
            Err("V is empty; expected a URI".to_owned())
        );
        let missing = dir.join("missing");
        for (arg, message) in [
            (
                "e=env:MONGOBENCH_TEST_NEVER_SET".to_owned(),
                "--target e=env:MONGOBENCH_TEST_NEVER_SET: MONGOBENCH_TEST_NEVER_SET is not set"
                    .to_owned(),
            ),
            (
                format!("f=file:{}", missing.display()),
                format!(
                    "--target f=file:{}: no such file (expected a URI)",
                    missing.display()
                ),
            ),
            (
                format!("f=file:{}", two.display()),
                format!(
                    "--target f=file:{}: the file holds more than one line; expected the URI \
                     alone",
                    two.display()
                ),
            ),
        ] {
            assert_eq!(refusal(&[&arg]), message);
        }
        std::fs::write(&file, "http://bench:Kv7Qx@h/").unwrap();
        assert_eq!(
            refusal(&[&format!("f=file:{}", file.display())]),
            format!(
                "--target f=file:{}: the URI must start with mongodb:// or mongodb+srv://",
                file.display()
            )
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
