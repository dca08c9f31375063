//! The replica set around a measured phase: waiting until it has settled before (every
//! secondary has applied the primary's last write, no index build is running), and what
//! changed during it that makes the measurement invalid (an election, a member that
//! restarted). A server without replication (a standalone, the test server) has nothing to
//! settle and no elections.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use mongodb::Client;
use mongodb::bson::{Bson, Document, Timestamp, doc};

use crate::runner::outcome::driver_code;

/// How long to wait for replication to settle before the cell is marked invalid.
pub const SETTLE_TIMEOUT: Duration = Duration::from_secs(300);

/// Codes that mean "no replica set here": NoReplicationEnabled, NotYetInitialized,
/// CommandNotFound, NotImplemented.
const NO_REPLICATION: [i32; 4] = [76, 94, 59, 238];

/// One look at the replica set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaState {
    /// The election term.
    pub term: Option<i64>,
    /// The primary's address.
    pub primary: Option<String>,
    /// Seconds each member has been up, by address.
    pub uptimes: BTreeMap<String, i64>,
    /// Whether every secondary has applied the primary's last operation.
    pub caught_up: bool,
}

impl ReplicaState {
    /// The state in a `replSetGetStatus` reply.
    pub fn of(status: &Document) -> ReplicaState {
        let members: Vec<&Document> = status
            .get_array("members")
            .map(|m| m.iter().filter_map(Bson::as_document).collect())
            .unwrap_or_default();
        let optime = |m: &Document| -> Option<Timestamp> {
            m.get_document("optime").ok()?.get_timestamp("ts").ok()
        };
        let primary = members
            .iter()
            .find(|m| m.get_str("stateStr") == Ok("PRIMARY"));
        let primary_optime = primary.and_then(|p| optime(p));
        let caught_up = members
            .iter()
            .filter(|m| m.get_str("stateStr") == Ok("SECONDARY"))
            .all(|m| primary_optime.is_some() && optime(m) >= primary_optime);
        ReplicaState {
            term: integer(status.get("term")),
            primary: primary.and_then(|p| p.get_str("name").ok().map(str::to_owned)),
            uptimes: members
                .iter()
                .filter_map(|m| {
                    Some((
                        m.get_str("name").ok()?.to_owned(),
                        integer(m.get("uptime"))?,
                    ))
                })
                .collect(),
            caught_up,
        }
    }

    /// Why a measurement between `self` (before) and `after` is not valid evidence.
    pub fn changes(&self, after: &ReplicaState) -> Vec<String> {
        let mut out = Vec::new();
        if self.term != after.term {
            out.push(format!(
                "election: term {} → {}",
                show(self.term),
                show(after.term)
            ));
        } else if self.primary != after.primary {
            out.push(format!(
                "primary changed: {} → {}",
                self.primary.as_deref().unwrap_or("none"),
                after.primary.as_deref().unwrap_or("none")
            ));
        }
        for (member, before) in &self.uptimes {
            if let Some(now) = after.uptimes.get(member)
                && now < before
            {
                out.push(format!(
                    "member {member} restarted (uptime {before} s → {now} s)"
                ));
            }
        }
        out
    }
}

fn show(v: Option<i64>) -> String {
    v.map_or("unknown".into(), |v| v.to_string())
}

fn integer(v: Option<&Bson>) -> Option<i64> {
    match v? {
        Bson::Int32(i) => Some(i64::from(*i)),
        Bson::Int64(i) => Some(*i),
        Bson::Double(f) => Some(*f as i64),
        _ => None,
    }
}

