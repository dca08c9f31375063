//! How the targets of each platform are run: all together by one runner, interleaved, or one
//! after another by a runner each (module docs of `decide/`); the runners (`Unit`s) that
//! follow, in plan order; and `status.runners`, which says which and why.

use super::placement::{self, MemberRequests};
use crate::api::{MongoBenchmark, Placement, Platform, RunnerStatus};
use crate::operator::Error;
use crate::operator::error::SpecError;
use crate::operator::observe::{Observed, PlatformNodes, RunnerKey, Slot};
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

/// Whether `platform` runs its targets interleaved, from its nodes and what has started
/// (module docs).
fn platform_plan(
    bench: &MongoBenchmark,
    platform: &Platform,
    observed: &Observed,
    has_results: bool,
) -> Result<PlatformPlan, Error> {
    use runner_reasons as r;
    let spec = &bench.spec;
    let name = platform.name.as_str();
    if spec.targets.len() == 1 {
        return Ok(PlatformPlan::new(
            true,
            r::SINGLE_TARGET,
            format!("platform {name} has one target"),
        ));
    }
    let provisioned = spec.targets.iter().filter(|t| t.is_provisioned()).count() as u32;
    let not_interleaved = "its targets run one after another, not interleaved";
    let computed = match provisioned {
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
            Some(PlatformNodes::Listed(nodes)) => {
                let rs = spec.replica_set();
                let requests = MemberRequests::of(&rs).map_err(|error| SpecError::Field {
                    field: "spec.replicaSet.resources",
                    error,
                })?;
                // A sharded target is its config server set and every shard's set, each
                // spread over the nodes like a replica set (its routers are not counted).
                let (sets, members) = spec.targets.iter().filter(|t| t.is_provisioned()).fold(
                    (0, rs.members()),
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
                );
                let fit = match spec.placement() {
                    Placement::OwnNodes => placement::fit(nodes, sets, members, &requests),
                    Placement::SharedNodes => {
                        placement::fit_shared(nodes, sets, members, &requests)
                    }
                };
                let said = placement::describe(name, &fit, members, &requests);
                Some(if fit.fits() {
                    PlatformPlan::new(true, r::FITS, said)
                } else {
                    PlatformPlan::new(
                        false,
                        r::INSUFFICIENT_CAPACITY,
                        format!("{said}: {not_interleaved}"),
                    )
                })
            }
            Some(PlatformNodes::Unreadable(why)) => Some(PlatformPlan::new(
                false,
                r::NODES_UNREADABLE,
                format!("the nodes of platform {name} cannot be read ({why}): {not_interleaved}"),
            )),
            None => None,
        },
    };
    let old = bench
        .status
        .as_ref()
        .and_then(|s| s.runners.iter().find(|r| r.platform == name));
    let pinned = if observed
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
    } else if has_results {
        // Its Jobs are gone (deleted by hand) but it had started: as status recorded.
        old.map(|o| o.interleaved)
    } else {
        None
    };
    Ok(match (pinned, computed) {
        (None, Some(plan)) => plan,
        (None, None) => PlatformPlan::new(
            false,
            r::NODES_UNREADABLE,
            format!("the nodes of platform {name} were not read: {not_interleaved}"),
        ),
        // Started: what status said when it started, else what explains it now.
        (Some(mode), computed) => match old.filter(|o| o.interleaved == mode) {
            Some(o) => PlatformPlan::new(mode, &o.reason, o.message.clone()),
            None => match computed.filter(|c| c.interleaved == mode) {
                Some(plan) => plan,
                None if mode => PlatformPlan::new(
                    true,
                    r::STARTED,
                    format!(
                        "the replica sets of platform {name} were created together, its targets run interleaved"
                    ),
                ),
                None => PlatformPlan::new(
                    false,
                    r::STARTED,
                    format!(
                        "the runners of platform {name} started one target at a time: {not_interleaved}"
                    ),
                ),
            },
        },
    })
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
