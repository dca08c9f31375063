//! The run's noise canaries (docs/results.md, "Noise canaries"): at its start the runner takes
//! reference probes of the client and of every server node's canary; before each cell it
//! probes the client and asks the canary beside every member of the cell's target
//! (`mongobench canary --serve`, the member pod's sidecar) for a probe of its node, one after
//! another so that no two probes share a machine's time; each probe is judged against the
//! reference and earlier probes of its own machine, and what the client saw during the
//! measured phase (steal time, a light CPU probe) against the run's threshold and its earlier
//! phases, and so is what each server node's canary saw during it. The threshold comes from the
//! run's precision goal.

use std::collections::BTreeMap;

use crate::api::CanaryPolicy;
use crate::measure::canary::{
    self, CanaryDeviation, CanaryFigures, CanaryRecord, CanaryRequest, ServerCanary,
};
use crate::measure::phase_canary::{PhaseCanary, STEAL_TIME};
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
    /// The client's light CPU probe's median of each earlier measured phase, µs.
    phases: Vec<f64>,
    /// Each server node's, by its canary's address.
    server_phases: BTreeMap<String, Vec<f64>>,
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

    /// Judges what the canaries saw during `result`'s measured phase, the client's and each
    /// server node's, by one rule ([`PhaseCanary::judge`]) against the run's threshold and the
    /// earlier phases of the same machine; then keeps each light probe's median among them.
    fn judge_phases(&mut self, result: &mut CellResult) -> Vec<Deviated> {
        let threshold = self.threshold;
        let mut out = Vec::new();
        if let Some(during) = result.phase_canary.as_mut() {
            let found = judge_kept(during, &mut self.phases, threshold);
            out.extend(found.map(|d| Deviated::of("the client's", "", d)));
        }
        for node in &mut result.server_phase_canaries {
            let earlier = self.server_phases.entry(node.address.clone()).or_default();
            let found = judge_kept(&mut node.during, earlier, threshold);
            let whose = format!(" of the server node at {}", node.address);
            out.extend(found.map(|d| Deviated::of("the", &whose, d)));
        }
        out
    }

    /// Records the canaries taken before `result`'s cell (the client's `client`, the server
    /// nodes' `servers`) with their deviations from the earlier ones, then keeps them; judges
    /// those of its measured phase. Under [`CanaryPolicy::Void`] a deviating canary makes a
    /// valid cell invalid; returns whether it did.
    pub fn keep(
        &mut self,
        result: &mut CellResult,
        client: Option<CanaryFigures>,
        servers: Vec<(String, Result<CanaryFigures, String>)>,
        policy: CanaryPolicy,
    ) -> bool {
        let mut deviated = self.judge_phases(result);
        if let Some(figures) = client {
            let deviation = canary::deviation_beyond(&figures, &self.client, self.threshold);
            self.client.push(figures);
            if let Some(d) = &deviation {
                deviated.push(Deviated::of("the client's", "", d.clone()));
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
                        let whose = format!(" of the server node at {address}");
                        deviated.push(Deviated::of("the", &whose, d.clone()));
                    }
                }
                Err(e) => kept.error = Some(e),
            }
            result.server_canaries.push(kept);
        }
        let void = policy == CanaryPolicy::Void && result.is_valid() && !deviated.is_empty();
        if void {
            result
                .invalid_reasons
                .extend(deviated.iter().map(Deviated::reason));
        }
        void
    }
}

/// Judges `during` against `earlier` (the light probe's medians of its machine's earlier
/// phases), then keeps its median among them.
fn judge_kept(
    during: &mut PhaseCanary,
    earlier: &mut Vec<f64>,
    threshold: f64,
) -> Option<CanaryDeviation> {
    let found = during.judge(earlier, threshold);
    earlier.extend(during.cpu_us);
    found
}

/// A canary's figure that deviated: what it is, as a reason names it, and by how much.
struct Deviated {
    what: String,
    percent: f64,
    /// Steal time: the percent is a share of the CPUs' time, not a distance from a median.
    steal: bool,
}

