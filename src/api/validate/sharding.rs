//! The cross-field rules of sharded targets and `spec.workload.sharding`: the CEL rules
//! restated with paths, plus what CEL cannot see (the fields and collections the workload
//! generates, the order and type of split points).

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::violation::Violation;
use crate::api::sharding::{
    FLIGHTS_FIELDS, FLIGHTS_UPDATED_FIELDS, FieldKind, MongosPool, ShardKeyType, ShardedCollection,
};
use crate::api::spec::MongoBenchmarkSpec;
use crate::api::targets::Target;
use crate::api::workload::{Workload, WorkloadType};

pub(super) fn check_sharding(spec: &MongoBenchmarkSpec, out: &mut Vec<Violation>) {
    for (i, target) in spec.targets.iter().enumerate() {
        check_target_shape(spec, i, target, out);
    }
    let first_sharded = spec.targets.iter().position(|t| t.is_sharded());
    check_workload_sharding(spec, first_sharded, out);
}

/// A target's cluster shape (shards, configServers, mongos): only on a provisioned sharded
/// target, with member counts a replica set can have.
fn check_target_shape(
    spec: &MongoBenchmarkSpec,
    i: usize,
    target: &Target,
    out: &mut Vec<Violation>,
) {
    let path = format!("spec.targets[{i}]");
    // The first of them given: where a reader looks.
    let shaped = [
        ("shards", target.shards.is_some()),
        ("configServers", target.config_servers.is_some()),
        ("mongos", target.mongos.is_some()),
    ]
    .into_iter()
    .find_map(|(field, given)| given.then(|| format!("{path}.{field}")));
    if let Some(field) = &shaped
        && !target.is_sharded()
    {
        out.push(Violation::new(
            field,
            "shards, configServers and mongos apply only to topology sharded",
        ));
    }
    if let (Some(field), Some(_)) = (&shaped, &target.external) {
        out.push(Violation::new(
            field,
            "shards, configServers and mongos shape a cluster the operator provisions; an \
             external sharded target is reached through its mongos URI",
        ));
    }
    let members = [
        ("shards", target.shards.as_ref().and_then(|s| s.members)),
        (
            "configServers",
            target.config_servers.as_ref().and_then(|c| c.members),
        ),
    ];
    for (field, members) in members {
        if let Some(members) = members
            && ![1, 3, 5, 7].contains(&members)
        {
            out.push(Violation::new(
                &format!("{path}.{field}.members"),
                format!("must be 1, 3, 5 or 7, got {members}"),
            ));
        }
    }
    let client = spec.client.clone().unwrap_or_default();
    if target
        .mongos
        .as_ref()
        .is_some_and(|m| m.pool() == MongosPool::Client)
        && client.platform.is_none()
        && client.node_selector.is_empty()
    {
        out.push(Violation::new(
            &format!("{path}.mongos.pool"),
            "client puts the routers on the client's pool, but spec.client names none (set \
             spec.client.platform or spec.client.nodeSelector)",
        ));
    }
}

/// `spec.workload.sharding`: present exactly when a target is sharded (optional for a custom
/// workload, whose document names its shard keys), each collection once.
fn check_workload_sharding(
    spec: &MongoBenchmarkSpec,
    first_sharded: Option<usize>,
    out: &mut Vec<Violation>,
) {
    let custom = spec.workload.kind == WorkloadType::Custom;
    if custom
        && let Some(sharding) = &spec.workload.sharding
        && !sharding.collections.is_empty()
    {
        out.push(Violation::new(
            "spec.workload.sharding.collections",
            "a custom workload names each collection's shard key in its document \
             (collections[].shardKey, docs/specs/custom.md); leave this list empty",
        ));
        return;
    }
    match (&spec.workload.sharding, first_sharded) {
        // A custom workload's shard keys are in its document; the block is optional.
        (None, Some(_)) if custom => {}
        (None, Some(i)) => out.push(Violation::new(
            "spec.workload",
            format!(
                "sharding is required: spec.targets[{i}] ({}) is sharded; name each \
                 collection's shard key, e.g. sharding: {{collections: [{{collection: {}, shardKey: {{field: _id, type: \
                 hashed}}}}]}}",
                spec.targets[i].name,
                collections(&spec.workload)[0]
            ),
        )),
        (Some(_), None) => out.push(Violation::new(
            "spec.workload.sharding",
            "applies only to targets with topology sharded, and no target is",
        )),
        _ => {}
    }
    if let Some(sharding) = &spec.workload.sharding {
        for (i, collection) in sharding.collections.iter().enumerate() {
            let path = format!("spec.workload.sharding.collections[{i}]");
            if let Some(j) = sharding.collections[..i]
                .iter()
                .position(|c| c.collection == collection.collection)
            {
                out.push(Violation::new(
                    &format!("{path}.collection"),
                    format!(
                        "{:?} is already sharded by collections[{j}]",
                        collection.collection
                    ),
                ));
            }
            check_collection(&spec.workload, collection, &path, out);
        }
    }
}

/// The collections the workload writes.
fn collections(workload: &Workload) -> Vec<String> {
    match workload.kind {
        WorkloadType::Flights => vec!["flights".to_owned()],
        WorkloadType::Ycsb => vec![
            workload
                .ycsb
                .as_ref()
                .and_then(|y| y.table.clone())
                .unwrap_or_else(|| "usertable".to_owned()),
        ], // Named in its document, which the rules here do not read.
        WorkloadType::Custom => Vec::new(),
    }
}

