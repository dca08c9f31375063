//! The unit parsers of a spec (dataset sizes, durations, Kubernetes quantities): no panic, and
//! the CRD's `pattern` and the Rust parser agree on every input, since the API server checks
//! the one and the runner uses the other. A parsed duration formats back to itself.
//!
//! The body of fuzz target `units` (fuzz/fuzz_targets/), also run over the committed
//! corpus by tests/fuzz_corpus.rs.
use std::sync::LazyLock;

use mongobench::api::units::{
    DATASET_SIZE_PATTERN, DURATION_PATTERN, format_duration, parse_dataset_size, parse_duration,
    parse_quantity_bytes, parse_quantity_millis,
};
use regex::Regex;

static SIZE: LazyLock<Regex> = LazyLock::new(|| Regex::new(DATASET_SIZE_PATTERN).unwrap());
static DURATION: LazyLock<Regex> = LazyLock::new(|| Regex::new(DURATION_PATTERN).unwrap());

pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let size = parse_dataset_size(text);
    assert_eq!(
        size.is_ok(),
        SIZE.is_match(text),
        "dataset size {text:?}: parser {size:?}, pattern disagrees"
    );
    let duration = parse_duration(text);
    // The CRD's minLength 1 refuses the empty string, which the pattern alone matches.
    assert_eq!(
        duration.is_ok(),
        !text.is_empty() && DURATION.is_match(text),
        "duration {text:?}: parser {duration:?}, pattern disagrees"
    );
    if let Ok(d) = duration {
        assert_eq!(parse_duration(&format_duration(d)), Ok(d), "{text:?}");
    }
    let _ = parse_quantity_bytes(text);
    let _ = parse_quantity_millis(text);
}
