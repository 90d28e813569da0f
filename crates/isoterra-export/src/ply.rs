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
    let per_vertex = if with_normals { 24 } else { 12 };
    let mut out = Vec::with_capacity(header.len() + mesh.positions.len() * per_vertex + faces * 13);
    out.extend_from_slice(header.as_bytes());
    for (i, p) in mesh.positions.iter().enumerate() {
        for c in p {
            out.extend_from_slice(&c.to_le_bytes());
        }
        if with_normals {
            for c in mesh.normals[i] {
                out.extend_from_slice(&c.to_le_bytes());
            }
        }
    }
    for t in mesh.indices.chunks_exact(3) {
        out.push(3);
        for &i in t {
            // validate() bounds every index by the vertex count, which fits in i32
            // for any mesh that fits in memory as PLY.
            out.extend_from_slice(&(i as i32).to_le_bytes());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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
