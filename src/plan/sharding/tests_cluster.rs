//! The cluster bring-up: resumption from every state, exact commands.

use mongodb::bson::{Bson, Document, doc};

use super::*;
use crate::api::Balancer;

fn set(name: &str, port: u16) -> SetLayout {
    SetLayout {
        name: name.to_owned(),
        members: (0..3).map(|i| format!("{name}-{i}:{port}")).collect(),
    }
}

fn layout() -> ClusterLayout {
    ClusterLayout {
        config: set("x-cfg", 27019),
        shards: vec![set("x-shard-0", 27018), set("x-shard-1", 27018)],
    }
}

pub(super) fn keys(d: &Document) -> Vec<&str> {
    d.keys().map(String::as_str).collect()
}

/// What the runner would see after `step` succeeded.
fn apply_cluster(layout: &ClusterLayout, seen: &mut Observed, step: ClusterStep) {
    match step {
        ClusterStep::InitiateConfig => seen.config_initiated = true,
        ClusterStep::InitiateShard(i) => {
            seen.shards_initiated.resize(layout.shards.len(), false);
            seen.shards_initiated[i] = true;
        }
        ClusterStep::WaitForMongos => seen.mongos_up = true,
        ClusterStep::AddShard(i) => seen.shards_added.push(layout.shards[i].name.clone()),
        ClusterStep::SetBalancer(on) => seen.balancer_on = Some(on),
        ClusterStep::Done => panic!("Done has nothing to apply"),
    }
}

fn full_sequence(on: bool) -> Vec<ClusterStep> {
    vec![
        ClusterStep::InitiateConfig,
        ClusterStep::InitiateShard(0),
        ClusterStep::InitiateShard(1),
        ClusterStep::WaitForMongos,
        ClusterStep::AddShard(0),
        ClusterStep::AddShard(1),
        ClusterStep::SetBalancer(on),
        ClusterStep::Done,
    ]
}

/// Resuming after the first k steps of the sequence gives step k, and walking from nothing
/// gives the whole sequence.
fn check_resumption(policy: Balancer, on: bool) {
    let layout = layout();
    let expected = full_sequence(on);
    for k in 0..expected.len() {
        let mut seen = Observed::default();
        for step in &expected[..k] {
            apply_cluster(&layout, &mut seen, *step);
        }
        assert_eq!(
            next_cluster_step(&layout, policy, &seen),
            expected[k],
            "after {k} steps"
        );
    }
    let mut seen = Observed::default();
    let mut walked = Vec::new();
    loop {
        let step = next_cluster_step(&layout, policy, &seen);
        walked.push(step);
        if step == ClusterStep::Done || walked.len() > 20 {
            break;
        }
        apply_cluster(&layout, &mut seen, step);
    }
    assert_eq!(walked, expected);
    assert_eq!(
        seen,
        Observed {
            config_initiated: true,
            shards_initiated: vec![true, true],
            mongos_up: true,
            shards_added: vec!["x-shard-0".to_owned(), "x-shard-1".to_owned()],
            balancer_on: Some(on),
        }
    );
}

#[test]
fn cluster_resumes_at_every_step_with_the_balancer_off() {
    check_resumption(Balancer::Stopped, false);
}

#[test]
fn cluster_resumes_at_every_step_with_the_balancer_on() {
    check_resumption(Balancer::Running, true);
}

fn all_up(balancer_on: Option<bool>) -> Observed {
    Observed {
        config_initiated: true,
        shards_initiated: vec![true, true],
        mongos_up: true,
        shards_added: vec!["x-shard-0".to_owned(), "x-shard-1".to_owned()],
        balancer_on,
    }
}

#[test]
fn balancer_is_set_only_when_it_differs_from_the_policy() {
    let l = layout();
    let next = |policy, on| next_cluster_step(&l, policy, &all_up(on));
    assert_eq!(
        next(Balancer::Stopped, None),
        ClusterStep::SetBalancer(false)
    );
    assert_eq!(
        next(Balancer::Stopped, Some(true)),
        ClusterStep::SetBalancer(false)
    );
    assert_eq!(next(Balancer::Stopped, Some(false)), ClusterStep::Done);
    assert_eq!(
        next(Balancer::Running, None),
        ClusterStep::SetBalancer(true)
    );
    assert_eq!(
        next(Balancer::Running, Some(false)),
        ClusterStep::SetBalancer(true)
    );
    assert_eq!(next(Balancer::Running, Some(true)), ClusterStep::Done);
}

#[test]
fn cluster_steps_follow_partial_and_out_of_order_observations() {
    let l = layout();
    let next = |seen: &Observed| next_cluster_step(&l, Balancer::Stopped, seen);
    // Shards seen initiated before the config set still wait for it.
    let seen = Observed {
        shards_initiated: vec![true, true],
        ..Observed::default()
    };
    assert_eq!(next(&seen), ClusterStep::InitiateConfig);
    // A short per-shard list counts the missing shards as not initiated.
    let seen = Observed {
        config_initiated: true,
        ..Observed::default()
    };
    assert_eq!(next(&seen), ClusterStep::InitiateShard(0));
    let seen = Observed {
        config_initiated: true,
        shards_initiated: vec![true],
        ..Observed::default()
    };
    assert_eq!(next(&seen), ClusterStep::InitiateShard(1));
    let seen = Observed {
        config_initiated: true,
        shards_initiated: vec![false, true],
        ..Observed::default()
    };
    assert_eq!(next(&seen), ClusterStep::InitiateShard(0));
    // Shards added by an earlier runner, but no mongos answering now.
    let seen = Observed {
        mongos_up: false,
        ..all_up(Some(false))
    };
    assert_eq!(next(&seen), ClusterStep::WaitForMongos);
    // Shard 1 added, and a shard of no layout's: shard 0 is still missing.
    let seen = Observed {
        shards_added: vec!["x-shard-1".to_owned(), "stray".to_owned()],
        ..all_up(None)
    };
    assert_eq!(next(&seen), ClusterStep::AddShard(0));
    let seen = Observed {
        shards_added: vec!["x-shard-0".to_owned()],
        ..all_up(None)
    };
    assert_eq!(next(&seen), ClusterStep::AddShard(1));
    // No shards at all: straight from the config set to mongos and the balancer.
    let empty = ClusterLayout {
        config: set("x-cfg", 27019),
        shards: Vec::new(),
    };
    let seen = Observed {
        config_initiated: true,
        ..Observed::default()
    };
    assert_eq!(
        next_cluster_step(&empty, Balancer::Stopped, &seen),
        ClusterStep::WaitForMongos
    );
}

