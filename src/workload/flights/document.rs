//! One `airline.flights` document as a pure function of (datasetSeed, seq) (specs/flights.md §2).
//!
//! [`Flight::generate`] draws every value from `stream(key(datasetSeed, 1, seq))` in field order;
//! [`Flight::to_document`] writes the fields in that same order, so the BSON bytes of a document
//! never depend on anything but its inputs.

use super::data::{
    AMENITIES, CARRIERS, EMAIL_DOMAINS, GATE_LETTERS, PLANES, SEAT_LETTERS, STATUSES, cities,
    first_names, last_names,
};
use super::ids::{T0_UNIX_SECONDS, object_id, seeded_flight_id};
use crate::workload::bson_writer::{BsonWriter, Key};
use crate::workload::rng::{Stream, TAG_DOCUMENT, key};
use mongodb::bson::{DateTime, Document, doc, oid::ObjectId};

/// At most this many passengers per document (plgm main's cap).
pub const MAX_PASSENGERS: usize = 25;

/// The v1 constant `avgDocBytes`: the mean BSON size of documents 0–99,999 of datasetSeed 1
/// (287,630,561 bytes / 100,000 = 2,876.3), rounded to whole bytes.
pub const AVG_DOC_BYTES: u64 = 2876;

/// The generated values of one flight, before encoding. Kept typed because operations need
/// them: F2/A2 filter on a target's route, F3 on its status, the seat transfer on a passenger
/// and on the spare seat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flight {
    /// Document number.
    pub seq: u64,
    /// `_id` built from `seq`.
    pub id: ObjectId,
    /// Seeded or run-inserted flight id (§3).
    pub flight_id: i32,
    /// Carrier code.
    pub airline: &'static str,
    /// Agent's given name.
    pub agent_first_name: &'static str,
    /// Agent's surname.
    pub agent_last_name: &'static str,
    /// `first.last@last.tld`, lower-cased, without the dot between the names.
    pub agent_email: String,
    /// Milliseconds since the Unix epoch; within the year before T0, on a whole minute.
    pub flight_date_millis: i64,
    /// Origin city.
    pub origin: &'static str,
    /// Destination city, never the origin.
    pub destination: &'static str,
    /// Airline code plus 3 digits.
    pub flight_code: String,
    /// One of [`STATUSES`].
    pub status: &'static str,
    /// 30–900.
    pub duration_minutes: i32,
    /// Letter A–F plus 1–50.
    pub gate: String,
    /// Aircraft type.
    pub plane_type: &'static str,
    /// Seats of that aircraft type.
    pub total_seats: i32,
    /// 2–5 distinct amenities.
    pub amenities: Vec<&'static str>,
    /// 0–total_seats.
    pub seats_available: i32,
    /// 1–25 passengers with distinct seats.
    pub passengers: Vec<Passenger>,
    /// The seat map entry at position n after the passengers' seat shuffle: a seat no passenger
    /// holds (the seat transfer's target seat, §5.7). Not stored in the document.
    pub spare_seat: String,
}

/// One entry of `passengers`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Passenger {
    /// 1-based position.
    pub passenger_id: i32,
    /// `FIRST + " " + LAST`.
    pub name: String,
    /// `TCK-` plus 8 digits.
    pub ticket_number: String,
    /// Seat label, unique within the document.
    pub seat_number: String,
}

/// Label `i` (0-based) of the row-major seat map `1A … 1F, 2A, …`.
fn seat_label(i: u16) -> String {
    let letters = SEAT_LETTERS.len() as u16;
    let mut label = String::with_capacity(4);
    push_decimal(&mut label, u64::from(i / letters + 1), 1);
    label.push(SEAT_LETTERS[usize::from(i % letters)]);
    label
}

