//! The limit server: answers every command a benchmark client sends from memory, at once,
//! as a standalone server. It counts the operations it served (`limitStats`, and
//! `serverStatus`'s `opcounters`).

use std::collections::{HashMap, VecDeque};
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use bson::{Bson, Document, RawArrayBuf, RawBsonRef, RawDocument, RawDocumentBuf, doc, rawdoc};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use crate::store::{Collection, Key, Projection, Store, matches, sort, update};
use crate::wire;

/// Replies stay under this many bytes of documents per batch.
const BATCH_BYTES: usize = 8 * 1024 * 1024;
const DEFAULT_BATCH: usize = 101;

/// Operation counters: what `limitStats` reports.
#[derive(Debug, Default)]
pub struct Counters {
    pub insert: AtomicU64,
    pub query: AtomicU64,
    pub update: AtomicU64,
    pub delete: AtomicU64,
    pub getmore: AtomicU64,
    pub aggregate: AtomicU64,
    pub command: AtomicU64,
    pub connections: AtomicU64,
    pub connections_total: AtomicU64,
}

impl Counters {
    /// Operations on data: every CRUD command, getMore included.
    pub fn ops(&self) -> u64 {
        [
            &self.insert,
            &self.query,
            &self.update,
            &self.delete,
            &self.getmore,
            &self.aggregate,
        ]
        .iter()
        .map(|c| c.load(Ordering::Relaxed))
        .sum()
    }

    pub fn document(&self) -> Document {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed) as i64;
        doc! {
            "ops": self.ops() as i64,
            "insert": get(&self.insert),
            "query": get(&self.query),
            "update": get(&self.update),
            "delete": get(&self.delete),
            "getmore": get(&self.getmore),
            "aggregate": get(&self.aggregate),
            "command": get(&self.command),
            "connections": get(&self.connections),
            "connectionsTotal": get(&self.connections_total),
        }
    }
}

struct Cursor {
    ns: String,
    docs: VecDeque<RawDocumentBuf>,
}

#[derive(Default)]
struct State {
    store: Store,
    cursors: HashMap<i64, Cursor>,
    next_cursor: i64,
}

/// The server's shared state.
pub struct Server {
    state: Mutex<State>,
    pub counters: Counters,
    started: Instant,
    port: u16,
}

struct Failure {
    code: i32,
    name: &'static str,
    message: String,
}

fn fail(code: i32, name: &'static str, message: impl Into<String>) -> Failure {
    Failure {
        code,
        name,
        message: message.into(),
    }
}

type Reply = Result<RawDocumentBuf, Failure>;

fn ok(mut d: RawDocumentBuf) -> Reply {
    d.append("ok", 1.0);
    Ok(d)
}

fn to_raw(d: &Document) -> RawDocumentBuf {
    RawDocumentBuf::from_document(d).expect("a document serialises")
}

fn int(v: Option<RawBsonRef<'_>>) -> Option<i64> {
    match v? {
        RawBsonRef::Int32(i) => Some(i64::from(i)),
        RawBsonRef::Int64(i) => Some(i),
        RawBsonRef::Double(d) => Some(d as i64),
        _ => None,
    }
}

fn get<'a>(d: &'a RawDocument, key: &str) -> Option<RawBsonRef<'a>> {
    d.get(key).ok().flatten()
}

fn document(d: &RawDocument, key: &str) -> Document {
    match get(d, key) {
        Some(RawBsonRef::Document(x)) => Document::try_from(x).unwrap_or_default(),
        _ => Document::new(),
    }
}

fn truthy(v: Option<RawBsonRef<'_>>) -> bool {
    match v {
        Some(RawBsonRef::Boolean(b)) => b,
        Some(v) => int(Some(v)).is_some_and(|i| i != 0),
        None => false,
    }
}

/// A command: its body and the documents of its sequences, merged as the server sees them.
struct Command<'a> {
    name: &'a str,
    db: &'a str,
    body: &'a RawDocument,
    sequences: &'a [(&'a str, Vec<&'a RawDocument>)],
}

