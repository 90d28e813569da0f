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
/// file in a [`std::io::BufWriter`] or not; blocks are 64 KiB.
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
    const BLOCK: usize = 64 * 1024;
    let mut buf = Vec::with_capacity(BLOCK + 64);
    buf.extend_from_slice(header.as_bytes());
    let mut flush = |buf: &mut Vec<u8>, force: bool| -> Result<(), ExportError> {
        if force || buf.len() >= BLOCK {
            w.write_all(buf).map_err(ExportError::Write)?;
            buf.clear();
        }
        Ok(())
    };
    for (i, p) in mesh.positions.iter().enumerate() {
        for c in p {
            buf.extend_from_slice(&c.to_le_bytes());
        }
        if with_normals {
            for c in mesh.normals[i] {
                buf.extend_from_slice(&c.to_le_bytes());
            }
        }
        flush(&mut buf, false)?;
    }
    for t in mesh.indices.chunks_exact(3) {
        buf.push(3);
        for &i in t {
            // validate() bounds every index by the vertex count, which fits in i32
            // for any mesh that fits in memory as PLY.
            buf.extend_from_slice(&(i as i32).to_le_bytes());
        }
        flush(&mut buf, false)?;
    }
    flush(&mut buf, true)
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

    #[test]
    fn streamed_ply_is_the_same_bytes_in_blocks() {
        // Large enough for several 64 KiB blocks.
        let n = 20_000u32;
        let pos: Vec<[f32; 3]> = (0..n).map(|i| [i as f32, (i % 7) as f32, 0.5]).collect();
        let nrm = vec![[0.0, 0.0, 1.0]; n as usize];
        let idx: Vec<u32> = (0..n - 2).flat_map(|i| [i, i + 1, i + 2]).collect();
        let mesh = GlbMesh::new("t", &pos, &idx).with_normals(&nrm);
        let whole = export_ply(&mesh).unwrap();
        let mut w = Trickle {
            out: Vec::new(),
            fail_after: None,
        };
        write_ply(&mesh, &mut w).unwrap();
        assert_eq!(w.out, whole);
        // A failing writer is an error, not a panic.
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
