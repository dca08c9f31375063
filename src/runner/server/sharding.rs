//! Sharded targets on the wire: bringing up a cluster the operator provisioned, sharding a
//! workload collection before it is seeded, and reading how its documents and chunks lie over
//! the shards. The decisions are `plan/sharding`'s; this reads the cluster, asks for the next
//! step, sends its command and reads again, so a runner restarted at any point resumes at the
//! first unfinished step.

use std::time::{Duration, Instant};

use mongodb::Client;
use mongodb::bson::{Bson, Document, doc};
use mongodb::options::ServerAddress;

use super::connect::journal_option;
use super::rs_init::{self, InitError};
use crate::api::Balancer;
use crate::plan::sharding::{
    Chunk, ClusterLayout, ClusterStep, CollectionPlan, CollectionSeen, Observed, SetLayout,
    ShardingError, balancer_command, next_cluster_step, next_collection_step,
};
use crate::result::ShardShare;
use crate::runner::deadline::{describe, within};

/// The same step chosen this many times in a row, after its command was accepted each time,
/// is a cluster that does not do what it says.
const STUCK_AFTER: usize = 3;

#[derive(Debug, thiserror::Error)]
pub enum ShardingIoError {
    #[error("{step}: {source}")]
    Initiate { step: String, source: InitError },
    #[error("{step}: {}", describe(source))]
    Server {
        step: String,
        source: mongodb::error::Error,
    },
    #[error("{0}")]
    Plan(#[from] ShardingError),
    #[error(
        "{step}: still the next step after {STUCK_AFTER} accepted attempts (the cluster \
         reports no change)"
    )]
    Stuck { step: String },
    #[error(
        "waiting for a mongos: none answered hello as a router within {waited:?} (last: {last})"
    )]
    NoMongos { waited: Duration, last: String },
}

fn server(step: impl Into<String>) -> impl FnOnce(mongodb::error::Error) -> ShardingIoError {
    let step = step.into();
    move |source| ShardingIoError::Server { step, source }
}

/// The connection string of `set` with the user, password and options of `mongos_uri`:
/// the runner reaches each set with the one login the cluster has.
pub fn set_uri(mongos_uri: &str, set: &SetLayout) -> String {
    let rest = mongos_uri
        .split_once("://")
        .map_or(mongos_uri, |(_, rest)| rest);
    let (authority, tail) = rest.split_once('/').unwrap_or((rest, ""));
    let user = authority.rfind('@').map_or("", |at| &authority[..=at]);
    let mut options = vec![format!("replicaSet={}", set.name)];
    if let Some((_, query)) = tail.split_once('?') {
        options.extend(
            query
                .split('&')
                .filter(|o| !o.is_empty() && !o.to_ascii_lowercase().starts_with("replicaset="))
                .map(str::to_owned),
        );
    }
    format!(
        "mongodb://{user}{}/?{}",
        set.members.join(","),
        options.join("&")
    )
}

/// `hello` of `member` alone, logged in as `uri` says; `None` when it does not answer.
async fn direct_hello(member: &str, uri: &str, timeout: Duration) -> Option<Document> {
    let address = ServerAddress::parse(member).ok()?;
    let client = Client::with_options(rs_init::direct_options(address, uri, timeout).await).ok()?;
    within(
        timeout,
        client.database("admin").run_command(doc! {"hello": 1}),
    )
    .await
    .ok()
}

async fn set_initiated(set: &SetLayout, uri: &str, timeout: Duration) -> bool {
    match set.members.first() {
        Some(first) => direct_hello(first, uri, timeout)
            .await
            .is_some_and(|h| h.get_str("setName").is_ok()),
        None => false,
    }
}

async fn observe(
    layout: &ClusterLayout,
    mongos: &Client,
    uri: &str,
    timeout: Duration,
) -> Observed {
    let mut seen = Observed {
        config_initiated: set_initiated(&layout.config, uri, timeout).await,
        ..Observed::default()
    };
    for shard in &layout.shards {
        seen.shards_initiated
            .push(set_initiated(shard, uri, timeout).await);
    }
    let admin = mongos.database("admin");
    seen.mongos_up = within(timeout, admin.run_command(doc! {"hello": 1}))
        .await
        .is_ok_and(|h| h.get_str("msg") == Ok("isdbgrid"));
    if seen.mongos_up {
        seen.shards_added = list_shards(mongos, timeout).await.unwrap_or_default();
        seen.balancer_on = within(timeout, admin.run_command(doc! {"balancerStatus": 1}))
            .await
            .ok()
            .and_then(|s| s.get_str("mode").ok().map(|mode| mode != "off"));
    }
    seen
}

