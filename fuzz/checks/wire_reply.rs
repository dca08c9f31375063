//! What a server sends a worker's own connection: an OP_MSG reply read in place
//! (`wire::lane::read_reply`), its reading as a `hello` (the message limit it sets) and as a
//! SASL step, and the messages of a SCRAM-SHA-256 login. No input panics or hangs; a reply
//! that parses says either its counts or its failure.
//!
//! The body of fuzz target `wire_reply` (fuzz/fuzz_targets/), also run over the committed
//! corpus by tests/fuzz_corpus.rs.
use mongobench::runner::wire::connection::sasl_reply;
use mongobench::runner::wire::frame::{MessageLimit, reply_body};
use mongobench::runner::wire::lane::read_reply;
use mongobench::runner::wire::scram::{Conversation, Credential, verify_server_final};

pub fn check(data: &[u8]) {
    // The request id the reply must answer is its own responseTo, when it has one, so that
    // inputs get past that check.
    let id = data
        .get(8..12)
        .map_or(0, |b| i32::from_le_bytes(b.try_into().unwrap()));
    let _ = read_reply(data, id);
    if let Ok(body) = reply_body(data, id) {
        if let Ok(MessageLimit::Server(bytes)) = MessageLimit::of_hello(body) {
            assert!((26..=48_000_000).contains(&bytes), "limit {bytes}");
        }
        let _ = sasl_reply(Ok(body), None);
        let _ = sasl_reply(Ok(body), Some(1));
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let credential = Credential::new("user", "pencil", "admin").unwrap();
        let conversation = Conversation::start("user", "rOprNGfwEbeRWgbNEkqO");
        if let Ok((_, expected)) = conversation.client_final(&credential, text) {
            assert!(!text.split(',').any(|f| f.starts_with("m=")), "m= accepted");
            let _ = verify_server_final(text, &expected);
        }
    }
}
