//! Seeding flights against the real MongoDB-wire server: exact counts, the default index set,
//! and growth (not reload) when a benchmark's sizes ascend.
mod support;
use support::runs;

use mongobench::runner::dataset::seed_flights::{dataset_record, seed};
use mongobench::workload::flights::{self, IndexSet, Params};
use mongodb::bson::{Document, doc};

#[tokio::test]
async fn seeding_flights_to_50k_then_100k_grows_the_same_collection() {
    let server = support::private_mongo("seed-grow");
    let client = server.client().await;
    let params = Params::default();
    let coll = client.database("airline").collection::<Document>("flights");

    let first = seed(&client, &params, 50_000, runs::LIMIT, None, None)
        .await
        .expect("seeding to 50k");
    assert_eq!(first.action, "fresh");
    assert_eq!((first.from, first.to, first.count), (0, 50_000, 50_000));
    assert_eq!(coll.count_documents(doc! {}).await.unwrap(), 50_000);
    let mut expected: Vec<String> = flights::expected_index_names(IndexSet::Plgm6)
        .into_iter()
        .map(str::to_owned)
        .collect();
    expected.sort();
    assert_eq!(first.indexes, expected);
    assert_eq!(
        expected.len(),
        7,
        "plgm6 is six secondary indexes plus _id_"
    );

    // A marker on a seeded document survives growth: the collection is not reloaded.
    coll.update_one(
        doc! {"_id": flights::object_id(7)},
        doc! {"$set": {"marker": 1}},
    )
    .await
    .unwrap();

    let second = seed(&client, &params, 100_000, runs::LIMIT, None, None)
        .await
        .expect("growing to 100k");
    assert_eq!(second.action, "grown");
    assert_eq!(
        (second.from, second.to, second.count),
        (50_000, 100_000, 100_000)
    );
    // The server's own collection statistics (a second full count scan would cost minutes on
    // FerretDB); the scan above already checked the 50k state independently.
    let stats = client
        .database("airline")
        .run_command(doc! {"collStats": "flights"})
        .await
        .unwrap();
    assert_eq!(
        stats
            .get_i32("count")
            .map(i64::from)
            .or_else(|_| stats.get_i64("count"))
            .unwrap(),
        100_000
    );
    assert!(
        coll.find_one(doc! {"_id": flights::object_id(100_000)})
            .await
            .unwrap()
            .is_none()
    );
    let marked = coll
        .find_one(doc! {"_id": flights::object_id(7)})
        .await
        .unwrap()
        .unwrap();
    assert_eq!(marked.get_i32("marker").unwrap(), 1);
    assert_eq!(second.indexes, expected);

    let record = dataset_record(&client)
        .await
        .unwrap()
        .expect("a dataset record");
    assert_eq!(record.documents, 100_000);
    assert_eq!(
        record.dataset_id,
        hex::encode(flights::dataset_id(1, 100_000))
    );
    // Documents 50,000 and 99,999 are exactly what the generator makes for those seqs.
    for seq in [50_000, 99_999] {
        let stored = coll
            .find_one(doc! {"_id": flights::object_id(seq)})
            .await
            .unwrap()
            .unwrap();
        assert_eq!(stored, flights::Flight::seeded(1, seq).to_document());
    }
}

#[tokio::test]
async fn seeding_to_the_same_size_reuses_and_to_a_smaller_size_reloads() {
    let server = support::private_mongo("seed-reuse");
    let client = server.client().await;
    let params = Params {
        seed_batch_size: 500,
        seed_workers: 3,
        ..Params::default()
    };

    assert_eq!(
        seed(&client, &params, 3_000, runs::LIMIT, None, None)
            .await
            .unwrap()
            .action,
        "fresh"
    );
    let again = seed(&client, &params, 3_000, runs::LIMIT, None, None)
        .await
        .unwrap();
    assert_eq!((again.action.as_str(), again.count), ("reused", 3_000));
    let smaller = seed(&client, &params, 1_000, runs::LIMIT, None, None)
        .await
        .unwrap();
    assert_eq!((smaller.action.as_str(), smaller.count), ("fresh", 1_000));
}
