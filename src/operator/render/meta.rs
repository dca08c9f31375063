//! The metadata every child object of a benchmark carries, and the habit of leaving empty
//! lists and maps out of rendered objects.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::{Resource, ResourceExt};

use crate::api::MongoBenchmark;
use crate::operator::Error;

/// Metadata of a child of `bench`: its name, the benchmark's namespace, `labels`, and the
/// benchmark as controlling owner.
///
/// # Errors
/// [`Error::Incomplete`] for a MongoBenchmark without namespace or uid.
pub fn child_meta(
    bench: &MongoBenchmark,
    name: &str,
    labels: &BTreeMap<String, String>,
) -> Result<ObjectMeta, Error> {
    let owner = bench
        .controller_owner_ref(&())
        .ok_or_else(|| Error::Incomplete(bench.name_any()))?;
    Ok(ObjectMeta {
        name: Some(name.to_owned()),
        namespace: bench.namespace(),
        labels: Some(labels.clone()),
        owner_references: Some(vec![owner]),
        ..ObjectMeta::default()
    })
}

/// True when `bench` (by uid) is the controlling owner of `meta`: what the operator created
/// for it, not an object someone else made under one of its names or labels.
pub fn controlled_by(meta: &ObjectMeta, bench: &MongoBenchmark) -> bool {
    let Some(uid) = bench.metadata.uid.as_deref() else {
        return false;
    };
    meta.owner_references
        .iter()
        .flatten()
        .any(|o| o.controller == Some(true) && o.uid == uid)
}

/// `Some(v)` unless `v` is empty: absent and empty lists and maps mean the same to the API
/// server, and leaving them out keeps applied objects as small as the spec asks.
pub fn non_empty<T: IsEmpty>(v: T) -> Option<T> {
    (!v.is_empty()).then_some(v)
}

/// Collections [`non_empty`] understands.
pub trait IsEmpty {
    /// True when there is nothing in it.
    fn is_empty(&self) -> bool;
}

impl<T> IsEmpty for Vec<T> {
    fn is_empty(&self) -> bool {
        Vec::is_empty(self)
    }
}

impl<K, V> IsEmpty for BTreeMap<K, V> {
    fn is_empty(&self) -> bool {
        BTreeMap::is_empty(self)
    }
}
