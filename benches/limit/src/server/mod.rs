//! The limit server: answers every command a benchmark client sends from memory, at once,
//! as a standalone server. It counts the operations it served (`limitStats`, and
//! `serverStatus`'s `opcounters`).
//!
//! This module holds the server's shared state and its connections (reading frames, writing
//! replies); `dispatch` routes a command to its handler: `crud` (find, insert, update, delete,
//! findAndModify), `aggregate`, `cursor` (batches and getMore) and `admin` (everything else).

mod admin;
mod aggregate;
mod command;
mod crud;
mod cursor;
mod dispatch;

use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use bson::{Document, RawBsonRef, doc};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use crate::store::Store;
use crate::wire;
use command::get;
use cursor::Cursor;

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
}
