use thiserror::Error;

/// Errors returned by the meshers.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum MeshError {
    /// A parameter is out of range.
    #[error("invalid parameter `{name}` = {value}: {reason}")]
    InvalidParameter {
        /// Name of the parameter.
        name: &'static str,
        /// The offending value, printed.
        value: String,
        /// The valid range or what to do.
        reason: &'static str,
    },
    /// The cell rectangle does not fit in the field.
    #[error(
        "cell rectangle {x0}..{x1} x {y0}..{y1} does not fit a field of {width}x{height} nodes"
    )]
    RegionOutOfBounds {
        /// First cell column.
        x0: u32,
        /// First cell row.
        y0: u32,
        /// End cell column (exclusive).
        x1: u32,
        /// End cell row (exclusive).
        y1: u32,
        /// Field width in nodes.
        width: u32,
        /// Field height in nodes.
        height: u32,
    },
    /// The material grid does not match the field's size.
    #[error("material grid is {got_w}x{got_h} nodes but the field is {width}x{height}")]
    MaterialSizeMismatch {
        /// Field width.
        width: u32,
        /// Field height.
        height: u32,
        /// Material grid width.
        got_w: u32,
        /// Material grid height.
        got_h: u32,
    },
}

impl MeshError {
    /// Shorthand for [`MeshError::InvalidParameter`].
    pub fn param(name: &'static str, value: impl std::fmt::Display, reason: &'static str) -> Self {
        MeshError::InvalidParameter {
            name,
            value: value.to_string(),
            reason,
        }
    }
}
