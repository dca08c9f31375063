//! The seeded state S(size) of a target's collection: brought to a size — fresh, grown from
//! the previous size, or reused — with its digest recorded (`prepare.rs`), seeded by each
//! workload's loader (`seed_flights.rs`, `seed_ycsb.rs`, `seed_custom.rs` for the collections of
//! a custom workload), checked by digest (`digest.rs`), and
//! brought back after a phase changed it (`restore.rs`). On a sharded target the fresh
//! collection is sharded and pre-split first (`shard.rs`).
//!
//! Uses `server/` (the connected target), `send/` (YCSB loads through a `Sender`; the changes
//! a restore undoes), `crew/` (loads split over client processes) and the runner's
//! `deadline.rs` and `outcome.rs`.

mod digest;
mod prepare;
mod restore;
mod seed_custom;
pub mod seed_flights;
pub mod seed_ycsb;
mod shard;

pub use digest::{DB_HASH, DigestError, SHA256_SUM, digest};
pub use prepare::{
    DIGESTS, DatasetError, Seeded, dataset_identity, namespace, plan_digest, prepare, prepare_with,
};
pub use restore::{RestoreError, Restored, restore};
