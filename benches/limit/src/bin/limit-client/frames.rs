//! A workload's mix as pre-encoded OP_MSG frames, with the places where a fresh or the last
//! inserted `_id` is patched in before each send.

use bson::{Document, RawDocumentBuf, doc};
use mongobench_limit::wire;

use crate::args::usage;
use crate::generate::{Rng, Zipfian, flight, ycsb_fields, ycsb_key};

/// How a frame is changed before each send.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Patch {
    None,
    /// A fresh `_id`: an int64 at this offset (flights) …
    NewInt(usize),
    /// … or 19 ASCII digits (YCSB's string keys).
    NewDigits(usize),
    /// The `_id` this connection inserted last (an int64).
    LastInt(usize),
}

pub(crate) struct Frame {
    pub(crate) bytes: Vec<u8>,
    pub(crate) patch: Patch,
    pub(crate) kind: &'static str,
}

const NEW_INT: i64 = 0x5A5A_5A5A_5A5A_5A5A;
const NEW_DIGITS: &str = "user9876543210987654321";
const LAST_INT: i64 = 0x3C3C_3C3C_3C3C_3C3C;

pub(crate) fn frame(kind: &'static str, db: &str, mut body: Document) -> Frame {
    body.insert("$db", db);
    let raw = RawDocumentBuf::from_document(&body).expect("a command serialises");
    let mut bytes = Vec::new();
    wire::encode_msg(&mut bytes, 1, 0, raw.as_bytes());
    let find = |needle: &[u8]| bytes.windows(needle.len()).position(|w| w == needle);
    let patch = if let Some(at) = find(&NEW_INT.to_le_bytes()) {
        Patch::NewInt(at)
    } else if let Some(at) = find(&LAST_INT.to_le_bytes()) {
        Patch::LastInt(at)
    } else if let Some(at) = find(&NEW_DIGITS.as_bytes()[4..]) {
        Patch::NewDigits(at)
    } else {
        Patch::None
    };
    Frame { bytes, patch, kind }
}

/// The pool of frames a run cycles through, in the mix's proportions.
pub(crate) fn frames(workload: &str, records: u64, seed: u64) -> Vec<Frame> {
    const POOL: usize = 4096;
    let mut rng = Rng(seed);
    let zipf = Zipfian::new(records.max(2));
    let mut out = Vec::with_capacity(POOL);
    for _ in 0..POOL {
        let p = rng.unit();
        let f = match workload {
            "ycsb-a" | "ycsb-c" => {
                let key = ycsb_key(zipf.next(&mut rng));
                if workload == "ycsb-a" && p < 0.5 {
                    let field = format!("field{}", rng.below(10));
                    let value = ycsb_fields(&mut rng).get(&field).cloned().expect("a field");
                    frame(
                        "update",
                        "ycsb",
                        doc! {"update": "usertable", "updates": [{"q": {"_id": key}, "u": {"$set": {field: value}}}], "ordered": true},
                    )
                } else {
                    frame(
                        "read",
                        "ycsb",
                        doc! {"find": "usertable", "filter": {"_id": key}, "limit": 1, "singleBatch": true},
                    )
                }
            }
            "ycsb-e" => {
                if p < 0.95 {
                    let key = ycsb_key(zipf.next(&mut rng));
                    let n = 1 + rng.below(100) as i32;
                    frame(
                        "scan",
                        "ycsb",
                        doc! {"find": "usertable", "filter": {"_id": {"$gte": key}}, "sort": {"_id": 1}, "limit": n, "batchSize": n},
                    )
                } else {
                    let mut d = doc! {"_id": NEW_DIGITS};
                    d.extend(ycsb_fields(&mut rng));
                    frame(
                        "insert",
                        "ycsb",
                        doc! {"insert": "usertable", "documents": [d], "ordered": true},
                    )
                }
            }
            "flights" => {
                let seq = rng.below(records) as i64;
                if p < 0.6 {
                    frame(
                        "find",
                        "airline",
                        doc! {"find": "flights", "filter": {"_id": seq}, "projection": {"flight_id": 1, "flight_code": 1, "origin": 1, "destination": 1, "gate": 1, "status": 1, "_id": 0}, "limit": 1, "singleBatch": true},
                    )
                } else if p < 0.8 {
                    frame(
                        "update",
                        "airline",
                        doc! {"update": "flights", "updates": [{"q": {"_id": seq}, "u": {"$inc": {"seats_available": -1}, "$set": {"status": "boarding"}}, "multi": false}]},
                    )
                } else if p < 0.9 {
                    frame(
                        "delete",
                        "airline",
                        doc! {"delete": "flights", "deletes": [{"q": {"_id": LAST_INT}, "limit": 1}]},
                    )
                } else {
                    let mut d = flight(0, &mut rng);
                    d.insert("_id", NEW_INT);
                    frame(
                        "insert",
                        "airline",
                        doc! {"insert": "flights", "documents": [d], "ordered": false},
                    )
                }
            }
            _ => usage(),
        };
        out.push(f);
    }
    out
}
