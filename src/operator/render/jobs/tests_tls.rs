//! The TLS Secret of an external target in its runner's Job and plan.
use super::*;
use crate::operator::fixtures::{STUDY, bench};
use serde_json::json;

fn value<T: serde::Serialize>(t: &T) -> serde_json::Value {
    serde_json::to_value(t).unwrap()
}

#[test]
fn a_tls_secret_is_mounted_for_its_target_and_named_in_the_plan() {
    let yaml = STUDY.replace(
        "uriSecretRef: {name: ext-uri}",
        "uriSecretRef: {name: ext-uri}, \
         tlsSecretRef: {name: ext-tls, caKey: ca.pem, clientCertificateKey: me.pem}",
    );
    assert_ne!(yaml, STUDY);
    let b = bench("study", &yaml);
    let targets: Vec<&Target> = b.spec.targets.iter().collect();
    let objects = runner_objects(
        &b,
        &targets,
        &b.spec.platforms[1],
        vec![],
        &BTreeMap::new(),
        "i:1",
    )
    .unwrap();
    let pod = value(&objects.job)["spec"]["template"]["spec"].clone();
    assert_eq!(
        pod["volumes"][1],
        json!({"name": "tls-1", "secret": {"secretName": "ext-tls", "items": [
            {"key": "ca.pem", "path": "ca.crt"}, {"key": "me.pem", "path": "client.pem"}]}})
    );
    assert_eq!(
        pod["containers"][0]["volumeMounts"][1],
        json!({"name": "tls-1", "mountPath": "/etc/mongobench-tls/1", "readOnly": true})
    );
    assert_eq!(
        pod["containers"][0]["securityContext"]["readOnlyRootFilesystem"],
        true
    );
    let plan: JobPlan =
        serde_yaml::from_str(&objects.plan.data.as_ref().unwrap()[PLAN_KEY]).unwrap();
    assert_eq!(plan.targets[0].tls, None);
    assert_eq!(
        plan.targets[1].tls,
        Some(TlsFiles {
            ca_file: "/etc/mongobench-tls/1/ca.crt".into(),
            certificate_key_file: Some("/etc/mongobench-tls/1/client.pem".into()),
        })
    );
}
