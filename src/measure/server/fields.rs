//! Reading optional typed fields out of server reply documents: absent is `None`, present but
//! of the wrong type is an error that names the field.

use mongodb::bson::{Bson, Document};

/// Why a server document could not be read.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ServerFigureError {
    /// A field is present with a type or value the figure cannot take.
    #[error("{document} field `{path}` is {found}, expected {expected}")]
    WrongType {
        /// Which reply (`serverStatus`, `hostInfo`).
        document: &'static str,
        /// Dotted path of the field.
        path: String,
        /// What was found (BSON type and value).
        found: String,
        /// What the field should hold.
        expected: &'static str,
    },
    /// A monotonic counter is smaller after the phase than before it.
    #[error(
        "{document} counter `{path}` went from {before} to {after}: the server restarted during \
         the phase, so its figures do not cover the phase; measure the cell again"
    )]
    CounterWentBackwards {
        /// Which reply.
        document: &'static str,
        /// Dotted path of the counter.
        path: String,
        /// Value before the phase.
        before: u64,
        /// Value after the phase.
        after: u64,
    },
}

/// Typed access to the fields of one reply document.
pub(super) struct Fields<'d> {
    doc: &'d Document,
    document: &'static str,
}

impl<'d> Fields<'d> {
    pub(super) fn new(doc: &'d Document, document: &'static str) -> Fields<'d> {
        Fields { doc, document }
    }

    fn wrong(&self, path: &[&str], found: &Bson, expected: &'static str) -> ServerFigureError {
        let mut shown = found.to_string();
        if shown.len() > 60 {
            let cut = (0..=60)
                .rev()
                .find(|&i| shown.is_char_boundary(i))
                .unwrap_or(0);
            shown.truncate(cut);
            shown.push('…');
        }
        ServerFigureError::WrongType {
            document: self.document,
            path: path.join("."),
            found: format!("{:?} {shown}", found.element_type()),
            expected,
        }
    }

    /// The value at `path`, `None` if any level is absent.
    fn get(&self, path: &[&str]) -> Result<Option<&'d Bson>, ServerFigureError> {
        let (last, parents) = path.split_last().expect("a field path is never empty");
        let mut doc = self.doc;
        for (depth, key) in parents.iter().enumerate() {
            match doc.get(*key) {
                None => return Ok(None),
                Some(Bson::Document(inner)) => doc = inner,
                Some(other) => return Err(self.wrong(&path[..=depth], other, "a document")),
            }
        }
        Ok(doc.get(*last))
    }

    /// A non-negative integer (Int32, Int64, or an integral Double).
    pub(super) fn u64(&self, path: &[&str]) -> Result<Option<u64>, ServerFigureError> {
        let expected = "a non-negative integer";
        let Some(value) = self.get(path)? else {
            return Ok(None);
        };
        let number = match *value {
            Bson::Int32(v) => u64::try_from(v).ok(),
            Bson::Int64(v) => u64::try_from(v).ok(),
            // 2^64 as f64; integral doubles below it convert exactly.
            Bson::Double(v) if v >= 0.0 && v.fract() == 0.0 && v < 18_446_744_073_709_551_616.0 => {
                Some(v as u64)
            }
            _ => None,
        };
        number
            .map(Some)
            .ok_or_else(|| self.wrong(path, value, expected))
    }

    /// An integer where a negative value means "unknown" (hostInfo's
    /// `numCoresAvailableToProcess` is −1 when the system call behind it failed).
    pub(super) fn u64_or_negative_unknown(
        &self,
        path: &[&str],
    ) -> Result<Option<u64>, ServerFigureError> {
        match self.get(path)? {
            Some(Bson::Int32(v)) if *v < 0 => Ok(None),
            Some(Bson::Int64(v)) if *v < 0 => Ok(None),
            _ => self.u64(path),
        }
    }

    /// A string.
    pub(super) fn string(&self, path: &[&str]) -> Result<Option<String>, ServerFigureError> {
        match self.get(path)? {
            None => Ok(None),
            Some(Bson::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(self.wrong(path, other, "a string")),
        }
    }

    /// A number given either as a BSON number or as decimal text (hostInfo reports
    /// `cpuFrequencyMHz` as a string such as "2200.000"); an empty string is `None`.
    pub(super) fn number_or_text(&self, path: &[&str]) -> Result<Option<f64>, ServerFigureError> {
        let expected = "a number or a decimal string";
        let Some(value) = self.get(path)? else {
            return Ok(None);
        };
        let number = match value {
            Bson::Int32(v) => Some(f64::from(*v)),
            Bson::Int64(v) => Some(*v as f64),
            Bson::Double(v) => Some(*v),
            Bson::String(s) if s.trim().is_empty() => return Ok(None),
            Bson::String(s) => s.trim().parse::<f64>().ok(),
            _ => None,
        };
        match number {
            Some(n) if n.is_finite() => Ok(Some(n)),
            _ => Err(self.wrong(path, value, expected)),
        }
    }
}

