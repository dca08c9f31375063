//! Full latency histograms inside result documents: HdrHistogram V2 + DEFLATE serialization
//! (the format every HdrHistogram implementation reads), base64 in JSON.
//!
//! Results keep whole histograms, not just percentiles, so that repetitions and client pods
//! are combined by adding histograms; averaging percentiles would be wrong.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use serde::{Deserialize, Serialize};

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
        let mut histogram: Histogram<u64> = Deserializer::new()
            .deserialize(&mut &bytes[..])
            .map_err(|e| HistogramCodecError::Decode(format!("{e:?}")))?;
        histogram.auto(true);
        Ok(EncodedHistogram(histogram))
    }
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
