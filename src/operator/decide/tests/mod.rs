//! Tests of the pure decision: every step, order, failure and restart case, by theme. The
//! helpers here build observations and read decisions.

use std::time::Duration;

use k8s_openapi::jiff::Timestamp;

use super::*;
use crate::api::CellPhase;
use crate::operator::fixtures::bench;
use crate::operator::observe::{PodProblem, RunnerKey, ServerPod};
use crate::operator::testing;

mod interleaving;
mod lifecycle;
mod progress;
mod stalls;

const SPEC: &str = "\
targets:
  - {name: a, image: 'mongo:8.0.4', distribution: community}
  - {name: b, image: 'mongo:9.0.1', distribution: community}
platforms:
  - {name: p, nodeSelector: {pool: p}}
  - {name: q, nodeSelector: {pool: q}}
replicaSet: {members: 3, storageSize: 1Gi}
dataset: {sizes: [1k]}
workload: {type: flights}
repetitions: 2
";

fn at(s: i64) -> Timestamp {
    Timestamp::from_second(1_700_000_000 + s).unwrap()
}

fn settings(s: i64) -> Settings {
    Settings {
        now: at(s),
        stall_deadline: Duration::from_secs(60),
        resync: Duration::from_secs(30),
    }
}

fn slot(t: &str, p: &str) -> Slot {
    (t.to_owned(), p.to_owned())
}

fn servers(t: &str, p: &str) -> Change {
    Change::CreateServers {
        target: t.into(),
        platform: p.into(),
    }
}

fn runner(t: &str, p: &str, done: &[&str]) -> Change {
    runners(&[t], p, done)
}

/// The runner of `targets` on `p` (one target, or every target of the platform).
fn runners(targets: &[&str], p: &str, done: &[&str]) -> Change {
    Change::StartRunner {
        platform: p.into(),
        targets: targets.iter().map(|t| t.to_string()).collect(),
        completed_cells: done.iter().map(|s| s.to_string()).collect(),
    }
}

/// The Job key of target `t`'s own runner on `p`.
fn job(t: &str, p: &str) -> RunnerKey {
    RunnerKey::Target(slot(t, p))
}

fn add_result(o: &mut Observed, t: &str, p: &str, rep: u32) {
    let id = crate::plan::cell_id(t, p, "1k", rep);
    let result = testing::result("bench", t, p, "1k", rep, 10, &[("find", 1000, 100)], None);
    o.results.insert(
        id.clone(),
        ObservedResult::Document {
            config_map: format!("bench-{id}"),
            result: Box::new(result),
        },
    );
}

fn pods(o: &mut Observed, t: &str, p: &str, problem: Option<PodProblem>, created: i64) {
    for i in 0..3 {
        o.server_pods.push(ServerPod {
            name: format!("bench-{t}-{p}-{i}"),
            slot: slot(t, p),
            node: problem.is_none().then(|| format!("{p}-{i}")),
            created: Some(at(created)),
            problem: problem.clone(),
        });
    }
}

fn phases(d: &Decision) -> Vec<CellPhase> {
    d.status.cells.iter().map(|c| c.phase).collect()
}

fn cond<'a>(d: &'a Decision, t: &str) -> (&'a str, &'a str, &'a str) {
    let c = d.status.condition(t).unwrap();
    (c.status.as_str(), c.reason.as_str(), c.message.as_str())
}

fn platform_job(p: &str) -> RunnerKey {
    RunnerKey::Platform(p.to_owned())
}

const EXTERNAL: &str = "\
targets:
  - {name: a, external: {uriSecretRef: {name: s}}}
  - {name: b, external: {uriSecretRef: {name: s}}}
platforms: [{name: local}]
dataset: {sizes: [1k]}
workload: {type: flights}
repetitions: 2
";
