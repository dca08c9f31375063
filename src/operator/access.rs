//! What a benchmark may have its pods read and run, checked on every pass before anything is
//! created or changed. A runner pod holds in its environment and volumes every Secret its
//! benchmark names, and runs the image the benchmark names: whoever may create a
//! MongoBenchmark would otherwise read any Secret of the namespace through an image of their
//! own. So:
//!
//! - every Secret a benchmark names (`external.uriSecretRef`, `external.tlsSecretRef`) must be
//!   listed in its namespace's annotation [`READABLE_SECRETS`] (names separated by commas, or
//!   `*` for all): the opt-in of whoever may annotate the namespace, which a MongoBenchmark's
//!   author normally may not;
//! - `spec.client.image` must be the operator's own runner image or one its
//!   `--allowed-runner-image` allows (an exact reference, or a prefix ending in `*`); that image
//!   also runs the noise canary beside every provisioned member.
//!
//! A refusal names the field and the rule; the benchmark waits, `Pending` and `Stalled`, until
//! the spec, the annotation or the operator's flags change.

use k8s_openapi::api::core::v1::Namespace;
use kube::api::Api;
use kube::{Client, ResourceExt};

use super::custom_workload::Unavailable;
use super::error::Error;
use crate::api::{MongoBenchmark, MongoBenchmarkSpec};

/// The namespace annotation listing the Secrets benchmarks there may read.
pub const READABLE_SECRETS: &str = "mongobench.io/readable-secrets";
/// Condition reason of a Secret the namespace does not let benchmarks read.
pub const SECRET_NOT_READABLE: &str = "SecretNotReadable";
/// Condition reason of a runner image the operator does not allow.
pub const IMAGE_NOT_ALLOWED: &str = "RunnerImageNotAllowed";

/// What the benchmark's namespace says about the Secrets benchmarks may read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Readable {
    /// The annotation's value.
    Listed(String),
    /// The namespace has no such annotation: no Secret may be read.
    Unset,
    /// The namespace could not be read (why): no Secret may be read.
    Unknown(String),
}

/// The runner images an operator allows: its own, and the patterns of
/// `--allowed-runner-image`.
#[derive(Debug, Clone, Copy)]
pub struct RunnerImages<'a> {
    pub own: &'a str,
    pub allowed: &'a [String],
}

impl RunnerImages<'_> {
    /// True when `image` is the operator's own or matches an allowed pattern.
    pub fn allows(&self, image: &str) -> bool {
        image == self.own
            || self.allowed.iter().any(|p| match p.strip_suffix('*') {
                Some(prefix) => image.starts_with(prefix),
                None => image == p,
            })
    }
}

/// The Secrets a benchmark of `spec` has its runner pods read: (field, Secret name), in spec
/// order.
pub fn secrets_read(spec: &MongoBenchmarkSpec) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for t in &spec.targets {
        let Some(external) = &t.external else {
            continue;
        };
        let field = format!("spec.targets[{}].external", t.name);
        out.push((
            format!("{field}.uriSecretRef.name"),
            external.uri_secret_ref.name.clone(),
        ));
        if let Some(tls) = &external.tls_secret_ref {
            out.push((format!("{field}.tlsSecretRef.name"), tls.name.clone()));
        }
    }
    out
}

fn lists(annotation: &str, name: &str) -> bool {
    annotation
        .split(',')
        .map(str::trim)
        .any(|listed| listed == "*" || listed == name)
}

