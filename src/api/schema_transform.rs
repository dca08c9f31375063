//! Transforms of the schemas derived for single types, named in `#[schemars(transform = ...)]`
//! attributes of the spec and status types.

/// Removes an enum type's own description from its schema, so that the description of the
/// field that uses it stays in the CRD (kube would otherwise let the type's doc replace the
/// field's doc on `Option<Enum>` fields).
pub(crate) fn drop_description(schema: &mut schemars::Schema) {
    if let Some(object) = schema.as_object_mut() {
        object.remove("description");
    }
}
