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
    /// The 3D cell box does not fit in the field (`x0 <= x1 <= width - 1`, and the
    /// same along y and z).
    #[error(
        "cell box {x0}..{x1} x {y0}..{y1} x {z0}..{z1} does not fit a field of {width}x{height}x{depth} nodes"
    )]
    BoxOutOfBounds {
        /// First cell along x.
        x0: u32,
        /// First cell along y.
        y0: u32,
        /// First cell along z.
        z0: u32,
        /// End cell along x (exclusive).
        x1: u32,
        /// End cell along y (exclusive).
        y1: u32,
        /// End cell along z (exclusive).
        z1: u32,
        /// Field width in nodes.
        width: u32,
        /// Field height in nodes.
        height: u32,
        /// Field depth in nodes.
        depth: u32,
    },
    /// A slice does not hold one entry per node; pass one value (or material id)
    /// per node, row-major with x fastest, then y, then z.
    #[error("`{name}` has {got} entries but the grid has {expected} nodes")]
    LengthMismatch {
        /// Which slice.
        name: &'static str,
        /// The number of nodes.
        expected: usize,
        /// The slice length.
        got: usize,
    },
    /// A heightmap chunk's height slice has the wrong length.
    #[error(
        "expected {expected} height samples ({side} x {side}: the chunk's nodes at its LOD plus a one-node apron ring), got {got}"
    )]
    HeightCountMismatch {
        /// `side * side`.
        expected: usize,
        /// The slice length.
        got: usize,
        /// Samples per side, `(cells >> lod) + 3`.
        side: u32,
    },
    /// A height sample is NaN or infinite.
    #[error(
        "height sample {index} (column {x}, row {z} of the apron grid) is not finite ({value}); replace NaN or infinite heights before meshing"
    )]
    NonFiniteHeight {
        /// Index in the height slice.
        index: usize,
        /// Sample column (x).
        x: u32,
        /// Sample row (z).
        z: u32,
        /// The value.
        value: f32,
    },
    /// A heightmap neighbour's LOD breaks the 2:1 rule (or names a level the
    /// chunk size does not have).
    #[error(
        "the {side} neighbour is at LOD {neighbour} but this chunk is at LOD {lod}; an edge neighbour may be at most one level coarser (2:1 rule), and no coarser than log2(cells)"
    )]
    NeighbourLod {
        /// Which side.
        side: crate::ChunkSide,
        /// The chunk's LOD.
        lod: u8,
        /// The neighbour's LOD.
        neighbour: u8,
    },
    /// A 3D chunk sample is NaN or infinite; replace it before meshing.
    #[error(
        "`{name}` sample {index} is not finite ({value}); replace NaN or infinite values before meshing"
    )]
    NonFiniteSample {
        /// Which slice (`samples` or `fine_faces`).
        name: &'static str,
        /// Index in that slice.
        index: usize,
        /// The value.
        value: f32,
    },
    /// A chunk face (or chunk edge on that face) borders a finer chunk but no
    /// fine samples were given for it.
    #[error(
        "face {face} touches a finer chunk but has no fine samples; pass the finer neighbour's (2N+1)^2 face samples in `fine_faces`"
    )]
    MissingFineSamples {
        /// The face (`2 * axis + side`).
        face: u8,
    },
    /// A fine face sample at one of the chunk's own nodes differs from the
    /// chunk's sample there; both must come from the same field.
    #[error(
        "fine sample {index} of face {face} lies on a node of the chunk but differs from the chunk's own sample; sample both LODs from the same field"
    )]
    FineSampleMismatch {
        /// The face (`2 * axis + side`).
        face: u8,
        /// Index in that face's fine samples.
        index: usize,
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
