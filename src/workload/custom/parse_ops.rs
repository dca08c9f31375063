//! Operations (§5): their faces and their templates, placeholders resolved to slots.

use mongodb::bson::{Bson, Document};
use serde_yaml::Value;

use super::model::{Collection, Gen, OperationSpec};
use super::read::{
    Map, Result, at_index, boolean, describe, err, list, name, string, to_bson, uint_in, weight,
};
use super::template::{Body, Op, Part, Tpl};
use crate::workload::MAX_COMMAND_BYTES;
use crate::workload::intern;

const KINDS: &[&str] = &[
    "find",
    "insert",
    "update",
    "delete",
    "aggregate",
    "findAndModify",
    "transaction",
];
const MAX_OPERATIONS: usize = 64;
const MAX_PARTS: usize = 16;
const MAX_INSERT_DOCUMENTS: u64 = 1000;

/// Placeholders of one operation: each generator named gets one slot, in order of first
/// appearance.
struct Slots<'a> {
    generators: &'a [(String, Gen)],
    slots: Vec<usize>,
}

impl Slots<'_> {
    fn slot(&mut self, name: &str, path: &str) -> Result<usize> {
        let Some(g) = self.generators.iter().position(|(n, _)| n == name) else {
            let mut known: Vec<&str> = self.generators.iter().map(|(n, _)| n.as_str()).collect();
            known.sort_unstable();
            let expected = if known.is_empty() {
                "the document defines no generators".to_owned()
            } else {
                format!("expected one of: {}", known.join(", "))
            };
            return Err(err(path, format!("unknown generator {name:?}; {expected}")));
        };
        Ok(match self.slots.iter().position(|&s| s == g) {
            Some(k) => k,
            None => {
                self.slots.push(g);
                self.slots.len() - 1
            }
        })
    }

    /// Any template value; in a pipeline, `$out` and `$merge` are refused at any depth.
    fn tpl(&mut self, v: &Value, path: &str, pipeline: bool) -> Result<Tpl> {
        match v {
            Value::Mapping(_) => {
                let map = Map::open(v, path)?;
                let mut fields = Vec::with_capacity(map.entries.len());
                for (k, item) in &map.entries {
                    let p = map.at(k);
                    if pipeline && (*k == "$out" || *k == "$merge") {
                        return Err(err(
                            &p,
                            format!(
                                "{k} is not allowed in a pipeline: a workload writes only its \
                                 own collections, which the restore reseeds"
                            ),
                        ));
                    }
                    fields.push(((*k).to_owned(), self.tpl(item, &p, pipeline)?));
                }
                Ok(Tpl::doc(fields))
            }
            Value::Sequence(items) => {
                let items = items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| self.tpl(item, &at_index(path, i), pipeline))
                    .collect::<Result<Vec<_>>>()?;
                Ok(Tpl::array(items))
            }
            Value::String(s) if s.contains("{{") => match placeholder(s) {
                Some(name) => Ok(Tpl::Slot(self.slot(name, path)?)),
                None => Err(err(
                    path,
                    format!(
                        "\"{{{{\" is allowed only in a whole-string placeholder such as \
                         \"{{{{name}}}}\", got {s:?}"
                    ),
                )),
            },
            _ => Ok(Tpl::constant(to_bson(v, path, &mut |_, _| Ok(()))?)),
        }
    }

    fn map_tpl(&mut self, v: &Value, path: &str) -> Result<Tpl> {
        if !v.is_mapping() {
            return Err(err(path, format!("expected a map, got {}", describe(v))));
        }
        self.tpl(v, path, false)
    }

    /// A list of stages, each a map with one `$` key.
    fn pipeline(&mut self, v: &Value, path: &str) -> Result<Tpl> {
        let stages = list(v, path, 0, 1000, "stages")?;
        for (i, stage) in stages.iter().enumerate() {
            let one_operator = match stage {
                Value::Mapping(m) => {
                    m.len() == 1
                        && m.keys()
                            .all(|k| k.as_str().is_some_and(|k| k.starts_with('$')))
                }
                _ => false,
            };
            if !one_operator {
                return Err(err(
                    &at_index(path, i),
                    format!(
                        "expected a stage: a map with one key such as $match, got {}",
                        describe(stage)
                    ),
                ));
            }
        }
        self.tpl(v, path, true)
    }

    /// An update: operators (`$set`…), a replacement document or a pipeline. Returns the
    /// template and whether it is a replacement.
    fn update(&mut self, v: &Value, path: &str) -> Result<(Tpl, bool)> {
        if v.is_sequence() {
            return Ok((self.pipeline(v, path)?, false));
        }
        if !v.is_mapping() {
            return Err(err(
                path,
                format!("expected a map or a pipeline, got {}", describe(v)),
            ));
        }
        let map = Map::open(v, path)?;
        let operators = map
            .entries
            .iter()
            .filter(|(k, _)| k.starts_with('$'))
            .count();
        if operators != 0 && operators != map.entries.len() {
            return Err(err(
                path,
                "an update holds either only operators ($set, $inc…) or only fields (a replacement)",
            ));
        }
        for (k, value) in &map.entries {
            if operators > 0 && !value.is_mapping() {
                return Err(err(
                    &map.at(k),
                    format!("expected a map of fields, got {}", describe(value)),
                ));
            }
        }
        Ok((self.tpl(v, path, false)?, operators == 0))
    }
}

