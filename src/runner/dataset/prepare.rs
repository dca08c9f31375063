//! The seeded state S(size) of a target (docs/specs/flights.md §7a): bringing the collection
//! to it — fresh, grown from S(previous size), or reused when `reuseDataset` is set and the
//! stored digest verifies — and recording its digest, so every restore can be checked
//! against it.
//!
//! The digest of the current state lives in `mongobench.digests` (one document per
//! namespace, with the dataset identity it was seeded under), beside the workloads' own
//! dataset records in `mongobench.datasets`.

use std::time::{Duration, Instant};

use mongodb::Client;
use mongodb::bson::{Document, doc};
use serde::{Deserialize, Serialize};

use crate::plan::WorkloadPlan;
use crate::plan::custom::CustomPlan;
use crate::result::DatasetDigest;
use crate::runner::crew::Helpers;
use crate::runner::deadline::{describe, whole_collection, within};
use crate::runner::server::ConnectedTarget;
use crate::runner::server::sharding::set_balancer;
use crate::workload::flights;
use crate::workload::ycsb::Properties;

use super::digest::{DigestError, digest};
use super::seed_custom::{self, CustomSeedError};
use super::seed_flights::{META_COLLECTION, META_DATABASE};
use super::{seed_flights, seed_ycsb};

/// Collection of the stored digests, in [`META_DATABASE`].
pub const DIGESTS: &str = "digests";

/// A target's collection in a known seeded state.
#[derive(Debug, Clone, PartialEq)]
pub struct Seeded {
    /// Seeded documents (records).
    pub documents: u64,
    /// Its digest.
    pub digest: DatasetDigest,
    /// `fresh`, `grown` or `reused`.
    pub action: &'static str,
    /// Seconds spent seeding and taking the digest.
    pub seconds: f64,
    /// Documents this step inserted and the seconds that took (from the collection's creation
    /// to the last index built); 0 when nothing was inserted.
    pub inserted: u64,
    pub insert_seconds: f64,
}

