//! The limit server's memory: collections of raw documents ordered by `_id`, with the small
//! query language the instruments' clients use (equality and ranges, `$in`, `$and`/`$or`,
//! `$exists`; sort, inclusion/exclusion projections; `$set`, `$unset`, `$inc` updates and
//! replacements). Everything else a client may send is accepted and leaves documents as they
//! are: the server exists to answer at once, not to be a database.
//!
//! `Key` orders `_id`s, `Collection` keeps documents and answers filters (from `_id` order or
//! an index where it can), `query` matches, sorts and projects, `update` applies updates.

mod collection;
mod key;
mod query;
mod update;

#[cfg(test)]
mod tests;

use std::collections::HashMap;

pub use collection::Collection;
pub use key::Key;
pub use query::{Projection, lookup, matches, sort};
pub use update::update;

/// Every database's collections, by `db.collection`.
#[derive(Debug, Default)]
pub struct Store {
    pub collections: HashMap<String, Collection>,
}
