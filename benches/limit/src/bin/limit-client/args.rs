//! The command line: flags, their defaults, and the server address of a `mongodb://` URI.

pub(crate) fn usage() -> ! {
    eprintln!(
        "usage: limit-client --uri URI (--stats | --workload ycsb-a|ycsb-c|ycsb-e|flights \
         [--connections N] [--records N] [--load] [--warmup S] [--seconds S] [--seed N] \
         [--bulk-load BATCH])"
    );
    std::process::exit(2);
}

pub(crate) struct Args {
    pub(crate) addr: String,
    pub(crate) workload: String,
    pub(crate) connections: usize,
    pub(crate) records: u64,
    pub(crate) load: bool,
    pub(crate) warmup: f64,
    pub(crate) seconds: f64,
    pub(crate) seed: u64,
    pub(crate) stats: bool,
    /// Only load `records` documents in inserts of this many, `connections` at a time.
    pub(crate) bulk_load: Option<u64>,
}

pub(crate) fn parse_args() -> Args {
    let mut a = Args {
        addr: "127.0.0.1:27100".into(),
        workload: "ycsb-a".into(),
        connections: 16,
        records: 1000,
        load: false,
        warmup: 0.0,
        seconds: 10.0,
        seed: 1,
        stats: false,
        bulk_load: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| usage());
        match flag.as_str() {
            "--uri" => a.addr = address(&value()),
            "--workload" => a.workload = value(),
            "--connections" => a.connections = value().parse().unwrap_or_else(|_| usage()),
            "--records" => a.records = value().parse().unwrap_or_else(|_| usage()),
            "--warmup" => a.warmup = value().parse().unwrap_or_else(|_| usage()),
            "--seconds" => a.seconds = value().parse().unwrap_or_else(|_| usage()),
            "--seed" => a.seed = value().parse().unwrap_or_else(|_| usage()),
            "--load" => a.load = true,
            "--bulk-load" => a.bulk_load = Some(value().parse().unwrap_or_else(|_| usage())),
            "--stats" => a.stats = true,
            _ => usage(),
        }
    }
    a
}

/// `host:port` of a `mongodb://host:port/...` URI (or of `host:port`).
fn address(uri: &str) -> String {
    let rest = uri.strip_prefix("mongodb://").unwrap_or(uri);
    let host = rest.split(['/', '?']).next().unwrap_or(rest);
    let host = host.rsplit('@').next().unwrap_or(host);
    if host.contains(':') {
        host.to_owned()
    } else {
        format!("{host}:27017")
    }
}
