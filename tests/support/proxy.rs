//! TCP proxies in front of a MongoDB-wire server that hold every reply before passing it on,
//! for tests that check a comparison detects a known difference (and that a zero delay is not
//! detected): [`DelayProxy`] for a fixed delay (a server exactly that much slower per
//! operation), [`ProportionalProxy`] for a delay proportional to each reply's service time (a
//! server that fraction slower, whatever the operation). Both frame messages by the wire
//! protocol's length, so a delay is per reply however the bytes arrive, and stop when dropped.

use std::net::{SocketAddr, TcpListener as StdListener};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The upstream address of `upstream_uri` (a `mongodb://127.0.0.1:PORT/...` URI), a
/// non-blocking listener on a free loopback port, and the URI that reaches the upstream through
/// it (the upstream's path and options kept).
fn listen(upstream_uri: &str) -> (SocketAddr, StdListener, String) {
    let rest = upstream_uri
        .strip_prefix("mongodb://")
        .expect("a mongodb:// URI");
    let (host, tail) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let upstream: SocketAddr = host.parse().expect("an IP:port upstream");
    let listener = StdListener::bind("127.0.0.1:0").expect("a free loopback port");
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    (
        upstream,
        listener,
        format!("mongodb://127.0.0.1:{port}{tail}"),
    )
}

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
        let (upstream, listener, uri) = listen(upstream_uri);
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
            uri,
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

/// A proxy that holds each reply for `fraction` of its service time (from the request's last
/// byte forwarded to the reply's last byte read), asleep: no CPU is spent on the delay, so
/// the proxied server is exactly that fraction slower per operation while one request is in
/// flight per connection, as the runner's workers send. One thread per connection, each with
/// a 1 µs timer slack, so that sleeps of tens of microseconds are kept.
pub struct ProportionalProxy {
    /// `mongodb://127.0.0.1:PORT/` plus the path and options of the upstream URI.
    pub uri: String,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ProportionalProxy {
    /// Proxies `upstream_uri` (a `mongodb://127.0.0.1:PORT/...` URI), each reply held for
    /// `fraction` × its service time.
    pub fn start(upstream_uri: &str, fraction: f64) -> ProportionalProxy {
        use std::sync::atomic::{AtomicBool, Ordering};
        let (upstream, listener, uri) = listen(upstream_uri);
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let thread = std::thread::spawn(move || {
            while !stopping.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((client, _)) => {
                        std::thread::spawn(move || relay_proportional(client, upstream, fraction));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        ProportionalProxy {
            uri,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for ProportionalProxy {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// One wire message from `from`, or `None` when it closed.
fn read_message(from: &mut std::net::TcpStream) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut header = [0u8; 4];
    from.read_exact(&mut header).ok()?;
    let length = i32::from_le_bytes(header).max(4) as usize;
    let mut message = vec![0u8; length];
    message[..4].copy_from_slice(&header);
    from.read_exact(&mut message[4..]).ok()?;
    Some(message)
}

/// Relays one connection request by reply: each reply is held for `fraction` of the time
/// between its request's forwarding and its own arrival. Ends when either side closes.
fn relay_proportional(mut client: std::net::TcpStream, upstream: SocketAddr, fraction: f64) {
    use std::io::Write;
    // SAFETY: prctl(PR_SET_TIMERSLACK) only changes this thread's timer slack.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1u64, 0u64, 0u64, 0u64);
    }
    let Ok(mut server) = std::net::TcpStream::connect(upstream) else {
        return;
    };
    let _ = client.set_nonblocking(false);
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    // One request, its reply (a request with moreToCome has none; exhaust cursors are not used).
    while let Some(request) = read_message(&mut client) {
        let sent = std::time::Instant::now();
        if server.write_all(&request).is_err() {
            return;
        }
        let Some(reply) = read_message(&mut server) else {
            return;
        };
        std::thread::sleep(sent.elapsed().mul_f64(fraction));
        if client.write_all(&reply).is_err() {
            return;
        }
    }
}
