//! The rules of sharded targets and `spec.workload.sharding`, each violation with its exact
//! text.

use serde_json::{Value, json};

use super::tests::{errors, manifest};

/// The base manifest with its first target sharded and `sharding` as the workload's.
fn sharded(target: Value, workload: Value) -> Value {
    let mut doc = manifest();
    let t = doc["spec"]["targets"][0].as_object_mut().unwrap();
    for (k, v) in target.as_object().unwrap() {
        t.insert(k.clone(), v.clone());
    }
    doc["spec"]["workload"] = workload;
    doc
}

fn flights_key(key: Value) -> Value {
    json!({"type": "flights", "sharding": {"collections": [
        {"collection": "flights", "shardKey": key}]}})
}

#[test]
fn the_sharded_example_shape_is_valid() {
    let doc = sharded(
        json!({"topology": "sharded", "shards": {"count": 2, "members": 3},
               "configServers": {"members": 3}, "mongos": {"replicas": 2}}),
        json!({"type": "flights", "sharding": {"balancer": "stopped", "collections": [
            {"collection": "flights", "shardKey": {"field": "flight_id", "type": "hashed"},
             "preSplit": {"chunksPerShard": 4}}]}}),
    );
    assert_eq!(errors(&doc), Vec::<String>::new());
    let range = sharded(
        json!({"topology": "sharded"}),
        json!({"type": "flights", "sharding": {"collections": [
            {"collection": "flights", "shardKey": {"field": "flight_id", "type": "range"},
             "preSplit": {"points": [300000, 600000]}}]}}),
    );
    assert_eq!(errors(&range), Vec::<String>::new());
    let ycsb = sharded(
        json!({"topology": "sharded"}),
        json!({"type": "ycsb", "ycsb": {"workload": "a", "table": "orders"},
               "sharding": {"collections": [{"collection": "orders",
               "shardKey": {"field": "_id", "type": "range"},
               "preSplit": {"points": ["user3", "user6"]}}]}}),
    );
    assert_eq!(errors(&ycsb), Vec::<String>::new());
}

#[test]
fn a_key_on_a_field_the_workload_does_not_generate_is_refused() {
    assert_eq!(
        errors(&sharded(
            json!({"topology": "sharded"}),
            flights_key(json!({"field": "flightId", "type": "range"}))
        )),
        [
            "spec.workload.sharding.collections[0].shardKey.field: \"flightId\" is not a field \
          the flights workload generates; expected one of: _id, flight_id, airline, \
          agent_first_name, agent_last_name, agent_email, flight_date, origin, destination, \
          flight_code, status, duration_minutes, gate, equipment.plane_type, \
          equipment.total_seats, seats_available"
        ]
    );
    assert_eq!(
        errors(&sharded(
            json!({"topology": "sharded"}),
            flights_key(json!({"field": "status", "type": "hashed"}))
        )),
        [
            "spec.workload.sharding.collections[0].shardKey.field: \"status\" is changed by the \
          flights updates; a shard key there would move documents between shards on every \
          update: pick a field the workload never changes, e.g. flight_id"
        ]
    );
    let ycsb = sharded(
        json!({"topology": "sharded"}),
        json!({"type": "ycsb", "ycsb": {"workload": "a", "fieldCount": 2},
               "sharding": {"collections": [{"collection": "usertable",
               "shardKey": {"field": "field2", "type": "hashed"}}]}}),
    );
    assert_eq!(
        errors(&ycsb),
        [
            "spec.workload.sharding.collections[0].shardKey.field: \"field2\" is not a field the \
          ycsb workload generates; expected one of: _id, field0, field1"
        ]
    );
}

