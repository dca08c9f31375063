//! Sending one generated [`Operation`]: its commands in order, cursors drained where the shape
//! requires it, transactions inside a session. Write errors that a server reports inside an
//! `ok: 1` reply are surfaced as failures, as a driver's CRUD helpers would.
//!
//! Commands are sent as the BSON they were generated as (`run_raw_command`, or
//! `run_raw_cursor_command` for a cursor that is drained), which adds no read or write concern of its own, so the concerns a
//! driver's CRUD helpers would take from the client are added here: the run's write
//! concern ([`ExecOptions::write_concern`]), else the client's (the URI's `w`, `journal`,
//! `wtimeoutMS`), on every write outside a transaction; the client's read concern (the URI's
//! `readConcernLevel`) on every read outside a transaction. A command that carries its own
//! keeps it. A drained cursor's `getMore`s run in the session of the command that opened it, as
//! a server requires. A retryable write (`Command.retryable`) outside a transaction goes
//! through the driver's typed operation instead, so that the driver can retry it.
//!
//! A phase's workers send through a [`Sender`]: outside transactions and reads from
//! secondaries, commands go on the worker's own connection when the target's [`WirePath`]
//! allows it (`wire`), with the same concerns added and retryable writes retried there; the
//! rest through the driver as above.

use mongodb::bson::{Bson, Document, RawBsonRef, RawDocument, RawDocumentBuf, doc};
use mongodb::options::{
    Acknowledgment, CollectionOptions, ReadPreference, SelectionCriteria, WriteConcern,
};
use mongodb::{Client, ClientSession};

use crate::plan::{RunSettings, SettingsError};
use crate::runner::outcome::{Failure, Reply, add};
use crate::runner::wire::WirePath;
use crate::runner::wire::lane::Lane;
use crate::workload::{Command, Operation};

/// Settings applied to every command of a run.
#[derive(Debug, Clone, Default)]
pub struct ExecOptions {
    /// Read preference for reads; `None` is the driver default (primary).
    pub read_preference: Option<ReadPreference>,
    /// Write concern added to write commands; `None` uses the client's (the URI's), or the
    /// server default when the URI sets none.
    pub write_concern: Option<WriteConcern>,
    /// Longest wait for one operation (all its commands); `None` waits as long as it takes.
    pub timeout: Option<std::time::Duration>,
}

impl ExecOptions {
    /// The options of a run with `settings`.
    ///
    /// # Errors
    /// A write concern or read preference the driver has no value for.
    pub fn from_settings(settings: &RunSettings) -> Result<ExecOptions, SettingsError> {
        let write_concern = match settings.write_concern.as_deref() {
            None | Some("default") => None,
            Some("majority") => Some(WriteConcern::builder().w(Acknowledgment::Majority).build()),
            Some(n) => {
                let n: u32 = n
                    .parse()
                    .map_err(|_| SettingsError::WriteConcern(n.to_owned()))?;
                Some(WriteConcern::builder().w(Acknowledgment::Nodes(n)).build())
            }
        };
        let read_preference = match settings.read_preference.as_deref() {
            None | Some("primary") => None,
            Some("primaryPreferred") => Some(ReadPreference::PrimaryPreferred { options: None }),
            Some("secondary") => Some(ReadPreference::Secondary { options: None }),
            Some("secondaryPreferred") => {
                Some(ReadPreference::SecondaryPreferred { options: None })
            }
            Some("nearest") => Some(ReadPreference::Nearest { options: None }),
            Some(other) => return Err(SettingsError::ReadPreference(other.to_owned())),
        };
        Ok(ExecOptions {
            read_preference,
            write_concern,
            timeout: Some(settings.operation_timeout),
        })
    }
}

/// Runs `op` on `client`, abandoning it after `opts.timeout`.
pub async fn execute(
    client: &Client,
    op: &Operation,
    opts: &ExecOptions,
) -> Result<Reply, Failure> {
    match opts.timeout {
        Some(limit) => tokio::time::timeout(limit, execute_unbounded(client, op, opts))
            .await
            .unwrap_or(Err(Failure::TimedOut(limit))),
        None => execute_unbounded(client, op, opts).await,
    }
}

