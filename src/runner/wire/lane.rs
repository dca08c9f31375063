//! A worker's own connection to its target's route: one command at a time, a cursor drained on
//! the connection that opened it, and retryable writes sent as a driver sends them where the
//! deployment supports them (the worker's session id and a new transaction number, sent once
//! more after a network error or a reply labelled retryable).

use std::sync::Arc;

use mongodb::bson::spec::BinarySubtype;
use mongodb::bson::{Binary, RawBsonRef, RawDocument, RawDocumentBuf, rawdoc};

use super::connection::Connection;
use super::frame::{Extra, reply_ok};
use super::route::Route;
use crate::runner::outcome::{Failure, Reply, add};
use crate::workload::Command;

/// Error codes a server without error labels (before 4.4) answers when a write may be sent
/// again: the retryable-writes specification's list.
const RETRYABLE_CODES: [i32; 15] = [
    6, 7, 89, 91, 134, 150, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436, 63,
];

pub struct Lane {
    link: Link,
    /// The worker's session id (`lsid`), made at its first retryable write.
    lsid: Option<RawDocumentBuf>,
    txn_number: i64,
}

/// The connection, opened when first needed and again after it failed.
struct Link {
    route: Arc<Route>,
    connection: Option<Connection>,
}

/// A failed attempt, and whether a retryable write may be sent again after it.
struct Attempt {
    failure: Failure,
    retryable: bool,
}

/// What a reply says that the benchmark reads: the reply's counts, and the cursor's id and
/// collection when it has more batches.
type Answer = (Reply, i64, Option<String>);

impl Lane {
    pub fn new(route: Arc<Route>) -> Lane {
        Lane {
            link: Link {
                route,
                connection: None,
            },
            lsid: None,
            txn_number: 0,
        }
    }

    /// Sends `command` on `database` with `concern` (`writeConcern` or `readConcern`)
    /// appended, and drains its cursor when the command asks for that.
    pub async fn send(
        &mut self,
        database: &str,
        command: &Command,
        concern: Option<(&str, &RawDocument)>,
    ) -> Result<Reply, Failure> {
        let retry = command.retryable && self.link.route.retryable_writes;
        if retry && self.lsid.is_none() {
            self.lsid = Some(session_id());
        }
        let mut extras = [Extra::Str("$db", database); 4];
        let mut n = 0;
        if let Some((key, c)) = concern {
            extras[n] = Extra::Document(key, c);
            n += 1;
        }
        if retry {
            self.txn_number += 1;
            let lsid = self.lsid.as_deref().expect("made above");
            extras[n] = Extra::Document("lsid", lsid);
            extras[n + 1] = Extra::Int64("txnNumber", self.txn_number);
            n += 2;
        }
        extras[n] = Extra::Str("$db", database);
        let extras = &extras[..=n];
        let (mut reply, mut id, collection) =
            match self.link.attempt(&command.body, extras, "firstBatch").await {
                Ok(answer) => answer,
                Err(first) if retry && first.retryable => self
                    .link
                    .attempt(&command.body, extras, "firstBatch")
                    .await
                    .map_err(|again| again.failure)?,
                Err(first) => return Err(first.failure),
            };
        if !command.drain_cursor {
            return Ok(reply);
        }
        let collection = collection.unwrap_or_default();
        let db = [Extra::Str("$db", database)];
        while id != 0 {
            let more = rawdoc! {"getMore": id, "collection": collection.as_str()};
            let (next, next_id, _) = self
                .link
                .attempt(&more, &db, "nextBatch")
                .await
                .map_err(|a| a.failure)?;
            reply = add(reply, next);
            id = next_id;
        }
        Ok(reply)
    }
}

impl Link {
    /// The connection, opened (again) when there is none or its last request was abandoned.
    async fn connection(&mut self) -> Result<&mut Connection, Attempt> {
        if !self.connection.as_ref().is_some_and(Connection::usable) {
            self.connection = None;
            let opened = Connection::open(&self.route)
                .await
                .map_err(|error| self.lost(error))?;
            self.connection = Some(opened);
        }
        Ok(self.connection.as_mut().expect("just opened"))
    }

