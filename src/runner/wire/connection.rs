//! One worker's own connection to the server: opened with a `hello` handshake, then one command
//! at a time, its reply read into a buffer the connection keeps.

use std::io;

use mongodb::bson::spec::BinarySubtype;
use mongodb::bson::{Binary, RawBsonRef, RawDocument, rawdoc};
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use super::frame::{self, Extra, MessageLimit};
use super::route::{Route, WirePath};
use super::scram::{self, Conversation, Credential};

/// Bytes read from the socket at once: a YCSB read's or a flights find's reply fits, so it is
/// one read (a larger one is read straight into the reply's buffer).
const READ_BUFFER: usize = 4 * 1024;
/// A message buffer grown past this by a large command or reply (a flights insert is about
/// 29 KB) is let go afterwards: hundreds of workers would otherwise each keep their largest.
const KEPT_BUFFER: usize = 16 * 1024;
/// A reply's buffer grows by at most this much ahead of the bytes that arrived: a header may
/// announce up to the server's limit, and memory follows what is sent, not what is announced.
const REPLY_CHUNK: usize = 1 << 20;

pub struct Connection {
    stream: BufReader<TcpStream>,
    out: Vec<u8>,
    input: Vec<u8>,
    next_id: i32,
    /// The most read of a reply, or sent: the server's `maxMessageSizeBytes` once its `hello`
    /// said it.
    limit: MessageLimit,
    /// A request was sent and its reply not read to the end (the caller stopped waiting): what
    /// comes next on the stream belongs to it, so the connection cannot be used again.
    pending: bool,
}

impl Connection {
    /// Connects to `route` within its timeout, says hello, as a driver does first, and logs in
    /// as the route's user.
    pub async fn open(route: &Route) -> io::Result<Connection> {
        tokio::time::timeout(route.timeout, Self::open_unbounded(route))
            .await
            .map_err(|_| {
                io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "connecting to {} took longer than {:?}",
                        route.address, route.timeout
                    ),
                )
            })?
    }

    async fn open_unbounded(route: &Route) -> io::Result<Connection> {
        let stream = TcpStream::connect(&route.address).await?;
        stream.set_nodelay(true)?;
        let mut conn = Connection {
            stream: BufReader::with_capacity(READ_BUFFER, stream),
            out: Vec::with_capacity(1024),
            input: Vec::with_capacity(1024),
            next_id: 0,
            limit: MessageLimit::Hello,
            pending: false,
        };
        let hello = rawdoc! {
            "hello": 1,
            "client": {
                "application": {"name": route.app_name.as_str()},
                "driver": {"name": "mongobench", "version": env!("CARGO_PKG_VERSION")},
                "os": {"type": std::env::consts::OS},
            },
        };
        let reply = conn.command(&hello, &[Extra::Str("$db", "admin")]).await?;
        if !frame::reply_ok(reply) {
            return Err(io::Error::other(format!(
                "{} refused hello: {}",
                route.address,
                reply.get_str("errmsg").unwrap_or("no message")
            )));
        }
        conn.limit = MessageLimit::of_hello(reply)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", route.address)))?;
        if let Some(credential) = &route.credential {
            conn.log_in(credential).await.map_err(|e| {
                io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!(
                        "logging in as {} on {} with {}: {e}",
                        credential.user,
                        credential.source,
                        scram::MECHANISM
                    ),
                )
            })?;
        }
        Ok(conn)
    }

    /// The SCRAM-SHA-256 conversation: saslStart, one saslContinue with the proof, and empty
    /// ones until the server says it is done.
    async fn log_in(&mut self, credential: &Credential) -> Result<(), String> {
        let conversation = Conversation::start(&credential.user, &Conversation::random_nonce());
        let db = [Extra::Str("$db", &credential.source)];
        let binary = |text: String| Binary {
            subtype: BinarySubtype::Generic,
            bytes: text.into_bytes(),
        };
        let start = rawdoc! {
            "saslStart": 1,
            "mechanism": scram::MECHANISM,
            "payload": binary(conversation.client_first()),
            "autoAuthorize": 1,
            "options": {"skipEmptyExchange": true},
        };
        let (id, server_first, _) = sasl_reply(self.command(&start, &db).await, None)?;
        let (client_final, expected) = conversation.client_final(credential, &server_first)?;
        let next = rawdoc! {
            "saslContinue": 1, "conversationId": id, "payload": binary(client_final),
        };
        let (_, server_final, mut done) = sasl_reply(self.command(&next, &db).await, Some(id))?;
        scram::verify_server_final(&server_final, &expected)?;
        for _ in 0..2 {
            if done {
                return Ok(());
            }
            let empty = rawdoc! {
                "saslContinue": 1, "conversationId": id, "payload": binary(String::new()),
            };
            done = sasl_reply(self.command(&empty, &db).await, Some(id))?.2;
        }
        if done {
            Ok(())
        } else {
            Err("the server did not end the conversation".into())
        }
    }

    /// False once a request was abandoned before its reply was read.
    pub fn usable(&self) -> bool {
        !self.pending
    }

    /// Sends `body` with `extras` appended (`$db` among them), and returns the reply's body.
    pub async fn command(
        &mut self,
        body: &RawDocument,
        extras: &[Extra<'_>],
    ) -> io::Result<&RawDocument> {
        self.next_id = self.next_id.wrapping_add(1);
        let id = self.next_id;
        frame::encode(&mut self.out, id, body, extras);
        if self.out.len() > self.limit.bytes() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "a command of {} bytes, more than {}",
                    self.out.len(),
                    self.limit
                ),
            ));
        }
        self.pending = true;
        self.stream.get_mut().write_all(&self.out).await?;
        if self.out.capacity() > KEPT_BUFFER {
            self.out = Vec::new();
        }
        if self.input.capacity() > KEPT_BUFFER {
            self.input = Vec::new();
        }
        let mut len = [0u8; 4];
        self.stream.read_exact(&mut len).await?;
        let length = frame::message_length(&len, self.limit)?;
        self.input.clear();
        self.input.extend_from_slice(&len);
        while self.input.len() < length {
            let filled = self.input.len();
            self.input.resize(length.min(filled + REPLY_CHUNK), 0);
            self.stream.read_exact(&mut self.input[filled..]).await?;
        }
        self.pending = false;
        frame::reply_body(&self.input, id)
    }
}

