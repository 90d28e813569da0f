//! Wavefront OBJ export of triangle meshes, one object per mesh.

use std::fmt::Write;

use crate::{ExportError, GlbMesh};

/// Writes meshes as Wavefront OBJ text: one `o` object per mesh, then its
/// `v` (translation applied: OBJ has no node transforms), `vn` and `vt`
/// lines and `f` faces with 1-based, file-global indices (`v/vt/vn`,
/// `v//vn`, `v/vt` or `v` depending on which attributes the mesh has).
///
/// Numbers are written in their shortest form that reads back to the same
/// `f32`. Whitespace in names becomes `_`; an empty name becomes `mesh_K`.
/// Errors: the same as [`export_glb`](crate::export_glb) (lengths, index range,
/// non-finite values); nothing is produced then.
pub fn export_obj(meshes: &[GlbMesh<'_>]) -> Result<String, ExportError> {
    for (k, m) in meshes.iter().enumerate() {
        m.validate(k)?;
    }
    let mut s = String::new();
    s.push_str("# written by isoterra\n");
    let mut base = 1u64;
    for (k, m) in meshes.iter().enumerate() {
        // Writing into a String cannot fail.
        let name: String = if m.name.is_empty() {
            format!("mesh_{k}")
        } else {
            m.name
                .chars()
                .map(|c| if c.is_whitespace() { '_' } else { c })
                .collect()
        };
        let _ = writeln!(s, "o {name}");
        let t = m.translation.unwrap_or([0.0; 3]);
        for p in m.positions {
            let _ = writeln!(s, "v {} {} {}", p[0] + t[0], p[1] + t[1], p[2] + t[2]);
        }
        for n in m.normals {
            let _ = writeln!(s, "vn {} {} {}", n[0], n[1], n[2]);
        }
        for uv in m.uvs {
            let _ = writeln!(s, "vt {} {}", uv[0], uv[1]);
        }
        let (has_n, has_t) = (!m.normals.is_empty(), !m.uvs.is_empty());
        for tri in m.indices.chunks_exact(3) {
            s.push('f');
            for &i in tri {
                let i = base + u64::from(i);
                let _ = match (has_t, has_n) {
                    (true, true) => write!(s, " {i}/{i}/{i}"),
                    (false, true) => write!(s, " {i}//{i}"),
                    (true, false) => write!(s, " {i}/{i}"),
                    (false, false) => write!(s, " {i}"),
                };
            }
            s.push('\n');
        }
        base += m.positions.len() as u64;
    }
    Ok(s)
}
