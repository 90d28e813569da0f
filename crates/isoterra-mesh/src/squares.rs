//! Marching squares: fill mesh + contour segments in one pass.

use isoterra_field::{Field2, MaterialGrid};

use crate::MeshError;
use crate::cells::CellRect;
use crate::key::EdgeKey;
use crate::scan::{NoSegs, NoTris, RowScratch, ScanInput, SegSink, TriSink};

/// Options for [`MarchingSquares`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
#[non_exhaustive]
pub struct SquaresOptions {
    /// Iso level; a node is solid when `value >= iso`. Must be finite. Default value: `0.0`.
    pub iso: f32,
    /// World units per texture repeat (UV = world position / uv_scale). Must be
    /// finite and greater than zero. Default value: `1.0`.
    pub uv_scale: f32,
    /// Emit the fill mesh. Default value: `true`.
    pub fill: bool,
    /// Emit contour segments. Default value: `true`.
    pub segments: bool,
    /// Global node coordinates of the field's node `(0, 0)`, added to node
    /// coordinates when forming [`EdgeKey`]s. Use it when a chunk is stored as its
    /// own `Field2` so that keys stay global; positions still come from the
    /// field's origin. Default value: `[0, 0]`.
    pub key_offset: [u32; 2],
}

/// A fill mesh at z = 0, normals +z, counter-clockwise triangles.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FillMesh {
    /// Vertex positions `[x, y, 0]` in world units.
    pub positions: Vec<[f32; 3]>,
    /// Vertex normals, all `[0, 0, 1]`.
    pub normals: Vec<[f32; 3]>,
    /// Texture coordinates, world position / uv_scale.
    pub uvs: Vec<[f32; 2]>,
    /// Triangle list.
    pub indices: Vec<u32>,
    /// Index ranges per material (empty when no material grid was given).
    pub submeshes: Vec<Submesh>,
}

/// An index range of a [`FillMesh`] drawn with one material.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Submesh {
    /// Material id.
    pub material: u8,
    /// First index in `indices`.
    pub start: u32,
    /// Number of indices.
    pub count: u32,
}

/// Contour segments, solid on the left of each directed segment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Segments {
    /// Points in world units.
    pub points: Vec<[f32; 2]>,
    /// The global key of each point.
    pub keys: Vec<EdgeKey>,
    /// Directed segments as index pairs into `points`.
    pub segments: Vec<[u32; 2]>,
}

impl Segments {
    /// Clears every buffer, keeping its memory.
    pub fn clear(&mut self) {
        self.points.clear();
        self.keys.clear();
        self.segments.clear();
    }
}

impl FillMesh {
    /// Clears every buffer, keeping its memory.
    pub fn clear(&mut self) {
        self.positions.clear();
        self.normals.clear();
        self.uvs.clear();
        self.indices.clear();
        self.submeshes.clear();
    }

    /// Number of triangles.
    pub fn triangle_count(&self) -> usize {
        self.indices.len() / 3
    }
}

/// What one meshing call produces; `reset` keeps the memory.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SquaresOutput {
    /// The fill mesh.
    pub fill: FillMesh,
    /// The contour segments.
    pub segments: Segments,
}

/// A triangle strip mesh along contours (a grass rim): u runs along the
/// contour, v across it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StripMesh {
    /// Vertex positions `[x, y, 0]`.
    pub positions: Vec<[f32; 3]>,
    /// Texture coordinates: `u` = arc length / width, `v` = 0 on the contour, 1 on
    /// the inner edge.
    pub uvs: Vec<[f32; 2]>,
    /// Triangle list (counter-clockwise).
    pub indices: Vec<u32>,
}

impl StripMesh {
    /// Clears every buffer, keeping its memory.
    pub fn clear(&mut self) {
        self.positions.clear();
        self.uvs.clear();
        self.indices.clear();
    }
}

