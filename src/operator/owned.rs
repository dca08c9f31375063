//! Writes that never touch what the benchmark does not own. Names are derived from the
//! benchmark's, so anyone who may create objects in its namespace can create one of those names
//! first; the operator neither takes such an object over (server-side apply with `force` would)
//! nor deletes it, nor uses a keyfile or password it did not generate:
//!
//! - [`apply`]: an object that does not exist is created (a create never takes anything
//!   over: one made meanwhile answers 409); one that exists is changed only when its
//!   controlling owner is this benchmark (by uid), by a server-side apply that carries the
//!   `resourceVersion` read, so it is the object checked;
//! - [`delete`]: only an object this benchmark controls, with its uid as precondition;
//! - [`create_secrets`]: the generated Secrets are created, never read (the operator may
//!   not); one that already exists is this benchmark's only when its status records having
//!   created it, and is refused otherwise.
//!
//! A refusal is [`Error::Refused`], which holds the benchmark `Stalled` naming the object.

use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, Preconditions};
use kube::{Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;

use super::context::Context;
use super::error::Error;
use super::render::meta::controlled_by;
use super::render::secrets;
use crate::api::MongoBenchmark;

/// Field manager of every server-side apply the operator makes.
pub const FIELD_MANAGER: &str = "mongobench";

/// Condition reason of an object of the benchmark's names that it does not own.
pub const NAME_TAKEN: &str = "NameTaken";
/// Condition reason of a generated Secret's name taken by a Secret the benchmark did not
/// create.
pub const SECRET_NOT_OWNED: &str = "SecretNotOwned";

fn uid_of(bench: &MongoBenchmark) -> Result<String, Error> {
    bench
        .metadata
        .uid
        .clone()
        .ok_or_else(|| Error::Incomplete(bench.name_any()))
}

/// Creates `obj` in `ns`, or changes it by server-side apply when `bench` controls the one
/// that exists; refuses one it does not control.
///
/// # Errors
/// [`Error::Refused`] for an object of that name `bench` does not control; [`Error::Kube`]
/// when a call fails (a 409 of a create or apply raced by another writer included: the next
/// pass looks again).
pub async fn apply<K>(ctx: &Context, bench: &MongoBenchmark, ns: &str, obj: &K) -> Result<(), Error>
where
    K: Resource<Scope = NamespaceResourceScope, DynamicType = ()>
        + Clone
        + DeserializeOwned
        + Serialize
        + std::fmt::Debug,
{
    uid_of(bench)?;
    let (name, kind) = (obj.name_any(), K::kind(&()));
    let api: Api<K> = Api::namespaced(ctx.client.clone(), ns);
    let existing = api
        .get_opt(&name)
        .await
        .map_err(|e| Error::kube(format!("reading {kind} {ns}/{name}"), e))?;
    if let Some(found) = &existing
        && !controlled_by(found.meta(), bench)
    {
        return Err(name_taken(&kind, ns, &name, bench));
    }
    ctx.metrics.wrote(&kind);
    let written = match existing {
        None => {
            let params = PostParams {
                field_manager: Some(FIELD_MANAGER.to_owned()),
                ..PostParams::default()
            };
            api.create(&params, obj).await.map(drop)
        }
        Some(found) => {
            let mut obj = obj.clone();
            obj.meta_mut().resource_version = found.meta().resource_version.clone();
            let params = PatchParams::apply(FIELD_MANAGER).force();
            api.patch(&name, &params, &Patch::Apply(&obj))
                .await
                .map(drop)
        }
    };
    written.map_err(|e| Error::kube(format!("applying {kind} {ns}/{name}"), e))
}

fn name_taken(kind: &str, ns: &str, name: &str, bench: &MongoBenchmark) -> Error {
    Error::Refused {
        reason: NAME_TAKEN,
        message: format!(
            "{kind} {ns}/{name} exists and MongoBenchmark {} does not own it: the operator \
             neither takes it over nor deletes it; delete or rename it (or the benchmark)",
            bench.name_any()
        ),
    }
}

/// Deletes `name` of kind `K` in `ns` when `bench` controls it (with its uid as the
/// precondition); one that is gone is fine, one `bench` does not control is left alone.
///
/// # Errors
/// [`Error::Kube`] when a call fails.
pub async fn delete<K>(
    ctx: &Context,
    bench: &MongoBenchmark,
    ns: &str,
    name: &str,
) -> Result<(), Error>
where
    K: Resource<Scope = NamespaceResourceScope, DynamicType = ()>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug,
{
    let kind = K::kind(&());
    let api: Api<K> = Api::namespaced(ctx.client.clone(), ns);
    let Some(found) = api
        .get_opt(name)
        .await
        .map_err(|e| Error::kube(format!("reading {kind} {ns}/{name}"), e))?
    else {
        return Ok(());
    };
    if !controlled_by(found.meta(), bench) {
        tracing::warn!(benchmark = %bench.name_any(), namespace = ns, kind = %kind, name, "not deleting an object the benchmark does not own");
        return Ok(());
    }
    let params = DeleteParams {
        preconditions: Some(Preconditions {
            uid: found.meta().uid.clone(),
            resource_version: None,
        }),
        ..DeleteParams::background()
    };
    ctx.metrics.wrote(&kind);
    match api.delete(name, &params).await {
        Ok(_) => Ok(()),
        // Gone, or replaced by another object since it was read: not this benchmark's to delete.
        Err(kube::Error::Api(s)) if s.code == 404 || s.code == 409 => Ok(()),
        Err(e) => Err(Error::kube(format!("deleting {kind} {ns}/{name}"), e)),
    }
}

/// Deletes `bench` itself, with its uid as the precondition: a benchmark applied again under
/// the same name meanwhile is not deleted.
///
/// # Errors
/// [`Error::Kube`] when the call fails.
pub async fn delete_benchmark(ctx: &Context, bench: &MongoBenchmark) -> Result<(), Error> {
    let (name, ns) = (bench.name_any(), bench.namespace().unwrap_or_default());
    let api: Api<MongoBenchmark> = Api::namespaced(ctx.client.clone(), &ns);
    let params = DeleteParams {
        preconditions: Some(Preconditions {
            uid: Some(uid_of(bench)?),
            resource_version: None,
        }),
        ..DeleteParams::background()
    };
    ctx.metrics.wrote("MongoBenchmark");
    match api.delete(&name, &params).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 || s.code == 409 => Ok(()),
        Err(e) => Err(Error::kube(
            format!("deleting MongoBenchmark {ns}/{name}"),
            e,
        )),
    }
}

