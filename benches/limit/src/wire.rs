//! The MongoDB wire protocol as far as the instruments need it: message framing, OP_MSG
//! (sections of kind 0 and 1), the legacy OP_QUERY handshake and its OP_REPLY.

use std::io;

use bson::{RawArrayBuf, RawDocument, RawDocumentBuf};
use tokio::io::{AsyncRead, AsyncReadExt};

pub const OP_REPLY: i32 = 1;
pub const OP_QUERY: i32 = 2004;
pub const OP_COMPRESSED: i32 = 2012;
pub const OP_MSG: i32 = 2013;

/// OP_MSG flag: a CRC-32C follows the sections.
pub const CHECKSUM_PRESENT: u32 = 1;
/// OP_MSG flag: the sender expects no reply.
pub const MORE_TO_COME: u32 = 1 << 1;

/// Largest message accepted (MongoDB's `maxMessageSizeBytes`).
pub const MAX_MESSAGE: usize = 48_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub length: usize,
    pub request_id: i32,
    pub response_to: i32,
    pub op_code: i32,
}

fn i32_at(b: &[u8], at: usize) -> i32 {
    i32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn invalid(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

/// Reads one whole message into `buf` (header included); `None` at a clean end of stream.
pub async fn read_message<R: AsyncRead + Unpin>(
    reader: &mut R,
    buf: &mut Vec<u8>,
) -> io::Result<Option<Header>> {
    let mut len = [0u8; 4];
    match reader.read_exact(&mut len).await {
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let length = i32::from_le_bytes(len);
    if length < 16 || length as usize > MAX_MESSAGE {
        return Err(invalid(format!("message length {length}")));
    }
    let length = length as usize;
    buf.clear();
    buf.extend_from_slice(&len);
    buf.resize(length, 0);
    reader.read_exact(&mut buf[4..]).await?;
    Ok(Some(Header {
        length,
        request_id: i32_at(buf, 4),
        response_to: i32_at(buf, 8),
        op_code: i32_at(buf, 12),
    }))
}

/// A command received in an OP_MSG: its body with the document sequences (kind 1 sections)
/// kept apart, as the server reads them.
pub struct MsgCommand<'a> {
    pub flags: u32,
    pub body: &'a RawDocument,
    pub sequences: Vec<(&'a str, Vec<&'a RawDocument>)>,
}

fn cstring(b: &[u8]) -> io::Result<(&str, usize)> {
    let end = b
        .iter()
        .position(|&c| c == 0)
        .ok_or_else(|| invalid("unterminated cstring"))?;
    let s = std::str::from_utf8(&b[..end]).map_err(|_| invalid("cstring is not UTF-8"))?;
    Ok((s, end + 1))
}

fn document_at(b: &[u8]) -> io::Result<(&RawDocument, usize)> {
    if b.len() < 5 {
        return Err(invalid("truncated document"));
    }
    let len = i32_at(b, 0);
    if len < 5 || len as usize > b.len() {
        return Err(invalid("document length"));
    }
    let len = len as usize;
    let doc = RawDocument::from_bytes(&b[..len]).map_err(|e| invalid(e.to_string()))?;
    Ok((doc, len))
}

/// Parses an OP_MSG (`msg` is the whole message, header included).
pub fn parse_msg(msg: &[u8]) -> io::Result<MsgCommand<'_>> {
    if msg.len() < 21 {
        return Err(invalid("OP_MSG too short"));
    }
    let flags = u32::from_le_bytes(msg[16..20].try_into().expect("4 bytes"));
    let end = if flags & CHECKSUM_PRESENT != 0 {
        msg.len() - 4
    } else {
        msg.len()
    };
    let mut at = 20;
    let mut body = None;
    let mut sequences = Vec::new();
    while at < end {
        let kind = msg[at];
        at += 1;
        match kind {
            0 => {
                let (doc, len) = document_at(&msg[at..end])?;
                body = Some(doc);
                at += len;
            }
            1 => {
                let size = i32_at(msg, at) as usize;
                if size < 5 || at + size > end {
                    return Err(invalid("document sequence size"));
                }
                let section = &msg[at + 4..at + size];
                let (id, mut pos) = cstring(section)?;
                let mut docs = Vec::new();
                while pos < section.len() {
                    let (doc, len) = document_at(&section[pos..])?;
                    docs.push(doc);
                    pos += len;
                }
                sequences.push((id, docs));
                at += size;
            }
            other => return Err(invalid(format!("OP_MSG section kind {other}"))),
        }
    }
    let body = body.ok_or_else(|| invalid("OP_MSG without a body"))?;
    Ok(MsgCommand {
        flags,
        body,
        sequences,
    })
}

/// A legacy OP_QUERY: the namespace and the query document (a command on `db.$cmd`).
pub fn parse_query(msg: &[u8]) -> io::Result<(&str, &RawDocument)> {
    if msg.len() < 20 {
        return Err(invalid("OP_QUERY too short"));
    }
    let (ns, len) = cstring(&msg[20..])?;
    let at = 20 + len + 8; // numberToSkip, numberToReturn
    if at > msg.len() {
        return Err(invalid("OP_QUERY too short"));
    }
    let (query, _) = document_at(&msg[at..])?;
    Ok((ns, query))
}

fn header(out: &mut Vec<u8>, request_id: i32, response_to: i32, op_code: i32) {
    out.extend_from_slice(&0i32.to_le_bytes()); // length, patched by `finish`
    out.extend_from_slice(&request_id.to_le_bytes());
    out.extend_from_slice(&response_to.to_le_bytes());
    out.extend_from_slice(&op_code.to_le_bytes());
}

fn finish(out: &mut [u8]) {
    let len = out.len() as i32;
    out[..4].copy_from_slice(&len.to_le_bytes());
}

/// Appends an OP_MSG holding `body` (one kind 0 section) to `out`.
pub fn encode_msg(out: &mut Vec<u8>, request_id: i32, response_to: i32, body: &[u8]) {
    let start = out.len();
    header(out, request_id, response_to, OP_MSG);
    out.extend_from_slice(&0u32.to_le_bytes());
    out.push(0);
    out.extend_from_slice(body);
    finish(&mut out[start..]);
}

/// Appends an OP_REPLY holding one document to `out`.
pub fn encode_reply(out: &mut Vec<u8>, request_id: i32, response_to: i32, doc: &[u8]) {
    let start = out.len();
    header(out, request_id, response_to, OP_REPLY);
    out.extend_from_slice(&0i32.to_le_bytes()); // responseFlags
    out.extend_from_slice(&0i64.to_le_bytes()); // cursorID
    out.extend_from_slice(&0i32.to_le_bytes()); // startingFrom
    out.extend_from_slice(&1i32.to_le_bytes()); // numberReturned
    out.extend_from_slice(doc);
    finish(&mut out[start..]);
}

/// Appends an OP_QUERY of `command` on `db.$cmd` to `out`.
pub fn encode_query(out: &mut Vec<u8>, request_id: i32, db: &str, command: &[u8]) {
    let start = out.len();
    header(out, request_id, 0, OP_QUERY);
    out.extend_from_slice(&0i32.to_le_bytes()); // flags
    out.extend_from_slice(db.as_bytes());
    out.extend_from_slice(b".$cmd\0");
    out.extend_from_slice(&0i32.to_le_bytes()); // numberToSkip
    out.extend_from_slice(&(-1i32).to_le_bytes()); // numberToReturn
    out.extend_from_slice(command);
    finish(&mut out[start..]);
}

/// The document of a reply message (OP_MSG or OP_REPLY) in `msg`.
pub fn reply_document(msg: &[u8]) -> io::Result<RawDocumentBuf> {
    let op_code = i32_at(msg, 12);
    let doc = match op_code {
        OP_MSG => parse_msg(msg)?.body,
        OP_REPLY if msg.len() >= 36 => document_at(&msg[36..])?.0,
        other => return Err(invalid(format!("reply op code {other}"))),
    };
    Ok(doc.to_owned())
}

/// A raw array of documents.
pub fn array_of<'a>(docs: impl IntoIterator<Item = &'a RawDocument>) -> RawArrayBuf {
    let mut array = RawArrayBuf::new();
    for d in docs {
        array.push(d.to_owned());
    }
    array
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::rawdoc;

    #[test]
    fn msg_round_trip_with_a_document_sequence() {
        let body = rawdoc! {"insert": "t", "$db": "d"};
        let doc = rawdoc! {"_id": 1};
        let mut msg = Vec::new();
        encode_msg(&mut msg, 7, 0, body.as_bytes());
        // Splice a kind 1 section in by hand.
        let mut section = vec![1u8];
        let ident = b"documents\0";
        let size = 4 + ident.len() + doc.as_bytes().len();
        section.extend_from_slice(&(size as i32).to_le_bytes());
        section.extend_from_slice(ident);
        section.extend_from_slice(doc.as_bytes());
        msg.extend_from_slice(&section);
        let len = msg.len() as i32;
        msg[..4].copy_from_slice(&len.to_le_bytes());
        let parsed = parse_msg(&msg).unwrap();
        assert_eq!(parsed.body.to_owned(), body);
        assert_eq!(parsed.sequences.len(), 1);
        assert_eq!(parsed.sequences[0].0, "documents");
        assert_eq!(parsed.sequences[0].1[0].to_owned(), doc);
    }

    #[test]
    fn query_round_trip() {
        let cmd = rawdoc! {"isMaster": 1};
        let mut msg = Vec::new();
        encode_query(&mut msg, 3, "admin", cmd.as_bytes());
        let (ns, query) = parse_query(&msg).unwrap();
        assert_eq!(ns, "admin.$cmd");
        assert_eq!(query.to_owned(), cmd);
        let mut reply = Vec::new();
        encode_reply(&mut reply, 1, 3, cmd.as_bytes());
        assert_eq!(reply_document(&reply).unwrap(), cmd);
    }
}
