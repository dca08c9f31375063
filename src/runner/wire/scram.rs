//! SCRAM-SHA-256 (RFC 5802 with RFC 7677's hash), the conversation MongoDB runs through
//! `saslStart` and `saslContinue`: what a worker's own connection needs to log in where the
//! target's URI names a user. The salted password is derived once per route (PBKDF2 at the
//! server's iteration count costs milliseconds), not once per connection.

use std::sync::Mutex;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};

pub const MECHANISM: &str = "SCRAM-SHA-256";
/// RFC 7677: servers must not ask for fewer.
const MIN_ITERATIONS: u32 = 4096;
/// More than any deployment sets (MongoDB's default is 15,000): a login must not cost the
/// client seconds of PBKDF2 because a server asked for billions.
const MAX_ITERATIONS: u32 = 1_000_000;

/// The last salted password derived: (salt, iterations, salted password).
type Salted = (Vec<u8>, u32, [u8; 32]);

/// Who logs in, and where (its `Debug` leaves the password out).
pub struct Credential {
    pub user: String,
    /// The password after SASLprep.
    pub password: String,
    /// The database that holds the user (`authSource`).
    pub source: String,
    salted: Mutex<Option<Salted>>,
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credential")
            .field("user", &self.user)
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

impl PartialEq for Credential {
    fn eq(&self, other: &Self) -> bool {
        (&self.user, &self.password, &self.source) == (&other.user, &other.password, &other.source)
    }
}

impl Credential {
    /// `password` prepared as SCRAM-SHA-256 requires; `Err` when SASLprep refuses it.
    pub fn new(user: &str, password: &str, source: &str) -> Result<Credential, String> {
        // stringprep's error names the character: it stays out of messages.
        let password = stringprep::saslprep(password)
            .map_err(|_| "SASLprep refuses a character of the password".to_owned())?
            .into_owned();
        Ok(Credential {
            user: user.to_owned(),
            password,
            source: source.to_owned(),
            salted: Mutex::new(None),
        })
    }

    fn salted_password(&self, salt: &[u8], iterations: u32) -> [u8; 32] {
        let mut cache = self.salted.lock().expect("never poisoned");
        if let Some((s, i, salted)) = cache.as_ref()
            && s == salt
            && *i == iterations
        {
            return *salted;
        }
        let mut salted = [0u8; 32];
        pbkdf2::pbkdf2::<Hmac<Sha256>>(self.password.as_bytes(), salt, iterations, &mut salted)
            .expect("any length is a valid HMAC key");
        *cache = Some((salt.to_vec(), iterations, salted));
        salted
    }
}

fn hmac(key: &[u8], data: &[u8]) -> [u8; 32] {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key).expect("any key length");
    mac.update(data);
    mac.finalize().into_bytes().into()
}

/// A username as SCRAM writes it: `=` and `,` escaped.
fn sasl_name(user: &str) -> String {
    user.replace('=', "=3D").replace(',', "=2C")
}

/// A conversation in progress: what the client said first, so that it can prove itself.
pub struct Conversation {
    nonce: String,
    first_bare: String,
}

impl Conversation {
    /// Starts with `nonce` (random, printable, without commas).
    pub fn start(user: &str, nonce: &str) -> Conversation {
        Conversation {
            nonce: nonce.to_owned(),
            first_bare: format!("n={},r={nonce}", sasl_name(user)),
        }
    }

    /// A fresh random nonce: 24 bytes, base64.
    pub fn random_nonce() -> String {
        let mut bytes = [0u8; 24];
        getrandom::fill(&mut bytes).expect("the system has a random source");
        BASE64.encode(bytes)
    }

    /// The client-first message (no channel binding).
    pub fn client_first(&self) -> String {
        format!("n,,{}", self.first_bare)
    }

