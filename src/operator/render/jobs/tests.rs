use super::*;
use crate::operator::fixtures::{SHARDED, STUDY, bench};
use serde_json::json;

fn value<T: serde::Serialize>(t: &T) -> serde_json::Value {
    serde_json::to_value(t).unwrap()
}

#[test]
fn provisioned_target_job_gets_the_replica_set_uri_and_the_client_pool() {
    let b = bench("study", STUDY);
    let facts = ServerFacts {
        image_digest: Some("sha256:0123abcd".into()),
        ..ServerFacts::default()
    };
    let objects = runner_objects(
        &b,
        &[&b.spec.targets[0]],
        &b.spec.platforms[0],
        vec!["psmdb-8.0.axion.1m.r1".into()],
        &BTreeMap::from([(b.spec.targets[0].name.clone(), facts.clone())]),
        "registry.example/mongobench:1.0",
    )
    .unwrap();
    let plan: JobPlan =
        serde_yaml::from_str(&objects.plan.data.as_ref().unwrap()[PLAN_KEY]).unwrap();
    assert_eq!(plan.targets[0].facts, Some(facts));
    let job = value(&objects.job);
    assert_eq!(job["metadata"]["name"], "study-run-psmdb-8-0-axion");
    assert_eq!(
        job["metadata"]["labels"]["mongobench.io/run-id"],
        "0f3c9a527d1e"
    );
    assert_eq!(job["metadata"]["ownerReferences"][0]["controller"], true);
    assert_eq!(job["spec"]["backoffLimit"], 1);
    // STUDY: flights with the default 10 min after a 1 min warm-up, 1M and 4M documents,
    // 2 repetitions, one target: 2 × (300 + (1M + 4M) / 200 + 4 × (60 + 600 + 300)).
    assert_eq!(
        job["spec"]["activeDeadlineSeconds"],
        2 * (300 + 5_000_000 / 200 + 4 * (60 + 600 + 300))
    );
    let pod = &job["spec"]["template"]["spec"];
    assert_eq!(pod["serviceAccountName"], "study-runner");
    assert_eq!(pod["restartPolicy"], "Never");
    // client.platform x86: its selector, no arm toleration.
    assert_eq!(
        pod["nodeSelector"],
        json!({"cloud.google.com/gke-nodepool": "n2-icelake"})
    );
    assert!(pod.get("tolerations").is_none());
    let c = &pod["containers"][0];
    assert_eq!(c["image"], "registry.example/mongobench:1.0");
    assert_eq!(c["command"], json!(["mongobench"]));
    assert_eq!(
        c["args"],
        json!(["run", "--plan", "/etc/mongobench/plan.yaml"])
    );
    // The credentials come from the admin Secret and enter the URI by $(VAR) expansion.
    let admin = |name: &str, key: &str| json!({"name": name, "valueFrom": {"secretKeyRef": {"name": "study-admin", "key": key}}});
    assert_eq!(
        c["env"],
        json!([
            admin("MONGOBENCH_TARGET_URI_USERNAME", "username"),
            admin("MONGOBENCH_TARGET_URI_PASSWORD", "password"),
            {"name": "MONGOBENCH_TARGET_URI", "value":
            "mongodb://$(MONGOBENCH_TARGET_URI_USERNAME):$(MONGOBENCH_TARGET_URI_PASSWORD)@\
             study-psmdb-8-0-axion-0.study-psmdb-8-0-axion.lab.svc.cluster.local:27017,\
             study-psmdb-8-0-axion-1.study-psmdb-8-0-axion.lab.svc.cluster.local:27017,\
             study-psmdb-8-0-axion-2.study-psmdb-8-0-axion.lab.svc.cluster.local:27017/\
             ?replicaSet=study-psmdb-8-0-axion&authSource=admin"}])
    );
    assert_eq!(
        pod["securityContext"],
        json!({"runAsNonRoot": true, "runAsUser": 65532, "runAsGroup": 65532,
               "seccompProfile": {"type": "RuntimeDefault"}})
    );
    assert_eq!(
        c["securityContext"],
        json!({"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}})
    );
    assert_eq!(
        pod["volumes"],
        json!([{"name": "plan", "configMap": {"name": "study-run-psmdb-8-0-axion-plan"}}])
    );
    assert_eq!(
        c["volumeMounts"],
        json!([{"name": "plan", "mountPath": "/etc/mongobench", "readOnly": true}])
    );

    // The runner reads the plan the operator wrote: its version and spec pass.
    let plan: JobPlan =
        crate::cli::plan_file::parse_plan(&objects.plan.data.as_ref().unwrap()["plan.yaml"])
            .unwrap();
    assert_eq!(plan.benchmark, "study");
    assert_eq!(plan.namespace.as_deref(), Some("lab"));
    assert_eq!(
        plan.uid.as_deref(),
        Some("0f3c9a52-7d1e-4c55-9b0e-6a1d2f3e4b5c")
    );
    assert_eq!(plan.run_id, "0f3c9a527d1e");
    assert_eq!(plan.targets.len(), 1);
    let target = &plan.targets[0];
    assert_eq!(
        (
            target.name.as_str(),
            target.uri_env.as_str(),
            plan.platform.as_str()
        ),
        ("psmdb-8.0", "MONGOBENCH_TARGET_URI", "axion")
    );
    assert_eq!(
        target.initiate_members,
        [
            "study-psmdb-8-0-axion-0.study-psmdb-8-0-axion.lab.svc.cluster.local:27017",
            "study-psmdb-8-0-axion-1.study-psmdb-8-0-axion.lab.svc.cluster.local:27017",
            "study-psmdb-8-0-axion-2.study-psmdb-8-0-axion.lab.svc.cluster.local:27017"
        ]
    );
    // Each member's noise canary, on the same host.
    assert_eq!(
        target.server_canaries,
        [
            "study-psmdb-8-0-axion-0.study-psmdb-8-0-axion.lab.svc.cluster.local:27117",
            "study-psmdb-8-0-axion-1.study-psmdb-8-0-axion.lab.svc.cluster.local:27117",
            "study-psmdb-8-0-axion-2.study-psmdb-8-0-axion.lab.svc.cluster.local:27117"
        ]
    );
    assert_eq!(
        target.replica_set_name.as_deref(),
        Some("study-psmdb-8-0-axion")
    );
    assert_eq!(plan.completed_cells, ["psmdb-8.0.axion.1m.r1"]);
    assert_eq!(plan.run, RunDefinition::of(&b.spec).unwrap());
}

#[test]
fn a_sharded_target_is_reached_through_its_routers_and_brought_up_by_the_runner() {
    let b = bench("sh", SHARDED);
    let objects = runner_objects(
        &b,
        &[&b.spec.targets[0]],
        &b.spec.platforms[0],
        Vec::new(),
        &BTreeMap::new(),
        "mongobench:1.0",
    )
    .unwrap();
    let plan: JobPlan =
        serde_yaml::from_str(&objects.plan.data.as_ref().unwrap()[PLAN_KEY]).unwrap();
    let target = &plan.targets[0];
    // No replica set of its own to initiate: the runner brings the cluster up instead.
    assert!(target.initiate_members.is_empty());
    assert!(target.server_canaries.is_empty());
    assert_eq!(target.replica_set_name, None);
    let cluster = target.cluster.as_ref().expect("the cluster's layout");
    assert_eq!(cluster.config.name, "sh-mongodb-9-0-x86-config");
    assert_eq!(cluster.config.members.len(), 3);
    assert_eq!(cluster.shards.len(), 2);
    let job = value(&objects.job);
    // A set's initiation allowance for the config servers and each of the 2 shards; 1M
    // documents, 3 repetitions of 10 min after 1 min: 2 × (3 × 300 + 1M / 200 + 3 × 960).
    assert_eq!(
        job["spec"]["activeDeadlineSeconds"],
        2 * (3 * 300 + 1_000_000 / 200 + 3 * (60 + 600 + 300))
    );
    let env = &job["spec"]["template"]["spec"]["containers"][0]["env"];
    let uri = env
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == target.uri_env.as_str())
        .unwrap();
    assert_eq!(
        uri["value"],
        format!(
            "mongodb://$({0}_USERNAME):$({0}_PASSWORD)@sh-mongodb-9-0-x86-mongos.lab.svc.\
             cluster.local:27017/?authSource=admin",
            target.uri_env
        )
    );
    // The replica-set target beside it keeps its own.
    let rs = runner_objects(
        &b,
        &[&b.spec.targets[1]],
        &b.spec.platforms[0],
        Vec::new(),
        &BTreeMap::new(),
        "mongobench:1.0",
    )
    .unwrap();
    let plan: JobPlan = serde_yaml::from_str(&rs.plan.data.as_ref().unwrap()[PLAN_KEY]).unwrap();
    assert_eq!(plan.targets[0].cluster, None);
    assert_eq!(plan.targets[0].initiate_members.len(), 3);
}

#[test]
fn external_target_job_reads_the_uri_from_its_secret() {
    let yaml = STUDY.replace(
        "client: {platform: x86}",
        "client:\n  image: registry.example/client:2\n  nodeSelector: {pool: clients}\n  \
         tolerations: [{key: dedicated, operator: Exists, effect: NoSchedule}]\n  \
         resources: {requests: {cpu: '4'}, limits: {cpu: '4'}}",
    );
    let b = bench("study", &yaml);
    let objects = runner_objects(
        &b,
        &[&b.spec.targets[1]],
        &b.spec.platforms[1],
        vec![],
        &BTreeMap::new(),
        "default:1",
    )
    .unwrap();
    let pod = value(&objects.job)["spec"]["template"]["spec"].clone();
    assert_eq!(pod["nodeSelector"], json!({"pool": "clients"}));
    assert_eq!(
        pod["tolerations"],
        json!([{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}])
    );
    let c = &pod["containers"][0];
    assert_eq!(c["image"], "registry.example/client:2");
    assert_eq!(
        c["env"],
        json!([{"name": "MONGOBENCH_TARGET_URI",
                "valueFrom": {"secretKeyRef": {"name": "ext-uri", "key": "uri"}}}])
    );
    assert_eq!(
        c["resources"],
        json!({"requests": {"cpu": "4", "memory": "512Mi"}, "limits": {"cpu": "4"}})
    );
    let plan: JobPlan =
        serde_yaml::from_str(&objects.plan.data.as_ref().unwrap()["plan.yaml"]).unwrap();
    assert!(plan.targets[0].initiate_members.is_empty());
    assert_eq!(plan.targets[0].replica_set_name, None);
    assert!(plan.completed_cells.is_empty());
}

#[test]
fn a_platform_runner_lists_every_target_with_an_env_var_each() {
    let b = bench(
        "study",
        &STUDY.replace("  storageSize: 50Gi", "  storageSize: 50Gi\n  auth: false"),
    );
    let targets: Vec<&Target> = b.spec.targets.iter().collect();
    let objects = runner_objects(
        &b,
        &targets,
        &b.spec.platforms[1],
        vec![],
        &BTreeMap::new(),
        "img:1",
    )
    .unwrap();
    let job = value(&objects.job);
    assert_eq!(job["metadata"]["name"], "study-run-x86");
    let labels = &job["metadata"]["labels"];
    assert_eq!(labels["mongobench.io/platform"], "x86");
    assert!(labels.get("mongobench.io/target").is_none(), "{labels}");
    assert_eq!(job["spec"]["template"]["metadata"]["labels"], *labels);
    let pod = &job["spec"]["template"]["spec"];
    assert_eq!(
        pod["containers"][0]["env"],
        json!([
            {"name": "MONGOBENCH_TARGET_URI", "value":
                "mongodb://study-psmdb-8-0-x86-0.study-psmdb-8-0-x86.lab.svc.cluster.local:27017,\
                 study-psmdb-8-0-x86-1.study-psmdb-8-0-x86.lab.svc.cluster.local:27017,\
                 study-psmdb-8-0-x86-2.study-psmdb-8-0-x86.lab.svc.cluster.local:27017/\
                 ?replicaSet=study-psmdb-8-0-x86"},
            {"name": "MONGOBENCH_TARGET_URI_1",
             "valueFrom": {"secretKeyRef": {"name": "ext-uri", "key": "uri"}}}
        ])
    );
    assert_eq!(
        pod["volumes"],
        json!([{"name": "plan", "configMap": {"name": "study-run-x86-plan"}}])
    );
    assert_eq!(
        objects.plan.metadata.name.as_deref(),
        Some("study-run-x86-plan")
    );
    let plan: JobPlan =
        serde_yaml::from_str(&objects.plan.data.as_ref().unwrap()["plan.yaml"]).unwrap();
    let listed: Vec<(&str, &str)> = plan
        .targets
        .iter()
        .map(|t| (t.name.as_str(), t.uri_env.as_str()))
        .collect();
    assert_eq!(
        listed,
        [
            ("psmdb-8.0", "MONGOBENCH_TARGET_URI"),
            ("ext", "MONGOBENCH_TARGET_URI_1")
        ]
    );
    assert_eq!(plan.targets[0].initiate_members.len(), 3);
    assert!(plan.targets[1].initiate_members.is_empty());
    assert_eq!(plan.platform, "x86");
    assert!(
        runner_objects(
            &b,
            &[],
            &b.spec.platforms[1],
            vec![],
            &BTreeMap::new(),
            "img:1"
        )
        .is_err()
    );
}

#[test]
fn under_a_precision_goal_the_runner_may_write_and_run_every_slot_up_to_the_limit() {
    let goal = format!("{STUDY}precision: {{mdePercent: 2, maxRepetitions: 7}}\n");
    let with_goal = bench("study", &goal);
    let role = value(&runner_access(&with_goal).unwrap().role);
    let names = role["rules"][1]["resourceNames"].as_array().unwrap();
    let has = |id: &str| names.contains(&json!(format!("study-{id}")));
    assert!(
        has("psmdb-8.0.axion.1m.r7") && !has("psmdb-8.0.axion.1m.r8"),
        "{names:?}"
    );
    let plain = bench("study", STUDY);
    let (p, t) = (&plain.spec.platforms[0], &plain.spec.targets[0]);
    let short = active_deadline_seconds(&plain, &[t], p).unwrap();
    let long = active_deadline_seconds(&with_goal, &[&with_goal.spec.targets[0]], p).unwrap();
    assert!(long > short, "{long} vs {short}");
}

#[test]
fn a_sweep_runner_may_run_every_step_of_every_cell() {
    let sweep = STUDY.replace(
        "workload: {type: flights}",
        "workload: {type: flights, sweep: {findMax: {start: 100, maxSteps: 5}, stepDuration: 20s}}",
    );
    let b = bench("study", &sweep);
    let (p, t) = (&b.spec.platforms[0], &b.spec.targets[0]);
    // 2 × (300 + (1M + 4M) / 200 + 4 × (60 + 5 × (20 + 120) + 300)).
    assert_eq!(
        active_deadline_seconds(&b, &[t], p).unwrap(),
        2 * (300 + 5_000_000 / 200 + 4 * (60 + 5 * (20 + 120) + 300))
    );
}

#[test]
fn a_runner_may_run_every_round_of_a_warmup_until_settled() {
    let rounds = STUDY.replace(
        "workload: {type: flights}",
        "workload: {type: flights, warmup: 10s, duration: 1m, warmupUntilSettled: {maxRounds: 4}}",
    );
    let b = bench("study", &rounds);
    let (p, t) = (&b.spec.platforms[0], &b.spec.targets[0]);
    // 2 × (300 + (1M + 4M) / 200 + 4 × (4 × 10 + 60 + 300)).
    assert_eq!(
        active_deadline_seconds(&b, &[t], p).unwrap(),
        2 * (300 + 5_000_000 / 200 + 4 * (4 * 10 + 60 + 300))
    );
}

#[test]
fn runner_role_allows_only_its_configmaps() {
    let b = bench("study", STUDY);
    let access = runner_access(&b).unwrap();
    let role = value(&access.role);
    // Every cell's result and each platform's activity, by name.
    let cells = crate::plan::cells(&b.spec).unwrap();
    let mut names: Vec<String> = cells
        .iter()
        .map(|c| format!("study-{}", c.id))
        .chain(
            b.spec
                .platforms
                .iter()
                .map(|p| format!("study-{}-activity", p.name)),
        )
        .collect();
    names.sort();
    assert!(
        names.contains(&"study-psmdb-8.0.axion.1m.r1".to_owned()),
        "{names:?}"
    );
    assert_eq!(
        role["rules"],
        json!([
            {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create"]},
            {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "patch"],
             "resourceNames": names}
        ])
    );
    let binding = value(&access.role_binding);
    assert_eq!(
        binding["roleRef"],
        json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "study-runner"})
    );
    assert_eq!(
        binding["subjects"],
        json!([{"kind": "ServiceAccount", "name": "study-runner", "namespace": "lab"}])
    );
    assert_eq!(
        access.service_account.metadata.name.as_deref(),
        Some("study-runner")
    );
}

