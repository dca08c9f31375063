//! Unit tests of the store: lookups, ranges, indexes, updates and projections.

use super::*;
use bson::{doc, rawdoc};

fn coll() -> Collection {
    let mut c = Collection::default();
    for i in 0..10 {
        c.insert(
            rawdoc! {"_id": format!("user{i}"), "n": i, "tag": if i % 2 == 0 {"even"} else {"odd"}},
        )
        .unwrap();
    }
    c
}

#[test]
fn id_lookups_ranges_and_scans() {
    let mut c = coll();
    assert_eq!(c.matching(&doc! {"_id": "user3"}, 0).len(), 1);
    assert_eq!(c.matching(&doc! {"_id": "nobody"}, 0).len(), 0);
    assert_eq!(c.matching(&doc! {"_id": {"$gte": "user5"}}, 3).len(), 3);
    assert_eq!(
        c.matching(&doc! {"_id": {"$in": ["user1", "user2", "x"]}}, 0)
            .len(),
        2
    );
    assert_eq!(
        c.matching(&doc! {"tag": "even", "n": {"$gt": 3}}, 0).len(),
        3
    );
    assert_eq!(c.matching(&doc! {"$or": [{"n": 1}, {"n": 2}]}, 0).len(), 2);
    assert!(c.insert(rawdoc! {"_id": "user1"}).is_err());
    c.add_index(doc! {"key": {"n": 1}, "name": "n_1"});
    assert_eq!(
        c.matching(&doc! {"tag": "even", "n": {"$gt": 3}}, 0).len(),
        3
    );
    assert_eq!(
        c.matching(&doc! {"n": 4}, 0),
        vec![Key::String("user4".into())]
    );
    assert!(c.remove(&Key::String("user4".into())));
    assert!(c.matching(&doc! {"n": 4}, 0).is_empty());
    c.drop_indexes("*");
    assert_eq!(c.matching(&doc! {"n": {"$in": [1, 2]}}, 0).len(), 2);
}

#[test]
fn updates_and_projections() {
    let d = rawdoc! {"_id": 1, "a": 1, "b": {"c": 2}};
    let u = update(&d, &doc! {"$set": {"b.c": 3}, "$inc": {"a": 2}}).unwrap();
    assert_eq!(
        u.to_document().unwrap(),
        doc! {"_id": 1, "a": 3, "b": {"c": 3}}
    );
    let r = update(&d, &doc! {"x": 1}).unwrap();
    assert_eq!(r.to_document().unwrap(), doc! {"_id": 1, "x": 1});
    assert!(update(&d, &doc! {"$push": {"a": 1}}).is_none());
    let p = Projection::new(&doc! {"a": 1, "_id": 0}).unwrap();
    assert_eq!(p.apply(&d).to_document().unwrap(), doc! {"a": 1});
}