    /// The client-final message for `server_first`, and the server signature the server's
    /// final message must carry.
    pub fn client_final(
        &self,
        credential: &Credential,
        server_first: &str,
    ) -> Result<(String, [u8; 32]), String> {
        // RFC 5802 §5.1: a mandatory extension the client does not know must fail the login.
        if server_first.split(',').any(|f| f.starts_with("m=")) {
            return Err(
                "the server's first message carries a mandatory extension (m=), which this \
                 client does not support"
                    .into(),
            );
        }
        let field = |key: char| {
            server_first
                .split(',')
                .find_map(|f| f.strip_prefix(key)?.strip_prefix('='))
                .ok_or_else(|| format!("the server's first message has no {key}= ({server_first})"))
        };
        let nonce = field('r')?;
        if !nonce.starts_with(&self.nonce) || nonce.len() == self.nonce.len() {
            return Err("the server's nonce does not extend the client's".into());
        }
        let salt = BASE64
            .decode(field('s')?)
            .map_err(|e| format!("the server's salt is not base64 ({e})"))?;
        let iterations: u32 = field('i')?.parse().map_err(|_| {
            format!("the server's iteration count is not a number ({server_first})")
        })?;
        if !(MIN_ITERATIONS..=MAX_ITERATIONS).contains(&iterations) {
            return Err(format!(
                "the server asks for {iterations} iterations, outside \
                 {MIN_ITERATIONS}–{MAX_ITERATIONS}"
            ));
        }
        let salted = credential.salted_password(&salt, iterations);
        let client_key = hmac(&salted, b"Client Key");
        let stored_key: [u8; 32] = Sha256::digest(client_key).into();
        let without_proof = format!("c=biws,r={nonce}");
        let auth_message = format!("{},{server_first},{without_proof}", self.first_bare);
        let signature = hmac(&stored_key, auth_message.as_bytes());
        let proof: Vec<u8> = client_key
            .iter()
            .zip(signature)
            .map(|(k, s)| k ^ s)
            .collect();
        let server_key = hmac(&salted, b"Server Key");
        let server_signature = hmac(&server_key, auth_message.as_bytes());
        Ok((
            format!("{without_proof},p={}", BASE64.encode(proof)),
            server_signature,
        ))
    }
}

/// Checks the server's final message against the signature [`Conversation::client_final`]
/// expects.
pub fn verify_server_final(server_final: &str, expected: &[u8; 32]) -> Result<(), String> {
    if let Some(e) = server_final.strip_prefix("e=") {
        return Err(format!("the server refused the proof: {e}"));
    }
    let v = server_final
        .split(',')
        .find_map(|f| f.strip_prefix("v="))
        .ok_or_else(|| format!("the server's final message has no v= ({server_final})"))?;
    match BASE64.decode(v) {
        Ok(signature) if signature == expected => Ok(()),
        _ => Err("the server's signature does not match: it does not know the password".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7677 section 3's example, exactly.
    #[test]
    fn the_rfc_7677_example_conversation_is_reproduced() {
        let credential = Credential::new("user", "pencil", "admin").unwrap();
        let c = Conversation::start("user", "rOprNGfwEbeRWgbNEkqO");
        assert_eq!(c.client_first(), "n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
        let server_first = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,\
                            s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
        let (client_final, expected) = c.client_final(&credential, server_first).unwrap();
        assert_eq!(
            client_final,
            "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,\
             p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        );
        verify_server_final("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=", &expected).unwrap();
        let wrong = verify_server_final("v=AAAA", &expected).unwrap_err();
        assert_eq!(
            wrong,
            "the server's signature does not match: it does not know the password"
        );
        assert_eq!(
            verify_server_final("e=invalid-proof", &expected).unwrap_err(),
            "the server refused the proof: invalid-proof"
        );
    }

    #[test]
    fn a_server_first_message_that_cannot_be_trusted_is_refused() {
        let credential = Credential::new("user", "pencil", "admin").unwrap();
        let c = Conversation::start("user", "abc");
        let refuse = |m: &str| c.client_final(&credential, m).unwrap_err();
        assert_eq!(
            refuse("r=xyz1,s=AAAA,i=4096"),
            "the server's nonce does not extend the client's"
        );
        assert_eq!(
            refuse("r=abc,s=AAAA,i=4096"),
            "the server's nonce does not extend the client's"
        );
        assert_eq!(
            refuse("r=abc1,s=AAAA,i=100"),
            "the server asks for 100 iterations, outside 4096–1000000"
        );
        assert_eq!(
            refuse("r=abc1,s=AAAA,i=4000000000"),
            "the server asks for 4000000000 iterations, outside 4096–1000000"
        );
        assert_eq!(
            refuse("r=abc1,i=4096"),
            "the server's first message has no s= (r=abc1,i=4096)"
        );
        let extension = "the server's first message carries a mandatory extension (m=), which \
                         this client does not support";
        assert_eq!(refuse("m=ext,r=abc1,s=AAAA,i=4096"), extension);
        assert_eq!(refuse("r=abc1,s=AAAA,i=4096,m=x"), extension);
        // Other extensions are optional and let through.
        assert!(
            c.client_final(&credential, "r=abc1,s=AAAA,i=4096,x=y")
                .is_ok()
        );
    }

    #[test]
    fn names_are_escaped_and_passwords_prepared() {
        assert_eq!(
            Conversation::start("a=b,c", "n").client_first(),
            "n,,n=a=3Db=2Cc,r=n"
        );
        // SASLprep maps a non-ASCII space to a space and refuses control characters.
        assert_eq!(
            Credential::new("u", "p\u{00A0}w", "admin")
                .unwrap()
                .password,
            "p w"
        );
        let refused = Credential::new("u", "p\u{0007}", "admin").unwrap_err();
        assert_eq!(refused, "SASLprep refuses a character of the password");
    }
}
