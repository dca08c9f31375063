//! Record keys (specs/ycsb.md §3): `user` + the decimal key number, FNV-hashed unless inserts are
//! ordered, left-padded with zeros to `zeropadding` digits.

/// FNV-1a 64-bit offset basis.
const FNV_OFFSET_BASIS_64: u64 = 0xCBF2_9CE4_8422_2325;
/// FNV 64-bit prime.
const FNV_PRIME_64: u64 = 1_099_511_628_211;

/// YCSB's 64-bit FNV-1a variant: hashes the 8 little-endian bytes of `value` (not its decimal text)
/// and returns the absolute value of the result read as a signed integer. `i64::MIN` stays negative,
/// exactly as Java's `Math.abs` leaves it (practically never hit).
pub fn fnv64(value: u64) -> i64 {
    let mut hash = FNV_OFFSET_BASIS_64;
    for byte in value.to_le_bytes() {
        hash = (hash ^ u64::from(byte)).wrapping_mul(FNV_PRIME_64);
    }
    (hash as i64).wrapping_abs()
}

/// [`fnv64`] as an unsigned number, for folding ranks onto a key range. Differs from YCSB only for
/// the single input whose hash is `i64::MIN` (YCSB would produce a key below the range there).
pub(crate) fn fnv64_unsigned(value: u64) -> u64 {
    fnv64(value).unsigned_abs()
}

/// The key of record number `keynum`: `user` + digits (hashed when `hashed`), zero-padded to
/// `zeropadding` characters (padding only when shorter; a sign counts as a character, as in YCSB).
pub fn key_name(keynum: u64, hashed: bool, zeropadding: u32) -> String {
    let digits = if hashed {
        fnv64(keynum).to_string()
    } else {
        keynum.to_string()
    };
    let fill = (zeropadding as usize).saturating_sub(digits.len());
    let mut key = String::with_capacity(4 + fill + digits.len());
    key.push_str("user");
    key.extend(std::iter::repeat_n('0', fill));
    key.push_str(&digits);
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    // Every vector of specs/ycsb.md §3, re-derived once with an independent Python FNV-1a.
    #[test]
    fn hashed_keys_match_spec_vectors() {
        let cases = [
            (0, "user6284781860667377211"),
            (1, "user8517097267634966620"),
            (2, "user1820151046732198393"),
            (3, "user4052466453699787802"),
            (10, "user2408371864701034737"),
            (999, "user2071219101098386137"),
            (1000, "user5952875239596136740"),
            (999_999, "user2744965632448235251"),
        ];
        for (keynum, expected) in cases {
            assert_eq!(key_name(keynum, true, 1), expected, "key number {keynum}");
        }
    }

    #[test]
    fn fnv_values_match_reference() {
        assert_eq!(fnv64(0), 6_284_781_860_667_377_211);
        assert_eq!(fnv64(1), 8_517_097_267_634_966_620);
        assert_eq!(fnv64_unsigned(2), 1_820_151_046_732_198_393);
    }

    #[test]
    fn ordered_keys_are_padded_only_when_shorter() {
        assert_eq!(key_name(5, false, 1), "user5");
        assert_eq!(key_name(5, false, 8), "user00000005");
        assert_eq!(key_name(123_456_789, false, 8), "user123456789");
        assert_eq!(key_name(0, true, 22), "user0006284781860667377211");
    }
}
