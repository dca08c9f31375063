//! explain() of a sample of every query type, after the measured window (specs/flights.md §10):
//! the first hit instances of each variant, in worker order, regenerated from the measured
//! streams and explained with `executionStats` using the real command (explaining a write
//! changes nothing).

use std::collections::BTreeMap;
use std::time::Duration;

use mongodb::bson::{Document, doc};

use crate::measure::server::ExplainSummary;
use crate::runner::deadline::whole_collection;
use crate::workload::Command;
use crate::workload::flights::{self, DatasetInfo, Params, RunPhase, Target as Aim, Variant};
use crate::workload::ycsb::Call;

use super::connect::ConnectedTarget;

/// The first `samples` hit instances of every explainable variant, in worker order.
pub fn flights_samples(
    params: &Params,
    dataset: &DatasetInfo,
    samples: u32,
) -> Vec<(Variant, Document)> {
    pick_flights_samples(params, dataset, samples, &sampled_variants(params))
}

/// The explainable variants `params` generates aimed at a seeded document: those with a
/// non-zero share, the find/update/delete ones only when `hitRate` is above zero. Once each of
/// them has its samples, drawing on finds no more (without this the draws grew with the workers
/// and cost seconds after every measured phase).
fn sampled_variants(params: &Params) -> Vec<Variant> {
    let aims = params.hit_rate > 0.0;
    let (f, u, d, a) = (
        params.find_percent > 0 && aims,
        params.update_percent > 0 && aims,
        params.delete_percent > 0 && aims,
        params.aggregate_percent > 0,
    );
    let (fs, us, ds, asp) = (
        &params.find_split,
        &params.update_split,
        &params.delete_split,
        &params.aggregate_split,
    );
    [
        (f && fs.by_flight_id > 0, Variant::FindByFlightId),
        (f && fs.by_route > 0, Variant::FindByRoute),
        (f && fs.by_status > 0, Variant::FindByStatus),
        (u && us.one_by_flight_id > 0, Variant::UpdateOneByFlightId),
        (u && us.one_by_id > 0, Variant::UpdateOneById),
        (u && us.many_by_flight_id > 0, Variant::UpdateManyByFlightId),
        (d && ds.one_by_flight_id > 0, Variant::DeleteOneByFlightId),
        (d && ds.one_by_id > 0, Variant::DeleteOneById),
        (d && ds.many_by_flight_id > 0, Variant::DeleteManyByFlightId),
        (
            a && asp.aircraft_window > 0,
            Variant::AggregateAircraftWindow,
        ),
        (a && asp.route_summary > 0, Variant::AggregateRouteSummary),
    ]
    .into_iter()
    .filter_map(|(on, v)| on.then_some(v))
    .collect()
}

/// [`flights_samples`], drawing until every variant of `expected` has its samples.
fn pick_flights_samples(
    params: &Params,
    dataset: &DatasetInfo,
    samples: u32,
    expected: &[Variant],
) -> Vec<(Variant, Document)> {
    if samples == 0 {
        return Vec::new();
    }
    let mut per_variant: BTreeMap<&'static str, u32> = BTreeMap::new();
    let full = |per_variant: &BTreeMap<&'static str, u32>| {
        expected
            .iter()
            .all(|v| per_variant.get(v.code()).is_some_and(|&n| n >= samples))
    };
    let mut out = Vec::new();
    // Enough draws that every variant with a non-zero share shows up in practice.
    const DRAWS_PER_WORKER: u32 = 2_000;
    for w in 0..params.workers {
        let Ok(mut worker) = flights::Worker::new(params, dataset, w, RunPhase::Measured) else {
            return out;
        };
        for _ in 0..DRAWS_PER_WORKER {
            if full(&per_variant) {
                return out;
            }
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
                    out.push((planned.variant, command.to_document()));
                }
            }
        }
    }
    out
}

/// The first command of each YCSB call type (READ, SCAN, UPDATE) in `commands`.
pub fn ycsb_samples<'a>(
    commands: impl IntoIterator<Item = (Call, &'a Command)>,
) -> Vec<(Call, Document)> {
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for (call, body) in commands {
        if call == Call::Insert || seen.contains(&call) {
            continue;
        }
        seen.push(call);
        out.push((call, body.to_document()));
    }
    out
}

/// Explains each sample; keys are `<code>` for the first sample of a type and `<code>#<n>`
/// for later ones. A sample the server cannot explain gets an empty summary (and a warning in
/// the log), so one unsupported shape never hides the others.
pub async fn explain_all(
    target: &ConnectedTarget,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::flights::insert_base;

    fn dataset() -> DatasetInfo {
        DatasetInfo {
            dataset_seed: 7,
            documents: 5_000,
            insert_base: insert_base(Some(4_999)),
        }
    }

    fn codes(samples: &[(Variant, Document)]) -> Vec<&'static str> {
        samples.iter().map(|(v, _)| v.code()).collect()
    }

    #[test]
    fn sampling_stops_once_every_variant_has_its_samples_and_picks_the_same() {
        let params = Params {
            workers: 64,
            aggregate_percent: 10,
            find_percent: 50,
            find_split: flights::FindSplit {
                by_flight_id: 40,
                by_route: 30,
                by_status: 30,
            },
            ..Params::default()
        };
        let early = flights_samples(&params, &dataset(), 2);
        // An expected variant that never fills draws every worker's 2,000 operations.
        let exhaustive = pick_flights_samples(&params, &dataset(), 2, &[Variant::Insert]);
        assert_eq!(early, exhaustive);
        let mut seen = codes(&early);
        seen.sort_unstable();
        assert_eq!(
            seen,
            [
                "A1", "A1", "A2", "A2", "D1", "D1", "D2", "D2", "D3", "D3", "F1", "F1", "F2", "F2",
                "F3", "F3", "U1", "U1", "U2", "U2", "U3", "U3"
            ]
        );
    }

    #[test]
    fn only_variants_with_a_share_and_a_possible_hit_are_awaited() {
        let mut params = Params::default();
        assert_eq!(
            sampled_variants(&params)
                .iter()
                .map(|v| v.code())
                .collect::<Vec<_>>(),
            ["F1", "U1", "U2", "U3", "D1", "D2", "D3"]
        );
        params.delete_percent = 0;
        params.find_split.by_status = 50;
        params.aggregate_percent = 10;
        params.aggregate_split.route_summary = 0;
        assert_eq!(
            sampled_variants(&params)
                .iter()
                .map(|v| v.code())
                .collect::<Vec<_>>(),
            ["F1", "F3", "U1", "U2", "U3", "A1"]
        );
        // Without hits, finds, updates and deletes are never sampled: only aggregates.
        params.hit_rate = 0.0;
        assert_eq!(
            sampled_variants(&params)
                .iter()
                .map(|v| v.code())
                .collect::<Vec<_>>(),
            ["A1"]
        );
    }
}
