//! `Key`: a BSON value as an ordered map key, for `_id`s and index entries.

use std::cmp::Ordering;

use bson::{Bson, RawBsonRef};

/// A `_id` as an ordered key, in MongoDB's order of types (numbers, strings, documents,
/// binary data, ObjectId, booleans, dates, then anything else).
#[derive(Debug, Clone)]
pub enum Key {
    Null,
    Number(f64),
    String(String),
    Document(Vec<u8>),
    Binary(Vec<u8>),
    ObjectId([u8; 12]),
    Bool(bool),
    Date(i64),
    Other(String),
}

impl Key {
    fn rank(&self) -> u8 {
        match self {
            Key::Null => 0,
            Key::Number(_) => 1,
            Key::String(_) => 2,
            Key::Document(_) => 3,
            Key::Binary(_) => 4,
            Key::ObjectId(_) => 5,
            Key::Bool(_) => 6,
            Key::Date(_) => 7,
            Key::Other(_) => 8,
        }
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Key::Number(a), Key::Number(b)) => a.total_cmp(b),
            (Key::String(a), Key::String(b)) | (Key::Other(a), Key::Other(b)) => a.cmp(b),
            (Key::Document(a), Key::Document(b)) | (Key::Binary(a), Key::Binary(b)) => a.cmp(b),
            (Key::ObjectId(a), Key::ObjectId(b)) => a.cmp(b),
            (Key::Bool(a), Key::Bool(b)) => a.cmp(b),
            (Key::Date(a), Key::Date(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Key {}

impl Key {
    pub fn of(value: RawBsonRef<'_>) -> Key {
        match value {
            RawBsonRef::Null | RawBsonRef::Undefined => Key::Null,
            RawBsonRef::Int32(i) => Key::Number(f64::from(i)),
            RawBsonRef::Int64(i) => Key::Number(i as f64),
            RawBsonRef::Double(d) => Key::Number(d),
            RawBsonRef::String(s) => Key::String(s.to_owned()),
            RawBsonRef::Document(d) => Key::Document(d.as_bytes().to_vec()),
            RawBsonRef::Binary(b) => Key::Binary(b.bytes.to_vec()),
            RawBsonRef::ObjectId(o) => Key::ObjectId(o.bytes()),
            RawBsonRef::Boolean(b) => Key::Bool(b),
            RawBsonRef::DateTime(d) => Key::Date(d.timestamp_millis()),
            other => Key::Other(format!("{other:?}")),
        }
    }

    pub fn of_bson(value: &Bson) -> Key {
        match value {
            Bson::Null | Bson::Undefined => Key::Null,
            Bson::Int32(i) => Key::Number(f64::from(*i)),
            Bson::Int64(i) => Key::Number(*i as f64),
            Bson::Double(d) => Key::Number(*d),
            Bson::String(s) => Key::String(s.clone()),
            Bson::Document(d) => {
                let mut bytes = Vec::new();
                let _ = d.to_writer(&mut bytes);
                Key::Document(bytes)
            }
            Bson::Binary(b) => Key::Binary(b.bytes.clone()),
            Bson::ObjectId(o) => Key::ObjectId(o.bytes()),
            Bson::Boolean(b) => Key::Bool(*b),
            Bson::DateTime(d) => Key::Date(d.timestamp_millis()),
            other => Key::Other(format!("{other:?}")),
        }
    }
}
