//! Instruments for measuring MongoDB benchmark clients (BENCHMARKS.md): a limit server that
//! answers from memory at once, and a limit client that sends pre-encoded frames. Neither is a
//! stand-in for a server in tests.

pub mod server;
pub mod store;
pub mod wire;
