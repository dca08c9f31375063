//! Sending generated commands to the real MongoDB-wire server: the target URI's write and read
//! concerns reach commands sent as documents, a drained cursor's getMores run in the session of
//! the find that opened it, and the client offers the spec's wire compressors.
mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mongobench::api::WireCompressor;
use mongobench::runner::send::{ExecOptions, execute};
use mongobench::runner::server::{client_options, connect_with};
use mongobench::workload::Operation;
use mongobench::workload::ycsb::commands;
use mongodb::bson::{Bson, Document, doc};
use mongodb::event::EventHandler;
use mongodb::event::command::CommandEvent;

/// `uri` with `options` appended to its query.
fn with_options(uri: &str, options: &str) -> String {
    let sep = if uri.contains('?') { '&' } else { '?' };
    format!("{uri}{sep}{options}")
}

/// A client on `uri` that records every command it sends, in order.
async fn recording(uri: &str) -> (mongodb::Client, Arc<Mutex<Vec<Document>>>) {
    let mut opts = client_options("ferretdb", uri, 2, Duration::from_secs(10), &[])
        .await
        .unwrap();
    let sent = Arc::new(Mutex::new(Vec::new()));
    let log = sent.clone();
    opts.command_event_handler = Some(EventHandler::callback(move |event| {
        if let CommandEvent::Started(started) = event {
            log.lock().unwrap().push(started.command);
        }
    }));
    (mongodb::Client::with_options(opts).unwrap(), sent)
}

/// The commands named `name` that were sent.
fn sent_named(sent: &Arc<Mutex<Vec<Document>>>, name: &str) -> Vec<Document> {
    sent.lock()
        .unwrap()
        .iter()
        .filter(|c| c.keys().next().map(String::as_str) == Some(name))
        .cloned()
        .collect()
}

fn operation(
    database: &str,
    label: &'static str,
    commands: Vec<mongobench::workload::Command>,
) -> Operation {
    Operation {
        label,
        database: Box::leak(database.to_owned().into_boxed_str()),
        commands,
    }
}

#[tokio::test]
async fn the_uri_s_write_and_read_concerns_reach_the_server() {
    let env = support::mongo("uri-concerns").await;
    let uri = with_options(
        &env.uri,
        "w=1&j=true&wtimeoutMS=5000&readConcernLevel=local",
    );
    let (client, sent) = recording(&uri).await;
    let insert = operation(
        &env.database,
        "INSERT",
        vec![commands::insert_one(
            "t",
            doc! {"_id": "user1", "field0": "a"},
        )],
    );
    let reply = execute(&client, &insert, &ExecOptions::default())
        .await
        .expect("the server accepts the URI's write concern");
    assert_eq!(reply.n, 1);
    let read = operation(
        &env.database,
        "READ",
        vec![commands::read("t", "user1", None)],
    );
    let reply = execute(&client, &read, &ExecOptions::default())
        .await
        .expect("the server accepts the URI's read concern");
    assert_eq!(reply.documents, 1);

    let inserts = sent_named(&sent, "insert");
    assert_eq!(
        inserts[0].get_document("writeConcern").unwrap(),
        &doc! {"w": 1, "wtimeout": 5000, "j": true}
    );
    let finds = sent_named(&sent, "find");
    assert_eq!(
        finds[0].get_document("readConcern").unwrap(),
        &doc! {"level": "local"}
    );

    // The run's own write concern replaces the URI's.
    let run = ExecOptions {
        read_preference: None,
        write_concern: Some(
            mongodb::options::WriteConcern::builder()
                .w(mongodb::options::Acknowledgment::Nodes(1))
                .build(),
        ),
        timeout: None,
    };
    let update = operation(
        &env.database,
        "UPDATE",
        vec![commands::update("t", "user1", doc! {"field0": "b"})],
    );
    assert_eq!(execute(&client, &update, &run).await.unwrap().n, 1);
    let updates = sent_named(&sent, "update");
    assert_eq!(
        updates[0].get_document("writeConcern").unwrap(),
        &doc! {"w": 1}
    );
}