/// The scalar fields of the workload's documents and their kinds.
fn generated_fields(workload: &Workload) -> Vec<(String, FieldKind)> {
    match workload.kind {
        WorkloadType::Flights => FLIGHTS_FIELDS
            .iter()
            .map(|(f, k)| ((*f).to_owned(), *k))
            .collect(),
        WorkloadType::Ycsb => {
            let ycsb = workload.ycsb.as_ref();
            let prefix = ycsb
                .and_then(|y| y.field_name_prefix.as_deref())
                .unwrap_or("field");
            let count = ycsb.and_then(|y| y.field_count).unwrap_or(10);
            std::iter::once(("_id".to_owned(), FieldKind::String))
                .chain((0..count).map(|n| (format!("{prefix}{n}"), FieldKind::String)))
                .collect()
        }
        WorkloadType::Custom => Vec::new(),
    }
}

fn check_collection(
    workload: &Workload,
    collection: &ShardedCollection,
    path: &str,
    out: &mut Vec<Violation>,
) {
    let known = collections(workload);
    if !known.contains(&collection.collection) {
        out.push(Violation::new(
            &format!("{path}.collection"),
            format!(
                "{:?} is not a collection this {} workload writes; expected {}",
                collection.collection,
                workload.kind.as_str(),
                known.join(" or ")
            ),
        ));
        return;
    }
    let key = &collection.shard_key;
    let fields = generated_fields(workload);
    let Some(kind) = fields
        .iter()
        .find(|(f, _)| *f == key.field)
        .map(|(_, k)| *k)
    else {
        let names: Vec<&str> = fields.iter().map(|(f, _)| f.as_str()).collect();
        out.push(Violation::new(
            &format!("{path}.shardKey.field"),
            format!(
                "{:?} is not a field the {} workload generates; expected one of: {}",
                key.field,
                workload.kind.as_str(),
                names.join(", ")
            ),
        ));
        return;
    };
    if workload.kind == WorkloadType::Flights
        && FLIGHTS_UPDATED_FIELDS.contains(&key.field.as_str())
    {
        out.push(Violation::new(
            &format!("{path}.shardKey.field"),
            format!(
                "{:?} is changed by the flights updates; a shard key there would move documents \
                 between shards on every update: pick a field the workload never changes, e.g. \
                 flight_id",
                key.field
            ),
        ));
    }
    let Some(split) = &collection.pre_split else {
        return;
    };
    if split.chunks_per_shard.is_some() && !split.points.is_empty() {
        out.push(Violation::new(
            &format!("{path}.preSplit"),
            "set chunksPerShard or points, not both",
        ));
    }
    let key = KeyOf {
        workload: workload.kind,
        field: &key.field,
        kind,
        key_type: key.kind,
    };
    if split.points.is_empty() {
        check_sampled_chunks(&key, path, out);
    } else {
        check_points(&key, &split.points, &format!("{path}.preSplit.points"), out);
    }
}

/// A shard key as the pre-split rules see it.
struct KeyOf<'a> {
    workload: WorkloadType,
    field: &'a str,
    /// The kind of the values the workload generates in the field.
    kind: FieldKind,
    key_type: ShardKeyType,
}

/// chunksPerShard on a range key cuts at quantiles of the seeded keys, which the runner samples
/// from the generator for integer and string fields it can regenerate.
fn check_sampled_chunks(key: &KeyOf, path: &str, out: &mut Vec<Violation>) {
    let sampled = match key.workload {
        WorkloadType::Flights => matches!(key.kind, FieldKind::Int | FieldKind::String),
        WorkloadType::Ycsb => key.field == "_id",
        WorkloadType::Custom => false,
    };
    if key.key_type == ShardKeyType::Range && !sampled {
        out.push(Violation::new(
            &format!("{path}.preSplit.chunksPerShard"),
            format!(
                "a range key is cut at quantiles of the keys the generator seeds, and {} \
                 ({}) has none to sample; split it at points, or use a hashed key",
                key.field,
                match key.workload {
                    WorkloadType::Ycsb => "a random YCSB value",
                    WorkloadType::Flights | WorkloadType::Custom => key.kind.as_str(),
                }
            ),
        ));
    }
}

/// Split points: only on a range key, of the field's type, strictly ascending.
fn check_points(key: &KeyOf, points: &[IntOrString], points_path: &str, out: &mut Vec<Violation>) {
    if key.key_type == ShardKeyType::Hashed {
        out.push(Violation::new(
            points_path,
            "applies only to a range shard key: a hashed key's chunks are slices of the hash \
             space; use chunksPerShard",
        ));
        return;
    }
    for (n, point) in points.iter().enumerate() {
        let fits = matches!(
            (key.kind, point),
            (FieldKind::Int, IntOrString::Int(_)) | (FieldKind::String, IntOrString::String(_))
        );
        if !fits {
            out.push(Violation::new(
                &format!("{points_path}[{n}]"),
                format!(
                    "{} is not {}, the type of {}",
                    shown(point),
                    key.kind.as_str(),
                    key.field
                ),
            ));
            return;
        }
    }
    for n in 1..points.len() {
        let ascending = match (&points[n - 1], &points[n]) {
            (IntOrString::Int(a), IntOrString::Int(b)) => a < b,
            (IntOrString::String(a), IntOrString::String(b)) => a < b,
            _ => true,
        };
        if !ascending {
            out.push(Violation::new(
                &format!("{points_path}[{n}]"),
                format!(
                    "{} does not follow {}: split points must be strictly ascending",
                    shown(&points[n]),
                    shown(&points[n - 1])
                ),
            ));
        }
    }
}

fn shown(point: &IntOrString) -> String {
    match point {
        IntOrString::Int(i) => i.to_string(),
        IntOrString::String(s) => format!("{s:?}"),
    }
}
