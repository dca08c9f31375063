//! What a server could not give and what the runner did instead, named in the result: a
//! digest computed by the runner where the server has no `dbHash`, server CPU or cache figures
//! left out where `serverStatus` has no `extra_info` or `wiredTiger`, no plans where `explain`
//! gives none, no election check where the server has no replication. Read from the result's
//! own figures, so that a fallback is never silent and never claimed without its evidence.

use super::document::CellResult;
use super::server::{Fallback, MemberStats};

/// Digest method of the server's own `dbHash`.
const DB_HASH: &str = "dbHash";

/// The fallbacks a complete cell's figures show, in a fixed order.
pub fn fallbacks(result: &CellResult) -> Vec<Fallback> {
    let mut out = Vec::new();
    let mut add = |capability: &str, fallback: &str| {
        out.push(Fallback {
            capability: capability.to_owned(),
            fallback: fallback.to_owned(),
        });
    };
    if let Some(digest) = &result.dataset.digest
        && digest.method != DB_HASH
    {
        add(
            DB_HASH,
            &format!(
                "dataset digest by the runner ({}) over every document",
                digest.method
            ),
        );
    }
    if let Some(stats) = &result.server_stats
        && !stats.members.is_empty()
    {
        let members = || stats.members.iter().map(|m| &m.delta);
        let without = || {
            stats
                .members
                .iter()
                .filter(|m| m.delta.process_counters.user_time_us.is_none())
        };
        if without().next().is_some() {
            add("serverStatus.extra_info", &cpu_fallback(without()));
        }
        if members().any(|d| d.cache_after.maximum_bytes_configured.is_none()) {
            add(
                "serverStatus.wiredTiger",
                "no cache figures (cache fill and misses null)",
            );
        }
        if stats.primary.is_none() {
            add(
                "replSetGetStatus",
                "no replication: no lag, election or restart check",
            );
        }
    }
    if !result.explain.is_empty() && result.explain.values().all(|e| e.stages.is_empty()) {
        add(
            "explain.winningPlan",
            "no query plans (explain answered without a winning plan)",
        );
    }
    out
}

/// What stood in for the CPU figures of `members`, which have no `extra_info`: the operating
/// system's reading of each, or nothing (and why, when a reading was tried).
fn cpu_fallback<'m>(mut members: impl Iterator<Item = &'m MemberStats>) -> String {
    let mut sources: Vec<String> = Vec::new();
    let mut missing = None;
    for m in members.by_ref() {
        match &m.os_cpu {
            Some(os) => {
                let source = format!("{}, read by {}", os.source.label(), os.read_by);
                if !sources.contains(&source) {
                    sources.push(source);
                }
            }
            None => {
                missing = Some(m);
                break;
            }
        }
    }
    match missing {
        None => format!(
            "server CPU from the operating system ({})",
            sources.join("; ")
        ),
        Some(m) => match &m.os_cpu_error {
            Some(e) => format!(
                "no server CPU per operation (cpuUsPerOp null): the operating system's reading \
                 of {} failed: {e}",
                m.member
            ),
            None => "no server CPU per operation (cpuUsPerOp null)".to_owned(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::server::{
        CpuSource, ExplainSummary, FoundBy, OsCpuDelta, ServerStatusDelta,
    };
    use crate::result::{DatasetDigest, MemberStats, ServerStats, testing};

    fn member(cpu: Option<u64>, cache: Option<u64>) -> MemberStats {
        let mut delta = ServerStatusDelta::default();
        delta.process_counters.user_time_us = cpu;
        delta.cache_after.maximum_bytes_configured = cache;
        MemberStats {
            member: "a:27017".into(),
            delta,
            load: Default::default(),
            cache_fill: None,
            os_cpu: None,
            os_cpu_error: None,
            cpu_source: cpu.map(|_| CpuSource::ServerStatus),
        }
    }

    fn result(method: &str, members: Vec<MemberStats>, primary: Option<&str>) -> CellResult {
        let mut r = testing::sample_result("t", 1, 100.0);
        r.dataset.digest = Some(DatasetDigest {
            method: method.into(),
            value: "00".into(),
            documents: 1,
        });
        r.server_stats = Some(ServerStats {
            members,
            primary: primary.map(str::to_owned),
            ..ServerStats::default()
        });
        r.explain = [(
            "F1".to_owned(),
            ExplainSummary {
                stages: vec!["FETCH".into(), "IXSCAN".into()],
                ..ExplainSummary::default()
            },
        )]
        .into();
        r
    }

    #[test]
    fn a_server_with_every_capability_needs_no_fallback() {
        let r = result(
            "dbHash",
            vec![member(Some(5), Some(1 << 30))],
            Some("a:27017"),
        );
        assert_eq!(fallbacks(&r), []);
    }

    #[test]
    fn each_missing_capability_is_named_with_what_was_done_instead() {
        let mut r = result("sha256-sum", vec![member(None, None)], None);
        r.explain.insert("F2".into(), ExplainSummary::default());
        r.explain.get_mut("F1").unwrap().stages.clear();
        let got: Vec<(String, String)> = fallbacks(&r)
            .into_iter()
            .map(|f| (f.capability, f.fallback))
            .collect();
        let want = [
            (
                "dbHash",
                "dataset digest by the runner (sha256-sum) over every document",
            ),
            (
                "serverStatus.extra_info",
                "no server CPU per operation (cpuUsPerOp null)",
            ),
            (
                "serverStatus.wiredTiger",
                "no cache figures (cache fill and misses null)",
            ),
            (
                "replSetGetStatus",
                "no replication: no lag, election or restart check",
            ),
            (
                "explain.winningPlan",
                "no query plans (explain answered without a winning plan)",
            ),
        ]
        .map(|(c, f)| (c.to_owned(), f.to_owned()));
        assert_eq!(got, want);
    }

    #[test]
    fn one_member_without_cpu_figures_is_enough_to_name_it() {
        let r = result(
            "dbHash",
            vec![member(Some(5), Some(1)), member(None, Some(1))],
            Some("a:27017"),
        );
        let names: Vec<String> = fallbacks(&r).into_iter().map(|f| f.capability).collect();
        assert_eq!(names, ["serverStatus.extra_info"]);
    }

    #[test]
    fn cpu_from_the_operating_system_is_named_as_what_stood_in() {
        let os = OsCpuDelta {
            source: CpuSource::Procfs,
            read_by: "canary 10.0.0.5:27117".into(),
            process: "mongod".into(),
            pid: 7,
            found_by: FoundBy::ListeningPort,
            user_us: 1,
            system_us: 1,
        };
        let mut read = member(None, Some(1));
        read.os_cpu = Some(os);
        let r = result("dbHash", vec![read.clone(), read.clone()], Some("a:27017"));
        let got: Vec<String> = fallbacks(&r).into_iter().map(|f| f.fallback).collect();
        assert_eq!(
            got,
            ["server CPU from the operating system (procfs, read by canary 10.0.0.5:27117)"]
        );
        let mut failed = member(None, Some(1));
        failed.member = "b:27017".into();
        failed.os_cpu_error = Some("no process listens on port 27017".into());
        let r = result("dbHash", vec![read, failed], Some("a:27017"));
        let got: Vec<String> = fallbacks(&r).into_iter().map(|f| f.fallback).collect();
        assert_eq!(
            got,
            [
                "no server CPU per operation (cpuUsPerOp null): the operating system's reading \
                 of b:27017 failed: no process listens on port 27017"
            ]
        );
    }
}
