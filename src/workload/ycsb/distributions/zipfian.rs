//! The Zipfian sampler of Gray et al. (SIGMOD'94) exactly as YCSB implements it (specs/ycsb.md
//! §4.4), including its quirks: `eta` is recomputed with the *original* item count when the count
//! grows, a shrink is ignored, and ζ is a sequential double sum of `1 / (i+1)^θ`.

use crate::workload::ycsb::rng::Rng;

/// YCSB's fixed Zipfian constant θ.
pub const ZIPFIAN_CONSTANT: f64 = 0.99;

/// Largest item count whose ζ is summed term by term (bit-compatible with YCSB's loop up to the
/// platform `pow`); above it the Euler–Maclaurin formula is used (§10 "faster ζ", default on),
/// within 1e-12 relative of the exact sum, so that large `latest` data sets start instantly.
pub const ZETA_SEQUENTIAL_LIMIT: u64 = 1_000_000;

/// Terms summed exactly before the Euler–Maclaurin tail takes over.
const EULER_MACLAURIN_HEAD: u64 = 1_000;

/// Adds the terms `1 / (i+1)^θ` for `i` in `[from, to)` to `initial`, in YCSB's order.
pub fn zeta_extend(from: u64, to: u64, theta: f64, initial: f64) -> f64 {
    let mut sum = initial;
    for i in from..to {
        sum += 1.0 / ((i + 1) as f64).powf(theta);
    }
    sum
}

/// ζ(n, θ) = Σ_{i=1..n} i^−θ: the sequential sum up to [`ZETA_SEQUENTIAL_LIMIT`] items, the
/// Euler–Maclaurin expansion (exact head of 1000 terms, tail integral plus the B2 and B4
/// corrections) above it. θ must not be 1.
pub fn zeta(n: u64, theta: f64) -> f64 {
    if n <= ZETA_SEQUENTIAL_LIMIT {
        return zeta_extend(0, n, theta, 0.0);
    }
    let m = EULER_MACLAURIN_HEAD as f64;
    let nf = n as f64;
    let head = zeta_extend(0, EULER_MACLAURIN_HEAD, theta, 0.0);
    // Σ_{i=m+1..n} f(i) = ∫_m^n f + (f(n) − f(m))/2 + (f'(n) − f'(m))/12 − (f'''(n) − f'''(m))/720
    let f = |x: f64| x.powf(-theta);
    let d1 = |x: f64| -theta * x.powf(-theta - 1.0);
    let d3 = |x: f64| -theta * (theta + 1.0) * (theta + 2.0) * x.powf(-theta - 3.0);
    let integral = (nf.powf(1.0 - theta) - m.powf(1.0 - theta)) / (1.0 - theta);
    head + integral + (f(nf) - f(m)) / 2.0 + (d1(nf) - d1(m)) / 12.0 - (d3(nf) - d3(m)) / 720.0
}

/// A Zipfian sampler over `[base, base + items − 1]`; rank 0 (= `base`) is the most popular.
#[derive(Debug, Clone)]
pub struct Zipfian {
    base: u64,
    items: u64,
    theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
    count_for_zeta: u64,
    /// `1 + 0.5^θ`: below `u·zetan` of this the sample is `base + 1`.
    second_threshold: f64,
    zeta2: f64,
}

impl Zipfian {
    /// Sampler over `items` values from `base`, with ζ computed by [`zeta`].
    pub fn new(base: u64, items: u64, theta: f64) -> Zipfian {
        Zipfian::with_zetan(base, items, theta, zeta(items, theta))
    }

    /// Sampler over `items` values from `base` with a supplied ζ (YCSB's precomputed constants).
    /// YCSB also draws one sample at construction; that draw changes no state and is skipped.
    pub fn with_zetan(base: u64, items: u64, theta: f64, zetan: f64) -> Zipfian {
        let zeta2 = zeta_extend(0, 2, theta, 0.0);
        let mut z = Zipfian {
            base,
            items,
            theta,
            alpha: 1.0 / (1.0 - theta),
            zetan,
            eta: 0.0,
            count_for_zeta: items,
            second_threshold: 1.0 + 0.5f64.powf(theta),
            zeta2,
        };
        z.eta = z.eta_for(zetan);
        z
    }

    /// `eta` with the construction-time item count (the YCSB bug the spec says to keep).
    fn eta_for(&self, zetan: f64) -> f64 {
        (1.0 - (2.0 / self.items as f64).powf(1.0 - self.theta)) / (1.0 - self.zeta2 / zetan)
    }

    /// Extends ζ when `n` exceeds the count it was computed for; a smaller `n` changes nothing.
    pub fn grow(&mut self, n: u64) {
        if n > self.count_for_zeta {
            self.zetan = zeta_extend(self.count_for_zeta, n, self.theta, self.zetan);
            self.count_for_zeta = n;
            self.eta = self.eta_for(self.zetan);
        }
    }

