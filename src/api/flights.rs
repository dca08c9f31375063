//! `spec.workload.flights`: the knobs of the flights workload (flights.md §9) under the same
//! names, each with the spec's default.

use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// CEL: an optional integer field with its default.
macro_rules! or_default {
    ($field:literal, $default:literal) => {
        concat!(
            "(has(self.",
            $field,
            ") ? self.",
            $field,
            " : ",
            $default,
            ")"
        )
    };
}

/// Knobs of the flights workload (flights.md §9), every one with the default of the spec.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new(concat!(
    or_default!("findPercent", "60"), " + ", or_default!("updatePercent", "20"), " + ",
    or_default!("deletePercent", "10"), " + ", or_default!("insertPercent", "10"), " + ",
    or_default!("aggregatePercent", "0"), " + ", or_default!("transactionPercent", "0"),
    " == 100"))
    .message("spec.workload.flights: findPercent + updatePercent + deletePercent + insertPercent + aggregatePercent + transactionPercent must sum to 100"))]
pub struct Flights {
    /// Version of the workload definition (default `flights/v1`); part of the dataset identity
    /// and of the traffic fingerprint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "flights/v1"))]
    pub version: Option<FlightsVersion>,

    /// Share of finds, in percent (default 60). The six percentages must sum to 100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 100), extend("default" = 60))]
    pub find_percent: Option<u32>,
    /// Share of updates, in percent (default 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 100), extend("default" = 20))]
    pub update_percent: Option<u32>,
    /// Share of deletes, in percent (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 100), extend("default" = 10))]
    pub delete_percent: Option<u32>,
    /// Share of batched inserts, in percent (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 100), extend("default" = 10))]
    pub insert_percent: Option<u32>,
    /// Share of aggregations, in percent (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 100), extend("default" = 0))]
    pub aggregate_percent: Option<u32>,
    /// Share of seat-transfer transactions, in percent (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 100), extend("default" = 0))]
    pub transaction_percent: Option<u32>,

    /// How finds divide among their shapes (default byFlightId 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub find_split: Option<FindSplit>,
    /// How updates divide among their shapes (default 80 / 10 / 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_split: Option<WriteSplit>,
    /// How deletes divide among their shapes (default 80 / 10 / 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete_split: Option<WriteSplit>,
    /// How aggregations divide among their pipelines (default 50 / 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregate_split: Option<AggregateSplit>,

    /// Share of finds, updates and deletes aimed at an existing document, 0 to 1 (default 0.9).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0), extend("default" = 0.9))]
    pub hit_rate: Option<f64>,
    /// Limit of the byFlightId find (1 to 1000, default 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1000), extend("default" = 5))]
    pub find_limit: Option<u32>,
    /// Width of the flight_id window of the aircraftWindow aggregation (1 to 1000000,
    /// default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1000000), extend("default" = 100))]
    pub agg_window: Option<u32>,
    /// Documents per insert command (1 to 1000, default 10); one command is one operation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1000), extend("default" = 10))]
    pub insert_batch_size: Option<u32>,
    /// Secondary indexes: `plgm6` (default; plgm's six, as in the Percona study) or `seven`
    /// (adds `flight_id_1`). Results of the two are not comparable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "plgm6"))]
    pub index_set: Option<IndexSet>,
    /// explain() samples recorded per query shape after each run (0 to 100, default 3; 0
    /// disables).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 100), extend("default" = 3))]
    pub explain_samples: Option<u32>,
}

/// The effective operation mix of the flights workload, in percent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlightsMix {
    /// Finds.
    pub find: u32,
    /// Updates.
    pub update: u32,
    /// Deletes.
    pub delete: u32,
    /// Batched inserts.
    pub insert: u32,
    /// Aggregations.
    pub aggregate: u32,
    /// Transactions.
    pub transaction: u32,
}

impl FlightsMix {
    /// Sum of the six shares (must be 100).
    pub fn total(&self) -> u32 {
        self.find + self.update + self.delete + self.insert + self.aggregate + self.transaction
    }
}

impl Flights {
    /// Effective operation mix (defaults 60 / 20 / 10 / 10 / 0 / 0).
    pub fn mix(&self) -> FlightsMix {
        FlightsMix {
            find: self.find_percent.unwrap_or(60),
            update: self.update_percent.unwrap_or(20),
            delete: self.delete_percent.unwrap_or(10),
            insert: self.insert_percent.unwrap_or(10),
            aggregate: self.aggregate_percent.unwrap_or(0),
            transaction: self.transaction_percent.unwrap_or(0),
        }
    }

    /// Effective find split.
    pub fn find_split(&self) -> FindSplit {
        self.find_split.clone().unwrap_or_default()
    }

    /// Effective update split.
    pub fn update_split(&self) -> WriteSplit {
        self.update_split.clone().unwrap_or_default()
    }

    /// Effective delete split.
    pub fn delete_split(&self) -> WriteSplit {
        self.delete_split.clone().unwrap_or_default()
    }

    /// Effective aggregate split.
    pub fn aggregate_split(&self) -> AggregateSplit {
        self.aggregate_split.clone().unwrap_or_default()
    }

    /// Effective `hitRate` (default 0.9).
    pub fn hit_rate(&self) -> f64 {
        self.hit_rate.unwrap_or(0.9)
    }

