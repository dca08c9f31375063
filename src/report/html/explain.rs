//! Explain plans side by side: per group and query shape, the winning plan(s) each target
//! chose, flagged where targets chose different plans for the same shape; a target that
//! reports no plan tree is said once, not in every row.

use crate::measure::server::ExplainSummary;
use crate::report::groups::{Group, TargetCells};

use super::markup::{escape, fold, note, section};

/// The parts of a plan that make it the same plan: its stages and the indexes it reads.
type PlanKey<'r> = (&'r [String], &'r [String]);

/// The distinct plans a target's complete cells chose for `shape`, in repetition order, each
/// with the first cell's execution figures.
fn plans<'r>(t: &TargetCells<'r>, shape: &str) -> Vec<&'r ExplainSummary> {
    let mut out: Vec<&ExplainSummary> = Vec::new();
    for e in t
        .cells
        .iter()
        .filter(|c| c.is_complete())
        .filter_map(|c| c.explain.get(shape))
    {
        if !out.iter().any(|o| key(o) == key(e)) {
            out.push(e);
        }
    }
    out
}

fn key(e: &ExplainSummary) -> PlanKey<'_> {
    (&e.stages, &e.indexes)
}

fn describe(e: &ExplainSummary) -> String {
    let figure = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    let plan = if e.stages.is_empty() {
        "no plan tree reported".to_string()
    } else {
        e.stages.join(" → ")
    };
    let indexes = if e.indexes.is_empty() {
        String::new()
    } else {
        format!(" [{}]", e.indexes.join(", "))
    };
    format!(
        "{plan}{indexes} (keys {}, docs {}, returned {})",
        figure(e.keys_examined),
        figure(e.docs_examined),
        figure(e.n_returned)
    )
}

/// Targets with explain summaries but no plan tree in any of them, in the order they appear:
/// said once each, not in a row per query shape.
fn treeless<'r>(groups: &[Group<'r>]) -> Vec<&'r str> {
    let mut out: Vec<&str> = Vec::new();
    let mut with_tree: Vec<&str> = Vec::new();
    for t in groups.iter().flat_map(|g| &g.targets) {
        for e in t.cells.iter().flat_map(|c| c.explain.values()) {
            if e.stages.is_empty() {
                if !out.contains(&t.target) {
                    out.push(t.target);
                }
            } else if !with_tree.contains(&t.target) {
                with_tree.push(t.target);
            }
        }
    }
    out.retain(|t| !with_tree.contains(t));
    out
}

/// The table of one group: a row per query shape, a column per target with a plan tree.
fn group_table(g: &Group<'_>, columns: &[&TargetCells<'_>]) -> String {
    let mut shapes: Vec<&str> = columns
        .iter()
        .flat_map(|t| &t.cells)
        .flat_map(|c| c.explain.keys().map(String::as_str))
        .collect();
    shapes.sort_unstable();
    shapes.dedup();
    if shapes.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "<h3>{}</h3>\n<table>\n<tr><th>query shape</th>",
        escape(&g.title())
    );
    for t in columns {
        out.push_str(&format!("<th>{}</th>", escape(t.target)));
    }
    out.push_str("</tr>\n");
    for shape in shapes {
        let chosen: Vec<Vec<&ExplainSummary>> = columns.iter().map(|t| plans(t, shape)).collect();
        let flag = if differs(&chosen) {
            " <span class=\"plan-differs\">different plans</span>"
        } else {
            ""
        };
        out.push_str(&format!("<tr><td>{}{flag}</td>", escape(shape)));
        for p in &chosen {
            let text: Vec<String> = p.iter().map(|e| escape(&describe(e))).collect();
            let text = if text.is_empty() {
                "-".to_string()
            } else {
                text.join("<br>")
            };
            out.push_str(&format!("<td>{text}</td>"));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    out
}

/// Whether the targets (or one target's repetitions) chose different plan trees; a target
/// without a tree does not count as choosing a different one.
fn differs(chosen: &[Vec<&ExplainSummary>]) -> bool {
    let mut with_tree: Vec<Vec<PlanKey<'_>>> = chosen
        .iter()
        .map(|p| {
            p.iter()
                .filter(|e| !e.stages.is_empty())
                .map(|e| key(e))
                .collect::<Vec<_>>()
        })
        .filter(|keys| !keys.is_empty())
        .collect();
    for keys in &mut with_tree {
        keys.sort();
    }
    with_tree.windows(2).any(|w| w[0] != w[1]) || with_tree.iter().any(|keys| keys.len() > 1)
}

/// The plans section: one line per target that reports no plan tree, the flagged shapes
/// named, and the tables folded.
pub(super) fn plans_section(groups: &[Group<'_>]) -> String {
    let treeless = treeless(groups);
    let mut tables = String::new();
    let mut flagged = 0;
    for g in groups {
        let columns: Vec<&TargetCells<'_>> = g
            .targets
            .iter()
            .filter(|t| !treeless.contains(&t.target))
            .collect();
        let table = group_table(g, &columns);
        flagged += table.matches("class=\"plan-differs\"").count();
        tables.push_str(&table);
    }
    let mut out = String::new();
    for t in &treeless {
        out.push_str(&note(&format!(
            "{t}: no plan tree reported for any query shape (its explain answers without one, \
             as FerretDB's does)."
        )));
    }
    if tables.is_empty() {
        if treeless.is_empty() {
            return section(
                "explain",
                "Explain plans",
                &note("No cell reports an explain plan."),
            );
        }
        return section("explain", "Explain plans", &out);
    }
    out.push_str(&note(&format!(
        "The winning plan of each query shape per target (stages root first, indexes read, \
         examined and returned counts of the sampled query); {flagged} shape{} where targets, or \
         a target's repetitions, chose different plans.",
        if flagged == 1 { "" } else { "s" }
    )));
    out.push_str(&fold("plans per query shape", &tables));
    section("explain", "Explain plans", &out)
}