/// Appends `n` in decimal, zero-padded to `width` digits. Documents are generated per
/// operation, and `format!` was a tenth of the client's CPU on flights.
fn push_decimal(s: &mut String, mut n: u64, width: usize) {
    let mut digits = [b'0'; 20];
    let mut start = digits.len();
    while n > 0 || start == digits.len() {
        start -= 1;
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    let start = start.min(digits.len().saturating_sub(width));
    s.push_str(std::str::from_utf8(&digits[start..]).expect("ASCII digits"));
}

/// `parts` joined, in one allocation.
fn concat(parts: &[&str]) -> String {
    let mut s = String::with_capacity(parts.iter().map(|p| p.len()).sum());
    for p in parts {
        s.push_str(p);
    }
    s
}

/// The first draws of a document, in stream order, up to its status.
struct Head {
    airline: &'static str,
    agent_first_name: &'static str,
    agent_last_name: &'static str,
    email_domain: &'static str,
    flight_date_millis: i64,
    origin: &'static str,
    destination: &'static str,
    flight_number: u64,
    status: &'static str,
}

impl Head {
    fn draw(r: &mut Stream) -> Head {
        let airline = *r.choice(&CARRIERS);
        let agent_first_name = *r.choice(first_names());
        let agent_last_name = *r.choice(last_names());
        let email_domain = *r.choice(&EMAIL_DOMAINS);
        let hours_before = r.uniform(0, 8759) as i64;
        let minutes_after = r.uniform(0, 59) as i64;
        let flight_date_millis =
            (i64::from(T0_UNIX_SECONDS) - hours_before * 3600 + minutes_after * 60) * 1000;
        let city = cities();
        let o = r.index(city.len());
        // One draw over the other |CITIES| − 1 cities: skip the origin's slot.
        let mut j = r.uniform(0, city.len() as u64 - 2) as usize;
        if j >= o {
            j += 1;
        }
        let flight_number = r.uniform(100, 999);
        let status = *r.choice(&STATUSES);
        Head {
            airline,
            agent_first_name,
            agent_last_name,
            email_domain,
            flight_date_millis,
            origin: city[o],
            destination: city[j],
            flight_number,
            status,
        }
    }
}

impl Flight {
    /// Seeded document `seq` of dataset `dataset_seed` (flight_id from §3's seeded formula).
    pub fn seeded(dataset_seed: u64, seq: u64) -> Flight {
        Flight::generate(dataset_seed, seq, seeded_flight_id(seq))
    }

    /// Origin, destination and status of seeded document `seq`: what finds and aggregates aim
    /// at, drawn without building the rest of the document.
    pub fn seeded_route_and_status(
        dataset_seed: u64,
        seq: u64,
    ) -> (&'static str, &'static str, &'static str) {
        let head = Head::draw(&mut Stream::new(key(dataset_seed, TAG_DOCUMENT, seq)));
        (head.origin, head.destination, head.status)
    }

    /// Document `seq` with the given `flight_id` (seeded or run-inserted, see `ids`).
    pub fn generate(dataset_seed: u64, seq: u64, flight_id: i32) -> Flight {
        let mut r = Stream::new(key(dataset_seed, TAG_DOCUMENT, seq));
        let Head {
            airline,
            agent_first_name,
            agent_last_name,
            email_domain,
            flight_date_millis,
            origin,
            destination,
            flight_number,
            status,
        } = Head::draw(&mut r);
        let last_lower = agent_last_name.to_ascii_lowercase();
        let mut agent_email = concat(&[agent_first_name, &last_lower, "@", &last_lower, "."]);
        agent_email.make_ascii_lowercase();
        agent_email.push_str(email_domain);
        let mut flight_code = String::from(airline);
        push_decimal(&mut flight_code, flight_number, 1);
        let duration_minutes = r.uniform(30, 900) as i32;
        let mut gate = String::from(*r.choice(&GATE_LETTERS));
        push_decimal(&mut gate, r.uniform(1, 50), 1);
        let (plane_type, seats) = *r.choice(&PLANES);
        let amenity_count = r.uniform(2, 5) as usize;
        let mut amenities = AMENITIES.to_vec();
        r.partial_shuffle(&mut amenities, amenity_count);
        amenities.truncate(amenity_count);
        let seats_available = r.uniform(0, u64::from(seats)) as u32;
        let n = (seats - seats_available).clamp(1, MAX_PASSENGERS as u32) as usize;
        // The seat map is shuffled as positions and only the n + 1 labels used are written
        // (the same draws as shuffling the labels themselves).
        let mut seat_order: Vec<u16> = (0..seats as u16).collect();
        r.partial_shuffle(&mut seat_order, n);
        let spare_seat = seat_label(seat_order[n]);
        let passengers = (1..=n)
            .map(|i| Passenger {
                passenger_id: i as i32,
                name: concat(&[*r.choice(first_names()), " ", *r.choice(last_names())]),
                ticket_number: {
                    let mut ticket = String::with_capacity(12);
                    ticket.push_str("TCK-");
                    push_decimal(&mut ticket, r.uniform(1, 99_999_999), 8);
                    ticket
                },
                seat_number: seat_label(seat_order[i - 1]),
            })
            .collect();
        Flight {
            seq,
            id: object_id(seq),
            flight_id,
            airline,
            agent_first_name,
            agent_last_name,
            agent_email,
            flight_date_millis,
            origin,
            destination,
            flight_code,
            status,
            duration_minutes,
            gate,
            plane_type,
            total_seats: seats as i32,
            amenities,
            seats_available: seats_available as i32,
            passengers,
            spare_seat,
        }
    }

    /// The document as stored, fields in the spec's order.
    pub fn to_document(&self) -> Document {
        let passengers: Vec<Document> =
            self.passengers.iter().map(Passenger::to_document).collect();
        doc! {
            "_id": self.id,
            "flight_id": self.flight_id,
            "airline": self.airline,
            "agent_first_name": self.agent_first_name,
            "agent_last_name": self.agent_last_name,
            "agent_email": &self.agent_email,
            "flight_date": DateTime::from_millis(self.flight_date_millis),
            "origin": self.origin,
            "destination": self.destination,
            "flight_code": &self.flight_code,
            "status": self.status,
            "duration_minutes": self.duration_minutes,
            "gate": &self.gate,
            "equipment": {
                "plane_type": self.plane_type,
                "total_seats": self.total_seats,
                "amenities": self.amenities.clone(),
            },
            "seats_available": self.seats_available,
            "passengers": passengers,
        }
    }

    /// Writes the document under `key` (an embedded document, or an array element): the bytes
    /// of [`Flight::to_document`], without building it. Returns its BSON size.
    pub fn write<'k>(&self, w: &mut BsonWriter, key: impl Into<Key<'k>>) -> usize {
        w.start_document(key);
        w.object_id("_id", &self.id);
        w.i32("flight_id", self.flight_id);
        w.str("airline", self.airline);
        w.str("agent_first_name", self.agent_first_name);
        w.str("agent_last_name", self.agent_last_name);
        w.str("agent_email", &self.agent_email);
        w.date_time("flight_date", self.flight_date_millis);
        w.str("origin", self.origin);
        w.str("destination", self.destination);
        w.str("flight_code", &self.flight_code);
        w.str("status", self.status);
        w.i32("duration_minutes", self.duration_minutes);
        w.str("gate", &self.gate);
        w.start_document("equipment");
        w.str("plane_type", self.plane_type);
        w.i32("total_seats", self.total_seats);
        w.start_array("amenities");
        for (i, amenity) in self.amenities.iter().enumerate() {
            w.str(i, amenity);
        }
        w.end();
        w.end();
        w.i32("seats_available", self.seats_available);
        w.start_array("passengers");
        for (i, p) in self.passengers.iter().enumerate() {
            w.start_document(i);
            w.i32("passenger_id", p.passenger_id);
            w.str("name", &p.name);
            w.str("ticket_number", &p.ticket_number);
            w.str("seat_number", &p.seat_number);
            w.end();
        }
        w.end();
        w.end()
    }
}

