//! Plan files (`mongobench run --plan FILE`): what the operator writes into a runner Job's
//! ConfigMap, checked before anything runs. A plan of another `planVersion` (or without one),
//! a manifest given in its place, a plan that is not YAML or not the shape of a plan, and a
//! plan no operator writes (no target, a target twice, no size, zero workers, ...) are
//! refused, naming the line and field.

use std::path::Path;

use serde_yaml::Value;

use super::input::{MAX_MANIFEST_BYTES, Problem, invalid, label, read_text};
use super::validate::reader_problem;
use super::yaml_lines::{LineIndex, first_control_character, scan_error};
use crate::api::KIND;
use crate::contract::{JobPlan, PLAN_VERSION, PLAN_VERSION_KEY};

/// What a plan is, quoted in refusals.
fn expected() -> String {
    format!(
        "expected a plan as the operator writes it ({PLAN_VERSION_KEY}: {PLAN_VERSION}, \
         benchmark, runId, platform, targets, run)"
    )
}

/// Reads and checks the plan in `path`.
///
/// # Errors
/// An [`invalid`](super::input::Invalid) error, one line per problem, each
/// `FILE:LINE: field: message`.
pub fn read_plan(path: &Path) -> anyhow::Result<JobPlan> {
    let file = label(path);
    let text = read_text(path, MAX_MANIFEST_BYTES, "plan").map_err(|p| invalid(p.render(&file)))?;
    parse_plan(&text).map_err(|problems| {
        invalid(
            problems
                .iter()
                .map(|p| p.render(&file))
                .collect::<Vec<_>>()
                .join("\n"),
        )
    })
}

/// Parses and checks a plan file's text.
///
/// # Errors
/// Every problem found, in line order (at least one).
pub fn parse_plan(text: &str) -> Result<JobPlan, Vec<Problem>> {
    let one = |p: Problem| vec![p];
    let lines = plan_lines(text).map_err(one)?;
    let value: Value = serde_yaml::from_str(text).map_err(|e| one(reader_problem(&e)))?;
    check_is_plan(&value, &lines).map_err(one)?;
    let plan: JobPlan = serde_yaml::from_str(text).map_err(|e| one(reader_problem(&e)))?;
    let mut problems: Vec<Problem> = plan
        .problems()
        .into_iter()
        .map(|(path, message)| Problem {
            line: lines.line(0, &path),
            path,
            message,
        })
        .collect();
    if problems.is_empty() {
        Ok(plan)
    } else {
        problems.sort_by_key(|p| p.line.unwrap_or(usize::MAX));
        Err(problems)
    }
}

/// The lines of a plan file that is one YAML document, free of control characters and of the
/// constructs the line index flags.
fn plan_lines(text: &str) -> Result<LineIndex, Problem> {
    if let Some((line, c)) = first_control_character(text) {
        return Err(Problem::at_line(
            line,
            format!(
                "control character U+{:04X} is not allowed in YAML",
                u32::from(c)
            ),
        ));
    }
    let lines = LineIndex::parse(text).map_err(|e| {
        let (line, message) = scan_error(text, &e);
        Problem::at_line(line, message)
    })?;
    if text.trim().is_empty() {
        return Err(Problem::file(format!("the file is empty: {}", expected())));
    }
    if lines.documents() != 1 {
        let what = match lines.documents() {
            0 => "only comments".to_string(),
            n => format!("{n} YAML documents"),
        };
        return Err(Problem {
            line: lines.line(1, ""),
            path: String::new(),
            message: format!("the file holds {what}: {}", expected()),
        });
    }
    if let Some(f) = lines.flagged().first() {
        return Err(Problem {
            line: Some(f.line),
            path: f.path.clone(),
            message: f.message.clone(),
        });
    }
    Ok(lines)
}

/// Refuses a document that is not a plan of this `planVersion`: not a mapping, a manifest, a
/// plan without a version or of another one.
fn check_is_plan(value: &Value, lines: &LineIndex) -> Result<(), Problem> {
    let at = |path: &str| lines.line(0, path);
    let Value::Mapping(map) = value else {
        return Err(Problem {
            line: at(""),
            path: String::new(),
            message: format!("{}, not a plan: {}", describe(value), expected()),
        });
    };
    if map.get("kind").and_then(Value::as_str) == Some(KIND) {
        return Err(Problem {
            line: at("kind"),
            path: "kind".into(),
            message: format!(
                "this is a {KIND} manifest, not a plan: run it with `mongobench run -f FILE \
                 --target NAME=URI`"
            ),
        });
    }
    match map.get(PLAN_VERSION_KEY) {
        None => Err(Problem {
            line: at(""),
            path: PLAN_VERSION_KEY.into(),
            message: format!(
                "required field is missing: not a plan, or one written by a mongobench \
                 before plan versions; this mongobench reads {PLAN_VERSION_KEY} \
                 {PLAN_VERSION}"
            ),
        }),
        Some(v) if v.as_u64() == Some(PLAN_VERSION) => Ok(()),
        Some(v) => {
            let shown = serde_yaml::to_string(v).unwrap_or_default();
            Err(Problem {
                line: at(PLAN_VERSION_KEY),
                path: PLAN_VERSION_KEY.into(),
                message: format!(
                    "{} is not a version this mongobench reads ({PLAN_VERSION}): run the runner \
                     with the image of the operator release that wrote the plan",
                    shown.trim()
                ),
            })
        }
    }
}

