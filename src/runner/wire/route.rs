//! Which path a target's workers take, decided once when it is connected ([`choose`]): the
//! route to the primary (or the only server) for connections of their own, or the driver and
//! why; and, before each phase, the primary of the moment ([`for_phase`]).

use std::sync::Arc;
use std::time::Duration;

use mongodb::bson::Document;
use mongodb::options::{AuthMechanism, ClientOptions, ServerAddress, Tls};

use super::scram::Credential;

/// Where a target's workers connect, and how long they wait to.
#[derive(Debug, Clone, PartialEq)]
pub struct Route {
    /// `host:port` of the primary (or the only server).
    pub address: String,
    pub timeout: Duration,
    /// Sent in the handshake, as the driver's client sends `appName`.
    pub app_name: String,
    /// The user the URI names, logged in with SCRAM-SHA-256.
    pub credential: Option<Arc<Credential>>,
    /// The address is a replica set's primary, found again for each phase ([`for_phase`]).
    pub primary: bool,
    /// The deployment takes retryable writes (a replica set or mongos with sessions) and the
    /// URI does not turn them off (`retryWrites=false`).
    pub retryable_writes: bool,
}

/// How a target's workers send their commands.
#[derive(Debug, Clone, PartialEq)]
pub enum WirePath {
    /// On connections of their own to the route.
    Direct(Arc<Route>),
    /// Through the driver, for the reason given.
    Driver(String),
}

impl From<&WirePath> for crate::result::ClientPath {
    fn from(path: &WirePath) -> Self {
        match path {
            WirePath::Direct(_) => crate::result::ClientPath::OwnConnections,
            WirePath::Driver(why) => crate::result::ClientPath::Driver {
                reason: why.clone(),
            },
        }
    }
}

impl std::fmt::Display for WirePath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WirePath::Direct(route) => write!(f, "own connections to {}", route.address),
            WirePath::Driver(why) => write!(f, "the driver ({why})"),
        }
    }
}

/// OP_MSG needs wire version 6 (MongoDB 3.6).
const OP_MSG_WIRE_VERSION: i64 = 6;

fn address(a: &ServerAddress) -> Option<String> {
    match a {
        ServerAddress::Tcp { host, port } => Some(if host.contains(':') {
            format!("[{host}]:{}", port.unwrap_or(27017))
        } else {
            format!("{host}:{}", port.unwrap_or(27017))
        }),
        #[allow(unreachable_patterns)]
        _ => None,
    }
}

/// The path for a client with `opts` whose primary (or only server) answered `hello`.
pub fn choose(opts: &ClientOptions, hello: &Document, timeout: Duration) -> WirePath {
    let driver = |why: &str| WirePath::Driver(why.to_owned());
    if matches!(opts.tls, Some(Tls::Enabled(_))) {
        return driver("TLS");
    }
    let credential = match &opts.credential {
        None => None,
        Some(c) => match (&c.mechanism, &c.username, &c.password) {
            (None | Some(AuthMechanism::ScramSha256), Some(user), Some(password)) => {
                let source = c.source.as_deref().unwrap_or("admin");
                match Credential::new(user, password, source) {
                    Ok(credential) => Some(Arc::new(credential)),
                    Err(why) => return WirePath::Driver(why),
                }
            }
            (Some(mechanism), _, _) => {
                return WirePath::Driver(format!("the {} mechanism", mechanism.as_str()));
            }
            _ => return driver("a user without a password"),
        },
    };
    if opts.compressors.as_ref().is_some_and(|c| !c.is_empty()) {
        return driver("wire compression");
    }
    if opts.load_balanced == Some(true) {
        return driver("a load balancer");
    }
    let wire = hello
        .get("maxWireVersion")
        .and_then(|v| v.as_i64().or_else(|| v.as_i32().map(i64::from)))
        .unwrap_or(0);
    if wire < OP_MSG_WIRE_VERSION {
        return driver("a server older than MongoDB 3.6");
    }
    let single = match opts.hosts.as_slice() {
        [one] => address(one),
        _ => None,
    };
    let mongos = hello.get_str("msg") == Ok("isdbgrid");
    let retryable_writes = opts.retry_writes != Some(false)
        && hello.get("logicalSessionTimeoutMinutes").is_some()
        && (hello.get_str("setName").is_ok() || mongos);
    let primary = hello.get_str("setName").is_ok() && opts.direct_connection != Some(true);
    let address = if primary {
        match hello.get_str("primary") {
            Ok(primary) => Some(primary.to_owned()),
            Err(_) => return driver("a replica set without a primary"),
        }
    } else if single.is_none() {
        return driver(if mongos {
            "several mongos routers"
        } else {
            "several hosts in the URI"
        });
    } else {
        single
    };
    match address {
        Some(address) => WirePath::Direct(Arc::new(Route {
            address,
            timeout,
            app_name: opts.app_name.clone().unwrap_or_else(|| "mongobench".into()),
            credential,
            primary,
            retryable_writes,
        })),
        None => driver("a Unix socket"),
    }
}

