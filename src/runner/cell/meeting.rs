//! Where the cells of a simultaneous slot (`parallelism: Simultaneous`) meet before they
//! measure: each arrives once it is warmed up, restored and settled; when the last one has, all
//! start their measured phase at one instant of this process's clock, a little ahead so that
//! every one is waiting for it. A cell that stops before it arrives breaks the meeting, and
//! the others stop instead of measuring without it.

use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::sync::watch;

/// How far ahead of the last arrival the common start lies: long enough for every waiting
/// cell's task to be woken and scheduled.
const LEAD: Duration = Duration::from_millis(200);

/// The common start of a slot's measured phases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommonStart {
    pub at: Instant,
    /// The same instant on the wall clock (Unix milliseconds), for results.
    pub at_unix_ms: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Gathering,
    Start(CommonStart),
    Broken,
}

/// The meeting of one slot's `cells` cells.
pub struct Meeting {
    cells: usize,
    arrived: Mutex<usize>,
    state: watch::Sender<State>,
}

/// Why a cell does not measure: another cell of its slot stopped before the meeting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a cell measured at the same time stopped before its measured phase")]
pub struct Broken;

impl Meeting {
    pub fn new(cells: usize) -> Meeting {
        Meeting {
            cells,
            arrived: Mutex::new(0),
            state: watch::channel(State::Gathering).0,
        }
    }

    /// Arrives and waits for every other cell; the common start, or [`Broken`].
    ///
    /// # Errors
    /// [`Broken`] when a cell left without arriving.
    pub async fn meet(&self) -> Result<CommonStart, Broken> {
        {
            let mut arrived = self.arrived.lock().expect("meeting lock");
            *arrived += 1;
            if *arrived == self.cells {
                let now = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .unwrap_or_default();
                let start = CommonStart {
                    at: Instant::now() + LEAD,
                    at_unix_ms: u64::try_from((now + LEAD).as_millis()).unwrap_or(u64::MAX),
                };
                self.state.send_if_modified(|s| match s {
                    State::Gathering => {
                        *s = State::Start(start);
                        true
                    }
                    _ => false,
                });
            }
        }
        let mut state = self.state.subscribe();
        let decided = state
            .wait_for(|s| *s != State::Gathering)
            .await
            .map_err(|_| Broken)?;
        match *decided {
            State::Start(start) => Ok(start),
            _ => Err(Broken),
        }
    }

    /// The common start, once every cell has arrived.
    pub fn start(&self) -> Option<CommonStart> {
        match *self.state.borrow() {
            State::Start(start) => Some(start),
            _ => None,
        }
    }

    /// A cell stops before arriving: the others stop too.
    pub fn leave(&self) {
        self.state.send_if_modified(|s| match s {
            State::Gathering => {
                *s = State::Broken;
                true
            }
            _ => false,
        });
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[tokio::test]
    async fn the_last_arrival_sets_one_start_for_all_just_ahead() {
        let meeting = Arc::new(Meeting::new(3));
        let handles: Vec<_> = (0..3)
            .map(|i| {
                let m = meeting.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(20 * i)).await;
                    m.meet().await
                })
            })
            .collect();
        let mut starts = Vec::new();
        for h in handles {
            starts.push(h.await.unwrap().unwrap());
        }
        assert!(starts.iter().all(|s| *s == starts[0]));
        let ahead = starts[0].at.saturating_duration_since(Instant::now());
        assert!(ahead <= LEAD, "{ahead:?}");
    }

    #[tokio::test]
    async fn a_cell_that_leaves_stops_the_others() {
        let meeting = Arc::new(Meeting::new(2));
        let waiting = {
            let m = meeting.clone();
            tokio::spawn(async move { m.meet().await })
        };
        tokio::task::yield_now().await;
        meeting.leave();
        assert_eq!(waiting.await.unwrap(), Err(Broken));
        // Leaving after the start was set changes nothing for those already started.
        let started = Meeting::new(1);
        let start = started.meet().await.unwrap();
        started.leave();
        assert_eq!(started.meet().await, Ok(start));
    }
}
