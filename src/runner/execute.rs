//! Sending one generated [`Operation`]: its commands in order, cursors drained where the shape
//! requires it, transactions inside a session. Write errors that a server reports inside an
//! `ok: 1` reply are surfaced as failures, as a driver's CRUD helpers would.

use mongodb::bson::{Bson, Document, doc};
use mongodb::options::{ReadPreference, SelectionCriteria, WriteConcern};
use mongodb::{Client, ClientSession};

use crate::workload::{Command, Operation};

/// How one operation ended, as far as the benchmark counts it.
#[derive(Debug)]
pub enum Failure {
    /// The driver or the server refused a command.
    Driver(mongodb::error::Error),
    /// A write command answered `ok: 1` with `writeErrors` (the first one's code and message).
    Write { code: i32, message: String },
}

impl Failure {
    /// The server error code, when there is one (11000 is a duplicate key).
    pub fn code(&self) -> Option<i32> {
        match self {
            Failure::Write { code, .. } => Some(*code),
            Failure::Driver(e) => driver_code(e),
        }
    }
}

/// The server error code carried by a driver error, if any.
pub fn driver_code(e: &mongodb::error::Error) -> Option<i32> {
    use mongodb::error::{ErrorKind, WriteFailure};
    match &*e.kind {
        ErrorKind::Command(c) => Some(c.code),
        ErrorKind::Write(WriteFailure::WriteError(w)) => Some(w.code),
        ErrorKind::Write(WriteFailure::WriteConcernError(w)) => Some(w.code),
        ErrorKind::InsertMany(i) => i.write_errors.as_ref()?.first().map(|w| w.code),
        _ => None,
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Driver(e) => write!(f, "{e}"),
            Failure::Write { code, message } => write!(f, "write error {code}: {message}"),
        }
    }
}

/// What the operation returned that the benchmark looks at.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Reply {
    /// Documents returned by finds and aggregates (all batches).
    pub documents: u64,
    /// `n` of writes: matched for updates, removed for deletes, inserted for inserts.
    pub n: u64,
}

/// Settings applied to every command of a run.
#[derive(Debug, Clone, Default)]
pub struct ExecOptions {
    /// Read preference for reads; `None` is the driver default (primary).
    pub read_preference: Option<ReadPreference>,
    /// Write concern added to write commands; `None` leaves the server default.
    pub write_concern: Option<WriteConcern>,
}

/// Runs `op` on `client`.
pub async fn execute(
    client: &Client,
    op: &Operation,
    opts: &ExecOptions,
) -> Result<Reply, Failure> {
    let db = client.database(op.database);
    if op.commands.iter().any(|c| c.in_transaction) {
        let mut session = client.start_session().await.map_err(Failure::Driver)?;
        session.start_transaction().await.map_err(Failure::Driver)?;
        let mut reply = Reply::default();
        for command in &op.commands {
            match run(&db, command, opts, Some(&mut session)).await {
                Ok(r) => reply = add(reply, r),
                Err(e) => {
                    let _ = session.abort_transaction().await;
                    return Err(e);
                }
            }
        }
        session
            .commit_transaction()
            .await
            .map_err(Failure::Driver)?;
        return Ok(reply);
    }
    let mut reply = Reply::default();
    for command in &op.commands {
        reply = add(reply, run(&db, command, opts, None).await?);
    }
    Ok(reply)
}

fn add(a: Reply, b: Reply) -> Reply {
    Reply {
        documents: a.documents + b.documents,
        n: a.n + b.n,
    }
}

fn is_write(body: &Document) -> bool {
    matches!(
        body.keys().next().map(String::as_str),
        Some("insert" | "update" | "delete" | "findAndModify")
    )
}

async fn run(
    db: &mongodb::Database,
    command: &Command,
    opts: &ExecOptions,
    mut session: Option<&mut ClientSession>,
) -> Result<Reply, Failure> {
    let mut body = command.body.clone();
    let write = is_write(&body);
    // Inside a transaction the write concern belongs to the commit, not to each statement.
    if write
        && session.is_none()
        && let Some(wc) = &opts.write_concern
    {
        let wc = mongodb::bson::to_bson(wc).map_err(|e| Failure::Driver(e.into()))?;
        body.insert("writeConcern", wc);
    }
    let mut action = db.run_command(body);
    if !write && let Some(rp) = &opts.read_preference {
        action = action.selection_criteria(SelectionCriteria::ReadPreference(rp.clone()));
    }
    let reply = match session.as_deref_mut() {
        Some(s) => action.session(s).await,
        None => action.await,
    }
    .map_err(Failure::Driver)?;
    if let Ok(errors) = reply.get_array("writeErrors")
        && let Some(Bson::Document(first)) = errors.first()
    {
        return Err(Failure::Write {
            code: first.get_i32("code").unwrap_or(0),
            message: first.get_str("errmsg").unwrap_or("").to_owned(),
        });
    }
    let n = reply
        .get("n")
        .and_then(|v| v.as_i64().or_else(|| v.as_i32().map(i64::from)))
        .unwrap_or(0) as u64;
    let mut documents = 0;
    if let Ok(cursor) = reply.get_document("cursor") {
        documents += cursor
            .get_array("firstBatch")
            .map(|b| b.len() as u64)
            .unwrap_or(0);
        let mut id = cursor.get_i64("id").unwrap_or(0);
        if command.drain_cursor {
            let collection = cursor
                .get_str("ns")
                .ok()
                .and_then(|ns| ns.split_once('.').map(|(_, c)| c.to_owned()))
                .unwrap_or_default();
            while id != 0 {
                let more = db.run_command(doc! {"getMore": id, "collection": &collection});
                let next = match session.as_deref_mut() {
                    Some(s) => more.session(s).await,
                    None => more.await,
                }
                .map_err(Failure::Driver)?;
                let c = next
                    .get_document("cursor")
                    .map_err(|e| Failure::Driver(mongodb::error::Error::custom(e.to_string())))?;
                documents += c
                    .get_array("nextBatch")
                    .map(|b| b.len() as u64)
                    .unwrap_or(0);
                id = c.get_i64("id").unwrap_or(0);
            }
        }
    }
    Ok(Reply { documents, n })
}
