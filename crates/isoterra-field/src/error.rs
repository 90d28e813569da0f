use thiserror::Error;

/// Errors returned by field constructors, generators and parameter checks.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum FieldError {
    /// A size was zero or smaller than the minimum.
    #[error("invalid field size {width}x{height}: {reason}")]
    InvalidSize {
        /// Requested width in nodes.
        width: u64,
        /// Requested height in nodes.
        height: u64,
        /// What is wrong and how to fix it.
        reason: &'static str,
    },
    /// The node count overflows or exceeds the cap of the field's type
    /// ([`Field2::MAX_NODES`](crate::Field2::MAX_NODES) or
    /// [`Field3::MAX_NODES`](crate::Field3::MAX_NODES)).
    #[error(
        "field of {} nodes is too large: at most {max} nodes are allowed (about {max_mib} MiB of f32); use chunks or a smaller size",
        size_text(*width, *height, *depth)
    )]
    TooLarge {
        /// Requested width in nodes.
        width: u64,
        /// Requested height in nodes.
        height: u64,
        /// Requested depth in nodes (1 for a 2D field).
        depth: u64,
        /// The cap on the node count.
        max: u64,
        /// The cap expressed in MiB of f32 storage.
        max_mib: u64,
    },
    /// A value is NaN or infinite.
    #[error("value at node index {index} is not finite ({value})")]
    NonFinite {
        /// Index of the first bad value in storage order.
        index: usize,
        /// The offending value.
        value: f32,
    },
    /// The number of values does not match `width * height`.
    #[error("expected {expected} values for the field, got {got}")]
    LengthMismatch {
        /// Expected number of values.
        expected: usize,
        /// Number of values given.
        got: usize,
    },
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
}

impl FieldError {
    /// Shorthand for [`FieldError::InvalidParameter`].
    pub fn param(name: &'static str, value: impl std::fmt::Display, reason: &'static str) -> Self {
        FieldError::InvalidParameter {
            name,
            value: value.to_string(),
            reason,
        }
    }
}

/// `WxH` for a 2D size, `WxHxD` for a 3D one.
fn size_text(width: u64, height: u64, depth: u64) -> String {
    if depth == 1 {
        format!("{width}x{height}")
    } else {
        format!("{width}x{height}x{depth}")
    }
}
