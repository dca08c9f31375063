//! A command as the server sees it, the shape of its replies and failures, and the helpers
//! that read fields of raw command documents.

use bson::{Document, RawBsonRef, RawDocument, RawDocumentBuf};

pub(super) struct Failure {
    pub(super) code: i32,
    pub(super) name: &'static str,
    pub(super) message: String,
}

pub(super) fn fail(code: i32, name: &'static str, message: impl Into<String>) -> Failure {
    Failure {
        code,
        name,
        message: message.into(),
    }
}

pub(super) type Reply = Result<RawDocumentBuf, Failure>;

pub(super) fn ok(mut d: RawDocumentBuf) -> Reply {
    d.append("ok", 1.0);
    Ok(d)
}

pub(super) fn to_raw(d: &Document) -> RawDocumentBuf {
    RawDocumentBuf::from_document(d).expect("a document serialises")
}

pub(super) fn int(v: Option<RawBsonRef<'_>>) -> Option<i64> {
    match v? {
        RawBsonRef::Int32(i) => Some(i64::from(i)),
        RawBsonRef::Int64(i) => Some(i),
        RawBsonRef::Double(d) => Some(d as i64),
        _ => None,
    }
}

pub(super) fn get<'a>(d: &'a RawDocument, key: &str) -> Option<RawBsonRef<'a>> {
    d.get(key).ok().flatten()
}

pub(super) fn document(d: &RawDocument, key: &str) -> Document {
    match get(d, key) {
        Some(RawBsonRef::Document(x)) => Document::try_from(x).unwrap_or_default(),
        _ => Document::new(),
    }
}

pub(super) fn truthy(v: Option<RawBsonRef<'_>>) -> bool {
    match v {
        Some(RawBsonRef::Boolean(b)) => b,
        Some(v) => int(Some(v)).is_some_and(|i| i != 0),
        None => false,
    }
}

/// A command: its body and the documents of its sequences, merged as the server sees them.
pub(super) struct Command<'a> {
    pub(super) name: &'a str,
    pub(super) db: &'a str,
    pub(super) body: &'a RawDocument,
    pub(super) sequences: &'a [(&'a str, Vec<&'a RawDocument>)],
}

impl<'a> Command<'a> {
    /// The documents of array field `key`, from the body or a document sequence.
    pub(super) fn documents(&self, key: &str) -> Vec<&'a RawDocument> {
        if let Some((_, docs)) = self.sequences.iter().find(|(id, _)| *id == key) {
            return docs.clone();
        }
        match get(self.body, key) {
            Some(RawBsonRef::Array(a)) => a
                .into_iter()
                .flatten()
                .filter_map(|v| match v {
                    RawBsonRef::Document(d) => Some(d),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    pub(super) fn collection(&self) -> &'a str {
        match get(self.body, self.name) {
            Some(RawBsonRef::String(s)) => s,
            _ => "",
        }
    }

    pub(super) fn ns(&self) -> String {
        format!("{}.{}", self.db, self.collection())
    }
}
