//! The figures mongobench takes from `serverStatus`, and their change over a phase.

use mongodb::bson::Document;
use serde::{Deserialize, Serialize};

use super::fields::{Fields, ServerFigureError, counter_delta};

const DOC: &str = "serverStatus";

/// Process counters from `extra_info` (the mongod process's getrusage totals on Linux).
/// FerretDB has no `extra_info`: every field is then `None`.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase", default)]
pub struct ProcessCounters {
    /// `extra_info.user_time_us`: user CPU time (µs).
    pub user_time_us: Option<u64>,
    /// `extra_info.system_time_us`: system CPU time (µs).
    pub system_time_us: Option<u64>,
    /// `extra_info.page_faults`: major page faults.
    pub page_faults: Option<u64>,
    /// `extra_info.page_reclaims`: minor page faults.
    pub page_reclaims: Option<u64>,
    /// `extra_info.input_blocks`: file system blocks read.
    pub input_blocks: Option<u64>,
    /// `extra_info.output_blocks`: file system blocks written.
    pub output_blocks: Option<u64>,
    /// `extra_info.voluntary_context_switches`.
    pub voluntary_context_switches: Option<u64>,
    /// `extra_info.involuntary_context_switches`.
    pub involuntary_context_switches: Option<u64>,
}

/// `opcounters`: operations the server received, by type.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase", default)]
pub struct OpCounters {
    /// `opcounters.insert` (documents inserted).
    pub insert: Option<u64>,
    /// `opcounters.query`.
    pub query: Option<u64>,
    /// `opcounters.update`.
    pub update: Option<u64>,
    /// `opcounters.delete`.
    pub delete: Option<u64>,
    /// `opcounters.getmore`.
    pub getmore: Option<u64>,
    /// `opcounters.command`.
    pub command: Option<u64>,
}

/// WiredTiger cache levels (`wiredTiger.cache`), which are not counters.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase", default)]
pub struct CacheGauges {
    /// "bytes currently in the cache".
    pub bytes_in_cache: Option<u64>,
    /// "maximum bytes configured": the cache size.
    pub maximum_bytes_configured: Option<u64>,
    /// "tracked dirty bytes in the cache".
    pub tracked_dirty_bytes: Option<u64>,
}

/// WiredTiger cache counters (`wiredTiger.cache`).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase", default)]
pub struct CacheCounters {
    /// "bytes read into cache": bytes read from disk into the cache.
    pub bytes_read_into_cache: Option<u64>,
    /// "bytes written from cache".
    pub bytes_written_from_cache: Option<u64>,
    /// "pages read into cache": pages read from disk (cache misses).
    pub pages_read_into_cache: Option<u64>,
    /// "pages requested from the cache": page lookups (hits and misses).
    pub pages_requested_from_cache: Option<u64>,
}

/// One `serverStatus` reply, reduced to what a result needs. Every figure is optional:
/// absent in the reply means `None`, never zero.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ServerStatusFigures {
    /// `host`.
    pub host: Option<String>,
    /// `version` (FerretDB reports the MongoDB version it emulates).
    pub version: Option<String>,
    /// `process` (`mongod`, `mongos`, `ferretdb`).
    pub process: Option<String>,
    /// `uptimeMillis`.
    pub uptime_millis: Option<u64>,
    /// `extra_info` counters.
    pub process_counters: ProcessCounters,
    /// `opcounters`.
    pub opcounters: OpCounters,
    /// `wiredTiger.cache` levels.
    pub cache_gauges: CacheGauges,
    /// `wiredTiger.cache` counters.
    pub cache_counters: CacheCounters,
}

const CACHE: [&str; 2] = ["wiredTiger", "cache"];

fn cache_path(key: &'static str) -> [&'static str; 3] {
    [CACHE[0], CACHE[1], key]
}

