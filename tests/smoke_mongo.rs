//! Proves the testenv MongoDB-wire server is real: the official driver round-trips the
//! operations the runner relies on.
mod support;

use futures::TryStreamExt;
use mongodb::IndexModel;
use mongodb::bson::{Document, doc};

#[tokio::test]
async fn ferretdb_round_trips_crud_and_indexes_through_the_official_driver() {
    let env = support::mongo("crud-round-trip").await;
    let coll = env.db().collection::<Document>("things");

    let docs: Vec<Document> = (0..10)
        .map(|i| doc! {"_id": i, "group": i % 2, "n": i * 10})
        .collect();
    let inserted = coll.insert_many(docs).await.expect("insertMany");
    assert_eq!(inserted.inserted_ids.len(), 10);

    let mut odd: Vec<i32> = coll
        .find(doc! {"group": 1})
        .await
        .expect("find")
        .try_collect::<Vec<_>>()
        .await
        .unwrap()
        .iter()
        .map(|d| d.get_i32("_id").unwrap())
        .collect();
    odd.sort();
    assert_eq!(odd, [1, 3, 5, 7, 9]);

    let updated = coll
        .update_one(doc! {"_id": 4}, doc! {"$inc": {"n": 1}})
        .await
        .expect("updateOne");
    assert_eq!((updated.matched_count, updated.modified_count), (1, 1));
    let four = coll
        .find_one(doc! {"_id": 4})
        .await
        .unwrap()
        .expect("document 4");
    assert_eq!(four.get_i32("n").unwrap(), 41);

    let deleted = coll
        .delete_many(doc! {"group": 0})
        .await
        .expect("deleteMany");
    assert_eq!(deleted.deleted_count, 5);
    assert_eq!(coll.count_documents(doc! {}).await.unwrap(), 5);

    let created = coll
        .create_index(
            IndexModel::builder()
                .keys(doc! {"group": 1, "n": -1})
                .build(),
        )
        .await
        .expect("createIndexes");
    assert_eq!(created.index_name, "group_1_n_-1");
    let names = coll.list_index_names().await.unwrap();
    assert!(
        names.contains(&"group_1_n_-1".to_owned()),
        "indexes: {names:?}"
    );

    env.db().drop().await.unwrap();
}