#[tokio::test]
async fn without_uri_concerns_commands_carry_none() {
    let env = support::mongo("no-uri-concerns").await;
    let (client, sent) = recording(&env.uri).await;
    let insert = operation(
        &env.database,
        "INSERT",
        vec![commands::insert_one("t", doc! {"_id": "user1"})],
    );
    execute(&client, &insert, &ExecOptions::default())
        .await
        .unwrap();
    let read = operation(
        &env.database,
        "READ",
        vec![commands::read("t", "user1", None)],
    );
    execute(&client, &read, &ExecOptions::default())
        .await
        .unwrap();
    assert!(!sent_named(&sent, "insert")[0].contains_key("writeConcern"));
    assert!(!sent_named(&sent, "find")[0].contains_key("readConcern"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_scan_longer_than_one_batch_drains_its_cursor_in_the_find_s_session() {
    let env = support::mongo("scan-session").await;
    let docs: Vec<Document> = (0..150)
        .map(|i| doc! {"_id": format!("user{i:03}"), "field0": i})
        .collect();
    env.db()
        .collection::<Document>("usertable")
        .insert_many(docs)
        .await
        .unwrap();
    // Every started command, and the cursor id each find's reply opened, by request id.
    let mut opts = client_options("ferretdb", &env.uri, 8, Duration::from_secs(10), &[])
        .await
        .unwrap();
    type Log = Arc<Mutex<Vec<(i32, Document)>>>;
    let (started, replies): (Log, Log) = Default::default();
    let (s, r) = (started.clone(), replies.clone());
    opts.command_event_handler = Some(EventHandler::callback(move |event| match event {
        CommandEvent::Started(e) => s.lock().unwrap().push((e.request_id, e.command)),
        CommandEvent::Succeeded(e) => r.lock().unwrap().push((e.request_id, e.reply)),
        _ => {}
    }));
    let client = mongodb::Client::with_options(opts).unwrap();
    // YCSB's scan shape with a small first batch, so each cursor needs getMores; eight scans at
    // a time, so that a getMore in a session of its own would soon pick another scan's.
    let mut scan = commands::scan("usertable", "user010", 120, None);
    scan.body.append("batchSize", 25i32);
    let op = operation(&env.database, "SCAN", vec![scan]);
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let (client, op) = (client.clone(), op.clone());
        tasks.spawn(async move {
            for _ in 0..5 {
                let reply = execute(&client, &op, &ExecOptions::default())
                    .await
                    .expect("every getMore is accepted");
                assert_eq!(reply.documents, 120);
            }
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.unwrap();
    }

    let lsid = |c: &Document| c.get_document("lsid").unwrap().get("id").cloned().unwrap();
    let started = started.lock().unwrap().clone();
    let replies = replies.lock().unwrap().clone();
    let mut cursor_session: std::collections::HashMap<i64, Bson> = Default::default();
    for (request, command) in started.iter().filter(|(_, c)| c.contains_key("find")) {
        let (_, reply) = replies.iter().find(|(r, _)| r == request).unwrap();
        let id = reply.get_document("cursor").unwrap().get_i64("id").unwrap();
        assert_ne!(
            id, 0,
            "120 documents in batches of 25 leave the cursor open"
        );
        cursor_session.insert(id, lsid(command));
    }
    assert_eq!(cursor_session.len(), 40);
    let get_mores: Vec<&Document> = started
        .iter()
        .map(|(_, c)| c)
        .filter(|c| c.contains_key("getMore"))
        .collect();
    // The first batch holds 25 documents; the rest come by getMore (the server picks their size).
    assert!(get_mores.len() >= 40, "{} getMores", get_mores.len());
    for g in get_mores {
        let id = g.get_i64("getMore").unwrap();
        assert_eq!(
            Some(&lsid(g)),
            cursor_session.get(&id),
            "the getMore of cursor {id} ran outside its find's session"
        );
    }
}

#[tokio::test]
async fn the_client_offers_the_spec_s_wire_compressors() {
    let env = support::mongo("wire-compressors").await;
    let target = connect_with(
        "ferretdb",
        &env.uri,
        2,
        Duration::from_secs(10),
        &[
            WireCompressor::Zstd,
            WireCompressor::Snappy,
            WireCompressor::Zlib,
        ],
    )
    .await
    .expect("a server that supports no compressor still talks to a client that offers them");
    let insert = operation(
        &env.database,
        "INSERT",
        vec![commands::insert_one(
            "t",
            doc! {"_id": "user1", "v": "x".repeat(4000)},
        )],
    );
    assert_eq!(
        execute(&target.client, &insert, &ExecOptions::default())
            .await
            .unwrap()
            .n,
        1
    );
}
