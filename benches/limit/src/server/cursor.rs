//! Cursors: a reply's first batch (the rest kept as a cursor), `getMore`, and batches bounded
//! by size and by bytes.

use std::collections::VecDeque;

use bson::{RawArrayBuf, RawDocumentBuf, rawdoc};

use super::command::{Command, Reply, fail, get, int, ok};
use super::{Server, State};

/// Replies stay under this many bytes of documents per batch.
const BATCH_BYTES: usize = 8 * 1024 * 1024;
pub(super) const DEFAULT_BATCH: usize = 101;

pub(super) struct Cursor {
    ns: String,
    docs: VecDeque<RawDocumentBuf>,
}

impl Server {
    pub(super) fn first_batch(
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

    pub(super) fn get_more(&self, c: &Command<'_>) -> Reply {
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

pub(super) fn cursor_reply(ns: &str, id: i64, field: &str, batch: RawArrayBuf) -> RawDocumentBuf {
    let mut cursor = RawDocumentBuf::new();
    cursor.append(field, batch);
    cursor.append("id", id);
    cursor.append("ns", ns);
    rawdoc! {"cursor": cursor}
}
