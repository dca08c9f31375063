//! Replica-set initiation for provisioned targets: `replSetInitiate` with every member at once
//! on member 0 (reached directly, before any set exists), idempotent, then a wait for a
//! writable primary. Used by the operator's Job; an external target is never initiated.

use std::time::{Duration, Instant};

use mongodb::Client;
use mongodb::bson::{Document, doc};
use mongodb::options::{ClientOptions, ServerAddress};

use crate::plan::sharding::{SetLayout, replica_set_config};
use crate::runner::deadline::within;
use crate::runner::outcome::driver_code;

/// Server code of `replSetInitiate` on a member that already has a configuration.
const ALREADY_INITIALIZED: i32 = 23;

#[derive(Debug, thiserror::Error)]
pub enum InitError {
    #[error("replica set {set}: member address {member:?} does not parse: {source}")]
    Address {
        set: String,
        member: String,
        source: mongodb::error::Error,
    },
    #[error("replica set {set}: replSetInitiate on {member} failed: {source}")]
    Initiate {
        set: String,
        member: String,
        source: mongodb::error::Error,
    },
    #[error("replica set {set}: no writable primary within {waited:?} (last answer: {last})")]
    NoPrimary {
        set: String,
        waited: Duration,
        last: String,
    },
}

/// The `replSetInitiate` configuration of `set` with `members` (plan/sharding builds every
/// set's, a sharded cluster's too).
pub fn config(set: &str, members: &[String]) -> Document {
    let layout = SetLayout {
        name: set.to_owned(),
        members: members.to_vec(),
    };
    replica_set_config(&layout, false)
}

/// Options of the direct connection to the member that initiates: that member alone, and the
/// credentials of `uri`, if it has any.
pub(crate) async fn direct_options(
    member: ServerAddress,
    uri: &str,
    timeout: Duration,
) -> ClientOptions {
    let mut opts = ClientOptions::builder()
        .hosts(vec![member])
        .direct_connection(true)
        .server_selection_timeout(timeout)
        .build();
    // A URI that does not parse fails later, in wait_for_primary, with the driver's reason.
    opts.credential = ClientOptions::parse(super::connect::journal_option(uri))
        .await
        .ok()
        .and_then(|o| o.credential);
    opts
}

/// Initiates `set` with `members` (no-op when already initiated) and waits until `uri`
/// reaches a writable primary. Member 0 is reached with the URI's credentials, if it has any:
/// with access control on, an unauthenticated client may not initiate.
pub async fn initiate(
    set: &str,
    members: &[String],
    uri: &str,
    timeout: Duration,
) -> Result<(), InitError> {
    let command = doc! {"replSetInitiate": config(set, members)};
    initiate_with(set, members, command, uri, timeout).await
}

/// [`initiate`] with `command` as the `replSetInitiate` to send (a config server set's has
/// `configsvr: true`).
pub async fn initiate_with(
    set: &str,
    members: &[String],
    command: Document,
    uri: &str,
    timeout: Duration,
) -> Result<(), InitError> {
    let first = members.first().cloned().unwrap_or_default();
    let address = ServerAddress::parse(&first).map_err(|source| InitError::Address {
        set: set.to_owned(),
        member: first.clone(),
        source,
    })?;
    let opts = direct_options(address, uri, timeout).await;
    let direct = Client::with_options(opts).map_err(|source| InitError::Initiate {
        set: set.to_owned(),
        member: first.clone(),
        source,
    })?;
    // Bounded as every server call is: a member that accepts the connection but never
    // answers would otherwise hold the runner forever.
    let admin = direct.database("admin");
    match within(timeout, admin.run_command(command)).await {
        Ok(_) => {}
        Err(e) if driver_code(&e) == Some(ALREADY_INITIALIZED) => {}
        Err(source) => {
            return Err(InitError::Initiate {
                set: set.to_owned(),
                member: first,
                source,
            });
        }
    }
    wait_for_primary(set, uri, timeout).await
}

/// One `hello` of the wait for a primary; the wait as a whole is bounded by its `timeout`.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);

async fn wait_for_primary(set: &str, uri: &str, timeout: Duration) -> Result<(), InitError> {
    let started = Instant::now();
    let mut last = String::from("nothing yet");
    while started.elapsed() < timeout {
        match Client::with_uri_str(uri).await {
            Ok(client) => match within(
                HELLO_TIMEOUT,
                client.database("admin").run_command(doc! {"hello": 1}),
            )
            .await
            {
                Ok(hello) if hello.get_bool("isWritablePrimary").unwrap_or(false) => return Ok(()),
                Ok(hello) => last = format!("hello: {hello}"),
                Err(e) => last = e.to_string(),
            },
            Err(e) => last = e.to_string(),
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    Err(InitError::NoPrimary {
        set: set.to_owned(),
        waited: timeout,
        last,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_initiating_member_is_reached_alone_with_the_uri_s_credentials() {
        let member = ServerAddress::parse("a-0.svc:27017").unwrap();
        let uri =
            "mongodb://mongobench:pw@a-0.svc:27017,a-1.svc:27017/?replicaSet=a&authSource=admin";
        let opts = direct_options(member.clone(), uri, Duration::from_secs(1)).await;
        assert_eq!(opts.hosts, std::slice::from_ref(&member));
        assert_eq!(opts.direct_connection, Some(true));
        let credential = opts.credential.expect("the URI's credentials");
        assert_eq!(credential.username.as_deref(), Some("mongobench"));
        assert_eq!(credential.password.as_deref(), Some("pw"));
        assert_eq!(credential.source.as_deref(), Some("admin"));
        // Without authentication there is nothing to send.
        let plain =
            direct_options(member, "mongodb://a-0.svc:27017/", Duration::from_secs(1)).await;
        assert!(plain.credential.is_none());
    }

    #[test]
    fn config_numbers_members_and_prefers_the_first() {
        let c = config(
            "rs0",
            &[
                "a-0.svc:27017".into(),
                "a-1.svc:27017".into(),
                "a-2.svc:27017".into(),
            ],
        );
        assert_eq!(
            c,
            doc! {"_id": "rs0", "members": [
                {"_id": 0, "host": "a-0.svc:27017", "priority": 2},
                {"_id": 1, "host": "a-1.svc:27017", "priority": 1},
                {"_id": 2, "host": "a-2.svc:27017", "priority": 1},
            ]}
        );
    }
}