impl Passenger {
    /// `{passenger_id, name, ticket_number, seat_number}`.
    pub fn to_document(&self) -> Document {
        doc! {
            "passenger_id": self.passenger_id,
            "name": &self.name,
            "ticket_number": &self.ticket_number,
            "seat_number": &self.seat_number,
        }
    }
}

/// The BSON bytes of a generated document or command.
pub fn bson_bytes(document: &Document) -> Vec<u8> {
    let mut out = Vec::new();
    // Encoding fails only for keys containing NUL or documents over 2 GiB; generated documents
    // have static keys and are a few KB.
    document
        .to_writer(&mut out)
        .expect("a generated document encodes as BSON");
    out
}

/// The BSON size of a generated document in bytes (what collStats `size` adds up).
pub fn bson_size(document: &Document) -> u64 {
    bson_bytes(document).len() as u64
}

#[cfg(test)]
mod tests {
    //! Expected bytes and values come from testdata/reference.py (independent Python
    //! implementation with its own BSON encoder).
    use super::*;

    #[test]
    fn decimals_are_padded_to_their_width() {
        let written = |n, width| {
            let mut s = String::from("x");
            push_decimal(&mut s, n, width);
            s
        };
        assert_eq!(written(0, 1), "x0");
        assert_eq!(written(7, 8), "x00000007");
        assert_eq!(written(99_999_999, 8), "x99999999");
        assert_eq!(written(123, 1), "x123");
        assert_eq!(written(u64::MAX, 1), "x18446744073709551615");
        assert_eq!(seat_label(0), "1A");
        assert_eq!(seat_label(59), "10F");
    }
    use crate::workload::flights::ids::inserted_flight_id;

    fn bytes_hex(f: &Flight) -> String {
        hex::encode(bson_bytes(&f.to_document()))
    }

    /// The bytes of `f` written as the element `0` of an array, cut out of it.
    fn written(f: &Flight) -> Vec<u8> {
        let mut w = BsonWriter::with_capacity(4096);
        let size = f.write(&mut w, 0);
        let all = w.finish();
        // length (4), type (1), key "0" and its NUL (2) … the array's final NUL (1).
        assert_eq!(size, all.len() - 8);
        all[7..all.len() - 1].to_vec()
    }

    #[test]
    fn written_documents_are_the_encoded_documents() {
        for seed in [1, 2] {
            for seq in (0..3000).chain([123_456, 9_999_999]) {
                let f = Flight::seeded(seed, seq);
                assert_eq!(
                    written(&f),
                    bson_bytes(&f.to_document()),
                    "seed {seed} seq {seq}"
                );
            }
        }
        let inserted = Flight::generate(1, (1 << 40) + 1, inserted_flight_id(7, 3));
        assert_eq!(written(&inserted), bson_bytes(&inserted.to_document()));
    }

