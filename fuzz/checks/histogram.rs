//! HdrHistogram V2 and V2+DEFLATE bytes, as a result document's histograms hold them (after
//! base64), through the decoder; a decoded histogram encodes and decodes back equal. Nothing
//! may panic, and no input may make the decoder allocate beyond a result document's means.
//!
//! The body of fuzz target `histogram` (fuzz/fuzz_targets/), also run over the committed
//! corpus by tests/fuzz_corpus.rs.
use mongobench::result::EncodedHistogram;

pub fn check(data: &[u8]) {
    let Ok(decoded) = EncodedHistogram::decode_bytes(data) else {
        return;
    };
    let text = decoded.encode().expect("a decoded histogram encodes");
    let back = EncodedHistogram::decode(&text).expect("an encoded histogram decodes");
    assert_eq!(back.0, decoded.0);
}
