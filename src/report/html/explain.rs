//! Explain plans side by side: per group and query shape, the winning plan(s) each target
//! chose, flagged where targets chose different plans for the same shape.

use crate::measure::server::ExplainSummary;
use crate::report::groups::{Group, TargetCells};

use super::markup::{escape, note, section};

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

/// The plans section.
pub(super) fn plans_section(groups: &[Group<'_>]) -> String {
    let mut out = note(
        "The winning plan of each query shape per target (stages root first, indexes read, \
         examined and returned counts of the sampled query). Targets that report no plan tree \
         (FerretDB) are not counted as choosing a different plan.",
    );
    for g in groups {
        let mut shapes: Vec<&str> = g
            .targets
            .iter()
            .flat_map(|t| &t.cells)
            .flat_map(|c| c.explain.keys().map(String::as_str))
            .collect();
        shapes.sort_unstable();
        shapes.dedup();
        if shapes.is_empty() {
            continue;
        }
        out.push_str(&format!(
            "<h3>{}</h3>\n<table>\n<tr><th>query shape</th>",
            escape(&g.title())
        ));
        for t in &g.targets {
            out.push_str(&format!("<th>{}</th>", escape(t.target)));
        }
        out.push_str("</tr>\n");
        for shape in shapes {
            let chosen: Vec<Vec<&ExplainSummary>> =
                g.targets.iter().map(|t| plans(t, shape)).collect();
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
            let differs = with_tree.windows(2).any(|w| w[0] != w[1])
                || with_tree.iter().any(|keys| keys.len() > 1);
            let flag = if differs {
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
    }
    section("explain", "Explain plans", &out)
}
