use super::*;
use crate::measure::latency::{LatencySummary, value_at_percentile};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn us(n: u64) -> Duration {
    Duration::from_micros(n)
}

/// A timing sent `at` after `t0` taking `took`, with no schedule.
fn closed(t0: Instant, at: Duration, took: Duration) -> Timing {
    Timing {
        intended: None,
        sent: t0 + at,
        done: t0 + at + took,
    }
}

#[test]
fn service_time_is_truncated_to_whole_microseconds() {
    let t0 = Instant::now();
    let mut r = Recorder::new(t0, LatencyMode::ServiceTime);
    r.record(
        "READ",
        Timing {
            intended: None,
            sent: t0,
            done: t0 + Duration::from_nanos(1_999),
        },
        Ok(()),
    );
    let h = &r.label("READ").unwrap().ok().latency;
    assert_eq!(h.len(), 1);
    assert_eq!(h.count_at(1), 1);
    assert!(r.label("READ").unwrap().ok().uncorrected.is_none());
}

#[test]
fn intended_mode_keeps_both_latencies() {
    // Due at t0, sent 300 ms late (the server was stalled), served in 2 ms.
    let t0 = Instant::now();
    let mut r = Recorder::new(t0, LatencyMode::Intended);
    let timing = Timing {
        intended: Some(t0),
        sent: t0 + ms(300),
        done: t0 + ms(302),
    };
    r.record("find", timing, Ok(()));
    let ok = r.label("find").unwrap().ok();
    // 302_000 µs lies in 262_144..524_287, whose buckets are 256 wide: [301_824, 302_079].
    assert_eq!(ok.latency.count_at(302_000), 1);
    assert_eq!(value_at_percentile(&ok.latency, 100.0), 302_079);
    assert_eq!(ok.uncorrected.as_ref().unwrap().count_at(2_000), 1);
}

#[test]
fn failures_are_counted_by_kind_and_timed_apart() {
    let t0 = Instant::now();
    let mut r = Recorder::new(t0, LatencyMode::ServiceTime);
    r.record("READ", closed(t0, ms(0), us(100)), Ok(()));
    r.record("READ", closed(t0, ms(1), us(900)), Err(ErrorKind::NotFound));
    r.record("READ", closed(t0, ms(2), us(5)), Err(ErrorKind::Timeout));
    let read = r.label("READ").unwrap();
    assert_eq!(read.succeeded(), 1);
    assert_eq!(read.completed(), 3);
    assert_eq!(read.errors().not_found, 1);
    assert_eq!(read.errors().timeout, 1);
    let failed = &read.failed().unwrap().latency;
    assert_eq!(
        (failed.len(), failed.count_at(900), failed.count_at(5)),
        (2, 1, 1)
    );
    assert_eq!(read.ok().latency.count_at(100), 1);
}

#[test]
fn completions_are_bucketed_per_second_since_start() {
    let t0 = Instant::now();
    let mut r = Recorder::new(t0, LatencyMode::ServiceTime);
    // Completions at 0.5 s, 0.999 s, 1.0 s, 3.2 s (failed) and 3.9 s.
    r.record("a", closed(t0, ms(400), ms(100)), Ok(()));
    r.record("a", closed(t0, ms(998), ms(1)), Ok(()));
    r.record("a", closed(t0, ms(999), ms(1)), Ok(()));
    r.record("a", closed(t0, ms(3_000), ms(200)), Err(ErrorKind::Network));
    r.record("b", closed(t0, ms(3_800), ms(100)), Ok(()));
    assert_eq!(r.label("a").unwrap().per_second(), &[2, 1, 0, 1]);
    assert_eq!(r.label("b").unwrap().per_second(), &[0, 0, 0, 1]);
    assert_eq!(r.overall().per_second(), &[2, 1, 0, 2]);
}

