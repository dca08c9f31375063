//! Rendering the objects of a benchmark, pure: the replica set of a provisioned target
//! (`servers/`), the plan and Job of a runner (`jobs/`), the generated Secrets, and the names
//! and labels they share.

pub mod jobs;
pub mod names;
pub mod secrets;
pub mod servers;
