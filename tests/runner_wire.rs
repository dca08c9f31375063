//! Workers' own connections to the real MongoDB-wire server: a target without TLS or
//! credentials gets them, their commands carry the same concerns the driver's would (seen on
//! the wire, through a recording TCP relay), cursors drain on them, failures count as the
//! driver's do, and what needs the driver (retryable writes) still goes through it.
mod support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mongobench::measure::ErrorKind;
use mongobench::runner::outcome::Failure;
use mongobench::runner::send::{ExecOptions, Sender};
use mongobench::runner::server::{client_options, connect_with};
use mongobench::runner::wire::{Route, WirePath};
use mongobench::workload::ycsb::commands;
use mongobench::workload::{Command, Operation};
use mongodb::bson::{Document, doc};
use mongodb::event::EventHandler;
use mongodb::event::command::CommandEvent;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Bytes clients sent, per connection, in the order connections were accepted.
type Captured = Arc<Mutex<Vec<Arc<Mutex<Vec<u8>>>>>>;

/// A TCP relay to `upstream` (`host:port`) that keeps what clients send; its address.
async fn relay(upstream: String) -> (String, Captured) {
    relay_cutting(upstream, None).await
}

/// [`relay`] whose first connection, when its client sends a command named `cut`, passes it
/// on to the server and, once the server has answered, closes without passing the answer on:
/// the request was carried out, its answer is lost.
async fn relay_cutting(upstream: String, cut: Option<&'static str>) -> (String, Captured) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let captured: Captured = Default::default();
    let log = captured.clone();
    let mut cut = cut;
    tokio::spawn(async move {
        loop {
            let (client, _) = listener.accept().await.unwrap();
            let server = TcpStream::connect(&upstream).await.unwrap();
            let sent = Arc::new(Mutex::new(Vec::new()));
            log.lock().unwrap().push(sent.clone());
            let (mut client_read, mut client_write) = client.into_split();
            let (mut server_read, mut server_write) = server.into_split();
            let cut_now = Arc::new(AtomicBool::new(false));
            let losing = cut_now.clone();
            let replies = tokio::spawn(async move {
                let mut buf = vec![0u8; 64 * 1024];
                loop {
                    let n = match server_read.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => n,
                    };
                    // The server has answered the cut command, so it has done what it was
                    // asked: drop the answer, and close the client's side (dropping its half).
                    if losing.load(Ordering::SeqCst)
                        || client_write.write_all(&buf[..n]).await.is_err()
                    {
                        break;
                    }
                }
            });
            // Only the first connection cuts.
            let cut_here = cut.take();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 64 * 1024];
                loop {
                    let n = match client_read.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => n,
                    };
                    let complete = {
                        let mut sent = sent.lock().unwrap();
                        sent.extend_from_slice(&buf[..n]);
                        bodies(&sent)
                    };
                    let cutting = cut_here.is_some_and(|name| {
                        complete
                            .iter()
                            .any(|d| d.keys().next().map(String::as_str) == Some(name))
                    });
                    cut_now.store(cutting, Ordering::SeqCst);
                    if server_write.write_all(&buf[..n]).await.is_err() {
                        break;
                    }
                    if cutting {
                        // The client learns of the loss only once the server is done with the
                        // request, as when a reply is lost on its way: a retry cannot overtake it.
                        let _ = replies.await;
                        break;
                    }
                }
            });
        }
    });
    (address, captured)
}

/// The bodies of the whole OP_MSG commands in `bytes`.
fn bodies(bytes: &[u8]) -> Vec<Document> {
    let i32_at = |b: &[u8], at: usize| i32::from_le_bytes(b[at..at + 4].try_into().unwrap());
    let mut at = 0;
    let mut bodies = Vec::new();
    while at + 16 <= bytes.len() {
        let len = i32_at(bytes, at) as usize;
        if at + len > bytes.len() {
            break;
        }
        let msg = &bytes[at..at + len];
        if i32_at(msg, 12) == 2013 && msg[20] == 0 {
            let body_len = i32_at(msg, 21) as usize;
            bodies.push(Document::from_reader(&msg[21..21 + body_len]).unwrap());
        }
        at += len;
    }
    bodies
}