/// `path`, once one connection of its own has been opened (and logged in): a deployment it
/// cannot speak to after all (a user with SCRAM-SHA-1 only, a proxy in the way) keeps the
/// driver, which says why.
pub async fn probe(path: WirePath) -> WirePath {
    let WirePath::Direct(route) = &path else {
        return path;
    };
    match Connection::open(route).await {
        Ok(_) => path,
        Err(e) => WirePath::Driver(format!("an own connection failed: {e}")),
    }
}

/// A SASL reply's conversation id, payload and `done`; after `saslStart`, the id must be the
/// `conversation` it started.
pub fn sasl_reply(
    reply: io::Result<&RawDocument>,
    conversation: Option<i32>,
) -> Result<(i32, String, bool), String> {
    let reply = reply.map_err(|e| e.to_string())?;
    if !frame::reply_ok(reply) {
        return Err(reply.get_str("errmsg").unwrap_or("refused").to_owned());
    }
    let id = match reply.get("conversationId") {
        Ok(Some(RawBsonRef::Int32(id))) => i64::from(id),
        Ok(Some(RawBsonRef::Int64(id))) => id,
        _ => return Err("the reply has no conversationId".into()),
    };
    let id = match (i32::try_from(id), conversation) {
        (Ok(id), None) => id,
        (Ok(id), Some(started)) if id == started => id,
        (_, Some(started)) => {
            return Err(format!(
                "the reply's conversationId {id} is not the conversation's ({started})"
            ));
        }
        (Err(_), None) => return Err(format!("the reply's conversationId {id} is out of range")),
    };
    let payload = reply
        .get_binary("payload")
        .map_err(|_| "the reply has no payload".to_owned())?;
    let payload = String::from_utf8(payload.bytes.to_vec())
        .map_err(|_| "the reply's payload is not UTF-8".to_owned())?;
    Ok((id, payload, reply.get_bool("done").unwrap_or(false)))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use mongodb::bson::{RawDocumentBuf, rawdoc};
    use tokio::net::TcpListener;

    use super::*;

    fn binary(text: &str) -> Binary {
        Binary {
            subtype: BinarySubtype::Generic,
            bytes: text.as_bytes().to_vec(),
        }
    }

    #[test]
    fn a_sasl_reply_of_another_conversation_is_refused() {
        let reply = |id: mongodb::bson::RawBson| {
            let mut d = rawdoc! {"ok": 1, "payload": binary("v=x"), "done": true};
            d.append("conversationId", id);
            d
        };
        let one = reply(mongodb::bson::RawBson::Int32(1));
        assert_eq!(sasl_reply(Ok(&one), None), Ok((1, "v=x".to_owned(), true)));
        assert_eq!(
            sasl_reply(Ok(&one), Some(1)),
            Ok((1, "v=x".to_owned(), true))
        );
        let seven = reply(mongodb::bson::RawBson::Int64(7));
        assert_eq!(
            sasl_reply(Ok(&seven), Some(1)),
            Err("the reply's conversationId 7 is not the conversation's (1)".to_owned())
        );
        let huge = reply(mongodb::bson::RawBson::Int64(1 << 40));
        assert_eq!(
            sasl_reply(Ok(&huge), Some(0)),
            Err("the reply's conversationId 1099511627776 is not the conversation's (0)".into())
        );
        assert_eq!(
            sasl_reply(Ok(&huge), None),
            Err("the reply's conversationId 1099511627776 is out of range".into())
        );
        let none = rawdoc! {"ok": 1, "payload": binary("")};
        assert_eq!(
            sasl_reply(Ok(&none), Some(1)),
            Err("the reply has no conversationId".into())
        );
    }

    /// An OP_MSG reply to request `to` with `body`, announcing `announced` bytes (its true
    /// length when `None`).
    fn reply(to: i32, body: &RawDocument, announced: Option<i32>) -> Vec<u8> {
        let len = 21 + body.as_bytes().len();
        let mut m = Vec::with_capacity(len);
        m.extend_from_slice(&announced.unwrap_or(len as i32).to_le_bytes());
        m.extend_from_slice(&1i32.to_le_bytes());
        m.extend_from_slice(&to.to_le_bytes());
        m.extend_from_slice(&frame::OP_MSG.to_le_bytes());
        m.extend_from_slice(&[0; 5]);
        m.extend_from_slice(body.as_bytes());
        m
    }

    /// A server speaking from a script, as no real one will on demand: for each request it
    /// reads, the next reply of `script` (what to answer, and how long the header says it is).
    async fn scripted(script: Vec<(RawDocumentBuf, Option<i32>)>) -> Arc<Route> {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap().to_string();
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            for (body, announced) in script {
                let mut header = [0u8; 16];
                socket.read_exact(&mut header).await.unwrap();
                let len = i32::from_le_bytes(header[..4].try_into().unwrap()) as usize;
                let mut rest = vec![0u8; len - 16];
                socket.read_exact(&mut rest).await.unwrap();
                let id = i32::from_le_bytes(header[4..8].try_into().unwrap());
                socket
                    .write_all(&reply(id, &body, announced))
                    .await
                    .unwrap();
            }
            // Holds the socket open: a client waiting for announced bytes waits.
            tokio::time::sleep(Duration::from_secs(30)).await;
        });
        Arc::new(Route {
            address,
            timeout: Duration::from_secs(5),
            app_name: "test".into(),
            credential: None,
            primary: false,
            retryable_writes: false,
        })
    }

    fn hello(max: i32) -> RawDocumentBuf {
        rawdoc! {"ok": 1, "isWritablePrimary": true, "maxWireVersion": 21,
        "maxMessageSizeBytes": max}
    }

    #[tokio::test]
    async fn a_reply_longer_than_the_server_s_max_message_size_bytes_is_refused_at_once() {
        let route = scripted(vec![(hello(4096), None), (rawdoc! {"ok": 1}, Some(8192))]).await;
        let mut conn = Connection::open(&route).await.unwrap();
        let ping = rawdoc! {"ping": 1};
        let outcome = tokio::time::timeout(
            Duration::from_secs(5),
            conn.command(&ping, &[Extra::Str("$db", "admin")]),
        )
        .await
        .expect("refused from the header, not waited for");
        assert_eq!(
            outcome.unwrap_err().to_string(),
            "reply message length 8192, more than 4096 bytes, the server's maxMessageSizeBytes"
        );
    }

    #[tokio::test]
    async fn a_hello_with_a_max_message_size_no_reply_fits_is_refused_naming_it() {
        let route = scripted(vec![(hello(-5), None)]).await;
        let e = Connection::open(&route).await.err().unwrap().to_string();
        assert_eq!(
            e,
            format!(
                "{}: hello.maxMessageSizeBytes -5: expected at least 26 bytes, the size of an \
                 empty reply",
                route.address
            )
        );
    }

    #[tokio::test]
    async fn a_reply_larger_than_a_read_chunk_is_read_whole() {
        let big = rawdoc! {"ok": 1, "blob": Binary {
            subtype: BinarySubtype::Generic,
            bytes: vec![7u8; 3 * REPLY_CHUNK + 5],
        }};
        let route = scripted(vec![(hello(48_000_000), None), (big.clone(), None)]).await;
        let mut conn = Connection::open(&route).await.unwrap();
        let ping = rawdoc! {"ping": 1};
        let got = conn
            .command(&ping, &[Extra::Str("$db", "admin")])
            .await
            .unwrap();
        assert_eq!(got.as_bytes(), big.as_bytes());
    }
}
