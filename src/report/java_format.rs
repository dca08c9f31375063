//! Number text exactly as Java prints it, for YCSB-compatible output.

/// `Double.toString(x)` of Java ≥ 19: the shortest digits that read back as `x`, always with
/// a fraction part, plain for 10⁻³ ≤ |x| < 10⁷ and `d.dddE±n` (no `+`) otherwise.
pub fn java_double(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    if (1e-3..1e7).contains(&x.abs()) {
        // Rust's Display prints the same shortest round-trip digits, never with an exponent.
        let plain = x.to_string();
        if plain.contains('.') {
            plain
        } else {
            plain + ".0"
        }
    } else {
        let sci = format!("{x:e}");
        let (mantissa, exponent) = sci
            .split_once('e')
            .expect("LowerExp output always has an exponent");
        if mantissa.contains('.') {
            format!("{mantissa}E{exponent}")
        } else {
            format!("{mantissa}.0E{exponent}")
        }
    }
}

/// YCSB's name of a percentile: `95th`, `1st`, `2nd`, `3rd`, `11th`–`13th`, `21st` for
/// integral values, Java's `Double.toString` text (`99.9`) otherwise.
pub fn ordinal(p: f64) -> String {
    if p.fract() != 0.0 || !p.is_finite() {
        return java_double(p);
    }
    let j = p as i64;
    let suffix = match (j % 100, j % 10) {
        (11..=13, _) => "th",
        (_, 1) => "st",
        (_, 2) => "nd",
        (_, 3) => "rd",
        _ => "th",
    };
    format!("{j}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_double_vectors_from_the_spec() {
        assert_eq!(java_double(554.0), "554.0");
        assert_eq!(java_double(0.001), "0.001");
        assert_eq!(java_double(0.0009999), "9.999E-4");
        assert_eq!(java_double(1.0e7), "1.0E7");
        assert_eq!(java_double(9_999_999.0), "9999999.0");
        assert_eq!(java_double(12_345_678.0), "1.2345678E7");
        assert_eq!(java_double(100.0 / 3.0), "33.333333333333336");
        assert_eq!(java_double(f64::NAN), "NaN"); // 0/0
    }

    #[test]
    fn java_double_edges() {
        assert_eq!(java_double(0.0), "0.0");
        assert_eq!(java_double(-0.0), "-0.0");
        assert_eq!(java_double(2e23), "2.0E23");
        assert_eq!(java_double(-1.5e-5), "-1.5E-5");
        assert_eq!(java_double(f64::INFINITY), "Infinity");
        assert_eq!(java_double(0.8), "0.8");
        assert_eq!(java_double(98.91196834817013), "98.91196834817013");
    }

    #[test]
    fn ordinals_follow_ycsb() {
        let names: Vec<String> = [
            1.0, 2.0, 3.0, 4.0, 11.0, 12.0, 13.0, 21.0, 22.0, 50.0, 95.0, 99.0,
        ]
        .iter()
        .map(|&p| ordinal(p))
        .collect();
        assert_eq!(
            names,
            [
                "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "50th", "95th",
                "99th"
            ]
        );
        assert_eq!(ordinal(99.9), "99.9");
        assert_eq!(ordinal(99.99), "99.99");
    }
}
