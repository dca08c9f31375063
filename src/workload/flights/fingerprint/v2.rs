//! Fingerprint v2's operation record (specs/flights.md §8, v2): the variant's code and the
//! values its generator drew, in a fixed little-endian layout, read back from the command that
//! is sent. A command of a §5 shape is a pure function of these values, the dataset and the
//! knobs (an inserted document of datasetSeed and its seq), so the record identifies the
//! command without hashing its bytes: an insert's record is its seqs, not ten whole documents.

use super::error::RecordError;
use crate::workload::flights::seq_of_object_id;
use crate::workload::{Command, Operation};
use mongodb::bson::{RawBsonRef, RawDocument};

/// `op`'s v2 record.
///
/// # Errors
/// `op` is not one of the flights/v1 shapes.
pub fn operation_record_v2(op: &Operation) -> Result<Vec<u8>, RecordError> {
    let mut out = Vec::new();
    write_record(op, &mut out)?;
    Ok(out)
}

/// Appends `op`'s v2 record to `out`.
pub(super) fn write_record(op: &Operation, out: &mut Vec<u8>) -> Result<(), RecordError> {
    match op.commands.as_slice() {
        [] => Err(RecordError::Empty { label: op.label }),
        cmds if cmds.iter().any(|c| c.in_transaction) => transaction(cmds, out),
        [cmd] => command(cmd, out),
        cmds => Err(RecordError::SeveralCommands {
            label: op.label,
            count: cmds.len(),
        }),
    }
}

fn command(command: &Command, out: &mut Vec<u8>) -> Result<(), RecordError> {
    let cmd: &RawDocument = &command.body;
    match command.name() {
        "find" => find(cmd, out),
        "update" => update(cmd, out),
        "delete" => delete(cmd, out),
        "insert" => insert(cmd, out),
        "aggregate" => aggregate(cmd, out),
        other => Err(RecordError::UnknownCommand(other.to_string())),
    }
}

/// F1 `F limit`, F2 `origin destination`, F3 `status`.
fn find(cmd: &RawDocument, out: &mut Vec<u8>) -> Result<(), RecordError> {
    let filter = document(cmd, "find", "filter")?;
    match first(filter, "find", "filter")? {
        ("flight_id", RawBsonRef::Int32(f)) => {
            out.extend_from_slice(b"F1");
            put_i32(out, f);
            put_i32(out, int32(cmd, "find", "limit")?);
        }
        ("origin", RawBsonRef::String(origin)) => {
            out.extend_from_slice(b"F2");
            put_str(out, origin);
            put_str(out, string(filter, "find", "filter.destination")?);
        }
        ("status", RawBsonRef::String(status)) => {
            out.extend_from_slice(b"F3");
            put_str(out, status);
        }
        (key, _) => return Err(unknown_shape("find", "filter", key)),
    }
    Ok(())
}

/// U1 `F d S`, U2 `seq d S`, U3 `F` then `0 amount` (`$inc`) or `1 minutes` (`$set`).
fn update(cmd: &RawDocument, out: &mut Vec<u8>) -> Result<(), RecordError> {
    let s = first_statement(cmd, "update", "updates")?;
    let q = document(s, "update", "updates.0.q")?;
    let u = document(s, "update", "updates.0.u")?;
    let multi = match field(s, "update", "updates.0.multi")? {
        RawBsonRef::Boolean(multi) => multi,
        _ => return Err(missing("update", "updates.0.multi")),
    };
    match (first(q, "update", "updates.0.q")?, multi) {
        (("flight_id", RawBsonRef::Int32(f)), false) => {
            out.extend_from_slice(b"U1");
            put_i32(out, f);
            seat_and_status(u, out)?;
        }
        (("_id", RawBsonRef::ObjectId(id)), false) => {
            out.extend_from_slice(b"U2");
            put_u64(out, seq(id, "update", "updates.0.q._id")?);
            seat_and_status(u, out)?;
        }
        (("flight_id", RawBsonRef::Int32(f)), true) => {
            out.extend_from_slice(b"U3");
            put_i32(out, f);
            match first(u, "update", "updates.0.u")? {
                ("$inc", RawBsonRef::Document(inc)) => {
                    out.push(0);
                    put_i32(
                        out,
                        int32(inc, "update", "updates.0.u.$inc.seats_available")?,
                    );
                }
                ("$set", RawBsonRef::Document(set)) => {
                    out.push(1);
                    put_i32(
                        out,
                        int32(set, "update", "updates.0.u.$set.duration_minutes")?,
                    );
                }
                (key, _) => return Err(unknown_shape("update", "updates.0.u", key)),
            }
        }
        ((key, _), _) => return Err(unknown_shape("update", "updates.0.q", key)),
    }
    Ok(())
}

