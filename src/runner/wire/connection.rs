//! One worker's own connection to the server: opened with a `hello` handshake, then one command
//! at a time, its reply read into a buffer the connection keeps.

use std::io;

use mongodb::bson::spec::BinarySubtype;
use mongodb::bson::{Binary, RawBsonRef, RawDocument, rawdoc};
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use super::frame::{self, Extra};
use super::route::{Route, WirePath};
use super::scram::{self, Conversation, Credential};

/// Bytes read from the socket at once: a YCSB read's or a flights find's reply fits, so it is
/// one read (a larger one is read straight into the reply's buffer).
const READ_BUFFER: usize = 4 * 1024;
/// A message buffer grown past this by a large command or reply (a flights insert is about
/// 29 KB) is let go afterwards: hundreds of workers would otherwise each keep their largest.
const KEPT_BUFFER: usize = 16 * 1024;

pub struct Connection {
    stream: BufReader<TcpStream>,
    out: Vec<u8>,
    input: Vec<u8>,
    next_id: i32,
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
        let (id, server_first, _) = sasl_reply(self.command(&start, &db).await)?;
        let (client_final, expected) = conversation.client_final(credential, &server_first)?;
        let next = rawdoc! {
            "saslContinue": 1, "conversationId": id, "payload": binary(client_final),
        };
        let (_, server_final, mut done) = sasl_reply(self.command(&next, &db).await)?;
        scram::verify_server_final(&server_final, &expected)?;
        for _ in 0..2 {
            if done {
                return Ok(());
            }
            let empty = rawdoc! {
                "saslContinue": 1, "conversationId": id, "payload": binary(String::new()),
            };
            done = sasl_reply(self.command(&empty, &db).await)?.2;
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
        if self.out.len() > frame::MAX_MESSAGE {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "a command of {} bytes is larger than a message may be",
                    self.out.len()
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
        let length = frame::message_length(&len)?;
        self.input.clear();
        self.input.extend_from_slice(&len);
        self.input.resize(length, 0);
        self.stream.read_exact(&mut self.input[4..]).await?;
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

/// A SASL reply's conversation id, payload and `done`.
fn sasl_reply(reply: io::Result<&RawDocument>) -> Result<(i32, String, bool), String> {
    let reply = reply.map_err(|e| e.to_string())?;
    if !frame::reply_ok(reply) {
        return Err(reply.get_str("errmsg").unwrap_or("refused").to_owned());
    }
    let id = match reply.get("conversationId") {
        Ok(Some(RawBsonRef::Int32(id))) => id,
        Ok(Some(RawBsonRef::Int64(id))) => id as i32,
        _ => return Err("the reply has no conversationId".into()),
    };
    let payload = reply
        .get_binary("payload")
        .map_err(|_| "the reply has no payload".to_owned())?;
    let payload = String::from_utf8(payload.bytes.to_vec())
        .map_err(|_| "the reply's payload is not UTF-8".to_owned())?;
    Ok((id, payload, reply.get_bool("done").unwrap_or(false)))
}
