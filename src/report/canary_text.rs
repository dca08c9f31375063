//! The noise canaries in the text and Markdown reports (docs/results.md, "Noise canaries"): one
//! line per machine (the client, each server node) saying how many cells it was probed before
//! and how many measured phases it was sampled during, how many of each deviated and the most
//! steal it showed in a second; then one line per deviation, naming the cell.

use std::collections::BTreeMap;

use crate::measure::canary::CanaryDeviation;
use crate::measure::phase_canary::{PhaseCanary, STEAL_TIME};
use crate::result::CellResult;

/// What one machine's canary showed over the cells.
#[derive(Default)]
struct Machine {
    probed: u32,
    probes_deviated: u32,
    unanswered: u32,
    phases: u32,
    phases_deviated: u32,
    worst_steal: Option<f64>,
}

impl Machine {
    fn probe(&mut self, deviation: Option<&CanaryDeviation>) {
        self.probed += 1;
        self.probes_deviated += u32::from(deviation.is_some());
    }

    fn phase(&mut self, during: &PhaseCanary) {
        if during.seconds == 0 {
            return;
        }
        self.phases += 1;
        self.phases_deviated += u32::from(during.deviation.is_some());
        if let Some(s) = during.steal_percent_max {
            self.worst_steal = Some(self.worst_steal.map_or(s, |w: f64| w.max(s)));
        }
    }

    fn line(&self, name: &str) -> String {
        let unanswered = match self.unanswered {
            0 => String::new(),
            n => format!(", {n} unanswered"),
        };
        let steal = self.worst_steal.map_or(String::new(), |s| {
            format!(", steal at most {s:.1}% in a second")
        });
        format!(
            "noise canary of the {name}: probed before {}, {} deviated{unanswered}; sampled \
             during {}, {} deviated{steal}",
            counted(self.probed, "cell"),
            self.probes_deviated,
            counted(self.phases, "measured phase"),
            self.phases_deviated
        )
    }
}

/// `1 cell`, `2 cells`.
fn counted(n: u32, what: &str) -> String {
    match n {
        1 => format!("1 {what}"),
        _ => format!("{n} {what}s"),
    }
}

/// A deviation as a line names it: `CPU +30.0%`, `steal time 6.0% of the CPUs' time`.
fn deviation_text(d: &CanaryDeviation) -> String {
    if d.figure == STEAL_TIME {
        format!("{} {:.1}% of the CPUs' time", d.figure, d.percent)
    } else {
        format!("{} {:+.1}%", d.figure, d.percent)
    }
}

/// The lines of `results`' canaries, `\n` ended; empty when no cell has a canary.
pub fn render_canaries(results: &[CellResult]) -> String {
    let mut client = Machine::default();
    let mut servers: BTreeMap<&str, Machine> = BTreeMap::new();
    let mut deviations = Vec::new();
    let mut deviated = |r: &CellResult, whose: &str, when: &str, d: &Option<CanaryDeviation>| {
        if let Some(d) = d {
            deviations.push(format!("{}: {whose} {when}: {}", r.cell, deviation_text(d)));
        }
    };
    for r in results {
        if let Some(c) = &r.canary {
            client.probe(c.deviation.as_ref());
            deviated(r, "the client", "before the cell", &c.deviation);
        }
        if let Some(p) = &r.phase_canary {
            client.phase(p);
            deviated(r, "the client", "during the phase", &p.deviation);
        }
        for s in &r.server_canaries {
            let node = servers.entry(&s.address).or_default();
            match &s.error {
                Some(_) => node.unanswered += 1,
                None => node.probe(s.deviation.as_ref()),
            }
            let whose = format!("the server node {}", s.address);
            deviated(r, &whose, "before the cell", &s.deviation);
        }
        for s in &r.server_phase_canaries {
            servers.entry(&s.address).or_default().phase(&s.during);
            let whose = format!("the server node {}", s.address);
            deviated(r, &whose, "during the phase", &s.during.deviation);
        }
    }
    let mut out = String::new();
    if client.probed + client.phases > 0 {
        out.push_str(&client.line("client"));
        out.push('\n');
    }
    for (address, node) in &servers {
        out.push_str(&node.line(&format!("server node {address}")));
        out.push('\n');
    }
    for line in deviations {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::canary::{CanaryFigures, CanaryRecord, ServerCanary};
    use crate::measure::phase_canary::{CPU_DURING_PHASE, ServerPhaseCanary};
    use crate::result::testing::slotted_result;

    fn phase(steal_max: f64, deviation: Option<CanaryDeviation>) -> PhaseCanary {
        PhaseCanary {
            seconds: 10,
            steal_percent: Some(steal_max / 2.0),
            steal_percent_max: Some(steal_max),
            cpu_us: Some(400.0),
            deviation,
        }
    }

    fn deviation(figure: &str, percent: f64) -> Option<CanaryDeviation> {
        Some(CanaryDeviation {
            figure: figure.to_owned(),
            percent,
        })
    }

    #[test]
    fn each_machine_is_summed_up_and_each_deviation_named() {
        assert_eq!(render_canaries(&[slotted_result("t", 1, 100.0)]), "");
        let figures = CanaryFigures {
            cpu_us: 5000.0,
            memory_gbps: 10.0,
            loopback_rtt_us: None,
        };
        let mut cells = Vec::new();
        for slot in 1..=2 {
            let mut r = slotted_result("t", slot, 100.0);
            r.canary = Some(CanaryRecord {
                figures,
                deviation: None,
            });
            r.phase_canary = Some(phase(0.5 * f64::from(slot), None));
            r.server_canaries = vec![ServerCanary {
                address: "m0:27117".into(),
                figures: (slot == 1).then_some(figures),
                deviation: None,
                error: (slot == 2).then(|| "connecting: refused".to_owned()),
            }];
            let slowed = (slot == 2).then_some(101.25);
            r.server_phase_canaries = vec![ServerPhaseCanary {
                address: "m0:27117".into(),
                during: phase(4.0, slowed.and_then(|p| deviation(CPU_DURING_PHASE, p))),
                error: None,
            }];
            cells.push(r);
        }
        cells[0].phase_canary = Some(phase(6.0, deviation(STEAL_TIME, 3.0)));
        let second = cells[1].cell.to_string();
        let first = cells[0].cell.to_string();
        assert_eq!(
            render_canaries(&cells),
            format!(
                "noise canary of the client: probed before 2 cells, 0 deviated; sampled during 2 \
                 measured phases, 1 deviated, steal at most 6.0% in a second\n\
                 noise canary of the server node m0:27117: probed before 1 cell, 0 deviated, 1 \
                 unanswered; sampled during 2 measured phases, 1 deviated, steal at most 4.0% \
                 in a second\n\
                 {first}: the client during the phase: steal time 3.0% of the CPUs' time\n\
                 {second}: the server node m0:27117 during the phase: CPU during the measured \
                 phase +101.2%\n"
            )
        );
    }
}
