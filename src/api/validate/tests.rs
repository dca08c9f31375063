use super::*;
use serde_json::json;

/// A small valid manifest; tests change one thing in it.
pub(super) fn manifest() -> Value {
    json!({
        "apiVersion": "mongobench.io/v1alpha1",
        "kind": "MongoBenchmark",
        "metadata": {"name": "unit"},
        "spec": {
            "targets": [
                {"name": "mongodb-9.0", "image": "mongo:9.0.4", "distribution": "community"},
                {"name": "psmdb-8.0", "image": "percona/percona-server-mongodb:8.0.34-15",
                 "distribution": "percona"}
            ],
            "platforms": [{"name": "x86", "arch": "amd64"}, {"name": "arm", "arch": "arm64"}],
            "replicaSet": {"storageSize": "50Gi"},
            "dataset": {"sizes": ["1M", "4M"]},
            "workload": {"type": "flights"},
            "baseline": "psmdb-8.0"
        }
    })
}

pub(super) fn with(pointer: &str, value: Value) -> Value {
    let mut doc = manifest();
    let (parent, key) = pointer.rsplit_once('/').expect("a pointer with a parent");
    let parent = doc.pointer_mut(parent).expect("the parent exists");
    match parent {
        Value::Object(map) => {
            map.insert(key.to_string(), value);
        }
        Value::Array(items) => items[key.parse::<usize>().unwrap()] = value,
        _ => panic!("not a container"),
    }
    doc
}

fn without(pointer: &str) -> Value {
    let mut doc = manifest();
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    doc.pointer_mut(parent)
        .unwrap()
        .as_object_mut()
        .unwrap()
        .remove(key);
    doc
}

pub(super) fn errors(doc: &Value) -> Vec<String> {
    validate_document(doc)
        .iter()
        .map(Violation::to_string)
        .collect()
}

#[test]
fn the_base_manifest_is_valid() {
    assert_eq!(errors(&manifest()), Vec::<String>::new());
    let spec: MongoBenchmarkSpec = serde_json::from_value(manifest()["spec"].clone()).unwrap();
    assert_eq!(validate(&spec), vec![]);
}

#[test]
fn api_version_kind_and_name() {
    let mut doc = manifest();
    doc["apiVersion"] = json!("mongobench.io/v1");
    doc["kind"] = json!("Benchmark");
    doc["metadata"] = json!({"name": "Bad_Name"});
    assert_eq!(
        errors(&doc),
        [
            "apiVersion: must be mongobench.io/v1alpha1, got \"mongobench.io/v1\"",
            "kind: must be MongoBenchmark, got \"Benchmark\"",
            "metadata.name: invalid name \"Bad_Name\": expected lowercase letters, digits, \
             '-' and '.', starting and ending with a letter or digit, at most 253 characters",
        ]
    );
    assert_eq!(
        errors(&without("/metadata/name")),
        ["metadata.name: required field is missing"]
    );
}

#[test]
fn duplicate_target_names() {
    let doc = with("/spec/targets/1/name", json!("mongodb-9.0"));
    let doc = {
        let mut d = doc;
        d["spec"]["baseline"] = json!("mongodb-9.0");
        d
    };
    assert_eq!(
        errors(&doc),
        [
            "spec.targets[1].name: duplicate target name \"mongodb-9.0\" (also \
          spec.targets[0].name): target names must be unique"
        ]
    );
}

#[test]
fn target_needs_exactly_one_of_image_and_external() {
    let external = json!({"uriSecretRef": {"name": "uri"}});
    assert_eq!(
        errors(&with("/spec/targets/0/external", external)),
        ["spec.targets[0]: set exactly one of image or external, not both"]
    );
    let neither = with("/spec/targets/0", json!({"name": "mongodb-9.0"}));
    assert_eq!(
        errors(&neither),
        [
            "spec.targets[0]: set exactly one of image (a server the operator provisions) or \
          external (an existing deployment)"
        ]
    );
}

