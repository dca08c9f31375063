//! The part of an `explain` reply a result keeps: the winning plan's stage chain, the indexes
//! it uses, and what execution examined.

use mongodb::bson::{Bson, Document};
use serde::{Deserialize, Serialize};

use super::fields::{Fields, ServerFigureError};

/// Summary of one explained query. Every field may be empty: FerretDB's explain has no
/// `winningPlan` and no `executionStats`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct ExplainSummary {
    /// Stages of the winning plan, root first, depth-first (`["FETCH", "IXSCAN"]`), followed
    /// by the aggregation stages that run after the cursor (`"$group"`).
    pub stages: Vec<String>,
    /// Indexes the winning plan reads (`indexName`), in plan order.
    pub indexes: Vec<String>,
    /// `executionStats.totalKeysExamined`.
    pub keys_examined: Option<u64>,
    /// `executionStats.totalDocsExamined`.
    pub docs_examined: Option<u64>,
    /// `executionStats.nReturned`.
    pub n_returned: Option<u64>,
    /// `executionStats.executionTimeMillis`.
    pub execution_time_ms: Option<u64>,
}

impl ExplainSummary {
    /// Reads an explain reply of a `find` (or other query command) or of an `aggregate`
    /// (`stages[0].$cursor` holds the query part), in the classic or the slot-based engine's
    /// shape (`winningPlan.queryPlan`).
    ///
    /// # Errors
    /// [`ServerFigureError::WrongType`] when a plan field has an unusable type.
    pub fn from_explain(doc: &Document) -> Result<ExplainSummary, ServerFigureError> {
        let (query, later_stages) = match doc.get("stages") {
            Some(Bson::Array(stages)) if !doc.contains_key("queryPlanner") => {
                let cursor = stages
                    .first()
                    .and_then(Bson::as_document)
                    .and_then(|s| s.get_document("$cursor").ok());
                let later: Vec<String> = stages
                    .iter()
                    .skip(usize::from(cursor.is_some()))
                    .filter_map(Bson::as_document)
                    .filter_map(|s| s.keys().next().cloned())
                    .collect();
                (cursor, later)
            }
            _ => (Some(doc), Vec::new()),
        };
        let mut summary = ExplainSummary::default();
        if let Some(query) = query {
            let f = Fields::new(query, "explain");
            let winning = match query.get("queryPlanner") {
                Some(Bson::Document(planner)) => planner.get("winningPlan"),
                _ => None,
            };
            if let Some(Bson::Document(plan)) = winning {
                let plan = match plan.get("queryPlan") {
                    Some(Bson::Document(inner)) => inner,
                    _ => plan,
                };
                walk(plan, &mut summary)?;
            }
            summary.keys_examined = f.u64(&["executionStats", "totalKeysExamined"])?;
            summary.docs_examined = f.u64(&["executionStats", "totalDocsExamined"])?;
            summary.n_returned = f.u64(&["executionStats", "nReturned"])?;
            summary.execution_time_ms = f.u64(&["executionStats", "executionTimeMillis"])?;
        }
        summary.stages.extend(later_stages);
        Ok(summary)
    }
}

fn walk(stage: &Document, summary: &mut ExplainSummary) -> Result<(), ServerFigureError> {
    let f = Fields::new(stage, "explain");
    if let Some(name) = f.string(&["stage"])? {
        summary.stages.push(name);
    }
    if let Some(index) = f.string(&["indexName"])?
        && !summary.indexes.contains(&index)
    {
        summary.indexes.push(index);
    }
    match stage.get("inputStage") {
        Some(Bson::Document(child)) => walk(child, summary)?,
        Some(other) => {
            return Err(ServerFigureError::WrongType {
                document: "explain",
                path: "inputStage".into(),
                found: format!("{:?}", other.element_type()),
                expected: "a document",
            });
        }
        None => {}
    }
    if let Some(Bson::Array(children)) = stage.get("inputStages") {
        for child in children.iter().filter_map(Bson::as_document) {
            walk(child, summary)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::server::fixture;

    #[test]
    fn mongod_find_explain_gives_stages_index_and_counts() {
        let s = ExplainSummary::from_explain(&fixture("mongod-8.0-explain-find.json")).unwrap();
        assert_eq!(s.stages, ["FETCH", "IXSCAN"]);
        assert_eq!(s.indexes, ["flight_id_1"]);
        assert_eq!(s.keys_examined, Some(1));
        assert_eq!(s.docs_examined, Some(1));
        assert_eq!(s.n_returned, Some(1));
        assert_eq!(s.execution_time_ms, Some(0));
    }

    #[test]
    fn mongod_sbe_aggregate_explain_gives_the_query_plan_and_later_stages() {
        let s =
            ExplainSummary::from_explain(&fixture("mongod-8.0-explain-aggregate.json")).unwrap();
        assert_eq!(
            s.stages,
            ["PROJECTION_SIMPLE", "FETCH", "IXSCAN", "$group", "$sort"]
        );
        assert_eq!(s.indexes, ["origin_1_departure_time_1"]);
        assert_eq!(s.keys_examined, Some(2_481));
        assert_eq!(s.docs_examined, Some(2_481));
        assert_eq!(s.n_returned, Some(2_481));
    }

    #[test]
    fn or_plans_list_every_branch() {
        let d = mongodb::bson::doc! { "queryPlanner": { "winningPlan": {
        "stage": "SUBPLAN", "inputStage": { "stage": "FETCH", "inputStage": {
            "stage": "OR", "inputStages": [
                { "stage": "IXSCAN", "indexName": "a_1" },
                { "stage": "IXSCAN", "indexName": "b_1" },
                { "stage": "IXSCAN", "indexName": "a_1" },
            ] } } } } };
        let s = ExplainSummary::from_explain(&d).unwrap();
        assert_eq!(
            s.stages,
            ["SUBPLAN", "FETCH", "OR", "IXSCAN", "IXSCAN", "IXSCAN"]
        );
        assert_eq!(s.indexes, ["a_1", "b_1"]);
        assert_eq!(s.keys_examined, None);
    }

    #[test]
    fn ferretdb_explain_has_no_plan_stages() {
        let s = ExplainSummary::from_explain(&fixture("ferretdb-1.24-explain-find.json")).unwrap();
        assert_eq!(s, ExplainSummary::default());
    }
}
