//! A manifest's text through what `mongobench validate` and `mongobench run -f` do with it: YAML
//! with line numbers, the schema and cross-field rules; a spec that passes is then expanded into
//! its workload plan, run settings and cells, as a run would. Nothing may panic.
//!
//! The body of fuzz target `spec` (fuzz/fuzz_targets/), also run over the committed
//! corpus by tests/fuzz_corpus.rs.
use mongobench::api::MongoBenchmark;
use mongobench::cli::validate::check_text;
use serde::Deserialize;

pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let report = check_text(text);
    if !report.is_valid() || report.benchmarks.is_empty() {
        return;
    }
    for document in serde_yaml::Deserializer::from_str(text) {
        // After an error the reader's iterator may not end.
        let Ok(value) = serde_json::Value::deserialize(document) else {
            break;
        };
        let Ok(bench) = serde_json::from_value::<MongoBenchmark>(value) else {
            continue;
        };
        let spec = &bench.spec;
        if let Ok(plan) = mongobench::plan::workload_plan(spec) {
            for size in spec.dataset.parsed_sizes().unwrap_or_default() {
                mongobench::plan::documents(&plan, size);
            }
        }
        let _ = mongobench::plan::run_settings(spec);
        for target in &spec.targets {
            let _ = mongobench::plan::cells_of(spec, &target.name, "local");
        }
    }
}
