//! Fuzz target `wire_reply`: see fuzz/checks/wire_reply.rs.
#![no_main]

#[path = "../checks/wire_reply.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
