//! OP_MSG framing for commands a worker sends on its own connection: the command's own BSON
//! copied into the message with extra top-level fields (concerns, `$db`) appended, and the
//! reply's body read in place, without building a document on either side.

use std::io;

use mongodb::bson::{RawBsonRef, RawDocument};

pub const OP_MSG: i32 = 2013;
/// OP_MSG flag: a CRC-32C follows the sections.
const CHECKSUM_PRESENT: u32 = 1;
/// OP_MSG flag: more messages follow without a request (exhaust cursors; never asked for).
const MORE_TO_COME: u32 = 1 << 1;
/// Header (16 bytes), flag bits (4), section kind (1).
const BODY_AT: usize = 21;
/// MongoDB's `maxMessageSizeBytes`: the most any message is read or sent at, whatever a server
/// announces.
pub const MAX_MESSAGE: usize = 48_000_000;
/// What is read of the `hello` reply that opens a connection, before the server has said how
/// large its messages may be: a hello reply is a few hundred bytes, a large replica set's a
/// few thousand.
pub const HELLO_MAX_MESSAGE: usize = 1 << 20;

fn invalid(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

fn put_i32(out: &mut [u8], at: usize, v: i32) {
    out[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// A top-level field appended to a command as it is framed.
#[derive(Debug, Clone, Copy)]
pub enum Extra<'a> {
    Document(&'a str, &'a RawDocument),
    Str(&'a str, &'a str),
    Int64(&'a str, i64),
}

/// Writes into `out` (cleared first) an OP_MSG with request id `id` whose body is `body` followed
/// by `extras`.
pub fn encode(out: &mut Vec<u8>, id: i32, body: &RawDocument, extras: &[Extra<'_>]) {
    out.clear();
    out.extend_from_slice(&[0; 16]);
    out.extend_from_slice(&0u32.to_le_bytes());
    out.push(0);
    let bytes = body.as_bytes();
    // Its elements, without the terminating zero.
    out.extend_from_slice(&bytes[..bytes.len() - 1]);
    for extra in extras {
        match *extra {
            Extra::Document(key, doc) => {
                out.push(0x03);
                cstring(out, key);
                out.extend_from_slice(doc.as_bytes());
            }
            Extra::Str(key, value) => {
                out.push(0x02);
                cstring(out, key);
                out.extend_from_slice(&(value.len() as i32 + 1).to_le_bytes());
                out.extend_from_slice(value.as_bytes());
                out.push(0);
            }
            Extra::Int64(key, value) => {
                out.push(0x12);
                cstring(out, key);
                out.extend_from_slice(&value.to_le_bytes());
            }
        }
    }
    out.push(0);
    let body_len = (out.len() - BODY_AT) as i32;
    put_i32(out, BODY_AT, body_len);
    let len = out.len() as i32;
    put_i32(out, 0, len);
    put_i32(out, 4, id);
    put_i32(out, 12, OP_MSG);
}

fn cstring(out: &mut Vec<u8>, key: &str) {
    out.extend_from_slice(key.as_bytes());
    out.push(0);
}

/// The most a connection reads of one reply: what the server allows (its `hello`'s
/// `maxMessageSizeBytes`), or before its `hello`, [`HELLO_MAX_MESSAGE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageLimit {
    Hello,
    Server(usize),
}

impl MessageLimit {
    pub fn bytes(self) -> usize {
        match self {
            MessageLimit::Hello => HELLO_MAX_MESSAGE,
            MessageLimit::Server(bytes) => bytes,
        }
    }

    /// The limit the server of `hello` (its reply) sets: its `maxMessageSizeBytes`, at most
    /// [`MAX_MESSAGE`]; MongoDB's own when it says none.
    ///
    /// # Errors
    /// `maxMessageSizeBytes` is not a whole number, or too small for any reply.
    pub fn of_hello(hello: &RawDocument) -> io::Result<MessageLimit> {
        let announced = match hello.get("maxMessageSizeBytes") {
            Ok(None) => return Ok(MessageLimit::Server(MAX_MESSAGE)),
            Ok(Some(RawBsonRef::Int32(v))) => i64::from(v),
            Ok(Some(RawBsonRef::Int64(v))) => v,
            Ok(Some(RawBsonRef::Double(v))) if v.fract() == 0.0 && v.abs() < 1e15 => v as i64,
            _ => {
                return Err(invalid(
                    "hello.maxMessageSizeBytes is not a whole number of bytes",
                ));
            }
        };
        if announced < MIN_REPLY as i64 {
            return Err(invalid(format!(
                "hello.maxMessageSizeBytes {announced}: expected at least {MIN_REPLY} bytes, \
                 the size of an empty reply"
            )));
        }
        Ok(MessageLimit::Server(
            usize::try_from(announced).map_or(MAX_MESSAGE, |a| a.min(MAX_MESSAGE)),
        ))
    }
}

impl std::fmt::Display for MessageLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MessageLimit::Hello => write!(f, "{HELLO_MAX_MESSAGE} bytes, a hello reply's bound"),
            MessageLimit::Server(bytes) => {
                write!(f, "{bytes} bytes, the server's maxMessageSizeBytes")
            }
        }
    }
}

