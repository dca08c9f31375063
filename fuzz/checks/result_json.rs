//! A result document's text through `CellResult::from_json`, as `report --dir` and `verify`
//! read it; a document that is accepted writes back to JSON that reads back equal. Nothing may
//! panic.
//!
//! The body of fuzz target `result_json` (fuzz/fuzz_targets/), also run over the committed
//! corpus by tests/fuzz_corpus.rs.
use mongobench::result::CellResult;

pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(result) = CellResult::from_json(text) else {
        return;
    };
    let written = result.to_json().expect("an accepted result serializes");
    let back = CellResult::from_json(&written).expect("a written result reads back");
    assert_eq!(back.cell, result.cell);
    assert_eq!(back.fingerprint, result.fingerprint);
}
