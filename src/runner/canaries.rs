//! The run's noise canaries (docs/results.md, "Noise canaries"): before each cell the runner
//! probes the client and asks the canary beside every member of the cell's target
//! (`mongobench canary --serve`, the member pod's sidecar) for a probe of its node, one after
//! another so that no two probes share a machine's time; each probe is judged against the
//! earlier ones of its own machine.

use std::collections::BTreeMap;

use crate::api::CanaryPolicy;
use crate::measure::canary::{self, CanaryFigures, CanaryRecord, CanaryRequest, ServerCanary};
use crate::result::CellResult;

use super::server::ask_canary;

/// Probes each of `addresses` (`host:port`) in turn: its figures, or why there are none.
pub async fn probe_all(addresses: &[String]) -> Vec<(String, Result<CanaryFigures, String>)> {
    let mut out = Vec::with_capacity(addresses.len());
    for address in addresses {
        let answer = probe(address).await;
        if let Err(e) = &answer {
            tracing::warn!(canary = %address, "server node canary: {e}");
        }
        out.push((address.clone(), answer));
    }
    out
}

async fn probe(address: &str) -> Result<CanaryFigures, String> {
    let text = ask_canary(address, &CanaryRequest::Probe).await?;
    serde_json::from_str(&text)
        .map_err(|e| format!("the answer {text:?} is not a probe's figures: {e}"))
}

/// The run's noise canaries so far: the client's, and each server node's by its canary's
/// address; a probe is judged against the earlier ones of its own machine.
#[derive(Default)]
pub struct Probes {
    client: Vec<CanaryFigures>,
    servers: BTreeMap<String, Vec<CanaryFigures>>,
}

impl Probes {
    /// Records the canaries taken before `result`'s cell (the client's `client`, the server
    /// nodes' `servers`) with their deviations from the earlier ones, then keeps them. Under
    /// [`CanaryPolicy::Void`] a deviating canary makes a valid cell invalid; returns whether it
    /// did.
    pub fn keep(
        &mut self,
        result: &mut CellResult,
        client: Option<CanaryFigures>,
        servers: Vec<(String, Result<CanaryFigures, String>)>,
        policy: CanaryPolicy,
    ) -> bool {
        // What deviated, as the reason names it, and by how much.
        let mut deviated: Vec<(String, f64)> = Vec::new();
        if let Some(figures) = client {
            let deviation = canary::deviation_beyond(&figures, &self.client);
            self.client.push(figures);
            if let Some(d) = &deviation {
                deviated.push((format!("the client's {}", d.figure), d.percent));
            }
            result.canary = Some(CanaryRecord { figures, deviation });
        }
        for (address, answer) in servers {
            let mut kept = ServerCanary {
                address: address.clone(),
                figures: None,
                deviation: None,
                error: None,
            };
            match answer {
                Ok(figures) => {
                    let earlier = self.servers.entry(address.clone()).or_default();
                    kept.deviation = canary::deviation_beyond(&figures, earlier);
                    earlier.push(figures);
                    kept.figures = Some(figures);
                    if let Some(d) = &kept.deviation {
                        let what = format!("the {} of the server node at {address}", d.figure);
                        deviated.push((what, d.percent));
                    }
                }
                Err(e) => kept.error = Some(e),
            }
            result.server_canaries.push(kept);
        }
        let void = policy == CanaryPolicy::Void && result.is_valid() && !deviated.is_empty();
        if void {
            for (what, percent) in deviated {
                result.invalid_reasons.push(format!(
                    "noise canary: {what} was {:.0}% {} than the run's median before the cell \
                     (canaryPolicy Void; its slot runs again)",
                    percent.abs(),
                    if percent > 0.0 { "slower" } else { "faster" }
                ));
            }
        }
        void
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::canary::CanaryDeviation;
    use crate::result::testing::slotted_result;

    fn figures(cpu_us: f64) -> CanaryFigures {
        CanaryFigures {
            cpu_us,
            memory_gbps: 10.0,
            loopback_rtt_us: Some(20.0),
        }
    }

    #[test]
    fn each_machine_is_judged_against_its_own_earlier_probes() {
        let mut probes = Probes::default();
        let (a, b) = ("m0:27117".to_owned(), "m1:27117".to_owned());
        // Three cells: m0's node runs at 100 µs, m1's at 1000 µs, the client at 50 µs.
        for _ in 0..3 {
            let mut r = slotted_result("t", 1, 100.0);
            let servers = vec![
                (a.clone(), Ok(figures(100.0))),
                (b.clone(), Ok(figures(1000.0))),
            ];
            assert!(!probes.keep(&mut r, Some(figures(50.0)), servers, CanaryPolicy::Void));
            assert!(r.server_canaries.iter().all(|s| s.deviation.is_none()));
        }
        // m1 at 1300 µs is 30 % slower than its median (past 25 %); m0 did not answer this
        // time, which is kept, not judged.
        let mut r = slotted_result("t", 2, 100.0);
        let servers = vec![
            (a.clone(), Err("connecting: refused".to_owned())),
            (b.clone(), Ok(figures(1300.0))),
        ];
        assert!(!probes.keep(
            &mut r,
            Some(figures(50.0)),
            servers.clone(),
            CanaryPolicy::Flag
        ));
        assert!(r.is_valid());
        assert_eq!(r.canary.as_ref().unwrap().deviation, None);
        assert_eq!(
            r.server_canaries,
            [
                ServerCanary {
                    address: a.clone(),
                    figures: None,
                    deviation: None,
                    error: Some("connecting: refused".to_owned()),
                },
                ServerCanary {
                    address: b.clone(),
                    figures: Some(figures(1300.0)),
                    deviation: Some(CanaryDeviation {
                        figure: "CPU".to_owned(),
                        percent: 30.000000000000004,
                    }),
                    error: None,
                },
            ]
        );
        // Under Void the same deviation leaves the cell out, naming the node.
        let mut r = slotted_result("t", 3, 100.0);
        assert!(probes.keep(&mut r, Some(figures(50.0)), servers, CanaryPolicy::Void));
        assert!(!r.is_valid());
        assert_eq!(
            r.invalid_reasons,
            [
                "noise canary: the CPU of the server node at m1:27117 was 30% slower than the \
                 run's median before the cell (canaryPolicy Void; its slot runs again)"
            ]
        );
    }
}
