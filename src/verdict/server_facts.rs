//! What each target is, from its servers' own answers (docs/results.md, "What differs"): the
//! facts every comparison names beside a target, and the differences from the baseline that a
//! comparison of versions did not ask about (topology, engine, cache, CPUs, architecture).

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::result::CellResult;

/// A target's server as its cells recorded it. A fact its cells disagree on reads `a / b`
/// (numbers: absent); a fact no cell recorded is absent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct ServerFacts {
    /// `MongoDB`, `Percona Server for MongoDB`, `FerretDB`, … (`server.distribution`).
    pub distribution: Option<String>,
    /// The version it reports (`buildInfo.version`).
    pub version: Option<String>,
    /// `replicaSet`, `standalone` or `mongos` (the set's name left out).
    pub topology: Option<String>,
    /// `serverStatus.storageEngine.name`.
    pub storage_engine: Option<String>,
    /// The WiredTiger cache size, bytes.
    pub cache_bytes: Option<u64>,
    /// Cores available to a member's server process (the most of any member).
    pub cpus: Option<u32>,
    /// The members' CPU architecture (`x86-64`, `arm64`).
    pub architecture: Option<String>,
}

impl ServerFacts {
    /// The facts `cells` (one target's) agree on.
    pub fn of<'r>(cells: impl IntoIterator<Item = &'r CellResult> + Clone) -> ServerFacts {
        let strings =
            |f: fn(&CellResult) -> Option<String>| agreed(cells.clone().into_iter().filter_map(f));
        let number = |f: fn(&CellResult) -> Option<u64>| {
            let values: BTreeSet<u64> = cells.clone().into_iter().filter_map(f).collect();
            (values.len() == 1)
                .then(|| values.into_iter().next())
                .flatten()
        };
        ServerFacts {
            distribution: strings(|c| c.server.distribution.clone()),
            version: strings(|c| c.server.version.clone()),
            topology: strings(|c| c.server.topology.as_deref().map(topology_kind)),
            storage_engine: strings(|c| c.server.storage_engine.clone()),
            cache_bytes: number(|c| c.server.cache_bytes),
            cpus: number(|c| cpus(c).map(u64::from)).and_then(|n| u32::try_from(n).ok()),
            architecture: strings(architecture),
        }
    }

    /// Distribution and version, the headline's short form: `Percona Server for MongoDB
    /// 8.0.4-2`; `None` when neither is known.
    pub fn short(&self) -> Option<String> {
        match (&self.distribution, &self.version) {
            (Some(d), Some(v)) => Some(format!("{d} {v}")),
            (d, v) => d.clone().or_else(|| v.clone()),
        }
    }

    /// Every known fact in one phrase: `SecantusDB 8.2.11, replica set, wiredTiger, cache
    /// 1.0 GiB, 2 CPUs, x86-64`; `-` when nothing is known.
    pub fn describe(&self) -> String {
        let parts: Vec<String> = [
            self.short(),
            self.topology.as_deref().map(topology_words),
            self.storage_engine.clone(),
            self.cache_bytes.map(|b| format!("cache {}", bytes(b))),
            self.cpus
                .map(|n| format!("{n} CPU{}", if n == 1 { "" } else { "s" })),
            self.architecture.clone(),
        ]
        .into_iter()
        .flatten()
        .collect();
        if parts.is_empty() {
            "-".to_owned()
        } else {
            parts.join(", ")
        }
    }
}

/// What `target` and `baseline` differ in besides distribution and version, each as `what
/// target's vs baseline's` (`topology replica set vs standalone`); facts either side lacks
/// are not compared.
pub fn unasked_differences(target: &ServerFacts, baseline: &ServerFacts) -> Vec<String> {
    let text = |f: fn(&ServerFacts) -> Option<String>| (f(target), f(baseline));
    let pairs = [
        (
            "topology",
            text(|s| s.topology.as_deref().map(topology_words)),
        ),
        ("storage engine", text(|s| s.storage_engine.clone())),
        ("cache", text(|s| s.cache_bytes.map(bytes))),
        ("CPUs", text(|s| s.cpus.map(|n| n.to_string()))),
        ("architecture", text(|s| s.architecture.clone())),
    ];
    pairs
        .into_iter()
        .filter_map(|(what, pair)| match pair {
            (Some(t), Some(b)) if t != b => Some(format!("{what} {t} vs {b}")),
            _ => None,
        })
        .collect()
}

