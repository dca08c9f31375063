//! The ConfigMaps the runners write, read (pure): a cell's result document, refused when it
//! belongs to another benchmark, run or cell, and a platform's activity.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt;

use super::observed::ObservedResult;
use crate::api::MongoBenchmark;
use crate::contract::Activity;
use crate::contract::names::{ACTIVITY_COMPONENT, COMPONENT_LABEL, PLATFORM_LABEL};
use crate::operator::render::names;
use crate::result::CellResult;

/// The platform (spec name) and activity of an activity ConfigMap.
pub(super) fn read_activity(bench: &MongoBenchmark, cm: &ConfigMap) -> Option<(String, Activity)> {
    let labels = cm.labels();
    if labels.get(COMPONENT_LABEL).map(String::as_str) != Some(ACTIVITY_COMPONENT) {
        return None;
    }
    let platform = labels.get(PLATFORM_LABEL)?;
    let name = bench
        .spec
        .platforms
        .iter()
        .find(|p| names::label_value(&p.name) == *platform)?
        .name
        .clone();
    Some((name, Activity::from_data(cm.data.as_ref()?)?))
}

/// `observed` unless its document is of another benchmark, run or cell than the ConfigMap's
/// labels say (a stale copy, a forged or mislabelled ConfigMap): that one is refused, naming
/// what it holds, and never counts as this cell's result.
pub fn owned_result(
    observed: ObservedResult,
    benchmark: &str,
    run_id: &str,
    cell: &str,
) -> ObservedResult {
    let ObservedResult::Document { config_map, result } = observed else {
        return observed;
    };
    let id = &result.cell;
    let holds = crate::plan::cell_id(&id.target, &id.platform, &id.size, id.repetition);
    if id.benchmark == benchmark && id.run_id == run_id && holds == cell {
        return ObservedResult::Document { config_map, result };
    }
    ObservedResult::Unreadable {
        message: format!(
            "result ConfigMap {config_map}: its document is cell {holds} of benchmark {} run {}, \
             not cell {cell} of benchmark {benchmark} run {run_id}; refused",
            id.benchmark, id.run_id
        ),
        config_map,
    }
}

/// The result document of a result ConfigMap.
pub fn read_result(cm: &ConfigMap) -> ObservedResult {
    let config_map = cm.name_any();
    let text = cm
        .data
        .as_ref()
        .and_then(|d| d.get(names::RESULT_KEY))
        .cloned();
    match text {
        None => ObservedResult::Unreadable {
            message: format!(
                "result ConfigMap {config_map} has no key {}",
                names::RESULT_KEY
            ),
            config_map,
        },
        Some(text) => match CellResult::from_json(&text) {
            Ok(result) => ObservedResult::Document {
                config_map,
                result: Box::new(result),
            },
            Err(e) => ObservedResult::Unreadable {
                message: format!("result ConfigMap {config_map}: {e}"),
                config_map,
            },
        },
    }
}
