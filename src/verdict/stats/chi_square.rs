//! The chi-square distribution, for confidence bounds on a standard deviation: with ν degrees
//! of freedom, ν·s²/σ² is chi-square, so σ ≤ s·√(ν / χ²_q(ν)) with confidence 1 − q.

use super::student_t::{ln_gamma, memoized};

/// The regularized lower incomplete gamma function P(a, x), for a > 0 and x ≥ 0: a series
/// below a + 1, a continued fraction (modified Lentz) above.
fn lower_gamma(a: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    let front = (a * x.ln() - x - ln_gamma(a)).exp();
    if x < a + 1.0 {
        let (mut term, mut sum, mut n) = (1.0 / a, 1.0 / a, a);
        for _ in 0..1000 {
            n += 1.0;
            term *= x / n;
            sum += term;
            if term.abs() < sum.abs() * 1e-16 {
                break;
            }
        }
        return front * sum;
    }
    const TINY: f64 = 1e-300;
    let mut b = x + 1.0 - a;
    let mut c = 1.0 / TINY;
    let mut d = 1.0 / b;
    let mut h = d;
    for i in 1..1000 {
        let an = -f64::from(i) * (f64::from(i) - a);
        b += 2.0;
        d = an * d + b;
        if d.abs() < TINY {
            d = TINY;
        }
        c = b + an / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let step = d * c;
        h *= step;
        if (step - 1.0).abs() < 1e-16 {
            break;
        }
    }
    1.0 - front * h
}

/// P(X ≤ x) for a chi-square X with `df` > 0 degrees of freedom.
pub fn chi_square_cdf(x: f64, df: f64) -> f64 {
    lower_gamma(df / 2.0, x / 2.0)
}

/// The `p` quantile of the chi-square distribution with `df` > 0 degrees of freedom, for p in
/// (0, 1).
pub fn chi_square_quantile(p: f64, df: f64) -> f64 {
    memoized(1, p, df, search_quantile)
}

fn search_quantile(p: f64, df: f64) -> f64 {
    let (mut low, mut high) = (0.0_f64, df.max(1.0));
    while chi_square_cdf(high, df) < p {
        low = high;
        high *= 2.0;
    }
    for _ in 0..200 {
        let mid = 0.5 * (low + high);
        if chi_square_cdf(mid, df) < p {
            low = mid;
        } else {
            high = mid;
        }
        if high - low <= 1e-13 * high.max(1e-300) {
            break;
        }
    }
    0.5 * (low + high)
}