#[test]
fn several_client_pods_make_an_indexed_job_spread_over_nodes_with_a_board() {
    let b = bench(
        "study",
        &STUDY.replace(
            "client: {platform: x86}",
            "client: {platform: x86, pods: 3}",
        ),
    );
    let objects = runner_objects(
        &b,
        &[&b.spec.targets[1]],
        &b.spec.platforms[1],
        Vec::new(),
        &BTreeMap::new(),
        "img:1",
    )
    .unwrap();
    let plan: JobPlan =
        serde_yaml::from_str(&objects.plan.data.as_ref().unwrap()[PLAN_KEY]).unwrap();
    assert_eq!(plan.board.as_deref(), Some("study-run-ext-x86-crew"));
    let job = value(&objects.job);
    assert_eq!(job["spec"]["completionMode"], "Indexed");
    assert_eq!(job["spec"]["completions"], 3);
    assert_eq!(job["spec"]["parallelism"], 3);
    let pod = &job["spec"]["template"]["spec"];
    assert_eq!(
        pod["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"],
        json!([{"weight": 100, "podAffinityTerm": {
            "topologyKey": "kubernetes.io/hostname",
            "labelSelector": {"matchLabels": {"batch.kubernetes.io/job-name": "study-run-ext-x86"}}
        }}])
    );
    let env = pod["containers"][0]["env"].as_array().unwrap();
    assert!(
        env.contains(
            &json!({"name": "MONGOBENCH_JOB_UID", "valueFrom": {"fieldRef":
            {"fieldPath": "metadata.labels['batch.kubernetes.io/controller-uid']"}}})
        ),
        "{env:?}"
    );
    // The runners may read and write every board they may have, and no other.
    let role = value(&runner_access(&b).unwrap().role);
    let names = role["rules"][1]["resourceNames"].as_array().unwrap();
    let boards: Vec<&str> = names
        .iter()
        .filter_map(|n| n.as_str())
        .filter(|n| n.ends_with("-crew"))
        .collect();
    assert_eq!(
        boards,
        [
            "study-run-axion-crew",
            "study-run-ext-axion-crew",
            "study-run-ext-x86-crew",
            "study-run-psmdb-8-0-axion-crew",
            "study-run-psmdb-8-0-x86-crew",
            "study-run-x86-crew"
        ]
    );

    // One pod: a plain Job, no board.
    let one = bench("study", STUDY);
    let objects = runner_objects(
        &one,
        &[&one.spec.targets[1]],
        &one.spec.platforms[1],
        Vec::new(),
        &BTreeMap::new(),
        "img:1",
    )
    .unwrap();
    let job = value(&objects.job);
    assert_eq!(job["spec"].get("completionMode"), None);
    assert_eq!(job["spec"]["template"]["spec"].get("affinity"), None);
    let plan: JobPlan =
        serde_yaml::from_str(&objects.plan.data.as_ref().unwrap()[PLAN_KEY]).unwrap();
    assert_eq!(plan.board, None);
}

