//! `testenv/up` run from several places at once, as the threads of a test binary run it: no
//! reader of the env files ever sees one empty or half-written.
mod support;

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;

/// Runs of `testenv/up` per component, all at once with the other component's.
const RUNS: usize = 50;

fn up(component: &str) {
    let out = Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/testenv/up"))
        .arg(component)
        .output()
        .expect("running testenv/up");
    assert!(
        out.status.success(),
        "testenv/up {component}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn concurrent_ups_never_leave_an_env_file_half_written() {
    // Both components running first, so that each of the runs below only rewrites env files.
    let run = support::run_dir();
    up("mongo");
    up("secantus");
    let files: Vec<PathBuf> = ["env", "env.mongo", "env.secantus"]
        .iter()
        .map(|f| run.join(f))
        .collect();
    let done = AtomicBool::new(false);
    let (reads, bad) = thread::scope(|s| {
        let reader = s.spawn(|| {
            let (mut reads, mut bad) = (0u64, Vec::new());
            while !done.load(Ordering::Relaxed) {
                for file in &files {
                    let text = std::fs::read_to_string(file).unwrap_or_default();
                    reads += 1;
                    if !text.ends_with('\n') || !text.contains("MONGOBENCH_TESTENV_BIN=") {
                        bad.push(format!("{}: {text:?}", file.display()));
                    }
                }
            }
            (reads, bad)
        });
        let writers: Vec<_> = ["mongo", "secantus"]
            .into_iter()
            .map(|component| {
                s.spawn(move || {
                    for _ in 0..RUNS {
                        up(component);
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().unwrap();
        }
        done.store(true, Ordering::Relaxed);
        reader.join().unwrap()
    });
    assert!(reads > 0, "the reader read nothing");
    assert!(
        bad.is_empty(),
        "{} of {reads} reads saw a truncated env file, e.g. {}",
        bad.len(),
        bad[0]
    );
}
