use super::*;
use crate::operator::fixtures::{STUDY, bench};
use serde_json::json;

fn value<T: serde::Serialize>(t: &T) -> serde_json::Value {
    serde_json::to_value(t).unwrap()
}

#[test]
fn stateful_set_is_pinned_spread_sized_and_owned() {
    let b = bench("study", STUDY);
    let objects = server_objects(&b, &b.spec.targets[0], &b.spec.platforms[0], "img").unwrap();
    let sts = value(&objects.stateful_set);
    let labels = json!({
        "app.kubernetes.io/name": "mongobench",
        "app.kubernetes.io/instance": "study",
        "app.kubernetes.io/component": "server",
        "app.kubernetes.io/managed-by": "mongobench-operator",
        "mongobench.io/benchmark": "study",
        "mongobench.io/target": "psmdb-8.0",
        "mongobench.io/platform": "axion"
    });
    assert_eq!(
        sts["metadata"],
        json!({
            "name": "study-psmdb-8-0-axion",
            "namespace": "lab",
            "labels": labels,
            "ownerReferences": [{
                "apiVersion": "mongobench.io/v1alpha1",
                "kind": "MongoBenchmark",
                "name": "study",
                "uid": "0f3c9a52-7d1e-4c55-9b0e-6a1d2f3e4b5c",
                "controller": true
            }]
        })
    );
    let spec = &sts["spec"];
    assert_eq!(spec["replicas"], 3);
    assert_eq!(spec["serviceName"], "study-psmdb-8-0-axion");
    assert_eq!(spec["podManagementPolicy"], "Parallel");
    assert_eq!(
        spec["persistentVolumeClaimRetentionPolicy"],
        json!({"whenDeleted": "Delete", "whenScaled": "Retain"})
    );
    assert_eq!(spec["selector"], json!({"matchLabels": labels}));
    let pod = &spec["template"]["spec"];
    assert_eq!(
        pod["nodeSelector"],
        json!({"cloud.google.com/gke-nodepool": "c4a-axion", "kubernetes.io/arch": "arm64"})
    );
    assert_eq!(
        pod["tolerations"],
        json!([{"key": "kubernetes.io/arch", "operator": "Equal", "value": "arm64",
                "effect": "NoSchedule"}])
    );
    assert_eq!(
        pod["affinity"],
        json!({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
            "labelSelector": {"matchLabels": labels},
            "topologyKey": "kubernetes.io/hostname"
        }]}})
    );
    let container = &pod["containers"][0];
    assert_eq!(
        container["image"],
        "percona/percona-server-mongodb:8.0.34-15"
    );
    // 0.5 × (12 GiB − 1 GiB) = 5.5 GiB of WiredTiger cache.
    assert_eq!(
        container["args"],
        json!([
            "--replSet",
            "study-psmdb-8-0-axion",
            "--bind_ip_all",
            "--auth",
            "--keyFile",
            "/etc/mongodb-keyfile/keyfile",
            "--wiredTigerCacheSizeGB",
            "5.5",
            "--wiredTigerCollectionBlockCompressor=zstd"
        ])
    );
    assert_eq!(
        container["resources"],
        json!({"requests": {"cpu": "3", "memory": "12Gi"},
               "limits": {"cpu": "3", "memory": "12Gi"}})
    );
    assert_eq!(
        container["volumeMounts"],
        json!([{"name": "data", "mountPath": "/data/db"},
               {"name": "keyfile", "mountPath": "/etc/mongodb-keyfile", "readOnly": true}])
    );
    assert_eq!(
        spec["volumeClaimTemplates"][0]["spec"],
        json!({"accessModes": ["ReadWriteOnce"],
               "storageClassName": "hyperdisk-balanced",
               "resources": {"requests": {"storage": "50Gi"}}})
    );
    assert_eq!(spec["volumeClaimTemplates"][0]["metadata"]["name"], "data");
}

#[test]
fn x86_platform_has_no_arch_toleration_and_preferred_anti_affinity_is_soft() {
    let yaml = STUDY.replace("members: 3", "members: 3\n  antiAffinity: Preferred");
    let b = bench("study", &yaml);
    let objects = server_objects(&b, &b.spec.targets[0], &b.spec.platforms[1], "img").unwrap();
    let pod = value(&objects.stateful_set)["spec"]["template"]["spec"].clone();
    assert_eq!(
        pod["nodeSelector"],
        json!({"cloud.google.com/gke-nodepool": "n2-icelake"})
    );
    assert!(pod.get("tolerations").is_none());
    let preferred = &pod["affinity"]["podAntiAffinity"];
    assert!(
        preferred
            .get("requiredDuringSchedulingIgnoredDuringExecution")
            .is_none()
    );
    assert_eq!(
        preferred["preferredDuringSchedulingIgnoredDuringExecution"][0]["weight"],
        100
    );
    assert_eq!(
        preferred["preferredDuringSchedulingIgnoredDuringExecution"][0]["podAffinityTerm"]["topologyKey"],
        "kubernetes.io/hostname"
    );
    // No StorageClass on the platform: the claim leaves it to the cluster default.
    let claim = value(&objects.stateful_set)["spec"]["volumeClaimTemplates"][0]["spec"].clone();
    assert!(claim.get("storageClassName").is_none());
}

