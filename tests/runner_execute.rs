//! Sending generated commands to the real MongoDB-wire server: the client offers the spec's wire
//! compressors.
mod support;

use std::time::Duration;

use mongobench::api::WireCompressor;
use mongobench::runner::connect::connect_with;
use mongobench::runner::execute::{ExecOptions, execute};
use mongobench::workload::Operation;
use mongobench::workload::ycsb::commands;
use mongodb::bson::doc;

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