/// Creates the generated Secrets of `bench` that it has not created yet (its status, and
/// `generated` of this pass, list those it has); each created one is added to `generated` and
/// recorded in the status at once.
///
/// # Errors
/// [`Error::Refused`] for a Secret of such a name that this benchmark did not create;
/// [`Error::Kube`] when a call fails.
pub async fn create_secrets(
    ctx: &Context,
    bench: &MongoBenchmark,
    ns: &str,
    generated: &mut Vec<String>,
) -> Result<(), Error> {
    let recorded: Vec<String> = bench
        .status
        .as_ref()
        .map(|s| s.generated_secrets.clone())
        .unwrap_or_default();
    let api: Api<Secret> = Api::namespaced(ctx.client.clone(), ns);
    for secret in secrets::generated(bench)? {
        let name = secret.name_any();
        if recorded.contains(&name) || generated.contains(&name) {
            continue;
        }
        ctx.metrics.wrote("Secret");
        match api.create(&PostParams::default(), &secret).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 409 => {
                return Err(Error::Refused {
                    reason: SECRET_NOT_OWNED,
                    message: format!(
                        "Secret {ns}/{name} exists, and this benchmark did not create it (its \
                         status.generatedSecrets does not list it): the operator uses no \
                         keyfile or password it did not generate; delete the Secret and the \
                         operator creates it"
                    ),
                });
            }
            Err(e) => return Err(Error::kube(format!("creating Secret {ns}/{name}"), e)),
        }
        generated.push(name);
        record(ctx, bench, &recorded, generated).await?;
    }
    Ok(())
}

/// Records the generated Secrets in the status at once: a pass that fails later must not
/// leave a Secret this benchmark created unrecorded (it would be refused as another's).
async fn record(
    ctx: &Context,
    bench: &MongoBenchmark,
    recorded: &[String],
    generated: &[String],
) -> Result<(), Error> {
    let (name, ns) = (bench.name_any(), bench.namespace().unwrap_or_default());
    let all: Vec<&String> = recorded.iter().chain(generated).collect();
    let api: Api<MongoBenchmark> = Api::namespaced(ctx.client.clone(), &ns);
    let patch = json!({"status": {"generatedSecrets": all}});
    ctx.metrics.wrote("status");
    api.patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(|e| {
            Error::kube(
                format!("recording the Secrets of MongoBenchmark {ns}/{name}"),
                e,
            )
        })?;
    Ok(())
}
