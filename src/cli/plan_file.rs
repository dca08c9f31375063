//! Plan files (`mongobench run --plan FILE`): what the operator writes into a runner Job's
//! ConfigMap, checked before anything runs. A plan of another `planVersion` (or without one),
//! a manifest given in its place, a plan that is not YAML or not the shape of a plan, and a
//! plan whose spec the API server would not have admitted are refused, naming the line and
//! field.

use std::path::Path;

use serde_yaml::Value;

use super::input::{MAX_MANIFEST_BYTES, Problem, invalid, label, read_text};
use super::validate::reader_problem;
use super::yaml_lines::{LineIndex, first_control_character, scan_error};
use crate::api::{self, KIND};
use crate::plan::{JobPlan, PLAN_VERSION, PLAN_VERSION_KEY};

/// What a plan is, quoted in refusals.
fn expected() -> String {
    format!(
        "expected a plan as the operator writes it ({PLAN_VERSION_KEY}: {PLAN_VERSION}, \
         benchmark, runId, platform, targets, spec)"
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
    if let Some((line, c)) = first_control_character(text) {
        return Err(one(Problem::at_line(
            line,
            format!(
                "control character U+{:04X} is not allowed in YAML",
                u32::from(c)
            ),
        )));
    }
    let lines = LineIndex::parse(text).map_err(|e| {
        let (line, message) = scan_error(text, &e);
        one(Problem::at_line(line, message))
    })?;
    if text.trim().is_empty() {
        return Err(one(Problem::file(format!(
            "the file is empty: {}",
            expected()
        ))));
    }
    if lines.documents() != 1 {
        let what = match lines.documents() {
            0 => "only comments".to_string(),
            n => format!("{n} YAML documents"),
        };
        return Err(one(Problem {
            line: lines.line(1, ""),
            path: String::new(),
            message: format!("the file holds {what}: {}", expected()),
        }));
    }
    if let Some(f) = lines.flagged().first() {
        return Err(one(Problem {
            line: Some(f.line),
            path: f.path.clone(),
            message: f.message.clone(),
        }));
    }
    let value: Value = serde_yaml::from_str(text).map_err(|e| one(reader_problem(&e)))?;
    let at = |path: &str| lines.line(0, path);
    let Value::Mapping(map) = &value else {
        return Err(one(Problem {
            line: at(""),
            path: String::new(),
            message: format!("{}, not a plan: {}", describe(&value), expected()),
        }));
    };
    if map.get("kind").and_then(Value::as_str) == Some(KIND) {
        return Err(one(Problem {
            line: at("kind"),
            path: "kind".into(),
            message: format!(
                "this is a {KIND} manifest, not a plan: run it with `mongobench run -f FILE \
                 --target NAME=URI`"
            ),
        }));
    }
    match map.get(PLAN_VERSION_KEY) {
        None => {
            return Err(one(Problem {
                line: at(""),
                path: PLAN_VERSION_KEY.into(),
                message: format!(
                    "required field is missing: not a plan, or one written by a mongobench \
                     before plan versions; this mongobench reads {PLAN_VERSION_KEY} \
                     {PLAN_VERSION}"
                ),
            }));
        }
        Some(v) if v.as_u64() == Some(PLAN_VERSION) => {}
        Some(v) => {
            let shown = serde_yaml::to_string(v).unwrap_or_default();
            return Err(one(Problem {
                line: at(PLAN_VERSION_KEY),
                path: PLAN_VERSION_KEY.into(),
                message: format!(
                    "{} is not a version this mongobench reads ({PLAN_VERSION}): run the runner \
                     with the image of the operator release that wrote the plan",
                    shown.trim()
                ),
            }));
        }
    }
    let plan: JobPlan = serde_yaml::from_str(text).map_err(|e| one(reader_problem(&e)))?;
    let mut problems = Vec::new();
    if plan.targets.is_empty() {
        problems.push(Problem {
            line: at("targets"),
            path: "targets".into(),
            message: "must list at least one target".into(),
        });
    }
    for (i, target) in plan.targets.iter().enumerate() {
        if plan.spec.target(&target.name).is_none() {
            let path = format!("targets[{i}].name");
            problems.push(Problem {
                line: at(&path),
                message: format!(
                    "{:?} is not a target of spec.targets ({})",
                    target.name,
                    plan.spec.target_names().replace(',', ", ")
                ),
                path,
            });
        }
    }
    // The spec went through admission; a plan whose spec would not have is not the operator's.
    problems.extend(api::validate(&plan.spec).into_iter().map(|v| Problem {
        line: at(&v.path),
        path: v.path,
        message: v.message,
    }));
    if problems.is_empty() {
        Ok(plan)
    } else {
        problems.sort_by_key(|p| p.line.unwrap_or(usize::MAX));
        Err(problems)
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
    use crate::plan::JobTarget;

    fn plan() -> JobPlan {
        let doc: serde_json::Value = serde_yaml::from_str(
            "targets: [{name: t, external: {uriSecretRef: {name: s}}}]\n\
             platforms: [{name: local}]\n\
             dataset: {sizes: ['200']}\n\
             workload: {type: flights}\n",
        )
        .unwrap();
        JobPlan {
            benchmark: "b".into(),
            namespace: Some("ns".into()),
            uid: None,
            run_id: "r".into(),
            platform: "local".into(),
            targets: vec![JobTarget {
                name: "t".into(),
                uri_env: "MONGOBENCH_TARGET_URI".into(),
                initiate_members: Vec::new(),
                server_canaries: Vec::new(),
                replica_set_name: None,
                cluster: None,
                facts: None,
                tls: None,
            }],
            completed_cells: Vec::new(),
            board: None,
            spec: serde_json::from_value(doc).unwrap(),
        }
    }

    fn refusal(text: &str) -> Vec<String> {
        parse_plan(text)
            .unwrap_err()
            .iter()
            .map(|p| p.render("plan.yaml"))
            .collect()
    }

    #[test]
    fn a_written_plan_reads_back_and_starts_with_its_version() {
        let text = plan().to_yaml();
        assert!(text.starts_with("planVersion: 1\n"), "{text}");
        assert_eq!(parse_plan(&text).unwrap(), plan());
    }

    #[test]
    fn plans_of_other_versions_or_without_one_are_refused() {
        let text = plan().to_yaml();
        assert_eq!(
            refusal(&text.replace("planVersion: 1", "planVersion: 2")),
            [
                "plan.yaml:1: planVersion: 2 is not a version this mongobench reads (1): run the \
                 runner with the image of the operator release that wrote the plan"
            ]
        );
        let old = text.replace("planVersion: 1\n", "");
        assert_eq!(
            refusal(&old),
            [
                "plan.yaml:1: planVersion: required field is missing: not a plan, or one written \
                 by a mongobench before plan versions; this mongobench reads planVersion 1"
            ]
        );
    }

    #[test]
    fn a_spec_the_api_server_would_refuse_is_refused_with_its_line() {
        let text = plan()
            .to_yaml()
            .replace("type: flights", "type: flights\n    workers: 0");
        let refused = refusal(&text);
        assert_eq!(refused.len(), 1, "{refused:?}");
        assert!(
            refused[0].ends_with(": spec.workload.workers: must be at least 1, got 0"),
            "{refused:?}"
        );
        let line: usize = refused[0].split(':').nth(1).unwrap().parse().unwrap();
        assert_eq!(text.lines().nth(line - 1).unwrap().trim(), "workers: 0");
    }

    #[test]
    fn targets_must_be_named_in_the_spec() {
        let mut p = plan();
        p.targets[0].name = "other".into();
        assert_eq!(
            refusal(&p.to_yaml()),
            ["plan.yaml:7: targets[0].name: \"other\" is not a target of spec.targets (t)"]
        );
        p.targets.clear();
        assert_eq!(
            refusal(&p.to_yaml()),
            ["plan.yaml:6: targets: must list at least one target"]
        );
    }
}
