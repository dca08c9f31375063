//! A target's connection string in messages: its user information (user and password) never
//! reaches a message, and so never a log, a termination message, a status or a result.
//!
//! The driver splits a URI at its first `?` and quotes the part before it when that part is not
//! a host list, so a password holding an unescaped `?` (`mongodb://bench:Pa?ss@h/`) would be
//! quoted as a host (`bench:Pa`). Such a URI is refused here first, naming the part at fault and
//! quoting none of it; what the driver still says about a URI that passes is scrubbed of the
//! password all the same.

/// Characters a user or password must percent-encode: the driver's reserved set, plus `%`
/// when it does not start an escape.
const RESERVED: [char; 7] = [':', '/', '?', '#', '[', ']', '@'];

/// What is wrong with a URI's user information, said without quoting it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UriProblem {
    #[error("the URI must start with mongodb:// or mongodb+srv://")]
    Scheme,
    #[error(
        "the {0} holds a character that must be percent-encoded (':' %3A, '/' %2F, '?' %3F, \
         '#' %23, '[' %5B, ']' %5D, '@' %40); an '@' anywhere but before the hosts is written \
         %40 too"
    )]
    Unescaped(&'static str),
    #[error("the {0} holds a '%' not followed by two hexadecimal digits ('%' itself is %25)")]
    BadEscape(&'static str),
    #[error("the {0} is not UTF-8 once its %-escapes are decoded")]
    NotUtf8(&'static str),
}

/// `uri` with everything between its scheme and its last `@` replaced by `***`; without a
/// scheme, everything before the last `@`. The last `@`, not the first after the host list's
/// start: a password may hold `?`, `/` or `@` unescaped, and every reading of such a URI must
/// keep all of it out.
pub fn redact_uri(uri: &str) -> String {
    let Some(at) = uri.rfind('@') else {
        return uri.to_owned();
    };
    match uri.find("://") {
        Some(scheme) if scheme < at => format!("{}***{}", &uri[..scheme + 3], &uri[at..]),
        _ => format!("***{}", &uri[at..]),
    }
}

/// The user information of `uri`, split into user and password (`None` without a `:`): what
/// lies between the scheme and the last `@`.
fn user_info(uri: &str) -> Option<(&str, Option<&str>)> {
    let rest = uri.split_once("://").map_or(uri, |(_, rest)| rest);
    let info = &rest[..rest.rfind('@')?];
    Some(match info.split_once(':') {
        Some((user, password)) => (user, Some(password)),
        None => (info, None),
    })
}

/// Checks `uri`'s scheme and that its user and password are percent-encoded as the driver
/// requires, so that the driver can read the user information where it really ends.
///
/// # Errors
/// The [`UriProblem`], naming the part at fault (`user` or `password`).
pub fn check_uri(uri: &str) -> Result<(), UriProblem> {
    if !(uri.starts_with("mongodb://") || uri.starts_with("mongodb+srv://")) {
        return Err(UriProblem::Scheme);
    }
    let Some((user, password)) = user_info(uri) else {
        return Ok(());
    };
    check_part(user, "user")?;
    password.map_or(Ok(()), |p| check_part(p, "password"))
}

fn check_part(text: &str, part: &'static str) -> Result<(), UriProblem> {
    if text.contains(RESERVED) {
        return Err(UriProblem::Unescaped(part));
    }
    let decoded = percent_decode(text, true).ok_or(UriProblem::BadEscape(part))?;
    String::from_utf8(decoded)
        .map(|_| ())
        .map_err(|_| UriProblem::NotUtf8(part))
}

/// `message` (a driver's, about `uri`) with `uri`'s password, as written and decoded, replaced
/// by `***`: what the driver says must not carry it even if a later version quoted it.
pub fn scrub(message: &str, uri: &str) -> String {
    let Some((_, Some(password))) = user_info(uri) else {
        return message.to_owned();
    };
    let decoded = percent_decode(password, false).unwrap_or_default();
    let decoded = String::from_utf8_lossy(&decoded);
    let mut out = message.to_owned();
    for secret in [password, &decoded] {
        if !secret.is_empty() {
            out = out.replace(secret, "***");
        }
    }
    out
}

/// The bytes `text` stands for with its %-escapes decoded; a `%` without two hexadecimal
/// digits after it makes it `None` when `strict`, else stays as written.
fn percent_decode(text: &str, strict: bool) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%')
            .then(|| bytes.get(i + 1..i + 3))
            .flatten()
            .filter(|h| h.iter().all(u8::is_ascii_hexdigit))
            .and_then(|h| u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok());
        match escaped {
            Some(b) => {
                out.push(b);
                i += 3;
            }
            None if strict && bytes[i] == b'%' => return None,
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Passwords holding, unescaped, each character a URI gives a meaning to, or non-ASCII
    /// ones (valid as written), and what [`check_uri`] says of each.
    const HOSTILE: [(&str, Result<(), UriProblem>); 6] = [
        ("Pa?ss", Err(UriProblem::Unescaped("password"))),
        ("Pa@ss", Err(UriProblem::Unescaped("password"))),
        ("Pa/ss", Err(UriProblem::Unescaped("password"))),
        ("Pa%ss", Err(UriProblem::BadEscape("password"))),
        ("Pa:ss", Err(UriProblem::Unescaped("password"))),
        ("Pä€ss", Ok(())),
    ];

    #[test]
    fn redaction_keeps_hosts_and_options_and_cuts_at_the_last_at() {
        assert_eq!(
            redact_uri("mongodb://u:p%40ss@a:1,b:2/db?replicaSet=rs&authSource=admin"),
            "mongodb://***@a:1,b:2/db?replicaSet=rs&authSource=admin"
        );
        assert_eq!(
            redact_uri("mongodb+srv://u@c.example/"),
            "mongodb+srv://***@c.example/"
        );
        assert_eq!(redact_uri("mongodb://bench:Pa?ss@h/"), "mongodb://***@h/");
        assert_eq!(
            redact_uri("mongodb://bench:a@b/c?d@h:1/db?w=1"),
            "mongodb://***@h:1/db?w=1"
        );
        // An '@' in an option value looks like the end of a password, and is taken as one.
        assert_eq!(redact_uri("mongodb://h:1/?x=a@b"), "mongodb://***@b");
        // Without a scheme (a mistyped one), everything before the '@' goes.
        assert_eq!(redact_uri("a=mongodb:/u:pw@h/"), "***@h/");
        assert_eq!(redact_uri("not a uri"), "not a uri");
        assert_eq!(redact_uri("mongodb://h:1/db"), "mongodb://h:1/db");
        for (password, _) in HOSTILE {
            let shown = redact_uri(&format!("mongodb://bench:{password}@h:1/db?w=1"));
            assert_eq!(shown, "mongodb://***@h:1/db?w=1", "{password}");
        }
    }

    #[test]
    fn unescaped_users_and_passwords_are_refused_naming_the_part() {
        for (password, expected) in HOSTILE {
            let uri = format!("mongodb://bench:{password}@h/");
            assert_eq!(check_uri(&uri), expected, "{password}");
        }
        assert_eq!(
            check_uri("mongodb://be?ch:pw@h/"),
            Err(UriProblem::Unescaped("user"))
        );
        assert_eq!(
            check_uri("mongodb://bench:%C3%28@h/"),
            Err(UriProblem::NotUtf8("password"))
        );
        assert_eq!(check_uri("http://h/"), Err(UriProblem::Scheme));
        // An '@' in an option value reads as the end of a password holding '/' and '?'.
        assert_eq!(
            check_uri("mongodb://h:1/?appName=a@b"),
            Err(UriProblem::Unescaped("password"))
        );
        for fine in [
            "mongodb://h:1/",
            "mongodb://bench:P%3Fa%40s%2Fs%25%3A%C3%B1@h:1,g:2/db?w=1&appName=a%40b",
            "mongodb+srv://u@c.example/",
            "mongodb://bench:Pä€ss@h/",
        ] {
            assert_eq!(check_uri(fine), Ok(()), "{fine}");
        }
        let message = UriProblem::Unescaped("password").to_string();
        assert!(message.starts_with("the password holds a character that must be percent-encoded"));
    }

    #[test]
    fn a_driver_message_is_scrubbed_of_the_password_written_or_decoded() {
        let uri = "mongodb://bench:P%3Fwd-1@h/";
        assert_eq!(
            scrub("auth failed for P%3Fwd-1 (P?wd-1), user bench", uri),
            "auth failed for *** (***), user bench"
        );
        assert_eq!(
            scrub("no password here", "mongodb://h/"),
            "no password here"
        );
        assert_eq!(percent_decode("a%2Fb%zz%4", false).unwrap(), b"a/b%zz%4");
        assert_eq!(percent_decode("a%zz", true), None);
    }
}
