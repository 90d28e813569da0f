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

/// Flag bit 0: surface weights (`4·V` bytes) follow the colours. Terrain:
/// how much of each detail texture class (grass, soil, rock, snow) a vertex
/// shows; water: byte 0 is the depth in 1/64 world units (up to 255).
pub const FLAG_SURFACE: u32 = 1;

/// Surface classes of the detail textures, in weight order.
pub(crate) const SURFACE_GRASS: usize = 0;
pub(crate) const SURFACE_SOIL: usize = 1;
pub(crate) const SURFACE_ROCK: usize = 2;
pub(crate) const SURFACE_SNOW: usize = 3;

/// Weights that sum to 255 from class weights that sum to about 1 (the
/// rounding error goes to the largest class).
pub(crate) fn surface_weights(w: [f32; 4]) -> [u8; 4] {
    let w = w.map(|v| if v.is_finite() { v.max(0.0) } else { 0.0 });
    let sum: f32 = w.iter().sum();
    if sum <= 0.0 {
        return [0, 0, 0, 0];
    }
    let mut out = w.map(|v| (v / sum * 255.0).round() as u8);
    let total: i32 = out.iter().map(|&v| i32::from(v)).sum();
    let (big, _) = out
        .iter()
        .enumerate()
        .max_by_key(|(_, v)| **v)
        .unwrap_or((0, &0));
    out[big] = (i32::from(out[big]) + 255 - total).clamp(0, 255) as u8;
    out
}

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
    /// Flags ([`FLAG_SURFACE`]).
    pub flags: u32,
}

impl FrameHeader {
    /// Bytes per vertex.
    fn vertex_bytes(&self) -> usize {
        if self.flags & FLAG_SURFACE != 0 {
            32
        } else {
            28
        }
    }

    /// The frame's total length in bytes.
    pub fn frame_len(&self) -> usize {
        FRAME_HEADER_BYTES
            + self.vertex_bytes() * self.vertices as usize
            + 4 * self.indices as usize
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
    encode_surface_frame(
        kind,
        layer,
        lod,
        chunk,
        positions,
        normals,
        colors,
        &[],
        indices,
    )
}

/// [`encode_frame`] with surface weights: when `surface` is not empty the
/// frame carries [`FLAG_SURFACE`] and one weight quadruple per position
/// (missing entries are zero).
#[allow(clippy::too_many_arguments)]
pub fn encode_surface_frame(
    kind: u8,
    layer: u8,
    lod: u8,
    chunk: [i32; 3],
    positions: &[[f32; 3]],
    normals: &[[f32; 3]],
    colors: &[[u8; 4]],
    surface: &[[u8; 4]],
    indices: &[u32],
) -> Vec<u8> {
    let v = positions.len();
    let flags = if surface.is_empty() { 0 } else { FLAG_SURFACE };
    let per_vertex = if surface.is_empty() { 28 } else { 32 };
    let mut out = Vec::with_capacity(FRAME_HEADER_BYTES + per_vertex * v + 4 * indices.len());
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
    out.extend_from_slice(&flags.to_le_bytes());
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
    if !surface.is_empty() {
        for i in 0..v {
            out.extend_from_slice(&surface.get(i).copied().unwrap_or([0; 4]));
        }
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
    fn surface_weights_follow_the_colours() {
        let bytes = encode_surface_frame(
            KIND_MAP,
            LAYER_TERRAIN,
            0,
            [0; 3],
            &[[0.0; 3]; 2],
            &[[0.0, 1.0, 0.0]; 2],
            &[[1, 2, 3, 255]; 2],
            &[[255, 0, 0, 0], [0, 128, 127, 0]],
            &[0, 1, 1],
        );
        let h = parse_frame_header(&bytes).expect("header");
        assert_eq!(h.flags, FLAG_SURFACE);
        assert_eq!(bytes.len(), 32 + 2 * 32 + 12);
        let at = 32 + 28 * 2;
        assert_eq!(&bytes[at..at + 8], &[255, 0, 0, 0, 0, 128, 127, 0]);
        // Without weights the frame is the plain one, flags 0.
        let plain = encode_frame(
            KIND_MAP,
            LAYER_TERRAIN,
            0,
            [0; 3],
            &[[0.0; 3]; 2],
            &[[0.0, 1.0, 0.0]; 2],
            &[[1, 2, 3, 255]; 2],
            &[0, 1, 1],
        );
        assert_eq!(parse_frame_header(&plain).unwrap().flags, 0);
        assert_eq!(plain.len(), 32 + 2 * 28 + 12);
    }

    #[test]
    fn surface_weights_sum_to_255() {
        for w in [
            [1.0, 0.0, 0.0, 0.0],
            [0.3, 0.3, 0.3, 0.1],
            [1.0 / 3.0; 4],
            [0.2, 0.0, 0.7, f32::NAN],
            [0.5, 0.5, 0.0, 0.0],
        ] {
            let s = surface_weights(w);
            assert_eq!(s.iter().map(|&v| u32::from(v)).sum::<u32>(), 255, "{w:?}");
        }
        assert_eq!(surface_weights([0.0; 4]), [0; 4]);
        assert_eq!(surface_weights([0.0, 0.0, 2.0, 0.0]), [0, 0, 255, 0]);
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
