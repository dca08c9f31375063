//! The MongoBenchmark API against a real API server (testenv): the generated CRD installs, every
//! example is accepted, every file of the invalid corpus is refused at admission with a message
//! naming its field (the same verdicts as `mongobench validate`), the experiment is immutable
//! after create, printer columns show what the operator writes into status, and a Ready status
//! at the current generation is what kstatus calls Current.
mod operator_common;
mod support;

use std::path::{Path, PathBuf};

use kube::api::{Api, Patch, PatchParams};
use mongobench::api::{self, KStatus, MongoBenchmark};
use serde_json::{Value, json};

const MANAGER: &str = "mongobench-api-tests";

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn read_yaml(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

async fn setup(test: &str) -> (support::KubeEnv, Api<MongoBenchmark>) {
    let env = support::kube(test).await;
    operator_common::install_crd(&env.client).await;
    let api = Api::namespaced(env.client.clone(), &env.namespace);
    (env, api)
}

/// Applies a manifest as `kubectl apply --server-side --validate=strict` would.
async fn apply(api: &Api<MongoBenchmark>, doc: &Value) -> Result<MongoBenchmark, kube::Error> {
    let name = doc["metadata"]["name"].as_str().expect("a name");
    let params = PatchParams::apply(MANAGER).force().validation_strict();
    api.patch(name, &params, &Patch::Apply(doc)).await
}

/// Creates a manifest as `kubectl create` does: a POST with strict field validation (unknown
/// fields are errors, not warnings).
async fn create_strict(env: &support::KubeEnv, doc: &Value) -> Result<MongoBenchmark, kube::Error> {
    let path = format!(
        "/apis/{}/namespaces/{}/mongobenchmarks",
        api::API_VERSION,
        env.namespace
    );
    let body = serde_json::to_vec(doc).unwrap();
    let mut request = kube::core::Request::new(path)
        .create(&kube::api::PostParams::default(), body)
        .unwrap();
    // kube leaves a trailing `?` (or `?k=v`) on the path it builds.
    let base = request.uri().to_string();
    let separator = match base.find('?') {
        Some(at) if at + 1 == base.len() => "",
        Some(_) => "&",
        None => "?",
    };
    let uri = format!("{base}{separator}fieldValidation=Strict");
    *request.uri_mut() = uri.parse().unwrap();
    env.client.request::<MongoBenchmark>(request).await
}

fn example_paths() -> Vec<PathBuf> {
    [
        "percona-9-vs-8.yaml",
        "ycsb-x86-vs-arm.yaml",
        "quickstart.yaml",
        "sweep-knee.yaml",
        "sharded-9-vs-8.yaml",
    ]
    .iter()
    .map(|f| repo(&format!("examples/{f}")))
    .collect()
}

#[tokio::test]
async fn every_example_is_accepted_and_defaults_land_in_the_stored_spec() {
    let (_env, api) = setup("api-examples").await;
    for path in example_paths() {
        let doc = read_yaml(&path);
        let created = apply(&api, &doc)
            .await
            .unwrap_or_else(|e| panic!("{} refused: {e}", path.display()));
        assert_eq!(
            created.metadata.name,
            doc["metadata"]["name"].as_str().map(String::from)
        );
    }
    // The API server applies schema defaults; the operator never writes them.
    // (sweep-knee.yaml sets none of these fields.)
    let sweep = api.get("sweep-knee").await.unwrap();
    assert_eq!(sweep.spec.parallelism, Some(api::Parallelism::PerPlatform));
    assert_eq!(sweep.spec.suspend, Some(false));
    assert_eq!(sweep.spec.workload.think_time.as_deref(), Some("0"));
    assert_eq!(
        sweep.spec.workload.read_preference,
        Some(api::ReadPreference::Primary)
    );
    assert_eq!(sweep.spec.dataset.seed_batch_size, Some(1000));
    // Defaults of an absent block stay absent: no replicaSet was written.
    assert_eq!(sweep.spec.replica_set, None);
}

struct Fixture {
    path: PathBuf,
    expect: String,
    doc: Value,
}

fn corpus() -> Vec<Fixture> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo("tests/fixtures/invalid"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            let expect = text
                .lines()
                .next()
                .and_then(|l| l.strip_prefix("# expect: "))
                .unwrap_or_else(|| panic!("{} lacks its `# expect:` line", path.display()))
                .trim()
                .to_string();
            let doc = serde_yaml::from_str(&text).unwrap();
            Fixture { path, expect, doc }
        })
        .collect()
}

