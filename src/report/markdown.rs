//! Markdown to paste into an issue or a pull request: the answer first (the headline, what each
//! target is, the warnings), then the comparison table, then a short "how measured" block that
//! says what ran and which statistics decided the verdicts.

use std::collections::BTreeSet;

use super::comparison::{interval, level, metric_line, p_value, targets_described};
use super::groups::{compare_in_order, groups};
use super::sharding_text;
use super::summary::{target_facts, warnings};
use super::sweep_text::{knee_text, steps_text};
use crate::result::CellResult;
use crate::verdict::{CompareOptions, Comparison, headline, method_lines};

/// The Markdown text of `results` compared as `options` say, `\n` line ends.
pub fn render_markdown(results: &[CellResult], options: &CompareOptions) -> String {
    let mut out = String::new();
    let runs: BTreeSet<(&str, &str)> = results
        .iter()
        .map(|r| (r.cell.benchmark.as_str(), r.cell.run_id.as_str()))
        .collect();
    let runs: Vec<String> = runs
        .iter()
        .map(|(b, r)| format!("{} (run {})", escape(b), escape(r)))
        .collect();
    out.push_str(&format!("## Benchmark {}\n\n", runs.join(", ")));
    let comparison = compare_in_order(results, options);
    match &comparison {
        Ok(comparison) => {
            if let Some(line) = headline(comparison) {
                out.push_str(&format!("**{}**\n\n", escape(&line)));
            }
            out.push_str(&targets_and_warnings(results, Some(comparison)));
            out.push_str(&table(comparison));
            out.push_str(&notes(comparison));
        }
        Err(e) => {
            out.push_str(&format!("No comparison: {}\n\n", escape(&e.to_string())));
            out.push_str(&targets_and_warnings(results, None));
        }
    }
    let warmups: Vec<String> = super::settle::render_unsettled(results)
        .lines()
        .map(|l| format!("- {}", escape(l)))
        .collect();
    if !warmups.is_empty() {
        out.push_str(&format!("\n{}\n", warmups.join("\n")));
    }
    out.push_str(&sweeps(results));
    out.push_str(&shards(results));
    out.push_str(&canaries(results));
    out.push_str(&how_measured(
        results,
        &options.baseline,
        comparison.ok().as_ref(),
    ));
    out
}

/// What each target is (what its servers said, with a comparison; else what its results
/// record) and the warnings about the run, as a list before the table.
fn targets_and_warnings(results: &[CellResult], comparison: Option<&Comparison>) -> String {
    let targets: Vec<(String, String)> = match comparison {
        Some(c) => targets_described(c),
        None => target_facts(results)
            .into_iter()
            .map(|t| (t.target, t.facts.join("; ")))
            .collect(),
    };
    let mut lines: Vec<String> = targets
        .iter()
        .map(|(target, facts)| format!("- {}: {}", escape(target), escape(facts)))
        .collect();
    lines.extend(
        warnings(results)
            .iter()
            .map(|w| format!("- ⚠ {}", escape(w))),
    );
    format!("{}\n\n", lines.join("\n"))
}

fn table(c: &Comparison) -> String {
    let metric = c.metrics.first().map_or("ops/s", |m| m.label());
    let mut out = format!(
        "| target | size | platform | ops/s (mean ± 95% CI) | Δ {metric} vs {} [interval] \
         (level) | verdict | adjusted p | MDE (cautious) | repetitions |\n\
         | --- | --- | --- | ---: | ---: | --- | ---: | ---: | ---: |\n",
        escape(&c.baseline)
    );
    for g in &c.groups {
        for r in &g.rows {
            let ops = r
                .ops_per_sec
                .map_or("–".to_string(), |s| match s.ci95_half_width {
                    Some(h) => format!("{:.1} ± {h:.1}", s.mean),
                    None => format!("{:.1} (no interval)", s.mean),
                });
            let first = r.verdicts.first();
            let delta = match first.and_then(|v| Some((v.delta?, interval(v)?, level(v)?))) {
                Some((d, i, l)) => format!("{:+.1}% {i} ({l})", d.percent),
                None => r
                    .throughput_delta
                    .map_or("–".to_string(), |d| format!("{:+.1}%", d.percent)),
            };
            let mde = first
                .and_then(|v| {
                    Some(format!(
                        "{:.1}% ({:.1}%)",
                        v.mde_percent?, v.mde_upper_percent?
                    ))
                })
                .unwrap_or("–".to_string());
            let cells = r.repetitions + r.excluded.len();
            let reps = if r.excluded.is_empty() {
                r.repetitions.to_string()
            } else {
                format!("{} of {cells}", r.repetitions)
            };
            out.push_str(&format!(
                "| {} | {} | {} | {ops} | {} | {} | {} | {mde} | {reps} |\n",
                escape(&r.target),
                escape(&g.size),
                escape(&g.platform),
                escape(&delta),
                r.verdict.text(),
                first
                    .and_then(|v| v.adjusted_p_value)
                    .map_or("–".to_string(), p_value),
            ));
        }
    }
    out
}

