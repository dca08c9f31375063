//! The frozen value lists of `flights/v1` (specs/flights.md §2).
//!
//! FIRST, LAST and CITIES are the versioned data table (files under `data/`, provenance and
//! license in `data/NOTICE`); their canonical form's SHA-256 ([`table_hash`]) is part of the
//! dataset identity. The short enumerations are written in the spec itself and covered by the
//! version string.

use sha2::{Digest, Sha256};
use std::sync::OnceLock;

/// Airline carrier codes.
pub const CARRIERS: [&str; 10] = ["AA", "DL", "UA", "WN", "AS", "B6", "NK", "F9", "HA", "G4"];
/// Top-level domains of agent e-mail addresses.
pub const EMAIL_DOMAINS: [&str; 7] = ["com", "biz", "info", "name", "net", "org", "io"];
/// Flight statuses (also the values `$set` by U1/U2).
pub const STATUSES: [&str; 7] = [
    "scheduled",
    "boarding",
    "departed",
    "in_air",
    "landed",
    "delayed",
    "cancelled",
];
/// The F3 planned-miss status: never generated.
pub const MISS_STATUS: &str = "unknown";
/// Gate letters.
pub const GATE_LETTERS: [&str; 6] = ["A", "B", "C", "D", "E", "F"];
/// Seat letters of one row (the seat map is row-major: 1A … 1F, 2A …).
pub const SEAT_LETTERS: [char; 6] = ['A', 'B', 'C', 'D', 'E', 'F'];
/// Aircraft types and their seat counts.
pub const PLANES: [(&str, u32); 8] = [
    ("Boeing 737-800", 162),
    ("Airbus A320", 150),
    ("Embraer E190", 100),
    ("Bombardier CRJ900", 76),
    ("Boeing 777-300ER", 396),
    ("Airbus A350-900", 325),
    ("Boeing 787-9", 290),
    ("Airbus A321neo", 194),
];
/// Cabin amenities; a document lists 2–5 distinct ones.
pub const AMENITIES: [&str; 7] = [
    "WiFi",
    "Seatback TV",
    "Power outlets",
    "Hot meals",
    "Priority boarding",
    "Extra legroom",
    "USB charging",
];

const FIRST_TXT: &str = include_str!("data/first.txt");
const LAST_TXT: &str = include_str!("data/last.txt");
const CITIES_TXT: &str = include_str!("data/cities.txt");

/// Splits a table file: one entry per line, each line ending in `\n`.
fn lines(text: &'static str) -> Vec<&'static str> {
    text.lines().collect()
}

/// FIRST: given names (3,007 entries).
pub fn first_names() -> &'static [&'static str] {
    static T: OnceLock<Vec<&'static str>> = OnceLock::new();
    T.get_or_init(|| lines(FIRST_TXT))
}

/// LAST: surnames (474 entries).
pub fn last_names() -> &'static [&'static str] {
    static T: OnceLock<Vec<&'static str>> = OnceLock::new();
    T.get_or_init(|| lines(LAST_TXT))
}

/// CITIES: US city names (98 entries); origins and destinations.
pub fn cities() -> &'static [&'static str] {
    static T: OnceLock<Vec<&'static str>> = OnceLock::new();
    T.get_or_init(|| lines(CITIES_TXT))
}

/// SHA-256 of the data table's canonical form: for each table in the order FIRST, LAST, CITIES,
/// the line `"<name> <count>\n"` (names `first`, `last`, `cities`) followed by every entry plus
/// `\n`, all UTF-8 (the entries are ASCII).
pub fn table_hash() -> [u8; 32] {
    static H: OnceLock<[u8; 32]> = OnceLock::new();
    *H.get_or_init(|| {
        let mut h = Sha256::new();
        for (name, table) in [
            ("first", first_names()),
            ("last", last_names()),
            ("cities", cities()),
        ] {
            h.update(format!("{name} {}\n", table.len()).as_bytes());
            for entry in table {
                h.update(entry.as_bytes());
                h.update(b"\n");
            }
        }
        h.finalize().into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn check_table(table: &[&str], len: usize, mean: f64) {
        assert_eq!(table.len(), len);
        let distinct: HashSet<&&str> = table.iter().collect();
        assert_eq!(distinct.len(), len, "duplicates in table");
        for e in table {
            assert!(
                !e.is_empty() && e.is_ascii() && e.trim() == *e,
                "bad entry {e:?}"
            );
        }
        let m = table.iter().map(|e| e.len()).sum::<usize>() as f64 / len as f64;
        assert!((m - mean).abs() < 0.05, "mean length {m}, spec ≈{mean}");
    }

    #[test]
    fn tables_have_the_specified_sizes_and_mean_lengths() {
        check_table(first_names(), 3007, 5.97);
        check_table(last_names(), 474, 6.55);
        check_table(cities(), 98, 8.85);
    }

    #[test]
    fn table_hash_matches_reference_value() {
        assert_eq!(
            hex::encode(table_hash()),
            "26afcb435d944b93921747340be0bceb6ea5004e009c56dc874a94486c2ea5a0"
        );
    }
}
