use isoterra_field::FieldError;
use isoterra_mesh::MeshError;
use thiserror::Error;

/// Errors returned by the world: bad parameters, bad brushes, edits that do not
/// fit the world, and errors passed up from the field and mesh crates.
///
/// Every function that returns a `WorldError` leaves the world unchanged.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum WorldError {
    /// An error from the field crate (sizes, generator parameters).
    #[error(transparent)]
    Field(#[from] FieldError),
    /// An error from the mesh crate.
    #[error(transparent)]
    Mesh(#[from] MeshError),
    /// A parameter is out of its valid range.
    #[error("invalid parameter `{name}` = {value}: {reason}")]
    InvalidParameter {
        /// Name of the parameter.
        name: &'static str,
        /// The offending value, printed.
        value: String,
        /// The valid range or what to do.
        reason: &'static str,
    },
    /// An index (a node of an edit, a chunk coordinate) lies outside the world.
    #[error("{what} {index} is outside the world (valid: 0..{len})")]
    OutOfBounds {
        /// What the index refers to, e.g. `"edit node"`.
        what: &'static str,
        /// The offending index.
        index: u64,
        /// The number of valid indices.
        len: u64,
    },
    /// Data handed to the world does not match its size or parameters.
    #[error("{what} does not match the world: expected {expected}, got {got}")]
    Mismatch {
        /// What was compared, e.g. `"field size"`.
        what: &'static str,
        /// What the world expects.
        expected: String,
        /// What was given.
        got: String,
    },
    /// An edit is internally inconsistent (lengths differ, indices not ascending,
    /// non-finite values): it was not produced by this world or was corrupted.
    #[error("malformed edit: {reason}")]
    MalformedEdit {
        /// What is wrong.
        reason: String,
    },
}

impl WorldError {
    /// Shorthand for [`WorldError::InvalidParameter`].
    pub fn param(name: &'static str, value: impl std::fmt::Display, reason: &'static str) -> Self {
        WorldError::InvalidParameter {
            name,
            value: value.to_string(),
            reason,
        }
    }

    /// Shorthand for [`WorldError::Mismatch`].
    pub(crate) fn mismatch(
        what: &'static str,
        expected: impl std::fmt::Display,
        got: impl std::fmt::Display,
    ) -> Self {
        WorldError::Mismatch {
            what,
            expected: expected.to_string(),
            got: got.to_string(),
        }
    }

    /// Shorthand for [`WorldError::MalformedEdit`].
    pub(crate) fn malformed(reason: impl Into<String>) -> Self {
        WorldError::MalformedEdit {
            reason: reason.into(),
        }
    }
}