/// U1/U2's `{$inc: {seats_available: d}, $set: {status: S}}` as `d S`.
fn seat_and_status(u: &RawDocument, out: &mut Vec<u8>) -> Result<(), RecordError> {
    let inc = document(u, "update", "updates.0.u.$inc")?;
    let set = document(u, "update", "updates.0.u.$set")?;
    put_i32(
        out,
        int32(inc, "update", "updates.0.u.$inc.seats_available")?,
    );
    put_str(out, string(set, "update", "updates.0.u.$set.status")?);
    Ok(())
}

/// D1 `F`, D2 `seq`, D3 `F`.
fn delete(cmd: &RawDocument, out: &mut Vec<u8>) -> Result<(), RecordError> {
    let s = first_statement(cmd, "delete", "deletes")?;
    let q = document(s, "delete", "deletes.0.q")?;
    let one = int32(s, "delete", "deletes.0.limit")? != 0;
    match (first(q, "delete", "deletes.0.q")?, one) {
        (("flight_id", RawBsonRef::Int32(f)), true) => {
            out.extend_from_slice(b"D1");
            put_i32(out, f);
        }
        (("_id", RawBsonRef::ObjectId(id)), true) => {
            out.extend_from_slice(b"D2");
            put_u64(out, seq(id, "delete", "deletes.0.q._id")?);
        }
        (("flight_id", RawBsonRef::Int32(f)), false) => {
            out.extend_from_slice(b"D3");
            put_i32(out, f);
        }
        ((key, _), _) => return Err(unknown_shape("delete", "deletes.0.q", key)),
    }
    Ok(())
}

/// I `n seq₁ … seqₙ`: each document's seq, from its `_id` (its first field).
fn insert(cmd: &RawDocument, out: &mut Vec<u8>) -> Result<(), RecordError> {
    let documents = match field(cmd, "insert", "documents")? {
        RawBsonRef::Array(documents) => documents,
        _ => return Err(missing("insert", "documents")),
    };
    out.push(b'I');
    let count_at = out.len();
    put_u32(out, 0);
    let mut n: u32 = 0;
    for d in documents {
        let Ok(RawBsonRef::Document(d)) = d else {
            return Err(missing("insert", "documents.n"));
        };
        match first(d, "insert", "documents.n")? {
            ("_id", RawBsonRef::ObjectId(id)) => {
                put_u64(out, seq(id, "insert", "documents.n._id")?)
            }
            _ => return Err(missing("insert", "documents.n._id")),
        }
        n += 1;
    }
    out[count_at..count_at + 4].copy_from_slice(&n.to_le_bytes());
    Ok(())
}

/// A1 `F window` (from `$gte: F, $lt: F + window`), A2 `origin destination`.
fn aggregate(cmd: &RawDocument, out: &mut Vec<u8>) -> Result<(), RecordError> {
    let pipeline = match field(cmd, "aggregate", "pipeline")? {
        RawBsonRef::Array(pipeline) => pipeline,
        _ => return Err(missing("aggregate", "pipeline")),
    };
    let stage = pipeline
        .get_document(0)
        .map_err(|_| missing("aggregate", "pipeline.0"))?;
    let m = document(stage, "aggregate", "pipeline.0.$match")?;
    match first(m, "aggregate", "pipeline.0.$match")? {
        ("flight_id", RawBsonRef::Document(range)) => {
            let from = int32(range, "aggregate", "pipeline.0.$match.flight_id.$gte")?;
            let to = int32(range, "aggregate", "pipeline.0.$match.flight_id.$lt")?;
            out.extend_from_slice(b"A1");
            put_i32(out, from);
            put_i32(out, to.wrapping_sub(from));
        }
        ("origin", RawBsonRef::String(origin)) => {
            out.extend_from_slice(b"A2");
            put_str(out, origin);
            put_str(
                out,
                string(m, "aggregate", "pipeline.0.$match.destination")?,
            );
        }
        (key, _) => return Err(unknown_shape("aggregate", "pipeline.0.$match", key)),
    }
    Ok(())
}

