//! The `MongoBenchmark` API (group `mongobench.io`, version `v1alpha1`): spec and status types,
//! the generated CRD, unit parsing and offline validation.
//!
//! The same rules are enforced twice: by the API server at admission (OpenAPI schema + CEL
//! rules generated from these types) and offline by [`validate`] (`mongobench validate`), which
//! reports every violation with its field path. Keep the two in step: the corpus test in
//! `tests/validate_corpus.rs` runs both over the same files.

pub mod dataset;
pub mod flights;
pub mod precision;
pub mod replica_set;
pub mod spec;
pub mod status;
pub mod targets;
pub mod units;
pub mod validate;
pub mod workload;
pub mod ycsb;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;

pub use dataset::{Dataset, IndexBuild};
pub use flights::{
    AggregateSplit, FindSplit, Flights, FlightsMix, FlightsVersion, IndexSet, WriteSplit,
};
pub use precision::Precision;
pub use replica_set::{AntiAffinity, ComputeResources, ReplicaSet};
pub use spec::{
    CanaryPolicy, CleanupPolicy, Client, MongoBenchmark, MongoBenchmarkSpec, Parallelism,
};
pub use status::{
    CellCounts, CellPhase, CellStatus, Comparison, KStatus, MongoBenchmarkStatus, NodeInfo,
    OperationLatency, Phase, Regime, ResultRef, RunnerStatus, TargetStatus, Verdict,
    condition_types, kstatus,
};
pub use targets::{Arch, Distribution, ExternalTarget, Platform, SecretKeyRef, Target};
pub use units::{DatasetSize, UnitsError, parse_dataset_size, parse_duration};
pub use validate::{Violation, validate, validate_document, validate_update};
pub use workload::{
    DEFAULT_OPERATION_TIMEOUT, ReadPreference, RunLength, WireCompressor, Workload, WorkloadType,
    WriteConcern,
};
pub use ycsb::{
    FieldLengthDistribution, InsertOrder, RequestDistribution, ScanLengthDistribution, Ycsb,
    YcsbProportions, YcsbWorkload,
};

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

/// Removes an enum type's own description from its schema, so that the description of the
/// field that uses it stays in the CRD (kube would otherwise let the type's doc replace the
/// field's doc on `Option<Enum>` fields).
pub(crate) fn drop_description(schema: &mut schemars::Schema) {
    if let Some(object) = schema.as_object_mut() {
        object.remove("description");
    }
}
