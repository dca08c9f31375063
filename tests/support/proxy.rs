//! TCP proxies. In front of a MongoDB-wire server, two that hold every reply before passing it
//! on, for tests that check a comparison detects a known difference (and that a zero delay is
//! not detected): [`DelayProxy`] for a fixed delay (a server exactly that much slower per
//! operation), [`ProportionalProxy`] for a delay proportional to each reply's service time (a
//! server that fraction slower, whatever the operation). Both frame messages by the wire
//! protocol's length, so a delay is per reply however the bytes arrive, and stop when dropped.
//! In front of any server, [`TcpProxy`], which a test stalls to cut one client off (an
//! operator replica from the API server).

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

/// A proxy that holds replies for `fraction` of their service time (from the request's last
/// byte read to the reply's last byte read), asleep: no CPU is spent on the delay, so the
/// proxied server is that fraction slower per operation while one request is in flight per
/// connection, as the runner's workers send. A sleep overshoots by the cost of waking up (tens
/// of microseconds on a shared machine, as much as the whole delay of a fast reply), so each
/// connection keeps what it owes: a reply is held for the delay owed so far, and what a sleep
/// overshot is paid back by the next replies. Over many replies the delay added is the fraction
/// asked; [`ProportionalProxy::held_fraction`] says what it was. One thread per connection,
/// each with a 1 µs timer slack.
pub struct ProportionalProxy {
    /// `mongodb://127.0.0.1:PORT/` plus the path and options of the upstream URI.
    pub uri: String,
    totals: std::sync::Arc<Totals>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Nanoseconds of service and of holding, over every connection.
#[derive(Default)]
struct Totals {
    service_ns: std::sync::atomic::AtomicU64,
    held_ns: std::sync::atomic::AtomicU64,
}

impl ProportionalProxy {
    /// Proxies `upstream_uri` (a `mongodb://127.0.0.1:PORT/...` URI), replies held for
    /// `fraction` × their service time.
    pub fn start(upstream_uri: &str, fraction: f64) -> ProportionalProxy {
        use std::sync::atomic::{AtomicBool, Ordering};
        let (upstream, listener, uri) = listen(upstream_uri);
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let totals = std::sync::Arc::new(Totals::default());
        let (stopping, counting) = (stop.clone(), totals.clone());
        let thread = std::thread::spawn(move || {
            while !stopping.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((client, _)) => {
                        let totals = counting.clone();
                        std::thread::spawn(move || {
                            relay_proportional(client, upstream, fraction, &totals)
                        });
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        ProportionalProxy {
            uri,
            totals,
            stop,
            thread: Some(thread),
        }
    }

    /// The time replies were held over their service time, so far.
    pub fn held_fraction(&self) -> f64 {
        use std::sync::atomic::Ordering;
        let service = self.totals.service_ns.load(Ordering::Relaxed) as f64;
        self.totals.held_ns.load(Ordering::Relaxed) as f64 / service.max(1.0)
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

/// Relays one connection request by reply, holding replies for what `fraction` of their
/// service time owes. Ends when either side closes.
fn relay_proportional(
    mut client: std::net::TcpStream,
    upstream: SocketAddr,
    fraction: f64,
    totals: &Totals,
) {
    use std::io::Write;
    use std::sync::atomic::Ordering;
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
    // Seconds of delay owed; negative after a sleep that overshot.
    let mut owed = 0.0_f64;
    // One request, its reply (a request with moreToCome has none; exhaust cursors are not used).
    while let Some(request) = read_message(&mut client) {
        let sent = std::time::Instant::now();
        if server.write_all(&request).is_err() {
            return;
        }
        let Some(reply) = read_message(&mut server) else {
            return;
        };
        let service = sent.elapsed();
        totals
            .service_ns
            .fetch_add(service.as_nanos() as u64, Ordering::Relaxed);
        owed += service.as_secs_f64() * fraction;
        if owed > 0.0 {
            let asleep = std::time::Instant::now();
            std::thread::sleep(Duration::from_secs_f64(owed));
            let held = asleep.elapsed();
            owed -= held.as_secs_f64();
            totals
                .held_ns
                .fetch_add(held.as_nanos() as u64, Ordering::Relaxed);
        }
        if client.write_all(&reply).is_err() {
            return;
        }
    }
}

/// A plain TCP relay in front of any server (the API server, for an operator replica), which a
/// test can stall: from [`TcpProxy::stall`] on, nothing passes in either direction, on open
/// connections or new ones, and nothing is refused either, so every request through it hangs,
/// as over a network link that went silent. Stopped when dropped.
pub struct TcpProxy {
    /// Where to connect instead of the upstream.
    pub addr: SocketAddr,
    stalled: tokio::sync::watch::Sender<bool>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl TcpProxy {
    /// Relays a free loopback port to `upstream`.
    pub fn start(upstream: SocketAddr) -> TcpProxy {
        let listener = StdListener::bind("127.0.0.1:0").expect("a free loopback port");
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let (stalled, watching) = tokio::sync::watch::channel(false);
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
                    () = relay_all(listener, upstream, watching) => {}
                }
            });
            runtime.shutdown_background();
        });
        TcpProxy {
            addr,
            stalled,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// From now on nothing passes: every connection, open or new, hangs.
    pub fn stall(&self) {
        self.stalled.send_replace(true);
    }
}

impl Drop for TcpProxy {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn relay_all(
    listener: TcpListener,
    upstream: SocketAddr,
    stalled: tokio::sync::watch::Receiver<bool>,
) {
    loop {
        let Ok((client, _)) = listener.accept().await else {
            continue;
        };
        let stalled = stalled.clone();
        tokio::spawn(async move {
            if *stalled.borrow() {
                // Accepted and never answered: the caller waits, as on a silent link (the
                // connection stays open while this task waits).
                std::future::pending::<()>().await;
            }
            let Ok(server) = TcpStream::connect(upstream).await else {
                return;
            };
            let (client_read, client_write) = client.into_split();
            let (server_read, server_write) = server.into_split();
            tokio::select! {
                _ = pipe(client_read, server_write, stalled.clone()) => {}
                _ = pipe(server_read, client_write, stalled) => {}
            }
        });
    }
}

/// Copies `from` to `to` until either closes; once stalled, holds both open and passes nothing
/// more (bytes read but not yet passed included).
async fn pipe(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    mut stalled: tokio::sync::watch::Receiver<bool>,
) -> std::io::Result<()> {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        if *stalled.borrow_and_update() {
            std::future::pending::<()>().await;
        }
        tokio::select! {
            read = from.read(&mut buf) => {
                let n = read?;
                if n == 0 {
                    return Ok(());
                }
                if *stalled.borrow() {
                    std::future::pending::<()>().await;
                }
                to.write_all(&buf[..n]).await?;
            }
            _ = stalled.changed() => {}
        }
    }
}
