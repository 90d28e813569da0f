//! Binary PLY (little-endian) for triangle meshes.
//!
//! ```text
//! ply
//! format binary_little_endian 1.0
//! element vertex N         x y z [nx ny nz] as float32
//! element face M           list uchar int vertex_indices (always 3)
//! end_header
//! ```

use crate::{ExportError, GlbMesh};

/// Encodes one mesh as binary little-endian PLY: positions, normals when the
/// mesh has them, and triangles as `uchar`-counted `int` lists.
///
/// # Errors
///
/// [`ExportError::InvalidMesh`] for a non-finite position, mismatched normals,
/// an index count that is not a multiple of three or an index out of range.
pub fn export_ply(mesh: &GlbMesh<'_>) -> Result<Vec<u8>, ExportError> {
    let with_normals = !mesh.normals.is_empty();
    let per_vertex = if with_normals { 24 } else { 12 };
    let mut out =
        Vec::with_capacity(300 + mesh.positions.len() * per_vertex + mesh.indices.len() / 3 * 13);
    write_ply(mesh, &mut out)?;
    Ok(out)
}

/// Writes one mesh as binary little-endian PLY to `w`, as [`export_ply`]
/// encodes it, a block at a time: nothing the size of the file is held in
/// memory, so a large mesh costs its own arrays and no second copy. Wrap a
/// file in a [`std::io::BufWriter`] or not; blocks are about 1.5 MiB. On a
/// rayon pool of several threads, they encode the next blocks while this
/// thread writes; the bytes are the same at any thread count.
///
/// # Errors
///
/// As [`export_ply`], checked before anything is written, and
/// [`ExportError::Write`] when `w` fails.
pub fn write_ply<W: std::io::Write + ?Sized>(
    mesh: &GlbMesh<'_>,
    w: &mut W,
) -> Result<(), ExportError> {
    mesh.validate(0)?;
    let with_normals = !mesh.normals.is_empty();
    let faces = mesh.indices.len() / 3;
    let mut header = format!(
        "ply\nformat binary_little_endian 1.0\ncomment isoterra\nelement vertex {}\n\
         property float x\nproperty float y\nproperty float z\n",
        mesh.positions.len()
    );
    if with_normals {
        header.push_str("property float nx\nproperty float ny\nproperty float nz\n");
    }
    header.push_str(&format!(
        "element face {faces}\nproperty list uchar int vertex_indices\nend_header\n"
    ));
    w.write_all(header.as_bytes()).map_err(ExportError::Write)?;
    // Records are encoded a block at a time, each a fixed run of bytes
    // written in place (no growth checks per value); on a pool of several
    // threads the next blocks are encoded while this thread writes.
    let stride = if with_normals { 24 } else { 12 };
    let per_block = BLOCK_BYTES / stride;
    let vertices = mesh.positions.len();
    let vertex_blocks = vertices.div_ceil(per_block);
    let faces_per_block = BLOCK_BYTES / 13;
    let face_blocks = faces.div_ceil(faces_per_block);
    let block = |k: usize, bytes: &mut Vec<u8>| {
        if k < vertex_blocks {
            let range = k * per_block..((k + 1) * per_block).min(vertices);
            bytes.resize(range.len() * stride, 0);
            let block = &mesh.positions[range.clone()];
            for (j, (rec, p)) in bytes.chunks_exact_mut(stride).zip(block).enumerate() {
                put_f32s(&mut rec[..12], p);
                if with_normals {
                    put_f32s(&mut rec[12..], &mesh.normals[range.start + j]);
                }
            }
        } else {
            let (k, per) = (k - vertex_blocks, faces_per_block);
            let tris = &mesh.indices[3 * k * per..3 * ((k + 1) * per).min(faces)];
            bytes.resize(tris.len() / 3 * 13, 0);
            for (rec, t) in bytes.chunks_exact_mut(13).zip(tris.chunks_exact(3)) {
                rec[0] = 3;
                for (dst, &i) in rec[1..].chunks_exact_mut(4).zip(t) {
                    // validate() bounds every index by the vertex count, which
                    // fits in i32 for any mesh that fits in memory as PLY.
                    dst.copy_from_slice(&(i as i32).to_le_bytes());
                }
            }
        }
    };
    let mut write = |bytes: &Vec<u8>| w.write_all(bytes).map_err(ExportError::Write);
    crate::text::ordered_pieces(vertex_blocks + face_blocks, &block, &mut write)
}

/// Bytes of records encoded per write: 1.5 MiB, so that a
/// [`std::io::BufWriter`] of up to 1 MiB hands each block straight to the
/// file instead of copying it into its own buffer first.
const BLOCK_BYTES: usize = 3 << 19;