/// A reusable marching squares mesher.
///
/// It owns per-row scratch buffers; after the first call on a given size, a call
/// that reuses its [`SquaresOutput`] allocates nothing.
///
/// # Contract
///
/// * **Sign.** A node is solid when `value >= iso`; a value exactly at `iso` is solid.
/// * **Cells.** Cell `(x, y)` has corners `c0 = (x, y)`, `c1 = (x+1, y)`,
///   `c2 = (x+1, y+1)`, `c3 = (x, y+1)`; corner `ck` sets bit `k` of the case index.
/// * **Edge points.** A crossed edge gets one point, interpolated from its
///   lower-index node `a` to its higher-index node `b`:
///   `t = clamp((iso - v_a) / (v_b - v_a), 0, 1)` (in `f64`), and the coordinate along
///   the edge is `origin + (index_a + t) * cell_size`, evaluated in `f64` and rounded
///   once to `f32`. Nodes use the same formula with `t = 0`. Every chunk that meshes a
///   shared edge therefore computes bit-identical positions.
/// * **Saddles.** Cases 5 and 10 are decided once per cell: when the average of
///   the four corners is `>= iso` the two solid corners are connected. The fill
///   mesh and the contour use the same decision.
/// * **Fill.** The solid part of a cell is convex; it is triangulated as a fan of
///   its solid corners and crossed-edge points in counter-clockwise order (normal
///   `+z`, z = 0). A separated saddle gives two corner triangles.
/// * **Welding.** Vertices are shared through integer keys (see [`EdgeKey`]); within
///   one call they are welded through per-row arrays.
/// * **Contours.** Every directed segment has the solid on its left, so closed
///   loops run counter-clockwise around solid and clockwise around holes.
/// * **Chunks.** Meshing the cells `[x0, x1) x [y0, y1)` reads nodes
///   `[x0, x1] x [y0, y1]` (one extra row and column: the apron). A chunk of `N`
///   cells at chunk coordinate `c` meshes cells `[c*N, c*N + N)`.
///
/// ```text
///   c3 ---- e2 ---- c2      e0: horizontal edge (x, y)    e2: horizontal edge (x, y+1)
///   |                |      e3: vertical edge (x, y)      e1: vertical edge (x+1, y)
///   e3   cell (x,y) e1
///   |                |      y up, x right; every edge is interpolated from its
///   c0 ---- e0 ---- c1      left/bottom node to its right/top node
/// ```
///
/// ```
/// use isoterra_field::Field2;
/// use isoterra_mesh::{CellRect, MarchingSquares, SquaresOptions, SquaresOutput};
///
/// // A 3x3 field with one solid node in the middle.
/// let field = Field2::from_fn(3, 3, |x, y| if (x, y) == (1, 1) { 1.0 } else { -1.0 }).unwrap();
/// let mut mesher = MarchingSquares::new();
/// let mut out = SquaresOutput::default();
/// mesher
///     .mesh(&field, None, CellRect::whole(&field), &SquaresOptions::DEFAULT, &mut out)
///     .unwrap();
/// assert_eq!(out.fill.triangle_count(), 4); // a diamond, one triangle per cell
/// assert_eq!(out.segments.segments.len(), 4); // one closed loop
/// ```
#[derive(Debug, Default, Clone)]
pub struct MarchingSquares {
    rows: RowScratch,
    per_material: Vec<Vec<u32>>,
}

impl SquaresOptions {
    /// The defaults.
    pub const DEFAULT: Self = SquaresOptions {
        iso: 0.0,
        uv_scale: 1.0,
        fill: true,
        segments: true,
        key_offset: [0, 0],
    };

    /// Sets [`iso`](Self::iso).
    pub const fn with_iso(mut self, iso: f32) -> Self {
        self.iso = iso;
        self
    }

    /// Sets [`uv_scale`](Self::uv_scale).
    pub const fn with_uv_scale(mut self, uv_scale: f32) -> Self {
        self.uv_scale = uv_scale;
        self
    }

    /// Sets [`fill`](Self::fill).
    pub const fn with_fill(mut self, fill: bool) -> Self {
        self.fill = fill;
        self
    }

    /// Sets [`segments`](Self::segments).
    pub const fn with_segments(mut self, segments: bool) -> Self {
        self.segments = segments;
        self
    }

    /// Sets [`key_offset`](Self::key_offset).
    pub const fn with_key_offset(mut self, key_offset: [u32; 2]) -> Self {
        self.key_offset = key_offset;
        self
    }
}

impl Default for SquaresOptions {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl SquaresOutput {
    /// Clears every buffer, keeping its memory.
    pub fn reset(&mut self) {
        self.fill.clear();
        self.segments.clear();
    }
}

/// Writes contour points and segments into a [`Segments`].
struct SegOut<'a>(&'a mut Segments);

impl SegSink for SegOut<'_> {
    const ACTIVE: bool = true;
    #[inline(always)]
    fn point(&mut self, p: [f32; 2], key: EdgeKey) -> u32 {
        let id = self.0.points.len() as u32;
        self.0.points.push(p);
        self.0.keys.push(key);
        id
    }
    #[inline(always)]
    fn segment(&mut self, from: u32, to: u32) {
        self.0.segments.push([from, to]);
    }
}

/// Writes triangles straight into an index list.
struct Direct<'a>(&'a mut Vec<u32>);

