//! The workload's version string and the namespace it writes to: the items every other file of
//! `flights/` names, so they sit below all of them.

/// The version string; part of the dataset identity and of the traffic fingerprint.
pub const VERSION: &str = "flights/v1";
/// Database of the collection.
pub const DATABASE: &str = "airline";
/// The collection.
pub const COLLECTION: &str = "flights";