    fn lost(&self, error: std::io::Error) -> Attempt {
        Attempt {
            failure: Failure::Connection {
                address: self.route.address.clone(),
                error,
            },
            retryable: true,
        }
    }

    /// Sends `body` with `extras` once and reads the reply ([`outcome`]).
    async fn attempt(
        &mut self,
        body: &RawDocument,
        extras: &[Extra<'_>],
        batch: &str,
    ) -> Result<Answer, Attempt> {
        let failed = match self.connection().await?.command(body, extras).await {
            Ok(reply) => return outcome(reply, batch),
            Err(error) => error,
        };
        // The stream is out of step after a failed read or write.
        self.connection = None;
        Err(self.lost(failed))
    }
}

/// The counts of the OP_MSG reply `msg` to request `id`, or what is wrong with it: what a
/// worker's own connection reads of each reply (for fuzzing the two parsers together).
pub fn read_reply(msg: &[u8], id: i32) -> Result<Reply, String> {
    let body = super::frame::reply_body(msg, id).map_err(|e| e.to_string())?;
    outcome(body, "firstBatch")
        .map(|(reply, _, _)| reply)
        .map_err(|a| a.failure.to_string())
}

/// A session id as drivers make them: a random (version 4) UUID.
fn session_id() -> RawDocumentBuf {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the system has a random source");
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    rawdoc! {"id": Binary { subtype: BinarySubtype::Uuid, bytes: bytes.to_vec() }}
}

fn code_of(d: &RawDocument) -> i32 {
    d.get_i32("code").unwrap_or(0)
}

/// Whether a failed reply allows a retryable write to be sent again: labelled
/// `RetryableWriteError` (4.4 and later), or carrying one of [`RETRYABLE_CODES`] at the top or
/// in its `writeConcernError`.
fn retryable(reply: &RawDocument) -> bool {
    let labelled = reply.get_array("errorLabels").is_ok_and(|labels| {
        labels
            .into_iter()
            .any(|l| matches!(l, Ok(RawBsonRef::String("RetryableWriteError"))))
    });
    let concern = reply.get_document("writeConcernError").map(code_of).ok();
    labelled
        || RETRYABLE_CODES.contains(&code_of(reply))
        || concern.is_some_and(|c| RETRYABLE_CODES.contains(&c))
}

/// What a reply says: its failure (`ok: 0`, the first of its `writeErrors`, or its
/// `writeConcernError`), else `n`, the number of documents in the cursor's `batch`, and the
/// cursor's id and collection.
fn outcome(reply: &RawDocument, batch: &str) -> Result<Answer, Attempt> {
    let failed = |failure| Attempt {
        failure,
        retryable: retryable(reply),
    };
    if !reply_ok(reply) {
        return Err(failed(Failure::Command {
            code: code_of(reply),
            name: reply.get_str("codeName").unwrap_or("").to_owned(),
            message: reply.get_str("errmsg").unwrap_or("").to_owned(),
        }));
    }
    let first_error =
        reply
            .get_array("writeErrors")
            .ok()
            .and_then(|errors| match errors.into_iter().next() {
                Some(Ok(RawBsonRef::Document(first))) => Some(first),
                _ => None,
            });
    if let Some(error) = first_error.or_else(|| reply.get_document("writeConcernError").ok()) {
        return Err(failed(Failure::Write {
            code: code_of(error),
            message: error.get_str("errmsg").unwrap_or("").to_owned(),
        }));
    }
    let n = match reply.get("n") {
        Ok(Some(RawBsonRef::Int32(n))) => n as u64,
        Ok(Some(RawBsonRef::Int64(n))) => n as u64,
        Ok(Some(RawBsonRef::Double(n))) => n as u64,
        _ => 0,
    };
    let mut answer = (Reply { documents: 0, n }, 0, None);
    if let Ok(cursor) = reply.get_document("cursor") {
        answer.0.documents = cursor
            .get_array(batch)
            .map(|b| b.into_iter().count() as u64)
            .unwrap_or(0);
        answer.1 = cursor.get_i64("id").unwrap_or(0);
        if answer.1 != 0 {
            answer.2 = cursor
                .get_str("ns")
                .ok()
                .and_then(|ns| ns.split_once('.'))
                .map(|(_, c)| c.to_owned());
        }
    }
    Ok(answer)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(reply: RawDocumentBuf) -> (String, bool) {
        match outcome(&reply, "firstBatch") {
            Err(a) => (a.failure.to_string(), a.retryable),
            Ok(answer) => panic!("{reply:?} read as {answer:?}"),
        }
    }

    #[test]
    fn replies_are_read_for_counts_and_the_cursor_to_drain() {
        let write = rawdoc! {"ok": 1.0, "n": 3, "nModified": 2};
        let answer = outcome(&write, "firstBatch").ok().unwrap();
        assert_eq!(answer, (Reply { documents: 0, n: 3 }, 0, None));
        let find = rawdoc! {"ok": 1, "cursor": {"id": 42i64, "ns": "db.flights.x",
        "firstBatch": [{"a": 1}, {"a": 2}]}};
        let answer = outcome(&find, "firstBatch").ok().unwrap();
        assert_eq!(
            answer,
            (Reply { documents: 2, n: 0 }, 42, Some("flights.x".into()))
        );
        let last = rawdoc! {"ok": 1, "cursor": {"id": 0i64, "ns": "db.t", "nextBatch": [{}]}};
        let answer = outcome(&last, "nextBatch").ok().unwrap();
        assert_eq!(answer, (Reply { documents: 1, n: 0 }, 0, None));
    }

    #[test]
    fn failures_say_what_failed_and_whether_a_retryable_write_may_be_sent_again() {
        assert_eq!(
            failure(
                rawdoc! {"ok": 0.0, "code": 10107, "codeName": "NotWritablePrimary",
                "errmsg": "not primary", "errorLabels": ["RetryableWriteError"]}
            ),
            (
                "command failed with error 10107 (NotWritablePrimary): not primary".into(),
                true
            )
        );
        // Before 4.4 there are no labels: the code decides.
        let shutdown = rawdoc! {"ok": 0.0, "code": 91, "codeName": "ShutdownInProgress",
        "errmsg": "shutting down"};
        assert!(failure(shutdown).1);
        assert_eq!(
            failure(rawdoc! {"ok": 0.0, "code": 2, "codeName": "BadValue", "errmsg": "no"}),
            ("command failed with error 2 (BadValue): no".into(), false)
        );
        assert_eq!(
            failure(rawdoc! {"ok": 1, "n": 0, "writeErrors": [
            {"index": 0, "code": 11000, "errmsg": "E11000 duplicate key"}]}),
            ("write error 11000: E11000 duplicate key".into(), false)
        );
        assert_eq!(
            failure(rawdoc! {"ok": 1, "n": 1, "writeConcernError":
            {"code": 64, "errmsg": "waiting for replication timed out"}}),
            (
                "write error 64: waiting for replication timed out".into(),
                false
            )
        );
        let concern = rawdoc! {"ok": 1, "n": 1, "writeConcernError":
        {"code": 91, "errmsg": "shutting down"}};
        assert!(failure(concern).1);
    }

    #[test]
    fn a_session_id_is_a_version_4_uuid() {
        let a = session_id();
        let id = a.get_binary("id").unwrap();
        assert_eq!(id.subtype, BinarySubtype::Uuid);
        assert_eq!(
            (id.bytes.len(), id.bytes[6] >> 4, id.bytes[8] >> 6),
            (16, 4, 2)
        );
        assert_ne!(session_id(), a);
    }
}