impl ServerStatusFigures {
    /// Reads a `serverStatus` reply.
    ///
    /// # Errors
    /// [`ServerFigureError::WrongType`] when a field is present with an unusable type (a
    /// counter that is not a non-negative integer, a section that is not a document).
    pub fn from_document(doc: &Document) -> Result<ServerStatusFigures, ServerFigureError> {
        let f = Fields::new(doc, DOC);
        let extra = |key| f.u64(&["extra_info", key]);
        let ops = |key| f.u64(&["opcounters", key]);
        let cache = |key| f.u64(&cache_path(key));
        Ok(ServerStatusFigures {
            host: f.string(&["host"])?,
            version: f.string(&["version"])?,
            process: f.string(&["process"])?,
            uptime_millis: f.u64(&["uptimeMillis"])?,
            process_counters: ProcessCounters {
                user_time_us: extra("user_time_us")?,
                system_time_us: extra("system_time_us")?,
                page_faults: extra("page_faults")?,
                page_reclaims: extra("page_reclaims")?,
                input_blocks: extra("input_blocks")?,
                output_blocks: extra("output_blocks")?,
                voluntary_context_switches: extra("voluntary_context_switches")?,
                involuntary_context_switches: extra("involuntary_context_switches")?,
            },
            opcounters: OpCounters {
                insert: ops("insert")?,
                query: ops("query")?,
                update: ops("update")?,
                delete: ops("delete")?,
                getmore: ops("getmore")?,
                command: ops("command")?,
            },
            cache_gauges: CacheGauges {
                bytes_in_cache: cache("bytes currently in the cache")?,
                maximum_bytes_configured: cache("maximum bytes configured")?,
                tracked_dirty_bytes: cache("tracked dirty bytes in the cache")?,
            },
            cache_counters: CacheCounters {
                bytes_read_into_cache: cache("bytes read into cache")?,
                bytes_written_from_cache: cache("bytes written from cache")?,
                pages_read_into_cache: cache("pages read into cache")?,
                pages_requested_from_cache: cache("pages requested from the cache")?,
            },
        })
    }
}

/// How one member's `serverStatus` figures changed over a phase.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase", default)]
pub struct ServerStatusDelta {
    /// Server uptime elapsed between the two replies (ms).
    pub elapsed_ms: Option<u64>,
    /// Change of each process counter.
    pub process_counters: ProcessCounters,
    /// Change of each operation counter.
    pub opcounters: OpCounters,
    /// Change of each cache counter.
    pub cache_counters: CacheCounters,
    /// Cache levels at the end of the phase.
    pub cache_after: CacheGauges,
}

impl ServerStatusDelta {
    /// `after − before` for every counter known in both replies; cache levels from `after`.
    ///
    /// # Errors
    /// [`ServerFigureError::CounterWentBackwards`] when a counter (or the uptime) shrank: the
    /// server restarted in between.
    pub fn between(
        before: &ServerStatusFigures,
        after: &ServerStatusFigures,
    ) -> Result<ServerStatusDelta, ServerFigureError> {
        let d = |path: &str, b: Option<u64>, a: Option<u64>| counter_delta(DOC, path, b, a);
        let (bp, ap) = (&before.process_counters, &after.process_counters);
        let (bo, ao) = (&before.opcounters, &after.opcounters);
        let (bc, ac) = (&before.cache_counters, &after.cache_counters);
        Ok(ServerStatusDelta {
            elapsed_ms: d("uptimeMillis", before.uptime_millis, after.uptime_millis)?,
            process_counters: ProcessCounters {
                user_time_us: d("extra_info.user_time_us", bp.user_time_us, ap.user_time_us)?,
                system_time_us: d(
                    "extra_info.system_time_us",
                    bp.system_time_us,
                    ap.system_time_us,
                )?,
                page_faults: d("extra_info.page_faults", bp.page_faults, ap.page_faults)?,
                page_reclaims: d(
                    "extra_info.page_reclaims",
                    bp.page_reclaims,
                    ap.page_reclaims,
                )?,
                input_blocks: d("extra_info.input_blocks", bp.input_blocks, ap.input_blocks)?,
                output_blocks: d(
                    "extra_info.output_blocks",
                    bp.output_blocks,
                    ap.output_blocks,
                )?,
                voluntary_context_switches: d(
                    "extra_info.voluntary_context_switches",
                    bp.voluntary_context_switches,
                    ap.voluntary_context_switches,
                )?,
                involuntary_context_switches: d(
                    "extra_info.involuntary_context_switches",
                    bp.involuntary_context_switches,
                    ap.involuntary_context_switches,
                )?,
            },
            opcounters: OpCounters {
                insert: d("opcounters.insert", bo.insert, ao.insert)?,
                query: d("opcounters.query", bo.query, ao.query)?,
                update: d("opcounters.update", bo.update, ao.update)?,
                delete: d("opcounters.delete", bo.delete, ao.delete)?,
                getmore: d("opcounters.getmore", bo.getmore, ao.getmore)?,
                command: d("opcounters.command", bo.command, ao.command)?,
            },
            cache_counters: CacheCounters {
                bytes_read_into_cache: d(
                    "wiredTiger.cache.bytes read into cache",
                    bc.bytes_read_into_cache,
                    ac.bytes_read_into_cache,
                )?,
                bytes_written_from_cache: d(
                    "wiredTiger.cache.bytes written from cache",
                    bc.bytes_written_from_cache,
                    ac.bytes_written_from_cache,
                )?,
                pages_read_into_cache: d(
                    "wiredTiger.cache.pages read into cache",
                    bc.pages_read_into_cache,
                    ac.pages_read_into_cache,
                )?,
                pages_requested_from_cache: d(
                    "wiredTiger.cache.pages requested from the cache",
                    bc.pages_requested_from_cache,
                    ac.pages_requested_from_cache,
                )?,
            },
            cache_after: after.cache_gauges,
        })
    }

