//! Administrative commands: the handshake, server and host information, cursors' `killCursors`,
//! collections, databases and indexes, statistics; anything unknown is `CommandNotFound`.

use std::sync::atomic::{AtomicU64, Ordering};

use bson::{Document, RawArrayBuf, RawBsonRef, RawDocumentBuf, doc, rawdoc};

use super::Server;
use super::command::{Command, Reply, document, fail, get, int, ok, to_raw};
use super::cursor::cursor_reply;
use crate::store::{Collection, matches};
use crate::wire;

impl Server {
    pub(super) fn admin(&self, c: &Command<'_>, connection_id: i64) -> Reply {
        match c.name {
            "hello" | "isMaster" | "ismaster" => ok(rawdoc! {
                "helloOk": true,
                "ismaster": true,
                "isWritablePrimary": true,
                "maxBsonObjectSize": 16 * 1024 * 1024,
                "maxMessageSizeBytes": wire::MAX_MESSAGE as i32,
                "maxWriteBatchSize": 100_000,
                "localTime": bson::DateTime::now(),
                "logicalSessionTimeoutMinutes": 30,
                "connectionId": connection_id,
                "minWireVersion": 0,
                "maxWireVersion": 21,
                "readOnly": false,
            }),
            "buildInfo" | "buildinfo" => ok(rawdoc! {
                "version": "7.0.0",
                "gitVersion": "mongobench-limit-server",
                "versionArray": [7, 0, 0, 0],
                "bits": 64,
                "maxBsonObjectSize": 16 * 1024 * 1024,
                "storageEngines": ["memory"],
            }),
            "ping" | "endSessions" | "setParameter" | "getParameter" | "logout"
            | "refreshSessions" | "killAllSessions" | "fsync" => ok(RawDocumentBuf::new()),
            "getLastError" | "getlasterror" => {
                ok(rawdoc! {"connectionId": connection_id, "n": 0, "err": bson::RawBson::Null})
            }
            "limitStats" => ok(to_raw(&self.counters.document())),
            "serverStatus" => self.server_status(),
            "hostInfo" => ok(host_info()),
            "replSetGetStatus" => Err(fail(
                76,
                "NoReplicationEnabled",
                "not running with --replSet",
            )),
            "currentOp" => ok(rawdoc! {"inprog": []}),
            "killCursors" => {
                let ids: Vec<i64> = match get(c.body, "cursors") {
                    Some(RawBsonRef::Array(a)) => a
                        .into_iter()
                        .flatten()
                        .filter_map(|v| int(Some(v)))
                        .collect(),
                    _ => Vec::new(),
                };
                let mut state = self.state.lock().expect("state");
                let mut killed = RawArrayBuf::new();
                for id in ids {
                    if state.cursors.remove(&id).is_some() {
                        killed.push(id);
                    }
                }
                ok(
                    rawdoc! {"cursorsKilled": killed, "cursorsNotFound": [], "cursorsAlive": [], "cursorsUnknown": []},
                )
            }
            "create" => {
                let mut state = self.state.lock().expect("state");
                if state.store.collections.contains_key(&c.ns()) {
                    return Err(fail(
                        48,
                        "NamespaceExists",
                        format!("Collection {} already exists.", c.ns()),
                    ));
                }
                state
                    .store
                    .collections
                    .insert(c.ns(), Collection::default());
                ok(RawDocumentBuf::new())
            }
            "drop" => {
                let mut state = self.state.lock().expect("state");
                match state.store.collections.remove(&c.ns()) {
                    Some(_) => ok(rawdoc! {"ns": c.ns(), "nIndexesWas": 1}),
                    None => Err(fail(26, "NamespaceNotFound", "ns not found")),
                }
            }
            "dropDatabase" => {
                let mut state = self.state.lock().expect("state");
                let prefix = format!("{}.", c.db);
                state
                    .store
                    .collections
                    .retain(|ns, _| !ns.starts_with(&prefix));
                ok(rawdoc! {"dropped": c.db})
            }
            "createIndexes" => {
                let mut state = self.state.lock().expect("state");
                let coll = state.store.collections.entry(c.ns()).or_default();
                let before = coll.indexes.len() as i32 + 1;
                for spec in c.documents("indexes") {
                    let spec: Document = spec.try_into().unwrap_or_default();
                    let name = spec.get_str("name").unwrap_or_default().to_owned();
                    if name != "_id_"
                        && !coll.indexes.iter().any(|i| i.get_str("name") == Ok(&name))
                    {
                        coll.add_index(spec);
                    }
                }
                let after = coll.indexes.len() as i32 + 1;
                ok(
                    rawdoc! {"createdCollectionAutomatically": false, "numIndexesBefore": before, "numIndexesAfter": after},
                )
            }
            "dropIndexes" => {
                let mut state = self.state.lock().expect("state");
                if let Some(coll) = state.store.collections.get_mut(&c.ns())
                    && let Some(RawBsonRef::String(name)) = get(c.body, "index")
                {
                    coll.drop_indexes(name);
                }
                ok(rawdoc! {"nIndexesWas": 1})
            }
            "listIndexes" => {
                let state = self.state.lock().expect("state");
                let Some(coll) = state.store.collections.get(&c.ns()) else {
                    return Err(fail(
                        26,
                        "NamespaceNotFound",
                        format!("ns does not exist: {}", c.ns()),
                    ));
                };
                let mut batch = RawArrayBuf::new();
                batch.push(rawdoc! {"v": 2, "key": {"_id": 1}, "name": "_id_"});
                for spec in &coll.indexes {
                    let mut s = doc! {"v": 2};
                    s.extend(spec.clone());
                    batch.push(to_raw(&s));
                }
                ok(cursor_reply(&c.ns(), 0, "firstBatch", batch))
            }
            "listCollections" => {
                let state = self.state.lock().expect("state");
                let filter = document(c.body, "filter");
                let prefix = format!("{}.", c.db);
                let mut names: Vec<&str> = state
                    .store
                    .collections
                    .keys()
                    .filter_map(|ns| ns.strip_prefix(&prefix))
                    .collect();
                names.sort();
                let mut batch = RawArrayBuf::new();
                for name in names {
                    let entry = rawdoc! {"name": name, "type": "collection", "options": {}, "info": {"readOnly": false}, "idIndex": {"v": 2, "key": {"_id": 1}, "name": "_id_"}};
                    if matches(&entry, &filter) {
                        batch.push(entry);
                    }
                }
                ok(cursor_reply(
                    &format!("{}.$cmd.listCollections", c.db),
                    0,
                    "firstBatch",
                    batch,
                ))
            }
            "listDatabases" => {
                let state = self.state.lock().expect("state");
                let mut dbs: Vec<&str> = state
                    .store
                    .collections
                    .keys()
                    .filter_map(|ns| ns.split('.').next())
                    .collect();
                dbs.sort();
                dbs.dedup();
                let mut list = RawArrayBuf::new();
                for db in dbs {
                    list.push(rawdoc! {"name": db, "sizeOnDisk": 0i64, "empty": false});
                }
                ok(rawdoc! {"databases": list, "totalSize": 0i64})
            }
            "collStats" => {
                let state = self.state.lock().expect("state");
                let (count, size, nindexes) =
                    state
                        .store
                        .collections
                        .get(&c.ns())
                        .map_or((0, 0, 0), |coll| {
                            (
                                coll.docs.len() as i64,
                                coll.bytes as i64,
                                coll.indexes.len() as i64 + 1,
                            )
                        });
                ok(rawdoc! {
                    "ns": c.ns(), "count": count, "size": size,
                    "avgObjSize": if count > 0 { size / count } else { 0 },
                    "storageSize": size, "totalIndexSize": 0i64, "totalSize": size,
                    "nindexes": nindexes, "scaleFactor": 1,
                })
            }
            "dbStats" => {
                let state = self.state.lock().expect("state");
                let prefix = format!("{}.", c.db);
                let (mut collections, mut objects, mut size, mut indexes) =
                    (0i64, 0i64, 0i64, 0i64);
                for (_, coll) in state
                    .store
                    .collections
                    .iter()
                    .filter(|(ns, _)| ns.starts_with(&prefix))
                {
                    collections += 1;
                    objects += coll.docs.len() as i64;
                    size += coll.bytes as i64;
                    indexes += coll.indexes.len() as i64 + 1;
                }
                ok(
                    rawdoc! {"db": c.db, "collections": collections, "objects": objects, "dataSize": size, "storageSize": size, "indexes": indexes, "indexSize": 0i64, "scaleFactor": 1},
                )
            }
            "explain" => ok(rawdoc! {
                "queryPlanner": {"winningPlan": {"stage": "COLLSCAN"}},
                "executionStats": {"nReturned": 0, "executionTimeMillis": 0, "totalKeysExamined": 0, "totalDocsExamined": 0, "executionStages": {"stage": "COLLSCAN"}},
            }),
            other => Err(fail(
                59,
                "CommandNotFound",
                format!("no such command: '{other}'"),
            )),
        }
    }

