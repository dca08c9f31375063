//! The facts behind the figures: each cell's regime, the cells left out and why, what ran
//! (workload identity, seed, fingerprints) and where (images, nodes, zones, instance types).

use crate::report::groups::in_group_order;
use crate::report::sharding_text;
use crate::result::{CellResult, CellStatus, WorkloadIdentity};

use super::markup::{fold, note, or_dash, section, table};

fn cell_columns(r: &CellResult) -> [String; 4] {
    let c = &r.cell;
    [
        c.target.clone(),
        c.platform.clone(),
        c.size.clone(),
        c.repetition.to_string(),
    ]
}

/// Whether the cell is valid, invalid or incomplete.
fn status(r: &CellResult) -> &'static str {
    match (&r.status, r.is_valid()) {
        (CellStatus::Incomplete { .. }, _) => "incomplete",
        (CellStatus::Complete, false) => "invalid",
        (CellStatus::Complete, true) => "valid",
    }
}

/// The regime of every cell.
pub(super) fn regimes(results: &[CellResult]) -> String {
    let rows: Vec<Vec<String>> = results
        .iter()
        .map(|r| {
            let mut row = cell_columns(r).to_vec();
            row.push(or_dash(
                r.server_stats
                    .as_ref()
                    .and_then(|s| s.regime)
                    .map(|g| g.label().to_string()),
            ));
            row.push(status(r).to_string());
            row
        })
        .collect();
    if rows.iter().all(|row| row[4] == "-") {
        let none = note(
            "No cell's server figures tell what limited it (docs/results.md, \"Regime rules\").",
        );
        return section("regime", "Regime per cell", &none);
    }
    let content = note(
        "What limited each cell (docs/results.md, \"Regime rules\"): CPU-bound, I/O-bound or \
         cache-resident; - when the server's figures cannot tell.",
    ) + &fold(
        &format!("the regime of each of the {} cells", rows.len()),
        &table(
            &["target", "platform", "size", "rep", "regime", "status"],
            &["rep"],
            &rows,
        ),
    );
    section("regime", "Regime per cell", &content)
}

/// Where each sharded cell's collection lay over the shards; empty without one.
pub(super) fn shards(results: &[CellResult]) -> String {
    let sharded = sharding_text::sharded(results);
    if sharded.is_empty() {
        return String::new();
    }
    let rows: Vec<Vec<String>> = sharded
        .iter()
        .map(|(r, s)| {
            let mut row = cell_columns(r).to_vec();
            row.extend(sharding_text::row(s));
            row
        })
        .collect();
    let mut headers = vec!["target", "platform", "size", "rep"];
    headers.extend(sharding_text::COLUMNS);
    let shapes: String = sharding_text::topologies(results)
        .iter()
        .map(|l| note(l))
        .collect();
    let content = shapes
        + &note(
            "Where each cell's collection lay after its measured phase (docs/results.md, \
             \"Sharded targets\"): documents and chunks per shard, the skew of documents over \
             the shards, and the chunks the balancer moved while it was measured.",
        )
        + &table(&headers, &["rep", "skew", "chunks moved"], &rows);
    section("shards", "Shards", &content)
}

/// Invalid and incomplete cells with their reasons.
pub(super) fn excluded(results: &[CellResult]) -> String {
    let rows: Vec<Vec<String>> = results
        .iter()
        .filter_map(|r| {
            let mut reason = r.exclusion()?;
            if r.client_cpu.is_some_and(|c| c.client_saturated) && !reason.contains("saturated") {
                reason.push_str("; the client was saturated");
            }
            let mut row = cell_columns(r).to_vec();
            row.push(status(r).to_string());
            row.push(reason);
            Some(row)
        })
        .collect();
    let content = if rows.is_empty() {
        note("Every cell is complete and valid.")
    } else {
        note("Left out of every statistic above; their figures are kept in the results.")
            + &table(
                &["target", "platform", "size", "rep", "status", "reason"],
                &["rep"],
                &rows,
            )
    };
    section("excluded", "Invalid and incomplete cells", &content)
}

/// One distinct workload identity and the target-size pairs that used it.
struct Used<'r> {
    identity: &'r WorkloadIdentity,
    users: Vec<String>,
}

/// `1 parameter`, `3 parameters`.
fn parameters_count(n: usize) -> String {
    format!("{n} parameter{}", if n == 1 { "" } else { "s" })
}

/// The distinct workload identities of `results`, in the order they first appear.
fn identities(results: &[CellResult]) -> Vec<Used<'_>> {
    let mut out: Vec<Used<'_>> = Vec::new();
    // In the order of the groups, so that sizes read as everywhere else.
    for r in in_group_order(results)
        .into_iter()
        .filter(|r| !r.identity.is_empty())
    {
        let user = format!("{} {}", r.cell.target, r.cell.size);
        match out.iter_mut().find(|u| u.identity.hash == r.identity.hash) {
            Some(u) if u.users.contains(&user) => {}
            Some(u) => u.users.push(user),
            None => out.push(Used {
                identity: &r.identity,
                users: vec![user],
            }),
        }
    }
    out
}