impl TriSink for Direct<'_> {
    const MATERIAL: bool = false;
    #[inline(always)]
    fn tri(&mut self, _m: u8, t: [u32; 3]) {
        self.0.extend_from_slice(&t);
    }
    #[inline(always)]
    fn quad(&mut self, _m: u8, [a, b, c, d]: [u32; 4]) {
        self.0.extend_from_slice(&[a, b, c, a, c, d]);
    }
}

/// Collects triangles per material, to be concatenated in material order.
struct PerMaterial<'a>(&'a mut [Vec<u32>]);

impl TriSink for PerMaterial<'_> {
    const MATERIAL: bool = true;
    #[inline(always)]
    fn tri(&mut self, m: u8, t: [u32; 3]) {
        self.0[m as usize].extend_from_slice(&t);
    }
    #[inline(always)]
    fn quad(&mut self, m: u8, [a, b, c, d]: [u32; 4]) {
        self.0[m as usize].extend_from_slice(&[a, b, c, a, c, d]);
    }
}

/// Checks a cell rectangle against a field.
pub(crate) fn check_cells(field: &Field2, cells: CellRect) -> Result<(), MeshError> {
    let (w, h) = (field.width(), field.height());
    if cells.x0 > cells.x1 || cells.y0 > cells.y1 || cells.x1 > w - 1 || cells.y1 > h - 1 {
        return Err(MeshError::RegionOutOfBounds {
            x0: cells.x0,
            y0: cells.y0,
            x1: cells.x1,
            y1: cells.y1,
            width: w,
            height: h,
        });
    }
    Ok(())
}

/// Checks an iso level.
pub(crate) fn check_iso(iso: f32) -> Result<(), MeshError> {
    if !iso.is_finite() {
        return Err(MeshError::param("iso", iso, "must be finite"));
    }
    Ok(())
}

