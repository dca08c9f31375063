//! Full latency histograms inside result documents: HdrHistogram V2 + DEFLATE serialization
//! (the format every HdrHistogram implementation reads), base64 in JSON.
//!
//! Results keep whole histograms, not just percentiles, so that repetitions and client pods
//! are combined by adding histograms; averaging percentiles would be wrong.

use std::borrow::Cow;
use std::io::Read;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use serde::{Deserialize, Serialize};

/// Cookie of an HdrHistogram V2 encoding.
const V2_COOKIE: u32 = 0x1c84_9313;
/// Cookie of a V2+DEFLATE encoding: a length, then a zlib stream of a V2 encoding.
const V2_DEFLATE_COOKIE: u32 = 0x1c84_9314;
/// A V2 header: cookie, payload length, normalizing offset, digits, lowest and highest
/// trackable values, integer-to-double ratio.
const V2_HEADER_BYTES: usize = 40;
/// The largest V2 encoding decoded (after DEFLATE), in bytes. A latency histogram of 3
/// significant digits over the whole u64 range encodes in well under 1 MiB; the bound keeps a
/// crafted length or a zlib bomb from allocating gigabytes.
const MAX_V2_BYTES: usize = 1 << 20;

/// Why a histogram could not be encoded or decoded.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum HistogramCodecError {
    /// The text is not base64.
    #[error("histogram is not base64 text: {0}")]
    Base64(String),
    /// The bytes are not an HdrHistogram V2 (+DEFLATE) encoding.
    #[error("histogram bytes are not a V2 or V2+DEFLATE HdrHistogram encoding: {0}")]
    Decode(String),
    /// The histogram could not be serialized.
    #[error("cannot serialize histogram: {0}")]
    Encode(String),
}

/// A latency histogram that serializes as base64 of its V2+DEFLATE encoding.
#[derive(Clone, PartialEq)]
pub struct EncodedHistogram(pub Histogram<u64>);

impl std::fmt::Debug for EncodedHistogram {
    // The derived form prints every bucket (thousands of zeros); the shape is enough.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let h = &self.0;
        let (min, max) = if h.is_empty() {
            (0, 0)
        } else {
            (h.min(), h.max())
        };
        write!(
            f,
            "EncodedHistogram(count={}, min={min}, max={max})",
            h.len()
        )
    }
}

impl EncodedHistogram {
    /// The base64 text of the V2+DEFLATE encoding.
    ///
    /// # Errors
    /// [`HistogramCodecError::Encode`] if hdrhistogram cannot serialize it.
    pub fn encode(&self) -> Result<String, HistogramCodecError> {
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&self.0, &mut bytes)
            .map_err(|e| HistogramCodecError::Encode(format!("{e:?}")))?;
        Ok(STANDARD.encode(bytes))
    }

    /// Decodes base64 text of a V2 or V2+DEFLATE encoding. The decoded histogram resizes itself
    /// like a recorded one, so histograms of different ranges can be added.
    ///
    /// # Errors
    /// [`HistogramCodecError::Base64`] or [`HistogramCodecError::Decode`].
    pub fn decode(text: &str) -> Result<EncodedHistogram, HistogramCodecError> {
        let bytes = STANDARD
            .decode(text)
            .map_err(|e| HistogramCodecError::Base64(e.to_string()))?;
        EncodedHistogram::decode_bytes(&bytes)
    }

    /// Decodes a V2 or V2+DEFLATE encoding (the bytes inside the base64 text).
    ///
    /// # Errors
    /// [`HistogramCodecError::Decode`].
    pub fn decode_bytes(bytes: &[u8]) -> Result<EncodedHistogram, HistogramCodecError> {
        // hdrhistogram allocates what the header's lengths say before reading: check them
        // against the bytes there are first.
        let v2 = bounded_v2(bytes)?;
        let mut histogram: Histogram<u64> = Deserializer::new()
            .deserialize(&mut &v2[..])
            .map_err(|e| HistogramCodecError::Decode(format!("{e:?}")))?;
        histogram.auto(true);
        Ok(EncodedHistogram(histogram))
    }
}