    #[test]
    fn seed1_seq0_bson_bytes_match_reference() {
        let f = Flight::seeded(1, 0);
        assert_eq!(
            bytes_hex(&f),
            include_str!("testdata/doc_seed1_seq0.hex").trim()
        );
        assert_eq!(f.flight_id, 610_617);
        assert_eq!(f.passengers.len(), 25);
        assert_eq!(f.spare_seat, "5B");
    }

    #[test]
    fn seed1_seq1_bson_bytes_match_reference() {
        let f = Flight::seeded(1, 1);
        assert_eq!(
            bytes_hex(&f),
            include_str!("testdata/doc_seed1_seq1.hex").trim()
        );
        assert_eq!(f.spare_seat, "5B");
    }

    #[test]
    fn seed1_seq123456_bson_bytes_match_reference() {
        let f = Flight::seeded(1, 123_456);
        let bytes = bson_bytes(&f.to_document());
        assert_eq!(bytes.len(), 3063);
        assert_eq!(
            hex::encode(&bytes),
            include_str!("testdata/doc_seed1_seq123456.hex").trim()
        );
        assert_eq!(f.spare_seat, "3B");
    }

    #[test]
    fn route_and_status_are_the_whole_document_s() {
        for seq in (0..2_000).chain([123_456, 9_999_999]) {
            let f = Flight::seeded(3, seq);
            assert_eq!(
                Flight::seeded_route_and_status(3, seq),
                (f.origin, f.destination, f.status),
                "seq {seq}"
            );
        }
    }

    #[test]
    fn generation_is_stable_across_calls() {
        assert_eq!(Flight::seeded(1, 42), Flight::seeded(1, 42));
        assert_ne!(Flight::seeded(1, 42), Flight::seeded(2, 42));
    }

    #[test]
    fn inserted_document_size_matches_reference() {
        let base = 1u64 << 48;
        let f = Flight::generate(1, base, inserted_flight_id(base, base));
        assert_eq!(f.flight_id, 1_000_000);
        assert_eq!(bson_size(&f.to_document()), 3064);
    }

    #[test]
    fn invariants_hold_over_many_documents() {
        for seq in 0..2000 {
            let f = Flight::seeded(7, seq);
            assert_ne!(f.origin, f.destination);
            assert!((2..=5).contains(&f.amenities.len()));
            let n = f.passengers.len();
            assert!((1..=MAX_PASSENGERS).contains(&n));
            assert_eq!(n as i32, (f.total_seats - f.seats_available).clamp(1, 25));
            let mut seats: Vec<&str> = f
                .passengers
                .iter()
                .map(|p| p.seat_number.as_str())
                .collect();
            seats.push(&f.spare_seat);
            seats.sort_unstable();
            seats.dedup();
            assert_eq!(seats.len(), n + 1, "seats not unique in seq {seq}");
            assert_eq!(f.flight_date_millis % 60_000, 0);
            let t0 = i64::from(T0_UNIX_SECONDS) * 1000;
            assert!(f.flight_date_millis >= t0 - 8759 * 3_600_000);
            assert!(f.flight_date_millis <= t0 + 59 * 60_000);
        }
    }

    #[test]
    fn the_shard_key_fields_the_api_lists_are_the_document_s_scalars() {
        use crate::api::sharding::{FLIGHTS_FIELDS, FieldKind};
        use mongodb::bson::Bson;
        let doc = Flight::generate(1, 7, seeded_flight_id(7)).to_document();
        let mut scalars = Vec::new();
        for (key, value) in &doc {
            match value {
                Bson::Document(inner) => scalars.extend(
                    inner
                        .iter()
                        .filter(|(_, v)| !matches!(v, Bson::Array(_)))
                        .map(|(k, v)| (format!("{key}.{k}"), v.clone())),
                ),
                Bson::Array(_) => {}
                v => scalars.push((key.clone(), v.clone())),
            }
        }
        let kinds: Vec<(String, FieldKind)> = scalars
            .iter()
            .map(|(k, v)| {
                let kind = match v {
                    Bson::Int32(_) => FieldKind::Int,
                    Bson::String(_) => FieldKind::String,
                    Bson::DateTime(_) => FieldKind::Date,
                    Bson::ObjectId(_) => FieldKind::ObjectId,
                    other => panic!("{k}: a {other:?} the list has no kind for"),
                };
                (k.clone(), kind)
            })
            .collect();
        let listed: Vec<(String, FieldKind)> = FLIGHTS_FIELDS
            .iter()
            .map(|(f, k)| ((*f).to_owned(), *k))
            .collect();
        assert_eq!(listed, kinds);
    }
}
