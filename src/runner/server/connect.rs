//! Connecting to one target: parse the URI, reach the server within a deadline, and learn what
//! it is (version, topology). Every failure names the target.

use std::time::Duration;

use mongodb::Client;
use mongodb::bson::{Document, doc};
use mongodb::options::{ClientOptions, Compressor};
use serde::{Deserialize, Serialize};

use super::uri::{check_uri, scrub};
use crate::api::WireCompressor;
use crate::runner::wire::{self, WirePath};

/// Why a target could not be used. The driver's words are kept as text, scrubbed of the
/// password ([`scrub`]): no error source carries the URI further.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error(
        "target {target}: the URI does not parse: {reason}; expected \
         mongodb://[USER:PASSWORD@]HOST[:PORT][,HOST...][/DATABASE][?OPTIONS] or mongodb+srv://..."
    )]
    Uri { target: String, reason: String },
    #[error("target {target}: the server did not answer within {timeout:?} ({reason})")]
    Unreachable {
        target: String,
        timeout: Duration,
        reason: String,
    },
}

impl ConnectError {
    fn uri(target: &str, uri: &str, e: &mongodb::error::Error) -> ConnectError {
        ConnectError::Uri {
            target: target.to_owned(),
            reason: scrub(&e.to_string(), uri),
        }
    }
}

/// What the server says about itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerInfo {
    /// `buildInfo.version`, e.g. `8.0.4`.
    pub version: String,
    /// `buildInfo.gitVersion`, when reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub git_version: Option<String>,
    /// Percona Server for MongoDB reports its own version as `psmdbVersion`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub psmdb_version: Option<String>,
    /// Whose server it is ([`distribution`]).
    pub distribution: String,
    /// `serverStatus.storageEngine.name` (`wiredTiger`); absent where the server does not say
    /// (FerretDB, a router).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub storage_engine: Option<String>,
    /// The WiredTiger cache size (`wiredTiger.cache."maximum bytes configured"`), bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_bytes: Option<u64>,
    /// `standalone`, `replicaSet:<name>` or `mongos`.
    pub topology: String,
    /// `hello.isWritablePrimary`.
    pub writable_primary: bool,
    /// `hello.hosts` (replica-set members the server knows of).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
}

/// [`ServerInfo::topology`] of a router of a sharded cluster.
pub const MONGOS: &str = "mongos";

/// A connected target.
#[derive(Debug, Clone)]
pub struct ConnectedTarget {
    pub name: String,
    pub client: Client,
    pub server: ServerInfo,
    /// How its workers send their commands (`wire`).
    pub wire: WirePath,
    /// For a target reached through mongos with `spec.workload.sharding`: how the
    /// workload's collections are sharded (the seeding shards a fresh collection so).
    pub sharding: Option<std::sync::Arc<Sharding>>,
    /// The noise canaries beside its members (`host:port`, a provisioned member's sidecar or
    /// `run --server-canary`), which also read each member's CPU time.
    pub canaries: Vec<String>,
}

/// A sharded target's settings, as the runner needs them.
#[derive(Debug, Clone, PartialEq)]
pub struct Sharding {
    /// `spec.workload.sharding`.
    pub workload: crate::api::WorkloadSharding,
    /// The cluster's shape for results (`Target::topology_text`, or `sharded` for a target
    /// the spec does not describe).
    pub topology: String,
}

/// `uri` with YCSB's `j=` option (which the Rust driver refuses) spelled `journal=`, the
/// driver's name for it; a `journal` option given too wins.
pub fn journal_option(uri: &str) -> String {
    let Some((head, query)) = uri.split_once('?') else {
        return uri.to_owned();
    };
    let options: Vec<&str> = query.split('&').collect();
    let key = |o: &str| o.split('=').next().unwrap_or("").to_ascii_lowercase();
    let has_journal = options.iter().any(|o| key(o) == "journal");
    let kept: Vec<String> = options
        .iter()
        .filter(|o| !(has_journal && key(o) == "j"))
        .map(|o| match o.split_once('=') {
            Some((k, v)) if k.eq_ignore_ascii_case("j") => format!("journal={v}"),
            _ => (*o).to_owned(),
        })
        .collect();
    format!("{head}?{}", kept.join("&"))
}

