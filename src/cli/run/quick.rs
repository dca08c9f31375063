//! `mongobench run --workload ycsb-a --duration 60s --target a=URI ...`: a run without a
//! manifest, as YCSB and plgm are run. The flags build the manifest a user would write (its
//! targets external, on the one `local` platform a local run has), which is checked by the
//! same rules as a file (`mongobench validate`) and run like one; `--dry-run` prints it.

use serde_json::{Value, json};

use super::args::{QuickArgs, RunArgs};
use super::start::read_spec;
use super::targets::parse_targets;
use crate::api::{API_VERSION, KIND, MongoBenchmark};
use crate::cli::input::invalid;
use crate::cli::validate::check_text;
use crate::contract::LOCAL_PLATFORM;

/// What the flags stand for when they name no manifest.
const FLAGS: &str = "the run's flags";

/// The flag behind each field the quick flags set.
const FLAG_OF: [(&str, &str); 7] = [
    ("metadata.name", "--name"),
    ("spec.workload.workers", "--workers"),
    ("spec.workload.duration", "--duration"),
    ("spec.workload.warmup", "--warmup"),
    ("spec.dataset.sizes", "--sizes"),
    ("spec.repetitions", "--repetitions"),
    ("spec.targets", "--target"),
];

/// The benchmark to run: the manifest's (`-f`), or the one the quick flags build.
///
/// # Errors
/// An [`Invalid`](crate::cli::input::Invalid) error naming the file, or the flag, that does not
/// make a valid benchmark.
pub(super) fn definition(args: &RunArgs) -> anyhow::Result<MongoBenchmark> {
    match &args.file {
        Some(file) => read_spec(file),
        None => {
            let yaml = manifest(&args.quick, &args.targets)?;
            let report = check_text(&yaml);
            if !report.is_valid() {
                let problems: Vec<String> = report
                    .problems
                    .iter()
                    .map(|p| {
                        let flag = FLAG_OF
                            .iter()
                            .find(|(field, _)| p.path.starts_with(field))
                            .map_or(FLAGS, |(_, flag)| flag);
                        format!("{flag}: {}: {}", p.path, p.message)
                    })
                    .collect();
                return Err(invalid(problems.join("\n")));
            }
            serde_yaml::from_str(&yaml).map_err(|e| invalid(format!("{FLAGS}: {e}")))
        }
    }
}

/// The manifest the quick flags and `--target NAME=URI`s stand for, as YAML: each target
/// reads its URI from a Secret `<name>-<target>` (key `uri`) when applied to a cluster.
///
/// # Errors
/// An [`Invalid`](crate::cli::input::Invalid) error for a workload other than `ycsb-a` to
/// `ycsb-f` or `flights`, or a malformed `--target`.
pub fn manifest(quick: &QuickArgs, targets: &[String]) -> anyhow::Result<String> {
    let name = quick.name.clone().unwrap_or_else(|| "quick".to_owned());
    let workload = quick.workload.as_deref().unwrap_or_default();
    let mut load = match workload.strip_prefix("ycsb-") {
        Some(w @ ("a" | "b" | "c" | "d" | "e" | "f")) => {
            json!({"type": "ycsb", "ycsb": {"workload": w}})
        }
        _ if workload == "flights" => json!({"type": "flights"}),
        _ => {
            return Err(invalid(format!(
                "--workload {workload:?}: expected ycsb-a, ycsb-b, ycsb-c, ycsb-d, ycsb-e, \
                 ycsb-f or flights"
            )));
        }
    };
    let set = |load: &mut Value, key: &str, value: Option<Value>| {
        if let Some(v) = value {
            load[key] = v;
        }
    };
    set(&mut load, "workers", quick.workers.map(Value::from));
    set(
        &mut load,
        "duration",
        quick.duration.clone().map(Value::from),
    );
    set(&mut load, "warmup", quick.warmup.clone().map(Value::from));
    let targets: Vec<Value> = parse_targets(targets)?
        .into_iter()
        .map(|(target, _)| {
            let secret = format!("{name}-{target}");
            json!({"name": target, "external": {"uriSecretRef": {"name": secret, "key": "uri"}}})
        })
        .collect();
    let sizes = if quick.sizes.is_empty() {
        vec!["10k".to_owned()]
    } else {
        quick.sizes.clone()
    };
    let mut spec = json!({
        "targets": targets,
        "platforms": [{"name": LOCAL_PLATFORM}],
        "dataset": {"sizes": sizes},
        "workload": load,
    });
    set(&mut spec, "repetitions", quick.repetitions.map(Value::from));
    let manifest = json!({
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": name},
        "spec": spec,
    });
    Ok(serde_yaml::to_string(&manifest)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flags_make_the_manifest_a_user_would_write() {
        let quick = QuickArgs {
            workload: Some("ycsb-a".into()),
            duration: Some("60s".into()),
            workers: Some(16),
            sizes: vec!["10k".into(), "100k".into()],
            repetitions: Some(3),
            ..QuickArgs::default()
        };
        let targets = ["a=mongodb://h:1/".to_owned(), "b=mongodb://g:2/".to_owned()];
        assert_eq!(
            manifest(&quick, &targets).unwrap(),
            "apiVersion: mongobench.io/v1alpha1
kind: MongoBenchmark
metadata:
  name: quick
spec:
  targets:
  - name: a
    external:
      uriSecretRef:
        name: quick-a
        key: uri
  - name: b
    external:
      uriSecretRef:
        name: quick-b
        key: uri
  platforms:
  - name: local
  dataset:
    sizes:
    - 10k
    - 100k
  workload:
    type: ycsb
    ycsb:
      workload: a
    workers: 16
    duration: 60s
  repetitions: 3
"
        );
    }

    #[test]
    fn an_unknown_workload_or_a_bad_value_is_refused_naming_the_flag() {
        let targets = ["a=mongodb://h:1/".to_owned()];
        let quick = |workload: &str| QuickArgs {
            workload: Some(workload.into()),
            ..QuickArgs::default()
        };
        let e = manifest(&quick("ycsb-z"), &targets)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "--workload \"ycsb-z\": expected ycsb-a, ycsb-b, ycsb-c, ycsb-d, ycsb-e, ycsb-f or flights"
        );
        let args = RunArgs {
            file: None,
            quick: QuickArgs {
                workers: Some(0),
                ..quick("flights")
            },
            targets: targets.to_vec(),
            server_canaries: Vec::new(),
            cpu_sets: None,
            out: None,
            gate: Default::default(),
            plan: None,
            connect_timeout: 10,
            client_processes: 1,
            client_index: None,
            board: None,
        };
        let e = definition(&args).unwrap_err().to_string();
        assert_eq!(
            e,
            "--workers: spec.workload.workers: must be at least 1, got 0"
        );
    }
}