    /// Effective `findLimit` (default 5).
    pub fn find_limit(&self) -> u32 {
        self.find_limit.unwrap_or(5)
    }

    /// Effective `aggWindow` (default 100).
    pub fn agg_window(&self) -> u32 {
        self.agg_window.unwrap_or(100)
    }

    /// Effective `insertBatchSize` (default 10).
    pub fn insert_batch_size(&self) -> u32 {
        self.insert_batch_size.unwrap_or(10)
    }

    /// Effective `indexSet` (default `plgm6`).
    pub fn index_set(&self) -> IndexSet {
        self.index_set.unwrap_or_default()
    }

    /// Effective `explainSamples` (default 3).
    pub fn explain_samples(&self) -> u32 {
        self.explain_samples.unwrap_or(3)
    }
}

/// Version of the flights workload definition.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[schemars(transform = crate::api::drop_description)]
pub enum FlightsVersion {
    /// `flights/v1`.
    #[default]
    #[serde(rename = "flights/v1")]
    V1,
}

/// Set of secondary indexes of the flights collection.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[schemars(transform = crate::api::drop_description)]
#[serde(rename_all = "lowercase")]
pub enum IndexSet {
    /// plgm's six secondary indexes (with `_id_`, seven entries).
    #[default]
    Plgm6,
    /// The six plus `flight_id_1`.
    Seven,
}

/// How finds divide among their three shapes, in percent (sums to 100).
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new(concat!(
    or_default!("byFlightId", "100"), " + ", or_default!("byRoute", "0"), " + ",
    or_default!("byStatus", "0"), " == 100"))
    .message("spec.workload.flights.findSplit: byFlightId + byRoute + byStatus must sum to 100"))]
pub struct FindSplit {
    /// Finds by flight_id with a projection and limit (default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 100), extend("default" = 100))]
    pub by_flight_id: Option<u32>,
    /// Finds by origin and destination, newest first (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 100), extend("default" = 0))]
    pub by_route: Option<u32>,
    /// Finds by status (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 100), extend("default" = 0))]
    pub by_status: Option<u32>,
}

impl FindSplit {
    /// Effective shares (byFlightId, byRoute, byStatus).
    pub fn shares(&self) -> [u32; 3] {
        [
            self.by_flight_id.unwrap_or(100),
            self.by_route.unwrap_or(0),
            self.by_status.unwrap_or(0),
        ]
    }
}

/// How updates (or deletes) divide among their three shapes, in percent (sums to 100).
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new(concat!(
    or_default!("oneByFlightId", "80"), " + ", or_default!("oneById", "10"), " + ",
    or_default!("manyByFlightId", "10"), " == 100"))
    .message("oneByFlightId + oneById + manyByFlightId must sum to 100"))]
pub struct WriteSplit {
    /// One document by flight_id (default 80).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 100), extend("default" = 80))]
    pub one_by_flight_id: Option<u32>,
    /// One document by `_id`, the express path of MongoDB 8.0+ (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 100), extend("default" = 10))]
    pub one_by_id: Option<u32>,
    /// Every document sharing a flight_id (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 100), extend("default" = 10))]
    pub many_by_flight_id: Option<u32>,
}

impl WriteSplit {
    /// Effective shares (oneByFlightId, oneById, manyByFlightId).
    pub fn shares(&self) -> [u32; 3] {
        [
            self.one_by_flight_id.unwrap_or(80),
            self.one_by_id.unwrap_or(10),
            self.many_by_flight_id.unwrap_or(10),
        ]
    }
}

/// How aggregations divide among their two pipelines, in percent (sums to 100).
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new(concat!(
    or_default!("aircraftWindow", "50"), " + ", or_default!("routeSummary", "50"), " == 100"))
    .message("spec.workload.flights.aggregateSplit: aircraftWindow + routeSummary must sum to 100"))]
pub struct AggregateSplit {
    /// Per-aircraft statistics over a window of flight_ids (default 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 100), extend("default" = 50))]
    pub aircraft_window: Option<u32>,
    /// Per-airline statistics of one route (default 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 100), extend("default" = 50))]
    pub route_summary: Option<u32>,
}

impl AggregateSplit {
    /// Effective shares (aircraftWindow, routeSummary).
    pub fn shares(&self) -> [u32; 2] {
        [
            self.aircraft_window.unwrap_or(50),
            self.route_summary.unwrap_or(50),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flights_defaults_are_those_of_the_spec() {
        let f = Flights::default();
        assert_eq!(
            f.mix(),
            FlightsMix {
                find: 60,
                update: 20,
                delete: 10,
                insert: 10,
                aggregate: 0,
                transaction: 0
            }
        );
        assert_eq!(f.mix().total(), 100);
        assert_eq!(f.find_split().shares(), [100, 0, 0]);
        assert_eq!(f.update_split().shares(), [80, 10, 10]);
        assert_eq!(f.delete_split().shares(), [80, 10, 10]);
        assert_eq!(f.aggregate_split().shares(), [50, 50]);
        assert_eq!(f.hit_rate(), 0.9);
        assert_eq!(f.find_limit(), 5);
        assert_eq!(f.agg_window(), 100);
        assert_eq!(f.insert_batch_size(), 10);
        assert_eq!(f.index_set(), IndexSet::Plgm6);
        assert_eq!(f.explain_samples(), 3);
    }
}
