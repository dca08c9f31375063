//! Fixed-width text tables: columns as wide as their widest field, two spaces apart, numbers
//! aligned right, no trailing blanks.

/// The table text, `\n` line ends. `right` says which columns align right.
pub(crate) fn fixed_width(headers: &[&str], right: &[bool], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, field) in widths.iter_mut().zip(row) {
            *w = (*w).max(field.chars().count());
        }
    }
    let mut out = String::new();
    let header: Vec<String> = headers.iter().map(|h| h.to_string()).collect();
    for row in std::iter::once(&header).chain(rows) {
        let mut line = String::new();
        for (i, field) in row.iter().enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            let pad = " ".repeat(widths[i].saturating_sub(field.chars().count()));
            if right.get(i).copied().unwrap_or(false) {
                line.push_str(&pad);
                line.push_str(field);
            } else {
                line.push_str(field);
                line.push_str(&pad);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_pad_to_the_widest_field() {
        let rows = vec![
            vec!["a".to_string(), "1".to_string(), "x".to_string()],
            vec!["long".to_string(), "100".to_string(), String::new()],
        ];
        assert_eq!(
            fixed_width(&["N", "µs", "NOTE"], &[false, true, false], &rows),
            "N      µs  NOTE\na       1  x\nlong  100\n"
        );
    }
}