/// The parameters of the identities: all of them once when there is one identity; else the
/// ones that differ, side by side, and the ones they share folded away.
fn parameters(used: &[Used<'_>]) -> String {
    let [first, ..] = used else {
        return String::new();
    };
    let rows = |names: &[&String]| -> Vec<Vec<String>> {
        names
            .iter()
            .map(|name| {
                let mut row = vec![(*name).clone()];
                row.extend(
                    used.iter()
                        .map(|u| or_dash(u.identity.parameters.get(*name).cloned())),
                );
                row
            })
            .collect()
    };
    let mut names: Vec<&String> = used
        .iter()
        .flat_map(|u| u.identity.parameters.keys())
        .collect();
    names.sort();
    names.dedup();
    let (differ, same): (Vec<&String>, Vec<&String>) = names.into_iter().partition(|n| {
        used.iter()
            .any(|u| u.identity.parameters.get(*n) != first.identity.parameters.get(*n))
    });
    let mut headers = vec!["parameter".to_owned()];
    headers.extend(
        used.iter()
            .map(|u| format!("{} ({})", u.identity.hash, u.users.join(", "))),
    );
    let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
    if used.len() == 1 {
        return note(&format!(
            "One identity, {}, used by {}.",
            first.identity.hash,
            first.users.join(", ")
        )) + &fold(
            &format!("its {} parameters", same.len()),
            &table(&["parameter", "value"], &[], &rows(&same)),
        );
    }
    note(&format!(
        "{} identities: the {} that differ between them, then the {} they share.",
        used.len(),
        parameters_count(differ.len()),
        same.len()
    )) + &table(&headers, &[], &rows(&differ))
        + &fold(
            &format!("the {} parameters they share", same.len()),
            &table(
                &["parameter", "value"],
                &[],
                &rows(&same)
                    .into_iter()
                    .map(|r| r[..2].to_vec())
                    .collect::<Vec<_>>(),
            ),
        )
}

/// The workload identities with their parameters (once when every cell ran the same
/// parameters, else those that differ), and every cell's seed, start and traffic fingerprint
/// folded away.
pub(super) fn identity(results: &[CellResult]) -> String {
    let mut out = note(
        "Results are comparable only when their workload identities are equal; equal \
         fingerprints mean the same operations were sent.",
    );
    out.push_str(&parameters(&identities(results)));
    let rows: Vec<Vec<String>> = results
        .iter()
        .map(|r| {
            let mut row = cell_columns(r).to_vec();
            row.push(or_dash(r.identity.parameters.get("seed").cloned()));
            row.push(or_dash(r.started_at.clone()));
            row.push(if r.fingerprint.is_empty() {
                "-".to_string()
            } else {
                r.fingerprint.clone()
            });
            row
        })
        .collect();
    out.push_str(&fold(
        &format!(
            "Seeds, start times and fingerprints of the {} cells",
            rows.len()
        ),
        &table(
            &[
                "target",
                "platform",
                "size",
                "rep",
                "seed",
                "started",
                "fingerprint",
            ],
            &["rep"],
            &rows,
        ),
    ));
    section(
        "identity",
        "Workload identity, seeds and fingerprints",
        &out,
    )
}

/// Adds `row` to `rows` unless an equal row is there.
fn push_distinct(rows: &mut Vec<Vec<String>>, row: Vec<String>) {
    if !rows.contains(&row) {
        rows.push(row);
    }
}

/// The server software and the machines each target ran on.
pub(super) fn hardware(results: &[CellResult]) -> String {
    let mut servers: Vec<Vec<String>> = Vec::new();
    let mut nodes: Vec<Vec<String>> = Vec::new();
    for r in results {
        let s = &r.server;
        push_distinct(
            &mut servers,
            vec![
                r.cell.target.clone(),
                r.cell.platform.clone(),
                or_dash(s.version.clone()),
                or_dash(s.image.clone()),
                or_dash(s.image_digest.clone()),
                or_dash(s.topology.clone()),
                or_dash(r.mongobench_version.clone()),
            ],
        );
        for n in &r.nodes {
            push_distinct(
                &mut nodes,
                vec![
                    r.cell.target.clone(),
                    r.cell.platform.clone(),
                    n.member.clone(),
                    or_dash(n.node_name.clone()),
                    or_dash(n.zone.clone()),
                    or_dash(n.instance_type.clone()),
                    or_dash(n.host.cpu_arch.clone()),
                    or_dash(n.host.num_cores.map(|c| c.to_string())),
                    or_dash(n.host.mem_size_mb.map(|m| m.to_string())),
                    or_dash(n.host.cpu_model.clone()),
                ],
            );
        }
    }
    let content = table(
        &[
            "target",
            "platform",
            "server version",
            "image",
            "image digest",
            "topology",
            "mongobench",
        ],
        &[],
        &servers,
    ) + &fold(
        &format!("the {} nodes the members ran on", nodes.len()),
        &table(
            &[
                "target",
                "platform",
                "member",
                "node",
                "zone",
                "instance type",
                "arch",
                "cores",
                "memory MB",
                "CPU model",
            ],
            &["cores", "memory MB"],
            &nodes,
        ),
    );
    section("hardware", "Servers, images and nodes", &content)
}
