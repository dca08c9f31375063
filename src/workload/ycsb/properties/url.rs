//! The database the binding writes to, read from `mongodb.url` (specs/ycsb.md §6).

use crate::workload::ycsb::error::PropertyError;
use crate::workload::ycsb::settings::Compat;

/// The database YCSB's binding uses for `url` (§6): the URL's database unless the URL was
/// defaulted, names none, or names `admin`; then `ycsb`.
///
/// # Errors
/// [`PropertyError::Invalid`] for a scheme other than `mongodb://` (0.17.0) or also
/// `mongodb+srv://` (master).
pub fn database_for_url(url: Option<&str>, compat: Compat) -> Result<String, PropertyError> {
    let Some(url) = url else {
        return Ok("ycsb".to_string());
    };
    let rest = match (url.strip_prefix("mongodb://"), compat) {
        (Some(rest), _) => rest,
        (None, Compat::Master) if url.starts_with("mongodb+srv://") => {
            &url["mongodb+srv://".len()..]
        }
        _ => {
            let expected = match compat {
                Compat::V0_17_0 => "a URL starting with mongodb:// (YCSB 0.17.0)",
                Compat::Master => "a URL starting with mongodb:// or mongodb+srv://",
            };
            return Err(PropertyError::Invalid {
                property: "mongodb.url".into(),
                value: url.into(),
                expected: expected.into(),
            });
        }
    };
    let path = rest.split_once('/').map(|(_, p)| p).unwrap_or("");
    let db = path.split('?').next().unwrap_or("");
    if db.is_empty() || db == "admin" {
        Ok("ycsb".to_string())
    } else {
        Ok(db.to_string())
    }
}
