//! A BSON writer for generated documents: fields appended in order into one buffer. The bson
//! crate's builders allocate for every string value and array index and a `Document` for
//! every field; seeding writes millions of documents (BENCHMARKS.md).

use mongodb::bson::oid::ObjectId;

const STRING: u8 = 0x02;
const DOCUMENT: u8 = 0x03;
const ARRAY: u8 = 0x04;
const OBJECT_ID: u8 = 0x07;
const BOOLEAN: u8 = 0x08;
const DATE_TIME: u8 = 0x09;
const INT32: u8 = 0x10;

/// Writes one top-level document; [`BsonWriter::finish`] returns its bytes.
#[derive(Debug)]
pub struct BsonWriter {
    buf: Vec<u8>,
    /// Where each open document's length goes.
    open: Vec<usize>,
}

/// A field's key: a name, or an array index (written as its decimal digits).
#[derive(Debug, Clone, Copy)]
pub enum Key<'a> {
    Name(&'a str),
    Index(usize),
}

impl<'a> From<&'a str> for Key<'a> {
    fn from(name: &'a str) -> Key<'a> {
        Key::Name(name)
    }
}

impl From<usize> for Key<'_> {
    fn from(index: usize) -> Self {
        Key::Index(index)
    }
}

impl BsonWriter {
    /// Starts the top-level document in a buffer of `capacity` bytes.
    pub fn with_capacity(capacity: usize) -> BsonWriter {
        let mut w = BsonWriter {
            buf: Vec::with_capacity(capacity),
            open: Vec::new(),
        };
        w.open_document();
        w
    }

    /// Closes the top-level document and returns its bytes.
    pub fn finish(mut self) -> Vec<u8> {
        self.end();
        assert!(self.open.is_empty(), "every document and array was ended");
        self.buf
    }

    fn open_document(&mut self) {
        self.open.push(self.buf.len());
        self.buf.extend_from_slice(&[0; 4]);
    }

    fn key<'k>(&mut self, kind: u8, key: impl Into<Key<'k>>) {
        self.buf.push(kind);
        match key.into() {
            Key::Name(name) => {
                debug_assert!(!name.contains('\0'), "a key has no NUL");
                self.buf.extend_from_slice(name.as_bytes());
            }
            Key::Index(i) => {
                let mut digits = [0u8; 20];
                let mut at = digits.len();
                let mut n = i;
                loop {
                    at -= 1;
                    digits[at] = b'0' + (n % 10) as u8;
                    n /= 10;
                    if n == 0 {
                        break;
                    }
                }
                self.buf.extend_from_slice(&digits[at..]);
            }
        }
        self.buf.push(0);
    }

    /// Opens an embedded document under `key`; [`BsonWriter::end`] closes it.
    pub fn start_document<'k>(&mut self, key: impl Into<Key<'k>>) {
        self.key(DOCUMENT, key);
        self.open_document();
    }

    /// Opens an array under `key`: its elements take [`Key::Index`] keys 0, 1, …
    pub fn start_array<'k>(&mut self, key: impl Into<Key<'k>>) {
        self.key(ARRAY, key);
        self.open_document();
    }

    /// Closes the innermost open document or array and returns its size in bytes.
    pub fn end(&mut self) -> usize {
        self.buf.push(0);
        let at = self.open.pop().expect("a document is open");
        let len = self.buf.len() - at;
        let encoded = i32::try_from(len).expect("a document under 2 GiB");
        self.buf[at..at + 4].copy_from_slice(&encoded.to_le_bytes());
        len
    }

    pub fn str<'k>(&mut self, key: impl Into<Key<'k>>, value: &str) {
        self.key(STRING, key);
        let len = i32::try_from(value.len() + 1).expect("a string under 2 GiB");
        self.buf.extend_from_slice(&len.to_le_bytes());
        self.buf.extend_from_slice(value.as_bytes());
        self.buf.push(0);
    }

    pub fn i32<'k>(&mut self, key: impl Into<Key<'k>>, value: i32) {
        self.key(INT32, key);
        self.buf.extend_from_slice(&value.to_le_bytes());
    }

    pub fn bool<'k>(&mut self, key: impl Into<Key<'k>>, value: bool) {
        self.key(BOOLEAN, key);
        self.buf.push(u8::from(value));
    }

    /// A UTC datetime, milliseconds since the Unix epoch.
    pub fn date_time<'k>(&mut self, key: impl Into<Key<'k>>, millis: i64) {
        self.key(DATE_TIME, key);
        self.buf.extend_from_slice(&millis.to_le_bytes());
    }

    pub fn object_id<'k>(&mut self, key: impl Into<Key<'k>>, id: &ObjectId) {
        self.key(OBJECT_ID, key);
        self.buf.extend_from_slice(&id.bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mongodb::bson::{DateTime, doc};

    #[test]
    fn writes_the_bytes_the_bson_crate_encodes() {
        let id = ObjectId::parse_str("6955b9000102030405060708").unwrap();
        let expected = doc! {
            "s": "héllo",
            "i": -7,
            "b": true,
            "d": DateTime::from_millis(1_700_000_000_123),
            "_id": id,
            "sub": { "x": 1, "arr": ["a", "b"] },
            "empty": [],
            "big": (0..12).collect::<Vec<i32>>(),
        };
        let mut w = BsonWriter::with_capacity(16);
        w.str("s", "héllo");
        w.i32("i", -7);
        w.bool("b", true);
        w.date_time("d", 1_700_000_000_123);
        w.object_id("_id", &id);
        w.start_document("sub");
        w.i32("x", 1);
        w.start_array("arr");
        w.str(0, "a");
        w.str(1, "b");
        w.end();
        // {x: 1, arr: ["a", "b"]}: length 4, x 7, arr 1 + 4 + 23, NUL 1.
        assert_eq!(w.end(), 40);
        w.start_array("empty");
        w.end();
        w.start_array("big");
        for i in 0..12 {
            w.i32(i as usize, i);
        }
        w.end();
        let mut bytes = Vec::new();
        expected.to_writer(&mut bytes).unwrap();
        assert_eq!(w.finish(), bytes);
    }

    #[test]
    fn an_empty_document_is_five_bytes() {
        let w = BsonWriter::with_capacity(0);
        assert_eq!(w.finish(), [5, 0, 0, 0, 0]);
    }

    #[test]
    #[should_panic(expected = "every document and array was ended")]
    fn an_unended_array_is_a_bug() {
        let mut w = BsonWriter::with_capacity(0);
        w.start_array("a");
        w.finish();
    }
}
