//! How the targets of each platform are run: all together by one runner, interleaved, or one
//! after another by a runner each (module docs of `decide/`); the runners (`Unit`s) that
//! follow, in plan order; and `status.runners`, which says which and why.

use super::placement::{self, MemberRequests};
use crate::api::{MongoBenchmark, MongoBenchmarkSpec, Placement, Platform, RunnerStatus};
use crate::operator::Error;
use crate::operator::error::SpecError;
use crate::operator::observe::{NodeCapacity, Observed, PlatformNodes, RunnerKey, Slot};
use crate::operator::render::names;
use crate::plan::PlannedCell;

/// Reasons of [`RunnerStatus`], documented on its `reason` field.
pub mod runner_reasons {
    /// The platform has one target.
    pub const SINGLE_TARGET: &str = "SingleTarget";
    /// Every target of the platform is external.
    pub const ALL_EXTERNAL: &str = "AllExternal";
    /// One target is provisioned, the others are external.
    pub const ONE_REPLICA_SET: &str = "OneReplicaSet";
    /// The platform's nodes hold every replica set at once.
    pub const FITS: &str = "Fits";
    /// They do not.
    pub const INSUFFICIENT_CAPACITY: &str = "InsufficientCapacity";
    /// The platform's nodes could not be read.
    pub const NODES_UNREADABLE: &str = "NodesUnreadable";
    /// The runners started this way before the reason was recorded.
    pub const STARTED: &str = "Started";
}

/// How the targets of one platform are run.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct PlatformPlan {
    interleaved: bool,
    reason: String,
    message: String,
}

impl PlatformPlan {
    fn new(interleaved: bool, reason: &str, message: String) -> PlatformPlan {
        PlatformPlan {
            interleaved,
            reason: reason.to_owned(),
            message,
        }
    }
}

const NOT_INTERLEAVED: &str = "its targets run one after another, not interleaved";

/// Whether `platform` runs its targets interleaved, from its nodes and what has started
/// (module docs).
fn platform_plan(
    bench: &MongoBenchmark,
    platform: &Platform,
    observed: &Observed,
    has_results: bool,
) -> Result<PlatformPlan, Error> {
    let spec = &bench.spec;
    let name = platform.name.as_str();
    if spec.targets.len() == 1 {
        return Ok(PlatformPlan::new(
            true,
            runner_reasons::SINGLE_TARGET,
            format!("platform {name} has one target"),
        ));
    }
    let provisioned = spec.targets.iter().filter(|t| t.is_provisioned()).count() as u32;
    let computed = computed_plan(spec, name, observed, provisioned)?;
    let old = bench
        .status
        .as_ref()
        .and_then(|s| s.runners.iter().find(|r| r.platform == name));
    let pinned = pinned_mode(
        name,
        observed,
        provisioned,
        has_results.then_some(old).flatten(),
    );
    Ok(match pinned {
        None => computed.unwrap_or_else(|| {
            PlatformPlan::new(
                false,
                runner_reasons::NODES_UNREADABLE,
                format!("the nodes of platform {name} were not read: {NOT_INTERLEAVED}"),
            )
        }),
        Some(mode) => started_plan(name, mode, old, computed),
    })
}

/// How the platform's targets would run judged by the spec and its nodes alone; `None` when
/// its nodes were not read.
fn computed_plan(
    spec: &MongoBenchmarkSpec,
    name: &str,
    observed: &Observed,
    provisioned: u32,
) -> Result<Option<PlatformPlan>, Error> {
    use runner_reasons as r;
    Ok(match provisioned {
        0 => Some(PlatformPlan::new(
            true,
            r::ALL_EXTERNAL,
            format!("every target on platform {name} is external: no replica set to place"),
        )),
        1 => Some(PlatformPlan::new(
            true,
            r::ONE_REPLICA_SET,
            format!("one replica set to place on platform {name}, the other targets are external"),
        )),
        _ => match observed.nodes.get(name) {
            Some(PlatformNodes::Listed(nodes)) => Some(capacity_plan(spec, name, nodes)?),
            Some(PlatformNodes::Unreadable(why)) => Some(PlatformPlan::new(
                false,
                r::NODES_UNREADABLE,
                format!("the nodes of platform {name} cannot be read ({why}): {NOT_INTERLEAVED}"),
            )),
            None => None,
        },
    })
}

/// Whether the platform's `nodes` hold every replica set of its provisioned targets at once.
fn capacity_plan(
    spec: &MongoBenchmarkSpec,
    name: &str,
    nodes: &[NodeCapacity],
) -> Result<PlatformPlan, Error> {
    let rs = spec.replica_set();
    let requests = MemberRequests::of(&rs).map_err(|error| SpecError::Field {
        field: "spec.replicaSet.resources",
        error,
    })?;
    let (sets, members) = sets_to_place(spec);
    let fit = match spec.placement() {
        Placement::OwnNodes => placement::fit(nodes, sets, members, &requests),
        Placement::SharedNodes => placement::fit_shared(nodes, sets, members, &requests),
    };
    let said = placement::describe(name, &fit, members, &requests);
    Ok(if fit.fits() {
        PlatformPlan::new(true, runner_reasons::FITS, said)
    } else {
        PlatformPlan::new(
            false,
            runner_reasons::INSUFFICIENT_CAPACITY,
            format!("{said}: {NOT_INTERLEAVED}"),
        )
    })
}

