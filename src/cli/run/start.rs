//! What a local run starts from: the one MongoBenchmark of a manifest and the `--server-canary`
//! arguments (`targets.rs` reads the `--target`s).

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
    fn server_canaries_parse_by_target_and_refuse_bad_forms() {
        use super::super::targets::parse_targets;
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
