//! Student's t distribution, computed (regularized incomplete beta), not tabulated, so that
//! Welch's fractional degrees of freedom get their exact quantiles.

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms; about 15 significant digits).
pub(super) fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1 − x) = π / sin(πx).
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The continued fraction of the incomplete beta function (modified Lentz).
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let mut c = 1.0;
    let mut d = 1.0 - (a + b) * x / (a + 1.0);
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=300 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        let even = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
        let odd = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
        for step in [even, odd] {
            d = 1.0 + step * d;
            if d.abs() < TINY {
                d = TINY;
            }
            c = 1.0 + step / c;
            if c.abs() < TINY {
                c = TINY;
            }
            d = 1.0 / d;
            h *= d * c;
        }
        if (d * c - 1.0).abs() < 1e-16 {
            break;
        }
    }
    h
}

/// The regularized incomplete beta function I_x(a, b), for a, b > 0 and x in [0, 1].
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    // The fraction converges fast below the mean of the distribution; use symmetry above it.
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

/// P(T ≤ t) for Student's t with `df` > 0 degrees of freedom (fractional allowed).
pub fn t_cdf(t: f64, df: f64) -> f64 {
    let tail = 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
    if t > 0.0 { 1.0 - tail } else { tail }
}

/// Quantiles kept per thread: comparisons ask for the same few (level, degrees of freedom)
/// again and again, and each costs a root search over an incomplete beta or gamma function.
const CACHED_QUANTILES: usize = 4096;

thread_local! {
    static QUANTILES: std::cell::RefCell<std::collections::HashMap<(u8, u64, u64), f64>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// `search(p, df)`, kept per thread under `distribution`.
pub(super) fn memoized(distribution: u8, p: f64, df: f64, search: fn(f64, f64) -> f64) -> f64 {
    let key = (distribution, p.to_bits(), df.to_bits());
    if let Some(q) = QUANTILES.with(|c| c.borrow().get(&key).copied()) {
        return q;
    }
    let q = search(p, df);
    QUANTILES.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= CACHED_QUANTILES {
            c.clear();
        }
        c.insert(key, q);
    });
    q
}

/// The `p` quantile of Student's t with `df` > 0 degrees of freedom, for p in (0, 1).
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if p < 0.5 {
        return -t_quantile(1.0 - p, df);
    }
    memoized(0, p, df, search_quantile)
}

fn search_quantile(p: f64, df: f64) -> f64 {
    let (mut low, mut high) = (0.0_f64, 1.0_f64);
    while t_cdf(high, df) < p {
        low = high;
        high *= 2.0;
    }
    for _ in 0..200 {
        let mid = 0.5 * (low + high);
        if t_cdf(mid, df) < p {
            low = mid;
        } else {
            high = mid;
        }
        if high - low <= 1e-13 * high.max(1.0) {
            break;
        }
    }
    0.5 * (low + high)
}

/// Two-sided 95 % critical value of Student's t with `df` degrees of freedom; `None` for
/// df < 1 (or NaN).
pub fn t_critical_95(df: f64) -> Option<f64> {
    (df >= 1.0).then(|| t_quantile(0.975, df))
}

/// Two-sided p-value of a t statistic.
pub(super) fn two_sided_p(statistic: f64, df: f64) -> f64 {
    (2.0 * (1.0 - t_cdf(statistic, df))).clamp(0.0, 1.0)
}
