//! The testenv's two MongoDB-wire servers (FerretDB on PostgreSQL, FerretDB on SQLite): the
//! PostgreSQL-backed one answers equality filters from the indexes clients create, and both
//! answer as docs/specs/testenv.md §2 says where they differ from mongod.
mod support;

use futures::TryStreamExt;
use mongodb::bson::{Bson, Document, doc};
use mongodb::error::ErrorKind;

/// The server error code of a failed command, if it failed with one.
fn code(result: &mongodb::error::Result<Document>) -> Option<i32> {
    match result.as_ref().err().map(|e| e.kind.as_ref()) {
        Some(ErrorKind::Command(c)) => Some(c.code),
        _ => None,
    }
}

const COMMAND_NOT_FOUND: Option<i32> = Some(59);

#[tokio::test]
async fn the_postgresql_backed_server_answers_equality_filters_from_created_indexes() {
    let env = support::mongo("pg-index-use").await;
    let db = env.db();
    let coll = db.collection::<Document>("flights");
    let statuses = [
        "scheduled",
        "boarding",
        "departed",
        "landed",
        "delayed",
        "cancelled",
        "diverted",
        "unknown",
    ];
    let docs: Vec<Document> = (0..2000)
        .map(|i| {
            let status = statuses[i as usize % statuses.len()];
            doc! {
                "flight_id": i, "seats": i % 7, "origin": format!("O{}", i % 20),
                "destination": format!("D{}", i % 30), "flight_date": i % 365,
                "status": status, "pad": "x".repeat(500),
            }
        })
        .collect();
    coll.insert_many(docs).await.unwrap();
    db.run_command(doc! {"createIndexes": "flights", "indexes": [
        {"key": {"flight_id": 1, "seats": 1}, "name": "flight_id_1_seats_1"},
        {"key": {"origin": 1, "destination": 1, "flight_date": -1}, "name": "route"},
        {"key": {"status": 1}, "name": "status_1"},
    ]})
    .await
    .unwrap();

    for filter in [
        doc! {"flight_id": 1234},
        doc! {"origin": "O3", "destination": "D13"},
        doc! {"status": "landed"},
        doc! {"_id": Bson::Int32(0)},
    ] {
        let explained = db
            .run_command(doc! {"explain": {"find": "flights", "filter": filter.clone()}})
            .await
            .unwrap();
        assert_eq!(
            explained.get_bool("filterPushdown"),
            Ok(true),
            "{explained}"
        );
        // queryPlanner.Plan is PostgreSQL's EXPLAIN (FORMAT JSON) plan of FerretDB's query.
        let plan = explained.get_document("queryPlanner").unwrap().to_string();
        assert!(
            plan.contains("Bitmap Index Scan") && plan.contains("_gin"),
            "{filter} is not answered from a GIN twin: {plan}"
        );
    }
    // A range is not pushed down: FerretDB reads the whole table and filters in Go.
    let explained = db
        .run_command(doc! {"explain": {"find": "flights", "filter": {"flight_id": {"$gte": 5}}}})
        .await
        .unwrap();
    assert_eq!(
        explained.get_bool("filterPushdown"),
        Ok(false),
        "{explained}"
    );

    // dropIndexes takes the twin along; createIndexes again brings it back.
    db.run_command(doc! {"dropIndexes": "flights", "index": "status_1"})
        .await
        .unwrap();
    let explained = db
        .run_command(doc! {"explain": {"find": "flights", "filter": {"status": "landed"}}})
        .await
        .unwrap();
    let plan = explained.get_document("queryPlanner").unwrap().to_string();
    assert!(plan.contains("Seq Scan"), "{plan}");
}

/// Facts that hold on both servers; each differs from mongod.
async fn differs_from_mongod(env: support::MongoEnv) {
    let db = env.db();
    let coll = db.collection::<Document>("things");
    let docs: Vec<Document> = (0..10).map(|i| doc! {"_id": i, "n": i}).collect();
    coll.insert_many(docs).await.unwrap();

    // No dbHash, no replica set, no transactions: CommandNotFound.
    for command in [
        doc! {"dbHash": 1},
        doc! {"replSetGetStatus": 1},
        doc! {"commitTransaction": 1},
    ] {
        let reply = env
            .client
            .database("admin")
            .run_command(command.clone())
            .await;
        assert_eq!(code(&reply), COMMAND_NOT_FOUND, "{command}: {reply:?}");
    }
    let reply = db.run_command(doc! {"dbHash": 1}).await;
    assert_eq!(
        code(&reply),
        COMMAND_NOT_FOUND,
        "dbHash on a database: {reply:?}"
    );

    // serverStatus: command counters, but no extra_info (CPU times), opcounters, connections
    // or wiredTiger.
    let status = db.run_command(doc! {"serverStatus": 1}).await.unwrap();
    for absent in [
        "extra_info",
        "opcounters",
        "connections",
        "wiredTiger",
        "mem",
    ] {
        assert!(!status.contains_key(absent), "serverStatus has {absent}");
    }
    assert!(status.get_document("metrics").is_ok(), "{status}");

    // A write concern is accepted and ignored, whatever it asks for.
    db.run_command(doc! {"insert": "things", "documents": [{"_id": 100}],
    "writeConcern": {"w": "majority", "j": true, "wtimeout": 1}})
        .await
        .unwrap();

    // Cursors outlive a batch and follow a session: getMore in an explicit session.
    let mut session = env.client.start_session().await.unwrap();
    let mut cursor = coll
        .find(doc! {})
        .batch_size(2)
        .session(&mut session)
        .await
        .unwrap();
    let mut seen = 0;
    while cursor
        .next(&mut session)
        .await
        .transpose()
        .unwrap()
        .is_some()
    {
        seen += 1;
    }
    assert_eq!(seen, 11);

    // collStats answers with the figures the runner records.
    let stats = db.run_command(doc! {"collStats": "things"}).await.unwrap();
    for key in [
        "count",
        "size",
        "storageSize",
        "totalIndexSize",
        "indexSizes",
        "nindexes",
    ] {
        assert!(stats.contains_key(key), "collStats lacks {key}: {stats}");
    }
    assert_eq!(coll.count_documents(doc! {}).await.unwrap(), 11);
    let all: Vec<Document> = coll
        .find(doc! {})
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(all.len(), 11);
}

#[tokio::test]
async fn the_postgresql_backed_server_differs_from_mongod_as_documented() {
    differs_from_mongod(support::mongo("pg-differs").await).await;
}

#[tokio::test]
async fn the_sqlite_backed_server_differs_from_mongod_as_documented() {
    differs_from_mongod(support::mongo_sqlite("sqlite-differs").await).await;
}
