//! What a local run starts from: the one MongoBenchmark of a manifest and the `--target` and
//! `--server-canary` arguments.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::api::{KIND, MongoBenchmark};
use crate::cli::input::{MAX_MANIFEST_BYTES, invalid, label, read_text};
use crate::cli::validate::check_text;

/// Reads and validates the one MongoBenchmark in `file`.
///
/// # Errors
/// An [`Invalid`](crate::cli::input::Invalid) error naming the file, line and field: the file
/// cannot be read, a violation, no MongoBenchmark or more than one.
pub fn read_spec(file: &std::path::Path) -> anyhow::Result<MongoBenchmark> {
    let label = label(file);
    let text =
        read_text(file, MAX_MANIFEST_BYTES, "manifest").map_err(|p| invalid(p.render(&label)))?;
    let report = check_text(&text);
    if !report.is_valid() {
        return Err(invalid(report.render(&label).join("\n")));
    }
    if report.benchmarks.len() > 1 {
        return Err(invalid(format!(
            "{label}: holds {} {KIND}s ({}): run takes one; put each in a file of its own",
            report.benchmarks.len(),
            report.benchmarks.join(", ")
        )));
    }
    for document in serde_yaml::Deserializer::from_str(&text) {
        let value = serde_json::Value::deserialize(document)
            .map_err(|e| invalid(format!("{label}: {e}")))?;
        if value.get("kind").and_then(|k| k.as_str()) == Some(KIND) {
            let mut bench: MongoBenchmark =
                serde_json::from_value(value).map_err(|e| invalid(format!("{label}: {e}")))?;
            crate::cli::custom::resolve(&mut bench, file).map_err(invalid)?;
            return Ok(bench);
        }
    }
    Err(invalid(format!(
        "{label}: no {KIND} in it: expected a {KIND} (apiVersion {}, kind {KIND})",
        crate::api::API_VERSION
    )))
}

/// Parses `--target NAME=URI` arguments: names unique, URIs with a MongoDB scheme.
pub fn parse_targets(args: &[String]) -> anyhow::Result<Vec<(String, String)>> {
    if args.is_empty() {
        return Err(invalid(
            "no --target given: name at least one deployment as --target NAME=mongodb://HOST:PORT/",
        ));
    }
    let mut out: Vec<(String, String)> = Vec::new();
    for arg in args {
        let Some((name, uri)) = arg.split_once('=') else {
            return Err(invalid(format!(
                "--target {arg:?}: expected NAME=URI, e.g. mongo-8=mongodb://127.0.0.1:27017/"
            )));
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        {
            return Err(invalid(format!(
                "--target {arg:?}: the name {name:?} must be letters, digits, '-', '_' or '.'"
            )));
        }
        if !(uri.starts_with("mongodb://") || uri.starts_with("mongodb+srv://")) {
            return Err(invalid(format!(
                "--target {arg:?}: the URI must start with mongodb:// or mongodb+srv://"
            )));
        }
        if out.iter().any(|(n, _)| n == name) {
            return Err(invalid(format!("--target {name}: given twice")));
        }
        out.push((name.to_owned(), uri.to_owned()));
    }
    Ok(out)
}

/// `--server-canary NAME=HOST:PORT` arguments, by target, each NAME one of `targets`.
pub(super) fn parse_server_canaries(
    args: &[String],
    targets: &[(String, String)],
) -> anyhow::Result<BTreeMap<String, Vec<String>>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for arg in args {
        let bad = |what: &str| invalid(format!("--server-canary {arg:?}: {what}"));
        let (name, address) = arg
            .split_once('=')
            .ok_or_else(|| bad("expected NAME=HOST:PORT, e.g. mongo-8=10.0.0.5:27117"))?;
        if !targets.iter().any(|(t, _)| t == name) {
            return Err(bad(&format!("{name:?} is not one of the --target names")));
        }
        let port = address
            .rsplit_once(':')
            .map(|(host, port)| (host, port.parse::<u16>()));
        if !matches!(port, Some((host, Ok(_))) if !host.is_empty()) {
            return Err(bad(&format!("{address:?} is not HOST:PORT")));
        }
        out.entry(name.to_owned())
            .or_default()
            .push(address.to_owned());
    }
    Ok(out)
}

/// A default run id: the start time, `YYYYMMDD-HHMMSS` in UTC.
pub(super) fn new_run_id() -> String {
    k8s_openapi::jiff::Timestamp::now()
        .strftime("%Y%m%d-%H%M%S")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

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
        for (bad, needle) in [
            ("noequals", "expected NAME=URI"),
            ("a=http://h/", "must start with mongodb://"),
            ("=mongodb://h/", "the name"),
        ] {
            let e = parse_targets(&[bad.into()]).unwrap_err().to_string();
            assert!(e.contains(needle), "{bad}: {e}");
        }
        let dup = parse_targets(&["a=mongodb://h/".into(), "a=mongodb://g/".into()]).unwrap_err();
        assert!(dup.to_string().contains("given twice"));
        assert!(
            parse_targets(&[])
                .unwrap_err()
                .to_string()
                .contains("no --target")
        );
    }

    #[test]
    fn server_canaries_parse_by_target_and_refuse_bad_forms() {
        let targets =
            parse_targets(&["a=mongodb://h:1/".into(), "b=mongodb://g:1/".into()]).unwrap();
        let ok = parse_server_canaries(
            &["a=h:27117".into(), "b=[::1]:9".into(), "a=h2:27117".into()],
            &targets,
        )
        .unwrap();
        assert_eq!(
            ok,
            BTreeMap::from([
                (
                    "a".to_owned(),
                    vec!["h:27117".to_owned(), "h2:27117".to_owned()]
                ),
                ("b".to_owned(), vec!["[::1]:9".to_owned()]),
            ])
        );
        for (bad, message) in [
            (
                "h:27117",
                "--server-canary \"h:27117\": expected NAME=HOST:PORT, e.g. mongo-8=10.0.0.5:27117",
            ),
            (
                "c=h:1",
                "--server-canary \"c=h:1\": \"c\" is not one of the --target names",
            ),
            ("a=h", "--server-canary \"a=h\": \"h\" is not HOST:PORT"),
            ("a=:1", "--server-canary \"a=:1\": \":1\" is not HOST:PORT"),
            (
                "a=h:x",
                "--server-canary \"a=h:x\": \"h:x\" is not HOST:PORT",
            ),
        ] {
            let e = parse_server_canaries(&[bad.into()], &targets).unwrap_err();
            assert_eq!(e.to_string(), message);
        }
    }

    #[test]
    fn run_ids_are_utc_timestamps() {
        let id = new_run_id();
        assert_eq!(id.len(), 15, "{id}");
        assert!(id.starts_with("20") && id.as_bytes()[8] == b'-', "{id}");
    }
}
