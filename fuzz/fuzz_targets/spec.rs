//! Fuzz target `spec`: see fuzz/checks/spec.rs.
#![no_main]

#[path = "../checks/spec.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