/// The knee and steps of every load sweep cell (`sweep_text.rs`); empty without one.
fn sweeps(results: &[CellResult]) -> String {
    let swept: Vec<(&CellResult, &crate::result::SweepRecord)> = results
        .iter()
        .filter_map(|r| Some((r, r.sweep.as_ref()?)))
        .collect();
    let Some((_, first)) = swept.first() else {
        return String::new();
    };
    let goal = first
        .goal
        .as_deref()
        .map_or(String::new(), |g| format!(", goal {}", escape(g)));
    let mut out = format!(
        "\n### Load sweep{goal}\n\nEach cell's throughput above is its knee: the sustained step \
         of the highest load below the first saturated one.\n\n\
         | target | size | platform | repetition | knee ops/s | steps: load → achieved ops/s (p99 µs) |\n\
         | --- | --- | --- | ---: | ---: | --- |\n"
    );
    for (r, s) in swept {
        out.push_str(&cell_row(r, &[knee_text(s), escape(&steps_text(s))]));
    }
    out
}

/// A table row: the cell's target, size, platform and repetition, then `rest` (escaped
/// already).
fn cell_row(r: &CellResult, rest: &[String]) -> String {
    format!(
        "| {} | {} | {} | {} | {} |\n",
        escape(&r.cell.target),
        escape(&r.cell.size),
        escape(&r.cell.platform),
        r.cell.repetition,
        rest.join(" | ")
    )
}

/// Where each sharded cell's data lay over the shards (`sharding_text.rs`); empty without one.
fn shards(results: &[CellResult]) -> String {
    let sharded = sharding_text::sharded(results);
    if sharded.is_empty() {
        return String::new();
    }
    let targets: Vec<String> = sharding_text::topologies(results)
        .iter()
        .map(|l| format!("- {}\n", escape(l)))
        .collect();
    let mut out = format!(
        "\n### Shards\n\n{}\nWhere each cell's collection lay after its measured phase.\n\n\
         | target | size | platform | repetition | {} |\n\
         | --- | --- | --- | ---: | --- | ---: | ---: | --- |\n",
        targets.concat(),
        sharding_text::COLUMNS.join(" | ")
    );
    for (r, s) in sharded {
        let cells: Vec<String> = sharding_text::row(s).iter().map(|c| escape(c)).collect();
        out.push_str(&cell_row(r, &cells));
    }
    out
}

/// The noise canaries' summary and deviations (`canary_text.rs`); empty without a canary.
fn canaries(results: &[CellResult]) -> String {
    let lines: Vec<String> = super::canary_text::render_canaries(results)
        .lines()
        .map(|l| format!("- {}\n", escape(l)))
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    format!("\n### Noise canaries\n\n{}", lines.concat())
}

/// Why a verdict is missing and which cells were left out.
fn notes(c: &Comparison) -> String {
    let mut lines = Vec::new();
    for g in &c.groups {
        for r in &g.rows {
            let at = format!(
                "{} at {} on {}",
                escape(&r.target),
                escape(&g.size),
                escape(&g.platform)
            );
            for warning in r.warnings(&c.baseline) {
                lines.push(format!("- **{at}: {}**", escape(&warning)));
            }
            if let Some(reason) = &r.reason {
                lines.push(format!("- {at}: {}: {}", r.verdict.text(), escape(reason)));
            }
            for v in r.verdicts.iter().skip(1) {
                lines.push(format!("- {at}: {}", escape(&metric_line(v))));
            }
            for why in &r.excluded {
                lines.push(format!("- {at}: left out, {}", escape(why)));
            }
        }
    }
    if lines.is_empty() {
        return String::new();
    }
    format!("\n{}\n", lines.join("\n"))
}