/// The generator name of a whole-string placeholder `{{name}}`.
fn placeholder(s: &str) -> Option<&str> {
    let inner = s.strip_prefix("{{")?.strip_suffix("}}")?;
    let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    let first = inner.chars().next()?;
    (first.is_ascii_alphanumeric() && inner.chars().all(ok)).then_some(inner)
}

pub(super) fn operations(
    v: &Value,
    path: &str,
    collections: &[Collection],
    generators: &[(String, Gen)],
) -> Result<(Vec<OperationSpec>, Vec<Op>)> {
    let items = list(v, path, 1, MAX_OPERATIONS, "operations")?;
    let mut allowed = vec!["name", "class", "weight"];
    allowed.extend_from_slice(KINDS);
    // First every name and kind, which a transaction may name before it is declared.
    let mut specs: Vec<OperationSpec> = Vec::with_capacity(items.len());
    for (j, item) in items.iter().enumerate() {
        let p = at_index(path, j);
        let map = Map::new(item, &p, &allowed)?;
        let op_name = name(map.req("name")?, &map.at("name"), false)?;
        if specs.iter().any(|s| s.name == op_name) {
            return Err(err(
                &map.at("name"),
                format!("duplicate operation name {op_name:?}"),
            ));
        }
        let kinds: Vec<&'static str> = KINDS
            .iter()
            .copied()
            .filter(|k| map.get(k).is_some())
            .collect();
        let [kind] = kinds[..] else {
            let got = if kinds.is_empty() {
                "none".to_owned()
            } else {
                kinds.join(" and ")
            };
            return Err(err(
                &p,
                format!("expected exactly one of: {}; got {got}", KINDS.join(", ")),
            ));
        };
        let class = match map.get("class") {
            Some(v) => intern(name(v, &map.at("class"), true)?),
            None => kind,
        };
        let weight = match map.get("weight") {
            Some(v) => weight(v, &map.at("weight"))?,
            None => 1,
        };
        specs.push(OperationSpec {
            name: op_name.to_owned(),
            class,
            kind,
            weight,
        });
    }
    let mut ops: Vec<Option<Op>> = vec![None; items.len()];
    // Then the single operations, and the transactions, which need their parts' slots.
    for transactions in [false, true] {
        for (j, item) in items.iter().enumerate() {
            let kind = specs[j].kind;
            if (kind == "transaction") != transactions {
                continue;
            }
            let map = Map::open(item, &at_index(path, j))?;
            let args = map.req(kind)?;
            let p = map.at(kind);
            ops[j] = Some(if transactions {
                transaction(args, &p, &specs, &ops)?
            } else {
                single(kind, args, &p, collections, generators)?
            });
        }
    }
    let ops = ops.into_iter().flatten().collect();
    Ok((specs, ops))
}

fn collection(a: &Map, collections: &[Collection]) -> Result<usize> {
    let p = a.at("collection");
    let target = string(a.req("collection")?, &p)?;
    collections
        .iter()
        .position(|c| c.name == target)
        .ok_or_else(|| {
            let known: Vec<&str> = collections.iter().map(|c| c.name.as_str()).collect();
            err(
                &p,
                format!(
                    "unknown collection {target:?}; expected one of: {}",
                    known.join(", ")
                ),
            )
        })
}