#[test]
fn distribution_goes_with_image_only() {
    assert_eq!(
        errors(&without("/spec/targets/0/distribution")),
        ["spec.targets[0].distribution: required with image: community or percona"]
    );
    let external = json!({"name": "ext", "external": {"uriSecretRef": {"name": "uri"}},
                          "mongodArgs": ["--quiet"]});
    assert_eq!(
        errors(&with("/spec/targets/0", external)),
        ["spec.targets[0]: distribution and mongodArgs apply only to a target with an image"]
    );
}

#[test]
fn duplicate_platform_names() {
    assert_eq!(
        errors(&with("/spec/platforms/1/name", json!("x86"))),
        [
            "spec.platforms[1].name: duplicate platform name \"x86\" (also \
          spec.platforms[0].name): platform names must be unique"
        ]
    );
}

#[test]
fn arch_must_agree_with_the_node_selector() {
    let selector = json!({"kubernetes.io/arch": "amd64"});
    assert_eq!(
        errors(&with("/spec/platforms/1/nodeSelector", selector)),
        [
            "spec.platforms[1].arch: arm64 contradicts nodeSelector kubernetes.io/arch=amd64: \
          drop one or make them agree"
        ]
    );
    let agreeing = json!({"kubernetes.io/arch": "arm64"});
    assert!(errors(&with("/spec/platforms/1/nodeSelector", agreeing)).is_empty());
}

#[test]
fn baseline_must_name_a_target() {
    assert_eq!(
        errors(&with("/spec/baseline", json!("psmdb-7.0"))),
        [
            "spec.baseline: \"psmdb-7.0\" is not the name of a target (targets: mongodb-9.0, \
          psmdb-8.0)"
        ]
    );
}

#[test]
fn client_platform_must_name_a_platform_and_exclude_its_own_placement() {
    assert_eq!(
        errors(&with("/spec/client", json!({"platform": "axion"}))),
        ["spec.client.platform: \"axion\" is not the name of a platform (platforms: x86, arm)"]
    );
    let both = json!({"platform": "x86", "nodeSelector": {"pool": "clients"}});
    assert_eq!(
        errors(&with("/spec/client", both)),
        [
            "spec.client.platform: set either platform or nodeSelector/tolerations, not both \
          (platform brings its own)"
        ]
    );
}

#[test]
fn client_pods_must_not_exceed_the_workers() {
    let doc = with("/spec/client", json!({"pods": 17}));
    assert_eq!(
        errors(&doc),
        [
            "spec.client.pods: 17 pods for 16 workers: each client pod runs at least one \
             worker, so pods must not exceed spec.workload.workers (or the fewest of sweep.workers)"
        ]
    );
    assert!(errors(&with("/spec/client", json!({"pods": 16}))).is_empty());
}

#[test]
fn members_must_be_odd_and_at_most_seven() {
    for members in [1, 3, 5, 7] {
        let doc = with("/spec/replicaSet/members", json!(members));
        assert!(errors(&doc).is_empty(), "{members}");
    }
    assert_eq!(
        errors(&with("/spec/replicaSet/members", json!(2))),
        [
            "spec.replicaSet.members: must be 1, 3, 5 or 7 (an odd number of voting members), \
          got 2"
        ]
    );
}

#[test]
fn storage_size_is_required_when_provisioning() {
    assert_eq!(
        errors(&without("/spec/replicaSet")),
        [
            "spec.replicaSet.storageSize: required when a target has an image: the size of \
          each member's data volume, e.g. 50Gi"
        ]
    );
}

#[test]
fn sizes_must_be_strictly_ascending_and_of_one_kind() {
    assert_eq!(
        errors(&with(
            "/spec/dataset/sizes",
            json!(["1M", "4M", "4000k", "8M", "2M"])
        )),
        [
            "spec.dataset.sizes[2]: \"4000k\" (4000000 documents) must be larger than the \
             size before it, \"4M\" (4000000 documents): sizes must be strictly ascending",
            "spec.dataset.sizes[4]: \"2M\" (2000000 documents) must be larger than the size \
             before it, \"8M\" (8000000 documents): sizes must be strictly ascending",
        ]
    );
    assert_eq!(
        errors(&with("/spec/dataset/sizes", json!(["1M", "4GiB"]))),
        [
            "spec.dataset.sizes: mixes document counts and data sizes (1M, 4GiB): use one \
          kind, e.g. [1M, 4M] or [1GiB, 4GiB]"
        ]
    );
    assert!(errors(&with("/spec/dataset/sizes", json!(["512MiB", "1GiB"]))).is_empty());
}