/// Why a dataset could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    #[error("{0}")]
    Flights(#[from] seed_flights::SeedError),
    #[error("{0}")]
    Ycsb(#[from] seed_ycsb::LoadError),
    #[error("{0}")]
    Digest(#[from] DigestError),
    #[error("{step}: {}", describe(source))]
    Server {
        step: &'static str,
        source: mongodb::error::Error,
    },
    #[error("{0}")]
    Properties(#[from] crate::workload::ycsb::PropertyError),
    #[error("sharding the collection: {0}")]
    Sharding(String),
    #[error("{0}")]
    Custom(#[from] CustomSeedError),
}

fn server(step: &'static str) -> impl FnOnce(mongodb::error::Error) -> DatasetError {
    move |source| DatasetError::Server { step, source }
}

/// The stored digest of a namespace's current state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredDigest {
    #[serde(rename = "_id")]
    namespace: String,
    /// [`dataset_identity`] of what was seeded.
    dataset: String,
    documents: i64,
    method: String,
    value: String,
}

impl StoredDigest {
    fn digest(&self) -> DatasetDigest {
        DatasetDigest {
            method: self.method.clone(),
            value: self.value.clone(),
            documents: self.documents as u64,
        }
    }
}

/// `(database, collection)` of a plan's data.
pub fn namespace(plan: &WorkloadPlan) -> Result<(String, String), DatasetError> {
    Ok(match plan {
        WorkloadPlan::Flights(_) => (flights::DATABASE.to_owned(), flights::COLLECTION.to_owned()),
        WorkloadPlan::Custom(c) => {
            let names: Vec<&str> = c
                .workload
                .collections()
                .iter()
                .map(|c| c.name.as_str())
                .collect();
            (
                c.workload.database().to_owned(),
                format!("{{{}}}", names.join(",")),
            )
        }
        WorkloadPlan::Ycsb { raw, .. } => {
            let props = Properties::from_raw(&{
                let mut r = raw.clone();
                r.set("recordcount", "1");
                r
            })?;
            (props.database, props.table)
        }
    })
}

/// YCSB properties that shape only the run phase, never a loaded record.
const YCSB_RUN_ONLY: [&str; 20] = [
    "recordcount",
    "operationcount",
    "maxexecutiontime",
    "insertstart",
    "insertcount",
    "readproportion",
    "updateproportion",
    "insertproportion",
    "scanproportion",
    "readmodifywriteproportion",
    "requestdistribution",
    "hotspotdatafraction",
    "hotspotopnfraction",
    "exponential.percentile",
    "exponential.frac",
    "minscanlength",
    "maxscanlength",
    "scanlengthdistribution",
    "readallfields",
    "writeallfields",
];

/// What the seeded documents depend on (not their count): two plans with the same dataset
/// identity seed the same documents.
pub fn dataset_identity(plan: &WorkloadPlan) -> String {
    match plan {
        WorkloadPlan::Flights(p) => format!(
            "{} table={} datasetSeed={} indexSet={} indexBuild={:?}",
            flights::VERSION,
            hex::encode(flights::data::table_hash()),
            p.dataset_seed,
            p.index_set.name(),
            p.index_build
        ),
        WorkloadPlan::Custom(c) => seed_custom::identity(c),
        WorkloadPlan::Ycsb { raw, seed } => {
            let properties: Vec<String> = raw
                .iter()
                .filter(|(k, _)| !YCSB_RUN_ONLY.contains(k))
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            format!("ycsb seed={seed} {}", properties.join(" "))
        }
    }
}

/// Brings the collection of `plan` to `documents` seeded documents and returns its state.
///
/// - `current`: the state the caller knows the collection is in (the previous size of this
///   run, verified by its last restore): grown from directly.
/// - otherwise, with `reuse`, a stored dataset of the same identity is grown or reused after
///   its digest verifies; anything else is dropped and seeded fresh.
pub async fn prepare(
    target: &ConnectedTarget,
    plan: &WorkloadPlan,
    workers: u32,
    documents: u64,
    current: Option<&Seeded>,
    reuse: bool,
    limit: Duration,
) -> Result<Seeded, DatasetError> {
    prepare_with(
        target, plan, workers, documents, current, reuse, limit, None,
    )
    .await
}

/// [`prepare`], with every client process of `crew` loading its share of the documents
/// added; this one checks the result.
#[allow(clippy::too_many_arguments)]
pub async fn prepare_with(
    target: &ConnectedTarget,
    plan: &WorkloadPlan,
    workers: u32,
    documents: u64,
    current: Option<&Seeded>,
    reuse: bool,
    limit: Duration,
    crew: Option<Helpers<'_>>,
) -> Result<Seeded, DatasetError> {
    if let WorkloadPlan::Custom(custom) = plan {
        return prepare_custom(target, custom, documents, current, reuse, limit).await;
    }
    let client = &target.client;
    let started = Instant::now();
    let (database, collection) = namespace(plan)?;
    let ns = format!("{database}.{collection}");
    let identity = dataset_identity(plan);
    let digests = client
        .database(META_DATABASE)
        .collection::<StoredDigest>(DIGESTS);
    let keep = match current {
        Some(state) => state.documents <= documents,
        None if reuse => match within(limit, digests.find_one(doc! {"_id": &ns}))
            .await
            .map_err(server("reading the stored digest"))?
        {
            Some(stored) if stored.dataset == identity && stored.documents as u64 <= documents => {
                digest(client, &database, &collection, limit).await? == stored.digest()
            }
            _ => false,
        },
        None => false,
    };
    if !keep {
        drop_dataset(client, &database, &collection, &ns, limit).await?;
    }
    if let Some(sharding) = &target.sharding {
        let policy = sharding.workload.balancer();
        set_balancer(client, policy, limit)
            .await
            .map_err(|e| DatasetError::Sharding(e.to_string()))?;
    }
    // Used only when the loader starts a fresh collection.
    let shard =
        super::shard::sharding_plan(target, plan, (&database, &collection), documents, limit)
            .await
            .map_err(|e| DatasetError::Sharding(e.to_string()))?;
    let shard = shard.as_ref();
    let (action, from, insert_seconds) = match plan {
        WorkloadPlan::Flights(params) => {
            let report = seed_flights::seed(client, params, documents, limit, crew, shard).await?;
            let action = match report.action.as_str() {
                "fresh" => "fresh",
                "grown" => "grown",
                _ => "reused",
            };
            (action, report.from, report.load_seconds)
        }
        WorkloadPlan::Ycsb { raw, seed } => {
            let report =
                seed_ycsb::load(target, raw, *seed, documents, workers, limit, crew, shard).await?;
            let action = match report.from {
                0 => "fresh",
                f if f == documents => "reused",
                _ => "grown",
            };
            (action, report.from, report.load_seconds)
        }
        WorkloadPlan::Custom(_) => unreachable!("prepare_custom seeds a custom workload"),
    };
    let digest = match (current, action) {
        // Nothing was written to a state the caller already verified.
        (Some(state), "reused") if state.documents == documents => state.digest.clone(),
        _ => digest(client, &database, &collection, limit).await?,
    };
    store(&digests, &ns, identity, documents, &digest, limit).await?;
    Ok(Seeded {
        documents,
        digest,
        action,
        seconds: started.elapsed().as_secs_f64(),
        inserted: documents - from,
        insert_seconds,
    })
}

/// [`prepare_with`] for a custom workload: its collections grown from a state of fewer
/// documents in each (the caller's, or a stored one of the same identity that verifies), else
/// dropped and seeded fresh. Client processes do not share the load.
async fn prepare_custom(
    target: &ConnectedTarget,
    plan: &CustomPlan,
    documents: u64,
    current: Option<&Seeded>,
    reuse: bool,
    limit: Duration,
) -> Result<Seeded, DatasetError> {
    let client = &target.client;
    let started = Instant::now();
    let id = seed_custom::stored_id(plan);
    let identity = seed_custom::identity(plan);
    let digests = client
        .database(META_DATABASE)
        .collection::<StoredDigest>(DIGESTS);
    let to = seed_custom::counts(plan, documents)?;
    // A state grows into this one when no collection of it holds more.
    let grows_from = |n: u64| {
        seed_custom::counts(plan, n)
            .ok()
            .filter(|from| from.iter().zip(&to).all(|(a, b)| a <= b))
    };
    let from = match current {
        Some(state) => grows_from(state.documents),
        None if reuse => match within(limit, digests.find_one(doc! {"_id": &id}))
            .await
            .map_err(server("reading the stored digest"))?
        {
            Some(stored)
                if stored.dataset == identity
                    && seed_custom::digest_all(client, plan, limit).await? == stored.digest() =>
            {
                grows_from(stored.documents as u64)
            }
            _ => None,
        },
        None => None,
    };
    let from = match from {
        Some(from) => from,
        None => {
            seed_custom::drop_all(client, plan, limit).await?;
            within(limit, digests.delete_one(doc! {"_id": &id}))
                .await
                .map_err(server("removing the old stored digest"))?;
            vec![0; to.len()]
        }
    };
    if let Some(sharding) = &target.sharding {
        set_balancer(client, sharding.workload.balancer(), limit)
            .await
            .map_err(|e| DatasetError::Sharding(e.to_string()))?;
    }
    let insert_seconds = seed_custom::load(target, plan, &from, &to, limit).await?;
    let inserted = to.iter().sum::<u64>() - from.iter().sum::<u64>();
    let action = match (from.iter().all(|&f| f == 0), inserted) {
        (true, _) => "fresh",
        (false, 0) => "reused",
        (false, _) => "grown",
    };
    let digest = seed_custom::digest_all(client, plan, limit).await?;
    store(&digests, &id, identity, documents, &digest, limit).await?;
    Ok(Seeded {
        documents,
        digest,
        action,
        seconds: started.elapsed().as_secs_f64(),
        inserted,
        insert_seconds: if inserted == 0 { 0.0 } else { insert_seconds },
    })
}

/// Stores `digest` as the state of `namespace`, seeded under `identity` at `documents`.
async fn store(
    digests: &mongodb::Collection<StoredDigest>,
    namespace: &str,
    identity: String,
    documents: u64,
    digest: &DatasetDigest,
    limit: Duration,
) -> Result<(), DatasetError> {
    let stored = StoredDigest {
        namespace: namespace.to_owned(),
        dataset: identity,
        documents: documents as i64,
        method: digest.method.clone(),
        value: digest.value.clone(),
    };
    within(
        limit,
        digests
            .replace_one(doc! {"_id": namespace}, &stored)
            .upsert(true),
    )
    .await
    .map_err(server("storing the digest"))?;
    Ok(())
}

/// The digest of everything `plan` seeds: its collection's, or all of a custom workload's.
///
/// # Errors
/// A collection whose digest cannot be taken.
pub async fn plan_digest(
    client: &Client,
    plan: &WorkloadPlan,
    limit: Duration,
) -> Result<DatasetDigest, DatasetError> {
    if let WorkloadPlan::Custom(custom) = plan {
        return Ok(seed_custom::digest_all(client, custom, limit).await?);
    }
    let (database, collection) = namespace(plan)?;
    Ok(digest(client, &database, &collection, limit).await?)
}

/// Drops the collection with its dataset record and stored digest.
async fn drop_dataset(
    client: &Client,
    database: &str,
    collection: &str,
    ns: &str,
    limit: Duration,
) -> Result<(), DatasetError> {
    let old = client.database(database).collection::<Document>(collection);
    within(whole_collection(limit), old.drop())
        .await
        .map_err(server("dropping the old collection"))?;
    let meta = client.database(META_DATABASE);
    for store in [META_COLLECTION, DIGESTS] {
        let record = meta.collection::<Document>(store);
        within(limit, record.delete_one(doc! {"_id": ns}))
            .await
            .map_err(server("removing the old dataset record"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::ycsb::RawProperties;

    #[test]
    fn run_only_ycsb_properties_do_not_change_the_dataset() {
        let plan = |preset: &str, extra: &[(&str, &str)]| {
            let mut raw = RawProperties::preset(preset).unwrap();
            for (k, v) in extra {
                raw.set(*k, *v);
            }
            WorkloadPlan::Ycsb { raw, seed: 1 }
        };
        let a = dataset_identity(&plan("workloada", &[]));
        assert_eq!(a, dataset_identity(&plan("workloadb", &[])));
        assert_eq!(
            a,
            dataset_identity(&plan("workloada", &[("recordcount", "5")]))
        );
        assert_ne!(
            a,
            dataset_identity(&plan("workloada", &[("fieldcount", "5")]))
        );
        let flights = WorkloadPlan::Flights(Box::default());
        assert!(dataset_identity(&flights).starts_with("flights/v1 table="));
    }
}