/// The smallest OP_MSG reply: header, flag bits, section kind and an empty document.
const MIN_REPLY: usize = BODY_AT + 5;

/// The length a message header announces, checked against the header's own size and `limit`.
pub fn message_length(header: &[u8; 4], limit: MessageLimit) -> io::Result<usize> {
    let length = i32::from_le_bytes(*header);
    if length < BODY_AT as i32 {
        return Err(invalid(format!("reply message length {length}")));
    }
    if length as usize > limit.bytes() {
        return Err(invalid(format!(
            "reply message length {length}, more than {limit}"
        )));
    }
    Ok(length as usize)
}

/// The body of the OP_MSG reply `msg` (the whole message, header included) to request `id`.
pub fn reply_body(msg: &[u8], id: i32) -> io::Result<&RawDocument> {
    let at = |i: usize| i32::from_le_bytes(msg[i..i + 4].try_into().expect("4 bytes"));
    if msg.len() < BODY_AT + 5 {
        return Err(invalid("reply shorter than an OP_MSG"));
    }
    if at(12) != OP_MSG {
        return Err(invalid(format!("reply opCode {}, expected OP_MSG", at(12))));
    }
    if at(8) != id {
        return Err(invalid(format!(
            "reply to request {}, expected {id}",
            at(8)
        )));
    }
    let flags = at(16) as u32;
    if flags & MORE_TO_COME != 0 {
        return Err(invalid("reply sets moreToCome, which was not asked for"));
    }
    if msg[20] != 0 {
        return Err(invalid(format!(
            "reply section kind {}, expected 0",
            msg[20]
        )));
    }
    let end = if flags & CHECKSUM_PRESENT != 0 {
        msg.len() - 4
    } else {
        msg.len()
    };
    let len = at(BODY_AT);
    // Checked as a signed length first: a negative one must not wrap around.
    if len < 5 || BODY_AT + len as usize > end {
        return Err(invalid(format!("reply body length {len}")));
    }
    let len = len as usize;
    RawDocument::from_bytes(&msg[BODY_AT..BODY_AT + len]).map_err(|e| invalid(e.to_string()))
}

