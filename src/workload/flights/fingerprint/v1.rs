//! Fingerprint v1's operation record (specs/flights.md §8, v1): one kind byte followed by the
//! BSON of a body taken from the commands actually sent (driver-added fields never appear in
//! them): find `{filter, projection?, sort?, limit}`, updates `{q, u}`, deletes `{q}`, insert
//! `{documents}`, aggregate `{pipeline}`, transaction `{stmts: [{kind, body}, …]}`.

use super::error::RecordError;
use crate::workload::{Command, Operation};
use mongodb::bson::{RawArrayBuf, RawBsonRef, RawDocument, RawDocumentBuf};

/// `key` of `d`, if present and well-formed.
fn get<'a>(d: &'a RawDocument, key: &str) -> Option<RawBsonRef<'a>> {
    d.get(key).ok().flatten()
}

/// `(kind, body)` of one command outside a transaction; the body's values are the command's
/// own bytes, copied.
fn command_record(command: &Command) -> Result<(u8, RawDocumentBuf), RecordError> {
    let cmd: &RawDocument = &command.body;
    let missing = |command, field| RecordError::MissingField { command, field };
    let first_statement =
        |command: &'static str, field: &'static str| -> Result<&RawDocument, RecordError> {
            cmd.get_array(field)
                .ok()
                .and_then(|a| a.get_document(0).ok())
                .ok_or(missing(command, field))
        };
    let mut body = RawDocumentBuf::new();
    let kind = match command.name() {
        "find" => {
            let filter = get(cmd, "filter").ok_or(missing("find", "filter"))?;
            let limit = get(cmd, "limit").ok_or(missing("find", "limit"))?;
            body.append_ref("filter", filter);
            for optional in ["projection", "sort"] {
                if let Some(v) = get(cmd, optional) {
                    body.append_ref(optional, v);
                }
            }
            body.append_ref("limit", limit);
            b'F'
        }
        "update" => {
            let s = first_statement("update", "updates")?;
            let q = get(s, "q").ok_or(missing("update", "updates.0.q"))?;
            let u = get(s, "u").ok_or(missing("update", "updates.0.u"))?;
            body.append_ref("q", q);
            body.append_ref("u", u);
            if s.get_bool("multi").unwrap_or(false) {
                b'U'
            } else {
                b'u'
            }
        }
        "delete" => {
            let s = first_statement("delete", "deletes")?;
            let q = get(s, "q").ok_or(missing("delete", "deletes.0.q"))?;
            let one = match get(s, "limit") {
                Some(RawBsonRef::Int32(l)) => l != 0,
                Some(RawBsonRef::Int64(l)) => l != 0,
                _ => return Err(missing("delete", "deletes.0.limit")),
            };
            body.append_ref("q", q);
            if one { b'd' } else { b'D' }
        }
        "insert" => {
            let documents = get(cmd, "documents").ok_or(missing("insert", "documents"))?;
            body.append_ref("documents", documents);
            b'I'
        }
        "aggregate" => {
            let pipeline = get(cmd, "pipeline").ok_or(missing("aggregate", "pipeline"))?;
            body.append_ref("pipeline", pipeline);
            b'A'
        }
        other => return Err(RecordError::UnknownCommand(other.to_string())),
    };
    Ok((kind, body))
}

/// The operation record of `op`: kind byte then body BSON.
///
/// # Errors
/// `op` is not a flights/v1 shape.
pub fn operation_record(op: &Operation) -> Result<Vec<u8>, RecordError> {
    let (kind, body) = record_parts(op)?;
    let mut out = Vec::with_capacity(1 + body.as_bytes().len());
    out.push(kind);
    out.extend_from_slice(body.as_bytes());
    Ok(out)
}

/// The kind byte and body of `op`'s record.
pub(super) fn record_parts(op: &Operation) -> Result<(u8, RawDocumentBuf), RecordError> {
    Ok(match op.commands.as_slice() {
        [] => return Err(RecordError::Empty { label: op.label }),
        cmds if cmds.iter().any(|c| c.in_transaction) => {
            let mut stmts = RawArrayBuf::new();
            for c in cmds {
                let (kind, body) = command_record(c)?;
                let mut statement = RawDocumentBuf::new();
                statement.append("kind", char::from(kind).to_string());
                statement.append("body", body);
                stmts.push(statement);
            }
            let mut body = RawDocumentBuf::new();
            body.append("stmts", stmts);
            (b'T', body)
        }
        [cmd] => command_record(cmd)?,
        cmds => {
            return Err(RecordError::SeveralCommands {
                label: op.label,
                count: cmds.len(),
            });
        }
    })
}