/// `after − before` of a monotonic counter; `None` if either is unknown.
pub(super) fn counter_delta(
    document: &'static str,
    path: &str,
    before: Option<u64>,
    after: Option<u64>,
) -> Result<Option<u64>, ServerFigureError> {
    match (before, after) {
        (Some(b), Some(a)) if a < b => Err(ServerFigureError::CounterWentBackwards {
            document,
            path: path.to_owned(),
            before: b,
            after: a,
        }),
        (Some(b), Some(a)) => Ok(Some(a - b)),
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mongodb::bson::doc;

    #[test]
    fn numbers_of_every_bson_width_are_read_and_absence_is_none() {
        let d = doc! { "a": { "i32": 5_i32, "i64": 6_i64, "f": 7.0, "neg": -1_i32 } };
        let f = Fields::new(&d, "serverStatus");
        assert_eq!(f.u64(&["a", "i32"]), Ok(Some(5)));
        assert_eq!(f.u64(&["a", "i64"]), Ok(Some(6)));
        assert_eq!(f.u64(&["a", "f"]), Ok(Some(7)));
        assert_eq!(f.u64(&["a", "missing"]), Ok(None));
        assert_eq!(f.u64(&["missing", "x"]), Ok(None));
        assert_eq!(f.u64_or_negative_unknown(&["a", "neg"]), Ok(None));
    }

    #[test]
    fn wrong_types_name_the_field_and_what_was_expected() {
        let d = doc! { "extra_info": { "user_time_us": "lots" }, "opcounters": 3_i32 };
        let f = Fields::new(&d, "serverStatus");
        let e = f.u64(&["extra_info", "user_time_us"]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "serverStatus field `extra_info.user_time_us` is String \"lots\", expected a \
             non-negative integer"
        );
        let e = f.u64(&["opcounters", "query"]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "serverStatus field `opcounters` is Int32 3, expected a document"
        );
        let d = doc! { "n": -3_i64, "x": 1.5 };
        let f = Fields::new(&d, "hostInfo");
        assert!(f.u64(&["n"]).is_err());
        assert!(f.u64(&["x"]).is_err());
    }

    #[test]
    fn decimal_text_is_a_number() {
        let d = doc! { "extra": { "mhz": "2200.000", "empty": "", "bad": "fast" } };
        let f = Fields::new(&d, "hostInfo");
        assert_eq!(f.number_or_text(&["extra", "mhz"]), Ok(Some(2200.0)));
        assert_eq!(f.number_or_text(&["extra", "empty"]), Ok(None));
        assert!(f.number_or_text(&["extra", "bad"]).is_err());
    }

    #[test]
    fn counters_going_backwards_are_refused() {
        assert_eq!(
            counter_delta("serverStatus", "x", Some(5), Some(9)),
            Ok(Some(4))
        );
        assert_eq!(counter_delta("serverStatus", "x", None, Some(9)), Ok(None));
        assert_eq!(
            counter_delta("serverStatus", "opcounters.query", Some(9), Some(5)),
            Err(ServerFigureError::CounterWentBackwards {
                document: "serverStatus",
                path: "opcounters.query".into(),
                before: 9,
                after: 5
            })
        );
    }
}
