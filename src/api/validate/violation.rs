//! One broken rule, as both layers of validation report it.

use std::fmt;

/// One broken rule: where (a field path such as `spec.workload.flights.findPercent` or
/// `spec.targets[1].name`) and what is wrong, naming the value and what is expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Field path from the document root.
    pub path: String,
    /// What is wrong and what is expected.
    pub message: String,
}

impl Violation {
    /// A violation at `path`.
    pub fn new(path: &str, message: impl Into<String>) -> Self {
        Violation {
            path: path.to_string(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}
