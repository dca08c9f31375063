//! Command dispatch: a command's name picks its handler and the counter it counts under;
//! failures become `ok: 0` replies.

use std::sync::atomic::{AtomicU64, Ordering};

use bson::{RawDocument, RawDocumentBuf, rawdoc};

use super::Server;
use super::command::{Command, Reply, document, ok};

impl Server {
    pub(super) fn run(
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
}
