//! The two Secrets of a benchmark whose replica sets run with authentication
//! (`spec.replicaSet.auth`, on by default): the keyfile the members authenticate each other
//! with, and the credentials of the `root` user the images create on first start
//! (specs/kubernetes.md §11). Generated once from the operating system's random source and
//! created, never applied: a Secret that exists is left as it is, so servers that run never see
//! their keyfile or password change, and the operator needs no right to read Secrets.

use std::collections::BTreeMap;

use base64::Engine;
use k8s_openapi::api::core::v1::Secret;

use super::meta::child_meta;
use super::names::{self, Component};
use crate::api::MongoBenchmark;
use crate::operator::Error;

/// Key of the keyfile in the keyfile Secret.
pub const KEYFILE_KEY: &str = "keyfile";
/// Key of the user name in the admin Secret.
pub const USERNAME_KEY: &str = "username";
/// Key of the password in the admin Secret.
pub const PASSWORD_KEY: &str = "password";
/// The user the images create with role `root` in `admin`.
pub const ADMIN_USER: &str = "mongobench";
/// Random bytes in a keyfile: base64 makes them 1008 characters, within mongod's 6 to 1024.
pub const KEYFILE_BYTES: usize = 756;
/// Characters of a generated password: letters and digits only, so it needs no escaping in a
/// connection string.
pub const PASSWORD_LENGTH: usize = 32;

/// The generated keyfile and admin Secrets of `bench`, with fresh random content.
///
/// # Errors
/// [`Error::Incomplete`] for a MongoBenchmark without namespace or uid; [`Error::Random`]
/// when the operating system gives no random bytes.
pub fn generated(bench: &MongoBenchmark) -> Result<[Secret; 2], Error> {
    let bench_name = bench.metadata.name.clone().unwrap_or_default();
    let labels = names::benchmark_labels(&bench_name, Component::Server);
    let secret = |name: String, data: BTreeMap<String, String>| -> Result<Secret, Error> {
        Ok(Secret {
            metadata: child_meta(bench, &name, &labels)?,
            type_: Some("Opaque".to_owned()),
            string_data: Some(data),
            ..Secret::default()
        })
    };
    let keyfile = secret(
        names::keyfile_secret(&bench_name),
        BTreeMap::from([(KEYFILE_KEY.to_owned(), random_keyfile()?)]),
    )?;
    let admin = secret(
        names::admin_secret(&bench_name),
        BTreeMap::from([
            (USERNAME_KEY.to_owned(), ADMIN_USER.to_owned()),
            (PASSWORD_KEY.to_owned(), random_password()?),
        ]),
    )?;
    Ok([keyfile, admin])
}

fn random_bytes(n: usize) -> Result<Vec<u8>, Error> {
    let mut buf = vec![0u8; n];
    getrandom::fill(&mut buf).map_err(Error::Random)?;
    Ok(buf)
}

/// [`KEYFILE_BYTES`] random bytes, base64.
fn random_keyfile() -> Result<String, Error> {
    Ok(base64::engine::general_purpose::STANDARD.encode(random_bytes(KEYFILE_BYTES)?))
}

/// [`PASSWORD_LENGTH`] characters drawn evenly from letters and digits (bytes of 248 and more
/// are dropped, so that every character is equally likely).
fn random_password() -> Result<String, Error> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let limit = 256 - 256 % ALPHABET.len();
    let mut out = String::with_capacity(PASSWORD_LENGTH);
    while out.len() < PASSWORD_LENGTH {
        for b in random_bytes(2 * PASSWORD_LENGTH)? {
            if usize::from(b) < limit && out.len() < PASSWORD_LENGTH {
                out.push(char::from(ALPHABET[usize::from(b) % ALPHABET.len()]));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::fixtures::{STUDY, bench};

    #[test]
    fn secrets_are_owned_random_and_shaped_for_mongod() {
        let b = bench("study", STUDY);
        let [keyfile, admin] = generated(&b).unwrap();
        assert_eq!(keyfile.metadata.name.as_deref(), Some("study-keyfile"));
        assert_eq!(admin.metadata.name.as_deref(), Some("study-admin"));
        for s in [&keyfile, &admin] {
            let owner = &s.metadata.owner_references.as_ref().unwrap()[0];
            assert_eq!(
                (owner.kind.as_str(), owner.controller),
                ("MongoBenchmark", Some(true))
            );
            assert_eq!(s.metadata.namespace.as_deref(), Some("lab"));
        }
        let key = &keyfile.string_data.as_ref().unwrap()[KEYFILE_KEY];
        assert_eq!(key.len(), 1008);
        assert_eq!(
            base64::engine::general_purpose::STANDARD
                .decode(key)
                .unwrap()
                .len(),
            KEYFILE_BYTES
        );
        let data = admin.string_data.as_ref().unwrap();
        assert_eq!(data[USERNAME_KEY], "mongobench");
        let password = &data[PASSWORD_KEY];
        assert_eq!(password.len(), PASSWORD_LENGTH);
        assert!(
            password.bytes().all(|c| c.is_ascii_alphanumeric()),
            "{password}"
        );
        // Fresh each time: nothing is derived from the benchmark.
        let [again_key, again_admin] = generated(&b).unwrap();
        assert_ne!(again_key.string_data, keyfile.string_data);
        assert_ne!(again_admin.string_data, admin.string_data);
    }
}