#[test]
fn size_and_duration_syntax() {
    let doc = with("/spec/dataset/sizes", json!(["1M", "4 M"]));
    assert_eq!(
        errors(&doc),
        [format!(
            "spec.dataset.sizes[1]: invalid dataset size \"4 M\": expected {}",
            crate::api::units::DATASET_SIZE_FORM
        )]
    );
    let doc = with(
        "/spec/workload",
        json!({"type": "flights", "duration": "10min"}),
    );
    assert_eq!(
        errors(&doc),
        [format!(
            "spec.workload.duration: invalid duration \"10min\": expected {}",
            crate::api::units::DURATION_FORM
        )]
    );
    let doc = with(
        "/spec/workload",
        json!({"type": "flights", "duration": "0s"}),
    );
    assert_eq!(
        errors(&doc),
        ["spec.workload.duration: must be longer than 0, got \"0s\""]
    );
}

#[test]
fn workload_blocks_match_the_type() {
    let doc = with("/spec/workload", json!({"type": "ycsb"}));
    assert_eq!(
        errors(&doc),
        [
            "spec.workload.ycsb: required when type is ycsb: name the YCSB workload, e.g. \
          ycsb: {workload: a}"
        ]
    );
    let doc = with(
        "/spec/workload",
        json!({"type": "ycsb", "ycsb": {"workload": "a"},
                                              "flights": {}}),
    );
    assert_eq!(
        errors(&doc),
        ["spec.workload.flights: applies only to type flights; this workload is type ycsb"]
    );
    let doc = with(
        "/spec/workload",
        json!({"type": "flights", "ycsb": {"workload": "a"}}),
    );
    assert_eq!(
        errors(&doc),
        ["spec.workload.ycsb: applies only to type ycsb; this workload is type flights"]
    );
}

#[test]
fn run_length_and_warmup_are_either_or() {
    let doc = with(
        "/spec/workload",
        json!({"type": "flights", "duration": "10m",
                                              "operations": 1000}),
    );
    assert_eq!(
        errors(&doc),
        ["spec.workload.operations: set duration or operations, not both"]
    );
    let doc = with(
        "/spec/workload",
        json!({"type": "flights", "warmup": "1m",
                                              "warmupOperations": 1000}),
    );
    assert_eq!(
        errors(&doc),
        ["spec.workload.warmupOperations: set warmup or warmupOperations, not both"]
    );
}

#[test]
fn workers_bounds() {
    let doc = with("/spec/workload", json!({"type": "flights", "workers": 0}));
    assert_eq!(
        errors(&doc),
        ["spec.workload.workers: must be at least 1, got 0"]
    );
    let doc = with(
        "/spec/workload",
        json!({"type": "flights", "workers": 4097}),
    );
    assert_eq!(
        errors(&doc),
        ["spec.workload.workers: must be at most 4096, got 4097"]
    );
    let doc = with(
        "/spec/workload",
        json!({"type": "flights", "workers": 4096}),
    );
    assert!(errors(&doc).is_empty());
}

#[test]
fn flights_percentages_sum_to_100() {
    let flights = json!({"findPercent": 70, "updatePercent": 20, "deletePercent": 10,
                         "insertPercent": 10});
    let doc = with(
        "/spec/workload",
        json!({"type": "flights", "flights": flights}),
    );
    assert_eq!(
        errors(&doc),
        [
            "spec.workload.flights: findPercent + updatePercent + deletePercent + \
          insertPercent + aggregatePercent + transactionPercent must sum to 100, got 70 + \
          20 + 10 + 10 + 0 + 0 = 110"
        ]
    );
    // Defaults fill the rest: 50 + 20 + 10 + 10 + 10 = 100.
    let flights = json!({"findPercent": 50, "aggregatePercent": 10});
    let doc = with(
        "/spec/workload",
        json!({"type": "flights", "flights": flights}),
    );
    assert!(errors(&doc).is_empty());
}