#[test]
fn runner_cpu_follows_the_load_of_its_pod_unless_the_spec_names_it() {
    let cpu = |yaml: &str| {
        let (workload, client) = yaml
            .split_once('\n')
            .unwrap_or((yaml, "client: {platform: x86}"));
        let spec = STUDY
            .replace("workload: {type: flights}", workload)
            .replace("client: {platform: x86}", client);
        let b = bench("study", &spec);
        let r = runner_resources(&b.spec);
        let requests = r.requests.unwrap();
        (
            requests.get("cpu").map(|q| q.0.clone()),
            requests.get("memory").map(|q| q.0.clone()),
            r.limits,
        )
    };
    // flights, 16 workers × 500 ops/s × 333 µs = 2.7 → 3 cores.
    assert_eq!(cpu("workload: {type: flights}").0.as_deref(), Some("3"));
    // Over 4 pods: 4 workers each → 1 core.
    let four = cpu("workload: {type: flights}\nclient: {platform: x86, pods: 4}");
    assert_eq!(four.0.as_deref(), Some("1"));
    // YCSB A at 64 workers: 32000 × 100 µs = 3.2 → 4 cores; a target rate decides instead;
    // E's scans cost 4 times as much: 8000 × (0.95 × 400 + 0.05 × 100) µs = 3.08 → 4.
    let ycsb = "workload: {type: ycsb, ycsb: {workload: a}, workers: 64}";
    assert_eq!(cpu(ycsb).0.as_deref(), Some("4"));
    let paced =
        "workload: {type: ycsb, ycsb: {workload: a}, workers: 64, targetOpsPerSecond: 95000}";
    assert_eq!(cpu(paced).0.as_deref(), Some("10"));
    let scans = "workload: {type: ycsb, ycsb: {workload: e}, workers: 16}";
    assert_eq!(cpu(scans).0.as_deref(), Some("4"));
    // A ladder sizes the client for its top rate: 30000 × 333 µs = 9.99 → 10 cores; a
    // search, whose knee is unknown, for its workers in a closed loop.
    let ladder = "workload: {type: flights, sweep: {rates: [1000, 30000, 2000]}}";
    assert_eq!(cpu(ladder).0.as_deref(), Some("10"));
    let search = "workload: {type: flights, sweep: {findMax: {start: 100000}}}";
    assert_eq!(cpu(search).0.as_deref(), Some("3"));
    // A ladder of workers, for its top: 64 × 500 ops/s × 333 µs = 10.7 → 11 cores.
    let crowd = "workload: {type: flights, sweep: {workers: [4, 64, 16]}}";
    assert_eq!(cpu(crowd).0.as_deref(), Some("11"));
    let huge = "workload: {type: flights, workers: 4096}";
    assert_eq!(cpu(huge).0.as_deref(), Some("16"));
    assert_eq!(cpu(huge).1.as_deref(), Some("512Mi"));
    // What the spec names is kept; only what it leaves out is added.
    let named =
        cpu("workload: {type: flights}\nclient: {platform: x86, resources: {limits: {cpu: '2'}}}");
    assert_eq!(named.0, None);
    assert_eq!(named.2.unwrap()["cpu"].0, "2");
    let memory = cpu(
        "workload: {type: flights}\nclient: {platform: x86, resources: {requests: {memory: 1Gi}}}",
    );
    assert_eq!(
        (memory.0.as_deref(), memory.1.as_deref()),
        (Some("3"), Some("1Gi"))
    );
}

#[test]
fn run_id_prefers_status_and_is_stable_otherwise() {
    let mut b = bench("study", STUDY);
    assert_eq!(run_id(&b), "0f3c9a527d1e");
    b.status = Some(crate::api::MongoBenchmarkStatus {
        run_id: Some("kept".into()),
        ..Default::default()
    });
    assert_eq!(run_id(&b), "kept");
}
