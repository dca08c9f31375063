//! The document of a custom workload as the CLI finds it (docs/specs/custom.md §1): `inline`
//! as it is, `file` read relative to the manifest, `configMapRef` refused (only the operator
//! reads ConfigMaps). The resolved spec holds the text inline, so a run and its plan files
//! carry the workload itself.

use std::path::Path;

use super::input::{MAX_MANIFEST_BYTES, read_text};
use crate::api::{CustomSource, MongoBenchmark};
use crate::plan::custom::parse_document;

/// Reads the custom workload of `bench` (from the manifest `manifest`) into `inline` and checks
/// it. Other workloads are left alone.
///
/// # Errors
/// One line naming the manifest, the source and, for a broken document, the path inside it.
pub fn resolve(bench: &mut MongoBenchmark, manifest: &Path) -> Result<(), String> {
    let label = super::input::label(manifest);
    let Some(source) = bench.spec.workload.custom.as_mut() else {
        return Ok(());
    };
    let origin = source.origin();
    if source.config_map_ref.is_some() {
        return Err(format!(
            "{label}: {origin}: a ConfigMap is read by the operator; a local run reads the \
             document from inline or file (kubectl get configmap NAME -o \
             jsonpath='{{.data.KEY}}' > workload.yaml, then file: workload.yaml)"
        ));
    }
    if let Some(file) = &source.file {
        let path = manifest
            .parent()
            .filter(|_| manifest.as_os_str() != "-")
            .unwrap_or(Path::new("."))
            .join(file);
        let text = read_text(&path, MAX_MANIFEST_BYTES, "custom workload").map_err(|p| {
            format!(
                "{label}: {origin}: {}",
                p.render(&path.display().to_string())
            )
        })?;
        *source = CustomSource {
            inline: Some(text),
            ..CustomSource::default()
        };
    }
    let text = source.inline.as_deref().unwrap_or_default();
    parse_document(text, &origin).map_err(|e| format!("{label}: {e}"))?;
    Ok(())
}