fn describe(value: &Value) -> &'static str {
    match value {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Sequence(_) => "a list",
        Value::Mapping(_) => "a mapping",
        Value::Tagged(_) => "a tagged value",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> JobPlan {
        let spec: crate::api::MongoBenchmarkSpec = serde_yaml::from_str(
            "targets: [{name: t, external: {uriSecretRef: {name: s}}}]\n\
             platforms: [{name: local}]\n\
             dataset: {sizes: ['200']}\n\
             workload: {type: flights}\n",
        )
        .unwrap();
        let mut plan = JobPlan::local(&spec, "b", "r", &["t".to_owned()]).unwrap();
        plan.namespace = Some("ns".into());
        plan.targets[0].uri_env = "MONGOBENCH_TARGET_URI".into();
        plan
    }

    fn refusal(text: &str) -> Vec<String> {
        parse_plan(text)
            .unwrap_err()
            .iter()
            .map(|p| p.render("plan.yaml"))
            .collect()
    }

    /// The line of `text` (from 1) that starts with `start` after its indentation.
    fn line_of(text: &str, start: &str) -> usize {
        1 + text
            .lines()
            .position(|l| l.trim_start().starts_with(start))
            .unwrap_or_else(|| panic!("no line starting {start:?} in\n{text}"))
    }

    #[test]
    fn a_written_plan_reads_back_and_starts_with_its_version() {
        let text = plan().to_yaml();
        assert!(text.starts_with("planVersion: 2\n"), "{text}");
        assert_eq!(parse_plan(&text).unwrap(), plan());
    }

    #[test]
    fn plans_of_other_versions_or_without_one_are_refused() {
        let text = plan().to_yaml();
        assert_eq!(
            refusal(&text.replace("planVersion: 2", "planVersion: 1")),
            [
                "plan.yaml:1: planVersion: 1 is not a version this mongobench reads (2): run the \
                 runner with the image of the operator release that wrote the plan"
            ]
        );
        let old = text.replace("planVersion: 2\n", "");
        assert_eq!(
            refusal(&old),
            [
                "plan.yaml:1: planVersion: required field is missing: not a plan, or one written \
                 by a mongobench before plan versions; this mongobench reads planVersion 2"
            ]
        );
    }

    #[test]
    fn a_run_no_operator_writes_is_refused_with_its_line() {
        let mut p = plan();
        p.run.settings.workers = 0;
        let text = p.to_yaml();
        let refused = refusal(&text);
        let line = line_of(&text, "settings:") + 1;
        assert_eq!(
            refused,
            [format!(
                "plan.yaml:{line}: run.settings.workers: must be at least 1, got 0"
            )]
        );
        assert_eq!(text.lines().nth(line - 1).unwrap().trim(), "workers: 0");
    }

    #[test]
    fn targets_must_be_listed_once_and_initiated_sets_named() {
        let mut p = plan();
        p.targets.push(p.targets[0].clone());
        p.targets[1].initiate_members = vec!["h:27017".into()];
        let text = p.to_yaml();
        // The second target's entry, past the first's two lines.
        let second = line_of(&text, "- name: t") + 2;
        assert!(
            text.lines()
                .nth(second - 1)
                .unwrap()
                .starts_with("- name: t")
        );
        assert_eq!(
            refusal(&text),
            [
                format!(
                    "plan.yaml:{}: targets[1].name: \"t\" is given twice",
                    second
                ),
                format!(
                    "plan.yaml:{}: targets[1].replicaSetName: required with initiateMembers",
                    second
                )
            ]
        );
        p.targets.clear();
        let text = p.to_yaml();
        assert_eq!(
            refusal(&text),
            [format!(
                "plan.yaml:{}: targets: must list at least one target",
                line_of(&text, "targets:")
            )]
        );
    }
}