impl Deviated {
    /// `before` the figure's name, `after` it: "the client's CPU", "the CPU of the server
    /// node at m0:27117".
    fn of(before: &str, after: &str, d: CanaryDeviation) -> Deviated {
        Deviated {
            what: format!("{before} {}{after}", d.figure),
            percent: d.percent,
            steal: d.figure == STEAL_TIME,
        }
    }

    /// The reason a cell it voids is invalid.
    fn reason(&self) -> String {
        let (what, percent) = (&self.what, self.percent);
        if self.steal {
            format!(
                "noise canary: {what} was {percent:.1}% of the CPUs' time during the measured \
                 phase (canaryPolicy Void; its slot runs again)"
            )
        } else {
            format!(
                "noise canary: {what} was {:.0}% {} than the run's median (canaryPolicy Void; \
                 its slot runs again)",
                percent.abs(),
                if percent > 0.0 { "slower" } else { "faster" }
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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

    fn node(address: &str, during: PhaseCanary) -> crate::measure::phase_canary::ServerPhaseCanary {
        crate::measure::phase_canary::ServerPhaseCanary {
            address: address.to_owned(),
            during,
            error: None,
        }
    }

    #[test]
    fn a_server_node_that_slowed_during_the_phase_is_flagged_as_the_client_is() {
        let mut probes = Probes::new(canary::threshold(Some(3.0)));
        let mut cell = |slot, m0, m1, policy| {
            let mut r = slotted_result("t", slot, 100.0);
            r.phase_canary = Some(phase(0.0, 50.0));
            r.server_phase_canaries = vec![node("m0:27117", m0), node("m1:27117", m1)];
            let void = probes.keep(&mut r, None, Vec::new(), policy);
            (void, r)
        };
        // Each node's first phase sets its own reference: m0 runs its probe at 400 µs, m1 at
        // 800 µs, and neither is judged against the other.
        let (void, first) = cell(1, phase(0.5, 400.0), phase(0.5, 800.0), CanaryPolicy::Void);
        assert!(
            !void && first.is_valid() && !first.canary_flagged(),
            "{first:?}"
        );
        // m1 4 % slower than its 800 µs: past the 3 % goal. Under Flag it is only recorded.
        let (void, flagged) = cell(2, phase(0.5, 404.0), phase(0.5, 832.0), CanaryPolicy::Flag);
        // Kept in the figures, and counted beside the verdict it feeds.
        assert!(!void && flagged.is_valid() && flagged.canary_flagged());
        let during: Vec<_> = flagged
            .server_phase_canaries
            .iter()
            .map(|n| n.during.deviation.clone())
            .collect();
        assert_eq!(
            during,
            [
                None,
                Some(CanaryDeviation {
                    figure: "CPU during the measured phase".into(),
                    percent: 4.0000000000000036,
                })
            ]
        );
        assert_eq!(flagged.phase_canary.unwrap().deviation, None);
        // Under Void a node's steal voids the cell, its reason naming the node; the other
        // node's probe 5 % faster than its median (402 µs) is named too.
        let (void, stolen) = cell(3, phase(0.5, 381.9), phase(4.0, 816.0), CanaryPolicy::Void);
        assert!(void && !stolen.is_valid());
        assert_eq!(
            stolen.invalid_reasons,
            [
                "noise canary: the CPU during the measured phase of the server node at \
                 m0:27117 was 5% faster than the run's median (canaryPolicy Void; its slot runs \
                 again)",
                "noise canary: the steal time of the server node at m1:27117 was 4.0% of the \
                 CPUs' time during the measured phase (canaryPolicy Void; its slot runs again)"
            ]
        );
        // A node whose canary never answered has nothing to judge.
        let silent = PhaseCanary {
            seconds: 0,
            steal_percent: None,
            steal_percent_max: None,
            cpu_us: None,
            deviation: None,
        };
        let (void, _) = cell(4, silent.clone(), silent, CanaryPolicy::Void);
        assert!(!void);
    }
}
