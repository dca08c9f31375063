//! Deterministic workload generators: `flights/v1` (specs/flights.md), YCSB core workloads A–F
//! (specs/ycsb.md) and custom workloads described as data (specs/custom.md, with the import of
//! plgm's files in `plgm`), and the [`Operation`] they produce. The crate's bottom layer: it uses nothing
//! else of `mongobench` (only the driver's BSON types); `runner`, `plan`, `measure` and `operator`
//! build on it, and the runner executes the operations.
//!
//! Generators never touch the network and never read the clock: every operation is a pure
//! function of (seed, worker index, sequence), which is what makes the traffic fingerprint
//! meaningful. [`rng`] holds the shared randomness primitives, [`bson_writer`] a direct BSON
//! encoder for generated documents; each workload lives in its own module.

pub mod bson_writer;
pub mod custom;
pub mod flights;
pub mod millis;
pub mod plgm;
pub mod rng;
pub mod ycsb;
// Further workloads register here, one `pub mod` line each.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

use mongodb::bson::{Document, RawDocumentBuf};

/// One logical operation as the runner sends it and times it: one or more database commands,
/// executed in order against `database`, measured as a single latency sample under `label`.
#[derive(Debug, Clone, PartialEq)]
pub struct Operation {
    /// Measurement label (the operation type a histogram is kept for), e.g. `find`, `READ`.
    pub label: &'static str,
    /// The database the commands run against.
    pub database: &'static str,
    /// Complete database command documents (`{find: ...}`, `{update: ...}`, ...) without the
    /// driver-added fields (`$db`, `lsid`, read/write concern).
    pub commands: Vec<Command>,
}

/// One database command plus how its reply must be consumed.
#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    /// The command document, its name first (`{find: "flights", filter: ...}`), encoded once
    /// where it is generated: these bytes are what the fingerprint hashes and what is sent.
    pub body: RawDocumentBuf,
    /// The reply opens a cursor that must be drained with getMore (aggregate, multi-batch find).
    pub drain_cursor: bool,
    /// The commands of this operation run inside one transaction (flights §5.7).
    pub in_transaction: bool,
    /// A single-statement write (updateOne, deleteOne) or an insert sent through the driver's
    /// typed collection operation, which retries it once on a retryable error where the
    /// deployment supports retryable writes (flights §5.8). Other commands are sent as they are.
    pub retryable: bool,
}

impl Command {
    /// A command from its document.
    pub fn new(body: &Document, drain_cursor: bool, in_transaction: bool) -> Command {
        Command {
            body: RawDocumentBuf::from_document(body).expect("a command document encodes as BSON"),
            drain_cursor,
            in_transaction,
            retryable: false,
        }
    }

    /// The same command, sent as a retryable write (the `retryable` field).
    pub fn retryable(self) -> Command {
        Command {
            retryable: true,
            ..self
        }
    }

    /// The command's name (its first key), e.g. `find`.
    pub fn name(&self) -> &str {
        match self.body.iter().next() {
            Some(Ok((name, _))) => name,
            _ => "",
        }
    }

    /// The body decoded, for the few places that read more than a field or two (explain, tests).
    pub fn to_document(&self) -> Document {
        self.body
            .to_document()
            .expect("a command body is a well-formed document")
    }
}

/// A `&'static str` for a name made at run time (`Operation::label`, `Operation::database`):
/// such names are few and live as long as the process, so each distinct one is leaked once.
pub(crate) fn intern(s: &str) -> &'static str {
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut names = NAMES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(&name) = names.get(s) {
        return name;
    }
    let name: &'static str = Box::leak(s.to_owned().into_boxed_str());
    names.insert(name);
    name
}

/// Largest command document the runner sends: MongoDB's `maxBsonObjectSize`, 16 MiB. A server
/// accepts 16 KiB more for a command, room for the fields the driver adds (`$db`, `lsid`, the
/// write concern).
pub const MAX_COMMAND_BYTES: usize = 16 * 1024 * 1024;

/// MongoDB's `maxWriteBatchSize`: statements per write command.
pub const MAX_WRITE_BATCH: usize = 100_000;

/// The BSON size of `document` in bytes.
pub fn bson_len(document: &Document) -> usize {
    let mut bytes = Vec::new();
    document
        .to_writer(&mut bytes)
        .expect("a document serializes to a Vec");
    bytes.len()
}

