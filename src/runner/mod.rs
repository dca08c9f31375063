//! Executes a benchmark against real servers: connect, seed, warm up, measure, explain, collect
//! server statistics, and write one result per cell. The same code runs locally
//! (`mongobench run --target NAME=URI`) and inside the operator's Job.

pub mod cell;
pub mod connect;
pub mod execute;
pub mod explain;
pub mod phase;
pub mod rs_init;
pub mod seed_flights;
pub mod seed_ycsb;
pub mod server_stats;
pub mod sink;
pub mod source;