#[test]
fn merging_two_workers_loses_nothing() {
    let t0 = Instant::now();
    let mut w1 = Recorder::new(t0, LatencyMode::ServiceTime);
    let mut w2 = Recorder::new(t0, LatencyMode::ServiceTime);
    // Worker 1: 100, 200, 300 µs of READ in second 0. Worker 2: 400 µs READ in second 1,
    // 5000 µs UPDATE in second 2, and a duplicate-key INSERT in second 2.
    w1.record("READ", closed(t0, ms(1), us(100)), Ok(()));
    w1.record("READ", closed(t0, ms(2), us(200)), Ok(()));
    w1.record("READ", closed(t0, ms(3), us(300)), Ok(()));
    w2.record("READ", closed(t0, ms(1_500), us(400)), Ok(()));
    w2.record("UPDATE", closed(t0, ms(2_100), us(5_000)), Ok(()));
    w2.record(
        "INSERT",
        closed(t0, ms(2_200), us(50)),
        Err(ErrorKind::DuplicateKey),
    );

    let merged = Recorder::merge_all([&w1, &w2]).unwrap().unwrap();
    let read = merged.label("READ").unwrap();
    let s = LatencySummary::of(&read.ok().latency).unwrap();
    assert_eq!((s.count, s.min, s.p50, s.max), (4, 100, 200, 400));
    assert_eq!(s.mean, 250.0);
    assert_eq!(read.per_second(), &[3, 1]);
    let update = merged.label("UPDATE").unwrap();
    assert_eq!(update.ok().latency.count_at(5_000), 1);
    assert_eq!(update.per_second(), &[0, 0, 1]);
    assert_eq!(merged.label("INSERT").unwrap().errors().duplicate_key, 1);
    assert_eq!(merged.overall().completed(), 6);
    assert_eq!(merged.overall().per_second(), &[3, 1, 2]);
    assert_eq!(merged.overall().errors().total(), 1);
}

#[test]
fn nested_measurements_do_not_count_as_operations() {
    // Workload F: a READ-MODIFY-WRITE of 700 µs with its READ (300 µs) and UPDATE (400 µs).
    let t0 = Instant::now();
    let mut r = Recorder::new(t0, LatencyMode::ServiceTime);
    r.record_nested("READ", closed(t0, us(0), us(300)), Ok(()));
    r.record_nested("UPDATE", closed(t0, us(300), us(400)), Ok(()));
    r.record("READ-MODIFY-WRITE", closed(t0, us(0), us(700)), Ok(()));
    r.record("READ", closed(t0, us(700), us(200)), Ok(()));
    assert_eq!(r.overall().completed(), 2);
    assert_eq!(r.label("READ").unwrap().completed(), 2);
    assert_eq!(r.label("UPDATE").unwrap().completed(), 1);
}

#[test]
fn reset_drops_the_warm_up() {
    let t0 = Instant::now();
    let mut r = Recorder::new(t0, LatencyMode::ServiceTime);
    r.record("READ", closed(t0, ms(0), us(100)), Ok(()));
    let t1 = t0 + Duration::from_secs(10);
    r.reset(t1);
    r.record("READ", closed(t1, ms(0), us(250)), Ok(()));
    let read = r.label("READ").unwrap();
    assert_eq!(read.ok().latency.len(), 1);
    assert_eq!(read.ok().latency.count_at(250), 1);
    assert_eq!(read.per_second(), &[1]);
    assert_eq!(r.start(), t1);
}

#[test]
fn merge_refuses_different_starts_and_modes() {
    let t0 = Instant::now();
    let mut a = Recorder::new(t0, LatencyMode::ServiceTime);
    let b = Recorder::new(t0 + ms(5), LatencyMode::ServiceTime);
    assert_eq!(
        a.merge(&b),
        Err(MergeError::StartMismatch { offset: ms(5) })
    );
    let c = Recorder::new(t0, LatencyMode::Intended);
    assert_eq!(
        a.merge(&c),
        Err(MergeError::ModeMismatch {
            mine: LatencyMode::ServiceTime,
            theirs: LatencyMode::Intended
        })
    );
}

#[test]
fn op_timer_records_exactly_once_per_outcome() {
    let mut r = Recorder::new(Instant::now(), LatencyMode::ServiceTime);
    OpTimer::start("find", None).success(&mut r);
    OpTimer::start("find", None).failure(&mut r, ErrorKind::Other);
    OpTimer::start("find", None).discard();
    OpTimer::start_nested("getMore", None).success(&mut r);
    let find = r.label("find").unwrap();
    assert_eq!((find.succeeded(), find.completed()), (1, 2));
    assert_eq!(find.errors().other, 1);
    assert_eq!(r.label("getMore").unwrap().completed(), 1);
    assert_eq!(r.overall().completed(), 2);
}