#[tokio::test]
async fn every_invalid_spec_is_refused_at_admission_naming_its_field() {
    let (env, _api) = setup("api-corpus").await;
    let fixtures = corpus();
    assert!(
        fixtures.len() >= 20,
        "only {} invalid specs",
        fixtures.len()
    );
    let mut failures = Vec::new();
    for fixture in &fixtures {
        let name = fixture.path.file_name().unwrap().to_string_lossy();
        // Same verdict offline.
        assert!(
            !api::validate_document(&fixture.doc).is_empty(),
            "{name}: accepted by the offline validator"
        );
        match create_strict(&env, &fixture.doc).await {
            Ok(_) => failures.push(format!("{name}: accepted by the API server")),
            Err(kube::Error::Api(status)) => {
                if !(status.code == 400 || status.code == 422) {
                    failures.push(format!(
                        "{name}: refused with code {}: {}",
                        status.code, status.message
                    ));
                } else if !status.message.contains(&fixture.expect) {
                    failures.push(format!(
                        "{name}: refusal does not name {}: {}",
                        fixture.expect, status.message
                    ));
                }
            }
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test]
async fn the_experiment_is_immutable_after_create() {
    let (_env, api) = setup("api-immutable").await;
    let original = read_yaml(&repo("examples/percona-9-vs-8.yaml"));
    apply(&api, &original)
        .await
        .expect("the example is accepted");

    // Each change of something that defines the experiment is refused, naming the field.
    let changes: [(&str, &str, Value); 6] = [
        ("/spec/workload/workers", "spec.workload", json!(32)),
        (
            "/spec/targets/0/image",
            "spec.targets",
            json!("mongo:9.0.5"),
        ),
        ("/spec/dataset/sizes", "spec.dataset", json!(["1M", "4M"])),
        ("/spec/repetitions", "spec.repetitions", json!(5)),
        ("/spec/baseline", "spec.baseline", json!("mongodb-9.0")),
        (
            "/spec/platforms/0/storageClassName",
            "spec.platforms",
            json!("pd-balanced"),
        ),
    ];
    for (pointer, field, value) in changes {
        let mut changed = original.clone();
        *changed.pointer_mut(pointer).unwrap() = value;
        let old_spec = serde_json::from_value(original["spec"].clone()).unwrap();
        let new_spec = serde_json::from_value(changed["spec"].clone()).unwrap();
        let offline = api::validate_update(&old_spec, &new_spec);
        assert_eq!(offline.len(), 1, "{pointer}: {offline:?}");
        assert_eq!(offline[0].path, field);
        match apply(&api, &changed).await {
            Err(kube::Error::Api(status)) => {
                assert_eq!(status.code, 422, "{pointer}: {status:?}");
                assert!(
                    status.message.contains(field) && status.message.contains("immutable"),
                    "{pointer}: refusal does not name {field} as immutable: {}",
                    status.message
                );
            }
            other => panic!("{pointer}: change after create was not refused: {other:?}"),
        }
    }

    // Removing an optional block is a change too.
    let mut without_client = original.clone();
    without_client["spec"]
        .as_object_mut()
        .unwrap()
        .remove("client");
    match apply(&api, &without_client).await {
        Err(kube::Error::Api(status)) => assert!(
            status.message.contains("spec.client is immutable"),
            "{}",
            status.message
        ),
        other => panic!("removing spec.client was not refused: {other:?}"),
    }

    // suspend, cleanupPolicy and ttlSecondsAfterFinished may change.
    let mut allowed = original.clone();
    allowed["spec"]["suspend"] = json!(true);
    allowed["spec"]["cleanupPolicy"] = json!("Retain");
    allowed["spec"]["ttlSecondsAfterFinished"] = json!(86400);
    let updated = apply(&api, &allowed)
        .await
        .expect("the allowed changes are accepted");
    assert_eq!(updated.spec.suspend, Some(true));
    assert_eq!(
        updated.spec.cleanup_policy,
        Some(api::CleanupPolicy::Retain)
    );
    assert_eq!(updated.spec.ttl_seconds_after_finished, Some(86400));
}

fn status_patch(generation: i64, ready: &str, reconciling: &str) -> Value {
    let condition = |type_: &str, status: &str| {
        json!({"type": type_, "status": status, "reason": "Test", "message": "",
               "lastTransitionTime": "2026-11-30T12:00:00Z", "observedGeneration": generation})
    };
    json!({
        "apiVersion": api::API_VERSION,
        "kind": api::KIND,
        "status": {
            "observedGeneration": generation,
            "phase": "Completed",
            "progress": "18/18",
            "baseline": "psmdb-8.0",
            "headline": "mongodb-9.0: +6.1% ops/s vs psmdb-8.0 (4M, x86-icelake)",
            "knees": "psmdb-8.0 4210, mongodb-9.0 4730 ops/s at p99 ≤ 10ms",
            "targetNames": "mongodb-9.0,psmdb-8.0,psmdb-8.3",
            "platformNames": "x86-icelake",
            "conditions": [condition("Ready", ready), condition("Reconciling", reconciling)]
        }
    })
}

#[tokio::test]
async fn printer_columns_show_the_status_the_operator_writes() {
    let (env, api) = setup("api-columns").await;
    let doc = read_yaml(&repo("examples/percona-9-vs-8.yaml"));
    let created = apply(&api, &doc).await.unwrap();
    let generation = created.metadata.generation.unwrap();
    api.patch_status(
        "percona-9-vs-8",
        &PatchParams::apply("mongobench").force(),
        &Patch::Apply(status_patch(generation, "True", "False")),
    )
    .await
    .expect("status is written through the status subresource");

    let kubectl = |wide: bool| {
        let mut cmd = std::process::Command::new(support::kubectl());
        cmd.arg("--kubeconfig")
            .arg(&env.kubeconfig)
            .args(["get", "mbench", "-n", &env.namespace]);
        if wide {
            cmd.args(["-o", "wide"]);
        }
        let out = cmd.output().expect("kubectl runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let columns = |text: &str| -> Vec<Vec<String>> {
        // Columns are separated by at least two spaces; the headline has single spaces.
        let re = regex::Regex::new(r"\s{2,}").unwrap();
        text.lines()
            .map(|l| re.split(l.trim_end()).map(str::to_string).collect())
            .collect()
    };

    let narrow = columns(&kubectl(false));
    assert_eq!(
        narrow[0],
        ["NAME", "PHASE", "PROGRESS", "BASELINE", "HEADLINE", "AGE"]
    );
    assert_eq!(
        narrow[1][..5],
        [
            "percona-9-vs-8",
            "Completed",
            "18/18",
            "psmdb-8.0",
            "mongodb-9.0: +6.1% ops/s vs psmdb-8.0 (4M, x86-icelake)"
        ]
    );

    let wide = columns(&kubectl(true));
    assert_eq!(
        wide[0],
        [
            "NAME",
            "PHASE",
            "PROGRESS",
            "BASELINE",
            "HEADLINE",
            "AGE",
            "WORKLOAD",
            "TARGETS",
            "KNEE",
            "PLATFORMS",
            "ETA"
        ]
    );
    // Completed: nothing left, so the ETA column is empty.
    assert_eq!(
        wide[1][6..],
        [
            "flights",
            "mongodb-9.0,psmdb-8.0,psmdb-8.3",
            "psmdb-8.0 4210, mongodb-9.0 4730 ops/s at p99 ≤ 10ms",
            "x86-icelake"
        ]
    );
}

#[tokio::test]
async fn ready_at_the_current_generation_is_kstatus_current() {
    let (_env, api) = setup("api-kstatus").await;
    let doc = read_yaml(&repo("examples/quickstart.yaml"));
    let created = apply(&api, &doc).await.unwrap();
    let generation = created.metadata.generation.unwrap();
    let ssa = PatchParams::apply("mongobench").force();

    // No status yet: kstatus has nothing to go on and calls it Current.
    assert_eq!(api::kstatus(&created), KStatus::Current);

    api.patch_status(
        "quickstart",
        &ssa,
        &Patch::Apply(status_patch(generation, "False", "True")),
    )
    .await
    .unwrap();
    let working = api.get("quickstart").await.unwrap();
    assert_eq!(
        working.metadata.generation,
        Some(generation),
        "a status write bumped generation"
    );
    assert_eq!(api::kstatus(&working), KStatus::InProgress);

    api.patch_status(
        "quickstart",
        &ssa,
        &Patch::Apply(status_patch(generation, "True", "False")),
    )
    .await
    .unwrap();
    let done = api.get("quickstart").await.unwrap();
    assert_eq!(api::kstatus(&done), KStatus::Current);

    // A spec change bumps generation; until the operator observes it, the resource is not
    // Current even though Ready is still True.
    let mut suspended = doc.clone();
    suspended["spec"]["suspend"] = json!(true);
    let changed = apply(&api, &suspended).await.unwrap();
    assert_eq!(changed.metadata.generation, Some(generation + 1));
    assert_eq!(api::kstatus(&changed), KStatus::InProgress);
}
