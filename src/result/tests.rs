use std::time::Duration;

use super::testing::sample_result;
use super::*;
use crate::measure::server::{HostInfoFigures, Regime, ServerStatusDelta};

#[test]
fn committed_json_schema_is_current() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/result.schema.json");
    let generated = serde_json::to_string_pretty(&CellResult::json_schema()).unwrap() + "\n";
    if std::env::var_os("MONGOBENCH_BLESS").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/result.schema.json differs from the result types: regenerate it with \
         `MONGOBENCH_BLESS=1 cargo test --lib committed_json_schema_is_current` and review \
         the diff (a removed or renamed field needs a new schemaVersion)"
    );
}

#[test]
fn every_document_field_is_declared_in_the_schema() {
    // Every top-level property of a complete and of an incomplete document is declared
    // in the schema, `status` and `incompleteReason` by the status variants (`oneOf`).
    let schema = CellResult::json_schema();
    let mut declared: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    for variant in schema["oneOf"].as_array().unwrap() {
        declared.extend(variant["properties"].as_object().unwrap().keys());
    }
    let mut result = sample_result("psmdb-8.0", 1, 10.0);
    for _ in 0..2 {
        let doc: serde_json::Value = serde_json::from_str(&result.to_json().unwrap()).unwrap();
        for key in doc.as_object().unwrap().keys() {
            assert!(declared.contains(&key), "{key} is not in the schema");
        }
        result.status = CellStatus::Incomplete {
            reason: "stopped".into(),
        };
    }
}

#[test]
fn json_round_trip_is_lossless() {
    let result = sample_result("psmdb-8.0", 1, 1000.0);
    let text = result.to_json().unwrap();
    let back = CellResult::from_json(&text).unwrap();
    assert_eq!(back.measured, result.measured);
    assert_eq!(back.server_stats, result.server_stats);
    assert_eq!(back.nodes, result.nodes);
    assert_eq!(back, result);
}

#[test]
fn status_is_a_flat_field_with_the_reason_beside_it() {
    let mut result = sample_result("psmdb-8.0", 1, 1000.0);
    let json: serde_json::Value = serde_json::from_str(&result.to_json().unwrap()).unwrap();
    assert_eq!(json["status"], "complete");
    assert_eq!(json["schemaVersion"], 2);
    assert!(json.get("incompleteReason").is_none());
    result.status = CellStatus::Incomplete {
        reason: "target psmdb-8.0: server closed the connection during the measured phase".into(),
    };
    let json: serde_json::Value = serde_json::from_str(&result.to_json().unwrap()).unwrap();
    assert_eq!(json["status"], "incomplete");
    assert_eq!(
        json["incompleteReason"],
        "target psmdb-8.0: server closed the connection during the measured phase"
    );
}

#[test]
fn absent_server_figures_serialize_as_null_not_zero() {
    let result = sample_result("ferretdb", 1, 1000.0);
    let json: serde_json::Value = serde_json::from_str(&result.to_json().unwrap()).unwrap();
    let member = &json["serverStats"]["members"][1];
    assert!(member["delta"]["processCounters"]["userTimeUs"].is_null());
    assert!(json["serverStats"]["cpuUsPerOp"].is_null());
    // hostInfo's own spelling of units is kept.
    let node = &json["nodes"][0];
    for key in ["memSizeMB", "memLimitMB", "cpuFrequencyMHz"] {
        assert!(
            node.get(key).is_some_and(serde_json::Value::is_null),
            "{key}"
        );
    }
    assert_eq!(node["numCores"], 4);
}

#[test]
fn other_schema_versions_are_refused_by_name() {
    let text = sample_result("psmdb-8.0", 1, 1000.0)
        .to_json()
        .unwrap()
        .replacen("\"schemaVersion\": 2", "\"schemaVersion\": 1", 1);
    let e = CellResult::from_json(&text).unwrap_err();
    assert_eq!(
        e.to_string(),
        "result document has schemaVersion 1; this mongobench reads schemaVersion 2: report \
         it with the mongobench release that wrote it"
    );
    assert!(matches!(
        CellResult::from_json("{\"status\": \"complete\"}"),
        Err(ResultError::MissingVersion)
    ));
}

#[test]
fn broken_invariants_are_refused() {
    let mut result = sample_result("psmdb-8.0", 1, 1000.0);
    result.measured = None;
    assert!(matches!(
        result.validate(),
        Err(ResultError::MissingMeasurement { .. })
    ));
    result.status = CellStatus::Incomplete { reason: " ".into() };
    assert!(matches!(
        result.validate(),
        Err(ResultError::EmptyReason { .. })
    ));
    result.status = CellStatus::Incomplete {
        reason: "killed".into(),
    };
    assert!(result.validate().is_ok());
    let e = result.require_complete().unwrap_err();
    assert!(e.to_string().contains("is incomplete (killed)"), "{e}");
}