/// How many replica sets the provisioned targets place on a platform, and the members of the
/// largest. A sharded target is its config server set and every shard's set, each spread over
/// the nodes like a replica set (its routers are not counted).
fn sets_to_place(spec: &MongoBenchmarkSpec) -> (u32, u32) {
    spec.targets.iter().filter(|t| t.is_provisioned()).fold(
        (0, spec.replica_set().members()),
        |(sets, members), t| {
            if t.is_sharded() {
                let shards = t.shards.clone().unwrap_or_default();
                let config = t.config_servers.clone().unwrap_or_default().members();
                (
                    sets + 1 + shards.count(),
                    members.max(config).max(shards.members()),
                )
            } else {
                (sets + 1, members)
            }
        },
    )
}

/// How the platform's runners started, once they did: interleaved with a platform runner's
/// Job or two replica sets created together, not with a one-target Job; once its Jobs are
/// gone, as `recorded` (its status entry, given when it has results).
fn pinned_mode(
    name: &str,
    observed: &Observed,
    provisioned: u32,
    recorded: Option<&RunnerStatus>,
) -> Option<bool> {
    if observed
        .jobs
        .contains_key(&RunnerKey::Platform(name.to_owned()))
    {
        Some(true)
    } else if observed.jobs.keys().any(|k| k.platform() == name) {
        Some(false)
    } else if provisioned >= 2
        && observed
            .stateful_sets
            .keys()
            .filter(|(_, p)| p == name)
            .count()
            >= 2
    {
        Some(true)
    } else {
        // Its Jobs are gone (deleted by hand) but it had started: as status recorded.
        recorded.map(|o| o.interleaved)
    }
}

/// The plan of a platform that started in `mode`: what status said when it started, else
/// what explains it now, else that it started so.
fn started_plan(
    name: &str,
    mode: bool,
    old: Option<&RunnerStatus>,
    computed: Option<PlatformPlan>,
) -> PlatformPlan {
    if let Some(o) = old.filter(|o| o.interleaved == mode) {
        return PlatformPlan::new(mode, &o.reason, o.message.clone());
    }
    match computed.filter(|c| c.interleaved == mode) {
        Some(plan) => plan,
        None if mode => PlatformPlan::new(
            true,
            runner_reasons::STARTED,
            format!(
                "the replica sets of platform {name} were created together, its targets run interleaved"
            ),
        ),
        None => PlatformPlan::new(
            false,
            runner_reasons::STARTED,
            format!(
                "the runners of platform {name} started one target at a time: {NOT_INTERLEAVED}"
            ),
        ),
    }
}

/// One runner: its targets on a platform, and the key of its Job.
#[derive(Debug, Clone)]
pub(super) struct Unit {
    pub platform: String,
    pub targets: Vec<String>,
    pub key: RunnerKey,
}

/// `target a` or `targets a, b`.
pub(super) fn who(targets: &[String]) -> String {
    match targets {
        [one] => format!("target {one}"),
        _ => format!("targets {}", targets.join(", ")),
    }
}

pub(super) fn slot_key(target: &str, platform: &str) -> Slot {
    (target.to_owned(), platform.to_owned())
}

/// Each platform with how its targets run, in spec order.
pub(super) type Plans<'b> = Vec<(&'b Platform, PlatformPlan)>;

/// Per platform, how its targets run; then the runners in plan order (platform by platform,
/// target by target).
pub(super) fn units<'b>(
    bench: &'b MongoBenchmark,
    cells: &[PlannedCell],
    observed: &Observed,
) -> Result<(Plans<'b>, Vec<Unit>), Error> {
    let spec = &bench.spec;
    let target_names: Vec<String> = spec.targets.iter().map(|t| t.name.clone()).collect();
    let mut plans: Plans<'b> = Vec::new();
    let mut units: Vec<Unit> = Vec::new();
    for platform in &spec.platforms {
        let has_results = cells
            .iter()
            .any(|c| c.platform == platform.name && observed.results.contains_key(&c.id));
        let plan = platform_plan(bench, platform, observed, has_results)?;
        let groups: Vec<Vec<String>> = if plan.interleaved {
            vec![target_names.clone()]
        } else {
            target_names.iter().map(|t| vec![t.clone()]).collect()
        };
        for targets in groups {
            units.push(Unit {
                key: RunnerKey::of(&platform.name, &targets),
                platform: platform.name.clone(),
                targets,
            });
        }
        plans.push((platform, plan));
    }
    Ok((plans, units))
}

/// `status.runners`: per platform, how its targets run and the Jobs of its runners.
pub(super) fn runner_statuses(
    bench: &MongoBenchmark,
    plans: Plans<'_>,
    units: &[Unit],
) -> Vec<RunnerStatus> {
    let bench_name = bench.metadata.name.clone().unwrap_or_default();
    let target_names: Vec<String> = bench.spec.targets.iter().map(|t| t.name.clone()).collect();
    plans
        .into_iter()
        .map(|(platform, plan)| RunnerStatus {
            platform: platform.name.clone(),
            targets: target_names.clone(),
            interleaved: plan.interleaved,
            reason: plan.reason,
            message: plan.message,
            jobs: units
                .iter()
                .filter(|u| u.platform == platform.name)
                .map(|u| names::runner_job_name(&bench_name, &u.platform, &u.targets))
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::sets_to_place;
    use crate::operator::fixtures::{SHARDED, STUDY, bench};

    #[test]
    fn a_sharded_target_places_its_config_servers_and_every_shard() {
        let wide = SHARDED.replace(
            "shards: {count: 2, members: 3}",
            "shards: {count: 2, members: 5}",
        );
        // 1 config server set + 2 shards, and the other target's replica set; the widest
        // set is a shard's.
        assert_eq!(sets_to_place(&bench("sh", &wide).spec), (4, 5));
        assert_eq!(sets_to_place(&bench("sh", SHARDED).spec), (4, 3));
    }

    #[test]
    fn an_external_target_places_nothing() {
        assert_eq!(sets_to_place(&bench("s", STUDY).spec), (1, 3));
    }
}
