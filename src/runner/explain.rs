//! explain() of a sample of every query type, after the measured window (specs/flights.md §10):
//! the first hit instances of each variant, in worker order, regenerated from the measured
//! streams and explained with `executionStats` using the real command (explaining a write
//! changes nothing).

use std::collections::BTreeMap;
use std::time::Duration;

use mongodb::bson::{Document, doc};

use crate::measure::server::ExplainSummary;
use crate::workload::flights::{self, DatasetInfo, Params, Phase, Target as Aim, Variant};
use crate::workload::ycsb::Call;

use super::connect::Target;
use super::deadline::whole_collection;

/// The first `samples` hit instances of every explainable variant, in worker order.
pub fn flights_samples(
    params: &Params,
    dataset: &DatasetInfo,
    samples: u32,
) -> Vec<(Variant, Document)> {
    if samples == 0 {
        return Vec::new();
    }
    let mut per_variant: BTreeMap<&'static str, u32> = BTreeMap::new();
    let mut out = Vec::new();
    // Enough draws that every variant with a non-zero share shows up in practice.
    const DRAWS_PER_WORKER: u32 = 2_000;
    for w in 0..params.workers {
        let Ok(mut worker) = flights::Worker::new(params, dataset, w, Phase::Measured) else {
            return out;
        };
        for _ in 0..DRAWS_PER_WORKER {
            let planned = worker.next_planned();
            let explainable = !matches!(planned.variant, Variant::Insert | Variant::Transaction);
            let hit = matches!(planned.target, Aim::Hit { .. }) || planned.target == Aim::None;
            if !explainable || !hit {
                continue;
            }
            let n = per_variant.entry(planned.variant.code()).or_default();
            if *n < samples {
                *n += 1;
                if let Some(command) = planned.operation.commands.first() {
                    out.push((planned.variant, command.body.clone()));
                }
            }
        }
    }
    out
}

/// The first command of each YCSB call type (READ, SCAN, UPDATE) in `commands`.
pub fn ycsb_samples<'a>(
    commands: impl IntoIterator<Item = (Call, &'a Document)>,
) -> Vec<(Call, Document)> {
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for (call, body) in commands {
        if call == Call::Insert || seen.contains(&call) {
            continue;
        }
        seen.push(call);
        out.push((call, body.clone()));
    }
    out
}

/// Explains each sample; keys are `<code>` for the first sample of a type and `<code>#<n>`
/// for later ones. A sample the server cannot explain gets an empty summary (and a warning in
/// the log), so one unsupported shape never hides the others.
pub async fn explain_all(
    target: &Target,
    database: &str,
    samples: impl IntoIterator<Item = (String, Document)>,
    limit: Duration,
) -> BTreeMap<String, ExplainSummary> {
    let db = target.client.database(database);
    let mut out = BTreeMap::new();
    let mut counts: BTreeMap<String, u32> = BTreeMap::new();
    for (code, command) in samples {
        let n = counts.entry(code.clone()).or_default();
        *n += 1;
        let key = if *n == 1 { code } else { format!("{code}#{n}") };
        // An explain runs its query to the end: as long as a scan of the collection may take.
        let explain = db.run_command(doc! {"explain": command, "verbosity": "executionStats"});
        let reply = tokio::time::timeout(whole_collection(limit), explain).await;
        let summary = match reply {
            Ok(Ok(doc)) => ExplainSummary::from_explain(&doc).unwrap_or_default(),
            // Plans are supplementary: a server that stopped answering keeps the cell's
            // measurements but gets no further explains.
            Err(_) => {
                tracing::warn!(target = %target.name, query = %key, "explain timed out; no further explains");
                out.insert(key, ExplainSummary::default());
                break;
            }
            Ok(Err(e)) => {
                tracing::warn!(target = %target.name, query = %key, error = %e, "explain failed");
                ExplainSummary::default()
            }
        };
        out.insert(key, summary);
    }
    out
}