/// Why `bench` may not run as it is (pure): a Secret its namespace does not list, a runner
/// image the operator does not allow; `None` when it may.
pub fn refusal(
    bench: &MongoBenchmark,
    readable: &Readable,
    images: RunnerImages<'_>,
) -> Option<Unavailable> {
    let ns = bench.namespace().unwrap_or_default();
    let mut reasons: Vec<(&'static str, String)> = Vec::new();
    for (field, secret) in secrets_read(&bench.spec) {
        let why = match readable {
            Readable::Listed(value) if lists(value, &secret) => continue,
            Readable::Listed(value) => format!(
                "it is not in the annotation {READABLE_SECRETS} of namespace {ns} ({value:?}), \
                 which lists the Secrets benchmarks there may read"
            ),
            Readable::Unset => format!(
                "namespace {ns} has no annotation {READABLE_SECRETS}; whoever administers the \
                 namespace lets benchmarks read a Secret by listing it there (names separated \
                 by commas, or *)"
            ),
            Readable::Unknown(e) => format!(
                "the operator cannot read namespace {ns} to check its annotation \
                 {READABLE_SECRETS}: {e}"
            ),
        };
        reasons.push((
            SECRET_NOT_READABLE,
            format!("{field}: Secret {secret:?} may not be read by benchmarks: {why}"),
        ));
    }
    let image = bench.spec.client.as_ref().and_then(|c| c.image.as_deref());
    if let Some(image) = image.filter(|i| !images.allows(i)) {
        let allowed = if images.allowed.is_empty() {
            "none".to_owned()
        } else {
            images.allowed.join(", ")
        };
        reasons.push((
            IMAGE_NOT_ALLOWED,
            format!(
                "spec.client.image: {image:?} is not a runner image this operator allows: its \
                 own ({}) and what its --allowed-runner-image allows ({allowed}); the runner \
                 image holds the benchmark's credentials and runs beside every provisioned \
                 member",
                images.own
            ),
        ));
    }
    let reason = reasons.first()?.0;
    let messages: Vec<String> = reasons.into_iter().map(|(_, m)| m).collect();
    Some(Unavailable {
        reason,
        message: messages.join("; "),
    })
}

/// What `mongobench validate` can tell of these rules without a cluster, as (field, note): each
/// Secret the benchmark's namespace must list, and a `spec.client.image` an operator with its
/// default flags (its own image, `default_image`, and no other) refuses.
pub fn offline_notes(spec: &MongoBenchmarkSpec, default_image: &str) -> Vec<(String, String)> {
    let mut notes: Vec<(String, String)> = secrets_read(spec)
        .into_iter()
        .map(|(field, secret)| {
            let note = format!(
                "the benchmark's namespace must list Secret {secret:?} in its annotation \
                 {READABLE_SECRETS}, or the operator refuses to run it"
            );
            (field, note)
        })
        .collect();
    let image = spec.client.as_ref().and_then(|c| c.image.as_deref());
    if let Some(image) = image.filter(|i| *i != default_image) {
        notes.push((
            "spec.client.image".to_owned(),
            format!(
                "{image:?} runs only where the operator allows it with --allowed-runner-image; \
                 with its default flags it runs its own image ({default_image}) and refuses \
                 any other"
            ),
        ));
    }
    notes
}

/// What the namespace of `bench` says about readable Secrets; not asked when the benchmark
/// names none.
///
/// # Errors
/// [`Error::Kube`] when the API fails other than by refusing or not finding the namespace.
pub async fn readable(client: &Client, bench: &MongoBenchmark) -> Result<Readable, Error> {
    if secrets_read(&bench.spec).is_empty() {
        return Ok(Readable::Unset);
    }
    let ns = bench.namespace().unwrap_or_default();
    let namespaces: Api<Namespace> = Api::all(client.clone());
    match namespaces.get_opt(&ns).await {
        Ok(Some(n)) => Ok(n
            .annotations()
            .get(READABLE_SECRETS)
            .map_or(Readable::Unset, |v| Readable::Listed(v.clone()))),
        Ok(None) => Ok(Readable::Unknown("it was not found".to_owned())),
        Err(kube::Error::Api(s)) if matches!(s.code, 401 | 403) => {
            Ok(Readable::Unknown(format!("{} (get namespaces)", s.message)))
        }
        Err(e) => Err(Error::kube(format!("reading namespace {ns}"), e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn bench(client_image: Option<&str>) -> MongoBenchmark {
        let mut spec = json!({
            "targets": [
                {"name": "a", "external": {"uriSecretRef": {"name": "db-a"}}},
                {"name": "b", "external": {"uriSecretRef": {"name": "db-b", "key": "u"},
                                           "tlsSecretRef": {"name": "ca"}}},
                {"name": "c", "image": "mongo:8.0.26", "distribution": "community"}
            ],
            "platforms": [{"name": "p"}],
            "dataset": {"sizes": ["1k"]},
            "workload": {"type": "flights"}
        });
        if let Some(image) = client_image {
            spec["client"] = json!({"image": image});
        }
        let mut b = MongoBenchmark::new("x", serde_json::from_value(spec).unwrap());
        b.metadata.namespace = Some("perf".into());
        b
    }

    const OWN: &str = "ghcr.io/mongobench/mongobench:0.1.0";

    fn images(allowed: &[String]) -> RunnerImages<'_> {
        RunnerImages { own: OWN, allowed }
    }

    #[test]
    fn every_secret_a_benchmark_reads_is_named_with_its_field() {
        assert_eq!(
            secrets_read(&bench(None).spec),
            [
                (
                    "spec.targets[a].external.uriSecretRef.name".to_owned(),
                    "db-a".to_owned()
                ),
                (
                    "spec.targets[b].external.uriSecretRef.name".to_owned(),
                    "db-b".to_owned()
                ),
                (
                    "spec.targets[b].external.tlsSecretRef.name".to_owned(),
                    "ca".to_owned()
                ),
            ]
        );
    }

    #[test]
    fn validate_notes_what_a_cluster_will_ask() {
        let notes = offline_notes(&bench(Some("evil/x:1")).spec, OWN);
        assert_eq!(notes.len(), 4);
        assert_eq!(
            notes[2],
            (
                "spec.targets[b].external.tlsSecretRef.name".to_owned(),
                "the benchmark's namespace must list Secret \"ca\" in its annotation \
                 mongobench.io/readable-secrets, or the operator refuses to run it"
                    .to_owned()
            )
        );
        assert_eq!(
            notes[3].1,
            "\"evil/x:1\" runs only where the operator allows it with --allowed-runner-image; \
             with its default flags it runs its own image \
             (ghcr.io/mongobench/mongobench:0.1.0) and refuses any other"
        );
        assert_eq!(offline_notes(&bench(Some(OWN)).spec, OWN).len(), 3);
    }

    #[test]
    fn secrets_are_read_only_when_the_namespace_lists_them() {
        let b = bench(None);
        let listed = |v: &str| refusal(&b, &Readable::Listed(v.into()), images(&[]));
        assert_eq!(listed("db-a, db-b,ca"), None);
        assert_eq!(listed("*"), None);
        let partly = listed("db-a,db-b").unwrap();
        assert_eq!(partly.reason, SECRET_NOT_READABLE);
        assert_eq!(
            partly.message,
            "spec.targets[b].external.tlsSecretRef.name: Secret \"ca\" may not be read by \
             benchmarks: it is not in the annotation mongobench.io/readable-secrets of \
             namespace perf (\"db-a,db-b\"), which lists the Secrets benchmarks there may read"
        );
        let unset = refusal(&b, &Readable::Unset, images(&[])).unwrap();
        assert_eq!(unset.message.matches("has no annotation").count(), 3);
        assert!(unset.message.starts_with(
            "spec.targets[a].external.uriSecretRef.name: Secret \"db-a\" may not be read by \
             benchmarks: namespace perf has no annotation mongobench.io/readable-secrets;"
        ));
        let unknown = refusal(&b, &Readable::Unknown("forbidden".into()), images(&[])).unwrap();
        assert!(unknown.message.contains(
            "the operator cannot read namespace perf to check its annotation \
             mongobench.io/readable-secrets: forbidden"
        ));
    }

    #[test]
    fn only_the_operators_own_and_allowed_runner_images_run() {
        let allowed = ["reg.example/mb:*".to_owned(), "other/mb:2".to_owned()];
        let all = Readable::Listed("*".into());
        let run = |image: Option<&str>| refusal(&bench(image), &all, images(&allowed));
        assert_eq!(run(None), None);
        assert_eq!(run(Some(OWN)), None);
        assert_eq!(run(Some("reg.example/mb:7")), None);
        assert_eq!(run(Some("other/mb:2")), None);
        let refused = run(Some("other/mb:3")).unwrap();
        assert_eq!(refused.reason, IMAGE_NOT_ALLOWED);
        assert_eq!(
            refused.message,
            "spec.client.image: \"other/mb:3\" is not a runner image this operator allows: its \
             own (ghcr.io/mongobench/mongobench:0.1.0) and what its --allowed-runner-image \
             allows (reg.example/mb:*, other/mb:2); the runner image holds the benchmark's \
             credentials and runs beside every provisioned member"
        );
        // Both at once: the Secret's reason first, both messages.
        let both = refusal(&bench(Some("evil/x:1")), &Readable::Unset, images(&[])).unwrap();
        assert_eq!(both.reason, SECRET_NOT_READABLE);
        assert!(
            both.message
                .ends_with("what its --allowed-runner-image allows (none); the runner image holds the benchmark's credentials and runs beside every provisioned member"),
            "{}",
            both.message
        );
    }
}