    /// User + system CPU time of the server process during the phase (µs); `None` if the
    /// server does not report it.
    pub fn cpu_us(&self) -> Option<u64> {
        Some(self.process_counters.user_time_us? + self.process_counters.system_time_us?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::server::fixture;

    #[test]
    fn mongod_8_0_reply_is_read_with_every_figure() {
        let s = ServerStatusFigures::from_document(&fixture("mongod-8.0-serverStatus-before.json"))
            .unwrap();
        assert_eq!(s.host.as_deref(), Some("bench-psmdb80-n2-0"));
        assert_eq!(s.version.as_deref(), Some("8.0.4"));
        assert_eq!(s.process.as_deref(), Some("mongod"));
        assert_eq!(s.uptime_millis, Some(3_600_412));
        assert_eq!(
            s.process_counters,
            ProcessCounters {
                user_time_us: Some(812_345_678),
                system_time_us: Some(95_432_100),
                page_faults: Some(412),
                page_reclaims: Some(1_893_204),
                input_blocks: Some(20_480),
                output_blocks: Some(9_120_336),
                voluntary_context_switches: Some(5_310_221),
                involuntary_context_switches: Some(48_117),
            }
        );
        assert_eq!(
            s.opcounters,
            OpCounters {
                insert: Some(4_000_000),
                query: Some(1_250_000),
                update: Some(410_000),
                delete: Some(205_000),
                getmore: Some(1_204),
                command: Some(5_123_456),
            }
        );
        assert_eq!(
            s.cache_gauges,
            CacheGauges {
                bytes_in_cache: Some(2_871_345_152),
                maximum_bytes_configured: Some(8_053_063_680),
                tracked_dirty_bytes: Some(12_582_912),
            }
        );
        assert_eq!(s.cache_counters.pages_read_into_cache, Some(61_402));
    }

    #[test]
    fn delta_over_a_phase_of_mongod() {
        let before =
            ServerStatusFigures::from_document(&fixture("mongod-8.0-serverStatus-before.json"))
                .unwrap();
        let after =
            ServerStatusFigures::from_document(&fixture("mongod-8.0-serverStatus-after.json"))
                .unwrap();
        let d = ServerStatusDelta::between(&before, &after).unwrap();
        // The fixtures are 60.3 s apart; 45 s user and 15 s system CPU; 600k finds,
        // 200k updates, 100k deletes and 100k inserts; 1200 pages read into the cache.
        assert_eq!(d.elapsed_ms, Some(60_300));
        assert_eq!(d.process_counters.user_time_us, Some(45_000_000));
        assert_eq!(d.process_counters.system_time_us, Some(15_000_000));
        assert_eq!(d.cpu_us(), Some(60_000_000));
        assert_eq!(d.opcounters.query, Some(600_000));
        assert_eq!(d.opcounters.update, Some(200_000));
        assert_eq!(d.opcounters.delete, Some(100_000));
        assert_eq!(d.opcounters.insert, Some(100_000));
        assert_eq!(d.cache_counters.pages_read_into_cache, Some(1_200));
        assert_eq!(d.cache_counters.bytes_read_into_cache, Some(39_321_600));
        assert_eq!(d.cache_after.bytes_in_cache, Some(2_910_666_752));
        assert_eq!(d.cache_after.maximum_bytes_configured, Some(8_053_063_680));
    }

    #[test]
    fn ferretdb_reply_has_no_cpu_no_opcounters_no_cache() {
        let s = ServerStatusFigures::from_document(&fixture("ferretdb-1.24-serverStatus.json"))
            .unwrap();
        assert_eq!(s.version.as_deref(), Some("7.0.42"));
        assert!(s.uptime_millis.is_some());
        assert_eq!(s.process_counters, ProcessCounters::default());
        assert_eq!(s.opcounters, OpCounters::default());
        assert_eq!(s.cache_gauges, CacheGauges::default());
        assert_eq!(s.cache_counters, CacheCounters::default());
        let d = ServerStatusDelta::between(&s, &s).unwrap();
        assert_eq!(d.cpu_us(), None);
        assert_eq!(d.elapsed_ms, Some(0));
    }

    #[test]
    fn a_restart_between_the_replies_is_an_error() {
        let before =
            ServerStatusFigures::from_document(&fixture("mongod-8.0-serverStatus-after.json"))
                .unwrap();
        let after =
            ServerStatusFigures::from_document(&fixture("mongod-8.0-serverStatus-before.json"))
                .unwrap();
        let e = ServerStatusDelta::between(&before, &after).unwrap_err();
        assert!(matches!(
            e,
            ServerFigureError::CounterWentBackwards { ref path, .. } if path == "uptimeMillis"
        ));
    }
}
