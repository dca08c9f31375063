//! Executes a benchmark against real servers: connect, seed, warm up, restore, settle,
//! measure, explain, collect server statistics, restore, and write one result per cell. The
//! same code (`benchmark.rs`) runs locally (`mongobench run --target NAME=URI`) and inside the
//! operator's Job.

pub mod activity;
pub mod benchmark;
pub mod cell;
pub mod changes;
pub mod connect;
pub mod crew;
pub mod dataset;
pub mod deadline;
pub mod digest;
pub mod execute;
pub mod explain;
pub mod follower;
pub mod identity;
pub mod outcome;
pub mod partial;
pub mod phase;
pub mod replication;
pub mod restore;
pub mod rs_init;
pub mod seed_flights;
pub mod seed_ycsb;
pub mod server_stats;
pub mod sink;
pub mod slots;
pub mod source;
pub mod split;
pub mod wire;
