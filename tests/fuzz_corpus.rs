//! Every fuzz target's body over its committed corpus (fuzz/corpus/<target>, crash inputs found
//! earlier included), on the stable toolchain: the cheap form of `fuzz/run` that CI runs on
//! every change. Fuzzing itself, which needs nightly and cargo-fuzz, is `fuzz/run`
//! (docs/reliability-inputs.md).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

#[path = "../fuzz/checks/histogram.rs"]
mod histogram;
#[path = "../fuzz/checks/result_json.rs"]
mod result_json;
#[path = "../fuzz/checks/spec.rs"]
mod spec;
#[path = "../fuzz/checks/units.rs"]
mod units;
#[path = "../fuzz/checks/wire_reply.rs"]
mod wire_reply;
#[path = "../fuzz/checks/ycsb_properties.rs"]
mod ycsb_properties;

/// Runs `check` on every input of the target's corpus; fails naming each input that panicked.
fn replay(target: &str, check: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut inputs: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a corpus entry").path())
        .collect();
    inputs.sort();
    assert!(!inputs.is_empty(), "{}: the corpus is empty", dir.display());
    let panicked: Vec<String> = inputs
        .iter()
        .filter(|path| {
            let data = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            catch_unwind(AssertUnwindSafe(|| check(&data))).is_err()
        })
        .map(|path| path.display().to_string())
        .collect();
    assert!(
        panicked.is_empty(),
        "{target}: {} of {} corpus inputs panicked: {panicked:?}",
        panicked.len(),
        inputs.len()
    );
}

#[test]
fn the_spec_corpus_passes_the_spec_target() {
    replay("spec", spec::check);
}

#[test]
fn the_units_corpus_passes_the_units_target() {
    replay("units", units::check);
}

#[test]
fn the_ycsb_properties_corpus_passes_its_target() {
    replay("ycsb_properties", ycsb_properties::check);
}

#[test]
fn the_result_json_corpus_passes_its_target() {
    replay("result_json", result_json::check);
}

#[test]
fn the_histogram_corpus_passes_its_target() {
    replay("histogram", histogram::check);
}

#[test]
fn the_wire_reply_corpus_passes_its_target() {
    replay("wire_reply", wire_reply::check);
}