#[test]
fn cluster_commands_are_exact() {
    let l = layout();
    let config = ClusterStep::InitiateConfig.command(&l).unwrap();
    assert_eq!(
        config,
        doc! {"replSetInitiate": {
            "_id": "x-cfg",
            "configsvr": true,
            "members": [
                {"_id": 0, "host": "x-cfg-0:27019", "priority": 2},
                {"_id": 1, "host": "x-cfg-1:27019", "priority": 1},
                {"_id": 2, "host": "x-cfg-2:27019", "priority": 1},
            ],
        }}
    );
    assert_eq!(keys(&config), ["replSetInitiate"]);
    let inner = config.get_document("replSetInitiate").unwrap();
    assert_eq!(keys(inner), ["_id", "configsvr", "members"]);
    assert_eq!(
        inner.get("members").unwrap().as_array().unwrap()[0],
        Bson::Document(doc! {"_id": 0i32, "host": "x-cfg-0:27019", "priority": 2i32})
    );

    let shard = ClusterStep::InitiateShard(1).command(&l).unwrap();
    assert_eq!(
        shard,
        doc! {"replSetInitiate": {
            "_id": "x-shard-1",
            "members": [
                {"_id": 0, "host": "x-shard-1-0:27018", "priority": 2},
                {"_id": 1, "host": "x-shard-1-1:27018", "priority": 1},
                {"_id": 2, "host": "x-shard-1-2:27018", "priority": 1},
            ],
        }}
    );
    assert_eq!(
        keys(shard.get_document("replSetInitiate").unwrap()),
        ["_id", "members"]
    );

    let add = ClusterStep::AddShard(0).command(&l).unwrap();
    assert_eq!(
        add,
        doc! {
            "addShard": "x-shard-0/x-shard-0-0:27018,x-shard-0-1:27018,x-shard-0-2:27018",
            "name": "x-shard-0",
        }
    );
    assert_eq!(keys(&add), ["addShard", "name"]);

    assert_eq!(
        ClusterStep::SetBalancer(false).command(&l),
        Some(doc! {"balancerStop": 1})
    );
    assert_eq!(
        ClusterStep::SetBalancer(true).command(&l),
        Some(doc! {"balancerStart": 1})
    );
    assert_eq!(ClusterStep::WaitForMongos.command(&l), None);
    assert_eq!(ClusterStep::Done.command(&l), None);
    assert_eq!(ClusterStep::InitiateShard(2).command(&l), None);
    assert_eq!(ClusterStep::AddShard(2).command(&l), None);
}

#[test]
fn configdb_is_the_config_set_seed_list() {
    assert_eq!(
        configdb(&layout()),
        "x-cfg/x-cfg-0:27019,x-cfg-1:27019,x-cfg-2:27019"
    );
}

#[test]
fn cluster_steps_read_as_status_text() {
    let l = layout();
    let texts: Vec<(String, String)> = [
        ClusterStep::InitiateConfig,
        ClusterStep::InitiateShard(1),
        ClusterStep::WaitForMongos,
        ClusterStep::AddShard(1),
        ClusterStep::SetBalancer(false),
        ClusterStep::SetBalancer(true),
        ClusterStep::Done,
        ClusterStep::AddShard(7),
    ]
    .iter()
    .map(|s| (s.to_string(), s.describe(&l)))
    .collect();
    let expected = [
        (
            "initiating the config server set",
            "initiating config server set x-cfg",
        ),
        ("initiating shard set #1", "initiating shard set x-shard-1"),
        ("waiting for a mongos", "waiting for a mongos"),
        ("adding shard #1", "adding shard x-shard-1"),
        ("stopping the balancer", "stopping the balancer"),
        ("starting the balancer", "starting the balancer"),
        ("cluster ready", "cluster ready"),
        ("adding shard #7", "adding shard #7"),
    ]
    .map(|(a, b)| (a.to_owned(), b.to_owned()));
    assert_eq!(texts, expected);
}

#[test]
fn layouts_serialize_in_camel_case_and_back() {
    let l = ClusterLayout {
        config: SetLayout {
            name: "c".to_owned(),
            members: vec!["c-0:1".to_owned()],
        },
        shards: vec![SetLayout {
            name: "s".to_owned(),
            members: vec!["s-0:2".to_owned(), "s-1:2".to_owned()],
        }],
    };
    let json = serde_json::to_string(&l).unwrap();
    assert_eq!(
        json,
        r#"{"config":{"name":"c","members":["c-0:1"]},"shards":[{"name":"s","members":["s-0:2","s-1:2"]}]}"#
    );
    assert_eq!(serde_json::from_str::<ClusterLayout>(&json).unwrap(), l);
}
