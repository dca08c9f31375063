//! Fuzz target `result_json`: see fuzz/checks/result_json.rs.
#![no_main]

#[path = "../checks/result_json.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