/// One value if all agree, `a / b` if they do not, `None` without any.
fn agreed(values: impl Iterator<Item = String>) -> Option<String> {
    let distinct: BTreeSet<String> = values.collect();
    (!distinct.is_empty()).then(|| distinct.into_iter().collect::<Vec<_>>().join(" / "))
}

/// `replicaSet:rs0` → `replicaSet`: the set's name is not a difference.
fn topology_kind(topology: &str) -> String {
    topology.split(':').next().unwrap_or(topology).to_owned()
}

fn topology_words(kind: &str) -> String {
    match kind {
        "replicaSet" => "replica set".to_owned(),
        "mongos" => "sharded (mongos)".to_owned(),
        other => other.to_owned(),
    }
}

fn cpus(c: &CellResult) -> Option<u32> {
    c.nodes
        .iter()
        .filter_map(|n| n.host.num_cores_available.or(n.host.num_cores))
        .max()
}

/// The members' architecture, one spelling for Go's and the kernel's names.
fn architecture(c: &CellResult) -> Option<String> {
    let names: BTreeSet<&str> = c
        .nodes
        .iter()
        .filter_map(|n| n.architecture.as_deref().or(n.host.cpu_arch.as_deref()))
        .map(|a| match a {
            "amd64" | "x86_64" => "x86-64",
            "arm64" | "aarch64" => "arm64",
            other => other,
        })
        .collect();
    agreed(names.into_iter().map(str::to_owned))
}

/// `1.0 GiB`, `512 MiB`.
fn bytes(b: u64) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    let mib = b as f64 / MIB;
    if mib >= 1024.0 {
        format!("{:.1} GiB", mib / 1024.0)
    } else {
        format!("{mib:.0} MiB")
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::result::testing::{cell, result_from};

    fn server(target: &str, rep: u32, version: &str, topology: &str, cores: u32) -> CellResult {
        let mut r = result_from(
            cell(target, "n2", "1M", rep),
            Duration::from_secs(1),
            &[("find", 100, Ok(()))],
            Some(100),
        );
        r.server.distribution = Some("MongoDB".into());
        r.server.version = Some(version.into());
        r.server.topology = Some(topology.into());
        r.server.storage_engine = Some("wiredTiger".into());
        r.server.cache_bytes = Some(1 << 30);
        for n in &mut r.nodes {
            n.host.num_cores_available = Some(cores);
            n.architecture = Some("amd64".into());
        }
        r
    }

    #[test]
    fn facts_read_what_the_cells_agree_on_and_name_what_they_do_not() {
        let a = server("m", 1, "8.0.4", "replicaSet:rs0", 4);
        let b = server("m", 2, "8.0.5", "replicaSet:rs1", 2);
        let facts = ServerFacts::of([&a, &b]);
        assert_eq!(facts.version.as_deref(), Some("8.0.4 / 8.0.5"));
        assert_eq!(facts.topology.as_deref(), Some("replicaSet"));
        assert_eq!(facts.cpus, None);
        assert_eq!(facts.architecture.as_deref(), Some("x86-64"));
        assert_eq!(
            ServerFacts::of([&a]).describe(),
            "MongoDB 8.0.4, replica set, wiredTiger, cache 1.0 GiB, 4 CPUs, x86-64"
        );
        assert_eq!(ServerFacts::default().describe(), "-");
    }

    #[test]
    fn differences_beyond_the_version_are_named_target_first() {
        let baseline = ServerFacts::of([&server("old", 1, "8.0.4", "standalone", 2)]);
        let mut target = ServerFacts::of([&server("new", 1, "9.0.0", "replicaSet:rs0", 4)]);
        target.storage_engine = None;
        assert_eq!(
            unasked_differences(&target, &baseline),
            ["topology replica set vs standalone", "CPUs 4 vs 2"]
        );
        assert!(unasked_differences(&baseline, &baseline).is_empty());
    }
}