/// The driver's compressor for a `spec.workload.wireCompressors` entry (default levels).
pub fn compressor(c: WireCompressor) -> Compressor {
    match c {
        WireCompressor::Zlib => Compressor::Zlib { level: None },
        WireCompressor::Snappy => Compressor::Snappy,
        WireCompressor::Zstd => Compressor::Zstd { level: None },
    }
}

/// Client options for a benchmark: a pool large enough for every worker plus the runner's own
/// statistics and explain calls, and `timeout` for server selection and connecting. A
/// non-empty `compressors` (`spec.workload.wireCompressors`, in order of preference) replaces
/// the URI's `compressors`; empty keeps what the URI says (none by default). The URI's read and
/// write concern options (`w`, `journal`, `wtimeoutMS`, `readConcernLevel`) stay in the options:
/// the runner adds them to every command that sets none of its own.
pub async fn client_options(
    name: &str,
    uri: &str,
    workers: u32,
    timeout: Duration,
    compressors: &[WireCompressor],
) -> Result<ClientOptions, ConnectError> {
    check_uri(uri).map_err(|problem| ConnectError::Uri {
        target: name.to_owned(),
        reason: problem.to_string(),
    })?;
    let mut opts = ClientOptions::parse(journal_option(uri))
        .await
        .map_err(|e| ConnectError::uri(name, uri, &e))?;
    opts.app_name = Some("mongobench".to_owned());
    opts.server_selection_timeout = Some(timeout);
    opts.connect_timeout = Some(timeout);
    opts.max_pool_size = Some(workers.max(1) + 4);
    opts.min_pool_size = None;
    if !compressors.is_empty() {
        opts.compressors = Some(compressors.iter().map(|c| compressor(*c)).collect());
    }
    Ok(opts)
}

/// Connects and identifies the server; fails within `timeout` when nothing answers. The client
/// offers the URI's compressors, if any; see [`connect_with`] for `spec.workload.wireCompressors`.
pub async fn connect(
    name: &str,
    uri: &str,
    workers: u32,
    timeout: Duration,
) -> Result<ConnectedTarget, ConnectError> {
    connect_with(name, uri, workers, timeout, &[]).await
}

/// [`connect`] with the wire compressors the client offers (`spec.workload.wireCompressors`,
/// in order of preference; the server picks the first it supports, or none).
pub async fn connect_with(
    name: &str,
    uri: &str,
    workers: u32,
    timeout: Duration,
    compressors: &[WireCompressor],
) -> Result<ConnectedTarget, ConnectError> {
    let opts = client_options(name, uri, workers, timeout, compressors).await?;
    let client =
        Client::with_options(opts.clone()).map_err(|e| ConnectError::uri(name, uri, &e))?;
    let unreachable = |e: mongodb::error::Error| ConnectError::Unreachable {
        target: name.to_owned(),
        timeout,
        reason: scrub(&e.to_string(), uri),
    };
    let admin = client.database("admin");
    let hello = admin
        .run_command(doc! {"hello": 1})
        .await
        .map_err(unreachable)?;
    let build = admin
        .run_command(doc! {"buildInfo": 1})
        .await
        .map_err(unreachable)?;
    // The engine and its cache only describe the target: a server that refuses
    // `serverStatus` here is still measured (the cell's own rounds say what it lacks).
    let status = admin.run_command(doc! {"serverStatus": 1}).await.ok();
    let mut server = server_info(&hello, &build);
    if let Some(status) = &status {
        (server.storage_engine, server.cache_bytes) = storage_engine(status);
    }
    let wire = wire::probe(wire::choose(&opts, &hello, timeout)).await;
    tracing::info!(target = name, "workers send through {wire}");
    Ok(ConnectedTarget {
        name: name.to_owned(),
        client,
        server,
        wire,
        sharding: None,
        canaries: Vec::new(),
    })
}

