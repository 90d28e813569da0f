use std::path::PathBuf;

use isoterra_field::FieldError;
use thiserror::Error;

/// Errors returned by the readers and writers of this crate.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ExportError {
    /// A file could not be read or written.
    #[error("cannot access {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// Writing an output stream failed.
    #[error("cannot write the output: {0}")]
    Write(#[source] std::io::Error),
    /// Reading an input stream failed.
    #[error("cannot read the input: {0}")]
    Read(#[source] std::io::Error),
    /// An array's values do not fit in the memory this process can allocate.
    #[error(
        "the array's {nodes} values need {} MiB of memory, which could not be allocated",
        bytes.div_ceil(1 << 20)
    )]
    OutOfMemory {
        /// Number of values.
        nodes: u64,
        /// Bytes they need.
        bytes: u64,
    },
    /// The bytes are not a `.npy` file (the magic string is missing).
    #[error("not a .npy file: it does not start with the \\x93NUMPY magic string")]
    NpyMagic,
    /// The `.npy` format version is not 1.0, 2.0 or 3.0.
    #[error(".npy format version {major}.{minor} is not supported (expected 1.0, 2.0 or 3.0)")]
    NpyVersion {
        /// Major version byte.
        major: u8,
        /// Minor version byte.
        minor: u8,
    },
    /// The file ends before the header or the data it announces.
    #[error(".npy file is truncated: the {what} needs {needed} bytes but only {got} are present")]
    NpyTruncated {
        /// Which part is cut short (`"header"` or `"data"`).
        what: &'static str,
        /// Bytes required.
        needed: u64,
        /// Bytes present.
        got: u64,
    },
    /// The data is longer than the header's shape says.
    #[error(
        ".npy file has {}{extra} unexpected bytes after the array data (corrupt or wrong shape)",
        if *more { "more than " } else { "" }
    )]
    NpyTrailingBytes {
        /// Number of extra bytes (counted up to a limit on a stream whose
        /// length is not known).
        extra: u64,
        /// True when a stream held more than `extra` bytes and counting stopped.
        more: bool,
    },
    /// The header dictionary cannot be parsed or misses a key.
    #[error("malformed .npy header: {0}")]
    NpyHeader(String),
    /// The array's element type is not one this reader handles.
    #[error(
        "unsupported .npy dtype {0:?}: 2D arrays take '<f4', '<f8', '>f4' or '>f8'; 3D arrays also take '|u1', '<i2', '<u2' (either byte order)"
    )]
    NpyDtype(String),
    /// The array is stored column-major.
    #[error(
        "the .npy array is stored in Fortran (column-major) order; save it with numpy.ascontiguousarray(a) first"
    )]
    NpyFortranOrder,
    /// The array is not two-dimensional.
    #[error(".npy array has shape {0}; a 2D array (rows, columns) is expected")]
    NpyShape(String),
    /// A value is NaN or infinite.
    #[error(".npy value at [{row}, {col}] is not finite ({value})")]
    NpyNonFinite {
        /// Row (first axis) of the first bad value.
        row: u64,
        /// Column (second axis) of the first bad value.
        col: u64,
        /// The value.
        value: f64,
    },
    /// A `f8` value does not fit in `f32`.
    #[error(".npy value at [{row}, {col}] = {value} is outside the f32 range")]
    NpyOutOfRange {
        /// Row (first axis) of the first bad value.
        row: u64,
        /// Column (second axis) of the first bad value.
        col: u64,
        /// The value.
        value: f64,
    },
    /// The array is not three-dimensional.
    #[error(".npy array has shape {0}; a 3D array (z, y, x) is expected")]
    NpyShape3(String),
    /// A value of a 3D array is NaN or infinite, or an `f8` value does not fit in `f32`.
    #[error(".npy value at [{}, {}, {}] = {value} is {what}", index[0], index[1], index[2])]
    NpyBadValue3 {
        /// Index `[z, y, x]` of the first bad value.
        index: [u64; 3],
        /// The value.
        value: f64,
        /// `"not finite"` or `"outside the f32 range"`.
        what: &'static str,
    },
    /// Collider JSON cannot be parsed.
    #[error("invalid polyline JSON: {0}")]
    Json(String),
    /// An image would exceed the size limits.
    #[error(
        "image of {width}x{height} pixels is too large (at most {max_side} pixels per side and {max_pixels} pixels in all); lower pixels_per_cell"
    )]
    ImageTooLarge {
        /// Requested width in pixels.
        width: u64,
        /// Requested height in pixels.
        height: u64,
        /// Largest side allowed.
        max_side: u64,
        /// Largest pixel count allowed.
        max_pixels: u64,
    },
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
    /// The PNG encoder failed.
    #[error("PNG encoding failed: {0}")]
    Png(String),
    /// A field or material grid could not be built or does not match.
    #[error(transparent)]
    Field(#[from] FieldError),
    /// A mesh given to the glTF or OBJ writer is inconsistent.
    #[error("mesh {mesh} ({name:?}): bad {what}: {detail}")]
    InvalidMesh {
        /// Position of the mesh in the list.
        mesh: usize,
        /// The mesh's name.
        name: String,
        /// Which array is wrong (`"normals"`, `"uvs"`, `"indices"`, `"positions"`,
        /// `"translation"`).
        what: &'static str,
        /// What is wrong with it.
        detail: String,
    },
    /// A heightmap range is unusable (not finite, empty, inverted or too
    /// narrow for its magnitude).
    #[error("invalid height range {range:?}: {reason}")]
    HeightRange {
        /// The range `[min, max]`.
        range: [f32; 2],
        /// What is wrong.
        reason: &'static str,
    },
    /// A height to export is NaN or infinite.
    #[error("height {index} is not finite ({value})")]
    NonFiniteHeight {
        /// Index of the first bad height (row-major).
        index: u64,
        /// The value.
        value: f32,
    },
    /// A PNG file is corrupt or its recorded range is malformed.
    #[error("cannot decode PNG: {0}")]
    PngDecode(String),
    /// An image has the wrong color type or bit depth for a heightmap.
    #[error("unsupported heightmap image: {0}")]
    HeightFormat(String),
    /// R16 raw data has the wrong size.
    #[error("R16 data of {bytes} bytes has the wrong size: expected {expected}")]
    R16Size {
        /// Bytes given.
        bytes: u64,
        /// What was expected.
        expected: String,
    },
    /// A Tiled map is not valid JSON or misses or mistypes a member.
    #[error("malformed Tiled JSON: {0}")]
    TiledJson(String),
    /// A Tiled TMX map or TSX tileset is not well-formed XML or misses or
    /// mistypes an attribute.
    #[error("malformed Tiled XML: {0}")]
    TiledXml(String),
    /// An external tileset of a Tiled map cannot be read.
    #[error("cannot read the external tileset {source_path:?} of the Tiled map: {reason}")]
    TiledTileset {
        /// The tileset's `source`, as the map names it.
        source_path: String,
        /// Why it cannot be read.
        reason: String,
    },
    /// A Tiled layer uses a data encoding or compression this reader does not handle.
    #[error(
        "unsupported Tiled layer data {0}: use encoding \"csv\", or \"base64\" with compression \"\", \"zlib\", \"gzip\" or \"zstd\""
    )]
    TiledCompression(String),
    /// The requested tile layer is not in the map.
    #[error("Tiled layer {name:?} not found; tile layers in the map: {available:?}")]
    TiledLayerNotFound {
        /// The requested name (empty when the map has no tile layer at all).
        name: String,
        /// Names of the tile layers present.
        available: Vec<String>,
    },
    /// The Tiled map is not orthogonal.
    #[error(
        "Tiled map orientation {0:?} is not supported: only \"orthogonal\" maps can be imported"
    )]
    TiledOrientation(String),
    /// A map would be larger than the map kind allows.
    #[error(
        "a map of {width}x{height} cells is too large: each side is at most {max} cells (use fewer cells per tile or a smaller map)"
    )]
    MapTooLarge {
        /// Cells along x.
        width: u64,
        /// Cells along z.
        height: u64,
        /// The largest side allowed.
        max: u32,
    },
    /// A layer image or its JSON sidecar is malformed or they do not match.
    #[error("invalid map layer files: {0}")]
    MapLayers(String),
    /// An error from the world crate (pathing grid, map data).
    #[error(transparent)]
    World(#[from] isoterra_world::WorldError),
}

impl ExportError {
    pub(crate) fn param(
        name: &'static str,
        value: impl std::fmt::Display,
        reason: &'static str,
    ) -> Self {
        ExportError::InvalidParameter {
            name,
            value: value.to_string(),
            reason,
        }
    }
}
