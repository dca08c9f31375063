//! Fuzz target `units`: see fuzz/checks/units.rs.
#![no_main]

#[path = "../checks/units.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
