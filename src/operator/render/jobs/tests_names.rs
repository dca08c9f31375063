//! The names a runner writes under, the names its Role allows and the names the operator reads
//! come from one function each (`contract::names`), whatever the benchmark's name.

use super::*;
use crate::operator::fixtures::{STUDY, bench};

#[test]
fn a_runner_writes_what_its_role_allows_and_the_operator_reads_at_and_over_253_characters() {
    use crate::contract::{Activity, RunnerStep, names as shared};
    use crate::result::{CellId, CellResult, CellStatus};
    use crate::runner::{activity, sink};
    // A benchmark name that makes result names run past 253 characters, and one that lands a
    // result name exactly on it.
    let cell = "psmdb-8.0.x86.1m.r1";
    let exact = "e".repeat(253 - 1 - cell.len());
    for name in ["study".to_owned(), exact, "l".repeat(250)] {
        let b = bench(&name, STUDY);
        let x86 = b.spec.platform("x86").unwrap();
        let targets: Vec<&Target> = b.spec.targets.iter().collect();
        let objects =
            runner_objects(&b, &targets, x86, Vec::new(), &BTreeMap::new(), "img").unwrap();
        let plan: JobPlan =
            serde_yaml::from_str(&objects.plan.data.as_ref().unwrap()[PLAN_KEY]).unwrap();
        let id = CellId {
            benchmark: name.clone(),
            run_id: plan.run_id.clone(),
            workload: "flights/v1".into(),
            target: "psmdb-8.0".into(),
            platform: "x86".into(),
            size: "1M".into(),
            repetition: 1,
        };
        let written =
            sink::result_configmap(&plan, cell, &CellResult::empty(id, CellStatus::Complete))
                .unwrap();
        let written_name = written.metadata.name.clone().unwrap();
        assert!(written_name.len() <= 253, "{}", written_name.len());
        assert_eq!(written_name, shared::result_name(&name, cell));
        let published = activity::activity_configmap(
            &plan,
            Activity {
                target: "psmdb-8.0".into(),
                size: "1M".into(),
                cell: None,
                phase: RunnerStep::Seeding,
            },
        );
        // The runner's Role allows exactly these names.
        let allowed = crate::operator::render::jobs::access::runner_access(&b)
            .unwrap()
            .role
            .rules
            .unwrap()
            .into_iter()
            .flat_map(|r| r.resource_names.unwrap_or_default())
            .collect::<Vec<_>>();
        assert!(
            allowed.contains(&written_name),
            "{name}: result not allowed"
        );
        let published_name = published.metadata.name.clone().unwrap();
        assert!(
            allowed.contains(&published_name),
            "{name}: activity not allowed"
        );
        // The operator finds both by the labels it selects on.
        let labels = written.metadata.labels.unwrap();
        for selector in [
            shared::results_selector(&name, &plan.run_id),
            shared::run_selector(&name, &plan.run_id),
        ] {
            for term in selector.split(',') {
                match term.split_once('=') {
                    Some((k, v)) => {
                        assert_eq!(labels.get(k).map(String::as_str), Some(v), "{term}")
                    }
                    None => assert!(labels.contains_key(term), "{term}"),
                }
            }
        }
        assert!(labels.values().all(|v| v.len() <= 63));
        let activity_labels = published.metadata.labels.unwrap();
        assert_eq!(
            activity_labels[shared::PLATFORM_LABEL],
            shared::label_value("x86")
        );
    }
}
