//! Compiled operation templates (§5) and the command documents they render to.

use mongodb::bson::{Bson, Document, doc};

use super::generator::bson_value_len;

/// A template value: constant subtrees are kept as BSON, so rendering copies them whole.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tpl {
    /// Boxed: most templates are small, and `Body` holds several of them.
    Const(Box<Bson>),
    /// The value drawn for the operation's placeholder slot.
    Slot(usize),
    Doc(Vec<(String, Tpl)>),
    Arr(Vec<Tpl>),
}

impl Tpl {
    /// A document or array template, constant when none of its items holds a placeholder.
    pub(super) fn doc(fields: Vec<(String, Tpl)>) -> Tpl {
        if fields.iter().all(|(_, t)| matches!(t, Tpl::Const(_))) {
            let mut d = Document::new();
            for (k, t) in fields {
                if let Tpl::Const(v) = t {
                    d.insert(k, *v);
                }
            }
            Tpl::constant(Bson::Document(d))
        } else {
            Tpl::Doc(fields)
        }
    }

    pub(super) fn array(items: Vec<Tpl>) -> Tpl {
        if items.iter().all(|t| matches!(t, Tpl::Const(_))) {
            Tpl::constant(Bson::Array(
                items
                    .into_iter()
                    .filter_map(|t| match t {
                        Tpl::Const(v) => Some(*v),
                        _ => None,
                    })
                    .collect(),
            ))
        } else {
            Tpl::Arr(items)
        }
    }

    pub(super) fn constant(value: Bson) -> Tpl {
        Tpl::Const(Box::new(value))
    }

    pub(super) fn render(&self, values: &[Bson]) -> Bson {
        match self {
            Tpl::Const(v) => (**v).clone(),
            Tpl::Slot(k) => values.get(*k).cloned().unwrap_or(Bson::Null),
            Tpl::Doc(fields) => {
                let mut d = Document::new();
                for (k, t) in fields {
                    d.insert(k.clone(), t.render(values));
                }
                Bson::Document(d)
            }
            Tpl::Arr(items) => Bson::Array(items.iter().map(|t| t.render(values)).collect()),
        }
    }

    /// An upper bound of the rendered value's BSON size (without type byte and name), given one
    /// for each slot's value.
    pub(super) fn max_size(&self, slot_sizes: &[u64]) -> u64 {
        let element =
            |name_len: usize, t: &Tpl| (2 + name_len as u64).saturating_add(t.max_size(slot_sizes));
        match self {
            Tpl::Const(v) => bson_value_len(v),
            Tpl::Slot(k) => slot_sizes.get(*k).copied().unwrap_or(0),
            Tpl::Doc(fields) => fields
                .iter()
                .fold(5u64, |sum, (k, t)| sum.saturating_add(element(k.len(), t))),
            Tpl::Arr(items) => items.iter().enumerate().fold(5u64, |sum, (i, t)| {
                sum.saturating_add(element(i.to_string().len(), t))
            }),
        }
    }

    /// Rendered as a document (templates that must be maps are checked when parsed).
    fn render_doc(&self, values: &[Bson]) -> Document {
        match self.render(values) {
            Bson::Document(d) => d,
            _ => Document::new(),
        }
    }
}

/// An integer as the shell sends it: int32 when it fits, else int64.
fn shell_int(n: i64) -> Bson {
    i32::try_from(n).map_or(Bson::Int64(n), Bson::Int32)
}

/// One compiled operation.
#[derive(Debug, Clone)]
pub(super) struct Op {
    /// The collection it targets (0 for a transaction, which has none of its own).
    pub collection: usize,
    /// Generator index of each placeholder slot, in order of first appearance.
    pub slots: Vec<usize>,
    pub body: Body,
}

#[derive(Debug, Clone)]
pub(super) enum Body {
    Find {
        filter: Tpl,
        projection: Option<Tpl>,
        sort: Option<Tpl>,
        limit: Option<i64>,
        skip: Option<i64>,
        hint: Option<Tpl>,
    },
    Insert {
        documents: u64,
    },
    Update {
        filter: Tpl,
        update: Tpl,
        multi: bool,
        upsert: bool,
    },
    Delete {
        filter: Tpl,
        multi: bool,
    },
    Aggregate {
        pipeline: Tpl,
    },
    FindAndModify {
        query: Tpl,
        /// `None`: `remove: true`.
        update: Option<Tpl>,
        new: bool,
        upsert: bool,
        sort: Option<Tpl>,
        fields: Option<Tpl>,
    },
    Transaction {
        parts: Vec<Part>,
    },
}

/// One operation of a transaction.
#[derive(Debug, Clone)]
pub(super) struct Part {
    pub op: usize,
    /// The transaction's slot of each of the part's slots: a placeholder shared by two parts
    /// gets one value.
    pub slots: Vec<usize>,
}

