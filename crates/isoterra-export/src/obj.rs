//! Wavefront OBJ export of triangle meshes, one object per mesh.

use std::fmt::Write;

use crate::text::Numbers;
use crate::{ExportError, GlbMaterial, GlbMesh};

/// An OBJ file and the `.mtl` file its `mtllib` line names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjFiles {
    /// The OBJ text.
    pub obj: String,
    /// The material library text (`newmtl`, `Kd`, `d` per material).
    pub mtl: String,
}

/// The distinct materials of `meshes` in the order they first appear, each
/// with the unique OBJ name it is written under.
pub(crate) fn material_names<'a>(meshes: &[GlbMesh<'a>]) -> Vec<(GlbMaterial<'a>, String)> {
    let mut out: Vec<(GlbMaterial<'a>, String)> = Vec::new();
    for m in meshes {
        for r in m.ranges() {
            let Some(mat) = r.material else { continue };
            if out.iter().any(|(x, _)| *x == mat) {
                continue;
            }
            let base: String = if mat.name.is_empty() {
                format!("material_{}", out.len())
            } else {
                mat.name
                    .chars()
                    .map(|c| if c.is_whitespace() { '_' } else { c })
                    .collect()
            };
            let mut name = base.clone();
            let mut k = 2;
            while out.iter().any(|(_, n)| *n == name) {
                name = format!("{base}_{k}");
                k += 1;
            }
            out.push((mat, name));
        }
    }
    out
}

/// The name triangles without a material are grouped under: `default`, or
/// `default_K` when a material already has that name.
fn fallback_name(names: &[(GlbMaterial<'_>, String)]) -> String {
    let mut name = String::from("default");
    let mut k = 2;
    while names.iter().any(|(_, n)| *n == name) {
        name = format!("default_{k}");
        k += 1;
    }
    name
}

/// Writes meshes as OBJ text with `mtllib MTL_FILE` and `usemtl` groups, and
/// the material library it names: one `newmtl` per distinct material with
/// its base colour as `Kd` (linear, as glTF's), `d` its alpha, `Ka 0 0 0`,
/// `Ks 0 0 0` and `illum 1`. Triangles without a material go under
/// `usemtl default` (a white material in the library; `default_2`, … if a
/// material is named `default`) when others have one.
///
/// Errors as [`export_obj`]; nothing is produced then.
pub fn export_obj_mtl(meshes: &[GlbMesh<'_>], mtl_file: &str) -> Result<ObjFiles, ExportError> {
    check_mtl_file(mtl_file)?;
    let obj = obj_string(meshes, Some(mtl_file))?;
    Ok(ObjFiles {
        obj,
        mtl: mtl_text(meshes),
    })
}

/// Writes the OBJ of [`export_obj_mtl`] to `w` a block at a time (see
/// [`write_obj`]) and returns its material library, which is
/// small: a large mesh costs its own arrays and no copy of the file's text.
///
/// Errors: as [`export_obj_mtl`], checked before anything is written, and
/// [`ExportError::Write`] when `w` fails.
pub fn write_obj_mtl<W: std::io::Write + ?Sized>(
    meshes: &[GlbMesh<'_>],
    mtl_file: &str,
    w: &mut W,
) -> Result<String, ExportError> {
    check_mtl_file(mtl_file)?;
    obj_text(meshes, Some(mtl_file), &mut |text: &str| {
        w.write_all(text.as_bytes()).map_err(ExportError::Write)
    })?;
    Ok(mtl_text(meshes))
}

pub(crate) fn check_mtl_file(mtl_file: &str) -> Result<(), ExportError> {
    if mtl_file.is_empty() || mtl_file.contains(['\n', '\r']) {
        return Err(ExportError::param(
            "mtl file",
            mtl_file,
            "the material library needs a one-line file name, such as world.mtl",
        ));
    }
    Ok(())
}

/// The material library of `meshes` (see [`export_obj_mtl`]).
fn mtl_text(meshes: &[GlbMesh<'_>]) -> String {
    let untextured = meshes
        .iter()
        .flat_map(|m| m.ranges())
        .any(|r| r.material.is_none());
    mtl_of(&material_names(meshes), untextured)
}

/// The material library of the materials `names` (and of the fallback
/// material when some triangles have none: `untextured`).
pub(crate) fn mtl_of(names: &[(GlbMaterial<'_>, String)], untextured: bool) -> String {
    let mut mtl = String::from("# written by isoterra\n");
    let fallback = fallback_name(names);
    let default = GlbMaterial::new("default", [1.0; 4]);
    let listed = names
        .iter()
        .map(|(m, n)| (*m, n.as_str()))
        .chain(untextured.then_some((default, fallback.as_str())));
    for (m, name) in listed {
        let [r, g, b, a] = m.base_color;
        let _ = writeln!(mtl, "newmtl {name}");
        let _ = writeln!(mtl, "Ka 0 0 0");
        let _ = writeln!(mtl, "Kd {r} {g} {b}");
        let _ = writeln!(mtl, "Ks 0 0 0");
        let _ = writeln!(mtl, "d {a}");
        let _ = writeln!(mtl, "illum 1");
    }
    mtl
}

/// Writes meshes as Wavefront OBJ text: one `o` object per mesh, then its
/// `v` (translation applied: OBJ has no node transforms), `vn` and `vt`
/// lines and `f` faces with 1-based, file-global indices (`v/vt/vn`,
/// `v//vn`, `v/vt` or `v` depending on which attributes the mesh has).
///
/// Numbers are written in their shortest form that reads back to the same
/// `f32`. Whitespace in names becomes `_`; an empty name becomes `mesh_K`.
/// Each material range of a mesh (its [`primitives`](GlbMesh::primitives),
/// or its [`material`](GlbMesh::material)) is a `usemtl NAME` group; the
/// library that defines the names comes from [`export_obj_mtl`].
/// Errors: the same as [`export_glb`](crate::export_glb) (lengths, index range,
/// non-finite values); nothing is produced then.
pub fn export_obj(meshes: &[GlbMesh<'_>]) -> Result<String, ExportError> {
    obj_string(meshes, None)
}

/// Writes meshes as Wavefront OBJ text to `w`: exactly what [`export_obj`]
/// returns, a block of 64 KiB to about 300 KB at a time, so that a large
/// mesh costs its own arrays and no copy of the file's text. When the
/// current rayon pool has several threads, they make the next blocks of a
/// large mesh while this thread writes; the bytes are the same at any
/// thread count.
///
/// Errors: as [`export_obj`], checked before anything is written, and
/// [`ExportError::Write`] when `w` fails.
pub fn write_obj<W: std::io::Write + ?Sized>(
    meshes: &[GlbMesh<'_>],
    w: &mut W,
) -> Result<(), ExportError> {
    obj_text(meshes, None, &mut |text: &str| {
        w.write_all(text.as_bytes()).map_err(ExportError::Write)
    })
}

fn obj_string(meshes: &[GlbMesh<'_>], mtllib: Option<&str>) -> Result<String, ExportError> {
    let mut out = String::new();
    obj_text(meshes, mtllib, &mut |text: &str| {
        out.push_str(text);
        Ok(())
    })?;
    Ok(out)
}

/// The OBJ text of `meshes`, handed to `sink` a block at a time (after
/// every mesh has been validated).
fn obj_text(
    meshes: &[GlbMesh<'_>],
    mtllib: Option<&str>,
    sink: &mut dyn FnMut(&str) -> Result<(), ExportError>,
) -> Result<(), ExportError> {
    for (k, m) in meshes.iter().enumerate() {
        m.validate(k)?;
    }
    let mut obj = ObjWriter::new(material_names(meshes), mtllib, sink);
    for (k, m) in meshes.iter().enumerate() {
        obj.object(m.name, k);
        obj.part(m)?;
    }
    obj.finish()
}

/// Appends one `TAG x y ...` line of numbers.
fn vector_line(
    s: &mut String,
    num: &mut Numbers,
    tag: &str,
    values: impl IntoIterator<Item = f32>,
) {
    s.push_str(tag);
    for c in values {
        s.push(' ');
        num.push_f32(s, c);
    }
    s.push('\n');
}

/// OBJ text written as it is made, a block at a time (64 KiB, or pieces of
/// [`PIECE_RECORDS`](Self::PIECE_RECORDS) records of a large mesh): a
/// header, then objects ([`object`](Self::object)) whose vertices and
/// faces may come in several parts ([`part`](Self::part)), each part's
/// faces indexing its own vertices.
pub(crate) struct ObjWriter<'s, 'a> {
    s: String,
    sink: &'s mut dyn FnMut(&str) -> Result<(), ExportError>,
    /// The materials `usemtl` may name, with their names.
    names: Vec<(GlbMaterial<'a>, String)>,
    fallback: String,
    /// The 1-based index of the next vertex.
    base: u64,
}

impl<'s, 'a> ObjWriter<'s, 'a> {
    const BLOCK: usize = 64 * 1024;
    /// Records per piece of a large mesh's text (about 300 KB).
    const PIECE_RECORDS: usize = 8 * 1024;

    /// Starts the text: a comment and the `mtllib` line. `names` are the
    /// materials the parts may use, named as [`material_names`] names them.
    pub fn new(
        names: Vec<(GlbMaterial<'a>, String)>,
        mtllib: Option<&str>,
        sink: &'s mut dyn FnMut(&str) -> Result<(), ExportError>,
    ) -> Self {
        let mut s = String::with_capacity(Self::BLOCK + 256);
        s.push_str("# written by isoterra\n");
        if let Some(lib) = mtllib {
            let _ = writeln!(s, "mtllib {lib}");
        }
        let fallback = fallback_name(&names);
        ObjWriter {
            s,
            sink,
            names,
            fallback,
            base: 1,
        }
    }

    /// Hands the text on once it holds a block.
    fn flush(&mut self) -> Result<(), ExportError> {
        if self.s.len() >= Self::BLOCK {
            (self.sink)(&self.s)?;
            self.s.clear();
        }
        Ok(())
    }

    /// Starts object `name` (whitespace becomes `_`; an empty name becomes
    /// `mesh_K`).
    pub fn object(&mut self, name: &str, k: usize) {
        // Writing into a String cannot fail.
        if name.is_empty() {
            let _ = writeln!(self.s, "o mesh_{k}");
        } else {
            let name: String = name
                .chars()
                .map(|c| if c.is_whitespace() { '_' } else { c })
                .collect();
            let _ = writeln!(self.s, "o {name}");
        }
    }

    /// Writes the vertices and faces of a validated mesh into the current
    /// object.
    pub fn part(&mut self, m: &GlbMesh<'_>) -> Result<(), ExportError> {
        let t = m.translation.unwrap_or([0.0; 3]);
        let (positions, normals, uvs) = (m.positions, m.normals, m.uvs);
        self.records(positions.len(), |i, s, num| {
            vector_line(s, num, "v", (0..3).map(|k| positions[i][k] + t[k]));
        })?;
        self.records(normals.len(), |i, s, num| {
            vector_line(s, num, "vn", normals[i]);
        })?;
        self.records(uvs.len(), |i, s, num| vector_line(s, num, "vt", uvs[i]))?;
        let (has_n, has_t) = (!m.normals.is_empty(), !m.uvs.is_empty());
        let base = self.base;
        for range in m.ranges() {
            if !self.names.is_empty() {
                let name = range
                    .material
                    .and_then(|mat| self.names.iter().find(|(x, _)| *x == mat))
                    .map_or(self.fallback.as_str(), |(_, n)| n.as_str());
                let _ = writeln!(self.s, "usemtl {name}");
            }
            let (a, e) = (range.start as usize, (range.start + range.count) as usize);
            let tris = &m.indices[a..e];
            self.records(tris.len() / 3, |f, s, num| {
                s.push('f');
                for &i in &tris[3 * f..3 * f + 3] {
                    let i = num.int.format(base + u64::from(i));
                    s.push(' ');
                    s.push_str(i);
                    match (has_t, has_n) {
                        (true, true) => {
                            for _ in 0..2 {
                                s.push('/');
                                s.push_str(i);
                            }
                        }
                        (false, true) => {
                            s.push_str("//");
                            s.push_str(i);
                        }
                        (true, false) => {
                            s.push('/');
                            s.push_str(i);
                        }
                        (false, false) => {}
                    }
                }
                s.push('\n');
            })?;
        }
        self.base += m.positions.len() as u64;
        Ok(())
    }

    /// Records `0..n` of one kind, each appended by `record(i, s, num)`:
    /// into the current block when they are few, otherwise after it, in
    /// pieces of [`PIECE_RECORDS`](Self::PIECE_RECORDS) made on the rayon
    /// pool's threads when it has several (the same text at any count).
    fn records<F>(&mut self, n: usize, record: F) -> Result<(), ExportError>
    where
        F: Fn(usize, &mut String, &mut Numbers) + Sync,
    {
        if n <= Self::PIECE_RECORDS {
            let mut num = Numbers::default();
            for i in 0..n {
                record(i, &mut self.s, &mut num);
                self.flush()?;
            }
            return Ok(());
        }
        (self.sink)(&self.s)?;
        self.s.clear();
        let piece = |k: usize, s: &mut String| {
            s.clear();
            let mut num = Numbers::default();
            let end = ((k + 1) * Self::PIECE_RECORDS).min(n);
            for i in k * Self::PIECE_RECORDS..end {
                record(i, s, &mut num);
            }
        };
        let sink = &mut *self.sink;
        crate::text::ordered_pieces(
            n.div_ceil(Self::PIECE_RECORDS),
            &piece,
            &mut |s: &String| sink(s),
        )
    }

    /// Hands on the rest of the text.
    pub fn finish(self) -> Result<(), ExportError> {
        (self.sink)(&self.s)
    }
}
