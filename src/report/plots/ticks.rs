//! Numbers on axes and in legends as people read them at a glance: `6,000`, `12k`, `1.5M`,
//! `0.25`, never `6000.0`.

/// `1,650`: a count with its thousands separated.
pub(crate) fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `12.5` for 12.5, `3` for 3.0: at most `decimals` decimals, without trailing zeros.
fn trimmed(v: f64, decimals: usize) -> String {
    let text = format!("{v:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text
    }
}

/// An axis tick: millions as `1.5M`, ten thousands and up as `12k`, whole numbers below that
/// with separators (`6,000`), fractions with up to two decimals.
pub(super) fn tick(v: f64) -> String {
    let sign = if v < 0.0 { "-" } else { "" };
    let a = v.abs();
    let body = if a >= 1e6 {
        format!("{}M", trimmed(a / 1e6, 1))
    } else if a >= 1e4 {
        format!("{}k", trimmed(a / 1e3, 1))
    } else if (a - a.round()).abs() < 1e-9 {
        count(a.round() as u64)
    } else {
        trimmed(a, 2)
    };
    if body == "0" {
        body
    } else {
        format!("{sign}{body}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_short_and_never_carry_a_needless_decimal() {
        let ticks: Vec<String> = [
            0.0,
            6000.0,
            250.0,
            999.0,
            12_000.0,
            12_500.0,
            1_500_000.0,
            0.25,
            2.5,
            -5.0,
            1234.0,
        ]
        .into_iter()
        .map(tick)
        .collect();
        assert_eq!(
            ticks,
            [
                "0", "6,000", "250", "999", "12k", "12.5k", "1.5M", "0.25", "2.5", "-5", "1,234"
            ]
        );
        assert_eq!(
            [count(0), count(999), count(1_650), count(1_234_567)],
            ["0", "999", "1,650", "1,234,567"]
        );
    }
}
