//! The cross-field rules of the spec outside `workload` (targets, platforms, baseline,
//! precision, client, replica set, dataset sizes): the CEL rules of the CRD restated with
//! precise field paths and the offending values.

use super::sharding::check_sharding;
use super::violation::Violation;
use super::workload::check_workload;
use crate::api::spec::MongoBenchmarkSpec;
use crate::api::targets::{ARCH_LABEL, Arch};
use crate::api::units::{DatasetSize, parse_dataset_size};

/// The cross-field rules (the CEL rules of the CRD).
pub(super) fn check_rules(spec: &MongoBenchmarkSpec, out: &mut Vec<Violation>) {
    check_targets(spec, out);
    check_platforms(spec, out);
    check_baseline(spec, out);
    check_precision(spec, out);
    check_client(spec, out);
    check_simultaneous(spec, out);
    check_placement(spec, out);
    check_replica_set(spec, out);
    check_dataset_sizes(&spec.dataset.sizes, out);
    check_workload(&spec.workload, out);
    check_sharding(spec, out);
}

fn check_targets(spec: &MongoBenchmarkSpec, out: &mut Vec<Violation>) {
    for (i, target) in spec.targets.iter().enumerate() {
        let path = format!("spec.targets[{i}]");
        if let Some(j) = spec.targets[..i].iter().position(|t| t.name == target.name) {
            out.push(Violation::new(
                &format!("{path}.name"),
                format!(
                    "duplicate target name {:?} (also spec.targets[{j}].name): target names must \
                     be unique",
                    target.name
                ),
            ));
        }
        match (target.image.is_some(), target.external.is_some()) {
            (true, true) => out.push(Violation::new(
                &path,
                "set exactly one of image or external, not both",
            )),
            (false, false) => out.push(Violation::new(
                &path,
                "set exactly one of image (a server the operator provisions) or external (an \
                 existing deployment)",
            )),
            _ => {}
        }
        if target.image.is_some() && target.distribution.is_none() {
            out.push(Violation::new(
                &format!("{path}.distribution"),
                "required with image: community or percona",
            ));
        }
        if target.image.is_none()
            && (target.distribution.is_some() || !target.mongod_args.is_empty())
        {
            out.push(Violation::new(
                &path,
                "distribution and mongodArgs apply only to a target with an image",
            ));
        }
    }
}

fn check_platforms(spec: &MongoBenchmarkSpec, out: &mut Vec<Violation>) {
    for (i, platform) in spec.platforms.iter().enumerate() {
        let path = format!("spec.platforms[{i}]");
        if let Some(j) = spec.platforms[..i]
            .iter()
            .position(|p| p.name == platform.name)
        {
            out.push(Violation::new(
                &format!("{path}.name"),
                format!(
                    "duplicate platform name {:?} (also spec.platforms[{j}].name): platform \
                     names must be unique",
                    platform.name
                ),
            ));
        }
        if let (Some(arch), Some(selected)) =
            (platform.arch, platform.node_selector.get(ARCH_LABEL))
            && selected != arch.as_str()
        {
            let arch_name = match arch {
                Arch::Amd64 => "amd64",
                Arch::Arm64 => "arm64",
            };
            out.push(Violation::new(
                &format!("{path}.arch"),
                format!(
                    "{arch_name} contradicts nodeSelector kubernetes.io/arch={selected}: drop one \
                     or make them agree"
                ),
            ));
        }
    }
}

fn check_baseline(spec: &MongoBenchmarkSpec, out: &mut Vec<Violation>) {
    if let Some(baseline) = &spec.baseline
        && spec.target(baseline).is_none()
    {
        out.push(Violation::new(
            "spec.baseline",
            format!(
                "{baseline:?} is not the name of a target (targets: {})",
                spec.target_names().replace(',', ", ")
            ),
        ));
    }
}

fn check_precision(spec: &MongoBenchmarkSpec, out: &mut Vec<Violation>) {
    let Some(precision) = &spec.precision else {
        return;
    };
    if spec.targets.len() < 2 {
        out.push(Violation::new(
            "spec.precision",
            "needs at least two targets: it is the resolving power of their comparison",
        ));
    }
    if let Some(max) = precision.max_repetitions
        && max < spec.repetitions()
    {
        out.push(Violation::new(
            "spec.precision.maxRepetitions",
            format!(
                "{max} is fewer than spec.repetitions ({}): the goal adds repetitions, it never \
                 runs fewer",
                spec.repetitions()
            ),
        ));
    }
    if precision.max_duration.as_deref() == Some("0") {
        out.push(Violation::new(
            "spec.precision.maxDuration",
            "must be longer than 0",
        ));
    }
}

