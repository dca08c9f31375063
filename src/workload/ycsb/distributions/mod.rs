//! Key-choice and length distributions of YCSB's CoreWorkload (specs/ycsb.md §4), one file each.
//! Every sampler takes the worker's [`Rng`](super::Rng) explicitly, so a worker's draws form one
//! reproducible stream. Uses only `ycsb/`'s `rng` and `keys` (the scrambled Zipfian's FNV hash);
//! `values`, `chooser` and `worker` build on it.

pub mod discrete;
pub mod exact;
pub mod exponential;
pub mod hotspot;
pub mod latest;
pub mod scrambled;
pub mod sequential;
pub mod uniform;
pub mod zipfian;

pub use discrete::Discrete;
pub use exact::{ExactZipfian, Permutation};
pub use exponential::Exponential;
pub use hotspot::Hotspot;
pub use latest::SkewedLatest;
pub use scrambled::ScrambledZipfian;
pub use sequential::Sequential;
pub use uniform::Uniform;
pub use zipfian::{ZIPFIAN_CONSTANT, Zipfian, zeta};