impl MarchingSquares {
    /// A mesher with empty scratch buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Meshes the cells of `cells` of `field` into `out` (which is reset first).
    ///
    /// Produces the fill mesh (when [`SquaresOptions::fill`]) and the contour
    /// segments (when [`SquaresOptions::segments`]) in one pass. Vertices are
    /// emitted row by row; solid nodes and crossed edges each become exactly one
    /// fill vertex, and crossed edges each become one contour point with its
    /// global [`EdgeKey`].
    ///
    /// With a material grid, each cell's triangles take the material that is most
    /// common among the cell's *solid* corners (ties go to the smallest id); the
    /// indices are grouped per material and [`FillMesh::submeshes`] lists the
    /// non-empty groups sorted by material id.
    ///
    /// # Errors
    ///
    /// [`MeshError::RegionOutOfBounds`] when `cells` does not fit the field,
    /// [`MeshError::InvalidParameter`] for a non-finite `iso`, a `uv_scale` that is
    /// not finite and positive, a `key_offset` that overflows the key range, or
    /// a fill with materials of more cells than 32-bit submesh ranges hold
    /// (357,913,941: four triangles a cell),
    /// [`MeshError::MaterialSizeMismatch`] when the material grid's size differs
    /// from the field's. On error `out` is left untouched.
    pub fn mesh(
        &mut self,
        field: &Field2,
        materials: Option<&MaterialGrid>,
        cells: CellRect,
        options: &SquaresOptions,
        out: &mut SquaresOutput,
    ) -> Result<(), MeshError> {
        check_iso(options.iso)?;
        if !(options.uv_scale.is_finite() && options.uv_scale > 0.0) {
            return Err(MeshError::param(
                "uv_scale",
                options.uv_scale,
                "must be finite and greater than zero",
            ));
        }
        check_cells(field, cells)?;
        let [ox, oy] = options.key_offset;
        if ox.checked_add(cells.x1).is_none() || oy as u64 + cells.y1 as u64 > EdgeKey::MAX_Y as u64
        {
            return Err(MeshError::param(
                "key_offset",
                format!("{:?}", options.key_offset),
                "global node coordinates must fit the key range (x <= 2^32-1, y <= 2^30-1)",
            ));
        }
        if options.fill && materials.is_some() {
            check_material_fill(cells)?;
        }
        if let Some(m) = materials
            && (m.width() != field.width() || m.height() != field.height())
        {
            return Err(MeshError::MaterialSizeMismatch {
                width: field.width(),
                height: field.height(),
                got_w: m.width(),
                got_h: m.height(),
            });
        }

        // A fresh output (no memory yet, what a one-shot call passes) is
        // sized once from a counting pass over the packed rows, so it does
        // not grow, copy and fault its way up as it fills; a reused one
        // keeps the memory it has.
        let fresh = out.fill.positions.capacity() == 0
            && out.fill.indices.capacity() == 0
            && out.segments.points.capacity() == 0;
        out.reset();
        let origin = field.origin();
        let input = ScanInput {
            values: field.values(),
            width: field.width() as usize,
            iso: options.iso,
            origin: [origin[0] as f64, origin[1] as f64],
            cell_size: field.cell_size() as f64,
            cells,
            key_offset: options.key_offset,
            materials: materials.map(|m| m.ids()),
        };
        if fresh && (options.fill || options.segments) {
            let c = self.rows.count(&input);
            if options.fill {
                let n = c.fill_vertices();
                crate::huge_pages::reserve_exact(&mut out.fill.positions, n);
                crate::huge_pages::reserve_exact(&mut out.fill.normals, n);
                crate::huge_pages::reserve_exact(&mut out.fill.uvs, n);
                if materials.is_none() {
                    crate::huge_pages::reserve_exact(&mut out.fill.indices, 3 * c.max_triangles());
                }
            }
            if options.segments {
                crate::huge_pages::reserve_exact(&mut out.segments.points, c.crossed_edges);
                crate::huge_pages::reserve_exact(&mut out.segments.keys, c.crossed_edges);
                crate::huge_pages::reserve_exact(&mut out.segments.segments, c.segments());
            }
        }
        let fill = &mut out.fill;
        let segs = &mut out.segments;
        let rows = &mut self.rows;
        match (options.fill, options.segments, materials.is_some()) {
            (false, false, _) => {}
            (false, true, _) => rows.scan::<false, _, _>(
                &input,
                &mut fill.positions,
                &mut SegOut(segs),
                &mut NoTris,
            ),
            (true, true, false) => rows.scan::<true, _, _>(
                &input,
                &mut fill.positions,
                &mut SegOut(segs),
                &mut Direct(&mut fill.indices),
            ),
            (true, false, false) => rows.scan::<true, _, _>(
                &input,
                &mut fill.positions,
                &mut NoSegs,
                &mut Direct(&mut fill.indices),
            ),
            (true, with_segments, true) => {
                if self.per_material.len() < 256 {
                    self.per_material.resize_with(256, Vec::new);
                }
                let mut sink = PerMaterial(&mut self.per_material);
                if with_segments {
                    rows.scan::<true, _, _>(
                        &input,
                        &mut fill.positions,
                        &mut SegOut(segs),
                        &mut sink,
                    );
                } else {
                    rows.scan::<true, _, _>(&input, &mut fill.positions, &mut NoSegs, &mut sink);
                }
                for (m, list) in self.per_material.iter_mut().enumerate() {
                    if list.is_empty() {
                        continue;
                    }
                    fill.submeshes.push(Submesh {
                        material: m as u8,
                        start: fill.indices.len() as u32,
                        count: list.len() as u32,
                    });
                    fill.indices.extend_from_slice(list);
                    list.clear();
                }
            }
        }
        if options.fill {
            let n = fill.positions.len();
            fill.normals.resize(n, [0.0, 0.0, 1.0]);
            let s = options.uv_scale;
            fill.uvs
                .extend(fill.positions.iter().map(|p| [p[0] / s, p[1] / s]));
        }
        Ok(())
    }
}