#[test]
fn flights_splits_sum_to_100() {
    let flights = json!({
        "findSplit": {"byFlightId": 50},
        "updateSplit": {"oneByFlightId": 80, "oneById": 20},
        "deleteSplit": {"manyByFlightId": 0, "oneById": 20},
        "aggregateSplit": {"aircraftWindow": 100}
    });
    let doc = with(
        "/spec/workload",
        json!({"type": "flights", "flights": flights}),
    );
    assert_eq!(
        errors(&doc),
        [
            "spec.workload.flights.findSplit: byFlightId + byRoute + byStatus must sum to \
             100, got 50 + 0 + 0 = 50",
            "spec.workload.flights.updateSplit: oneByFlightId + oneById + manyByFlightId \
             must sum to 100, got 80 + 20 + 10 = 110",
            "spec.workload.flights.aggregateSplit: aircraftWindow + routeSummary must sum \
             to 100, got 100 + 50 = 150",
        ]
    );
}

#[test]
fn ycsb_cross_field_rules() {
    let ycsb = json!({"workload": "c", "readProportion": 0});
    let doc = with("/spec/workload", json!({"type": "ycsb", "ycsb": ycsb}));
    assert_eq!(
        errors(&doc),
        [
            "spec.workload.ycsb: the read, update, insert, scan and readModifyWrite \
          proportions (overrides, else those of the workload) must not all be 0"
        ]
    );
    // Workload E's maxscanlength is 100.
    let ycsb = json!({"workload": "e", "minScanLength": 101});
    let doc = with("/spec/workload", json!({"type": "ycsb", "ycsb": ycsb}));
    assert_eq!(
        errors(&doc),
        ["spec.workload.ycsb.minScanLength: 101 exceeds maxScanLength 100"]
    );
    let ycsb = json!({"workload": "a", "minFieldLength": 200});
    let doc = with("/spec/workload", json!({"type": "ycsb", "ycsb": ycsb}));
    assert_eq!(
        errors(&doc),
        ["spec.workload.ycsb.minFieldLength: 200 exceeds fieldLength 100"]
    );
    let ycsb = json!({"workload": "a", "fieldCount": 17, "fieldLength": 1000000});
    let doc = with("/spec/workload", json!({"type": "ycsb", "ycsb": ycsb}));
    assert_eq!(
        errors(&doc),
        [
            "spec.workload.ycsb.fieldLength: fieldCount 17 × fieldLength 1000000 make records \
          of up to 17000319 bytes, above MongoDB's 16 MiB document limit (16777216 bytes)"
        ]
    );
    let ycsb = json!({"workload": "a", "fieldCount": 16, "fieldLength": 1000000});
    let doc = with("/spec/workload", json!({"type": "ycsb", "ycsb": ycsb}));
    assert_eq!(errors(&doc), Vec::<String>::new());
    let ycsb = json!({"workload": "a", "dataIntegrity": true,
                      "fieldLengthDistribution": "uniform"});
    let doc = with("/spec/workload", json!({"type": "ycsb", "ycsb": ycsb}));
    assert_eq!(
        errors(&doc),
        [
            "spec.workload.ycsb.dataIntegrity: requires fieldLengthDistribution constant, got \
          \"uniform\""
        ]
    );
}

#[test]
fn precision_goals_need_two_targets_and_room_to_add_repetitions() {
    let goal = |p: Value| with("/spec/precision", p);
    assert_eq!(
        errors(&goal(
            json!({"mdePercent": 3, "maxRepetitions": 30, "maxDuration": "2h"})
        )),
        Vec::<String>::new()
    );
    assert_eq!(
        errors(&goal(json!({"mdePercent": 0}))),
        ["spec.precision.mdePercent: must be at least 0.1, got 0"]
    );
    assert_eq!(
        errors(&goal(json!({"mdePercent": 3, "maxRepetitions": 2}))),
        [
            "spec.precision.maxRepetitions: 2 is fewer than spec.repetitions (3): the goal \
             adds repetitions, it never runs fewer"
        ]
    );
    assert_eq!(
        errors(&goal(json!({"mdePercent": 3, "maxDuration": "0"}))),
        ["spec.precision.maxDuration: must be longer than 0"]
    );
    let mut one = goal(json!({"mdePercent": 3}));
    one["spec"]["targets"].as_array_mut().unwrap().truncate(1);
    one["spec"].as_object_mut().unwrap().remove("baseline");
    assert_eq!(
        errors(&one),
        [
            "spec.precision: needs at least two targets: it is the resolving power of their \
             comparison"
        ]
    );
}

