//! The run's noise canaries (docs/results.md, "Noise canaries"): at its start the runner takes
//! reference probes of the client and of every server node's canary; before each cell it
//! probes the client and asks the canary beside every member of the cell's target
//! (`mongobench canary --serve`, the member pod's sidecar) for a probe of its node, one after
//! another so that no two probes share a machine's time; each probe is judged against the
//! reference and earlier probes of its own machine, and what the client saw during the
//! measured phase (steal time, a light CPU probe) against the run's threshold and its earlier
//! phases. The threshold comes from the run's precision goal.

use std::collections::BTreeMap;

use crate::api::CanaryPolicy;
use crate::measure::canary::{
    self, CanaryDeviation, CanaryFigures, CanaryRecord, CanaryRequest, ServerCanary,
};
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

/// Reference probes taken of each machine at the run's start.
pub const REFERENCE_PROBES: usize = canary::MIN_PROBES;

/// The run's noise canaries so far: the client's, and each server node's by its canary's
/// address; a probe is judged against the reference and earlier ones of its own machine.
#[derive(Default)]
pub struct Probes {
    /// The deviation that flags a cell (a fraction).
    threshold: f64,
    client: Vec<CanaryFigures>,
    servers: BTreeMap<String, Vec<CanaryFigures>>,
    /// The light CPU probe's median of each earlier measured phase, µs.
    phases: Vec<f64>,
}

impl Probes {
    /// No probes yet, flagging deviations beyond `threshold` (a fraction).
    pub fn new(threshold: f64) -> Probes {
        Probes {
            threshold,
            ..Probes::default()
        }
    }

    /// Takes the reference probes at the run's start: [`REFERENCE_PROBES`] of the client and
    /// of each server canary of `addresses`, so that the first cell is judged too.
    pub async fn reference(&mut self, addresses: &[String]) {
        for _ in 0..REFERENCE_PROBES {
            if let Ok(figures) = tokio::task::spawn_blocking(canary::probe).await {
                self.client.push(figures);
            }
            for (address, answer) in probe_all(addresses).await {
                if let Ok(figures) = answer {
                    self.servers.entry(address).or_default().push(figures);
                }
            }
        }
    }

    /// Judges what the client's canary saw during `result`'s measured phase: steal time past
    /// the threshold, or the light CPU probe past it from the median of the run's earlier
    /// phases. Returns what deviated, as the reason names it, and by how much.
    fn judge_phase(&mut self, result: &mut CellResult) -> Option<(String, f64)> {
        let during = result.phase_canary.as_mut()?;
        let earlier = median(&self.phases);
        if let Some(cpu) = during.cpu_us {
            self.phases.push(cpu);
        }
        let steal = during
            .steal_percent
            .filter(|s| s / 100.0 > self.threshold)
            .map(|s| ("steal time".to_owned(), s));
        let cpu = during
            .cpu_us
            .zip(earlier)
            .map(|(cpu, m)| cpu / m - 1.0)
            .filter(|f| f.abs() > self.threshold)
            .map(|f| ("CPU during the measured phase".to_owned(), f * 100.0));
        let found = steal.or(cpu)?;
        during.deviation = Some(CanaryDeviation {
            figure: found.0.clone(),
            percent: found.1,
        });
        Some((format!("the client's {}", found.0), found.1))
    }

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
        deviated.extend(self.judge_phase(result));
        if let Some(figures) = client {
            let deviation = canary::deviation_beyond(&figures, &self.client, self.threshold);
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
                    kept.deviation = canary::deviation_beyond(&figures, earlier, self.threshold);
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
                result.invalid_reasons.push(if what.ends_with("steal time") {
                    format!(
                        "noise canary: {what} was {percent:.1}% of the CPUs' time during the \
                         measured phase (canaryPolicy Void; its slot runs again)"
                    )
                } else {
                    format!(
                        "noise canary: {what} was {:.0}% {} than the run's median (canaryPolicy \
                         Void; its slot runs again)",
                        percent.abs(),
                        if percent > 0.0 { "slower" } else { "faster" }
                    )
                });
            }
        }
        void
    }
}

/// The median of `values`; `None` for none.
fn median(values: &[f64]) -> Option<f64> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::phase_canary::PhaseCanary;
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
        let mut probes = Probes::new(canary::DEVIATION_THRESHOLD);
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
                 run's median (canaryPolicy Void; its slot runs again)"
            ]
        );
    }

    fn phase(steal_percent: f64, cpu_us: f64) -> PhaseCanary {
        PhaseCanary {
            seconds: 10,
            steal_percent: Some(steal_percent),
            steal_percent_max: Some(steal_percent),
            cpu_us: Some(cpu_us),
            deviation: None,
        }
    }

    #[test]
    fn a_host_that_slowed_during_the_phase_is_flagged_against_the_goal() {
        // A 3 % goal: a threshold of 3 %.
        let mut probes = Probes::new(canary::threshold(Some(3.0)));
        let mut cell = |slot, during| {
            let mut r = slotted_result("t", slot, 100.0);
            r.phase_canary = Some(during);
            let void = probes.keep(&mut r, None, Vec::new(), CanaryPolicy::Void);
            (void, r)
        };
        // The first phase sets the reference of the light probe; 1 % steal is within 3 %.
        let (void, first) = cell(1, phase(1.0, 400.0));
        assert!(!void && first.is_valid(), "{first:?}");
        // 2 % slower than the first phase: within; 5 % slower: past the goal.
        assert!(!cell(2, phase(0.5, 408.0)).0);
        let (void, slow) = cell(3, phase(0.5, 420.0));
        assert!(void);
        assert_eq!(
            slow.phase_canary.unwrap().deviation,
            Some(CanaryDeviation {
                figure: "CPU during the measured phase".into(),
                percent: 3.960396039603964,
            })
        );
        assert_eq!(
            slow.invalid_reasons,
            [
                "noise canary: the client's CPU during the measured phase was 4% slower than the \
              run's median (canaryPolicy Void; its slot runs again)"
            ]
        );
        // 6 % of the CPUs' time stolen: past the goal whatever the probe.
        let (void, stolen) = cell(4, phase(6.0, 404.0));
        assert!(void);
        assert_eq!(
            stolen.invalid_reasons,
            [
                "noise canary: the client's steal time was 6.0% of the CPUs' time during the \
              measured phase (canaryPolicy Void; its slot runs again)"
            ]
        );
        // Without a goal the same phase is within the 25 % of old.
        let mut lenient = Probes::new(canary::threshold(None));
        let mut r = slotted_result("t", 1, 100.0);
        r.phase_canary = Some(phase(6.0, 404.0));
        assert!(!lenient.keep(&mut r, None, Vec::new(), CanaryPolicy::Void));
    }
}