fn how_measured(results: &[CellResult], baseline: &str, comparison: Option<&Comparison>) -> String {
    let param = |name: &str| {
        let mut values: Vec<&str> = Vec::new();
        for r in results {
            if let Some(v) = r.identity.parameters.get(name)
                && !values.contains(&v.as_str())
            {
                values.push(v);
            }
        }
        if values.is_empty() {
            "unknown".to_string()
        } else {
            values
                .iter()
                .map(|v| escape(v))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    let mut identities: Vec<(&str, Vec<&str>)> = Vec::new();
    for r in results.iter().filter(|r| !r.identity.is_empty()) {
        let hash = r.identity.hash.as_str();
        match identities.iter_mut().find(|(h, _)| *h == hash) {
            Some((_, sizes)) if sizes.contains(&r.cell.size.as_str()) => {}
            Some((_, sizes)) => sizes.push(&r.cell.size),
            None => identities.push((hash, vec![&r.cell.size])),
        }
    }
    let identities: Vec<String> = identities
        .iter()
        .map(|(hash, sizes)| {
            let sizes: Vec<String> = sizes.iter().map(|s| escape(s)).collect();
            format!("`{hash}` (size {})", sizes.join(", "))
        })
        .collect();
    let counts: Vec<usize> = groups(results)
        .iter()
        .flat_map(|g| g.targets.iter().map(|t| t.cells.len()))
        .collect();
    let (fewest, most) = (
        counts.iter().min().copied().unwrap_or(0),
        counts.iter().max().copied().unwrap_or(0),
    );
    let repetitions = if fewest == most {
        format!("{most}")
    } else {
        format!("{fewest} to {most}")
    };
    let mut out = String::from("\n### How measured\n\n");
    out.push_str(&format!("- Workload: {}\n", param("workload")));
    out.push_str(&format!(
        "- Identity hash: {}\n",
        if identities.is_empty() {
            "unknown".to_string()
        } else {
            identities.join("; ")
        }
    ));
    out.push_str(&format!("- Seed: {}\n", param("seed")));
    out.push_str(&format!("- Workers: {}\n", param("workers")));
    out.push_str(&format!(
        "- Run length: measured {} after a warm-up of {}\n",
        param("run.measured"),
        param("run.warmup")
    ));
    out.push_str(&format!(
        "- Repetitions: {repetitions} per target and size; the table counts the valid ones\n"
    ));
    out.push_str(&format!(
        "- Statistics: mean successful ops/s over the valid repetitions with its Student-t 95% \
         interval; each target against the baseline {}\n",
        escape(baseline)
    ));
    for line in comparison.map(method_lines).unwrap_or_default() {
        out.push_str(&format!("- {}\n", escape(&line)));
    }
    out
}

/// Backslash-escapes the characters Markdown would read as markup or as a table border.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(
            c,
            '\\' | '|' | '*' | '_' | '`' | '[' | ']' | '<' | '>' | '#'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::study::{golden, study};

    fn options() -> CompareOptions {
        CompareOptions {
            baseline: "psmdb-8.0".into(),
            ..CompareOptions::default()
        }
    }

    #[test]
    fn markdown_of_the_study_matches_its_golden_file() {
        golden("study.md", &render_markdown(&study(), &options()));
    }

    #[test]
    fn markup_in_names_is_escaped() {
        assert_eq!(escape("a|b_c*d"), "a\\|b\\_c\\*d");
        let mut results = study();
        for r in &mut results {
            if r.cell.target == "mongo-9.0" {
                r.cell.target = "mongo|9_x".into();
            }
        }
        let text = render_markdown(&results, &options());
        assert!(text.contains("| mongo\\|9\\_x | 1M |"), "{text}");
    }

    #[test]
    fn a_warm_up_that_had_not_settled_is_a_note_before_the_block() {
        let mut results = study();
        results[0].warmup_per_second = vec![10, 50, 100, 100, 120, 120, 60];
        let text = render_markdown(&results, &options());
        let note = format!(
            "\n- {}: warm-up not settled, its last third of seconds +20.0% against its middle \
             third (beyond ±5%); a longer workload.warmup, or workload.warmupUntilSettled, \
             keeps the drift out of the measured phase\n",
            escape(&results[0].cell.to_string())
        );
        let at = text.find(&note).unwrap_or_else(|| panic!("{text}"));
        assert!(at < text.find("### How measured").unwrap(), "{text}");
    }

    #[test]
    fn a_missing_baseline_is_said_and_the_block_still_follows() {
        let text = render_markdown(
            &study(),
            &CompareOptions {
                baseline: "psmdb-7.0".into(),
                ..options()
            },
        );
        assert!(text.contains("No comparison: baseline target"), "{text}");
        assert!(text.contains("### How measured"), "{text}");
    }

    #[test]
    fn load_sweeps_get_a_table_of_knees_and_steps_before_how_measured() {
        use crate::result::{SweepRecord, SweepStep};
        assert!(!render_markdown(&study(), &options()).contains("### Load sweep"));
        let mut results = study();
        for r in &mut results {
            let ops = r.measured.as_ref().map_or(0.0, |m| m.overall.ops_per_sec);
            r.sweep = Some(SweepRecord {
                goal: Some("p99 ≤ 10ms".into()),
                bound_us: Some(10_000),
                steps: vec![SweepStep {
                    target_ops_per_sec: Some(1000),
                    workers: 16,
                    ops_per_sec: ops,
                    error_rate: 0.0,
                    p50_us: None,
                    p99_us: Some(9000),
                    p999_us: None,
                    goal_us: Some(9000),
                    saturated: None,
                }],
                knee: Some(0),
                bounded: false,
            });
        }
        let text = render_markdown(&results, &options());
        let (_, after) = text
            .split_once("\n### Load sweep, goal p99 ≤ 10ms\n")
            .unwrap();
        let (table, _) = after.split_once("### How measured").unwrap();
        let rows: Vec<&str> = table.lines().filter(|l| l.starts_with("| ")).collect();
        assert_eq!(
            rows.len(),
            2 + results.len(),
            "a header, its rule and a row per cell"
        );
        let first = &results[0];
        assert_eq!(
            rows[2],
            format!(
                "| {} | {} | {} | {} | ≥ {:.0} | 1000 ops/s → {:.0} (9000) |",
                first.cell.target,
                first.cell.size,
                first.cell.platform,
                first.cell.repetition,
                first.measured.as_ref().unwrap().overall.ops_per_sec,
                first.measured.as_ref().unwrap().overall.ops_per_sec
            )
        );
    }

    #[test]
    fn sharded_cells_get_a_table_of_their_distribution() {
        assert!(!render_markdown(&study(), &options()).contains("### Shards"));
        let mut results = study();
        results[0].sharding = Some(crate::result::testing::sharding_record(&[
            "documents skewed 22.5% over shards (limit 20%)",
        ]));
        let text = render_markdown(&results, &options());
        let (_, after) = text.split_once("\n### Shards\n").unwrap();
        assert!(
            after.starts_with(&format!(
                "\n- {}: sharded: 2 shards × 3 members, 3 config servers, 2 mongos\n\n",
                results[0].cell.target
            )),
            "{after}"
        );
        let rows: Vec<&str> = after.lines().filter(|l| l.starts_with("| ")).collect();
        let first = &results[0].cell;
        assert_eq!(
            rows[..3],
            [
                "| target | size | platform | repetition | documents / chunks per shard | skew | \
                 chunks moved | flags |",
                "| --- | --- | --- | ---: | --- | ---: | ---: | --- |",
                &format!(
                    "| {} | {} | {} | {} | s-0 612,400 / 4, s-1 387,600 / 3 | 22.5% | 1 | \
                     documents skewed 22.5% over shards (limit 20%) |",
                    first.target, first.size, first.platform, first.repetition
                ),
            ]
        );
    }
}