#[test]
fn repetitions_bounds_and_unknown_fields() {
    assert_eq!(
        errors(&with("/spec/repetitions", json!(0))),
        ["spec.repetitions: must be at least 1, got 0"]
    );
    let doc = with(
        "/spec/workload",
        json!({"type": "flights",
                                              "flights": {"findPrecent": 60}}),
    );
    let found = errors(&doc);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with(
            "spec.workload.flights.findPrecent: unknown field \"findPrecent\"; known fields \
             here: "
        ),
        "{found:?}"
    );
}

#[test]
fn integers_beyond_their_rust_type_are_refused_at_the_field() {
    // The API server does not check `format: int32`; the schema's maximum does, so a value
    // the operator could not read never gets in.
    assert_eq!(
        errors(&with(
            "/spec/ttlSecondsAfterFinished",
            json!(3_000_000_000_u64)
        )),
        ["spec.ttlSecondsAfterFinished: must be at most 2147483647, got 3000000000"]
    );
    assert_eq!(
        errors(&with("/spec/replicaSet/members", json!(5_000_000_000_u64))),
        ["spec.replicaSet.members: must be at most 2147483647, got 5000000000"]
    );
}

#[test]
fn all_violations_are_reported_together() {
    let mut doc = manifest();
    doc["spec"]["baseline"] = json!("nope");
    doc["spec"]["repetitions"] = json!(0);
    doc["spec"]["replicaSet"]["members"] = json!(2);
    doc["spec"]["dataset"]["sizes"] = json!(["4M", "1M"]);
    let paths: Vec<String> = validate_document(&doc)
        .into_iter()
        .map(|v| v.path)
        .collect();
    let mut sorted = paths.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        [
            "spec.baseline",
            "spec.dataset.sizes[1]",
            "spec.repetitions",
            "spec.replicaSet.members"
        ]
    );
}

#[test]
fn typed_validate_reports_schema_bounds_too() {
    let mut spec: MongoBenchmarkSpec = serde_json::from_value(manifest()["spec"].clone()).unwrap();
    spec.workload.workers = Some(0);
    spec.targets[0].name = "Mongo".to_string();
    let found: Vec<String> = validate(&spec).iter().map(Violation::to_string).collect();
    assert_eq!(
        found,
        [
            "spec.targets[0].name: invalid value \"Mongo\": expected lowercase letters, \
             digits, '-' and '.', starting and ending with a letter or digit",
            "spec.workload.workers: must be at least 1, got 0",
        ]
    );
}

#[test]
fn updates_may_change_only_suspend_cleanup_and_ttl() {
    let old: MongoBenchmarkSpec = serde_json::from_value(manifest()["spec"].clone()).unwrap();
    let mut new = old.clone();
    new.suspend = Some(true);
    new.cleanup_policy = Some(crate::api::CleanupPolicy::Retain);
    new.ttl_seconds_after_finished = Some(3600);
    assert_eq!(validate_update(&old, &new), vec![]);
    // An explicit default equals the omitted value.
    new.repetitions = Some(3);
    assert_eq!(validate_update(&old, &new), vec![]);
    new.repetitions = Some(5);
    new.workload.workers = Some(32);
    new.client = Some(Default::default());
    let paths: Vec<String> = validate_update(&old, &new)
        .into_iter()
        .map(|v| v.path)
        .collect();
    assert_eq!(paths, ["spec.workload", "spec.client", "spec.repetitions"]);
}
