//! Binary mesh frames: a 32-byte header, then positions, normals, colours
//! and indices (see `docs/protocol.md`).

/// The first four bytes of every frame.
pub const FRAME_MAGIC: [u8; 4] = *b"ITMF";
/// Bytes before the vertex data.
pub const FRAME_HEADER_BYTES: usize = 32;
/// The frame layout version.
pub const FRAME_VERSION: u8 = 1;

/// Kind codes of byte 5.
pub(crate) const KIND_SIDE2D: u8 = 0;
pub(crate) const KIND_MAP: u8 = 1;
pub(crate) const KIND_HEIGHTMAP: u8 = 2;
pub(crate) const KIND_VOXEL: u8 = 3;

/// Layer codes of byte 6.
pub(crate) const LAYER_TERRAIN: u8 = 0;
pub(crate) const LAYER_WATER: u8 = 1;
pub(crate) const LAYER_LINES: u8 = 2;
/// Translucent decals drawn over the terrain (side2d: the grass rim).
pub(crate) const LAYER_DECAL: u8 = 3;

/// The header of a mesh frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHeader {
    /// World kind: 0 side2d, 1 map, 2 heightmap, 3 voxel.
    pub kind: u8,
    /// Layer: 0 terrain, 1 water, 2 lines.
    pub layer: u8,
    /// Level of detail.
    pub lod: u8,
    /// Chunk coordinate.
    pub chunk: [i32; 3],
    /// Vertex count.
    pub vertices: u32,
    /// Index count.
    pub indices: u32,
    /// Flags (0).
    pub flags: u32,
}

impl FrameHeader {
    /// The frame's total length in bytes.
    pub fn frame_len(&self) -> usize {
        FRAME_HEADER_BYTES + 28 * self.vertices as usize + 4 * self.indices as usize
    }
}

/// Encodes one frame. `normals` and `colors` must have one entry per
/// position (missing entries are written as zero normals and opaque grey).
#[allow(clippy::too_many_arguments)]
pub fn encode_frame(
    kind: u8,
    layer: u8,
    lod: u8,
    chunk: [i32; 3],
    positions: &[[f32; 3]],
    normals: &[[f32; 3]],
    colors: &[[u8; 4]],
    indices: &[u32],
) -> Vec<u8> {
    let v = positions.len();
    let mut out = Vec::with_capacity(FRAME_HEADER_BYTES + 28 * v + 4 * indices.len());
    out.extend_from_slice(&FRAME_MAGIC);
    out.push(FRAME_VERSION);
    out.push(kind);
    out.push(layer);
    out.push(lod);
    for c in chunk {
        out.extend_from_slice(&c.to_le_bytes());
    }
    out.extend_from_slice(&(v as u32).to_le_bytes());
    out.extend_from_slice(&(indices.len() as u32).to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    for p in positions {
        for c in p {
            out.extend_from_slice(&c.to_le_bytes());
        }
    }
    for i in 0..v {
        let n = normals.get(i).copied().unwrap_or([0.0; 3]);
        for c in n {
            out.extend_from_slice(&c.to_le_bytes());
        }
    }
    for i in 0..v {
        out.extend_from_slice(&colors.get(i).copied().unwrap_or([128, 128, 128, 255]));
    }
    for i in indices {
        out.extend_from_slice(&i.to_le_bytes());
    }
    out
}

/// Reads a frame's header; `None` when the bytes are not a whole version-1
/// frame.
pub fn parse_frame_header(bytes: &[u8]) -> Option<FrameHeader> {
    if bytes.len() < FRAME_HEADER_BYTES || bytes[0..4] != FRAME_MAGIC || bytes[4] != FRAME_VERSION {
        return None;
    }
    let u = |o: usize| u32::from_le_bytes([bytes[o], bytes[o + 1], bytes[o + 2], bytes[o + 3]]);
    let header = FrameHeader {
        kind: bytes[5],
        layer: bytes[6],
        lod: bytes[7],
        chunk: [u(8) as i32, u(12) as i32, u(16) as i32],
        vertices: u(20),
        indices: u(24),
        flags: u(28),
    };
    (header.frame_len() == bytes.len()).then_some(header)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_their_header() {
        let bytes = encode_frame(
            KIND_VOXEL,
            LAYER_TERRAIN,
            2,
            [-1, 5, 7],
            &[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0]],
            &[[0.0, 1.0, 0.0]; 3],
            &[[1, 2, 3, 255]; 3],
            &[0, 1, 2],
        );
        let h = parse_frame_header(&bytes).expect("header");
        assert_eq!(h.kind, KIND_VOXEL);
        assert_eq!(h.lod, 2);
        assert_eq!(h.chunk, [-1, 5, 7]);
        assert_eq!((h.vertices, h.indices), (3, 3));
        assert_eq!(bytes.len(), 32 + 3 * 28 + 12);
        assert_eq!(&bytes[32..36], &0.0f32.to_le_bytes());
        assert_eq!(&bytes[32 + 24 * 3..32 + 24 * 3 + 4], &[1, 2, 3, 255]);
    }

    #[test]
    fn truncated_frames_are_rejected() {
        let bytes = encode_frame(
            KIND_SIDE2D,
            LAYER_LINES,
            0,
            [0; 3],
            &[[0.0; 3]],
            &[],
            &[],
            &[0, 0],
        );
        assert!(parse_frame_header(&bytes).is_some());
        assert!(parse_frame_header(&bytes[..bytes.len() - 1]).is_none());
        assert!(parse_frame_header(b"nope").is_none());
    }
}
