//! Fuzz target `ycsb_properties`: see fuzz/checks/ycsb_properties.rs.
#![no_main]

#[path = "../checks/ycsb_properties.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
