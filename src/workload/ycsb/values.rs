//! Field values (specs/ycsb.md §5): YCSB's random printable bytes (six bytes per 32-bit draw with
//! uneven per-position ranges, which governs compressibility), per-field length choice, the
//! `dataintegrity` deterministic values, and Java `HashMap` field order for documents.

use super::distributions::{Uniform, Zipfian, zipfian::ZIPFIAN_CONSTANT};
use super::properties::{FieldLengthHistogram, FieldLengths};
use super::rng::Rng;

/// Writes the bytes of one 6-byte group drawn from `r` into `out` (1 to 6 bytes: a trailing
/// partial group uses the first slices). Byte j is `32 +` a slice of `r`: j0 `r & 31`,
/// j1 `(r>>5) & 63`, j2 `(r>>10) & 95`, j3 `(r>>15) & 31`, j4 `(r>>20) & 63`, j5 `(r>>25) & 95`.
pub fn fill_group(r: u32, out: &mut [u8]) {
    const SLICES: [(u32, u32); 6] = [(0, 31), (5, 63), (10, 95), (15, 31), (20, 63), (25, 95)];
    for (byte, (shift, mask)) in out.iter_mut().zip(SLICES) {
        *byte = b' ' + ((r >> shift) & mask) as u8;
    }
}

/// `len` random bytes, one fresh 32-bit draw per started group of six.
pub fn random_bytes(rng: &mut Rng, len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    for chunk in out.chunks_mut(6) {
        fill_group(rng.next_u32(), chunk);
    }
    out
}

/// Java's `String.hashCode` over the UTF-16 units of `s`.
pub fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16().fold(0i32, |h, unit| {
        h.wrapping_mul(31).wrapping_add(i32::from(unit))
    })
}

/// The `dataintegrity` value of `field` in record `key`: `key:field`, then `:` + the signed
/// `String.hashCode` of the text so far, repeated until at least `size` characters, cut to `size`.
pub fn deterministic_value(key: &str, field: &str, size: usize) -> String {
    let mut value = format!("{key}:{field}");
    while value.len() < size {
        let hash = java_string_hash(&value);
        value.push(':');
        value.push_str(&hash.to_string());
    }
    value.truncate(size);
    value
}

/// Capacity of a Java `HashMap` after `n` puts into a default one (16, doubling past 0.75 load).
pub fn java_hashmap_capacity(n: usize) -> usize {
    let mut cap = 16;
    while n * 4 > cap * 3 {
        cap *= 2;
    }
    cap
}

/// Capacity of `new HashSet<>(collection of n)`: `tableSizeFor(max((int)(n/.75f) + 1, 16))`.
pub fn java_hashset_capacity(n: usize) -> usize {
    let wanted = ((n as f32 / 0.75f32) as usize + 1).max(16);
    wanted.next_power_of_two()
}

/// Iteration order of a Java hash table of `capacity` buckets holding `names` inserted in
/// order: by bucket `(h ^ (h >>> 16)) & (capacity − 1)`, then insertion order. (Buckets turned
/// into trees, 8+ colliding names, are not modelled; the order is cosmetic anyway.)
pub fn java_hash_order(names: &[String], capacity: usize) -> Vec<usize> {
    let bucket = |name: &str| {
        let h = java_string_hash(name) as u32;
        ((h ^ (h >> 16)) as usize) & (capacity - 1)
    };
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by_key(|&i| (bucket(&names[i]), i));
    order
}

/// Draws value lengths per `fieldlengthdistribution`.
#[derive(Debug, Clone)]
pub enum FieldLengthChooser {
    /// Always the same length.
    Constant(u64),
    /// Uniform in a range.
    Uniform(Uniform),
    /// Zipfian over a range (short values favoured).
    Zipfian(Zipfian),
    /// From histogram buckets.
    Histogram(FieldLengthHistogram),
}

impl FieldLengthChooser {
    /// The chooser for the configured distribution.
    pub fn new(lengths: &FieldLengths) -> FieldLengthChooser {
        match lengths {
            FieldLengths::Constant(n) => FieldLengthChooser::Constant(*n),
            FieldLengths::Uniform { min, max } => FieldLengthChooser::Uniform(
                Uniform::new(*min, *max).expect("validated: minfieldlength <= fieldlength"),
            ),
            FieldLengths::Zipfian { min, max } => {
                FieldLengthChooser::Zipfian(Zipfian::new(*min, max - min + 1, ZIPFIAN_CONSTANT))
            }
            FieldLengths::Histogram(h) => FieldLengthChooser::Histogram(h.clone()),
        }
    }

