//! The connection: one frame out and one whole reply in, undecoded; and single commands with
//! decoded, checked replies for setup.

use bson::{Bson, Document};
use mongobench_limit::wire;
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use crate::frames::frame;

pub(crate) async fn roundtrip(
    write: &mut tokio::net::tcp::OwnedWriteHalf,
    read: &mut BufReader<tokio::net::tcp::OwnedReadHalf>,
    frame: &[u8],
    buf: &mut Vec<u8>,
) -> std::io::Result<()> {
    write.write_all(frame).await?;
    let mut len = [0u8; 4];
    read.read_exact(&mut len).await?;
    let n = i32::from_le_bytes(len) as usize;
    if !(16..=wire::MAX_MESSAGE).contains(&n) {
        return Err(std::io::Error::other(format!("reply length {n}")));
    }
    buf.clear();
    buf.extend_from_slice(&len);
    buf.resize(n, 0);
    read.read_exact(&mut buf[4..]).await?;
    Ok(())
}

pub(crate) async fn connect(
    addr: &str,
) -> std::io::Result<(
    BufReader<tokio::net::tcp::OwnedReadHalf>,
    tokio::net::tcp::OwnedWriteHalf,
)> {
    let stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let (r, w) = stream.into_split();
    Ok((BufReader::with_capacity(64 * 1024, r), w))
}

/// Sends one command and decodes its reply (setup and checks only).
pub(crate) async fn command(addr: &str, db: &str, body: Document) -> Result<Document, String> {
    let f = frame("command", db, body);
    let (mut r, mut w) = connect(addr).await.map_err(|e| format!("{addr}: {e}"))?;
    let mut buf = Vec::new();
    roundtrip(&mut w, &mut r, &f.bytes, &mut buf)
        .await
        .map_err(|e| e.to_string())?;
    let reply = wire::reply_document(&buf).map_err(|e| e.to_string())?;
    Document::try_from(reply.as_ref()).map_err(|e| e.to_string())
}

pub(crate) fn checked(reply: &Document, what: &str) -> Result<(), String> {
    let ok = reply.get("ok").and_then(Bson::as_f64).unwrap_or(0.0) == 1.0;
    if !ok || reply.contains_key("writeErrors") {
        return Err(format!("{what}: {reply}"));
    }
    Ok(())
}
