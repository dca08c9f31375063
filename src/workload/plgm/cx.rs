//! The state of one import ([`Cx`]: the file being read, the named generators, the notes) and
//! the reader of plgm's JSON objects ([`Obj`]), shared by `fields` and `queries`.

use serde_json::{Map, Value};

use super::error::{FileKind, ImportError};

/// State of one import: the file being read, named generators used by templates, notes.
pub(super) struct Cx {
    pub(super) kind: FileKind,
    pub(super) generators: Map<String, Value>,
    /// A note with no items is a sentence; with items, `label: a, b, c`.
    notes: Vec<(String, Vec<String>)>,
    /// Keys plgm ignores (its Go structs skip unknown JSON keys).
    ignored: Vec<String>,
}

impl Cx {
    pub(super) fn new(kind: FileKind) -> Cx {
        Cx {
            kind,
            generators: Map::new(),
            notes: Vec::new(),
            ignored: Vec::new(),
        }
    }

    pub(super) fn invalid(&self, path: &str, message: impl Into<String>) -> ImportError {
        ImportError::Invalid {
            kind: self.kind,
            path: path.to_owned(),
            message: message.into(),
        }
    }

    pub(super) fn note(&mut self, text: impl Into<String>) {
        self.notes.push((text.into(), Vec::new()));
    }

    /// Adds `item` to the note `label`, so that one approximation is one line.
    pub(super) fn group(&mut self, label: &str, item: impl Into<String>) {
        let item = item.into();
        match self.notes.iter_mut().find(|(l, _)| l == label) {
            Some((_, items)) if items.contains(&item) => {}
            Some((_, items)) => items.push(item),
            None => self.notes.push((label.to_owned(), vec![item])),
        }
    }

    /// Registers a named generator for templates and returns its placeholder (`"{{name}}"`);
    /// `base` is made a plain name, suffixed when taken by a different generator.
    pub(super) fn generator(&mut self, base: &str, generator: Value) -> String {
        let base: String = base
            .chars()
            .map(|c| match c.to_ascii_lowercase() {
                c @ ('a'..='z' | '0'..='9') => c,
                _ => '_',
            })
            .collect();
        let mut base = base;
        base.truncate(60);
        let mut name = base.clone();
        let mut n = 2;
        loop {
            match self.generators.get(&name) {
                None => {
                    self.generators.insert(name.clone(), generator);
                    break;
                }
                Some(g) if *g == generator => break,
                Some(_) => {
                    name = format!("{base}_{n}");
                    n += 1;
                }
            }
        }
        format!("{{{{{name}}}}}")
    }

    pub(super) fn finish(&mut self) -> Vec<String> {
        if !self.ignored.is_empty() {
            let ignored = std::mem::take(&mut self.ignored);
            self.note(format!(
                "keys plgm ignores are ignored here too: {}",
                ignored.join(", ")
            ));
        }
        self.notes
            .iter()
            .map(|(label, items)| {
                if items.is_empty() {
                    label.clone()
                } else {
                    format!("{label}: {}", items.join(", "))
                }
            })
            .collect()
    }
}

/// A JSON object being read, with its path. Keys match as Go's encoding/json matches them:
/// exactly, else ignoring ASCII case.
pub(super) struct Obj<'a> {
    map: &'a Map<String, Value>,
    path: String,
}

impl<'a> Obj<'a> {
    /// `value` as an object; keys outside `known` are recorded as ignored.
    pub(super) fn new(
        cx: &mut Cx,
        value: &'a Value,
        path: &str,
        known: &[&str],
    ) -> Result<Obj<'a>, ImportError> {
        let Value::Object(map) = value else {
            return Err(cx.invalid(path, format!("expected an object, found {}", what(value))));
        };
        for key in map.keys() {
            if !known.iter().any(|k| k.eq_ignore_ascii_case(key)) {
                cx.ignored.push(format!("{path}.{key}"));
            }
        }
        Ok(Obj {
            map,
            path: path.to_owned(),
        })
    }

    pub(super) fn path(&self, key: &str) -> String {
        format!("{}.{key}", self.path)
    }

    /// The value of `key`; JSON null counts as absent (Go leaves the zero value).
    pub(super) fn get(&self, key: &str) -> Option<&'a Value> {
        get(self.map, key)
    }

    pub(super) fn str(&self, cx: &Cx, key: &str) -> Result<Option<&'a str>, ImportError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(cx.invalid(
                &self.path(key),
                format!("expected a string, found {}", what(v)),
            )),
        }
    }

    pub(super) fn int(&self, cx: &Cx, key: &str) -> Result<Option<i64>, ImportError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Number(n)) if n.as_i64().is_some() => Ok(n.as_i64()),
            Some(v) => Err(cx.invalid(
                &self.path(key),
                format!("expected an integer, found {}", what(v)),
            )),
        }
    }

    pub(super) fn bool(&self, cx: &Cx, key: &str) -> Result<bool, ImportError> {
        match self.get(key) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(v) => Err(cx.invalid(
                &self.path(key),
                format!("expected true or false, found {}", what(v)),
            )),
        }
    }

    pub(super) fn array(&self, cx: &Cx, key: &str) -> Result<Option<&'a Vec<Value>>, ImportError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Array(a)) => Ok(Some(a)),
            Some(v) => Err(cx.invalid(
                &self.path(key),
                format!("expected an array, found {}", what(v)),
            )),
        }
    }

    /// An object value that is passed through (a filter, an update): any keys.
    pub(super) fn map(
        &self,
        cx: &Cx,
        key: &str,
    ) -> Result<Option<&'a Map<String, Value>>, ImportError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Object(m)) => Ok(Some(m)),
            Some(v) => Err(cx.invalid(
                &self.path(key),
                format!("expected an object, found {}", what(v)),
            )),
        }
    }
}

/// `map[key]` as Go's encoding/json finds it; null counts as absent.
pub(super) fn get<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    let value = map.get(key).or_else(|| {
        map.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v)
    });
    value.filter(|v| !v.is_null())
}

/// A JSON value's kind, for messages.
pub(super) fn what(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => format!("the string {s:?}"),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

/// `text` as a name a custom workload accepts (`[a-z0-9][a-z0-9._-]*`), unique in `taken`.
pub(super) fn unique_name(text: &str, taken: &mut Vec<String>) -> String {
    let mut base: String = text
        .chars()
        .map(|c| match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9' | '.' | '_' | '-') => c,
            _ => '-',
        })
        .collect();
    base = base
        .trim_start_matches(['.', '_', '-'])
        .trim_end_matches('-')
        .to_owned();
    if base.is_empty() {
        base = "x".into();
    }
    // Names hold at most 64 characters; room for a `-NN` suffix.
    base.truncate(60);
    let mut name = base.clone();
    let mut n = 2;
    while taken.contains(&name) {
        name = format!("{base}-{n}");
        n += 1;
    }
    taken.push(name.clone());
    name
}