/// `path` for a phase about to start: a replica set's primary as it is now (an election since
/// the target was connected moved it), asked through `client`; `path` itself when that
/// cannot be told.
pub async fn for_phase(path: &WirePath, client: &mongodb::Client) -> WirePath {
    let WirePath::Direct(route) = path else {
        return path.clone();
    };
    if !route.primary {
        return path.clone();
    }
    let admin = client.database("admin");
    let hello = admin.run_command(mongodb::bson::doc! {"hello": 1});
    match tokio::time::timeout(route.timeout, hello).await {
        Ok(Ok(hello)) => match rerouted(route, &hello) {
            Some(moved) => WirePath::Direct(Arc::new(moved)),
            None => path.clone(),
        },
        _ => path.clone(),
    }
}

/// `route` to the primary a replica set member's `hello` names, when that is another.
fn rerouted(route: &Route, hello: &Document) -> Option<Route> {
    match hello.get_str("primary") {
        Ok(now) if route.primary && now != route.address => Some(Route {
            address: now.to_owned(),
            ..route.clone()
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mongodb::bson::doc;

    async fn path(uri: &str, hello: Document) -> WirePath {
        let opts = ClientOptions::parse(uri).await.unwrap();
        choose(&opts, &hello, Duration::from_secs(3))
    }

    fn direct(address: &str, primary: bool) -> WirePath {
        WirePath::Direct(Arc::new(Route {
            address: address.into(),
            timeout: Duration::from_secs(3),
            app_name: "mongobench".into(),
            credential: None,
            primary,
            retryable_writes: false,
        }))
    }

    fn retryable_writes(p: WirePath) -> bool {
        match p {
            WirePath::Direct(route) => route.retryable_writes,
            WirePath::Driver(why) => panic!("the driver: {why}"),
        }
    }

    #[tokio::test]
    async fn a_standalone_server_or_a_replica_set_s_primary_gets_own_connections() {
        let standalone = doc! {"isWritablePrimary": true, "maxWireVersion": 21};
        let member = doc! {"setName": "rs", "primary": "b:27018", "me": "a:27017",
        "maxWireVersion": 25};
        let mongos = doc! {"msg": "isdbgrid", "maxWireVersion": 25};
        for (uri, hello, expected) in [
            ("mongodb://h/", &standalone, direct("h:27017", false)),
            ("mongodb://[::1]:5/", &standalone, direct("[::1]:5", false)),
            (
                "mongodb://a,b,c/?replicaSet=rs",
                &member,
                direct("b:27018", true),
            ),
            // directConnection keeps to the one host the URI names.
            (
                "mongodb://a:1/?directConnection=true",
                &member,
                direct("a:1", false),
            ),
            ("mongodb://m:1/", &mongos, direct("m:1", false)),
        ] {
            assert_eq!(path(uri, hello.clone()).await, expected, "{uri}");
        }
    }

    #[tokio::test]
    async fn deployments_the_own_path_does_not_speak_to_keep_the_driver_and_say_why() {
        let hello = doc! {"isWritablePrimary": true, "maxWireVersion": 21};
        let why = |p: WirePath| match p {
            WirePath::Driver(why) => why,
            WirePath::Direct(r) => panic!("direct to {}", r.address),
        };
        for (uri, expected) in [
            ("mongodb://h/?tls=true", "TLS"),
            (
                "mongodb://u:p@h/?authMechanism=SCRAM-SHA-1",
                "the SCRAM-SHA-1 mechanism",
            ),
            (
                "mongodb://u@h/?authMechanism=MONGODB-X509",
                "the MONGODB-X509 mechanism",
            ),
            (
                "mongodb://u:p%07@h/",
                "SASLprep refuses a character of the password",
            ),
            ("mongodb://h/?compressors=zstd", "wire compression"),
            ("mongodb://h/?loadBalanced=true", "a load balancer"),
            ("mongodb://a,b/", "several hosts in the URI"),
        ] {
            assert_eq!(why(path(uri, hello.clone()).await), expected, "{uri}");
        }
        let mongos = doc! {"msg": "isdbgrid", "maxWireVersion": 25};
        assert_eq!(
            why(path("mongodb://m,n/", mongos).await),
            "several mongos routers"
        );
        let old = doc! {"isWritablePrimary": true, "maxWireVersion": 5};
        assert_eq!(
            why(path("mongodb://h/", old).await),
            "a server older than MongoDB 3.6"
        );
        let headless = doc! {"setName": "rs", "maxWireVersion": 25};
        assert_eq!(
            why(path("mongodb://a,b/?replicaSet=rs", headless).await),
            "a replica set without a primary"
        );
    }

    #[tokio::test]
    async fn a_user_with_a_password_logs_in_on_own_connections_with_scram_sha_256() {
        let hello = doc! {"isWritablePrimary": true, "maxWireVersion": 21};
        for (uri, source) in [
            ("mongodb://bench:pw@h/", "admin"),
            ("mongodb://bench:pw@h/app", "app"),
            (
                "mongodb://bench:pw@h/app?authSource=users&authMechanism=SCRAM-SHA-256",
                "users",
            ),
        ] {
            let WirePath::Direct(route) = path(uri, hello.clone()).await else {
                panic!("{uri}: the driver was chosen");
            };
            let c = route.credential.as_ref().expect("a credential");
            assert_eq!(
                (c.user.as_str(), c.source.as_str()),
                ("bench", source),
                "{uri}"
            );
            assert!(!format!("{route:?}").contains("pw"), "{route:?}");
        }
    }

    #[tokio::test]
    async fn retryable_writes_are_retried_where_the_deployment_takes_them() {
        let member = doc! {"setName": "rs", "primary": "a:1", "maxWireVersion": 25,
        "logicalSessionTimeoutMinutes": 30};
        let rs = "mongodb://a:1/?replicaSet=rs";
        assert!(retryable_writes(path(rs, member.clone()).await));
        let off = "mongodb://a:1/?replicaSet=rs&retryWrites=false";
        assert!(!retryable_writes(path(off, member.clone()).await));
        let mongos = doc! {"msg": "isdbgrid", "maxWireVersion": 25,
        "logicalSessionTimeoutMinutes": 30};
        assert!(retryable_writes(path("mongodb://m:1/", mongos).await));
        // A standalone server takes no retryable writes, nor a deployment without sessions.
        let standalone = doc! {"maxWireVersion": 25, "logicalSessionTimeoutMinutes": 30};
        assert!(!retryable_writes(path("mongodb://h:1/", standalone).await));
        let mut sessionless = member;
        sessionless.remove("logicalSessionTimeoutMinutes");
        assert!(!retryable_writes(path(rs, sessionless).await));
    }

    #[test]
    fn a_phase_follows_the_primary_of_the_moment() {
        let WirePath::Direct(route) = direct("b:27018", true) else {
            unreachable!()
        };
        let moved = rerouted(&route, &doc! {"setName": "rs", "primary": "c:27019"}).unwrap();
        assert_eq!(
            moved,
            Route {
                address: "c:27019".into(),
                ..(*route).clone()
            }
        );
        assert_eq!(
            rerouted(&route, &doc! {"setName": "rs", "primary": "b:27018"}),
            None
        );
        // No primary right now: keep the route; its operations fail until there is one.
        assert_eq!(rerouted(&route, &doc! {"setName": "rs"}), None);
        let WirePath::Direct(single) = direct("h:27017", false) else {
            unreachable!()
        };
        assert_eq!(rerouted(&single, &doc! {"primary": "c:27019"}), None);
    }
}
