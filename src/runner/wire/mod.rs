//! Workers' own connections. A command that needs nothing the driver adds (no session, no
//! retry, no server selection beyond "the primary") is sent by its worker on a connection of
//! its own, framed straight from the command's BSON, and its reply is read in place: the
//! driver's per-command path (server selection, a pool checkout through its worker task, the
//! reply decoded into a `Document`) costs about three times what the wire itself does
//! (BENCHMARKS.md, "The driver's floor"). What is sent is the same command the driver would
//! send, less its implicit `lsid` and `$clusterTime`.
//!
//! Which path a target's workers take is decided once, when it is connected ([`choose`], then
//! one connection opened as a probe): deployments this path does not speak to (TLS, an
//! authentication mechanism other than SCRAM-SHA-256, compression, a load balancer, several
//! mongos routers, servers older than 3.6) keep the driver, and say why.
//!
//! Below `send/` and `server/`; uses only `outcome.rs` of the runner.

pub mod connection;
pub mod frame;
pub mod lane;
pub mod route;
pub mod scram;

pub use connection::probe;
pub use frame::reply_ok;
pub use route::{Route, WirePath, choose, for_phase};