/// Whether a reply says `ok: 1` (as a double, an integer or a boolean).
pub fn reply_ok(reply: &RawDocument) -> bool {
    match reply.get("ok") {
        Ok(Some(RawBsonRef::Double(v))) => v == 1.0,
        Ok(Some(RawBsonRef::Int32(v))) => v == 1,
        Ok(Some(RawBsonRef::Int64(v))) => v == 1,
        Ok(Some(RawBsonRef::Boolean(v))) => v,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mongodb::bson::{Document, doc, rawdoc};

    #[test]
    fn a_command_is_framed_with_its_extras_after_its_own_fields() {
        let body = rawdoc! {"find": "t", "filter": {"_id": 1}};
        let wc = rawdoc! {"w": 1};
        let mut out = Vec::new();
        encode(
            &mut out,
            7,
            &body,
            &[
                Extra::Document("writeConcern", &wc),
                Extra::Int64("txnNumber", 5),
                Extra::Str("$db", "d"),
            ],
        );
        let expected = rawdoc! {"find": "t", "filter": {"_id": 1}, "writeConcern": {"w": 1},
        "txnNumber": 5i64, "$db": "d"};
        let mut want = Vec::new();
        want.extend_from_slice(&((21 + expected.as_bytes().len()) as i32).to_le_bytes());
        want.extend_from_slice(&7i32.to_le_bytes());
        want.extend_from_slice(&0i32.to_le_bytes());
        want.extend_from_slice(&2013i32.to_le_bytes());
        want.extend_from_slice(&[0, 0, 0, 0, 0]);
        want.extend_from_slice(expected.as_bytes());
        assert_eq!(out, want);
    }

    fn reply(id: i32, flags: u32, body: &RawDocument, checksum: bool) -> Vec<u8> {
        let mut m = Vec::new();
        let len = 21 + body.as_bytes().len() + if checksum { 4 } else { 0 };
        m.extend_from_slice(&(len as i32).to_le_bytes());
        m.extend_from_slice(&99i32.to_le_bytes());
        m.extend_from_slice(&id.to_le_bytes());
        m.extend_from_slice(&2013i32.to_le_bytes());
        m.extend_from_slice(&flags.to_le_bytes());
        m.push(0);
        m.extend_from_slice(body.as_bytes());
        if checksum {
            m.extend_from_slice(&[1, 2, 3, 4]);
        }
        m
    }

    #[test]
    fn a_reply_body_is_read_in_place_with_or_without_a_checksum() {
        let body = rawdoc! {"ok": 1.0, "n": 3};
        for (flags, checksum) in [(0, false), (CHECKSUM_PRESENT, true)] {
            let msg = reply(5, flags, &body, checksum);
            let got = reply_body(&msg, 5).unwrap();
            assert_eq!(Document::try_from(got).unwrap(), doc! {"ok": 1.0, "n": 3});
        }
    }

    #[test]
    fn a_reply_to_another_request_or_of_another_kind_is_refused() {
        let body = rawdoc! {"ok": 1.0};
        let msg = reply(5, 0, &body, false);
        let e = reply_body(&msg, 6).unwrap_err().to_string();
        assert_eq!(e, "reply to request 5, expected 6");
        let e = reply_body(&reply(5, MORE_TO_COME, &body, false), 5)
            .unwrap_err()
            .to_string();
        assert_eq!(e, "reply sets moreToCome, which was not asked for");
        let mut op_reply = msg.clone();
        op_reply[12..16].copy_from_slice(&1i32.to_le_bytes());
        let e = reply_body(&op_reply, 5).unwrap_err().to_string();
        assert_eq!(e, "reply opCode 1, expected OP_MSG");
        let mut cut = msg.clone();
        cut.truncate(cut.len() - 2);
        let e = reply_body(&cut, 5).unwrap_err().to_string();
        assert!(e.starts_with("reply body length "), "{e}");
        // A negative body length (found by fuzzing) is refused, not wrapped around.
        let mut negative = msg;
        negative[21..25].copy_from_slice(&(-1i32).to_le_bytes());
        let e = reply_body(&negative, 5).unwrap_err().to_string();
        assert_eq!(e, "reply body length -1");
    }

    #[test]
    fn message_lengths_outside_an_op_msg_s_bounds_are_refused() {
        let server = MessageLimit::Server(MAX_MESSAGE);
        assert_eq!(message_length(&26i32.to_le_bytes(), server).unwrap(), 26);
        for bad in [0i32, 20, -1] {
            let e = message_length(&bad.to_le_bytes(), server).unwrap_err();
            assert_eq!(e.to_string(), format!("reply message length {bad}"));
        }
        let e = message_length(&48_000_001i32.to_le_bytes(), server).unwrap_err();
        assert_eq!(
            e.to_string(),
            "reply message length 48000001, more than 48000000 bytes, the server's maxMessageSizeBytes"
        );
        let e = message_length(&(2i32 << 20).to_le_bytes(), MessageLimit::Hello).unwrap_err();
        assert_eq!(
            e.to_string(),
            "reply message length 2097152, more than 1048576 bytes, a hello reply's bound"
        );
    }

    #[test]
    fn a_server_s_message_limit_is_its_max_message_size_bytes_up_to_48_mb() {
        let limit = |hello: &RawDocument| MessageLimit::of_hello(hello).map_err(|e| e.to_string());
        assert_eq!(
            limit(&rawdoc! {"maxMessageSizeBytes": 4096}),
            Ok(MessageLimit::Server(4096))
        );
        assert_eq!(
            limit(&rawdoc! {"maxMessageSizeBytes": 2_000_000i64}),
            Ok(MessageLimit::Server(2_000_000))
        );
        assert_eq!(
            limit(&rawdoc! {"maxMessageSizeBytes": 1e6}),
            Ok(MessageLimit::Server(1_000_000))
        );
        assert_eq!(
            limit(&rawdoc! {"maxMessageSizeBytes": i64::MAX}),
            Ok(MessageLimit::Server(MAX_MESSAGE))
        );
        assert_eq!(
            limit(&rawdoc! {"ok": 1}),
            Ok(MessageLimit::Server(MAX_MESSAGE))
        );
        assert_eq!(
            limit(&rawdoc! {"maxMessageSizeBytes": -1}),
            Err("hello.maxMessageSizeBytes -1: expected at least 26 bytes, the size of an empty reply".into())
        );
        for bad in [
            rawdoc! {"maxMessageSizeBytes": "48000000"},
            rawdoc! {"maxMessageSizeBytes": 1.5},
        ] {
            assert_eq!(
                limit(&bad),
                Err("hello.maxMessageSizeBytes is not a whole number of bytes".into())
            );
        }
    }

    #[test]
    fn ok_is_read_in_each_type_a_server_uses() {
        assert!(reply_ok(&rawdoc! {"ok": 1.0}));
        assert!(reply_ok(&rawdoc! {"ok": 1}));
        assert!(reply_ok(&rawdoc! {"ok": 1i64}));
        assert!(reply_ok(&rawdoc! {"ok": true}));
        assert!(!reply_ok(&rawdoc! {"ok": 0.0, "errmsg": "no"}));
        assert!(!reply_ok(&rawdoc! {"n": 1}));
    }
}
