//! Holm–Bonferroni over one comparison's tests: the adjusted p-values, and the level each
//! test was judged at, so that an interval at that level excludes 0 exactly when the test is
//! significant.

use super::delta::ALPHA;

/// Holm–Bonferroni: the adjusted p-values of `p_values`, in the same order. The i-th smallest
/// of m values becomes max over j ≤ i of min(1, (m − j + 1) · p₍ⱼ₎).
pub fn holm(p_values: &[f64]) -> Vec<f64> {
    let m = p_values.len();
    let mut adjusted = vec![0.0; m];
    let mut running = 0.0_f64;
    for (rank, i) in ranked(p_values).into_iter().enumerate() {
        running = running.max(((m - rank) as f64 * p_values[i]).min(1.0));
        adjusted[i] = running;
    }
    adjusted
}

/// The two-sided level each of `p_values` is judged at by Holm's step-down at [`ALPHA`], in
/// the same order: a significant test, ALPHA ÷ (m − rank) at its own step (rank from 0 in
/// ascending p); every other, the level of the step at which the procedure stopped. A test is
/// significant exactly when its p-value is below its level, so the interval at 1 − level
/// excludes 0 exactly then.
pub fn holm_levels(p_values: &[f64]) -> Vec<f64> {
    let m = p_values.len();
    let mut levels = vec![0.0; m];
    let mut stopped: Option<f64> = None;
    for (rank, i) in ranked(p_values).into_iter().enumerate() {
        let step = ALPHA / (m - rank) as f64;
        let level = *stopped.get_or_insert(step);
        if p_values[i] >= level {
            levels[i] = level;
        } else {
            levels[i] = step;
            stopped = None;
        }
    }
    levels
}

/// Indices of `p_values` in ascending order (stable).
fn ranked(p_values: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..p_values.len()).collect();
    order.sort_by(|&a, &b| p_values[a].total_cmp(&p_values[b]));
    order
}
