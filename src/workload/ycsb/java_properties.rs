//! Reader for Java `.properties` text, the format of YCSB workload files and `-P` arguments
//! (specs/ycsb.md §2): `#`/`!` comment lines, `=`, `:` or whitespace as separator, key and leading
//! value whitespace trimmed (trailing kept), backslash escapes and line continuations.

use thiserror::Error;

/// A syntax error in properties text.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("line {line}: {message}")]
pub struct SyntaxError {
    /// 1-based number of the natural line where the faulty logical line starts.
    pub line: usize,
    /// What is wrong and what was expected.
    pub message: String,
}

/// Java's whitespace between key and value: space, tab, form feed.
fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\x0c')
}

/// Parses properties text into `(key, value)` pairs in file order (a later duplicate overrides an
/// earlier one when the caller inserts them into a map, as `java.util.Properties` does).
///
/// # Errors
/// A malformed `\uXXXX` escape or an escape producing an unpaired UTF-16 surrogate.
pub fn parse(text: &str) -> Result<Vec<(String, String)>, SyntaxError> {
    let naturals = split_natural_lines(text);
    let mut out = Vec::new();
    let mut i = 0;
    while i < naturals.len() {
        let start_line = i + 1;
        let first = naturals[i].trim_start_matches(is_blank);
        i += 1;
        if first.is_empty() || first.starts_with('#') || first.starts_with('!') {
            continue;
        }
        let mut logical = String::from(first);
        // An odd number of trailing backslashes continues the line on the next natural line,
        // whose leading whitespace is dropped.
        while ends_with_odd_backslashes(&logical) {
            logical.pop();
            match naturals.get(i) {
                Some(next) => {
                    logical.push_str(next.trim_start_matches(is_blank));
                    i += 1;
                }
                None => break,
            }
        }
        let (raw_key, raw_value) = split_key_value(&logical);
        let key = unescape(raw_key).map_err(|message| SyntaxError {
            line: start_line,
            message,
        })?;
        let value = unescape(raw_value).map_err(|message| SyntaxError {
            line: start_line,
            message,
        })?;
        out.push((key, value));
    }
    Ok(out)
}

/// Splits on `\n`, `\r\n` and lone `\r`, like Java's line reader.
fn split_natural_lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                lines.push(&text[start..i]);
                start = i + 1;
            }
            b'\r' => {
                lines.push(&text[start..i]);
                if bytes.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if start < bytes.len() {
        lines.push(&text[start..]);
    }
    lines
}

fn ends_with_odd_backslashes(s: &str) -> bool {
    s.chars().rev().take_while(|&c| c == '\\').count() % 2 == 1
}

/// Key = up to the first unescaped `=`, `:` or blank; then blanks, at most one `=`/`:`, blanks.
fn split_key_value(line: &str) -> (&str, &str) {
    let mut key_end = line.len();
    let mut value_start = line.len();
    let mut has_separator = false;
    let mut preceding_backslash = false;
    for (pos, c) in line.char_indices() {
        if !preceding_backslash && (c == '=' || c == ':') {
            key_end = pos;
            value_start = pos + 1;
            has_separator = true;
            break;
        }
        if !preceding_backslash && is_blank(c) {
            key_end = pos;
            value_start = pos + c.len_utf8();
            break;
        }
        preceding_backslash = c == '\\' && !preceding_backslash;
    }
    let rest = &line[value_start..];
    let mut skip = 0;
    for c in rest.chars() {
        if is_blank(c) {
            skip += c.len_utf8();
        } else if !has_separator && (c == '=' || c == ':') {
            has_separator = true;
            skip += 1;
        } else {
            break;
        }
    }
    (&line[..key_end], &rest[skip..])
}

/// Resolves `\t \n \r \f \uXXXX`; any other escaped character stands for itself.
fn unescape(s: &str) -> Result<String, String> {
    let mut units: Vec<u16> = Vec::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            let mut buf = [0u16; 2];
            units.extend_from_slice(c.encode_utf16(&mut buf));
            continue;
        }
        let Some(escaped) = chars.next() else {
            break; // a lone trailing backslash is dropped
        };
        let unit = match escaped {
            't' => u16::from(b'\t'),
            'n' => u16::from(b'\n'),
            'r' => u16::from(b'\r'),
            'f' => 0x0c,
            'u' => {
                let hex: String = chars.by_ref().take(4).collect();
                if hex.len() != 4 || !hex.chars().all(|h| h.is_ascii_hexdigit()) {
                    return Err(format!(
                        "malformed \\uxxxx escape \"\\u{hex}\": expected four hex digits"
                    ));
                }
                u16::from_str_radix(&hex, 16).map_err(|e| e.to_string())?
            }
            other => {
                let mut buf = [0u16; 2];
                units.extend_from_slice(other.encode_utf16(&mut buf));
                continue;
            }
        };
        units.push(unit);
    }
    String::from_utf16(&units).map_err(|_| "escape produces an unpaired UTF-16 surrogate".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(text: &str) -> Vec<(String, String)> {
        parse(text).expect("valid properties text")
    }

    fn p(k: &str, v: &str) -> (String, String) {
        (k.to_string(), v.to_string())
    }

    #[test]
    fn separators_and_whitespace_follow_java_rules() {
        assert_eq!(
            pairs("a=1\nb: 2\nc 3\n  d  =  4  \ne\n"),
            vec![
                p("a", "1"),
                p("b", "2"),
                p("c", "3"),
                p("d", "4  "),
                p("e", "")
            ]
        );
        // Whitespace followed by '=' is one separator; a second '=' belongs to the value.
        assert_eq!(pairs("k = =v"), vec![p("k", "=v")]);
    }

    #[test]
    fn comments_and_blank_lines_are_skipped() {
        assert_eq!(
            pairs("# c\n! c\n\n   \n  # indented comment\nx=1 # not a comment\n"),
            vec![p("x", "1 # not a comment")]
        );
    }

    #[test]
    fn continuations_join_lines_and_drop_leading_whitespace() {
        assert_eq!(
            pairs("k=a,\\\n    b,\\\r\n  c\nz=\\\\\n"),
            vec![p("k", "a,b,c"), p("z", "\\")]
        );
    }

    #[test]
    fn escapes_in_keys_and_values() {
        assert_eq!(
            pairs("a\\=b=c\\td\nkey\\ with\\ space=\\u0041\\x"),
            vec![p("a=b", "c\td"), p("key with space", "Ax")]
        );
    }

    #[test]
    fn malformed_unicode_escape_names_the_line() {
        let err = parse("ok=1\nbad=\\u12g4\n").unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.message.contains("\\u12g4"), "{}", err.message);
    }
}
