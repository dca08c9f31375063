//! The few HTML elements every section is made of, with the escaping that makes text from
//! results safe in them.

/// `text` with the characters HTML gives meaning to replaced by references; safe in element
/// content and in quoted attribute values.
pub(super) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A section with an id, a heading and its content.
pub(super) fn section(id: &str, heading: &str, content: &str) -> String {
    format!(
        "<section id=\"{id}\">\n<h2>{}</h2>\n{content}</section>\n",
        escape(heading)
    )
}

/// A table of plain-text cells (escaped here). Columns named in `numeric` align right.
pub(super) fn table(headers: &[&str], numeric: &[&str], rows: &[Vec<String>]) -> String {
    let mut out = String::from("<table>\n<tr>");
    for h in headers {
        out.push_str(&format!("<th>{}</th>", escape(h)));
    }
    out.push_str("</tr>\n");
    for row in rows {
        out.push_str("<tr>");
        for (h, cell) in headers.iter().zip(row) {
            let class = if numeric.contains(h) {
                " class=\"num\""
            } else {
                ""
            };
            out.push_str(&format!("<td{class}>{}</td>", escape(cell)));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    out
}

/// A paragraph of plain text.
pub(super) fn note(text: &str) -> String {
    format!("<p class=\"note\">{}</p>\n", escape(text))
}

/// `-` for an unknown value.
pub(super) fn or_dash(value: Option<String>) -> String {
    value.unwrap_or_else(|| "-".to_string())
}

/// `content` folded away under a one-line `label` the reader opens it by.
pub(super) fn fold(label: &str, content: &str) -> String {
    format!(
        "<details>\n<summary>{}</summary>\n{content}</details>\n",
        escape(label)
    )
}
