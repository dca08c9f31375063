//! The matrix of cells of a benchmark (targets × platforms × dataset sizes × repetitions), in
//! the order one runner executes them, and the cell ids used in object names and labels.

use crate::api::{DatasetSize, MongoBenchmarkSpec, UnitsError};

/// One cell of the matrix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedCell {
    /// Stable identifier, usable in object names and labels: `<target>.<platform>.<size>.r<n>`
    /// lower-cased with anything outside `[a-z0-9.-]` replaced by `-`.
    pub id: String,
    pub target: String,
    pub platform: String,
    /// The size as the spec writes it (`1M`, `4GiB`).
    pub size: String,
    pub dataset: DatasetSize,
    /// From 1.
    pub repetition: u32,
}

/// Lower-cases and replaces what a label value or object name cannot hold.
pub fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9' | '.' | '-') => c,
            _ => '-',
        })
        .collect()
}

/// The id of a cell.
pub fn cell_id(target: &str, platform: &str, size: &str, repetition: u32) -> String {
    sanitize(&format!("{target}.{platform}.{size}.r{repetition}"))
}

/// The cells of `target` on `platform`, in the order one runner executes them: sizes
/// ascending (the collection grows), every repetition of a size before the next size.
pub fn cells_of(
    spec: &MongoBenchmarkSpec,
    target: &str,
    platform: &str,
) -> Result<Vec<PlannedCell>, UnitsError> {
    cells_of_with(spec, target, platform, &|_| false)
}

/// Every cell the runner of `target` on `platform` may run: [`cells_of`] and, under
/// `spec.precision`, every repetition up to `maxRepetitions` (for the runner's rights and its
/// deadline, which must allow for slots it may add).
pub fn possible_cells_of(
    spec: &MongoBenchmarkSpec,
    target: &str,
    platform: &str,
) -> Result<Vec<PlannedCell>, UnitsError> {
    cells_of_with(spec, target, platform, &|_| true)
}

/// [`cells_of`], and under `spec.precision` the repetitions a runner added past
/// `repetitions` (up to `maxRepetitions`) whose cell id `added` knows, each after the planned
/// ones of its size.
fn cells_of_with(
    spec: &MongoBenchmarkSpec,
    target: &str,
    platform: &str,
    added: &dyn Fn(&str) -> bool,
) -> Result<Vec<PlannedCell>, UnitsError> {
    let sizes = spec.dataset.parsed_sizes()?;
    let planned = spec.repetitions();
    let most = spec
        .precision
        .as_ref()
        .map_or(planned, |p| p.max_repetitions().max(planned));
    let mut out = Vec::new();
    for (label, dataset) in spec.dataset.sizes.iter().zip(sizes) {
        for repetition in 1..=most {
            if repetition > planned && !added(&cell_id(target, platform, label, repetition)) {
                continue;
            }
            out.push(PlannedCell {
                id: cell_id(target, platform, label, repetition),
                target: target.to_owned(),
                platform: platform.to_owned(),
                size: label.clone(),
                dataset,
                repetition,
            });
        }
    }
    Ok(out)
}

/// Every cell of the benchmark: per platform, per target, then [`cells_of`].
pub fn cells(spec: &MongoBenchmarkSpec) -> Result<Vec<PlannedCell>, UnitsError> {
    cells_with_added(spec, |_| false)
}

/// [`cells`] with the repetitions runners added under `spec.precision` whose cell id `added`
/// knows (the operator: those with a result).
pub fn cells_with_added(
    spec: &MongoBenchmarkSpec,
    added: impl Fn(&str) -> bool,
) -> Result<Vec<PlannedCell>, UnitsError> {
    let mut out = Vec::new();
    for platform in &spec.platforms {
        for target in &spec.targets {
            out.extend(cells_of_with(spec, &target.name, &platform.name, &added)?);
        }
    }
    Ok(out)
}