/// The bodies of the OP_MSG commands each connection sent, per connection.
fn commands_sent(captured: &Captured) -> Vec<Vec<Document>> {
    captured
        .lock()
        .unwrap()
        .iter()
        .map(|bytes| bodies(&bytes.lock().unwrap()))
        .collect()
}

/// The `host:port` of a `mongodb://host:port/...` URI.
fn host_port(uri: &str) -> String {
    let rest = uri.strip_prefix("mongodb://").unwrap();
    rest[..rest.find('/').unwrap_or(rest.len())].to_owned()
}

/// A client on `uri` that counts the commands it sends.
async fn counting(uri: &str) -> (mongodb::Client, Arc<Mutex<Vec<String>>>) {
    let mut opts = client_options("ferretdb", uri, 2, Duration::from_secs(10), &[])
        .await
        .unwrap();
    let names = Arc::new(Mutex::new(Vec::new()));
    let log = names.clone();
    opts.command_event_handler = Some(EventHandler::callback(move |event| {
        if let CommandEvent::Started(started) = event {
            log.lock().unwrap().push(started.command_name);
        }
    }));
    (mongodb::Client::with_options(opts).unwrap(), names)
}

/// The testenv's server for `test`, connected as a run connects a target.
async fn connected(
    test: &str,
) -> (
    support::MongoEnv,
    mongobench::runner::server::ConnectedTarget,
) {
    let env = support::mongo(test).await;
    let target = connect_with("ferretdb", &env.uri, 4, Duration::from_secs(10), &[])
        .await
        .unwrap();
    (env, target)
}

fn operation(database: &str, label: &'static str, commands: Vec<Command>) -> Operation {
    Operation {
        label,
        database: Box::leak(database.to_owned().into_boxed_str()),
        commands,
    }
}

