//! The one error type of this crate.

use isoterra_store::StoreError;
use thiserror::Error;

/// What can go wrong in the kind layer.
///
/// A failed call changes nothing: neither the world file nor the world
/// held in memory.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum KindError {
    /// A parameter is out of range, malformed or does not apply to this
    /// world kind; the message names it.
    #[error("{0}")]
    Invalid(String),
    /// A recipe is not JSON, has another version or kind, lacks a field,
    /// has an unknown one, or holds a value out of range. `path` names the
    /// field (`params.base.octaves`); it is empty when the whole document
    /// is at fault.
    #[error("{}", recipe_message(path, reason))]
    Recipe {
        /// The field, as a path from the top of the recipe.
        path: String,
        /// What is wrong with it and what it must be.
        reason: String,
    },
    /// The tool is not one of this kind's tools.
    #[error("unknown tool `{tool}` for {kind} worlds (tools: {tools})")]
    UnknownTool {
        /// The tool asked for.
        tool: String,
        /// The world kind.
        kind: &'static str,
        /// The kind's tools, separated by commas.
        tools: String,
    },
    /// The world kind is not one this build knows.
    #[error("unknown world kind `{0}` (map, side2d, heightmap, voxel)")]
    UnknownKind(String),
    /// The world holds a kind this build does not know.
    #[error(
        "{location} holds a `{kind}` world, which this isoterra cannot open (it knows side2d, heightmap, voxel, map)"
    )]
    Unsupported {
        /// The file or store.
        location: String,
        /// The kind it records.
        kind: String,
    },
    /// No stroke of that name is open.
    #[error("no such open stroke")]
    UnknownStroke,
    /// A request is larger than this build allows; the message says what
    /// the limit is.
    #[error("{0}")]
    TooLarge(String),
    /// Reading or writing the world failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// An export could not be written.
    #[error(transparent)]
    Export(#[from] isoterra_export::ExportError),
}

fn recipe_message(path: &str, reason: &str) -> String {
    if path.is_empty() {
        format!("bad recipe: {reason}")
    } else {
        format!("bad recipe: {path}: {reason}")
    }
}

impl KindError {
    /// An [`Invalid`](KindError::Invalid) error with `message`.
    pub fn invalid(message: impl Into<String>) -> Self {
        KindError::Invalid(message.into())
    }
}

impl From<isoterra_world::WorldError> for KindError {
    /// What the world refuses (a brush out of range, a region too large, a
    /// cliff level past 15) is a bad parameter.
    fn from(e: isoterra_world::WorldError) -> Self {
        KindError::Invalid(e.to_string())
    }
}

impl From<isoterra_field::FieldError> for KindError {
    /// What a generator refuses (a parameter combination out of range) is
    /// a bad parameter.
    fn from(e: isoterra_field::FieldError) -> Self {
        KindError::Invalid(e.to_string())
    }
}
