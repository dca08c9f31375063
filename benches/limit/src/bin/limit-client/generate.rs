//! Seeded randomness and the workloads' data: SplitMix64, YCSB's scrambled zipfian keys, YCSB
//! records' fields, and flights documents.

use bson::{Bson, Document, doc};

/// SplitMix64: the client's only source of randomness, seeded.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub(crate) fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// YCSB's zipfian distribution (theta 0.99) over [0, n), scrambled by FNV-1a like YCSB's
/// ScrambledZipfianGenerator, so popular keys spread over the key space.
pub(crate) struct Zipfian {
    n: u64,
    theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
}

impl Zipfian {
    pub(crate) fn new(n: u64) -> Zipfian {
        let theta = 0.99;
        let zeta = |n: u64| (1..=n).map(|i| 1.0 / (i as f64).powf(theta)).sum::<f64>();
        let zetan = zeta(n);
        let zeta2 = zeta(2.min(n));
        let eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
        Zipfian {
            n,
            theta,
            alpha: 1.0 / (1.0 - theta),
            zetan,
            eta,
        }
    }

    pub(crate) fn next(&self, rng: &mut Rng) -> u64 {
        let u = rng.unit();
        let uz = u * self.zetan;
        let rank = if uz < 1.0 {
            0
        } else if uz < 1.0 + 0.5f64.powf(self.theta) {
            1
        } else {
            ((self.n as f64) * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64
        };
        fnv(rank.min(self.n - 1)) % self.n
    }
}

fn fnv(x: u64) -> u64 {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for b in x.to_le_bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

pub(crate) fn ycsb_key(n: u64) -> String {
    format!("user{:019}", fnv(n))
}

/// Ten fields of 100 bytes, as YCSB's core workloads write them.
pub(crate) fn ycsb_fields(rng: &mut Rng) -> Document {
    let mut d = Document::new();
    for f in 0..10 {
        let bytes: Vec<u8> = (0..100).map(|_| b' ' + (rng.below(95) as u8)).collect();
        d.insert(
            format!("field{f}"),
            bson::Binary {
                subtype: bson::spec::BinarySubtype::Generic,
                bytes,
            },
        );
    }
    d
}

const AIRPORTS: [&str; 8] = ["ATL", "DFW", "DEN", "ORD", "LAX", "JFK", "LAS", "MCO"];

pub(crate) fn flight(seq: i64, rng: &mut Rng) -> Document {
    let passengers: Vec<Bson> = (0..30)
        .map(|i| {
            Bson::Document(doc! {
                "name": format!("passenger {seq}-{i}"),
                "seat": format!("{}{}", 1 + rng.below(40), (b'A' + rng.below(6) as u8) as char),
                "ticket": format!("{:013}", rng.below(10_000_000_000_000)),
            })
        })
        .collect();
    doc! {
        "_id": seq,
        "flight_id": format!("FL{:05}", seq % 5000),
        "flight_code": format!("AB{}", seq % 9000),
        "origin": AIRPORTS[rng.below(8) as usize],
        "destination": AIRPORTS[rng.below(8) as usize],
        "flight_date": bson::DateTime::from_millis(1_700_000_000_000 + (seq % 365) * 86_400_000),
        "gate": format!("G{}", rng.below(60)),
        "status": "scheduled",
        "seats_available": 180 - (rng.below(60) as i32),
        "passengers": passengers,
    }
}