#[tokio::test]
async fn a_target_without_tls_or_credentials_gets_own_connections_to_its_server() {
    let (env, target) = connected("wire-path").await;
    match &target.wire {
        WirePath::Direct(route) => assert_eq!(route.address, host_port(&env.uri)),
        WirePath::Driver(why) => panic!("the driver was chosen: {why}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_commands_go_on_their_own_connection_with_the_concerns_the_driver_would_add() {
    let env = support::mongo("wire-concerns").await;
    let (address, captured) = relay(host_port(&env.uri)).await;
    let uri =
        format!("mongodb://{address}/?w=1&journal=true&wtimeoutMS=5000&readConcernLevel=local");
    let target = connect_with("relay", &uri, 2, Duration::from_secs(10), &[])
        .await
        .unwrap();
    assert!(matches!(&target.wire, WirePath::Direct(r) if r.address == address));
    let (client, driver_sent) = counting(&uri).await;
    let db = env.database.as_str();
    let mut sender = Sender::new(client.clone(), &target.wire, ExecOptions::default());

    let docs: Vec<Document> = (0..150)
        .map(|i| doc! {"_id": format!("user{i:03}"), "field0": i})
        .collect();
    let insert = operation(db, "INSERT", commands::insert_many("usertable", docs));
    assert_eq!(sender.execute(&insert).await.unwrap().n, 150);
    let read = operation(
        db,
        "READ",
        vec![commands::read("usertable", "user007", None)],
    );
    assert_eq!(sender.execute(&read).await.unwrap().documents, 1);
    let mut scan = commands::scan("usertable", "user010", 120, None);
    scan.body.append("batchSize", 25i32);
    let scan = operation(db, "SCAN", vec![scan]);
    assert_eq!(sender.execute(&scan).await.unwrap().documents, 120);

    // The run's own write concern replaces the URI's.
    let run = ExecOptions {
        write_concern: Some(
            mongodb::options::WriteConcern::builder()
                .w(mongodb::options::Acknowledgment::Nodes(1))
                .build(),
        ),
        ..ExecOptions::default()
    };
    let mut run_sender = Sender::new(client, &target.wire, run);
    let update = operation(
        db,
        "UPDATE",
        vec![commands::update(
            "usertable",
            "user007",
            doc! {"field0": "b"},
        )],
    );
    assert_eq!(run_sender.execute(&update).await.unwrap().n, 1);
    let stored = env
        .db()
        .collection::<Document>("usertable")
        .find_one(doc! {"_id": "user007"})
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.get_str("field0").unwrap(), "b");

    assert_eq!(*driver_sent.lock().unwrap(), Vec::<String>::new());
    // Each sender's connection is one of the relay's: find the one that sent the find.
    let connections = commands_sent(&captured);
    let own = connections
        .iter()
        .find(|c| c.iter().any(|d| d.contains_key("find")))
        .expect("a connection sent the read");
    let names: Vec<&str> = own
        .iter()
        .map(|d| d.keys().next().unwrap().as_str())
        .collect();
    assert_eq!(names[..4], ["hello", "insert", "find", "find"]);
    assert!(
        names.len() > 4 && names[4..].iter().all(|n| *n == "getMore"),
        "{names:?}"
    );
    let hello = &own[0];
    assert_eq!(
        hello
            .get_document("client")
            .unwrap()
            .get_document("application")
            .unwrap(),
        &doc! {"name": "mongobench"}
    );
    assert_eq!(
        own[1].get_document("writeConcern").unwrap(),
        &doc! {"w": 1, "wtimeout": 5000, "j": true}
    );
    assert_eq!(
        own[2].get_document("readConcern").unwrap(),
        &doc! {"level": "local"}
    );
    for command in &own[1..] {
        assert_eq!(command.get_str("$db").unwrap(), db, "{command}");
        assert!(!command.contains_key("lsid"), "{command}");
    }
    assert!(
        !own[4].contains_key("readConcern"),
        "getMore carries none: {}",
        own[4]
    );
    let update = connections
        .iter()
        .flatten()
        .find(|d| d.contains_key("update"))
        .expect("the update was sent");
    assert_eq!(update.get_document("writeConcern").unwrap(), &doc! {"w": 1});
}

#[tokio::test]
async fn failures_on_own_connections_count_as_the_driver_s_do() {
    let (env, target) = connected("wire-failures").await;
    let db = env.database.as_str();
    let mut sender = Sender::new(target.client.clone(), &target.wire, ExecOptions::default());
    let insert = operation(
        db,
        "INSERT",
        vec![commands::insert_one("usertable", doc! {"_id": "user1"})],
    );
    sender.execute(&insert).await.unwrap();
    let again = sender.execute(&insert).await.unwrap_err();
    assert!(
        matches!(again, Failure::Write { code: 11000, .. }),
        "{again}"
    );
    assert_eq!(again.kind(), ErrorKind::DuplicateKey);

    let bad = operation(
        db,
        "FIND",
        vec![Command::new(&doc! {"find": 5}, false, false)],
    );
    let refused = sender.execute(&bad).await.unwrap_err();
    assert!(
        matches!(refused, Failure::Command { code, .. } if code != 0),
        "{refused}"
    );
    assert_eq!(refused.kind(), ErrorKind::Other);
    // The connection is still in step: the next command on it succeeds.
    let read = operation(db, "READ", vec![commands::read("usertable", "user1", None)]);
    assert_eq!(sender.execute(&read).await.unwrap().documents, 1);

    // Nothing listens on a port just released.
    let closed = TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap()
        .local_addr()
        .unwrap();
    let nowhere = WirePath::Direct(Arc::new(Route {
        address: closed.to_string(),
        timeout: Duration::from_secs(2),
        app_name: "mongobench".into(),
        credential: None,
        primary: false,
        retryable_writes: false,
    }));
    let mut lost = Sender::new(target.client.clone(), &nowhere, ExecOptions::default());
    let failure = lost.execute(&read).await.unwrap_err();
    assert_eq!(failure.kind(), ErrorKind::Network);
    assert!(
        failure
            .to_string()
            .starts_with(&format!("connection to {closed}: ")),
        "{failure}"
    );
}

/// flights' `updateOne {_id}` shape, marked retryable as flights marks it.
fn update_gate(id: i32, gate: &str, retryable: bool) -> Command {
    let body = doc! {"update": "flights", "updates": [
    {"q": {"_id": id}, "u": {"$set": {"gate": gate}}, "multi": !retryable}]};
    let command = Command::new(&body, false, false);
    if retryable {
        command.retryable()
    } else {
        command
    }
}

/// A route to `address` as [`choose`](mongobench::runner::wire::choose) makes it for a
/// replica set's primary that takes retryable writes (FerretDB is a standalone server, which
/// takes none, and ignores `lsid` and `txnNumber`).
fn retrying_route(address: &str) -> WirePath {
    WirePath::Direct(Arc::new(Route {
        address: address.into(),
        timeout: Duration::from_secs(5),
        app_name: "mongobench".into(),
        credential: None,
        primary: false,
        retryable_writes: true,
    }))
}

/// A flight `{_id: 1, gate: "A1"}`, and a sender on [`retrying_route`] through a relay that
/// loses the reply to the first `update`; what the relay saw, and what the driver sent.
async fn cut_update_once(
    test: &str,
) -> (support::MongoEnv, Captured, Sender, Arc<Mutex<Vec<String>>>) {
    let env = support::mongo(test).await;
    env.db()
        .collection::<Document>("flights")
        .insert_one(doc! {"_id": 1, "gate": "A1"})
        .await
        .unwrap();
    let (address, captured) = relay_cutting(host_port(&env.uri), Some("update")).await;
    let (client, driver_sent) = counting(&env.uri).await;
    let sender = Sender::new(client, &retrying_route(&address), ExecOptions::default());
    (env, captured, sender, driver_sent)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retryable_write_whose_reply_was_lost_is_sent_again_on_a_new_connection() {
    let (env, captured, mut sender, driver_sent) = cut_update_once("wire-retry").await;
    let db = env.database.as_str();
    let flights = env.db().collection::<Document>("flights");

    let first = operation(db, "U2", vec![update_gate(1, "B2", true)]);
    assert_eq!(sender.execute(&first).await.unwrap().n, 1);
    let second = operation(db, "U2", vec![update_gate(1, "C3", true)]);
    assert_eq!(sender.execute(&second).await.unwrap().n, 1);
    let stored = flights.find_one(doc! {"_id": 1}).await.unwrap().unwrap();
    assert_eq!(stored.get_str("gate").unwrap(), "C3");
    assert_eq!(*driver_sent.lock().unwrap(), Vec::<String>::new());

    let connections = commands_sent(&captured);
    let updates: Vec<(usize, &Document)> = connections
        .iter()
        .enumerate()
        .flat_map(|(i, c)| {
            c.iter()
                .filter(|d| d.contains_key("update"))
                .map(move |d| (i, d))
        })
        .collect();
    assert_eq!(updates.len(), 3, "{updates:?}");
    let (lost, retried, next) = (updates[0], updates[1], updates[2]);
    assert_ne!(lost.0, retried.0, "the retry goes on a new connection");
    assert_eq!(
        lost.1, retried.1,
        "the retry is the same command, transaction number included"
    );
    assert_eq!(lost.1.get_i64("txnNumber").unwrap(), 1);
    assert_eq!(next.1.get_i64("txnNumber").unwrap(), 2);
    let lsid = lost.1.get_document("lsid").unwrap();
    assert_eq!(
        next.1.get_document("lsid").unwrap(),
        lsid,
        "one session per worker"
    );
    assert!(
        matches!(lsid.get("id"), Some(mongodb::bson::Bson::Binary(b))
        if b.subtype == mongodb::bson::spec::BinarySubtype::Uuid)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_that_is_not_retryable_is_not_sent_again() {
    let (env, captured, mut sender, _) = cut_update_once("wire-no-retry").await;
    let db = env.database.as_str();
    let many = operation(db, "U3", vec![update_gate(1, "B2", false)]);
    let failure = sender.execute(&many).await.unwrap_err();
    assert_eq!(failure.kind(), ErrorKind::Network, "{failure}");
    let updates: Vec<Document> = commands_sent(&captured)
        .into_iter()
        .flatten()
        .filter(|d| d.contains_key("update"))
        .collect();
    assert_eq!(updates.len(), 1, "{updates:?}");
    assert!(!updates[0].contains_key("txnNumber") && !updates[0].contains_key("lsid"));
}

#[tokio::test]
async fn on_a_standalone_server_retryable_writes_go_on_own_connections_without_a_session() {
    let (env, target) = connected("wire-standalone-retryable").await;
    let WirePath::Direct(route) = &target.wire else {
        panic!("the driver was chosen: {}", target.wire);
    };
    assert!(!route.retryable_writes);
    let (address, captured) = relay(host_port(&env.uri)).await;
    let path = WirePath::Direct(Arc::new(Route {
        address,
        ..(**route).clone()
    }));
    let (client, driver_sent) = counting(&env.uri).await;
    let db = env.database.as_str();
    let mut sender = Sender::new(client, &path, ExecOptions::default());
    let insert = operation(
        db,
        "INSERT",
        vec![commands::insert_one("flights", doc! {"_id": 1, "gate": "A1"}).retryable()],
    );
    sender.execute(&insert).await.unwrap();
    let update = operation(db, "U2", vec![update_gate(1, "B2", true)]);
    assert_eq!(sender.execute(&update).await.unwrap().n, 1);
    assert_eq!(*driver_sent.lock().unwrap(), Vec::<String>::new());
    for command in commands_sent(&captured).into_iter().flatten().skip(1) {
        assert!(
            !command.contains_key("lsid") && !command.contains_key("txnNumber"),
            "{command}"
        );
    }
}

/// The path is chosen from the URI and a `hello` as [`connect_with`] does, but not through it:
/// the driver cannot log in to FerretDB 1.24, whose SCRAM conversation does not end where the
/// driver's `skipEmptyExchange` expects it to ("expected SCRAM authentication to have
/// completed"); an own connection sends the empty step it asks for.
#[tokio::test]
async fn a_user_the_uri_names_logs_in_on_own_connections_with_scram_sha_256() {
    use mongobench::runner::wire::{choose, probe};
    let server = support::private_mongo_sqlite_with_user("wire-scram", "bench", "s3cret-pw");
    let hello = doc! {"isWritablePrimary": true, "maxWireVersion": 21};
    let path_for = |uri: String| {
        let hello = hello.clone();
        async move {
            let opts = client_options("scram", &uri, 2, Duration::from_secs(10), &[])
                .await
                .unwrap();
            probe(choose(&opts, &hello, Duration::from_secs(10))).await
        }
    };
    let path = path_for(server.uri.clone()).await;
    let WirePath::Direct(route) = &path else {
        panic!("the driver was chosen: {path}");
    };
    let credential = route.credential.as_ref().expect("the URI's user");
    assert_eq!(
        (credential.user.as_str(), credential.source.as_str()),
        ("bench", "admin")
    );
    let (client, driver_sent) = counting(&server.uri).await;
    let mut sender = Sender::new(client, &path, ExecOptions::default());
    let insert = operation(
        "scram",
        "INSERT",
        vec![commands::insert_one("usertable", doc! {"_id": "user1"})],
    );
    assert_eq!(sender.execute(&insert).await.unwrap().n, 1);
    let read = operation(
        "scram",
        "READ",
        vec![commands::read("usertable", "user1", None)],
    );
    assert_eq!(sender.execute(&read).await.unwrap().documents, 1);
    assert_eq!(*driver_sent.lock().unwrap(), Vec::<String>::new());

    // Without logging in, the server refuses the same read: the login above is what let it in.
    let anonymous = WirePath::Direct(Arc::new(Route {
        credential: None,
        ..(**route).clone()
    }));
    let refused = Sender::new(
        counting(&server.uri).await.0,
        &anonymous,
        ExecOptions::default(),
    )
    .execute(&read)
    .await
    .unwrap_err();
    assert!(matches!(refused, Failure::Command { .. }), "{refused}");

    // The wrong password: the probe's login fails, and the driver is kept, saying why.
    let WirePath::Driver(why) = path_for(server.uri.replace("s3cret-pw", "wrong")).await else {
        panic!("a wrong password opened an own connection");
    };
    assert!(
        why.starts_with(
            "an own connection failed: logging in as bench on admin with SCRAM-SHA-256: "
        ),
        "{why}"
    );
    assert!(!why.contains("wrong"), "{why}");
}