/// A rendered command and how it is sent.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Shape {
    pub body: Document,
    pub drain: bool,
    /// A single-statement update or delete (§5); the caller clears it inside a transaction.
    pub retryable: bool,
}

impl Op {
    /// The command of a find, update, delete, aggregate or findAndModify; `None` for an insert
    /// (its documents come from the worker) and a transaction.
    pub(super) fn command(&self, collection: &str, values: &[Bson]) -> Option<Shape> {
        let shape = |body, drain, retryable| {
            Some(Shape {
                body,
                drain,
                retryable,
            })
        };
        match &self.body {
            Body::Find {
                filter,
                projection,
                sort,
                limit,
                skip,
                hint,
            } => {
                let mut d = doc! { "find": collection, "filter": filter.render(values) };
                if let Some(t) = projection {
                    d.insert("projection", t.render(values));
                }
                if let Some(t) = sort {
                    d.insert("sort", t.render(values));
                }
                if let Some(n) = limit {
                    d.insert("limit", shell_int(*n));
                }
                if let Some(n) = skip {
                    d.insert("skip", shell_int(*n));
                }
                if let Some(t) = hint {
                    d.insert("hint", t.render(values));
                }
                shape(d, true, false)
            }
            Body::Update {
                filter,
                update,
                multi,
                upsert,
            } => {
                let statement = doc! {
                    "q": filter.render_doc(values),
                    "u": update.render(values),
                    "multi": *multi,
                    "upsert": *upsert,
                };
                let d = doc! { "update": collection, "updates": [statement], "ordered": true };
                shape(d, false, !multi)
            }
            Body::Delete { filter, multi } => {
                let statement = doc! {
                    "q": filter.render_doc(values),
                    "limit": if *multi { 0i32 } else { 1i32 },
                };
                let d = doc! { "delete": collection, "deletes": [statement], "ordered": true };
                shape(d, false, !multi)
            }
            Body::Aggregate { pipeline } => {
                let d = doc! {
                    "aggregate": collection,
                    "pipeline": pipeline.render(values),
                    "cursor": {},
                };
                shape(d, true, false)
            }
            Body::FindAndModify {
                query,
                update,
                new,
                upsert,
                sort,
                fields,
            } => {
                let mut d = doc! { "findAndModify": collection, "query": query.render(values) };
                match update {
                    Some(t) => {
                        d.insert("update", t.render(values));
                        d.insert("new", *new);
                        d.insert("upsert", *upsert);
                    }
                    None => {
                        d.insert("remove", true);
                    }
                }
                if let Some(t) = sort {
                    d.insert("sort", t.render(values));
                }
                if let Some(t) = fields {
                    d.insert("fields", t.render(values));
                }
                shape(d, false, false)
            }
            Body::Insert { .. } | Body::Transaction { .. } => None,
        }
    }

    /// An upper bound of the command's BSON size besides the collection name; an insert's
    /// commands are split to fit and a transaction's parts are bounded on their own (0).
    pub(super) fn max_bytes(&self, slot_sizes: &[u64]) -> u64 {
        let size = |t: &Tpl| t.max_size(slot_sizes);
        let opt = |t: &Option<Tpl>| t.as_ref().map_or(0, size);
        // Command names, flags, limits and the document framing.
        let framing = 256;
        let templates = match &self.body {
            Body::Find {
                filter,
                projection,
                sort,
                hint,
                ..
            } => size(filter)
                .saturating_add(opt(projection))
                .saturating_add(opt(sort))
                .saturating_add(opt(hint)),
            Body::Update { filter, update, .. } => size(filter).saturating_add(size(update)),
            Body::Delete { filter, .. } => size(filter),
            Body::Aggregate { pipeline } => size(pipeline),
            Body::FindAndModify {
                query,
                update,
                sort,
                fields,
                ..
            } => size(query)
                .saturating_add(opt(update))
                .saturating_add(opt(sort))
                .saturating_add(opt(fields)),
            Body::Insert { .. } | Body::Transaction { .. } => return 0,
        };
        templates.saturating_add(framing)
    }

    /// Adds the collections this operation may write to `out`.
    pub(super) fn written(&self, ops: &[Op], out: &mut Vec<usize>) {
        match &self.body {
            Body::Find { .. } | Body::Aggregate { .. } => {}
            Body::Insert { .. }
            | Body::Update { .. }
            | Body::Delete { .. }
            | Body::FindAndModify { .. } => out.push(self.collection),
            Body::Transaction { parts } => {
                for part in parts {
                    if let Some(op) = ops.get(part.op) {
                        op.written(ops, out);
                    }
                }
            }
        }
    }
}