impl<'a> Command<'a> {
    /// The documents of array field `key`, from the body or a document sequence.
    fn documents(&self, key: &str) -> Vec<&'a RawDocument> {
        if let Some((_, docs)) = self.sequences.iter().find(|(id, _)| *id == key) {
            return docs.clone();
        }
        match get(self.body, key) {
            Some(RawBsonRef::Array(a)) => a
                .into_iter()
                .flatten()
                .filter_map(|v| match v {
                    RawBsonRef::Document(d) => Some(d),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    fn collection(&self) -> &'a str {
        match get(self.body, self.name) {
            Some(RawBsonRef::String(s)) => s,
            _ => "",
        }
    }

    fn ns(&self) -> String {
        format!("{}.{}", self.db, self.collection())
    }
}

impl Server {
    pub fn new(port: u16) -> Arc<Server> {
        Arc::new(Server {
            state: Mutex::new(State {
                next_cursor: 1,
                ..State::default()
            }),
            counters: Counters::default(),
            started: Instant::now(),
            port,
        })
    }

    /// Serves one connection until the peer closes it.
    pub async fn serve(self: Arc<Self>, stream: TcpStream) -> io::Result<()> {
        stream.set_nodelay(true)?;
        self.counters.connections.fetch_add(1, Ordering::Relaxed);
        let id = self
            .counters
            .connections_total
            .fetch_add(1, Ordering::Relaxed)
            + 1;
        let result = self.connection(stream, id as i64).await;
        self.counters.connections.fetch_sub(1, Ordering::Relaxed);
        result
    }

    async fn connection(&self, stream: TcpStream, connection_id: i64) -> io::Result<()> {
        let (read, mut write) = stream.into_split();
        let mut read = BufReader::with_capacity(64 * 1024, read);
        let mut buf = Vec::with_capacity(64 * 1024);
        let mut out = Vec::with_capacity(64 * 1024);
        let mut request_id = 0i32;
        while let Some(header) = wire::read_message(&mut read, &mut buf).await? {
            request_id = request_id.wrapping_add(1);
            out.clear();
            match header.op_code {
                wire::OP_MSG => {
                    let msg = wire::parse_msg(&buf)?;
                    let db = match get(msg.body, "$db") {
                        Some(RawBsonRef::String(s)) => s,
                        _ => "admin",
                    };
                    let reply = self.run(msg.body, db, &msg.sequences, connection_id);
                    if msg.flags & wire::MORE_TO_COME != 0 {
                        continue;
                    }
                    wire::encode_msg(&mut out, request_id, header.request_id, reply.as_bytes());
                }
                wire::OP_QUERY => {
                    let (ns, query) = wire::parse_query(&buf)?;
                    let db = ns.split('.').next().unwrap_or("admin");
                    let query = match get(query, "$query") {
                        Some(RawBsonRef::Document(q)) => q,
                        _ => query,
                    };
                    let reply = self.run(query, db, &[], connection_id);
                    wire::encode_reply(&mut out, request_id, header.request_id, reply.as_bytes());
                }
                other => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("unsupported op code {other} (compression is not offered)"),
                    ));
                }
            }
            write.write_all(&out).await?;
        }
        Ok(())
    }

    fn run(
        &self,
        body: &RawDocument,
        db: &str,
        sequences: &[(&str, Vec<&RawDocument>)],
        connection_id: i64,
    ) -> RawDocumentBuf {
        let name = match body.iter().next() {
            Some(Ok((name, _))) => name,
            _ => "",
        };
        let command = Command {
            name,
            db,
            body,
            sequences,
        };
        match self.dispatch(&command, connection_id) {
            Ok(reply) => reply,
            Err(f) => rawdoc! {"ok": 0.0, "errmsg": f.message, "code": f.code, "codeName": f.name},
        }
    }

    fn count(&self, counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    fn dispatch(&self, c: &Command<'_>, connection_id: i64) -> Reply {
        let n = &self.counters;
        match c.name {
            "find" => {
                self.count(&n.query);
                self.find(c)
            }
            "getMore" => {
                self.count(&n.getmore);
                self.get_more(c)
            }
            "insert" => {
                self.count(&n.insert);
                self.insert(c)
            }
            "update" => {
                self.count(&n.update);
                self.update(c)
            }
            "delete" => {
                self.count(&n.delete);
                self.delete(c)
            }
            "aggregate" => {
                self.count(&n.aggregate);
                self.aggregate(c)
            }
            "count" => {
                self.count(&n.query);
                let state = self.state.lock().expect("state");
                let filter = document(c.body, "query");
                let count = state
                    .store
                    .collections
                    .get(&c.ns())
                    .map_or(0, |coll| coll.matching(&filter, 0).len());
                ok(rawdoc! {"n": count as i64})
            }
            "findAndModify" | "findandmodify" => {
                self.count(&n.update);
                self.find_and_modify(c)
            }
            "distinct" => {
                self.count(&n.query);
                ok(rawdoc! {"values": []})
            }
            _ => {
                self.count(&n.command);
                self.admin(c, connection_id)
            }
        }
    }

    fn admin(&self, c: &Command<'_>, connection_id: i64) -> Reply {
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

    /// Matching documents of a find: sorted, skipped, limited, projected.
    fn select(
        &self,
        coll: Option<&Collection>,
        body: &RawDocument,
        limit: usize,
    ) -> Vec<RawDocumentBuf> {
        let Some(coll) = coll else { return Vec::new() };
        let filter = document(body, "filter");
        let sort_spec = document(body, "sort");
        let skip = int(get(body, "skip")).unwrap_or(0).max(0) as usize;
        let by_id = sort_spec.is_empty()
            || (sort_spec.len() == 1
                && sort_spec
                    .get("_id")
                    .and_then(|v| v.as_i32().map(i64::from).or(v.as_i64()))
                    == Some(1));
        let keys = coll.matching(&filter, if by_id && limit > 0 { limit + skip } else { 0 });
        let mut docs: Vec<&RawDocumentBuf> = keys.iter().filter_map(|k| coll.docs.get(k)).collect();
        if !by_id {
            sort(&mut docs, &sort_spec);
        }
        let take = if limit == 0 { usize::MAX } else { limit };
        let projection = Projection::new(&document(body, "projection"));
        docs.into_iter()
            .skip(skip)
            .take(take)
            .map(|d| match &projection {
                Some(p) => p.apply(d),
                None => d.clone(),
            })
            .collect()
    }

    fn find(&self, c: &Command<'_>) -> Reply {
        let limit = int(get(c.body, "limit")).unwrap_or(0);
        let single = truthy(get(c.body, "singleBatch")) || limit < 0;
        let limit = limit.unsigned_abs() as usize;
        let batch_size = int(get(c.body, "batchSize")).map_or(DEFAULT_BATCH, |b| b.max(0) as usize);
        let mut state = self.state.lock().expect("state");
        let docs = self.select(state.store.collections.get(&c.ns()), c.body, limit);
        self.first_batch(&mut state, c.ns(), docs, batch_size, single)
    }

    fn first_batch(
        &self,
        state: &mut State,
        ns: String,
        docs: Vec<RawDocumentBuf>,
        batch_size: usize,
        single: bool,
    ) -> Reply {
        let mut docs: VecDeque<RawDocumentBuf> = docs.into();
        let batch = take_batch(&mut docs, if single { usize::MAX } else { batch_size });
        let id = if docs.is_empty() || single {
            0
        } else {
            let id = state.next_cursor;
            state.next_cursor += 1;
            state.cursors.insert(
                id,
                Cursor {
                    ns: ns.clone(),
                    docs,
                },
            );
            id
        };
        ok(cursor_reply(&ns, id, "firstBatch", batch))
    }

    fn get_more(&self, c: &Command<'_>) -> Reply {
        let id = int(get(c.body, "getMore")).unwrap_or(0);
        let batch_size = int(get(c.body, "batchSize"))
            .map_or(usize::MAX, |b| if b <= 0 { usize::MAX } else { b as usize });
        let mut state = self.state.lock().expect("state");
        let Some(cursor) = state.cursors.get_mut(&id) else {
            return Err(fail(
                43,
                "CursorNotFound",
                format!("cursor id {id} not found"),
            ));
        };
        let batch = take_batch(&mut cursor.docs, batch_size);
        let ns = cursor.ns.clone();
        let id = if cursor.docs.is_empty() {
            state.cursors.remove(&id);
            0
        } else {
            id
        };
        ok(cursor_reply(&ns, id, "nextBatch", batch))
    }

    fn insert(&self, c: &Command<'_>) -> Reply {
        let ordered = get(c.body, "ordered").is_none_or(|v| truthy(Some(v)));
        let docs = c.documents("documents");
        let mut state = self.state.lock().expect("state");
        let coll = state.store.collections.entry(c.ns()).or_default();
        let mut n = 0i32;
        let mut errors = RawArrayBuf::new();
        for (i, d) in docs.into_iter().enumerate() {
            let d = if get(d, "_id").is_some() {
                d.to_owned()
            } else {
                let mut with_id = rawdoc! {"_id": bson::oid::ObjectId::new()};
                for (k, v) in d.iter().flatten() {
                    with_id.append(k, v.to_raw_bson());
                }
                with_id
            };
            match coll.insert(d) {
                Ok(()) => n += 1,
                Err(e) => {
                    errors.push(rawdoc! {"index": i as i32, "code": 11000, "errmsg": e});
                    if ordered {
                        break;
                    }
                }
            }
        }
        let mut reply = rawdoc! {"n": n};
        if !errors.is_empty() {
            reply.append("writeErrors", errors);
        }
        ok(reply)
    }

    fn update(&self, c: &Command<'_>) -> Reply {
        let statements = c.documents("updates");
        let mut state = self.state.lock().expect("state");
        let coll = state.store.collections.entry(c.ns()).or_default();
        let (mut matched, mut modified) = (0i64, 0i64);
        let mut upserted = RawArrayBuf::new();
        let mut upserts = 0i64;
        for (i, s) in statements.into_iter().enumerate() {
            let q = document(s, "q");
            let u = document(s, "u");
            let multi = truthy(get(s, "multi"));
            let keys = coll.matching(&q, if multi { 0 } else { 1 });
            if keys.is_empty() && truthy(get(s, "upsert")) {
                let mut seed = Document::new();
                if let Some(id) = q.get("_id").filter(|v| !matches!(v, Bson::Document(_))) {
                    seed.insert("_id", id.clone());
                } else {
                    seed.insert("_id", bson::oid::ObjectId::new());
                }
                let base = to_raw(&seed);
                let new = update(&base, &u).unwrap_or(base);
                if let Ok(Some(id)) = new.get("_id") {
                    upserted.push(rawdoc! {"index": i as i32, "_id": id.to_raw_bson()});
                }
                let _ = coll.insert(new);
                upserts += 1;
                continue;
            }
            for key in keys {
                matched += 1;
                let changed = coll.docs.get(&key).and_then(|d| update(d, &u));
                if let Some(new) = changed {
                    modified += 1;
                    coll.remove(&key);
                    let _ = coll.insert(new);
                }
            }
        }
        let n = matched + upserts;
        let mut reply = rawdoc! {"n": n, "nModified": modified};
        if upserts > 0 {
            reply.append("upserted", upserted);
        }
        ok(reply)
    }

    fn delete(&self, c: &Command<'_>) -> Reply {
        let statements = c.documents("deletes");
        let mut state = self.state.lock().expect("state");
        let Some(coll) = state.store.collections.get_mut(&c.ns()) else {
            return ok(rawdoc! {"n": 0});
        };
        let mut n = 0i64;
        for s in statements {
            let q = document(s, "q");
            let limit = int(get(s, "limit")).unwrap_or(0).max(0) as usize;
            for key in coll.matching(&q, limit) {
                if coll.remove(&key) {
                    n += 1;
                }
            }
        }
        ok(rawdoc! {"n": n})
    }

    fn find_and_modify(&self, c: &Command<'_>) -> Reply {
        let q = document(c.body, "query");
        let mut state = self.state.lock().expect("state");
        let coll = state.store.collections.entry(c.ns()).or_default();
        let key = coll.matching(&q, 1).into_iter().next();
        let Some(key) = key else {
            return ok(
                rawdoc! {"lastErrorObject": {"n": 0, "updatedExisting": false}, "value": bson::RawBson::Null},
            );
        };
        let old = coll.docs.get(&key).cloned().expect("matched");
        if truthy(get(c.body, "remove")) {
            coll.remove(&key);
            return ok(rawdoc! {"lastErrorObject": {"n": 1}, "value": old});
        }
        let u = document(c.body, "update");
        let new = update(&old, &u);
        if let Some(new) = &new {
            coll.remove(&key);
            let _ = coll.insert(new.clone());
        }
        let value = if truthy(get(c.body, "new")) {
            new.unwrap_or(old)
        } else {
            old
        };
        ok(rawdoc! {"lastErrorObject": {"n": 1, "updatedExisting": true}, "value": value})
    }

    fn aggregate(&self, c: &Command<'_>) -> Reply {
        let pipeline: Vec<Document> = c
            .documents("pipeline")
            .into_iter()
            .filter_map(|d| Document::try_from(d).ok())
            .collect();
        let mut state = self.state.lock().expect("state");
        let ns = c.ns();
        let coll = state.store.collections.get(&ns);
        let mut out: Vec<RawDocumentBuf> = Vec::new();
        let mut started = false;
        for stage in &pipeline {
            let Some((name, arg)) = stage.iter().next() else {
                continue;
            };
            match name.as_str() {
                "$collStats" => {
                    let count = coll.map_or(0, |c| c.docs.len() as i64);
                    out = vec![
                        rawdoc! {"ns": ns.as_str(), "count": count, "storageStats": {"count": count}},
                    ];
                    started = true;
                }
                "$match" => {
                    let filter = arg.as_document().cloned().unwrap_or_default();
                    if started {
                        out.retain(|d| matches(d, &filter));
                    } else {
                        out = coll.map_or_else(Vec::new, |c| {
                            c.matching(&filter, 0)
                                .iter()
                                .filter_map(|k| c.docs.get(k).cloned())
                                .collect()
                        });
                        started = true;
                    }
                }
                _ => {
                    if !started {
                        out = coll.map_or_else(Vec::new, |c| c.docs.values().cloned().collect());
                        started = true;
                    }
                    match name.as_str() {
                        "$limit" => out.truncate(
                            arg.as_i64()
                                .or(arg.as_i32().map(i64::from))
                                .unwrap_or(0)
                                .max(0) as usize,
                        ),
                        "$skip" => {
                            let s = (arg
                                .as_i64()
                                .or(arg.as_i32().map(i64::from))
                                .unwrap_or(0)
                                .max(0) as usize)
                                .min(out.len());
                            out.drain(..s);
                        }
                        "$sort" => {
                            if let Some(spec) = arg.as_document() {
                                let mut refs: Vec<&RawDocumentBuf> = out.iter().collect();
                                sort(&mut refs, spec);
                                out = refs.into_iter().cloned().collect();
                            }
                        }
                        "$count" => {
                            let field = arg.as_str().unwrap_or("count");
                            let mut d = RawDocumentBuf::new();
                            d.append(field, out.len() as i32);
                            out = vec![d];
                        }
                        "$group" => out = group(&out, arg.as_document()),
                        // Other stages are not evaluated: documents pass through.
                        _ => {}
                    }
                }
            }
        }
        if !started {
            out = coll.map_or_else(Vec::new, |c| c.docs.values().cloned().collect());
        }
        let batch_size = match get(c.body, "cursor") {
            Some(RawBsonRef::Document(cur)) => {
                int(get(cur, "batchSize")).map_or(DEFAULT_BATCH, |b| b.max(0) as usize)
            }
            _ => DEFAULT_BATCH,
        };
        self.first_batch(&mut state, ns, out, batch_size, false)
    }
}

/// `$group` by a field path (or a constant): `$sum` of constants counts, `$sum`/`$avg`/`$min`/
/// `$max` of a field path compute, other accumulators give null.
fn group(docs: &[RawDocumentBuf], spec: Option<&Document>) -> Vec<RawDocumentBuf> {
    let Some(spec) = spec else { return Vec::new() };
    let id = spec.get("_id").cloned().unwrap_or(Bson::Null);
    let value_of = |d: &RawDocument, e: &Bson| -> Option<Bson> {
        match e {
            Bson::String(s) if s.starts_with('$') => {
                crate::store::lookup(d, &s[1..]).and_then(|v| Bson::try_from(v.to_raw_bson()).ok())
            }
            other => Some(other.clone()),
        }
    };
    let mut groups: Vec<(Key, Bson, Vec<&RawDocumentBuf>)> = Vec::new();
    for d in docs {
        let v = value_of(d, &id).unwrap_or(Bson::Null);
        let k = Key::of_bson(&v);
        match groups.iter_mut().find(|(gk, _, _)| *gk == k) {
            Some((_, _, members)) => members.push(d),
            None => groups.push((k, v, vec![d])),
        }
    }
    groups
        .into_iter()
        .map(|(_, v, members)| {
            let mut out = doc! {"_id": v};
            for (field, acc) in spec.iter().filter(|(k, _)| *k != "_id") {
                let Some((op, arg)) = acc.as_document().and_then(|a| a.iter().next()) else {
                    continue;
                };
                let values: Vec<f64> = members
                    .iter()
                    .filter_map(|d| value_of(d, arg))
                    .filter_map(|b| match b {
                        Bson::Int32(i) => Some(f64::from(i)),
                        Bson::Int64(i) => Some(i as f64),
                        Bson::Double(x) => Some(x),
                        _ => None,
                    })
                    .collect();
                let result = match op.as_str() {
                    "$sum" => Bson::Double(values.iter().sum()),
                    "$avg" if !values.is_empty() => {
                        Bson::Double(values.iter().sum::<f64>() / values.len() as f64)
                    }
                    "$min" => values
                        .iter()
                        .copied()
                        .reduce(f64::min)
                        .map_or(Bson::Null, Bson::Double),
                    "$max" => values
                        .iter()
                        .copied()
                        .reduce(f64::max)
                        .map_or(Bson::Null, Bson::Double),
                    _ => Bson::Null,
                };
                out.insert(field, result);
            }
            to_raw(&out)
        })
        .collect()
}

fn take_batch(docs: &mut VecDeque<RawDocumentBuf>, size: usize) -> RawArrayBuf {
    let mut batch = RawArrayBuf::new();
    let mut bytes = 0;
    let mut n = 0;
    while n < size {
        let Some(d) = docs.front() else { break };
        let len = d.as_bytes().len();
        if n > 0 && bytes + len > BATCH_BYTES {
            break;
        }
        bytes += len;
        n += 1;
        batch.push(docs.pop_front().expect("a front document"));
    }
    batch
}

fn cursor_reply(ns: &str, id: i64, field: &str, batch: RawArrayBuf) -> RawDocumentBuf {
    let mut cursor = RawDocumentBuf::new();
    cursor.append(field, batch);
    cursor.append("id", id);
    cursor.append("ns", ns);
    rawdoc! {"cursor": cursor}
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