/// T `A B p`: B from the find's `_id`, A and p from the first update's `_id` and `$pull`.
fn transaction(cmds: &[Command], out: &mut Vec<u8>) -> Result<(), RecordError> {
    let [read, take, _give] = cmds else {
        return Err(RecordError::UnknownShape {
            command: "transaction",
            found: format!("{} statements", cmds.len()),
        });
    };
    let b = match first(document(&read.body, "find", "filter")?, "find", "filter")? {
        ("_id", RawBsonRef::ObjectId(id)) => seq(id, "find", "filter._id")?,
        (key, _) => return Err(unknown_shape("find", "filter", key)),
    };
    let s = first_statement(&take.body, "update", "updates")?;
    let a = match first(
        document(s, "update", "updates.0.q")?,
        "update",
        "updates.0.q",
    )? {
        ("_id", RawBsonRef::ObjectId(id)) => seq(id, "update", "updates.0.q._id")?,
        (key, _) => return Err(unknown_shape("update", "updates.0.q", key)),
    };
    let u = document(s, "update", "updates.0.u")?;
    let pull = document(u, "update", "updates.0.u.$pull")?;
    let passengers = document(pull, "update", "updates.0.u.$pull.passengers")?;
    let p = int32(
        passengers,
        "update",
        "updates.0.u.$pull.passengers.passenger_id",
    )?;
    out.push(b'T');
    put_u64(out, a);
    put_u64(out, b);
    put_i32(out, p);
    Ok(())
}

fn put_i32(out: &mut Vec<u8>, v: i32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// A string: its UTF-8 length (u32) then its bytes.
fn put_str(out: &mut Vec<u8>, s: &str) {
    put_u32(out, s.len() as u32);
    out.extend_from_slice(s.as_bytes());
}

fn missing(command: &'static str, field: &'static str) -> RecordError {
    RecordError::MissingField { command, field }
}

fn unknown_shape(command: &'static str, at: &str, key: &str) -> RecordError {
    RecordError::UnknownShape {
        command,
        found: format!("{at} on {key:?}"),
    }
}

/// The field at the end of `path` (a dotted path for the error message) in `d`.
fn field<'a>(
    d: &'a RawDocument,
    command: &'static str,
    path: &'static str,
) -> Result<RawBsonRef<'a>, RecordError> {
    let key = path.rsplit('.').next().unwrap_or(path);
    d.get(key).ok().flatten().ok_or(missing(command, path))
}

fn document<'a>(
    d: &'a RawDocument,
    command: &'static str,
    path: &'static str,
) -> Result<&'a RawDocument, RecordError> {
    match field(d, command, path)? {
        RawBsonRef::Document(d) => Ok(d),
        _ => Err(missing(command, path)),
    }
}

fn int32(d: &RawDocument, command: &'static str, path: &'static str) -> Result<i32, RecordError> {
    match field(d, command, path)? {
        RawBsonRef::Int32(v) => Ok(v),
        _ => Err(missing(command, path)),
    }
}

fn string<'a>(
    d: &'a RawDocument,
    command: &'static str,
    path: &'static str,
) -> Result<&'a str, RecordError> {
    match field(d, command, path)? {
        RawBsonRef::String(v) => Ok(v),
        _ => Err(missing(command, path)),
    }
}

/// The first field of `d`, which decides the shape.
fn first<'a>(
    d: &'a RawDocument,
    command: &'static str,
    path: &'static str,
) -> Result<(&'a str, RawBsonRef<'a>), RecordError> {
    match d.iter().next() {
        Some(Ok(kv)) => Ok(kv),
        _ => Err(missing(command, path)),
    }
}

fn first_statement<'a>(
    cmd: &'a RawDocument,
    command: &'static str,
    array: &'static str,
) -> Result<&'a RawDocument, RecordError> {
    match field(cmd, command, array)? {
        RawBsonRef::Array(a) => a.get_document(0).map_err(|_| missing(command, array)),
        _ => Err(missing(command, array)),
    }
}

/// The seq of a flights `_id` (T0, then the seq big-endian).
fn seq(
    id: mongodb::bson::oid::ObjectId,
    command: &'static str,
    path: &'static str,
) -> Result<u64, RecordError> {
    seq_of_object_id(&id).ok_or(missing(command, path))
}
