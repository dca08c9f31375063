//! limit-server: a MongoDB-wire responder that answers from memory at once.
//!
//!   limit-server [--port 27100] [--threads 1]
//!
//! Prints `listening 127.0.0.1:PORT` when ready; on SIGINT or SIGTERM prints the operations it
//! served (the same figures as the `limitStats` command) and exits.

use std::net::SocketAddr;

use mongobench_limit::server::Server;
use tokio::net::TcpListener;
use tokio::signal::unix::{SignalKind, signal};

fn usage() -> ! {
    eprintln!("usage: limit-server [--port PORT] [--threads N] [--bind ADDR]");
    std::process::exit(2);
}

fn main() {
    let mut port = 27100u16;
    let mut threads = 1usize;
    let mut bind = "127.0.0.1".to_owned();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| usage());
        match a.as_str() {
            "--port" => port = value().parse().unwrap_or_else(|_| usage()),
            "--threads" => threads = value().parse().unwrap_or_else(|_| usage()),
            "--bind" => bind = value(),
            _ => usage(),
        }
    }
    let runtime = if threads <= 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.worker_threads(threads);
        b
    }
    .enable_all()
    .build()
    .expect("a runtime");
    runtime.block_on(async move {
        let addr: SocketAddr = format!("{bind}:{port}").parse().unwrap_or_else(|_| usage());
        let listener = TcpListener::bind(addr).await.unwrap_or_else(|e| {
            eprintln!("limit-server: cannot listen on {addr}: {e}");
            std::process::exit(1);
        });
        let server = Server::new(port);
        println!("listening {}", listener.local_addr().expect("an address"));
        let mut interrupt = signal(SignalKind::interrupt()).expect("SIGINT handler");
        let mut terminate = signal(SignalKind::terminate()).expect("SIGTERM handler");
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    if let Ok((stream, _)) = accepted {
                        let server = server.clone();
                        tokio::spawn(async move {
                            if let Err(e) = server.serve(stream).await {
                                eprintln!("limit-server: connection: {e}");
                            }
                        });
                    }
                }
                _ = interrupt.recv() => break,
                _ = terminate.recv() => break,
            }
        }
        println!("served {}", server.counters.document());
    });
}