/// The ids of the cluster's shards, sorted.
pub async fn list_shards(
    mongos: &Client,
    timeout: Duration,
) -> Result<Vec<String>, ShardingIoError> {
    let reply = within(
        timeout,
        mongos.database("admin").run_command(doc! {"listShards": 1}),
    )
    .await
    .map_err(server("listing the shards"))?;
    let mut ids: Vec<String> = reply
        .get_array("shards")
        .map(|shards| {
            shards
                .iter()
                .filter_map(|s| s.as_document()?.get_str("_id").ok().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    ids.sort();
    Ok(ids)
}

/// Counts repeats of the same step; the cluster is stuck after [`STUCK_AFTER`].
struct Progress<S> {
    last: Option<S>,
    repeats: usize,
}

impl<S: PartialEq + Clone> Progress<S> {
    fn new() -> Self {
        Progress {
            last: None,
            repeats: 0,
        }
    }

    fn stuck(&mut self, step: &S) -> bool {
        if self.last.as_ref() == Some(step) {
            self.repeats += 1;
        } else {
            self.last = Some(step.clone());
            self.repeats = 1;
        }
        self.repeats > STUCK_AFTER
    }
}

/// Brings the provisioned cluster of `layout` up through the routers of `mongos_uri`:
/// config server set, shard sets, routers, shards added, balancer set to `balancer`. Each
/// call of a step waits at most `timeout`; so does the wait for a router. `on_step` hears
/// each step before it is taken (the runner publishes it as its activity).
pub async fn bring_up(
    layout: &ClusterLayout,
    mongos_uri: &str,
    balancer: Balancer,
    timeout: Duration,
    on_step: &mut (dyn FnMut(String) + Send),
) -> Result<(), ShardingIoError> {
    let mongos = Client::with_uri_str(journal_option(mongos_uri))
        .await
        .map_err(server("reading the routers' connection string"))?;
    let mut progress = Progress::new();
    let mut waiting_since: Option<Instant> = None;
    loop {
        let seen = observe(layout, &mongos, mongos_uri, timeout).await;
        let step = next_cluster_step(layout, balancer, &seen);
        let what = step.describe(layout);
        if step != ClusterStep::WaitForMongos && progress.stuck(&step) {
            return Err(ShardingIoError::Stuck { step: what });
        }
        on_step(what.clone());
        let initiate = |set: &SetLayout| {
            let command = step.command(layout).unwrap_or_default();
            let (set, what) = (set.clone(), what.clone());
            async move {
                rs_init::initiate_with(
                    &set.name,
                    &set.members,
                    command,
                    &set_uri(mongos_uri, &set),
                    timeout,
                )
                .await
                .map_err(|source| ShardingIoError::Initiate { step: what, source })
            }
        };
        match step {
            ClusterStep::Done => return Ok(()),
            ClusterStep::WaitForMongos => {
                let since = *waiting_since.get_or_insert_with(Instant::now);
                if since.elapsed() >= timeout {
                    let last = within(
                        timeout,
                        mongos.database("admin").run_command(doc! {"hello": 1}),
                    )
                    .await
                    .map_or_else(|e| describe(&e), |h| format!("hello: {h}"));
                    return Err(ShardingIoError::NoMongos {
                        waited: timeout,
                        last,
                    });
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            ClusterStep::InitiateConfig => initiate(&layout.config).await?,
            ClusterStep::InitiateShard(i) => initiate(&layout.shards[i]).await?,
            ClusterStep::AddShard(_) | ClusterStep::SetBalancer(_) => {
                let command = step.command(layout).unwrap_or_default();
                within(timeout, mongos.database("admin").run_command(command))
                    .await
                    .map_err(server(what))?;
            }
        }
    }
}

/// Sets the cluster's balancer to `policy` unless `balancerStatus` says it already is: a
/// cluster the runner did not bring up (an external target) runs under the spec's policy too.
pub async fn set_balancer(
    client: &Client,
    policy: Balancer,
    timeout: Duration,
) -> Result<(), ShardingIoError> {
    let admin = client.database("admin");
    let status = within(timeout, admin.run_command(doc! {"balancerStatus": 1}))
        .await
        .map_err(server("reading the balancer's state"))?;
    // A state it does not say is set as well.
    let on = status.get_str("mode").ok().map(|mode| mode != "off");
    let want = policy == Balancer::Running;
    if on != Some(want) {
        let step = ClusterStep::SetBalancer(want).to_string();
        within(timeout, admin.run_command(balancer_command(want)))
            .await
            .map_err(server(step))?;
    }
    Ok(())
}

/// The sharding state of `plan`'s collection: its key when sharded, and its chunks in key
/// order.
pub async fn read_collection(
    client: &Client,
    namespace: &str,
    timeout: Duration,
) -> Result<CollectionSeen, ShardingIoError> {
    let config = client.database("config");
    let entry = within(
        timeout,
        config
            .collection::<Document>("collections")
            .find_one(doc! {"_id": namespace}),
    )
    .await
    .map_err(server(format!("reading the sharding of {namespace}")))?
    .filter(|c| !c.get_bool("dropped").unwrap_or(false));
    let Some(entry) = entry else {
        return Ok(CollectionSeen::default());
    };
    // Chunks name their collection by uuid since 5.0, by namespace before.
    let filter = match entry.get("uuid") {
        Some(uuid) => doc! {"uuid": uuid.clone()},
        None => doc! {"ns": namespace},
    };
    let mut cursor = within(
        timeout,
        config
            .collection::<Document>("chunks")
            .find(filter)
            .sort(doc! {"min": 1}),
    )
    .await
    .map_err(server(format!("reading the chunks of {namespace}")))?;
    let mut chunks = Vec::new();
    while within(timeout, cursor.advance())
        .await
        .map_err(server(format!("reading the chunks of {namespace}")))?
    {
        let c: Document = cursor
            .deserialize_current()
            .map_err(server(format!("reading the chunks of {namespace}")))?;
        let bound = |name: &str| {
            c.get_document(name)
                .ok()
                .and_then(|d| d.iter().next().map(|(_, v)| v.clone()))
                .unwrap_or(Bson::Null)
        };
        chunks.push(Chunk {
            min: bound("min"),
            max: bound("max"),
            shard: c.get_str("shard").unwrap_or_default().to_owned(),
        });
    }
    Ok(CollectionSeen {
        sharded_key: entry.get_document("key").ok().cloned(),
        chunks,
    })
}

/// Shards `plan`'s collection, splits it at the plan's points and places the chunks, through
/// a router.
pub async fn shard_collection(
    client: &Client,
    plan: &CollectionPlan,
    timeout: Duration,
) -> Result<(), ShardingIoError> {
    let namespace = plan.namespace();
    let mut progress = Progress::new();
    loop {
        let seen = read_collection(client, &namespace, timeout).await?;
        let step = next_collection_step(plan, &seen)?;
        let what = format!("{namespace}: {step:?}");
        if progress.stuck(&step) {
            return Err(ShardingIoError::Stuck { step: what });
        }
        let Some(command) = step.command(plan) else {
            return Ok(());
        };
        within(timeout, client.database("admin").run_command(command))
            .await
            .map_err(server(what))?;
    }
}

/// How a collection lies over the shards: documents and bytes per shard (`$collStats`
/// through a router answers once per shard), chunks per shard, and the chunks themselves.
pub async fn distribution(
    client: &Client,
    database: &str,
    collection: &str,
    timeout: Duration,
) -> Result<(Vec<ShardShare>, Vec<Chunk>), ShardingIoError> {
    let namespace = format!("{database}.{collection}");
    let step = format!("reading the distribution of {namespace}");
    let mut cursor = within(
        timeout,
        client
            .database(database)
            .collection::<Document>(collection)
            .aggregate([doc! {"$collStats": {"storageStats": {}}}]),
    )
    .await
    .map_err(server(step.clone()))?;
    let mut shares: Vec<ShardShare> = Vec::new();
    while within(timeout, cursor.advance())
        .await
        .map_err(server(step.clone()))?
    {
        let d: Document = cursor.deserialize_current().map_err(server(step.clone()))?;
        let stats = d.get_document("storageStats").cloned().unwrap_or_default();
        let number = |k: &str| match stats.get(k) {
            Some(Bson::Int32(v)) => u64::try_from(*v).unwrap_or(0),
            Some(Bson::Int64(v)) => u64::try_from(*v).unwrap_or(0),
            Some(Bson::Double(v)) if *v >= 0.0 => *v as u64,
            _ => 0,
        };
        shares.push(ShardShare {
            shard: d.get_str("shard").unwrap_or_default().to_owned(),
            documents: number("count"),
            bytes: number("size"),
            chunks: 0,
        });
    }
    let chunks = read_collection(client, &namespace, timeout).await?.chunks;
    for chunk in &chunks {
        match shares.iter_mut().find(|s| s.shard == chunk.shard) {
            Some(share) => share.chunks += 1,
            None => shares.push(ShardShare {
                shard: chunk.shard.clone(),
                documents: 0,
                bytes: 0,
                chunks: 1,
            }),
        }
    }
    shares.sort_by(|a, b| a.shard.cmp(&b.shard));
    Ok((shares, chunks))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(name: &str, members: &[&str]) -> SetLayout {
        SetLayout {
            name: name.into(),
            members: members.iter().map(|m| (*m).to_owned()).collect(),
        }
    }

    #[test]
    fn a_set_is_reached_with_the_routers_login_and_options() {
        let shard = set(
            "b-t-p-shard-0",
            &["s-0.s.ns.svc:27017", "s-1.s.ns.svc:27017"],
        );
        assert_eq!(
            set_uri(
                "mongodb://u:p%40w@m.ns.svc:27017/?authSource=admin&replicaSet=x",
                &shard
            ),
            "mongodb://u:p%40w@s-0.s.ns.svc:27017,s-1.s.ns.svc:27017/\
             ?replicaSet=b-t-p-shard-0&authSource=admin"
        );
        assert_eq!(
            set_uri("mongodb://m:27017", &set("c", &["c-0:27017"])),
            "mongodb://c-0:27017/?replicaSet=c"
        );
    }

    #[test]
    fn the_same_step_over_and_over_is_stuck() {
        let mut progress = Progress::new();
        assert!(!progress.stuck(&ClusterStep::AddShard(0)));
        assert!(!progress.stuck(&ClusterStep::AddShard(0)));
        assert!(!progress.stuck(&ClusterStep::AddShard(0)));
        assert!(progress.stuck(&ClusterStep::AddShard(0)));
        assert!(!progress.stuck(&ClusterStep::AddShard(1)));
    }
}
