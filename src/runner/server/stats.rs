//! Server statistics around a measured phase: `serverStatus` on every replica-set member before
//! and after (and each member's CPU time from the operating system where it can be read),
//! `hostInfo` once, `collStats` of the workload's collection. Members are reached directly
//! (`directConnection`) with the target's own credentials and options.

use std::time::Duration;

use mongodb::bson::doc;
use mongodb::options::ServerAddress;
use mongodb::{Client, Database};

use crate::measure::server::{
    CollStatsSizes, HostInfoFigures, OsCpuDelta, ServerFigureError, ServerStatusDelta,
    ServerStatusFigures,
};
use crate::result::{MemberFigures, NodeInfo, ServerStats};

use super::connect::ConnectedTarget;
use super::server_cpu::{CpuReader, OsCpuWatch};

/// Why server figures could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum StatsError {
    #[error("target {target}: {command} on {member}: {source}")]
    Command {
        target: String,
        member: String,
        command: &'static str,
        source: Box<mongodb::error::Error>,
    },
    #[error("target {target}: {command} on {member}: {source}")]
    Figures {
        target: String,
        member: String,
        command: &'static str,
        source: Box<ServerFigureError>,
    },
}

/// Every member of every shard a `listShards` reply names (`host` is `<set>/<m0>,<m1>,…`).
fn shard_hosts(reply: &mongodb::bson::Document) -> Vec<String> {
    reply
        .get_array("shards")
        .map(|shards| {
            shards
                .iter()
                .filter_map(|s| s.as_document()?.get_str("host").ok())
                .flat_map(|host| {
                    let members = host.split_once('/').map_or(host, |(_, m)| m);
                    members.split(',').map(str::to_owned).collect::<Vec<_>>()
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A direct connection to each member of a target.
pub struct Members {
    target: String,
    members: Vec<(String, Client)>,
    /// Who reads each member's CPU time from the operating system, in member order.
    cpu_readers: Vec<Option<CpuReader>>,
}

impl Members {
    /// One client per member the target's `hello` lists (the target's own address when it is
    /// not a replica set; every shard's members behind a mongos).
    pub async fn of(target: &ConnectedTarget, uri: &str) -> Result<Members, StatsError> {
        let base = mongodb::options::ClientOptions::parse(super::connect::journal_option(uri))
            .await
            .map_err(|source| StatsError::Command {
                target: target.name.clone(),
                // The URI may hold a password: messages end up in results and status.
                member: super::uri::redact_uri(uri),
                command: "parsing the URI",
                source: Box::new(source),
            })?;
        let hosts: Vec<String> = if target.server.topology == super::connect::MONGOS {
            // The data-bearing members of every shard, not the routers: their figures are
            // the server's work (the same login reaches them: docs/results.md).
            let shards = target
                .client
                .database("admin")
                .run_command(doc! {"listShards": 1})
                .await
                .map_err(|source| StatsError::Command {
                    target: target.name.clone(),
                    member: super::uri::redact_uri(uri),
                    command: "listShards",
                    source: Box::new(source),
                })?;
            shard_hosts(&shards)
        } else if target.server.hosts.is_empty() {
            base.hosts.iter().map(ToString::to_string).collect()
        } else {
            target.server.hosts.clone()
        };
        let mut members = Vec::new();
        for host in hosts {
            let mut opts = base.clone();
            opts.hosts =
                vec![
                    ServerAddress::parse(&host).map_err(|source| StatsError::Command {
                        target: target.name.clone(),
                        member: host.clone(),
                        command: "parsing the member address",
                        source: Box::new(source),
                    })?,
                ];
            opts.direct_connection = Some(true);
            opts.repl_set_name = None;
            opts.max_pool_size = Some(2);
            opts.server_selection_timeout = Some(Duration::from_secs(10));
            let client = Client::with_options(opts).map_err(|source| StatsError::Command {
                target: target.name.clone(),
                member: host.clone(),
                command: "creating a member client",
                source: Box::new(source),
            })?;
            members.push((host, client));
        }
        let cpu_readers = members
            .iter()
            .map(|(host, _)| CpuReader::for_member(host, &target.canaries))
            .collect();
        Ok(Members {
            target: target.name.clone(),
            members,
            cpu_readers,
        })
    }

    /// Starts reading each member's CPU time from the operating system (where a canary beside
    /// it or this machine can): the other half of the measured phase's `serverStatus` rounds.
    pub async fn watch_os_cpu(&self) -> OsCpuWatch {
        OsCpuWatch::start(self.cpu_readers.clone()).await
    }

    fn command_error(
        &self,
        member: &str,
        command: &'static str,
    ) -> impl FnOnce(mongodb::error::Error) -> StatsError {
        let (target, member) = (self.target.clone(), member.to_owned());
        move |source| StatsError::Command {
            target,
            member,
            command,
            source: Box::new(source),
        }
    }

    fn figures_error(
        &self,
        member: &str,
        command: &'static str,
    ) -> impl FnOnce(ServerFigureError) -> StatsError {
        let (target, member) = (self.target.clone(), member.to_owned());
        move |source| StatsError::Figures {
            target,
            member,
            command,
            source: Box::new(source),
        }
    }

    /// `serverStatus` of every member, in member order.
    pub async fn server_status(&self) -> Result<Vec<ServerStatusFigures>, StatsError> {
        let mut out = Vec::new();
        for (member, client) in &self.members {
            let doc = admin(client)
                .run_command(doc! {"serverStatus": 1})
                .await
                .map_err(self.command_error(member, "serverStatus"))?;
            out.push(
                ServerStatusFigures::from_document(&doc)
                    .map_err(self.figures_error(member, "serverStatus"))?,
            );
        }
        Ok(out)
    }

    /// `hostInfo` of every member, as the result's node entries.
    pub async fn nodes(&self) -> Result<Vec<NodeInfo>, StatsError> {
        let mut out = Vec::new();
        for (member, client) in &self.members {
            let doc = admin(client)
                .run_command(doc! {"hostInfo": 1})
                .await
                .map_err(self.command_error(member, "hostInfo"))?;
            out.push(NodeInfo {
                member: member.clone(),
                host: HostInfoFigures::from_document(&doc)
                    .map_err(self.figures_error(member, "hostInfo"))?,
                ..NodeInfo::default()
            });
        }
        Ok(out)
    }

    /// Deltas of every member between two `serverStatus` rounds, with the operating system's
    /// reading of each member's CPU over the same phase (`os_cpu`, from
    /// [`OsCpuWatch::stop`]), combined into the cell's server figures for `operations` over
    /// `window`.
    pub fn stats(
        &self,
        before: &[ServerStatusFigures],
        after: &[ServerStatusFigures],
        os_cpu: Vec<Option<Result<OsCpuDelta, String>>>,
        nodes: &[NodeInfo],
        window: Duration,
        operations: u64,
    ) -> Result<ServerStats, StatsError> {
        let mut members = Vec::new();
        let mut os_cpu = os_cpu.into_iter();
        for (i, (member, _)) in self.members.iter().enumerate() {
            let delta = ServerStatusDelta::between(&before[i], &after[i])
                .map_err(self.figures_error(member, "serverStatus delta"))?;
            members.push(MemberFigures {
                member: member.clone(),
                delta,
                host: nodes.get(i).map(|n| &n.host),
                os_cpu: os_cpu.next().flatten(),
            });
        }
        Ok(ServerStats::compute(members, window, operations))
    }
}

fn admin(client: &Client) -> Database {
    client.database("admin")
}

/// `collStats` sizes of `database.collection` (through `$collStats`-less `collStats`, which
/// every server version and FerretDB answer).
pub async fn coll_stats(
    target: &ConnectedTarget,
    database: &str,
    collection: &str,
) -> Result<CollStatsSizes, StatsError> {
    let doc = target
        .client
        .database(database)
        .run_command(doc! {"collStats": collection})
        .await
        .map_err(|source| StatsError::Command {
            target: target.name.clone(),
            member: "primary".to_owned(),
            command: "collStats",
            source: Box::new(source),
        })?;
    CollStatsSizes::from_document(&doc).map_err(|source| StatsError::Figures {
        target: target.name.clone(),
        member: "primary".to_owned(),
        command: "collStats",
        source: Box::new(source),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::server::ServerInfo;

    #[test]
    fn behind_a_router_the_members_are_every_shard_s() {
        let reply = doc! {"shards": [
            {"_id": "s0", "host": "s0/a-0.a:27017,a-1.a:27017", "state": 1},
            {"_id": "s1", "host": "s1/b-0.b:27017", "state": 1},
        ], "ok": 1};
        assert_eq!(
            shard_hosts(&reply),
            ["a-0.a:27017", "a-1.a:27017", "b-0.b:27017"]
        );
        assert!(shard_hosts(&doc! {"ok": 1}).is_empty());
    }

    #[tokio::test]
    async fn a_uri_that_does_not_parse_keeps_its_password_out_of_the_message() {
        let target = ConnectedTarget {
            name: "ext".into(),
            client: Client::with_uri_str("mongodb://127.0.0.1:1/")
                .await
                .unwrap(),
            server: ServerInfo {
                version: "8.0.4".into(),
                git_version: None,
                psmdb_version: None,
                distribution: "MongoDB".into(),
                storage_engine: None,
                cache_bytes: None,
                topology: "standalone".into(),
                writable_primary: true,
                hosts: Vec::new(),
            },
            wire: crate::runner::wire::WirePath::Driver("a test".into()),
            sharding: None,
            canaries: Vec::new(),
        };
        let uri = "mongodb://bench:planted-Pw7@127.0.0.1:27017/?maxPoolSize=lots";
        let msg = Members::of(&target, uri).await.err().unwrap().to_string();
        assert!(!msg.contains("planted-Pw7"), "{msg}");
        assert!(
            msg.contains("parsing the URI on mongodb://***@127.0.0.1:27017/?maxPoolSize=lots"),
            "{msg}"
        );
    }
}
