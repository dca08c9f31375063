//! CPU lists: the sides of a simultaneous slot on one machine (`mongobench run --cpu-sets 0/1`),
//! as a plan carries them.

use std::fmt;

/// One side: the CPUs a target's server and workers run on.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct CpuSet(Vec<usize>);

impl CpuSet {
    pub fn cpus(&self) -> &[usize] {
        &self.0
    }
}

impl fmt::Display for CpuSet {
    /// `0-1,4`: runs of consecutive CPUs joined.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        let mut i = 0;
        while i < self.0.len() {
            let start = self.0[i];
            let mut end = start;
            while i + 1 < self.0.len() && self.0[i + 1] == end + 1 {
                i += 1;
                end = self.0[i];
            }
            parts.push(if start == end {
                start.to_string()
            } else {
                format!("{start}-{end}")
            });
            i += 1;
        }
        f.write_str(&parts.join(","))
    }
}

impl TryFrom<String> for CpuSet {
    type Error = String;

    /// `0`, `0-3`, `0,2,4-5`.
    fn try_from(text: String) -> Result<CpuSet, String> {
        let bad = || format!("{text:?} is not a CPU list like 0, 0-3 or 0,2,4-5");
        let mut cpus = Vec::new();
        for part in text.split(',') {
            let (from, to) = part.split_once('-').unwrap_or((part, part));
            let (from, to): (usize, usize) = (
                from.trim().parse().map_err(|_| bad())?,
                to.trim().parse().map_err(|_| bad())?,
            );
            if to < from || to >= 1024 {
                return Err(bad());
            }
            cpus.extend(from..=to);
        }
        cpus.sort_unstable();
        cpus.dedup();
        Ok(CpuSet(cpus))
    }
}

impl From<CpuSet> for String {
    fn from(set: CpuSet) -> String {
        set.to_string()
    }
}

/// `0/1`, `0-1/2-3`: one CPU list per side, sides apart by `/`, no CPU on two sides.
///
/// # Errors
/// A list that does not parse, fewer than two sides, or a CPU on two sides.
pub fn parse_sides(text: &str) -> Result<Vec<CpuSet>, String> {
    let sides = text
        .split('/')
        .map(|s| CpuSet::try_from(s.to_owned()))
        .collect::<Result<Vec<_>, _>>()?;
    if sides.len() < 2 {
        return Err(format!(
            "{text:?} names one side: give one CPU list per target, apart by '/', e.g. 0/1"
        ));
    }
    for (i, side) in sides.iter().enumerate() {
        for other in &sides[..i] {
            if let Some(cpu) = side.cpus().iter().find(|c| other.cpus().contains(c)) {
                return Err(format!("{text:?}: CPU {cpu} is on two sides"));
            }
        }
    }
    Ok(sides)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse_print_and_refuse_overlaps() {
        let sides = parse_sides("0/1").unwrap();
        assert_eq!(
            sides.iter().map(|s| s.cpus().to_vec()).collect::<Vec<_>>(),
            [vec![0], vec![1]]
        );
        let sides = parse_sides("0-1,4/2-3").unwrap();
        assert_eq!(sides[0].cpus(), [0, 1, 4]);
        assert_eq!(sides[0].to_string(), "0-1,4");
        assert_eq!(sides[1].to_string(), "2-3");
        assert_eq!(
            parse_sides("0").unwrap_err(),
            "\"0\" names one side: give one CPU list per target, apart by '/', e.g. 0/1"
        );
        assert_eq!(
            parse_sides("0-1/1").unwrap_err(),
            "\"0-1/1\": CPU 1 is on two sides"
        );
        assert_eq!(
            parse_sides("0/x").unwrap_err(),
            "\"x\" is not a CPU list like 0, 0-3 or 0,2,4-5"
        );
        assert!(parse_sides("3-1/0").is_err());
    }
}
