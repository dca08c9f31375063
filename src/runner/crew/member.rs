//! The side of a client process other than the coordinator: it joins the board, waits for
//! each order and replies to it.

use std::time::{Duration, Instant, SystemTime};

use super::board::Board;
use super::coordinator::Crew;
use super::orders::{ORDER_KEY, Order, Reply, epoch_ms, ready_key, reply_key};
use super::split::ClientSlice;

/// The other processes' side: their board access.
pub struct Member {
    board: Board,
    slice: ClientSlice,
}

impl Member {
    /// Announces this process and returns the order number current before it did: a process
    /// that (re)starts mid-run skips the order under way, as it has none of its state.
    ///
    /// # Errors
    /// The board could not be written for [`Crew::READY_TIMEOUT`] (the coordinator creates it).
    pub async fn join(board: Board, slice: ClientSlice) -> Result<(Member, u64), String> {
        let started = Instant::now();
        loop {
            let written = async {
                let data = board.read().await?;
                let current = data
                    .get(ORDER_KEY)
                    .and_then(|o| serde_json::from_str::<Order>(o).ok())
                    .map_or(0, |o| o.seq);
                let now = epoch_ms(SystemTime::now()).to_string();
                board.write(&ready_key(slice.index), now).await?;
                Ok::<u64, String>(current)
            };
            match written.await {
                Ok(current) => return Ok((Member { board, slice }, current)),
                Err(e) if started.elapsed() > Crew::READY_TIMEOUT => return Err(e),
                // The coordinator may not have created the board yet.
                Err(e) => tracing::debug!("{e}; trying again"),
            }
            tokio::time::sleep(board.poll()).await;
        }
    }

    /// This process's slice.
    pub fn slice(&self) -> ClientSlice {
        self.slice
    }

    /// Waits for the first order numbered above `after`; `None` once the board is gone (its
    /// run was deleted, or ended and removed it) or cannot be read for [`Crew::READY_TIMEOUT`].
    pub async fn next_order(&self, after: u64) -> Option<Order> {
        let mut last_read = Instant::now();
        loop {
            match self.board.read().await {
                Ok(data) if !data.contains_key(&ready_key(self.slice.index)) => return None,
                Ok(data) => {
                    last_read = Instant::now();
                    if let Some(order) = data
                        .get(ORDER_KEY)
                        .and_then(|o| serde_json::from_str::<Order>(o).ok())
                        .filter(|o| o.seq > after)
                    {
                        return Some(order);
                    }
                }
                Err(e) if last_read.elapsed() > Crew::READY_TIMEOUT => {
                    tracing::warn!("{e}: giving up");
                    return None;
                }
                Err(_) => {}
            }
            tokio::time::sleep(self.board.poll()).await;
        }
    }

    /// Replies to order `seq`, trying again while the board cannot be written (the coordinator
    /// waits only so long).
    pub async fn reply(&self, seq: u64, outcome: Result<serde_json::Value, String>) {
        let text = serde_json::to_string(&Reply { seq, outcome }).expect("a reply serializes");
        for _ in 0..20 {
            match self
                .board
                .write(&reply_key(self.slice.index), text.clone())
                .await
            {
                Ok(()) => return,
                Err(e) => tracing::warn!("{e}; trying again"),
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }
}