/// The replica set's state, or `None` when the server has no replication.
pub async fn state(client: &Client) -> Result<Option<ReplicaState>, mongodb::error::Error> {
    match client
        .database("admin")
        .run_command(doc! {"replSetGetStatus": 1})
        .await
    {
        Ok(reply) => Ok(Some(ReplicaState::of(&reply))),
        Err(e) if driver_code(&e).is_some_and(|c| NO_REPLICATION.contains(&c)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Whether an index build is running on the server (`currentOp`); `false` where the server
/// does not answer the question.
async fn index_build_running(client: &Client) -> Result<bool, mongodb::error::Error> {
    let filter = doc! {"currentOp": 1, "$or": [
        {"command.createIndexes": {"$exists": true}},
        {"msg": {"$regex": "^Index Build"}}
    ]};
    match client.database("admin").run_command(filter).await {
        Ok(reply) => Ok(index_builds(&reply) > 0),
        Err(e) if driver_code(&e).is_some_and(|c| NO_REPLICATION[2..].contains(&c)) => Ok(false),
        Err(e) => Err(e),
    }
}

/// The index builds in a `currentOp` reply. The filter is applied here again: a server may
/// ignore it and list every operation, this `currentOp` itself included.
fn index_builds(reply: &Document) -> usize {
    let building = |op: &Document| {
        op.get_document("command")
            .is_ok_and(|c| c.contains_key("createIndexes"))
            || op
                .get_str("msg")
                .is_ok_and(|m| m.starts_with("Index Build"))
    };
    reply.get_array("inprog").map_or(0, |ops| {
        ops.iter()
            .filter_map(Bson::as_document)
            .filter(|op| building(op))
            .count()
    })
}

/// How settling went.
#[derive(Debug, Clone, PartialEq)]
pub struct Settled {
    /// Seconds waited.
    pub seconds: f64,
    /// The replica set at the end (`None` without replication).
    pub state: Option<ReplicaState>,
    /// Set when `timeout` passed first: what was still pending.
    pub timed_out: Option<String>,
}

/// Waits until every secondary has applied the primary's last write and no index build runs,
/// or `timeout` passes.
pub async fn settle(client: &Client, timeout: Duration) -> Result<Settled, mongodb::error::Error> {
    let started = Instant::now();
    loop {
        let state = state(client).await?;
        let lagging = state.as_ref().is_some_and(|s| !s.caught_up);
        let building = index_build_running(client).await?;
        if !lagging && !building {
            return Ok(Settled {
                seconds: started.elapsed().as_secs_f64(),
                state,
                timed_out: None,
            });
        }
        if started.elapsed() >= timeout {
            let pending = match (lagging, building) {
                (true, true) => "secondaries lag the primary and an index build is running",
                (true, false) => "secondaries lag the primary",
                _ => "an index build is running",
            };
            return Ok(Settled {
                seconds: started.elapsed().as_secs_f64(),
                state,
                timed_out: Some(format!(
                    "replication did not settle within {} s: {pending}",
                    timeout.as_secs()
                )),
            });
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(term: i64, members: &[(&str, &str, u32, i64)]) -> Document {
        let members: Vec<Document> = members
            .iter()
            .map(|(name, state, ts, uptime)| {
                doc! {
                    "name": *name,
                    "stateStr": *state,
                    "uptime": *uptime,
                    "optime": {"ts": Timestamp { time: *ts, increment: 1 }, "t": term},
                }
            })
            .collect();
        doc! {"set": "rs0", "term": term, "members": members}
    }

    #[test]
    fn secondaries_are_caught_up_when_they_applied_the_primarys_last_write() {
        let lagging = ReplicaState::of(&status(
            2,
            &[
                ("a:27017", "PRIMARY", 100, 500),
                ("b:27017", "SECONDARY", 99, 500),
            ],
        ));
        assert!(!lagging.caught_up);
        let done = ReplicaState::of(&status(
            2,
            &[
                ("a:27017", "PRIMARY", 100, 500),
                ("b:27017", "SECONDARY", 100, 500),
                ("c:27017", "ARBITER", 0, 500),
            ],
        ));
        assert!(done.caught_up);
        assert_eq!(
            (done.term, done.primary.as_deref()),
            (Some(2), Some("a:27017"))
        );
    }

    #[test]
    fn only_index_builds_count_whatever_the_server_lists() {
        // A server that ignores currentOp's filter lists the currentOp itself.
        let unfiltered = doc! {"inprog": [
            {"op": "command", "command": {"currentOp": 1, "$or": []}},
            {"op": "query", "command": {"find": "flights"}},
        ]};
        assert_eq!(index_builds(&unfiltered), 0);
        let building = doc! {"inprog": [
            {"op": "command", "command": {"createIndexes": "flights", "indexes": []}},
            {"op": "none", "msg": "Index Build: scanning collection"},
            {"op": "command", "command": {"currentOp": 1}},
        ]};
        assert_eq!(index_builds(&building), 2);
        assert_eq!(index_builds(&doc! {"ok": 1}), 0);
    }

    #[test]
    fn elections_and_restarts_are_named() {
        let before = ReplicaState::of(&status(
            2,
            &[
                ("a:27017", "PRIMARY", 100, 500),
                ("b:27017", "SECONDARY", 100, 500),
            ],
        ));
        let same = ReplicaState::of(&status(
            2,
            &[
                ("a:27017", "PRIMARY", 200, 560),
                ("b:27017", "SECONDARY", 200, 560),
            ],
        ));
        assert!(before.changes(&same).is_empty());
        let after = ReplicaState::of(&status(
            3,
            &[
                ("a:27017", "SECONDARY", 200, 12),
                ("b:27017", "PRIMARY", 200, 560),
            ],
        ));
        assert_eq!(
            before.changes(&after),
            [
                "election: term 2 → 3",
                "member a:27017 restarted (uptime 500 s → 12 s)"
            ]
        );
    }
}