fn flag(a: &Map, key: &str) -> Result<bool> {
    a.get(key)
        .map(|v| boolean(v, &a.at(key)))
        .transpose()
        .map(|b| b.unwrap_or(false))
}

/// `limit` or `skip`: an integer ≥ 0.
fn count(v: &Value, path: &str) -> Result<i64> {
    Ok(uint_in(v, path, 0, i64::MAX as u64)? as i64)
}

/// One operation other than a transaction.
fn single(
    kind: &str,
    args: &Value,
    p: &str,
    collections: &[Collection],
    generators: &[(String, Gen)],
) -> Result<Op> {
    let mut cx = Slots {
        generators,
        slots: Vec::new(),
    };
    let (collection, body) = match kind {
        "find" => find(args, p, collections, &mut cx)?,
        "insert" => insert(args, p, collections)?,
        "update" => update(args, p, collections, &mut cx)?,
        "delete" => {
            let a = Map::new(args, p, &["collection", "filter", "multi"])?;
            let c = collection(&a, collections)?;
            let filter = cx.map_tpl(a.req("filter")?, &a.at("filter"))?;
            let multi = flag(&a, "multi")?;
            (c, Body::Delete { filter, multi })
        }
        "aggregate" => {
            let a = Map::new(args, p, &["collection", "pipeline"])?;
            let c = collection(&a, collections)?;
            let pipeline = cx.pipeline(a.req("pipeline")?, &a.at("pipeline"))?;
            (c, Body::Aggregate { pipeline })
        }
        _ => find_and_modify(args, p, collections, &mut cx)?,
    };
    let op = Op {
        collection,
        slots: cx.slots,
        body,
    };
    check_command_size(&op, p, collections, generators)?;
    Ok(op)
}

/// Refuses an operation whose largest command would exceed MongoDB's limit.
fn check_command_size(
    op: &Op,
    p: &str,
    collections: &[Collection],
    generators: &[(String, Gen)],
) -> Result<()> {
    let slot_sizes: Vec<u64> = op
        .slots
        .iter()
        .map(|&g| generators[g].1.max_size())
        .collect();
    let bytes = op
        .max_bytes(&slot_sizes)
        .saturating_add(collections[op.collection].name.len() as u64);
    if bytes > MAX_COMMAND_BYTES as u64 {
        return Err(err(
            p,
            format!("a command can reach {bytes} bytes, above MongoDB's limit of 16 MiB"),
        ));
    }
    Ok(())
}

fn find(
    args: &Value,
    p: &str,
    collections: &[Collection],
    cx: &mut Slots,
) -> Result<(usize, Body)> {
    let keys = [
        "collection",
        "filter",
        "projection",
        "sort",
        "limit",
        "skip",
        "hint",
    ];
    let a = Map::new(args, p, &keys)?;
    let c = collection(&a, collections)?;
    let (mut filter, mut projection, mut sort, mut limit, mut skip, mut hint) =
        (None, None, None, None, None, None);
    // In the order written: placeholders take slots in order of first appearance.
    for (k, v) in &a.entries {
        let kp = a.at(k);
        match *k {
            "filter" => filter = Some(cx.map_tpl(v, &kp)?),
            "projection" => projection = Some(cx.map_tpl(v, &kp)?),
            "sort" => sort = Some(cx.map_tpl(v, &kp)?),
            "limit" => limit = Some(count(v, &kp)?),
            "skip" => skip = Some(count(v, &kp)?),
            "hint" if v.is_string() => hint = Some(cx.tpl(v, &kp, false)?),
            "hint" => hint = Some(cx.map_tpl(v, &kp)?),
            _ => {}
        }
    }
    let filter = filter.unwrap_or_else(|| Tpl::constant(Bson::Document(Document::new())));
    let body = Body::Find {
        filter,
        projection,
        sort,
        limit,
        skip,
        hint,
    };
    Ok((c, body))
}

fn insert(args: &Value, p: &str, collections: &[Collection]) -> Result<(usize, Body)> {
    let a = Map::new(args, p, &["collection", "documents"])?;
    let c = collection(&a, collections)?;
    let documents = match a.get("documents") {
        Some(v) => uint_in(v, &a.at("documents"), 1, MAX_INSERT_DOCUMENTS)?,
        None => 1,
    };
    Ok((c, Body::Insert { documents }))
}