/// Reads [`ServerInfo`] from `hello` and `buildInfo` replies.
pub fn server_info(hello: &Document, build: &Document) -> ServerInfo {
    let topology = match hello.get_str("setName") {
        Ok(set) => format!("replicaSet:{set}"),
        Err(_) if hello.get_str("msg") == Ok("isdbgrid") => MONGOS.to_owned(),
        Err(_) => "standalone".to_owned(),
    };
    let writable_primary = hello
        .get_bool("isWritablePrimary")
        .or_else(|_| hello.get_bool("ismaster"))
        .unwrap_or(false);
    let hosts = hello
        .get_array("hosts")
        .map(|a| {
            a.iter()
                .filter_map(|h| h.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    ServerInfo {
        version: build.get_str("version").unwrap_or("unknown").to_owned(),
        git_version: build.get_str("gitVersion").ok().map(str::to_owned),
        psmdb_version: build.get_str("psmdbVersion").ok().map(str::to_owned),
        distribution: distribution(build),
        storage_engine: None,
        cache_bytes: None,
        topology,
        writable_primary,
        hosts,
    }
}

/// Whose server a `buildInfo` reply comes from, by the field each distribution adds:
/// `Percona Server for MongoDB`, `MongoDB Enterprise`, `FerretDB`, `SecantusDB`, else `MongoDB`
/// (Community adds nothing of its own).
pub fn distribution(build: &Document) -> String {
    let has = |key| build.contains_key(key);
    let enterprise = build
        .get_array("modules")
        .is_ok_and(|m| m.iter().any(|module| module.as_str() == Some("enterprise")));
    let name = if has("psmdbVersion") {
        "Percona Server for MongoDB"
    } else if has("ferretdbVersion") {
        "FerretDB"
    } else if has("secantusVersion") {
        "SecantusDB"
    } else if enterprise {
        "MongoDB Enterprise"
    } else {
        "MongoDB"
    };
    name.to_owned()
}

/// The storage engine's name and WiredTiger's configured cache from a `serverStatus` reply.
pub fn storage_engine(status: &Document) -> (Option<String>, Option<u64>) {
    let name = status
        .get_document("storageEngine")
        .and_then(|e| e.get_str("name"))
        .ok()
        .map(str::to_owned);
    let cache = status
        .get_document("wiredTiger")
        .and_then(|w| w.get_document("cache"))
        .ok()
        .and_then(|c| c.get("maximum bytes configured"))
        .and_then(|b| match b {
            mongodb::bson::Bson::Int64(n) => u64::try_from(*n).ok(),
            mongodb::bson::Bson::Int32(n) => u64::try_from(*n).ok(),
            mongodb::bson::Bson::Double(f) if *f >= 0.0 => Some(*f as u64),
            _ => None,
        });
    (name, cache)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replica_set_primary_is_recognised() {
        let hello =
            doc! {"isWritablePrimary": true, "setName": "rs0", "hosts": ["a:27017", "b:27017"]};
        let build = doc! {"version": "8.0.34-15", "gitVersion": "abc", "psmdbVersion": "8.0.34-15"};
        let info = server_info(&hello, &build);
        assert_eq!(info.topology, "replicaSet:rs0");
        assert!(info.writable_primary);
        assert_eq!(info.hosts, ["a:27017", "b:27017"]);
        assert_eq!(info.psmdb_version.as_deref(), Some("8.0.34-15"));
        assert_eq!(info.distribution, "Percona Server for MongoDB");
    }

    #[test]
    fn each_distribution_is_named_by_the_field_it_adds_to_build_info() {
        let named = |build: Document| distribution(&build);
        assert_eq!(named(doc! {"version": "8.0.4", "modules": []}), "MongoDB");
        assert_eq!(
            named(doc! {"version": "8.0.4", "modules": ["enterprise"]}),
            "MongoDB Enterprise"
        );
        assert_eq!(
            named(doc! {"version": "7.0.42", "ferretdbVersion": "unknown"}),
            "FerretDB"
        );
        assert_eq!(
            named(doc! {"version": "8.2.11", "secantusVersion": "0.4.0"}),
            "SecantusDB"
        );
    }

    #[test]
    fn the_engine_and_its_cache_are_read_where_the_server_reports_them() {
        let wt = doc! {
            "storageEngine": {"name": "wiredTiger", "persistent": true},
            "wiredTiger": {"cache": {"maximum bytes configured": 1_073_741_824_i64}},
        };
        assert_eq!(
            storage_engine(&wt),
            (Some("wiredTiger".to_owned()), Some(1_073_741_824))
        );
        assert_eq!(storage_engine(&doc! {"version": "7.0.42"}), (None, None));
    }

    #[test]
    fn standalone_without_build_version_reads_unknown() {
        let info = server_info(&doc! {"ismaster": true}, &doc! {});
        assert_eq!(info.topology, "standalone");
        assert!(info.writable_primary);
        assert_eq!(info.version, "unknown");
        assert_eq!(info.git_version, None);
    }

    #[tokio::test]
    async fn spec_compressors_replace_the_uri_s_and_concerns_come_from_the_uri() {
        let t = Duration::from_secs(1);
        let uri = "mongodb://h:27017/?compressors=zlib&w=2&journal=true&wtimeoutMS=500&readConcernLevel=local";
        let plain = client_options("x", uri, 4, t, &[]).await.unwrap();
        assert_eq!(
            plain.compressors.as_deref(),
            Some(&[Compressor::Zlib { level: None }][..])
        );
        let wc = plain
            .write_concern
            .clone()
            .expect("the URI's write concern");
        assert_eq!(wc.w, Some(mongodb::options::Acknowledgment::Nodes(2)));
        assert_eq!(wc.journal, Some(true));
        assert_eq!(wc.w_timeout, Some(Duration::from_millis(500)));
        assert_eq!(
            plain.read_concern.map(|rc| rc.level),
            Some(mongodb::options::ReadConcernLevel::Local)
        );
        assert_eq!(plain.max_pool_size, Some(8));
        let spec = client_options(
            "x",
            uri,
            4,
            t,
            &[
                WireCompressor::Zstd,
                WireCompressor::Snappy,
                WireCompressor::Zlib,
            ],
        )
        .await
        .unwrap();
        assert_eq!(
            spec.compressors.as_deref(),
            Some(
                &[
                    Compressor::Zstd { level: None },
                    Compressor::Snappy,
                    Compressor::Zlib { level: None }
                ][..]
            )
        );
        let none = client_options("x", "mongodb://h/", 1, t, &[])
            .await
            .unwrap();
        assert_eq!(none.compressors, None);
        assert_eq!(none.write_concern, None);
    }

    #[tokio::test]
    async fn ycsb_s_j_option_is_the_driver_s_journal() {
        assert_eq!(
            journal_option("mongodb://h/ycsb?w=1&j=true"),
            "mongodb://h/ycsb?w=1&journal=true"
        );
        assert_eq!(
            journal_option("mongodb://h/?journal=true&j=true&w=2"),
            "mongodb://h/?journal=true&w=2"
        );
        assert_eq!(journal_option("mongodb://h/"), "mongodb://h/");
        let opts = client_options("x", "mongodb://h/?j=true", 1, Duration::from_secs(1), &[])
            .await
            .unwrap();
        assert_eq!(opts.write_concern.unwrap().journal, Some(true));
    }

    #[tokio::test]
    async fn a_uri_that_does_not_parse_names_the_target() {
        let err = connect("psmdb-8", "postgres://x", 1, Duration::from_secs(1))
            .await
            .unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.starts_with("target psmdb-8: the URI does not parse"),
            "{msg}"
        );
    }
}