/// A fill with materials records each material's index range in 32 bits
/// ([`Submesh`]): the indices of at most four triangles a cell must fit.
fn check_material_fill(cells: CellRect) -> Result<(), MeshError> {
    let count = cells.width() as u64 * cells.height() as u64;
    if 12 * count > u32::MAX as u64 {
        return Err(MeshError::param(
            "cells",
            format!("{}x{}", cells.width(), cells.height()),
            "too many cells for 32-bit submesh ranges: mesh a material fill in smaller rectangles",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn options_setters_and_defaults() {
        let o = SquaresOptions::DEFAULT
            .with_iso(0.5)
            .with_uv_scale(8.0)
            .with_fill(false)
            .with_segments(true)
            .with_key_offset([3, 4]);
        assert_eq!(
            (o.iso, o.uv_scale, o.fill, o.segments, o.key_offset),
            (0.5, 8.0, false, true, [3, 4])
        );
        assert_eq!(SquaresOptions::default(), SquaresOptions::DEFAULT);
    }

    #[test]
    fn a_material_fill_fits_32_bit_ranges() {
        assert!(check_material_fill(CellRect::new(0, 0, 16384, 16384)).is_ok());
        assert!(check_material_fill(CellRect::new(0, 0, 18918, 18918)).is_ok());
        let e = check_material_fill(CellRect::new(0, 0, 18919, 18919)).unwrap_err();
        assert!(e.to_string().contains("smaller rectangles"), "{e}");
        assert!(check_material_fill(CellRect::new(0, 0, 32767, 32767)).is_err());
    }

    #[test]
    fn cell_rect_helpers() {
        let f = Field2::new(5, 3, 0.0).unwrap();
        let r = CellRect::whole(&f);
        assert_eq!(r, CellRect::new(0, 0, 4, 2));
        assert_eq!((r.width(), r.height(), r.is_empty()), (4, 2, false));
        assert!(CellRect::new(2, 0, 2, 2).is_empty());
        assert!(check_cells(&f, r).is_ok());
        assert!(check_cells(&f, CellRect::new(0, 0, 5, 2)).is_err());
        assert!(check_iso(f32::NEG_INFINITY).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        /// The counting pass predicts the scan: fill vertices, contour
        /// points and segments exactly, triangles from above; and a fresh
        /// output (sized by it) gives the same mesh as a reused one.
        #[test]
        fn counts_predict_the_scan_and_fresh_equals_reused(
            (w, h, values) in (2u32..70, 2u32..12).prop_flat_map(|(w, h)| {
                (
                    Just(w),
                    Just(h),
                    prop::collection::vec(
                        prop_oneof![3 => -1.0f32..1.0, 1 => Just(0.0f32), 1 => Just(1.0f32)],
                        (w * h) as usize,
                    ),
                )
            }),
            fill in any::<bool>(),
            segments in any::<bool>(),
        ) {
            let field = Field2::from_values(w, h, values).unwrap();
            let cells = CellRect::whole(&field);
            let options = SquaresOptions::DEFAULT.with_fill(fill).with_segments(segments);
            let mut fresh = SquaresOutput::default();
            MarchingSquares::new()
                .mesh(&field, None, cells, &options, &mut fresh)
                .unwrap();
            let mut mesher = MarchingSquares::new();
            let mut reused = SquaresOutput::default();
            // Warm it on another field first, so its buffers hold memory.
            let other = Field2::new(w, h, 1.0).unwrap();
            mesher.mesh(&other, None, cells, &SquaresOptions::DEFAULT, &mut reused).unwrap();
            mesher.mesh(&field, None, cells, &options, &mut reused).unwrap();
            prop_assert_eq!(&fresh.fill.positions, &reused.fill.positions);
            prop_assert_eq!(&fresh.fill.indices, &reused.fill.indices);
            prop_assert_eq!(&fresh.fill.uvs, &reused.fill.uvs);
            prop_assert_eq!(&fresh.segments.points, &reused.segments.points);
            prop_assert_eq!(&fresh.segments.keys, &reused.segments.keys);
            prop_assert_eq!(&fresh.segments.segments, &reused.segments.segments);

            let input = ScanInput {
                values: field.values(),
                width: w as usize,
                iso: 0.0,
                origin: [0.0, 0.0],
                cell_size: 1.0,
                cells,
                key_offset: [0, 0],
                materials: None,
            };
            let c = RowScratch::default().count(&input);
            let mut all = SquaresOutput::default();
            MarchingSquares::new()
                .mesh(&field, None, cells, &SquaresOptions::DEFAULT, &mut all)
                .unwrap();
            prop_assert_eq!(c.fill_vertices(), all.fill.positions.len());
            prop_assert_eq!(c.crossed_edges, all.segments.points.len());
            prop_assert_eq!(c.segments(), all.segments.segments.len());
            prop_assert!(c.max_triangles() >= all.fill.triangle_count());
            // The fresh output was sized once: no vertex list grew.
            if fill {
                prop_assert_eq!(fresh.fill.positions.capacity(), fresh.fill.positions.len());
                prop_assert!(fresh.fill.indices.capacity() >= fresh.fill.indices.len());
            }
            if segments {
                prop_assert_eq!(fresh.segments.points.capacity(), fresh.segments.points.len());
                prop_assert_eq!(fresh.segments.segments.capacity(), fresh.segments.segments.len());
            }
        }
    }

    #[test]
    fn reset_keeps_capacity() {
        let mut out = SquaresOutput::default();
        out.fill.indices.extend_from_slice(&[1, 2, 3]);
        out.segments.points.push([0.0, 0.0]);
        let cap = out.fill.indices.capacity();
        out.reset();
        assert!(out.fill.indices.is_empty() && out.segments.points.is_empty());
        assert_eq!(out.fill.indices.capacity(), cap);
    }
}
