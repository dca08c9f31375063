//! A TCP proxy in front of a MongoDB-wire server that holds every reply for a fixed delay
//! before passing it on: a server exactly that much slower per operation, for tests that
//! check a comparison detects a known difference (and that a zero delay is not detected).
//! It frames the server's replies by the wire protocol's message length, so the delay is per
//! reply, however the bytes arrive. Runs on its own thread and stops when dropped.

use std::net::{SocketAddr, TcpListener as StdListener};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A running proxy.
pub struct DelayProxy {
    /// `mongodb://127.0.0.1:PORT/` plus the path and options of the upstream URI.
    pub uri: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl DelayProxy {
    /// Proxies `upstream_uri` (a `mongodb://127.0.0.1:PORT/...` URI) with `delay` per reply.
    pub fn start(upstream_uri: &str, delay: Duration) -> DelayProxy {
        let rest = upstream_uri
            .strip_prefix("mongodb://")
            .expect("a mongodb:// URI");
        let (host, tail) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let upstream: SocketAddr = host.parse().expect("an IP:port upstream");
        let listener = StdListener::bind("127.0.0.1:0").expect("a free loopback port");
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let listener = TcpListener::from_std(listener).unwrap();
                tokio::select! {
                    _ = stopped => {}
                    _ = accept(listener, upstream, delay) => {}
                }
            });
            runtime.shutdown_background();
        });
        DelayProxy {
            uri: format!("mongodb://127.0.0.1:{port}{tail}"),
            stop: Some(stop),
            thread: Some(thread),
        }
    }
}

impl Drop for DelayProxy {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn accept(listener: TcpListener, upstream: SocketAddr, delay: Duration) {
    loop {
        let Ok((client, _)) = listener.accept().await else {
            continue;
        };
        tokio::spawn(async move {
            let Ok(server) = TcpStream::connect(upstream).await else {
                return;
            };
            let _ = client.set_nodelay(true);
            let _ = server.set_nodelay(true);
            let (mut client_read, mut client_write) = client.into_split();
            let (mut server_read, mut server_write) = server.into_split();
            let requests = tokio::io::copy(&mut client_read, &mut server_write);
            let replies = async move {
                loop {
                    let mut header = [0u8; 4];
                    server_read.read_exact(&mut header).await?;
                    let length = i32::from_le_bytes(header).max(4) as usize;
                    let mut message = vec![0u8; length];
                    message[..4].copy_from_slice(&header);
                    server_read.read_exact(&mut message[4..]).await?;
                    if !delay.is_zero() {
                        tokio::time::sleep(delay).await;
                    }
                    client_write.write_all(&message).await?;
                }
                #[allow(unreachable_code)]
                Ok::<(), std::io::Error>(())
            };
            // Either side closing ends the connection (dropping both halves closes the other).
            tokio::select! {
                _ = requests => {}
                _ = replies => {}
            }
        });
    }
}