/// The V2 encoding inside `bytes` (inflated when compressed), its payload length checked
/// against the bytes that follow the header.
fn bounded_v2(bytes: &[u8]) -> Result<Cow<'_, [u8]>, HistogramCodecError> {
    let err = |what: String| HistogramCodecError::Decode(what);
    let u32_at = |bytes: &[u8], at: usize| {
        bytes
            .get(at..at + 4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
            .ok_or_else(|| err(format!("{} bytes end inside the header", bytes.len())))
    };
    let v2 = match u32_at(bytes, 0)? as u32 {
        V2_COOKIE => Cow::Borrowed(bytes),
        V2_DEFLATE_COOKIE => {
            let length = u32_at(bytes, 4)?;
            let compressed = bytes.get(8..8 + length).ok_or_else(|| {
                err(format!(
                    "a compressed payload of {length} bytes, but {} follow",
                    bytes.len() - 8
                ))
            })?;
            let mut inflated = Vec::new();
            flate2::read::ZlibDecoder::new(compressed)
                .take(MAX_V2_BYTES as u64 + 1)
                .read_to_end(&mut inflated)
                .map_err(|e| err(format!("the compressed payload does not inflate: {e}")))?;
            if inflated.len() > MAX_V2_BYTES {
                return Err(err(format!(
                    "the payload inflates to more than {MAX_V2_BYTES} bytes"
                )));
            }
            Cow::Owned(inflated)
        }
        cookie => {
            return Err(err(format!(
                "cookie 0x{cookie:08x}, expected 0x{V2_COOKIE:08x} (V2) or \
                 0x{V2_DEFLATE_COOKIE:08x} (V2+DEFLATE)"
            )));
        }
    };
    if v2.len() < V2_HEADER_BYTES {
        return Err(err(format!(
            "{} bytes end inside the {V2_HEADER_BYTES}-byte V2 header",
            v2.len()
        )));
    }
    let payload = u32_at(&v2, 4)?;
    let follows = v2.len() - V2_HEADER_BYTES;
    if u32_at(&v2, 0)? as u32 != V2_COOKIE || payload > follows {
        return Err(err(format!(
            "a V2 payload of {payload} bytes, but {follows} follow its header"
        )));
    }
    check_runs(&v2[V2_HEADER_BYTES..V2_HEADER_BYTES + payload])?;
    Ok(v2)
}

/// The payload is a sequence of ZigZag LEB128 numbers (at most 9 bytes, the 9th of 8 bits):
/// counts, or runs of empty buckets as negative numbers. hdrhistogram negates a run, which
/// overflows for the one number -2^63 (all bits set): refuse it first.
fn check_runs(payload: &[u8]) -> Result<(), HistogramCodecError> {
    let mut at = 0;
    while at < payload.len() {
        let mut encoded: u64 = 0;
        let mut read = 0;
        while let Some(&byte) = payload.get(at + read) {
            if read == 8 {
                encoded |= u64::from(byte) << 56;
                read += 1;
                break;
            }
            encoded |= u64::from(byte & 0x7f) << (7 * read);
            read += 1;
            if byte & 0x80 == 0 {
                break;
            }
        }
        if encoded == u64::MAX {
            return Err(HistogramCodecError::Decode(format!(
                "a run of 2^63 empty buckets at payload byte {at}"
            )));
        }
        at += read;
    }
    Ok(())
}

impl From<Histogram<u64>> for EncodedHistogram {
    fn from(h: Histogram<u64>) -> Self {
        EncodedHistogram(h)
    }
}

impl schemars::JsonSchema for EncodedHistogram {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "EncodedHistogram".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "contentEncoding": "base64",
            "description": "Latency histogram in µs: HdrHistogram V2+DEFLATE encoding \
                            (cookie 0x1c849314), base64."
        })
    }
}

impl Serialize for EncodedHistogram {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let text = self.encode().map_err(serde::ser::Error::custom)?;
        serde::Serializer::serialize_str(serializer, &text)
    }
}

