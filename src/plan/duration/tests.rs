use super::*;
use crate::api::MongoBenchmarkSpec;

/// Two targets (one provisioned replica set of 3 members, one external) on two priced
/// platforms, 1k and 10k documents, 3 repetitions of a 10 s warm-up and a 60 s phase.
fn spec(extra: &str) -> MongoBenchmarkSpec {
    serde_yaml::from_str(&format!(
        "targets:
  - {{name: a, image: 'mongo:8.0'}}
  - {{name: b, external: {{uriSecretRef: {{name: s}}}}}}
platforms:
  - {{name: p, pricePerNodeHour: 0.5}}
  - {{name: q, pricePerNodeHour: 0.25}}
dataset: {{sizes: ['1000', '10000']}}
workload: {{type: flights, workers: 4, warmup: 10s, duration: 60s}}
repetitions: 3
{extra}"
    ))
    .unwrap()
}

#[test]
fn initiation_and_seeding_are_charged_to_the_first_cell_that_needs_them() {
    let s = spec("");
    let cells = crate::plan::cells_of(&s, "a", "p").unwrap();
    let seconds = cell_seconds(&s, &cells, &EXPECTED_RATES).unwrap();
    // Per cell 10 + 60 + 30; the first also 45 to initiate and 1000 / 5000 to seed, the
    // fourth (the first of 10k) 10000 / 5000.
    assert_eq!(seconds, [145.2, 100.0, 100.0, 102.0, 100.0, 100.0]);
}

#[test]
fn a_benchmark_takes_its_slowest_platform_side_by_side_and_their_sum_in_sequence() {
    // Per target and platform: 6 × 100 + 45 + (1000 + 10000) / 5000 = 647.2 s.
    let side_by_side = estimate(&spec(""), &EXPECTED_RATES).unwrap();
    assert_eq!(side_by_side.cells, 24);
    assert!((side_by_side.wall_seconds - 2.0 * 647.2).abs() < 1e-9);
    // Only target a has nodes: 3 members for 647.2 s on each platform.
    let node_hours = 3.0 * 647.2 / 3600.0;
    assert!((side_by_side.server_node_hours - 2.0 * node_hours).abs() < 1e-9);
    assert!((side_by_side.client_pod_hours - 4.0 * 647.2 / 3600.0).abs() < 1e-9);
    let cost = side_by_side.cost.unwrap();
    assert!((cost - node_hours * (0.5 + 0.25)).abs() < 1e-9, "{cost}");

    let in_sequence = estimate(&spec("parallelism: Sequential"), &EXPECTED_RATES).unwrap();
    assert!((in_sequence.wall_seconds - 4.0 * 647.2).abs() < 1e-9);
    // Simultaneous targets: a platform takes its longest target's time; the nodes are the same.
    let together = estimate(&spec("parallelism: Simultaneous"), &EXPECTED_RATES).unwrap();
    assert!((together.wall_seconds - 647.2).abs() < 1e-9);
    assert_eq!(together.server_node_hours, side_by_side.server_node_hours);
    assert_eq!(
        side_by_side.summary(&spec("")),
        "24 cells in about 21m34s (2 platforms side by side), 1.1 server node-hours, \
         0.7 client pod-hours, cost 0.40 at the platforms' pricePerNodeHour"
    );
}

#[test]
fn a_warm_up_until_settled_is_expected_to_settle_in_two_rounds_and_allowed_all() {
    let s = spec("");
    let mut settling = s.clone();
    settling.workload = serde_yaml::from_str(
        "{type: flights, workers: 4, warmup: 10s, duration: 60s, warmupUntilSettled: {maxRounds: 5}}",
    )
    .unwrap();
    let cells = crate::plan::cells_of(&s, "a", "p").unwrap();
    let plain = cell_seconds(&s, &cells, &EXPECTED_RATES).unwrap();
    let expected = cell_seconds(&settling, &cells, &EXPECTED_RATES).unwrap();
    let allowed = cell_seconds(&settling, &cells, &DEADLINE_RATES).unwrap();
    let deadline_plain = cell_seconds(&s, &cells, &DEADLINE_RATES).unwrap();
    assert_eq!(expected[1] - plain[1], 10.0);
    assert_eq!(allowed[1] - deadline_plain[1], 40.0);
}

#[test]
fn a_cost_needs_a_price_for_every_platform_with_servers() {
    let mut unpriced = spec("");
    unpriced.platforms[1].price_per_node_hour = None;
    assert_eq!(estimate(&unpriced, &EXPECTED_RATES).unwrap().cost, None);
}

#[test]
fn a_sharded_target_takes_its_shards_config_servers_and_routers() {
    let s: MongoBenchmarkSpec = serde_yaml::from_str(
        "targets:
  - {name: a, image: 'mongo:8.0', topology: sharded, shards: {count: 2, members: 3},
     configServers: {members: 1}, mongos: {replicas: 2}}
  - {name: c, image: 'mongo:8.0', topology: sharded, mongos: {pool: client}}
platforms: [{name: p}]
dataset: {sizes: ['1000']}
workload: {type: flights}
",
    )
    .unwrap();
    assert_eq!(server_nodes(&s, &s.targets[0]), 2 * 3 + 1 + 2);
    // Defaults: 2 shards of 3, 3 config servers; the routers on the client's pool.
    assert_eq!(server_nodes(&s, &s.targets[1]), 2 * 3 + 3);
}

#[test]
fn durations_read_as_people_write_them() {
    assert_eq!(duration_text(12.4), "12s");
    assert_eq!(duration_text(250.0), "4m10s");
    assert_eq!(duration_text(3720.0), "1h02m");
    assert_eq!(duration_text(-5.0), "0s");
}
