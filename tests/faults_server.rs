//! Server faults during a run, against a real MongoDB-wire server of the test's own: a server
//! paused (SIGSTOP) for longer than the operation timeout, and a server killed and started
//! again mid-run. After each, every cell is complete and valid, or incomplete with its reason;
//! none is lost or counted twice, and the benchmark goes on to the next cell.
mod support;

use std::time::{Duration, Instant};

use mongobench::api::RunLength;
use mongobench::plan::{PlannedCell, RunSettings};
use mongobench::result::{CellResult, CellStatus};
use mongobench::runner::benchmark::{Events, run};
use mongobench::runner::cell::{CellProgress, run_cell};
use mongobench::runner::dataset::Seeded;
use mongobench::runner::server::connect;
use support::runs;

/// The operation timeout of these tests: short, so a stall is over in seconds.
const LIMIT: Duration = Duration::from_secs(2);

fn settings(measured: Duration) -> RunSettings {
    RunSettings {
        operation_timeout: LIMIT,
        sweep: None,
        warmup_load: None,
        warmup_settle: None,
        ..runs::settings(4, RunLength::Duration(measured))
    }
}

#[tokio::test]
async fn a_server_paused_past_the_operation_timeout_ends_the_cell_incomplete_within_the_bound() {
    let server = support::private_mongo("paused");
    let plan = runs::ycsb("workloada");
    let target = connect("paused", &server.uri, 4, Duration::from_secs(5))
        .await
        .unwrap();
    let mut seeded = runs::seeded(&target, &plan, 200, 4).await;

    // A 60 s window the cell must not wait out: the pause starts 2 s into it.
    let settings = settings(Duration::from_secs(60));
    let progress = CellProgress::default();
    let started = Instant::now();
    let pauser = async {
        tokio::time::sleep(Duration::from_secs(2)).await;
        server.pause();
    };
    let cell = run_cell(
        &target,
        &server.uri,
        &plan,
        &settings,
        runs::cell("paused", "workloada"),
        &mut seeded,
        &progress,
    );
    // Bounded by the test itself, so a hang fails instead of blocking the suite.
    let (result, ()) = tokio::time::timeout(Duration::from_secs(45), async {
        tokio::join!(cell, pauser)
    })
    .await
    .expect("the cell ended although the server never answered again");
    eprintln!("the cell ended {:?} after it started", started.elapsed());
    server.resume();

    let CellStatus::Incomplete { reason } = &result.status else {
        panic!("a cell whose server stopped answering is reported complete");
    };
    assert!(
        reason.starts_with("target paused: measured phase: operation: no reply within 2s"),
        "{reason}"
    );
    let measured = result
        .measured
        .as_ref()
        .expect("the operations before the pause");
    assert!(
        measured.overall.completed > 0,
        "operations before the pause are kept"
    );
    assert!(
        measured.overall.errors.timeout >= 1,
        "the timed-out operations are counted as timeouts: {:?}",
        measured.overall.errors
    );
    assert!(result.require_complete().is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_and_restarted_mid_run_marks_that_cell_and_the_next_completes() {
    let mut server = support::private_mongo("restarted");
    let plan = runs::ycsb("workloada");
    let targets = runs::connect_all(&[("restarted", server.uri.as_str())], 4).await;
    let bench = runs::benchmark(
        "restarted",
        plan,
        settings(Duration::from_secs(6)),
        &[200],
        3,
    );

    // Kill the server 2 s into the first repetition's measured phase and start it again on
    // its storage a second later; the run itself goes on.
    let (started_tx, mut started_rx) = tokio::sync::mpsc::unbounded_channel();
    let mut events = Watch { started_tx };
    let crash = async {
        let first = started_rx.recv().await.expect("the first cell starts");
        assert_eq!(first, 1);
        tokio::time::sleep(Duration::from_secs(2)).await;
        tokio::task::block_in_place(|| {
            server.kill();
            std::thread::sleep(Duration::from_secs(1));
            server.restart();
        });
    };
    let (results, ()) = tokio::join!(run(&bench, &targets, &mut events), crash);
    let results = results.expect("the run goes to its end");

    let repetitions: Vec<u32> = results.iter().map(|r| r.cell.repetition).collect();
    assert_eq!(
        repetitions,
        [1, 2, 3],
        "every cell once, none lost or repeated"
    );
    let CellStatus::Incomplete { reason } = &results[0].status else {
        panic!("the cell whose server was killed is reported complete");
    };
    assert!(
        reason.starts_with("target restarted: measured phase:"),
        "{reason}"
    );
    let errors = &results[0]
        .measured
        .as_ref()
        .expect("what was measured before the crash")
        .overall
        .errors;
    assert!(
        errors.network >= 1,
        "the crash is counted as a network error: {errors:?}"
    );
    for later in &results[1..] {
        assert!(
            later.is_complete() && later.invalid_reasons.is_empty(),
            "repetition {} after the restart: {:?} {:?}",
            later.cell.repetition,
            later.status,
            later.invalid_reasons
        );
        assert_eq!(
            later.dataset.seeded_documents, 200,
            "the collection was seeded again to its size"
        );
    }
    let restarted: &CellResult = &results[1];
    assert_eq!(
        restarted.identity, results[2].identity,
        "the repetitions after the restart measure the same workload"
    );
}

/// Reports each cell's repetition when it starts.
struct Watch {
    started_tx: tokio::sync::mpsc::UnboundedSender<u32>,
}

impl Events for Watch {
    fn seeding(&mut self, _: &str, _: &str, _: u64) {}
    fn seeded(&mut self, _: &str, _: &str, _: &Seeded) {}
    fn started(&mut self, cell: &PlannedCell, _: &CellProgress) {
        let _ = self.started_tx.send(cell.repetition);
    }
    async fn finished(
        &mut self,
        _: &PlannedCell,
        _: &CellResult,
    ) -> Result<(), mongobench::runner::sink::SinkError> {
        Ok(())
    }
}
