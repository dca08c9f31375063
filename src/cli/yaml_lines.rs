//! Line numbers of the nodes of a YAML text, by field path (`spec.targets[1].name`), so that
//! `mongobench validate` can point at the line of each violation; and, from the same pass, the
//! nodes YAML accepts but a Kubernetes object cannot hold as written: a key given twice in one
//! mapping (the YAML reader would silently keep the last) and `.nan` / `.inf` (JSON has no such
//! numbers: they would silently become null, that is absent).

use std::collections::HashMap;

use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::{Marker, ScanError, TScalarStyle};

/// The first character YAML does not allow anywhere in a text (a C0 or C1 control character
/// other than tab, line feed, carriage return and next line; DEL; U+FFFE, U+FFFF), with its
/// 1-based line. YAML readers disagree on these: one may accept what the other refuses
/// without saying where, so they are refused before either reads the text.
pub fn first_control_character(text: &str) -> Option<(usize, char)> {
    let (offset, c) = text.char_indices().find(|(_, c)| {
        let c = *c;
        (c.is_control() && !matches!(c, '\t' | '\n' | '\r' | '\u{85}'))
            || matches!(c, '\u{fffe}' | '\u{ffff}')
    })?;
    Some((1 + text[..offset].matches('\n').count(), c))
}

/// A YAML scanner error as (line, message), pointing where the mistake usually is: a tab in
/// the indentation is reported on the line before it, and an unclosed quote or bracket only
/// where the scanner gave up.
pub fn scan_error(text: &str, e: &ScanError) -> (usize, String) {
    let line = e.marker().line();
    let info = e.info();
    if info.contains("tab") {
        let tabbed = text
            .lines()
            .enumerate()
            .skip(line.saturating_sub(1))
            .take(3)
            .find(|(_, l)| {
                l.chars()
                    .take_while(|c| c.is_whitespace())
                    .any(|c| c == '\t')
            });
        if let Some((index, _)) = tabbed {
            return (
                index + 1,
                "invalid YAML: a tab in the indentation; YAML indents with spaces".to_string(),
            );
        }
    }
    let hint = if info.contains("flow") {
        " (is a [ or { above not closed?)"
    } else if info.contains("quoted scalar") {
        " (is a quote above not closed?)"
    } else {
        ""
    };
    (line, format!("invalid YAML: {info}{hint}"))
}

/// The line (1-based) of every node of every document of a YAML text.
#[derive(Debug, Default)]
pub struct LineIndex {
    documents: Vec<HashMap<String, usize>>,
    flagged: Vec<Flagged>,
    /// The line of each document's first alias (`*name`).
    first_alias: HashMap<usize, usize>,
}

/// A node that YAML accepts and a MongoBenchmark must not contain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flagged {
    /// Document index, from 0.
    pub document: usize,
    /// 1-based line of the node.
    pub line: usize,
    /// Field path of the node.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl LineIndex {
    /// Indexes `text`.
    ///
    /// # Errors
    /// The scanner's error when `text` is not YAML.
    pub fn parse(text: &str) -> Result<Self, ScanError> {
        let mut builder = Builder::default();
        Parser::new_from_str(text).load(&mut builder, true)?;
        Ok(LineIndex {
            documents: builder.documents,
            flagged: builder.flagged,
            first_alias: builder.first_alias,
        })
    }

    /// The line of the first alias (`*name`) in document `document` (0-based).
    pub fn first_alias(&self, document: usize) -> Option<usize> {
        self.first_alias.get(&document).copied()
    }

    /// Duplicate keys and non-finite numbers, in text order.
    pub fn flagged(&self) -> &[Flagged] {
        &self.flagged
    }

    /// The number of documents in the text (an empty text has none).
    pub fn documents(&self) -> usize {
        self.documents.len()
    }

    /// The line of `path` in document `document` (0-based), or of its nearest ancestor that
    /// exists (a missing field points at its parent).
    pub fn line(&self, document: usize, path: &str) -> Option<usize> {
        let lines = self.documents.get(document)?;
        let mut path = path;
        loop {
            if let Some(line) = lines.get(path) {
                return Some(*line);
            }
            if path.is_empty() {
                return None;
            }
            path = match path.rfind(['.', '[']) {
                Some(cut) => &path[..cut],
                None => "",
            };
        }
    }
}

enum Frame {
    Map {
        path: String,
        /// The key whose value comes next, with the key's line; `None` while a key is expected.
        key: Option<(String, usize)>,
        /// The keys seen so far, with their lines.
        seen: HashMap<String, usize>,
    },
    Seq {
        path: String,
        next: usize,
    },
}

#[derive(Default)]
struct Builder {
    documents: Vec<HashMap<String, usize>>,
    flagged: Vec<Flagged>,
    first_alias: HashMap<usize, usize>,
    stack: Vec<Frame>,
}

/// The plain scalars YAML 1.2 reads as infinity or NaN.
fn is_non_finite(text: &str) -> bool {
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    matches!(unsigned, ".inf" | ".Inf" | ".INF") || matches!(text, ".nan" | ".NaN" | ".NAN")
}

