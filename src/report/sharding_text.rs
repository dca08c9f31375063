//! A sharded target's distribution in words, for the text, Markdown and HTML reports: per
//! shard, the documents and chunks after the measured phase, then the skew, the chunks that
//! moved and any flag.

use crate::result::{CellResult, ShardingRecord};

/// The column heads of one cell's distribution row, after the cell's own columns.
pub const COLUMNS: [&str; 4] = [
    "documents / chunks per shard",
    "skew",
    "chunks moved",
    "flags",
];

/// `shard-0 500,312 / 4, shard-1 499,688 / 4`: each shard's documents and chunks after the
/// measured phase.
pub fn shares_text(s: &ShardingRecord) -> String {
    let shares: Vec<String> = s
        .after
        .iter()
        .map(|x| format!("{} {} / {}", x.shard, thousands(x.documents), x.chunks))
        .collect();
    shares.join(", ")
}

/// The [`COLUMNS`] of one cell.
pub fn row(s: &ShardingRecord) -> [String; 4] {
    [
        shares_text(s),
        format!("{:.1}%", s.skew_percent),
        s.chunks_moved.to_string(),
        if s.flags.is_empty() {
            "-".to_owned()
        } else {
            s.flags.join("; ")
        },
    ]
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The cells of `results` measured on a sharded target, with their records.
pub fn sharded(results: &[CellResult]) -> Vec<(&CellResult, &ShardingRecord)> {
    results
        .iter()
        .filter_map(|r| Some((r, r.sharding.as_ref()?)))
        .collect()
}

/// `target: shape` of each sharded target, in the order targets first appear.
pub fn topologies(results: &[CellResult]) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for (r, s) in sharded(results) {
        let line = format!("{}: {}", r.cell.target, s.topology);
        if !lines.contains(&line) {
            lines.push(line);
        }
    }
    lines
}

/// Each sharded target's shape, then a line per cell of it; empty without one.
pub fn render_shards(results: &[CellResult]) -> String {
    let mut out = String::new();
    for line in topologies(results) {
        out.push_str(&line);
        out.push('\n');
    }
    for (r, s) in sharded(results) {
        let [shares, skew, moved, flags] = row(s);
        out.push_str(&format!(
            "{}: {} over {} shards, documents / chunks: {shares}; skew {skew}, {moved} chunks \
             moved{}\n",
            r.cell,
            s.namespace,
            s.after.len(),
            if flags == "-" {
                String::new()
            } else {
                format!("; {flags}")
            }
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::testing::{cell, result_from, sharding_record as record};

    #[test]
    fn a_distribution_reads_as_shares_skew_moves_and_flags() {
        let s = record(&["the balancer moved 1 chunk during the measurement"]);
        assert_eq!(shares_text(&s), "s-0 612,400 / 4, s-1 387,600 / 3");
        assert_eq!(
            row(&s),
            [
                "s-0 612,400 / 4, s-1 387,600 / 3".to_owned(),
                "22.5%".to_owned(),
                "1".to_owned(),
                "the balancer moved 1 chunk during the measurement".to_owned()
            ]
        );
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(12_345_678), "12,345,678");
        let mut r = result_from(
            cell("mongodb-9.0", "x86", "1m", 1),
            std::time::Duration::from_secs(1),
            &[],
            None,
        );
        assert_eq!(render_shards(std::slice::from_ref(&r)), "");
        r.sharding = Some(s);
        assert_eq!(
            render_shards(std::slice::from_ref(&r)),
            format!(
                "mongodb-9.0: sharded: 2 shards × 3 members, 3 config servers, 2 mongos\n\
                 {}: airline.flights over 2 shards, documents / chunks: s-0 612,400 / 4, s-1 \
                 387,600 / 3; skew 22.5%, 1 chunks moved; the balancer moved 1 chunk during \
                 the measurement\n",
                r.cell
            )
        );
    }
}
