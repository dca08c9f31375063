//! The server nodes' canaries during a measured phase (docs/results.md, "Noise canaries"):
//! once a second each canary beside a member of the target is asked `light` (its node's
//! jiffies and a light CPU probe, well under a millisecond of its time), so that a node that
//! slowed while the cell was measured shows it, as the client's own phase canary does. The
//! full probe is never taken during the phase: it would load the node being measured.

use std::time::Duration;

use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio::time::{MissedTickBehavior, interval};

use crate::measure::canary::CanaryRequest;
use crate::measure::phase_canary::{LightReading, PhaseSeries, ServerPhaseCanary};

use super::server_cpu::ask_canary;

/// Seconds between readings.
const PERIOD: Duration = Duration::from_secs(1);

/// The sampler of one measured phase's server canaries: started before it, finished after it;
/// dropped (a phase that failed), it stops.
pub struct ServerPhaseSampler {
    stop: Option<oneshot::Sender<()>>,
    handle: Option<JoinHandle<Vec<ServerPhaseCanary>>>,
}

impl Drop for ServerPhaseSampler {
    fn drop(&mut self) {
        if let Some(handle) = &self.handle {
            handle.abort();
        }
    }
}

impl ServerPhaseSampler {
    /// Starts asking each canary of `addresses` (`host:port`) once a second, the first time
    /// now (where each node's steal starts); nothing is asked without canaries.
    pub fn start(addresses: &[String]) -> ServerPhaseSampler {
        if addresses.is_empty() {
            return ServerPhaseSampler {
                stop: None,
                handle: None,
            };
        }
        let (stop, stopped) = oneshot::channel();
        let handle = tokio::spawn(sample(addresses.to_vec(), stopped));
        ServerPhaseSampler {
            stop: Some(stop),
            handle: Some(handle),
        }
    }

    /// Stops asking; what each canary saw, in the order of the addresses (none without
    /// canaries). A round of questions under way is left unanswered.
    pub async fn finish(mut self) -> Vec<ServerPhaseCanary> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match self.handle.take() {
            Some(handle) => handle.await.unwrap_or_default(),
            None => Vec::new(),
        }
    }
}

/// One canary's readings so far.
struct Node {
    address: String,
    series: PhaseSeries,
    error: Option<String>,
}

impl Node {
    /// Keeps one answer: the first reading starts the node's steal and counts no second.
    fn keep(&mut self, answer: Result<LightReading, String>, first: bool) {
        match answer {
            Ok(reading) => {
                let cpu = (!first).then_some(reading.cpu_us).flatten();
                self.series.push(reading.jiffies(), cpu);
            }
            Err(e) => {
                self.series.push(None, None);
                self.error.get_or_insert(e);
            }
        }
    }
}

async fn sample(
    addresses: Vec<String>,
    mut stopped: oneshot::Receiver<()>,
) -> Vec<ServerPhaseCanary> {
    let mut nodes: Vec<Node> = addresses
        .into_iter()
        .map(|address| Node {
            address,
            series: PhaseSeries::default(),
            error: None,
        })
        .collect();
    let mut ticks = interval(PERIOD);
    ticks.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut first = true;
    loop {
        let round = async {
            ticks.tick().await;
            let asked = nodes.iter().map(|n| read(&n.address));
            futures::future::join_all(asked).await
        };
        tokio::select! {
            _ = &mut stopped => break,
            answers = round => {
                for (node, answer) in nodes.iter_mut().zip(answers) {
                    node.keep(answer, first);
                }
                first = false;
            }
        }
    }
    nodes
        .into_iter()
        .map(|n| ServerPhaseCanary {
            address: n.address,
            during: n.series.finish(None),
            error: n.error,
        })
        .collect()
}

/// The canary at `address`'s reading of its node now.
async fn read(address: &str) -> Result<LightReading, String> {
    let text = ask_canary(address, &CanaryRequest::Light).await?;
    serde_json::from_str(&text)
        .map_err(|e| format!("the answer {text:?} is not a light reading: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::phase_canary::PhaseCanary;

    fn reading(steal: u64, total: u64, cpu_us: f64) -> Result<LightReading, String> {
        Ok(LightReading {
            steal_jiffies: Some(steal),
            total_jiffies: Some(total),
            cpu_us: Some(cpu_us),
        })
    }

    #[test]
    fn a_nodes_answers_make_its_phase_canary() {
        let mut node = Node {
            address: "m0:27117".into(),
            series: PhaseSeries::default(),
            error: None,
        };
        // The first answer starts the steal; its probe is not a second of the phase.
        node.keep(reading(100, 10_000, 999.0), true);
        node.keep(reading(102, 10_200, 300.0), false);
        node.keep(reading(112, 10_400, 330.0), false);
        node.keep(Err("no answer within 5 s".into()), false);
        node.keep(reading(113, 10_800, 310.0), false);
        node.keep(Err("connecting: refused".into()), false);
        assert_eq!(node.error.as_deref(), Some("no answer within 5 s"));
        assert_eq!(
            node.series.finish(None),
            PhaseCanary {
                seconds: 3,
                // 13 of 800 jiffies from the first answer to the last.
                steal_percent: Some(1.625),
                // 10 of 200 in the second second; none across the missing answer.
                steal_percent_max: Some(5.0),
                cpu_us: Some(310.0),
                deviation: None,
            }
        );
    }

    #[tokio::test]
    async fn without_canaries_nothing_is_asked() {
        let sampler = ServerPhaseSampler::start(&[]);
        assert!(sampler.handle.is_none());
        assert_eq!(sampler.finish().await, []);
    }
}
