//! YCSB properties text (a `-P` workload file) through the properties reader and the typed
//! validation; properties that validate then drive a load and a run worker for a few
//! operations, as the runner would. Nothing may panic.
//!
//! The body of fuzz target `ycsb_properties` (fuzz/fuzz_targets/), also run over the committed
//! corpus by tests/fuzz_corpus.rs.
use mongobench::workload::ycsb::{
    Properties, RawProperties, SharedState, Worker, YcsbPhase, java_properties,
};

/// Operations drawn per worker: enough to reach every operation kind of a mix.
const OPERATIONS: usize = 32;

pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(pairs) = java_properties::parse(text) else {
        return;
    };
    let mut raw = RawProperties::new();
    for (key, value) in pairs {
        // The one property that reads a file: the fuzzer must not read the machine's files.
        if key == "fieldlengthdistribution" && value.trim() == "histogram" {
            return;
        }
        raw.set(key, value);
    }
    let Ok(props) = Properties::from_raw(&raw) else {
        return;
    };
    // Records of megabytes are valid (up to 16 MiB) but cost the fuzzer seconds per input
    // without new paths: draw fewer of them.
    let record_bytes = u64::from(props.field_count).saturating_mul(props.field_lengths.max());
    let operations = if record_bytes > 64 * 1024 {
        2
    } else {
        OPERATIONS
    };
    for phase in [YcsbPhase::Load, YcsbPhase::Run] {
        let shared = SharedState::new(props.record_count);
        let Ok(mut worker) = Worker::new(&props, 1, 0, 2, phase, &shared) else {
            continue;
        };
        for _ in 0..operations {
            if worker.next().is_none() {
                break;
            }
        }
    }
}