fn update(
    args: &Value,
    p: &str,
    collections: &[Collection],
    cx: &mut Slots,
) -> Result<(usize, Body)> {
    let keys = ["collection", "filter", "update", "multi", "upsert"];
    let a = Map::new(args, p, &keys)?;
    let c = collection(&a, collections)?;
    a.req("filter")?;
    a.req("update")?;
    let (mut filter, mut update) = (None, None);
    for (k, v) in &a.entries {
        match *k {
            "filter" => filter = Some(cx.map_tpl(v, &a.at(k))?),
            "update" => update = Some(cx.update(v, &a.at(k))?),
            _ => {}
        }
    }
    let multi = flag(&a, "multi")?;
    let (Some(filter), Some((update, replacement))) = (filter, update) else {
        return Err(err(p, "missing key \"filter\" or \"update\""));
    };
    if replacement && multi {
        return Err(err(
            &a.at("multi"),
            "a replacement document cannot update several documents",
        ));
    }
    let upsert = flag(&a, "upsert")?;
    let body = Body::Update {
        filter,
        update,
        multi,
        upsert,
    };
    Ok((c, body))
}

fn find_and_modify(
    args: &Value,
    p: &str,
    collections: &[Collection],
    cx: &mut Slots,
) -> Result<(usize, Body)> {
    let keys = [
        "collection",
        "query",
        "update",
        "remove",
        "new",
        "upsert",
        "sort",
        "fields",
    ];
    let a = Map::new(args, p, &keys)?;
    let c = collection(&a, collections)?;
    let (mut query, mut update, mut sort, mut fields) = (None, None, None, None);
    for (k, v) in &a.entries {
        let kp = a.at(k);
        match *k {
            "query" => query = Some(cx.map_tpl(v, &kp)?),
            "update" => update = Some(cx.update(v, &kp)?.0),
            "sort" => sort = Some(cx.map_tpl(v, &kp)?),
            "fields" => fields = Some(cx.map_tpl(v, &kp)?),
            _ => {}
        }
    }
    let remove = flag(&a, "remove")?;
    let (new, upsert) = (flag(&a, "new")?, flag(&a, "upsert")?);
    match (&update, remove) {
        (Some(_), true) => return Err(err(p, "give `update` or `remove: true`, not both")),
        (None, false) => return Err(err(p, "expected `update` or `remove: true`")),
        (None, true) if new || upsert => {
            return Err(err(
                p,
                "`remove: true` cannot be combined with `new` or `upsert`",
            ));
        }
        _ => {}
    }
    let query = query.unwrap_or_else(|| Tpl::constant(Bson::Document(Document::new())));
    Ok((
        c,
        Body::FindAndModify {
            query,
            update,
            new,
            upsert,
            sort,
            fields,
        },
    ))
}

fn transaction(args: &Value, p: &str, specs: &[OperationSpec], ops: &[Option<Op>]) -> Result<Op> {
    let a = Map::new(args, p, &["operations"])?;
    let lp = a.at("operations");
    let names = list(a.req("operations")?, &lp, 1, MAX_PARTS, "operations")?;
    let mut slots: Vec<usize> = Vec::new();
    let mut parts = Vec::with_capacity(names.len());
    for (k, v) in names.iter().enumerate() {
        let np = at_index(&lp, k);
        let part_name = string(v, &np)?;
        let Some(j) = specs.iter().position(|s| s.name == part_name) else {
            let known: Vec<&str> = specs
                .iter()
                .filter(|s| s.kind != "transaction")
                .map(|s| s.name.as_str())
                .collect();
            return Err(err(
                &np,
                format!(
                    "unknown operation {part_name:?}; expected one of: {}",
                    known.join(", ")
                ),
            ));
        };
        let Some(Some(op)) = ops.get(j).filter(|_| specs[j].kind != "transaction") else {
            return Err(err(
                &np,
                format!("{part_name:?} is a transaction; transactions do not nest"),
            ));
        };
        let mapped = op
            .slots
            .iter()
            .map(|g| match slots.iter().position(|s| s == g) {
                Some(s) => s,
                None => {
                    slots.push(*g);
                    slots.len() - 1
                }
            })
            .collect();
        parts.push(Part {
            op: j,
            slots: mapped,
        });
    }
    Ok(Op {
        collection: 0,
        slots,
        body: Body::Transaction { parts },
    })
}