#[test]
fn service_is_headless_and_publishes_not_ready_members() {
    let b = bench("study", STUDY);
    let objects = server_objects(&b, &b.spec.targets[0], &b.spec.platforms[0], "img").unwrap();
    let svc = value(&objects.service);
    assert_eq!(svc["metadata"]["name"], "study-psmdb-8-0-axion");
    assert_eq!(svc["spec"]["clusterIP"], "None");
    assert_eq!(svc["spec"]["publishNotReadyAddresses"], true);
    assert_eq!(svc["spec"]["selector"]["mongobench.io/target"], "psmdb-8.0");
    assert_eq!(
        svc["spec"]["ports"],
        json!([{"name": "mongodb", "port": 27017, "targetPort": 27017}])
    );
}

#[test]
fn network_policy_admits_only_this_benchmarks_pods_and_lets_out_only_to_them_and_dns() {
    let b = bench("study", STUDY);
    let objects = server_objects(&b, &b.spec.targets[0], &b.spec.platforms[0], "img").unwrap();
    let np = value(&objects.network_policy);
    assert_eq!(np["spec"]["policyTypes"], json!(["Ingress", "Egress"]));
    let benchmark_pods = json!([{"podSelector": {"matchLabels": {
        "app.kubernetes.io/name": "mongobench",
        "mongobench.io/benchmark": "study"
    }}}]);
    assert_eq!(
        np["spec"]["ingress"],
        json!([{
            "from": benchmark_pods,
            // mongod's, and the noise canary's beside it.
            "ports": [{"protocol": "TCP", "port": 27017}, {"protocol": "TCP", "port": 27117}]
        }])
    );
    assert_eq!(
        np["spec"]["egress"],
        json!([
            {"to": benchmark_pods, "ports": [{"protocol": "TCP", "port": 27017}]},
            {"ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]}
        ])
    );
    assert_eq!(
        np["spec"]["podSelector"]["matchLabels"]["mongobench.io/platform"],
        "axion"
    );
}

#[test]
fn no_memory_limit_leaves_the_cache_to_mongod_and_external_targets_get_nothing() {
    let yaml = STUDY.replace(
        "  resources: {requests: {cpu: '3', memory: 12Gi}, limits: {cpu: '3', memory: 12Gi}}\n",
        "",
    );
    let b = bench(
        "study",
        &yaml.replace("  storageSize: 50Gi", "  storageSize: 50Gi\n  auth: false"),
    );
    let args = mongod_args(&b, &b.spec.targets[0], "rs").unwrap();
    assert_eq!(
        args,
        [
            "--replSet",
            "rs",
            "--bind_ip_all",
            "--wiredTigerCollectionBlockCompressor=zstd"
        ]
    );
    let e = server_objects(&b, &b.spec.targets[1], &b.spec.platforms[0], "img").unwrap_err();
    assert!(matches!(e, Error::Spec(_)), "{e}");
}

#[test]
fn server_pods_run_as_the_image_user_under_the_restricted_level() {
    let yaml = STUDY.replace(
        "  - {name: ext, external: {uriSecretRef: {name: ext-uri}}}",
        "  - {name: mongo-8.0, image: 'mongo:8.0.26', distribution: community}",
    );
    let b = bench("study", &yaml);
    for (target, user, group) in [(0, 1001, 0), (1, 999, 999)] {
        let objects =
            server_objects(&b, &b.spec.targets[target], &b.spec.platforms[0], "img").unwrap();
        let pod = value(&objects.stateful_set)["spec"]["template"]["spec"].clone();
        assert_eq!(
            pod["securityContext"],
            json!({"runAsNonRoot": true, "runAsUser": user, "runAsGroup": group,
                   "fsGroup": user,
                   "fsGroupChangePolicy": "OnRootMismatch",
                   "seccompProfile": {"type": "RuntimeDefault"}})
        );
        let restricted =
            json!({"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}});
        assert_eq!(pod["containers"][0]["securityContext"], restricted);
        // The init container and the canary write only to their volumes.
        let mut read_only = restricted.clone();
        read_only["readOnlyRootFilesystem"] = json!(true);
        assert_eq!(pod["initContainers"][0]["securityContext"], read_only);
        assert_eq!(pod["containers"][1]["securityContext"], read_only);
        // Neither calls the Kubernetes API.
        assert_eq!(pod["automountServiceAccountToken"], false);
    }
}

#[test]
fn authentication_copies_the_keyfile_and_hands_the_admin_user_to_the_entrypoint() {
    let b = bench("study", STUDY);
    let objects = server_objects(&b, &b.spec.targets[0], &b.spec.platforms[0], "img").unwrap();
    let pod = value(&objects.stateful_set)["spec"]["template"]["spec"].clone();
    assert_eq!(
        pod["volumes"],
        json!([
            {"name": "keyfile-secret", "secret": {"secretName": "study-0f3c9a52-keyfile",
                "items": [{"key": "keyfile", "path": "keyfile"}], "defaultMode": 0o400}},
            {"name": "keyfile", "emptyDir": {"medium": "Memory"}}
        ])
    );
    let init = &pod["initContainers"][0];
    assert_eq!(init["image"], "percona/percona-server-mongodb:8.0.34-15");
    assert_eq!(
        init["command"],
        json!([
            "install",
            "-m",
            "0400",
            "/etc/mongodb-keyfile-secret/keyfile",
            "/etc/mongodb-keyfile/keyfile"
        ])
    );
    // Same requests and limits as mongod: the pod stays Guaranteed.
    assert_eq!(init["resources"], pod["containers"][0]["resources"]);
    let secret = |name: &str, key: &str| json!({"name": name, "valueFrom": {"secretKeyRef": {"name": "study-0f3c9a52-admin", "key": key}}});
    assert_eq!(
        pod["containers"][0]["env"],
        json!([
            {"name": "PERCONA_TELEMETRY_DISABLE", "value": "1"},
            secret("MONGO_INITDB_ROOT_USERNAME", "username"),
            secret("MONGO_INITDB_ROOT_PASSWORD", "password")
        ])
    );

    // auth: false: no keyfile, no user, no init container; the rest as before.
    let off = bench(
        "study",
        &STUDY.replace("  storageSize: 50Gi", "  storageSize: 50Gi\n  auth: false"),
    );
    let objects =
        server_objects(&off, &off.spec.targets[0], &off.spec.platforms[0], "img").unwrap();
    let pod = value(&objects.stateful_set)["spec"]["template"]["spec"].clone();
    assert!(
        pod.get("volumes").is_none() && pod.get("initContainers").is_none(),
        "{pod}"
    );
    assert_eq!(
        pod["containers"][0]["env"],
        json!([{"name": "PERCONA_TELEMETRY_DISABLE", "value": "1"}])
    );
    assert!(
        !pod["containers"][0]["args"]
            .as_array()
            .unwrap()
            .contains(&json!("--auth"))
    );
    assert_eq!(pod["securityContext"]["runAsUser"], 1001);
}

#[test]
fn every_member_has_a_noise_canary_that_keeps_its_pod_s_qos_class() {
    let b = bench("study", STUDY);
    let objects = server_objects(
        &b,
        &b.spec.targets[0],
        &b.spec.platforms[0],
        "ghcr.io/x/mongobench:1",
    )
    .unwrap();
    let pod = value(&objects.stateful_set)["spec"]["template"]["spec"].clone();
    assert_eq!(pod["containers"].as_array().unwrap().len(), 2);
    // The canary sees mongod's process, whose CPU time it reads.
    assert_eq!(pod["shareProcessNamespace"], true);
    assert_eq!(
        pod["containers"][1],
        json!({
            "name": "canary",
            "image": "ghcr.io/x/mongobench:1",
            "command": ["mongobench"],
            "args": ["canary", "--serve", "$(POD_IP)", "--port", "27117"],
            "env": [{"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}],
            "ports": [{"name": "canary", "containerPort": 27117}],
            // mongod is Guaranteed (requests = limits), so the sidecar is too.
            "resources": {"requests": {"cpu": "500m", "memory": "96Mi"},
                          "limits": {"cpu": "500m", "memory": "96Mi"}},
            "securityContext": {"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]},
                                "readOnlyRootFilesystem": true}
        })
    );
    // Without limits on mongod (Burstable or BestEffort), the sidecar asks for nothing.
    let yaml = STUDY.replace(
        "  resources: {requests: {cpu: '3', memory: 12Gi}, limits: {cpu: '3', memory: 12Gi}}\n",
        "",
    );
    let b = bench("study", &yaml);
    let objects = server_objects(&b, &b.spec.targets[0], &b.spec.platforms[0], "img").unwrap();
    let pod = value(&objects.stateful_set)["spec"]["template"]["spec"].clone();
    assert_eq!(pod["containers"][1]["name"], "canary");
    assert_eq!(pod["containers"][1].get("resources"), None);
}