impl Builder {
    /// Path and line of a node that starts at `line`; `None` when the node is a mapping key.
    fn place(&mut self, line: usize, key_text: Option<&str>) -> Option<(String, usize)> {
        match self.stack.last_mut() {
            None => Some((String::new(), line)),
            Some(Frame::Seq { path, next }) => {
                let placed = (format!("{path}[{next}]"), line);
                *next += 1;
                Some(placed)
            }
            Some(Frame::Map { path, key, seen }) => match key.take() {
                Some((name, key_line)) => {
                    let child = if path.is_empty() {
                        name
                    } else {
                        format!("{path}.{name}")
                    };
                    Some((child, key_line))
                }
                None => {
                    // A complex (collection) key gets a placeholder name.
                    let name = key_text.unwrap_or("?").to_string();
                    if let Some(text) = key_text
                        && let Some(first) = seen.insert(text.to_string(), line)
                    {
                        let at = if path.is_empty() {
                            text.to_string()
                        } else {
                            format!("{path}.{text}")
                        };
                        let message = format!(
                            "duplicate key {text:?} (first at line {first}): a key may appear \
                             once per mapping"
                        );
                        self.flagged.push(Flagged {
                            document: self.documents.len().saturating_sub(1),
                            line,
                            path: at,
                            message,
                        });
                    }
                    *key = Some((name, line));
                    None
                }
            },
        }
    }

    fn record(&mut self, path: &str, line: usize) {
        if let Some(lines) = self.documents.last_mut() {
            lines.entry(path.to_string()).or_insert(line);
        }
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, event: Event, mark: Marker) {
        let line = mark.line();
        match event {
            Event::DocumentStart => {
                self.documents.push(HashMap::new());
                self.stack.clear();
            }
            Event::Scalar(text, style, ..) => {
                if let Some((path, line)) = self.place(line, Some(&text)) {
                    if style == TScalarStyle::Plain && is_non_finite(&text) {
                        self.flagged.push(Flagged {
                            document: self.documents.len().saturating_sub(1),
                            line,
                            path: path.clone(),
                            message: format!(
                                "{text} is not a number a Kubernetes object can hold (JSON has \
                                 no infinity or NaN): give a finite number"
                            ),
                        });
                    }
                    self.record(&path, line);
                }
            }
            Event::Alias(_) => {
                let document = self.documents.len().saturating_sub(1);
                self.first_alias.entry(document).or_insert(line);
                if let Some((path, line)) = self.place(line, Some("*alias")) {
                    self.record(&path, line);
                }
            }
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                let path = match self.place(line, None) {
                    Some((path, line)) => {
                        self.record(&path, line);
                        path
                    }
                    None => "?".to_string(),
                };
                self.stack
                    .push(if matches!(event, Event::MappingStart(..)) {
                        Frame::Map {
                            path,
                            key: None,
                            seen: HashMap::new(),
                        }
                    } else {
                        Frame::Seq { path, next: 0 }
                    });
            }
            Event::MappingEnd | Event::SequenceEnd => {
                self.stack.pop();
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "\
# comment
apiVersion: mongobench.io/v1alpha1
kind: MongoBenchmark
spec:
  targets:
    - name: a
      image: mongo:9.0.4
    - name: b
  dataset:
    sizes: [1M,
      4M]
---
spec:
  workload:
    type: flights
";

    #[test]
    fn paths_map_to_the_lines_of_their_keys_and_items() {
        let index = LineIndex::parse(TEXT).unwrap();
        assert_eq!(index.line(0, "apiVersion"), Some(2));
        assert_eq!(index.line(0, "spec"), Some(4));
        assert_eq!(index.line(0, "spec.targets"), Some(5));
        assert_eq!(index.line(0, "spec.targets[0]"), Some(6));
        assert_eq!(index.line(0, "spec.targets[0].image"), Some(7));
        assert_eq!(index.line(0, "spec.targets[1].name"), Some(8));
        assert_eq!(index.line(0, "spec.dataset.sizes[1]"), Some(11));
        assert_eq!(index.line(1, "spec.workload.type"), Some(15));
    }

    #[test]
    fn missing_paths_fall_back_to_their_nearest_ancestor() {
        let index = LineIndex::parse(TEXT).unwrap();
        assert_eq!(index.line(0, "spec.targets[1].distribution"), Some(8));
        assert_eq!(index.line(0, "spec.replicaSet.storageSize"), Some(4));
        // A missing top-level field points at the start of its document.
        assert_eq!(index.line(1, "metadata.name"), Some(13));
        assert_eq!(index.line(2, "spec"), None);
    }

    #[test]
    fn duplicate_keys_are_flagged_at_their_second_line() {
        let index = LineIndex::parse("a: 1\nb:\n  c: 2\n  c: 3\n---\na: 1\na: 2\n").unwrap();
        let found: Vec<(usize, usize, &str)> = index
            .flagged()
            .iter()
            .map(|f| (f.document, f.line, f.path.as_str()))
            .collect();
        assert_eq!(found, [(0, 4, "b.c"), (1, 7, "a")]);
        assert_eq!(
            index.flagged()[0].message,
            "duplicate key \"c\" (first at line 3): a key may appear once per mapping"
        );
        // The same key in sibling mappings is no duplicate.
        assert!(
            LineIndex::parse("- {a: 1}\n- {a: 2}\n")
                .unwrap()
                .flagged()
                .is_empty()
        );
    }

    #[test]
    fn control_characters_are_found_with_their_line() {
        assert_eq!(
            first_control_character("a: 1\nb: x\u{7}y\n"),
            Some((2, '\u{7}'))
        );
        assert_eq!(
            first_control_character("a: 1\r\n\tb: \u{85}é\u{feff}\n"),
            None
        );
        assert_eq!(first_control_character("a: \u{7f}"), Some((1, '\u{7f}')));
    }

    #[test]
    fn plain_infinities_and_nans_are_flagged_but_quoted_ones_are_strings() {
        let index = LineIndex::parse("a: .nan\nb: -.Inf\nc: '.nan'\nd: [1, +.INF]\n").unwrap();
        let found: Vec<(usize, &str)> = index
            .flagged()
            .iter()
            .map(|f| (f.line, f.path.as_str()))
            .collect();
        assert_eq!(found, [(1, "a"), (2, "b"), (4, "d[1]")]);
    }
}
