//! Collection sizes from a `collStats` reply or a `$collStats: {storageStats: {}}` document.

use mongodb::bson::Document;
use serde::{Deserialize, Serialize};

use super::fields::{Fields, ServerFigureError};

/// Sizes of the benchmark collection, in bytes unless stated. Field names follow `collStats`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct CollStatsSizes {
    /// Documents in the collection.
    pub count: Option<u64>,
    /// Uncompressed size of the documents (bytes).
    pub size: Option<u64>,
    /// Average document size (bytes).
    pub avg_obj_size: Option<f64>,
    /// Space allocated on disk for the documents, compressed (bytes).
    pub storage_size: Option<u64>,
    /// Space of all indexes (bytes).
    pub total_index_size: Option<u64>,
    /// Number of indexes.
    pub nindexes: Option<u64>,
}

impl CollStatsSizes {
    /// The sizes of several collections taken together (a custom workload's); a figure is
    /// known only when it is known of every collection.
    pub fn total(parts: &[CollStatsSizes]) -> CollStatsSizes {
        let sum =
            |get: fn(&CollStatsSizes) -> Option<u64>| parts.iter().map(get).sum::<Option<u64>>();
        let (count, size) = (sum(|p| p.count), sum(|p| p.size));
        CollStatsSizes {
            count,
            size,
            avg_obj_size: match (count, size) {
                (Some(c), Some(s)) if c > 0 => Some(s as f64 / c as f64),
                _ => None,
            },
            storage_size: sum(|p| p.storage_size),
            total_index_size: sum(|p| p.total_index_size),
            nindexes: sum(|p| p.nindexes),
        }
    }

    /// Reads a `collStats` command reply, or one `$collStats` output document (its
    /// `storageStats` section).
    ///
    /// # Errors
    /// [`ServerFigureError::WrongType`] for unusable fields, including a `scaleFactor` other
    /// than 1 (the figures would not be bytes).
    pub fn from_document(doc: &Document) -> Result<CollStatsSizes, ServerFigureError> {
        let f = Fields::new(doc, "collStats");
        let section: &[&str] = if doc.contains_key("storageStats") {
            &["storageStats"]
        } else {
            &[]
        };
        let path = |key: &'static str| {
            let mut p = section.to_vec();
            p.push(key);
            p
        };
        if let Some(scale) = f.u64(&path("scaleFactor"))?
            && scale != 1
        {
            return Err(ServerFigureError::WrongType {
                document: "collStats",
                path: path("scaleFactor").join("."),
                found: scale.to_string(),
                expected: "1 (ask for sizes in bytes: no `scale` option)",
            });
        }
        Ok(CollStatsSizes {
            count: f.u64(&path("count"))?,
            size: f.u64(&path("size"))?,
            avg_obj_size: f.number_or_text(&path("avgObjSize"))?,
            storage_size: f.u64(&path("storageSize"))?,
            total_index_size: f.u64(&path("totalIndexSize"))?,
            nindexes: f.u64(&path("nindexes"))?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::server::fixture;
    use mongodb::bson::doc;

    #[test]
    fn mongod_collstats_reply_is_read() {
        let s = CollStatsSizes::from_document(&fixture("mongod-8.0-collStats.json")).unwrap();
        assert_eq!(
            s,
            CollStatsSizes {
                count: Some(1_000_000),
                size: Some(1_168_000_000),
                avg_obj_size: Some(1168.0),
                storage_size: Some(412_549_120),
                total_index_size: Some(96_219_136),
                nindexes: Some(4),
            }
        );
    }

    #[test]
    fn storage_stats_section_is_read() {
        let d = doc! { "ns": "bench.flights", "storageStats": {
        "size": 2048_i64, "count": 2_i32, "avgObjSize": 1024_i32, "storageSize": 4096_i64,
        "totalIndexSize": 8192_i64, "nindexes": 1_i32, "scaleFactor": 1_i32 } };
        let s = CollStatsSizes::from_document(&d).unwrap();
        assert_eq!(
            (s.count, s.size, s.nindexes),
            (Some(2), Some(2048), Some(1))
        );
    }

    #[test]
    fn scaled_sizes_are_refused() {
        let d = doc! { "count": 2_i32, "size": 2_i32, "scaleFactor": 1024_i32 };
        let e = CollStatsSizes::from_document(&d).unwrap_err();
        assert!(e.to_string().contains("`scaleFactor`"), "{e}");
    }

    #[test]
    fn ferretdb_collstats_reply_is_read() {
        let s = CollStatsSizes::from_document(&fixture("ferretdb-1.24-collStats.json")).unwrap();
        assert_eq!(s.count, Some(3));
        assert!(s.size.is_some_and(|v| v > 0));
        assert!(s.storage_size.is_some());
        assert_eq!(s.nindexes, Some(2));
    }
}