impl<'de> Deserialize<'de> for EncodedHistogram {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Decoding inside the visitor lets a reader place the error at the string itself.
        struct Text;
        impl serde::de::Visitor<'_> for Text {
            type Value = EncodedHistogram;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a base64 HdrHistogram V2 encoding")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<EncodedHistogram, E> {
                EncodedHistogram::decode(text).map_err(E::custom)
            }
        }
        deserializer.deserialize_str(Text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::latency::{LatencySummary, new_histogram};

    #[test]
    fn round_trip_keeps_every_bucket() {
        let mut h = new_histogram();
        for v in [
            0_u64,
            1,
            2,
            150,
            2047,
            2048,
            3001,
            40_000,
            1_000_000,
            3_600_000_000,
        ] {
            h.record(v).unwrap();
        }
        h.record_n(120, 500).unwrap();
        let text = EncodedHistogram(h.clone()).encode().unwrap();
        let back = EncodedHistogram::decode(&text).unwrap().0;
        assert_eq!(back, h);
        let recorded: Vec<(u64, u64)> = back
            .iter_recorded()
            .map(|b| (b.value_iterated_to(), b.count_at_value()))
            .collect();
        let expected: Vec<(u64, u64)> = h
            .iter_recorded()
            .map(|b| (b.value_iterated_to(), b.count_at_value()))
            .collect();
        assert_eq!(recorded, expected);
        assert_eq!(LatencySummary::of(&back), LatencySummary::of(&h));
    }

    #[test]
    fn serializes_as_a_base64_json_string_starting_with_the_deflate_cookie() {
        let mut h = new_histogram();
        h.record(7).unwrap();
        let json = serde_json::to_value(EncodedHistogram(h)).unwrap();
        let text = json.as_str().unwrap();
        let bytes = STANDARD.decode(text).unwrap();
        // V2+DEFLATE cookie 0x1c849314 (base 0x1c849304 | 0x10, as in HdrHistogram-Java), big-endian.
        assert_eq!(&bytes[..4], &[0x1c, 0x84, 0x93, 0x14]);
        let back: EncodedHistogram = serde_json::from_value(json).unwrap();
        assert_eq!(back.0.count_at(7), 1);
    }

    #[test]
    fn decoded_histograms_still_add_larger_values() {
        let mut small = new_histogram();
        small.record(10).unwrap();
        let mut decoded = EncodedHistogram::decode(&EncodedHistogram(small).encode().unwrap())
            .unwrap()
            .0;
        let mut large = new_histogram();
        large.record(50_000_000).unwrap();
        decoded.add(&large).unwrap();
        assert_eq!(decoded.len(), 2);
    }

    #[test]
    fn lengths_beyond_the_bytes_are_refused_before_allocating() {
        // Found by fuzzing: a V2 header claiming a 2 GiB payload made the decoder allocate it.
        let claims_2_gib: [u8; 65] = [
            0x1c, 0x84, 0x93, 0x13, 0x80, 0x00, 0x00, 0x0f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x00, 0xde, 0x5d,
            0xff, 0xff, 0xff, 0xff, 0x3f, 0xf0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
            0xa7, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2b, 0xa1, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        ];
        assert_eq!(
            EncodedHistogram::decode_bytes(&claims_2_gib),
            Err(HistogramCodecError::Decode(
                "a V2 payload of 2147483663 bytes, but 25 follow its header".into()
            ))
        );
        // A zlib stream that inflates beyond the bound: 2 MiB of zeros after a V2 cookie.
        let mut v2 = 0x1c84_9313_u32.to_be_bytes().to_vec();
        v2.resize(2 << 20, 0);
        let mut compressed = Vec::new();
        let mut encoder =
            flate2::write::ZlibEncoder::new(&mut compressed, flate2::Compression::best());
        std::io::Write::write_all(&mut encoder, &v2).unwrap();
        encoder.finish().unwrap();
        let mut bomb = 0x1c84_9314_u32.to_be_bytes().to_vec();
        bomb.extend((compressed.len() as u32).to_be_bytes());
        bomb.extend(&compressed);
        assert_eq!(
            EncodedHistogram::decode_bytes(&bomb),
            Err(HistogramCodecError::Decode(
                "the payload inflates to more than 1048576 bytes".into()
            ))
        );
    }

    #[test]
    fn a_run_of_2_pow_63_empty_buckets_is_refused() {
        // Found by fuzzing: hdrhistogram negated the run -2^63 and overflowed.
        let overflowing: [u8; 61] = [
            0x1c, 0x84, 0x93, 0x13, 0x00, 0x00, 0x00, 0x0f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0xa8, 0x00, 0x01, 0xff, 0xff, 0xff, 0xff,
            0xff, 0xff, 0xff, 0x0d, 0x3f, 0xf0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff,
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0x2b, 0xa1, 0xe9, 0xe9, 0x02,
            0xe9, 0xe9, 0xe9, 0x87, 0x02,
        ];
        assert_eq!(
            EncodedHistogram::decode_bytes(&overflowing),
            Err(HistogramCodecError::Decode(
                "a run of 2^63 empty buckets at payload byte 1".into()
            ))
        );
    }

    #[test]
    fn a_deflated_encoding_shorter_than_a_header_is_refused() {
        // Found by fuzzing: a zlib stream inflating to 35 bytes, less than a V2 header.
        let short: [u8; 35] = [
            0x1c, 0x84, 0x93, 0x13, 0x00, 0x00, 0x00, 0x00, 0x84, 0x00, 0x00, 0xf8, 0xff, 0xff,
            0xff, 0xff, 0xff, 0xff, 0x0f, 0x00, 0x00, 0x02, 0xa7, 0x02, 0x02, 0x02, 0xc1, 0xd1,
            0x1d, 0x43, 0x02, 0xa1, 0x87, 0x02, 0x02,
        ];
        assert_eq!(
            EncodedHistogram::decode_bytes(&short),
            Err(HistogramCodecError::Decode(
                "35 bytes end inside the 40-byte V2 header".into()
            ))
        );
    }

    #[test]
    fn garbage_is_refused_with_a_clear_error() {
        assert!(matches!(
            EncodedHistogram::decode("not base64!"),
            Err(HistogramCodecError::Base64(_))
        ));
        assert!(matches!(
            EncodedHistogram::decode("AAAAAA=="),
            Err(HistogramCodecError::Decode(_))
        ));
        let e = serde_json::from_str::<EncodedHistogram>("\"AAAAAA==\"").unwrap_err();
        assert!(e.to_string().contains("V2"), "{e}");
    }
}