/// `placement: SharedNodes` puts replica-set members side by side; sharded targets have none.
fn check_placement(spec: &MongoBenchmarkSpec, out: &mut Vec<Violation>) {
    if spec.placement() == crate::api::Placement::SharedNodes
        && let Some(t) = spec.targets.iter().find(|t| t.is_sharded())
    {
        out.push(Violation::new(
            "spec.placement",
            format!(
                "SharedNodes places replica sets' members side by side; target {:?} is sharded, \
                 whose sets and routers have no such place, so use OwnNodes",
                t.name
            ),
        ));
    }
}

/// `parallelism: Simultaneous` measures every target over one window of time from one client.
fn check_simultaneous(spec: &MongoBenchmarkSpec, out: &mut Vec<Violation>) {
    if spec.parallelism() != crate::api::Parallelism::Simultaneous {
        return;
    }
    if spec.client_pods() != 1 {
        out.push(Violation::new(
            "spec.client.pods",
            format!(
                "{} pods: Simultaneous cells are measured from one client pod; set pods to 1 or \
                 parallelism to PerPlatform",
                spec.client_pods()
            ),
        ));
    }
    let w = &spec.workload;
    if w.sweep.is_some() || w.operations.is_some() {
        out.push(Violation::new(
            "spec.workload",
            "Simultaneous cells share one measured window of time; set duration, not operations \
             or sweep",
        ));
    }
}

fn check_client(spec: &MongoBenchmarkSpec, out: &mut Vec<Violation>) {
    let Some(client) = &spec.client else { return };
    let workers = spec.workload.fewest_workers();
    if client.pods() > workers {
        out.push(Violation::new(
            "spec.client.pods",
            format!(
                "{} pods for {workers} workers: each client pod runs at least one worker, so \
                 pods must not exceed spec.workload.workers (or the fewest of sweep.workers)",
                client.pods()
            ),
        ));
    }
    let Some(platform) = &client.platform else {
        return;
    };
    if spec.platform(platform).is_none() {
        out.push(Violation::new(
            "spec.client.platform",
            format!(
                "{platform:?} is not the name of a platform (platforms: {})",
                spec.platform_names().replace(',', ", ")
            ),
        ));
    }
    if !client.node_selector.is_empty() || !client.tolerations.is_empty() {
        out.push(Violation::new(
            "spec.client.platform",
            "set either platform or nodeSelector/tolerations, not both (platform brings its own)",
        ));
    }
}

fn check_replica_set(spec: &MongoBenchmarkSpec, out: &mut Vec<Violation>) {
    let replica_set = spec.replica_set.clone().unwrap_or_default();
    if let Some(members) = replica_set.members
        && ![1, 3, 5, 7].contains(&members)
    {
        out.push(Violation::new(
            "spec.replicaSet.members",
            format!("must be 1, 3, 5 or 7 (an odd number of voting members), got {members}"),
        ));
    }
    if spec.provisions_servers() && replica_set.storage_size.is_none() {
        out.push(Violation::new(
            "spec.replicaSet.storageSize",
            "required when a target has an image: the size of each member's data volume, e.g. \
             50Gi",
        ));
    }
}

fn check_dataset_sizes(sizes: &[String], out: &mut Vec<Violation>) {
    // Syntax errors are reported by the schema check; order and kind need every size.
    let Ok(parsed) = sizes
        .iter()
        .map(|s| parse_dataset_size(s))
        .collect::<Result<Vec<DatasetSize>, _>>()
    else {
        return;
    };
    if let Some(first) = parsed.first()
        && !parsed.iter().all(|s| s.same_kind(*first))
    {
        out.push(Violation::new(
            "spec.dataset.sizes",
            format!(
                "mixes document counts and data sizes ({}): use one kind, e.g. [1M, 4M] or \
                 [1GiB, 4GiB]",
                sizes.join(", ")
            ),
        ));
        return;
    }
    for i in 1..parsed.len() {
        if parsed[i].value() <= parsed[i - 1].value() {
            out.push(Violation::new(
                &format!("spec.dataset.sizes[{i}]"),
                format!(
                    "{:?} ({}) must be larger than the size before it, {:?} ({}): sizes must be \
                     strictly ascending",
                    sizes[i],
                    parsed[i],
                    sizes[i - 1],
                    parsed[i - 1]
                ),
            ));
        }
    }
}