    /// Draws one value for item count `n` (normally [`Zipfian::items`]).
    pub fn sample(&mut self, rng: &mut Rng, n: u64) -> u64 {
        self.grow(n);
        self.sample_u(rng.next_f64(), n)
    }

    /// The value for uniform draw `u` ∈ [0, 1) and item count `n` with the current ζ and `eta`.
    pub fn sample_u(&self, u: f64, n: u64) -> u64 {
        let uz = u * self.zetan;
        if uz < 1.0 {
            return self.base;
        }
        if uz < self.second_threshold {
            return self.base + 1;
        }
        // `as u64` saturates and maps NaN to 0, like Java's (long) cast for these values.
        self.base + (n as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64
    }

    /// Number of items fixed at construction.
    pub fn items(&self) -> u64 {
        self.items
    }
    /// Current ζ(n).
    pub fn zetan(&self) -> f64 {
        self.zetan
    }
    /// Current `eta`.
    pub fn eta(&self) -> f64 {
        self.eta
    }
    /// `1 / (1 − θ)`.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
    /// ζ(2, θ) = 1 + 2^−θ.
    pub fn zeta2(&self) -> f64 {
        self.zeta2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(a: f64, b: f64) -> f64 {
        ((a - b) / b).abs()
    }

    #[test]
    fn constants_match_spec() {
        let z = Zipfian::with_zetan(0, 10_000_000_001, ZIPFIAN_CONSTANT, 26.469_028_201_783_02);
        assert_eq!(z.zeta2(), 1.503_477_775_028_359_4);
        assert_eq!(z.alpha(), 99.999_999_999_999_91);
        assert!(
            rel(z.eta(), 0.212_200_033_809_674_06) < 1e-15,
            "{}",
            z.eta()
        );
    }

    // Sequential sums from an independent Python loop `s += 1/((i+1)**0.99)` (run once).
    #[test]
    fn sequential_zeta_matches_reference_sums() {
        for (n, expected) in [
            (10, 2.956_107_516_510_363_6),
            (100, 5.294_568_831_377_164),
            (999, 7.727_881_697_979_491),
            (1100, 7.831_080_373_249_152_5),
        ] {
            assert!(rel(zeta(n, 0.99), expected) < 1e-14, "zeta({n})");
        }
    }

    #[test]
    fn euler_maclaurin_reproduces_ycsb_zetan_for_ten_billion_items() {
        assert!(rel(zeta(10_000_000_000, 0.99), 26.469_028_201_783_02) < 1e-9);
    }

    #[test]
    fn euler_maclaurin_agrees_with_sequential_sum_at_the_switch() {
        let n = ZETA_SEQUENTIAL_LIMIT + 1;
        let exact = zeta_extend(0, n, 0.99, 0.0);
        assert!(
            rel(zeta(n, 0.99), exact) < 1e-12,
            "{} vs {exact}",
            zeta(n, 0.99)
        );
    }

    #[test]
    fn first_two_ranks_come_from_the_zeta_thresholds() {
        let z = Zipfian::new(5, 999, 0.99);
        let zetan = z.zetan();
        assert_eq!(z.sample_u(0.999 / zetan, 999), 5);
        assert_eq!(z.sample_u(1.001 / zetan, 999), 6);
        assert_eq!(z.sample_u(1.50 / zetan, 999), 6);
        assert!(z.sample_u(1.51 / zetan, 999) >= 7);
        assert!(z.sample_u(0.999_999_999, 999) < 5 + 999);
    }

    #[test]
    fn growth_extends_zeta_and_keeps_original_items_in_eta() {
        let mut z = Zipfian::new(0, 999, 0.99);
        z.grow(1000);
        assert!(rel(z.zetan(), 7.728_953_217_284_729) < 1e-14);
        // eta with items = 999 (the bug), not 1000.
        let expected =
            (1.0 - (2.0f64 / 999.0).powf(1.0 - 0.99)) / (1.0 - 1.503_477_775_028_359_4 / z.zetan());
        assert!(rel(z.eta(), expected) < 1e-15);
        let before = z.zetan();
        z.grow(500); // a shrink is ignored
        assert_eq!(z.zetan(), before);
    }

    #[test]
    fn hottest_rank_share_is_one_over_zeta() {
        // latest reference (§4.6): 999 items → P(rank 0) = 1/ζ(999) = 12.94 %.
        let mut z = Zipfian::new(0, 999, 0.99);
        let mut rng = Rng::new(11);
        let draws = 1_000_000;
        let zeros = (0..draws).filter(|_| z.sample(&mut rng, 999) == 0).count();
        let p = 0.129_401_566_830_591_76;
        let sigma = (p * (1.0 - p) / draws as f64).sqrt();
        let share = zeros as f64 / draws as f64;
        assert!((share - p).abs() < 5.0 * sigma, "share {share}");
    }
}