/// Writes three `f32`s little-endian into the 12 bytes of `dst`.
fn put_f32s(dst: &mut [u8], v: &[f32; 3]) {
    for (d, c) in dst.chunks_exact_mut(4).zip(v) {
        d.copy_from_slice(&c.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer that takes at most 1000 bytes per call and can fail.
    struct Trickle {
        out: Vec<u8>,
        fail_after: Option<usize>,
    }

    impl std::io::Write for Trickle {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            if self.fail_after.is_some_and(|n| self.out.len() >= n) {
                return Err(std::io::Error::other("disk full"));
            }
            let n = b.len().min(1000);
            self.out.extend_from_slice(&b[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// The file as the format defines it, written out value by value.
    fn expected(pos: &[[f32; 3]], nrm: &[[f32; 3]], idx: &[u32]) -> Vec<u8> {
        let mut out = format!(
            "ply\nformat binary_little_endian 1.0\ncomment isoterra\nelement vertex {}\n\
             property float x\nproperty float y\nproperty float z\n",
            pos.len()
        );
        if !nrm.is_empty() {
            out.push_str("property float nx\nproperty float ny\nproperty float nz\n");
        }
        out.push_str(&format!(
            "element face {}\nproperty list uchar int vertex_indices\nend_header\n",
            idx.len() / 3
        ));
        let mut out = out.into_bytes();
        for (i, p) in pos.iter().enumerate() {
            let n = nrm.get(i).into_iter().flatten();
            for c in p.iter().chain(n) {
                out.extend_from_slice(&c.to_le_bytes());
            }
        }
        for t in idx.chunks(3) {
            out.push(3);
            for &i in t {
                out.extend_from_slice(&(i as i32).to_le_bytes());
            }
        }
        out
    }

    #[test]
    fn streamed_ply_is_the_same_bytes_in_blocks() {
        // Several blocks of vertices and of faces, the last ones partial.
        let n = 300_001u32;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let pos: Vec<[f32; 3]> = (0..n).map(|i| [i as f32, (i % 7) as f32, 0.5]).collect();
        let nrm: Vec<[f32; 3]> = (0..n).map(|i| [0.0, -(i as f32), 1.0]).collect();
        let idx: Vec<u32> = (0..n - 2).flat_map(|i| [i, i + 2, i + 1]).collect();
        for normals in [&nrm[..], &[]] {
            let mesh = GlbMesh::new("t", &pos, &idx).with_normals(normals);
            let whole = export_ply(&mesh).unwrap();
            assert!(
                whole == expected(&pos, normals, &idx),
                "normals: {}",
                !normals.is_empty()
            );
            let mut w = Trickle {
                out: Vec::new(),
                fail_after: None,
            };
            write_ply(&mesh, &mut w).unwrap();
            assert!(w.out == whole);
            // Encoded on three threads: the same bytes.
            let mut w = Trickle {
                out: Vec::new(),
                fail_after: None,
            };
            pool.install(|| write_ply(&mesh, &mut w)).unwrap();
            assert!(w.out == whole, "three threads");
        }
        let mesh = GlbMesh::new("t", &pos, &idx).with_normals(&nrm);
        // A failing writer is an error, not a panic, on one thread or three.
        let mut w = Trickle {
            out: Vec::new(),
            fail_after: Some(100_000),
        };
        assert!(matches!(
            pool.install(|| write_ply(&mesh, &mut w)),
            Err(ExportError::Write(_))
        ));
        let mut w = Trickle {
            out: Vec::new(),
            fail_after: Some(100_000),
        };
        assert!(matches!(
            write_ply(&mesh, &mut w),
            Err(ExportError::Write(_))
        ));
        // A bad mesh writes nothing.
        let bad = [0u32, 1, n + 5];
        let mut w = Trickle {
            out: Vec::new(),
            fail_after: None,
        };
        assert!(write_ply(&GlbMesh::new("t", &pos, &bad), &mut w).is_err());
        assert!(w.out.is_empty());
    }

    #[test]
    fn header_and_body_sizes_match() {
        let pos = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
        let nrm = [[0.0, 0.0, 1.0]; 3];
        let idx = [0, 1, 2];
        let mesh = GlbMesh::new("t", &pos, &idx).with_normals(&nrm);
        let bytes = export_ply(&mesh).unwrap();
        let end = bytes
            .windows(11)
            .position(|w| w == b"end_header\n")
            .unwrap()
            + 11;
        let header = std::str::from_utf8(&bytes[..end]).unwrap();
        assert!(header.contains("element vertex 3\n"));
        assert!(header.contains("property float nz\n"));
        assert!(header.contains("element face 1\n"));
        assert_eq!(bytes.len() - end, 3 * 24 + 13);
        assert_eq!(bytes[end + 72], 3);
        let last = i32::from_le_bytes(bytes[bytes.len() - 4..].try_into().unwrap());
        assert_eq!(last, 2);

        let plain = export_ply(&GlbMesh::new("t", &pos, &idx)).unwrap();
        assert!(
            !std::str::from_utf8(&plain[..100])
                .unwrap_or("")
                .contains("nx")
        );
    }

    #[test]
    fn bad_meshes_are_errors() {
        let pos = [[0.0, f32::NAN, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
        assert!(export_ply(&GlbMesh::new("t", &pos, &[0, 1, 2])).is_err());
        let pos = [[0.0; 3]; 3];
        assert!(export_ply(&GlbMesh::new("t", &pos, &[0, 1, 3])).is_err());
        assert!(export_ply(&GlbMesh::new("t", &pos, &[0, 1])).is_err());
    }
}
