//! Fuzz target `histogram`: see fuzz/checks/histogram.rs.
#![no_main]

#[path = "../checks/histogram.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