    fn server_status(&self) -> Reply {
        let n = &self.counters;
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed) as i64;
        ok(rawdoc! {
            "host": format!("127.0.0.1:{}", self.port),
            "version": "7.0.0",
            "process": "limit-server",
            "pid": std::process::id() as i64,
            "uptimeMillis": self.started.elapsed().as_millis() as i64,
            "localTime": bson::DateTime::now(),
            "connections": {"current": get(&n.connections), "totalCreated": get(&n.connections_total)},
            "opcounters": {
                "insert": get(&n.insert), "query": get(&n.query), "update": get(&n.update),
                "delete": get(&n.delete), "getmore": get(&n.getmore), "command": get(&n.command) + get(&n.aggregate),
            },
        })
    }
}

/// `hostInfo` from this machine's /proc.
fn host_info() -> RawDocumentBuf {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let meminfo = read("/proc/meminfo");
    let mem_mb = meminfo
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<i64>().ok())
        .map_or(0, |kb| kb / 1024);
    let cpuinfo = read("/proc/cpuinfo");
    let model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or("unknown", |(_, m)| m.trim())
        .to_owned();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as i32);
    let hostname = read("/proc/sys/kernel/hostname").trim().to_owned();
    let kernel = read("/proc/sys/kernel/osrelease").trim().to_owned();
    let d = doc! {
        "system": {
            "hostname": hostname, "cpuArch": std::env::consts::ARCH, "numCores": cores,
            "memSizeMB": mem_mb, "memLimitMB": mem_mb,
        },
        "os": {"type": "Linux", "name": "limit-server", "version": kernel.clone()},
        "extra": {"kernelVersion": kernel, "libcVersion": "unknown", "cpuString": model, "cpuFeatures": ""},
    };
    to_raw(&d)
}