#[test]
fn server_stats_compute_cpu_per_op_regime_and_cache_fill() {
    use crate::measure::server::{CacheCounters, CacheGauges, ProcessCounters};
    let host = HostInfoFigures {
        num_cores: Some(4),
        ..HostInfoFigures::default()
    };
    let delta = ServerStatusDelta {
        elapsed_ms: Some(10_000),
        process_counters: ProcessCounters {
            user_time_us: Some(30_000_000),
            system_time_us: Some(6_000_000),
            ..ProcessCounters::default()
        },
        cache_counters: CacheCounters {
            pages_read_into_cache: Some(50_000),
            ..CacheCounters::default()
        },
        cache_after: CacheGauges {
            bytes_in_cache: Some(3_000),
            maximum_bytes_configured: Some(4_000),
            tracked_dirty_bytes: None,
        },
        ..ServerStatusDelta::default()
    };
    // 36 s CPU over 10 s × 4 cores = 0.9 → CPU-bound; 36e6 µs / 200k ops = 180 µs/op.
    let stats = ServerStats::compute(
        [MemberFigures::reported(
            "m0:27017".to_string(),
            delta,
            Some(&host),
        )],
        Duration::from_secs(10),
        200_000,
    );
    assert_eq!(stats.cpu_us_per_op, Some(180.0));
    assert_eq!(stats.regime, Some(Regime::CpuBound));
    assert_eq!(stats.members[0].cache_fill, Some(0.75));
    assert_eq!(stats.members[0].load.pages_read_per_op, Some(0.25));
}

fn os_cpu(user_us: u64, system_us: u64) -> crate::measure::server::OsCpuDelta {
    crate::measure::server::OsCpuDelta {
        source: crate::measure::server::CpuSource::Procfs,
        read_by: "runner".into(),
        process: "secantusd-rs".into(),
        pid: 485,
        found_by: crate::measure::server::FoundBy::ListeningPort,
        user_us,
        system_us,
    }
}

#[test]
fn without_extra_info_the_operating_system_s_cpu_gives_cpu_per_op_and_the_regime() {
    use crate::measure::server::{CacheCounters, CpuSource};
    let host = HostInfoFigures {
        num_cores: Some(2),
        ..HostInfoFigures::default()
    };
    // SecantusDB: cache counters but no extra_info; 1.2 s of CPU over 2 s on 2 cores = 0.3;
    // 800 pages for 10k operations = 0.08 per operation: I/O-bound.
    let delta = ServerStatusDelta {
        elapsed_ms: Some(2_000),
        cache_counters: CacheCounters {
            pages_read_into_cache: Some(800),
            ..CacheCounters::default()
        },
        ..ServerStatusDelta::default()
    };
    let member = MemberFigures {
        os_cpu: Some(Ok(os_cpu(1_000_000, 200_000))),
        ..MemberFigures::reported("127.0.0.1:27020".into(), delta, Some(&host))
    };
    let stats = ServerStats::compute([member], Duration::from_secs(2), 10_000);
    assert_eq!(stats.cpu_us_per_op, Some(120.0));
    assert_eq!(stats.os_cpu_us_per_op, Some(120.0));
    assert_eq!(stats.cpu_sources, [CpuSource::Procfs]);
    assert_eq!(stats.members[0].cpu_source, Some(CpuSource::Procfs));
    assert_eq!(stats.members[0].load.cpu_utilization, Some(0.3));
    assert_eq!(stats.regime, Some(Regime::IoBound));
    assert!(stats.cpu_disagreements.is_empty());
    // A reading that failed leaves the member without CPU, and the cell without CPU per op.
    let failed = MemberFigures {
        os_cpu: Some(Err("no socket listens on port 27020".into())),
        ..MemberFigures::reported("127.0.0.1:27020".into(), delta, Some(&host))
    };
    let stats = ServerStats::compute([failed], Duration::from_secs(2), 10_000);
    assert_eq!((stats.cpu_us_per_op, stats.os_cpu_us_per_op), (None, None));
    assert!(stats.cpu_sources.is_empty());
    assert_eq!(
        stats.members[0].os_cpu_error.as_deref(),
        Some("no socket listens on port 27020")
    );
    assert_eq!(stats.members[0].cpu_source, None);
}

#[test]
fn two_sources_are_both_recorded_and_a_disagreement_is_flagged() {
    use crate::measure::server::{CpuDisagreement, CpuSource, ProcessCounters};
    let delta = |user_us: u64| ServerStatusDelta {
        process_counters: ProcessCounters {
            user_time_us: Some(user_us),
            system_time_us: Some(0),
            ..ProcessCounters::default()
        },
        ..ServerStatusDelta::default()
    };
    // m0: 10 s by serverStatus, 10.4 s by procfs (4 %: within 5 %); m1: 5 s against 6 s (20 %).
    let members = [
        MemberFigures {
            os_cpu: Some(Ok(os_cpu(10_000_000, 400_000))),
            ..MemberFigures::reported("m0:27017".into(), delta(10_000_000), None)
        },
        MemberFigures {
            os_cpu: Some(Ok(os_cpu(6_000_000, 0))),
            ..MemberFigures::reported("m1:27017".into(), delta(5_000_000), None)
        },
    ];
    let stats = ServerStats::compute(members, Duration::from_secs(10), 100_000);
    // The server's own figures count: (10 + 5) s / 100k; the OS's beside them: 16.4 s / 100k.
    assert_eq!(stats.cpu_us_per_op, Some(150.0));
    assert_eq!(stats.os_cpu_us_per_op, Some(164.0));
    assert_eq!(stats.cpu_sources, [CpuSource::ServerStatus]);
    assert_eq!(
        stats.cpu_disagreements,
        [CpuDisagreement {
            member: "m1:27017".into(),
            server_status_us: 5_000_000,
            os_us: 6_000_000,
            os_source: CpuSource::Procfs,
            percent: 20.0,
        }]
    );
    let json = serde_json::to_value(&stats).unwrap();
    assert_eq!(json["cpuSources"], serde_json::json!(["serverStatus"]));
    assert_eq!(json["members"][1]["osCpu"]["readBy"], "runner");
    assert_eq!(json["cpuDisagreements"][0]["osSource"], "procfs");
}
