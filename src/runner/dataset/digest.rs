//! A digest of a collection's whole content, to verify that a restored collection equals the
//! seeded one (docs/results.md, "Dataset digest"). The server's `dbHash` is used where it
//! answers; elsewhere the runner reads every document once and sums their SHA-256 digests,
//! which needs no sort and counts duplicates.

use futures::TryStreamExt;
use mongodb::Client;
use mongodb::bson::{RawDocumentBuf, doc};
use sha2::{Digest, Sha256};
use std::time::Duration;

use crate::result::DatasetDigest;
use crate::runner::deadline::{describe, whole_collection, within};

/// `dbHash`: the server's MD5 over the collection in `_id` order.
pub const DB_HASH: &str = "dbHash";
/// The runner's digest: the wrapping sum of each document's SHA-256 as four big-endian u64.
pub const SHA256_SUM: &str = "sha256-sum";

/// Documents per batch when the runner reads a collection for its digest: at most a few MB
/// (flights documents are ≤ 3.2 KB), and a thousand documents per round trip.
const DIGEST_BATCH: u32 = 1000;

/// Server error codes meaning "this command does not exist here".
const NOT_SUPPORTED: [i32; 3] = [59, 115, 238]; // CommandNotFound, CommandNotSupported, NotImplemented

/// Why a digest could not be taken.
#[derive(Debug, thiserror::Error)]
#[error("taking the digest of {namespace}: {}", describe(source))]
pub struct DigestError {
    namespace: String,
    source: mongodb::error::Error,
}

/// The digest of `database.collection`, with its document count; waits at most `limit` for a
/// reply (`dbHash`, which hashes the whole collection, [`whole_collection`] of it).
pub async fn digest(
    client: &Client,
    database: &str,
    collection: &str,
    limit: Duration,
) -> Result<DatasetDigest, DigestError> {
    let failed = |source| DigestError {
        namespace: format!("{database}.{collection}"),
        source,
    };
    let db = client.database(database);
    // Servers without collection metadata (FerretDB) count by reading every document.
    let documents = within(
        whole_collection(limit),
        db.collection::<RawDocumentBuf>(collection)
            .estimated_document_count(),
    )
    .await
    .map_err(failed)?;
    let db_hash = db.run_command(doc! {"dbHash": 1, "collections": [collection]});
    match within(whole_collection(limit), db_hash).await {
        Ok(reply) => {
            if let Ok(md5) = reply
                .get_document("collections")
                .and_then(|c| c.get_str(collection))
            {
                return Ok(DatasetDigest {
                    method: DB_HASH.to_owned(),
                    value: md5.to_owned(),
                    documents,
                });
            }
        }
        Err(e)
            if crate::runner::outcome::driver_code(&e)
                .is_some_and(|c| NOT_SUPPORTED.contains(&c)) => {}
        Err(e) => return Err(failed(e)),
    }
    // A server may read the whole collection for the first batch (or any): each batch gets
    // the limit of a whole-collection command. Batches of DIGEST_BATCH documents keep the
    // runner's memory small: by default a getMore brings up to 16 MiB at once.
    let scan = whole_collection(limit);
    let mut cursor = within(
        scan,
        db.collection::<RawDocumentBuf>(collection)
            .find(doc! {})
            .batch_size(DIGEST_BATCH),
    )
    .await
    .map_err(failed)?;
    let mut sum = Sum::default();
    let mut counted = 0;
    while let Some(document) = within(scan, cursor.try_next()).await.map_err(failed)? {
        sum.add(document.as_bytes());
        counted += 1;
    }
    Ok(DatasetDigest {
        method: SHA256_SUM.to_owned(),
        value: sum.hex(),
        documents: counted,
    })
}

/// An order-independent sum of SHA-256 digests.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Sum([u64; 4]);

impl Sum {
    fn add(&mut self, bytes: &[u8]) {
        let digest = Sha256::digest(bytes);
        for (lane, chunk) in self.0.iter_mut().zip(digest.chunks_exact(8)) {
            *lane = lane.wrapping_add(u64::from_be_bytes(chunk.try_into().expect("8 bytes")));
        }
    }

    fn hex(&self) -> String {
        self.0.iter().map(|lane| format!("{lane:016x}")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sum_ignores_order_and_counts_duplicates() {
        let (a, b) = (b"first".as_slice(), b"second".as_slice());
        let mut ab = Sum::default();
        ab.add(a);
        ab.add(b);
        let mut ba = Sum::default();
        ba.add(b);
        ba.add(a);
        assert_eq!(ab, ba);
        let mut aa = Sum::default();
        aa.add(a);
        aa.add(a);
        assert_ne!(aa, Sum::default());
        // One document: the sum is its SHA-256 (echo -n first | sha256sum).
        let mut one = Sum::default();
        one.add(a);
        assert_eq!(
            one.hex(),
            "a7937b64b8caa58f03721bb6bacf5c78cb235febe0e70b1b84cd99541461a08e"
        );
    }
}