    /// One length (no draw for `constant`). Holds no state between draws, so a length depends
    /// only on the draws of `rng`.
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        match self {
            FieldLengthChooser::Constant(n) => *n,
            FieldLengthChooser::Uniform(u) => u.sample(rng),
            // The item count never grows here: one uniform draw, no ζ update.
            FieldLengthChooser::Zipfian(z) => z.sample_u(rng.next_f64(), z.items()),
            FieldLengthChooser::Histogram(h) => {
                let area: u64 = h.buckets.iter().sum();
                let mut point = rng.range(0, area - 1);
                for (bucket, &count) in h.buckets.iter().enumerate() {
                    if point < count {
                        return (bucket as u64 + 1) * h.block_size;
                    }
                    point -= count;
                }
                unreachable!("point below the histogram's total count")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_bytes_take_the_spec_slices() {
        // r = 0xFFFFFFFF: slices 31, 63, 95, 31, 63, (0x7F & 95 = 95) → bytes 63, 95, 127, 63, 95, 127.
        let mut all = [0u8; 6];
        fill_group(u32::MAX, &mut all);
        assert_eq!(all, [63, 95, 127, 63, 95, 127]);
        // Bits 0, 5, 10, 15, 20, 25 set. The masks are wider than the 5-bit shifts, so slices
        // overlap: j1 = (r>>5)&63 sees bits 5 and 10 (1 + 32), j4 = (r>>20)&63 bits 20 and 25;
        // j2's mask 95 = 0b1011111 skips bit 5 of r>>10, so j2 = 1. By hand: 33, 65, 33, 33, 65, 33.
        let r = 1 | (1 << 5) | (1 << 10) | (1 << 15) | (1 << 20) | (1 << 25);
        let mut spaced = [0u8; 6];
        fill_group(r, &mut spaced);
        assert_eq!(spaced, [33, 65, 33, 33, 65, 33]);
        let mut partial = [0u8; 2];
        fill_group(u32::MAX, &mut partial);
        assert_eq!(partial, [63, 95]);
        // Arithmetic vs logical shift does not matter for bits 25..31.
        let mut top = [0u8; 6];
        fill_group(0x8000_0000, &mut top);
        assert_eq!(top, [32, 32, 32, 32, 32, 32 + 64]);
    }

    #[test]
    fn random_bytes_have_requested_length_and_per_position_ranges() {
        let mut rng = Rng::new(1);
        let v = random_bytes(&mut rng, 100_003);
        assert_eq!(v.len(), 100_003);
        let max = [63u8, 95, 127, 63, 95, 127];
        let mut seen_max = [0u8; 6];
        for (i, b) in v.iter().enumerate() {
            assert!(*b >= 32 && *b <= max[i % 6], "byte {i} = {b}");
            seen_max[i % 6] = seen_max[i % 6].max(*b);
        }
        assert_eq!(seen_max, max);
    }

    #[test]
    fn java_string_hash_matches_java() {
        // Values of "".hashCode(), "a".hashCode(), "field0".hashCode(), "user1:field0".hashCode()
        // computed by hand / independent Python with 32-bit wrap.
        assert_eq!(java_string_hash(""), 0);
        assert_eq!(java_string_hash("a"), 97);
        assert_eq!(java_string_hash("field0"), -1_274_708_362);
        assert_eq!(java_string_hash("user1:field0"), 1_621_652_138);
    }

    #[test]
    fn deterministic_value_appends_hashes_and_truncates() {
        assert_eq!(deterministic_value("user1", "field0", 12), "user1:field0");
        assert_eq!(deterministic_value("user1", "field0", 5), "user1");
        assert_eq!(
            deterministic_value("user1", "field0", 20),
            "user1:field0:1621652"
        );
        let long = deterministic_value("user1", "field0", 100);
        assert_eq!(long.len(), 100);
        assert!(long.starts_with("user1:field0:1621652138:"));
    }

    #[test]
    fn field_order_is_java_hash_order() {
        let names: Vec<String> = (0..10).map(|i| format!("field{i}")).collect();
        assert_eq!(java_hashmap_capacity(10), 16);
        assert_eq!(java_hash_order(&names, 16), [1, 0, 7, 6, 9, 8, 3, 2, 5, 4]);
        assert_eq!(java_hashmap_capacity(12), 16);
        assert_eq!(java_hashmap_capacity(13), 32);
        assert_eq!(java_hashset_capacity(10), 16);
        assert_eq!(java_hashset_capacity(12), 32);
    }

    #[test]
    fn histogram_lengths_follow_bucket_counts() {
        let h = FieldLengthHistogram {
            block_size: 10,
            buckets: vec![3, 0, 1],
        };
        let c = FieldLengthChooser::new(&FieldLengths::Histogram(h));
        let mut rng = Rng::new(6);
        let draws = 400_000u32;
        let mut ten = 0u32;
        for _ in 0..draws {
            match c.sample(&mut rng) {
                10 => ten += 1,
                30 => {}
                other => panic!("length {other}"),
            }
        }
        let sigma = (0.75f64 * 0.25 / f64::from(draws)).sqrt();
        assert!((f64::from(ten) / f64::from(draws) - 0.75).abs() < 5.0 * sigma);
    }

    #[test]
    fn uniform_and_zipfian_lengths_stay_in_range() {
        let mut rng = Rng::new(2);
        for lengths in [
            FieldLengths::Uniform { min: 5, max: 9 },
            FieldLengths::Zipfian { min: 5, max: 9 },
        ] {
            let c = FieldLengthChooser::new(&lengths);
            for _ in 0..10_000 {
                assert!((5..=9).contains(&c.sample(&mut rng)));
            }
        }
        assert_eq!(
            FieldLengthChooser::new(&FieldLengths::Constant(100)).sample(&mut rng),
            100
        );
    }
}
