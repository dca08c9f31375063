//! Passwords that hold, unescaped, each character a URI gives a meaning to (`?`, `@`, `/`, `%`,
//! `:`) and non-ASCII ones, and the search for any piece of one in what a run or the operator
//! shows. Each piece between those characters is distinctive (five or more characters, mixed
//! case and digits), so that finding one is a leak, not a coincidence.

pub const HOSTILE_PASSWORDS: [&str; 7] = [
    "Kv7Qx?Zw3Jm",
    "Rt4Wy@Hb8Nc",
    "Gd2Lp/Xs6Fv",
    "Mh9Tz%Qr5Yk",
    "Bn3Vc:Jw7Pd",
    "Ñøç€Wq4Éü",
    "Zq8Xe?Tk2Wb@Hy6Rm/Lu4Dc%Wn9Gs:Åß7Øq",
];

/// Whether `password` holds a character the URI must have percent-encoded.
pub fn needs_escaping(password: &str) -> bool {
    password.contains(['?', '@', '/', '%', ':'])
}

/// `text` with every byte but RFC 3986's unreserved characters percent-encoded, as a URI's
/// user information may always be.
pub fn percent_encoded(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// Everything of `password` that must never be shown: each piece between the characters a URI
/// gives a meaning to, and its percent-encoded form.
pub fn fragments(password: &str) -> Vec<String> {
    let mut out: Vec<String> = password
        .split(['?', '@', '/', '%', ':'])
        .map(str::to_owned)
        .collect();
    for piece in &out {
        assert!(
            piece.chars().count() >= 5,
            "{password:?}: the piece {piece:?} is too short to search for"
        );
    }
    out.push(percent_encoded(password));
    out
}

/// The first line of `text` that holds a fragment of `password`, with the fragment.
pub fn leak(text: &str, password: &str) -> Option<(String, String)> {
    let fragments = fragments(password);
    text.lines().find_map(|line| {
        fragments
            .iter()
            .find(|f| line.contains(f.as_str()))
            .map(|f| (f.clone(), line.to_owned()))
    })
}

/// Fails naming `what` and the line when `text` holds any fragment of `password`.
pub fn assert_no_password(what: &str, text: &str, password: &str) {
    if let Some((fragment, line)) = leak(text, password) {
        panic!("{fragment:?} of password {password:?} appears in {what}: {line}");
    }
}

/// Every file under `dir`, as one text (lossy), for [`assert_no_password`].
pub fn files_under(dir: &std::path::Path) -> String {
    let mut out = String::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.push_str(&files_under(&path));
        } else if let Ok(bytes) = std::fs::read(&path) {
            out.push_str(&format!("== {}\n", path.display()));
            out.push_str(&String::from_utf8_lossy(&bytes));
            out.push('\n');
        }
    }
    out
}
