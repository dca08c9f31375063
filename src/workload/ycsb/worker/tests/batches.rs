//! Batched inserts (`batchsize > 1`): buffering, flushing and the remainder at the end.

use super::*;
use crate::workload::ycsb::keys::key_name;

#[test]
fn batched_inserts_buffer_then_flush_and_leave_a_remainder() {
    let p = props(
        Some("a"),
        &[
            ("batchsize", "3"),
            ("recordcount", "7"),
            ("fieldlength", "4"),
        ],
    );
    let s = SharedState::new(7);
    let mut w = worker(&p, 1, 0, 1, YcsbPhase::Load, &s);
    let ops = drain(&mut w);
    let shape: Vec<(bool, usize)> = ops.iter().map(|o| (o.buffered, o.documents)).collect();
    assert_eq!(
        shape,
        [
            (true, 0),
            (true, 0),
            (false, 3),
            (true, 0),
            (true, 0),
            (false, 3),
            (true, 0)
        ]
    );
    assert!(ops[0].operation.commands.is_empty());
    let flush = ops[2].operation.commands[0].to_document();
    assert!(!flush.get_bool("ordered").unwrap());
    let ids: Vec<&str> = flush
        .get_array("documents")
        .unwrap()
        .iter()
        .map(|d| d.as_document().unwrap().get_str("_id").unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            key_name(0, true, 1),
            key_name(1, true, 1),
            key_name(2, true, 1)
        ]
    );
    assert_eq!(w.buffered_documents(), 1);
    let rest = w.take_remainder().expect("one document left");
    assert_eq!((rest.documents, rest.keynum), (1, 6));
    assert!(w.take_remainder().is_none());
}

#[test]
fn batch_flush_yields_the_remainder_after_the_quota() {
    let p = props(
        Some("a"),
        &[
            ("batchsize", "3"),
            ("recordcount", "7"),
            ("fieldlength", "4"),
            ("mongobench.batch.flush", "true"),
        ],
    );
    let s = SharedState::new(7);
    let ops = drain(&mut worker(&p, 1, 0, 1, YcsbPhase::Load, &s));
    let shape: Vec<(bool, usize)> = ops.iter().map(|o| (o.buffered, o.documents)).collect();
    assert_eq!(
        shape,
        [
            (true, 0),
            (true, 0),
            (false, 3),
            (true, 0),
            (true, 0),
            (false, 3),
            (true, 0),
            (false, 1)
        ]
    );
    let last = ops.last().unwrap();
    assert_eq!(
        (last.kind, last.keynum, last.calls.as_slice()),
        (OpKind::Insert, 6, &[Call::Insert][..])
    );
    let body = last.operation.commands[0].to_document();
    let ids: Vec<&str> = body
        .get_array("documents")
        .unwrap()
        .iter()
        .map(|d| d.as_document().unwrap().get_str("_id").unwrap())
        .collect();
    assert_eq!(ids, [key_name(6, true, 1)]);
    // A quota that ends on a full batch leaves nothing to flush.
    let p = props(
        Some("a"),
        &[
            ("batchsize", "3"),
            ("recordcount", "6"),
            ("fieldlength", "4"),
            ("mongobench.batch.flush", "true"),
        ],
    );
    assert_eq!(
        drain(&mut worker(&p, 1, 0, 1, YcsbPhase::Load, &s)).len(),
        6
    );
}