async fn execute_unbounded(
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

/// Sends one worker's operations with one run's [`ExecOptions`]: on the worker's own
/// connection where the target's [`WirePath`] allows it and the command needs nothing of the
/// driver, else through the driver ([`execute`]).
pub struct Sender {
    client: Client,
    exec: ExecOptions,
    /// `None` sends everything through the driver.
    lane: Option<Lane>,
    /// The write concern added to writes and the read concern added to reads, encoded once.
    write_concern: Option<RawDocumentBuf>,
    read_concern: Option<RawDocumentBuf>,
}

impl Sender {
    pub fn new(client: Client, path: &WirePath, exec: ExecOptions) -> Sender {
        let lane = match path {
            WirePath::Direct(route) => Some(Lane::new(route.clone())),
            WirePath::Driver(_) => None,
        };
        // Plain structs of strings and integers: they always encode.
        let write_concern = exec
            .write_concern
            .as_ref()
            .or(client.write_concern())
            .filter(|wc| wc.w.is_some() || wc.journal.is_some() || wc.w_timeout.is_some())
            .map(|wc| mongodb::bson::to_raw_document_buf(wc).expect("a write concern encodes"));
        let read_concern = client
            .read_concern()
            .map(|rc| mongodb::bson::to_raw_document_buf(rc).expect("a read concern encodes"));
        Sender {
            client,
            exec,
            lane,
            write_concern,
            read_concern,
        }
    }

    /// Runs `op`, abandoning it after the run's timeout (an abandoned own connection is
    /// closed, as the driver closes its).
    pub async fn execute(&mut self, op: &Operation) -> Result<Reply, Failure> {
        let direct = self.lane.is_some() && !op.commands.iter().any(|c| c.in_transaction);
        if !direct {
            return execute(&self.client, op, &self.exec).await;
        }
        match self.exec.timeout {
            Some(limit) => tokio::time::timeout(limit, self.execute_direct(op))
                .await
                .unwrap_or(Err(Failure::TimedOut(limit))),
            None => self.execute_direct(op).await,
        }
    }

    async fn execute_direct(&mut self, op: &Operation) -> Result<Reply, Failure> {
        let mut reply = Reply::default();
        for command in &op.commands {
            let secondary_read = !is_write(command.name())
                && self
                    .exec
                    .read_preference
                    .as_ref()
                    .is_some_and(|rp| !matches!(rp, ReadPreference::Primary));
            let r = if secondary_read {
                let db = self.client.database(op.database);
                run(&db, command, &self.exec, None).await?
            } else {
                self.run_direct(op.database, command).await?
            };
            reply = add(reply, r);
        }
        Ok(reply)
    }

    async fn run_direct(&mut self, database: &str, command: &Command) -> Result<Reply, Failure> {
        let name = command.name();
        let has = |field: &str| matches!(command.body.get(field), Ok(Some(_)));
        let concern = if is_write(name) && !has("writeConcern") {
            self.write_concern.as_deref().map(|c| ("writeConcern", c))
        } else if is_read(name) && !has("readConcern") {
            self.read_concern.as_deref().map(|c| ("readConcern", c))
        } else {
            None
        };
        let lane = self
            .lane
            .as_mut()
            .expect("only direct senders send directly");
        lane.send(database, command, concern).await
    }
}

fn is_write(name: &str) -> bool {
    matches!(name, "insert" | "update" | "delete" | "findAndModify")
}

/// Commands that take a read concern.
fn is_read(name: &str) -> bool {
    matches!(name, "find" | "aggregate" | "count" | "distinct")
}

/// The command as sent: its body plus the write concern on writes and the client's read
/// concern on reads, unless the body has its own or `in_transaction` (a transaction's concerns
/// belong to its start and commit).
fn with_concerns(
    db: &mongodb::Database,
    command: &Command,
    opts: &ExecOptions,
    in_transaction: bool,
) -> Result<RawDocumentBuf, Failure> {
    let mut raw = command.body.clone();
    if in_transaction {
        return Ok(raw);
    }
    let has = |field: &str| matches!(command.body.get(field), Ok(Some(_)));
    let name = command.name();
    if is_write(name)
        && !has("writeConcern")
        && let Some(wc) = opts.write_concern.as_ref().or(db.write_concern())
        && (wc.w.is_some() || wc.journal.is_some() || wc.w_timeout.is_some())
    {
        let wc = mongodb::bson::to_raw_document_buf(wc).map_err(|e| Failure::Driver(e.into()))?;
        raw.append("writeConcern", wc);
    }
    if is_read(name)
        && !has("readConcern")
        && let Some(rc) = db.read_concern()
    {
        let rc = mongodb::bson::to_raw_document_buf(rc).map_err(|e| Failure::Driver(e.into()))?;
        raw.append("readConcern", rc);
    }
    Ok(raw)
}

async fn run(
    db: &mongodb::Database,
    command: &Command,
    opts: &ExecOptions,
    session: Option<&mut ClientSession>,
) -> Result<Reply, Failure> {
    // The caller's session is a transaction's.
    let in_transaction = session.is_some();
    if !in_transaction && command.retryable {
        return run_retryable(db, command, opts).await;
    }
    if !in_transaction && command.drain_cursor {
        return run_cursor(db, command, opts).await;
    }
    run_in(db, command, opts, session, in_transaction).await
}

/// A retryable write outside a transaction, through the driver's typed operation (updateOne,
/// deleteOne, insertMany), so that the driver adds a transaction number and retries once on a
/// retryable error where the deployment supports it; its write concern is the run's, else the
/// client's. Write errors come back as driver errors and count as before.
async fn run_retryable(
    db: &mongodb::Database,
    command: &Command,
    opts: &ExecOptions,
) -> Result<Reply, Failure> {
    let body = &command.body;
    let malformed = |what: &str| {
        Failure::Driver(mongodb::error::Error::custom(format!(
            "a retryable {} command {what}",
            command.name()
        )))
    };
    let name = command.name();
    let collection = body
        .get_str(name)
        .map_err(|_| malformed("names no collection"))?;
    // No run write concern leaves the collection with the client's.
    let coll = db.collection_with_options::<RawDocumentBuf>(
        collection,
        CollectionOptions::builder()
            .write_concern(opts.write_concern.clone())
            .build(),
    );
    let statement = |field: &str| -> Result<&RawDocument, Failure> {
        body.get_array(field)
            .ok()
            .and_then(|a| a.get_document(0).ok())
            .ok_or_else(|| malformed(&format!("has no {field}.0")))
    };
    let document = |d: &RawDocument, field: &str| -> Result<Document, Failure> {
        d.get_document(field)
            .ok()
            .and_then(|v| Document::try_from(v).ok())
            .ok_or_else(|| malformed(&format!("has no document {field}")))
    };
    let n = match name {
        "update" => {
            let s = statement("updates")?;
            coll.update_one(document(s, "q")?, document(s, "u")?)
                .await
                .map_err(Failure::Driver)?
                .matched_count
        }
        "delete" => {
            let s = statement("deletes")?;
            coll.delete_one(document(s, "q")?)
                .await
                .map_err(Failure::Driver)?
                .deleted_count
        }
        "insert" => {
            let documents: Vec<RawDocumentBuf> = body
                .get_array("documents")
                .map_err(|_| malformed("has no documents"))?
                .into_iter()
                .map(|d| match d {
                    Ok(RawBsonRef::Document(d)) => Ok(d.to_raw_document_buf()),
                    _ => Err(malformed("holds a document that is not one")),
                })
                .collect::<Result<_, _>>()?;
            let ordered = body.get_bool("ordered").unwrap_or(true);
            coll.insert_many(documents)
                .ordered(ordered)
                .await
                .map_err(Failure::Driver)?
                .inserted_ids
                .len() as u64
        }
        _ => return Err(malformed("is not an update, delete or insert")),
    };
    Ok(Reply { documents: 0, n })
}

/// A find or aggregate whose cursor is drained outside a transaction. The driver's cursor
/// does it (getMores in the command's implicit session) and keeps the batches as raw BSON,
/// where [`run_in`] decodes the whole reply: the documents are only counted. (A single batch,
/// as a YCSB read's, costs more this way than decoded, BENCHMARKS.md.)
async fn run_cursor(
    db: &mongodb::Database,
    command: &Command,
    opts: &ExecOptions,
) -> Result<Reply, Failure> {
    let body = with_concerns(db, command, opts, false)?;
    let mut action = db.run_raw_cursor_command(body);
    if let Some(rp) = &opts.read_preference {
        action = action.selection_criteria(SelectionCriteria::ReadPreference(rp.clone()));
    }
    let mut cursor = action.await.map_err(Failure::Driver)?;
    let mut documents = 0;
    while cursor.advance().await.map_err(Failure::Driver)? {
        documents += 1;
    }
    Ok(Reply { documents, n: 0 })
}

async fn run_in(
    db: &mongodb::Database,
    command: &Command,
    opts: &ExecOptions,
    mut session: Option<&mut ClientSession>,
    in_transaction: bool,
) -> Result<Reply, Failure> {
    let write = is_write(command.name());
    let mut action = db.run_raw_command(with_concerns(db, command, opts, in_transaction)?);
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

#[cfg(test)]
mod tests {
    use super::*;
    use mongodb::options::{Acknowledgment, ClientOptions};

    /// [`with_concerns`] decoded, to compare with `doc!`.
    fn sent(
        d: &mongodb::Database,
        body: &Document,
        opts: &ExecOptions,
        in_transaction: bool,
    ) -> Document {
        let command = Command::new(body, false, in_transaction);
        with_concerns(d, &command, opts, in_transaction)
            .unwrap()
            .to_document()
            .unwrap()
    }

    async fn db(uri: &str) -> mongodb::Database {
        let opts = ClientOptions::parse(uri).await.unwrap();
        mongodb::Client::with_options(opts).unwrap().database("d")
    }

    fn majority() -> ExecOptions {
        ExecOptions {
            read_preference: None,
            write_concern: Some(WriteConcern::builder().w(Acknowledgment::Majority).build()),
            timeout: None,
        }
    }

    #[tokio::test]
    async fn uri_concerns_reach_commands_that_set_none() {
        let d =
            db("mongodb://h:1/?w=1&journal=true&wtimeoutMS=250&readConcernLevel=majority").await;
        let plain = ExecOptions::default();
        let insert = doc! {"insert": "t", "documents": [{"_id": 1}]};
        assert_eq!(
            sent(&d, &insert, &plain, false),
            doc! {"insert": "t", "documents": [{"_id": 1}],
            "writeConcern": {"w": 1, "wtimeout": 250, "j": true}}
        );
        // The run's own write concern wins over the URI's.
        assert_eq!(
            sent(&d, &insert, &majority(), false)
                .get_document("writeConcern")
                .unwrap(),
            &doc! {"w": "majority"}
        );
        let find = doc! {"find": "t", "filter": {}};
        assert_eq!(
            sent(&d, &find, &plain, false),
            doc! {"find": "t", "filter": {}, "readConcern": {"level": "majority"}}
        );
        let aggregate = doc! {"aggregate": "t", "pipeline": [], "cursor": {}};
        assert!(sent(&d, &aggregate, &plain, false).contains_key("readConcern"));
        // Not on other commands, not on a command with its own, not inside a transaction.
        let get_more = doc! {"getMore": 5i64, "collection": "t"};
        assert_eq!(sent(&d, &get_more, &plain, false), get_more);
        let own = doc! {"find": "t", "readConcern": {"level": "local"}};
        assert_eq!(sent(&d, &own, &plain, false), own);
        assert_eq!(sent(&d, &insert, &majority(), true), insert);
        assert_eq!(sent(&d, &find, &plain, true), find);
    }

    #[tokio::test]
    async fn without_uri_concerns_only_the_run_s_write_concern_is_added() {
        let d = db("mongodb://h:1/").await;
        let update = doc! {"update": "t", "updates": []};
        assert_eq!(sent(&d, &update, &ExecOptions::default(), false), update);
        assert_eq!(
            sent(&d, &update, &majority(), false)
                .get_document("writeConcern")
                .unwrap(),
            &doc! {"w": "majority"}
        );
        let find = doc! {"find": "t"};
        assert_eq!(sent(&d, &find, &ExecOptions::default(), false), find);
    }
}
