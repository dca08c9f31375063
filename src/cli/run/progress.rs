//! What a run shows as it goes: one line per seeded size and per finished cell, and on a
//! terminal a progress bar per running cell with its phase and live ops/s.

use std::io::IsTerminal;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::api::RunLength;
use crate::contract::CellStep;
use crate::plan::{PlannedCell, RunSettings};
use crate::runner::CellProgress;

/// Progress output: on a terminal, a progress bar per cell with its phase and live ops/s;
/// plain log lines otherwise.
pub(super) struct Display {
    terminal: bool,
    planned: Option<Duration>,
    warmup: Option<Duration>,
    /// The bars of the cells running now (several in a simultaneous slot), drawn together.
    bars: indicatif::MultiProgress,
}

/// The bar of a cell of `total_secs` seconds (warm-up and measurement), or a spinner when the
/// run is bounded by operations.
fn cell_bar(id: &str, total_secs: Option<u64>) -> indicatif::ProgressBar {
    let (bar, template) = match total_secs {
        Some(secs) => (
            indicatif::ProgressBar::new(secs),
            "{prefix} [{bar:30}] {pos:>4}/{len}s  {msg}",
        ),
        None => (
            indicatif::ProgressBar::new_spinner(),
            "{prefix} {spinner} {elapsed}  {msg}",
        ),
    };
    let style = indicatif::ProgressStyle::with_template(template)
        .expect("a valid template")
        .progress_chars("=> ");
    bar.set_style(style);
    bar.set_prefix(id.to_owned());
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

impl Display {
    pub(super) fn new(settings: &RunSettings) -> Display {
        let seconds = |l: RunLength| match l {
            RunLength::Duration(d) => Some(d),
            RunLength::Operations(_) => None,
        };
        Display {
            terminal: std::io::stderr().is_terminal(),
            // A sweep's steps are as many as its search takes: no time left is promised.
            planned: seconds(settings.measured).filter(|_| settings.sweep.is_none()),
            warmup: seconds(settings.warmup),
            bars: indicatif::MultiProgress::new(),
        }
    }

    pub(super) fn line(&self, text: &str) {
        if self.terminal {
            // Above the running cells' bars, which stay below.
            let _ = self.bars.println(text);
        } else {
            eprintln!("{text}");
        }
    }

    /// Reports the phase, throughput and time left of a running cell until `finish`.
    pub(super) fn track(&self, cell: &PlannedCell, progress: &CellProgress) -> Ticker {
        let ops = progress.ops.clone();
        let steps = progress.step.clone();
        let round = progress.warmup_round.clone();
        let id = cell.id.clone();
        let total = self.planned.zip(self.warmup).map(|(p, w)| p + w);
        let bar = self
            .terminal
            .then(|| self.bars.add(cell_bar(&id, total.map(|t| t.as_secs()))));
        let bar_task = bar.clone();
        let handle = tokio::spawn(async move {
            let started = Instant::now();
            let mut last_ops = 0;
            let mut last_print = Instant::now();
            // When the last warm-up round (or measurement, without one) began: what the run
            // length counts, as if that round is the last.
            let mut timed: Option<Instant> = None;
            let mut timed_round = 0;
            let mut interval = tokio::time::interval(Duration::from_secs(1));
            loop {
                interval.tick().await;
                let now_ops = ops.completed.load(Ordering::Relaxed);
                let rate = now_ops.saturating_sub(last_ops);
                last_ops = now_ops;
                let step: CellStep = *steps.lock().expect("step lock");
                let round = round.load(Ordering::Relaxed);
                let elapsed = started.elapsed();
                let new_round = step == CellStep::Warmup && round != timed_round;
                let timing = matches!(step, CellStep::Warmup | CellStep::Measuring);
                if timing && (timed.is_none() || new_round) {
                    timed = Some(Instant::now());
                    timed_round = round;
                }
                let phase = phase_text(step, round);
                // Time left is known only while the timed phases run.
                let in_timed = timed.filter(|_| timing).map(|t| t.elapsed());
                let left = total
                    .zip(in_timed)
                    .map(|(t, e)| format!(", ~{}s left", t.saturating_sub(e).as_secs()))
                    .unwrap_or_default();
                let text = format!(
                    "{id}: {phase}, {rate} ops/s, {}s elapsed{left}",
                    elapsed.as_secs()
                );
                match &bar_task {
                    Some(bar) => {
                        // The bar counts the timed phases; restoring and settling hold it.
                        if let Some(e) = in_timed {
                            bar.set_position(e.as_secs());
                        }
                        bar.set_message(format!("{phase}, {rate} ops/s"));
                    }
                    None if last_print.elapsed() >= Duration::from_secs(10) => {
                        eprintln!("{text}");
                        last_print = Instant::now();
                    }
                    None => {}
                }
            }
        });
        Ticker { handle, bar }
    }
}

/// `phase` as the progress shows it: a warm-up after the first says its round.
fn phase_text(step: CellStep, round: u32) -> String {
    match (step, round) {
        (CellStep::Warmup, 2..) => format!("warmup round {round}"),
        _ => step.to_string(),
    }
}

pub(super) struct Ticker {
    handle: tokio::task::JoinHandle<()>,
    bar: Option<indicatif::ProgressBar>,
}

impl Ticker {
    pub(super) fn finish(self) {
        self.handle.abort();
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_warmup_after_the_first_names_its_round() {
        assert_eq!(phase_text(CellStep::Warmup, 0), "warmup");
        assert_eq!(phase_text(CellStep::Warmup, 1), "warmup");
        assert_eq!(phase_text(CellStep::Warmup, 3), "warmup round 3");
        assert_eq!(phase_text(CellStep::Measuring, 3), "measuring");
    }

    #[test]
    fn a_timed_cell_gets_a_bar_of_its_seconds_and_a_bounded_one_a_spinner() {
        let bar = cell_bar("a.local.1k.r1", Some(15));
        assert_eq!(bar.length(), Some(15));
        assert_eq!(bar.prefix(), "a.local.1k.r1");
        bar.finish_and_clear();
        let spinner = cell_bar("a.local.1k.r1", None);
        assert_eq!(spinner.length(), None);
        spinner.finish_and_clear();
    }
}