#[test]
fn collections_and_split_points_are_checked() {
    let doc = sharded(
        json!({"topology": "sharded"}),
        json!({"type": "flights", "sharding": {"collections": [
        {"collection": "usertable", "shardKey": {"field": "_id", "type": "hashed"}},
        {"collection": "flights", "shardKey": {"field": "flight_id", "type": "range"},
         "preSplit": {"points": [600000, 300000]}},
        {"collection": "flights", "shardKey": {"field": "flight_id", "type": "hashed"},
         "preSplit": {"points": [1]}},
        ]}}),
    );
    assert_eq!(
        errors(&doc),
        [
            "spec.workload.sharding.collections[0].collection: \"usertable\" is not a \
             collection this flights workload writes; expected flights",
            "spec.workload.sharding.collections[1].preSplit.points[1]: 300000 does not follow \
             600000: split points must be strictly ascending",
            "spec.workload.sharding.collections[2].collection: \"flights\" is already sharded \
             by collections[1]",
            "spec.workload.sharding.collections[2].preSplit.points: applies only to a range \
             shard key: a hashed key's chunks are slices of the hash space; use chunksPerShard",
        ]
    );
    let typed = sharded(
        json!({"topology": "sharded"}),
        json!({"type": "flights", "sharding": {"collections": [
            {"collection": "flights", "shardKey": {"field": "origin", "type": "range"},
             "preSplit": {"points": ["F", 7]}}]}}),
    );
    assert_eq!(
        errors(&typed),
        [
            "spec.workload.sharding.collections[0].preSplit.points[1]: 7 is not a string, the \
          type of origin"
        ]
    );
}

#[test]
fn a_range_key_split_by_chunks_needs_keys_the_generator_can_sample() {
    let flights = sharded(
        json!({"topology": "sharded"}),
        json!({"type": "flights", "sharding": {"collections": [
            {"collection": "flights", "shardKey": {"field": "flight_date", "type": "range"},
             "preSplit": {"chunksPerShard": 2}}]}}),
    );
    assert_eq!(
        errors(&flights),
        [
            "spec.workload.sharding.collections[0].preSplit.chunksPerShard: a range key is cut at \
          quantiles of the keys the generator seeds, and flight_date (a date) has none to \
          sample; split it at points, or use a hashed key"
        ]
    );
    let ycsb = sharded(
        json!({"topology": "sharded"}),
        json!({"type": "ycsb", "ycsb": {"workload": "a"},
               "sharding": {"collections": [{"collection": "usertable",
               "shardKey": {"field": "field0", "type": "range"}, "preSplit": {}}]}}),
    );
    assert_eq!(
        errors(&ycsb),
        [
            "spec.workload.sharding.collections[0].preSplit.chunksPerShard: a range key is cut at \
          quantiles of the keys the generator seeds, and field0 (a random YCSB value) has none \
          to sample; split it at points, or use a hashed key"
        ]
    );
    // Integers and strings of flights, and YCSB's keys, are sampled.
    let range = |field: &str| {
        json!({"shardKey": {"field": field, "type": "range"},
                                     "preSplit": {"chunksPerShard": 2}})
    };
    for field in ["flight_id", "origin"] {
        let mut c = range(field);
        c["collection"] = json!("flights");
        let doc = sharded(
            json!({"topology": "sharded"}),
            json!({"type": "flights", "sharding": {"collections": [c]}}),
        );
        assert_eq!(errors(&doc), Vec::<String>::new(), "{field}");
    }
    let mut c = range("_id");
    c["collection"] = json!("usertable");
    let doc = sharded(
        json!({"topology": "sharded"}),
        json!({"type": "ycsb", "ycsb": {"workload": "a"}, "sharding": {"collections": [c]}}),
    );
    assert_eq!(errors(&doc), Vec::<String>::new());
}

#[test]
fn the_topology_and_the_workload_s_sharding_go_together() {
    assert_eq!(
        errors(&sharded(
            json!({"topology": "sharded"}),
            json!({"type": "flights"})
        )),
        [
            "spec.workload: sharding is required: spec.targets[0] (mongodb-9.0) is sharded; \
             name each collection's shard key, e.g. sharding: {collections: [{collection: flights, \
          shardKey: {field: _id, type: hashed}}]}"
        ]
    );
    assert_eq!(
        errors(&sharded(
            json!({}),
            flights_key(json!({"field": "flight_id", "type": "hashed"}))
        )),
        [
            "spec.workload.sharding: applies only to targets with topology sharded, and no target \
          is"
        ]
    );
    let shaped = sharded(
        json!({"shards": {"count": 2, "members": 2}, "mongos": {"pool": "client"}}),
        json!({"type": "flights"}),
    );
    assert_eq!(
        errors(&shaped),
        [
            "spec.targets[0].shards: shards, configServers and mongos apply only to topology \
             sharded",
            "spec.targets[0].shards.members: must be 1, 3, 5 or 7, got 2",
            "spec.targets[0].mongos.pool: client puts the routers on the client's pool, but \
             spec.client names none (set spec.client.platform or spec.client.nodeSelector)",
        ]
    );
}
