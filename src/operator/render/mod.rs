//! Rendering the objects of a benchmark, pure: the replica set of a provisioned target
//! (`servers/`), the plan and Job of a runner and the runners' access (`jobs/`), the generated
//! Secrets, and the names, labels and metadata they share. No I/O; `apply.rs` writes what is
//! built here. Uses `api/`, `plan/` and the runner's names for what it writes (`runner::{activity,
//! sink, crew}`), never `observe/`, `decide/` or `status/`.

pub mod jobs;
pub mod meta;
pub mod names;
pub mod pod;
pub mod secrets;
pub mod servers;
