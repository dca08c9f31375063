//! The `MongoBenchmark` CustomResourceDefinition: its group, version and kind, and the CRD
//! as installed (kube's derived one, normalized for the API server).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;

use super::spec::MongoBenchmark;

/// API group of the CRD.
pub const GROUP: &str = "mongobench.io";
/// API version of the CRD.
pub const VERSION: &str = "v1alpha1";
/// `apiVersion` of a MongoBenchmark.
pub const API_VERSION: &str = "mongobench.io/v1alpha1";
/// Kind of the custom resource.
pub const KIND: &str = "MongoBenchmark";

/// The CustomResourceDefinition of `MongoBenchmark`, as installed in clusters.
///
/// It is kube's derived CRD with `nullable` removed from every schema: optional fields are
/// simply omitted (never serialized as null), and without `nullable` an explicit `null` from a
/// user is pruned and then defaulted by the API server instead of reaching CEL rules as null.
pub fn crd() -> CustomResourceDefinition {
    let mut crd = MongoBenchmark::crd();
    let mut value = serde_json::to_value(&crd).expect("a CRD serializes to JSON");
    normalize(&mut value);
    crd = serde_json::from_value(value).expect("the CRD still deserializes");
    crd
}

/// The CRD as YAML, exactly what `mongobench crd` prints and `manifests/crd.yaml` holds.
pub fn crd_yaml() -> String {
    serde_yaml::to_string(&crd()).expect("a CRD serializes to YAML")
}

/// The `openAPIV3Schema` of the (only) version of [`crd`], as JSON.
pub fn openapi_schema() -> serde_json::Value {
    let crd = crd();
    let schema = crd.spec.versions[0]
        .schema
        .as_ref()
        .and_then(|s| s.open_api_v3_schema.as_ref())
        .expect("the derived CRD has an openAPIV3Schema");
    serde_json::to_value(schema).expect("a schema serializes to JSON")
}

/// Removes `nullable` (optional fields are simply absent) and turns the unsigned integer
/// formats schemars writes (`uint32`, `uint64`) into the ones Kubernetes knows (`int32`,
/// `int64`; the `minimum: 0` beside them keeps them unsigned), so `kubectl apply` warns of no
/// unrecognized format. An `int32` without a maximum gets the int32 one: the API server does
/// not check integer formats, and would otherwise admit a value the operator cannot read.
fn normalize(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            map.remove("nullable");
            if let Some(format) = map.get_mut("format") {
                match format.as_str() {
                    Some("uint32") => *format = "int32".into(),
                    Some("uint64") => *format = "int64".into(),
                    _ => {}
                }
            }
            if map.get("format").and_then(|f| f.as_str()) == Some("int32")
                && !map.contains_key("maximum")
            {
                map.insert("maximum".into(), f64::from(i32::MAX).into());
            }
            map.values_mut().for_each(normalize);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(normalize),
        _ => {}
    }
}