/// A write command `template` (e.g. `{insert: t, documents: [], ordered: false}`) with its
/// `array` field filled with `items` in order, cut into as few consecutive commands as keep each
/// within [`MAX_COMMAND_BYTES`] and [`MAX_WRITE_BATCH`] items, as a driver splits an
/// `insertMany`. An item too large for a command of its own still gets one (the server then
/// refuses it, as it would refuse the whole batch).
pub fn split_write(template: &Document, array: &str, items: Vec<Document>) -> Vec<Document> {
    split_write_within(template, array, items, MAX_COMMAND_BYTES, MAX_WRITE_BATCH)
}

/// [`split_write`] with explicit limits.
fn split_write_within(
    template: &Document,
    array: &str,
    items: Vec<Document>,
    max_bytes: usize,
    max_items: usize,
) -> Vec<Document> {
    let mut empty = template.clone();
    empty.insert(array, Vec::<Document>::new());
    let base = bson_len(&empty);
    let command = |part: Vec<Document>| {
        let mut c = empty.clone();
        c.insert(array, part);
        c
    };
    let mut out = Vec::new();
    let mut part: Vec<Document> = Vec::new();
    let mut size = base;
    for item in items {
        // An array element: type byte, the index as a C string, then the document.
        let item_len = bson_len(&item);
        let element = |index: usize| 1 + index.to_string().len() + 1 + item_len;
        if !part.is_empty() && (part.len() == max_items || size + element(part.len()) > max_bytes) {
            out.push(command(std::mem::take(&mut part)));
            size = base;
        }
        size += element(part.len());
        part.push(item);
    }
    if !part.is_empty() || out.is_empty() {
        out.push(command(part));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use mongodb::bson::doc;

    fn items(n: usize, bytes: usize) -> Vec<Document> {
        (0..n)
            .map(|i| doc! { "_id": i as i64, "v": "x".repeat(bytes) })
            .collect()
    }

    fn lens(commands: &[Document]) -> Vec<usize> {
        commands
            .iter()
            .map(|c| c.get_array("documents").unwrap().len())
            .collect()
    }

    #[test]
    fn split_respects_the_byte_limit_exactly() {
        let template = doc! { "insert": "t", "documents": [], "ordered": false };
        // Each item: 4 + (1 + 4 + 8) + (1 + 2 + 4 + 100 + 1) + 1 = 126 bytes; as element i < 10
        // of the array it adds 1 + 1 + 1 + 126 = 129 bytes.
        assert_eq!(bson_len(&items(1, 100)[0]), 126);
        let base = bson_len(&template);
        let all = split_write_within(&template, "documents", items(10, 100), base + 3 * 129, 1000);
        assert_eq!(lens(&all), [3, 3, 3, 1]);
        for c in &all {
            assert!(bson_len(c) <= base + 3 * 129);
            assert_eq!(c.get_str("insert"), Ok("t"));
            assert_eq!(c.get_bool("ordered"), Ok(false));
            assert_eq!(
                c.keys().collect::<Vec<_>>(),
                ["insert", "documents", "ordered"]
            );
        }
        assert_eq!(bson_len(&all[0]), base + 3 * 129);
        // One byte less and only two fit.
        let tight = split_write_within(
            &template,
            "documents",
            items(4, 100),
            base + 3 * 129 - 1,
            1000,
        );
        assert_eq!(lens(&tight), [2, 2]);
        // Order and content are kept.
        let ids: Vec<i64> = all
            .iter()
            .flat_map(|c| c.get_array("documents").unwrap().clone())
            .map(|d| d.as_document().unwrap().get_i64("_id").unwrap())
            .collect();
        assert_eq!(ids, (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn split_respects_the_item_limit_and_keeps_oversized_items_alone() {
        let template = doc! { "insert": "t", "documents": [] };
        let all = split_write_within(&template, "documents", items(7, 10), usize::MAX, 3);
        assert_eq!(lens(&all), [3, 3, 1]);
        let huge = split_write_within(&template, "documents", items(3, 500), 300, 1000);
        assert_eq!(lens(&huge), [1, 1, 1]);
        assert_eq!(lens(&split_write(&template, "documents", Vec::new())), [0]);
    }

    #[test]
    fn real_limits_cut_a_large_batch_below_16_mib_and_100000_documents() {
        let template = doc! { "insert": "t", "documents": [], "ordered": false };
        // 40 documents of 1 MiB: 15 per command (15 × (1 MiB + 30 B) < 16 MiB < 16 × …).
        let big = split_write(&template, "documents", items(40, 1 << 20));
        assert_eq!(lens(&big), [15, 15, 10]);
        assert!(big.iter().all(|c| bson_len(c) <= MAX_COMMAND_BYTES));
        let many = split_write(&template, "documents", items(100_001, 1));
        assert_eq!(lens(&many), [100_000, 1]);
    }
}
