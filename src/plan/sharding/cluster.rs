//! Bringing up a cluster the operator provisioned: the observable state, the next step and
//! its exact command. Every replica set, a sharded cluster's or a target's own
//! (`runner/server/rs_init.rs`), is initiated with [`replica_set_config`].

use std::fmt;

use mongodb::bson::{Document, doc};
use serde::{Deserialize, Serialize};

use crate::api::Balancer;

/// One replica set of a cluster: its name and its members' `host:port`, member 0 first.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SetLayout {
    pub name: String,
    pub members: Vec<String>,
}

/// The replica sets of a sharded cluster.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ClusterLayout {
    pub config: SetLayout,
    /// A shard's id is its set name.
    pub shards: Vec<SetLayout>,
}

/// What the runner saw of the cluster just before choosing its next step.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Observed {
    pub config_initiated: bool,
    /// Per `layout.shards` index; a missing entry counts as not initiated.
    pub shards_initiated: Vec<bool>,
    /// A mongos answered `hello` with `msg: "isdbgrid"`.
    pub mongos_up: bool,
    /// The `_id`s `listShards` returned.
    pub shards_added: Vec<String>,
    /// `balancerStatus` mode is not `off`; `None` when not asked yet or unknown.
    pub balancer_on: Option<bool>,
}

/// The next thing to do to bring a sharded cluster up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClusterStep {
    InitiateConfig,
    InitiateShard(usize),
    WaitForMongos,
    AddShard(usize),
    SetBalancer(bool),
    Done,
}

/// The first unfinished step of bringing up `layout` with the balancer `balancer`, given what
/// was seen of it. Every step's completion is observable, so the order alone says where to
/// resume.
pub fn next_cluster_step(
    layout: &ClusterLayout,
    balancer: Balancer,
    seen: &Observed,
) -> ClusterStep {
    if !seen.config_initiated {
        return ClusterStep::InitiateConfig;
    }
    let initiated = |i: usize| seen.shards_initiated.get(i).copied().unwrap_or(false);
    if let Some(i) = (0..layout.shards.len()).find(|&i| !initiated(i)) {
        return ClusterStep::InitiateShard(i);
    }
    // addShard and the balancer commands go through a mongos, and listShards is read there.
    if !seen.mongos_up {
        return ClusterStep::WaitForMongos;
    }
    if let Some(i) = layout
        .shards
        .iter()
        .position(|s| !seen.shards_added.contains(&s.name))
    {
        return ClusterStep::AddShard(i);
    }
    let want = balancer == Balancer::Running;
    if seen.balancer_on != Some(want) {
        return ClusterStep::SetBalancer(want);
    }
    ClusterStep::Done
}

/// `replSetInitiate`'s configuration of `set`: members numbered in order, member 0 preferred
/// as primary so the primary is predictable across runs; a config server set says so.
pub fn replica_set_config(set: &SetLayout, configsvr: bool) -> Document {
    let members: Vec<Document> = set
        .members
        .iter()
        .enumerate()
        .map(|(i, host)| {
            let id = i32::try_from(i).expect("a replica set has at most 50 members");
            let priority = if i == 0 { 2 } else { 1 };
            doc! {"_id": id, "host": host, "priority": priority}
        })
        .collect();
    let mut config = doc! {"_id": &set.name};
    if configsvr {
        config.insert("configsvr", true);
    }
    config.insert("members", members);
    config
}

/// `{balancerStart: 1}` or `{balancerStop: 1}`.
pub fn balancer_command(on: bool) -> Document {
    if on {
        doc! {"balancerStart": 1}
    } else {
        doc! {"balancerStop": 1}
    }
}

fn initiate_command(set: &SetLayout, configsvr: bool) -> Document {
    doc! {"replSetInitiate": replica_set_config(set, configsvr)}
}

/// `<set>/<m0>,<m1>,...`: a replica set seed list, as `--configdb` and `addShard` take it.
fn seed_list(set: &SetLayout) -> String {
    format!("{}/{}", set.name, set.members.join(","))
}

/// The mongos `--configdb` value.
pub fn configdb(layout: &ClusterLayout) -> String {
    seed_list(&layout.config)
}

impl ClusterStep {
    /// The admin command of this step: `InitiateConfig` goes straight to config member 0,
    /// `InitiateShard(i)` to shard i's member 0, the others through a mongos. `None` for
    /// `WaitForMongos`, `Done` and a shard index outside `layout`.
    pub fn command(&self, layout: &ClusterLayout) -> Option<Document> {
        match *self {
            ClusterStep::InitiateConfig => Some(initiate_command(&layout.config, true)),
            ClusterStep::InitiateShard(i) => {
                layout.shards.get(i).map(|s| initiate_command(s, false))
            }
            ClusterStep::AddShard(i) => layout
                .shards
                .get(i)
                .map(|s| doc! {"addShard": seed_list(s), "name": &s.name}),
            ClusterStep::SetBalancer(on) => Some(balancer_command(on)),
            ClusterStep::WaitForMongos | ClusterStep::Done => None,
        }
    }

    /// Like `Display`, with the sets named as `layout` names them.
    pub fn describe(&self, layout: &ClusterLayout) -> String {
        let shard = |i: usize| layout.shards.get(i).map(|s| s.name.as_str());
        match *self {
            ClusterStep::InitiateConfig => {
                format!("initiating config server set {}", layout.config.name)
            }
            ClusterStep::InitiateShard(i) => match shard(i) {
                Some(name) => format!("initiating shard set {name}"),
                None => self.to_string(),
            },
            ClusterStep::AddShard(i) => match shard(i) {
                Some(name) => format!("adding shard {name}"),
                None => self.to_string(),
            },
            _ => self.to_string(),
        }
    }
}

impl fmt::Display for ClusterStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClusterStep::InitiateConfig => f.write_str("initiating the config server set"),
            ClusterStep::InitiateShard(i) => write!(f, "initiating shard set #{i}"),
            ClusterStep::WaitForMongos => f.write_str("waiting for a mongos"),
            ClusterStep::AddShard(i) => write!(f, "adding shard #{i}"),
            ClusterStep::SetBalancer(false) => f.write_str("stopping the balancer"),
            ClusterStep::SetBalancer(true) => f.write_str("starting the balancer"),
            ClusterStep::Done => f.write_str("cluster ready"),
        }
    }
}
