//! `.glb` export of a map's meshes: terrain with vertex colours from the
//! splat palette, water as a separate translucent mesh.

use std::collections::BTreeMap;

use isoterra_field::map::{MAX_TEXTURES, MapLayers, Splat};
use isoterra_mesh::{
    CellRect, MapMeshBuffers, MapMeshOptions, MapMeshOutput, MapMesher, WaterBuffers,
};

use crate::gltf::{AttributeKind, MeshShape, PartShape, bounds, write_glb_parts};
use crate::obj::{ObjWriter, check_mtl_file, mtl_of};
use crate::{
    ExportError, GlbAttribute, GlbAttributeData, GlbMaterial, GlbMesh, GlbPrimitive, ObjFiles,
    export_glb, export_obj_mtl,
};

/// The fixed colour of each of the 16 splat textures (linear RGB), used for
/// vertex colours when no textures are at hand:
///
/// | id | texture  | id | texture     |
/// |----|----------|----|-------------|
/// | 0  | grass    | 8  | snow        |
/// | 1  | dirt     | 9  | ice         |
/// | 2  | rock     | 10 | lava rock   |
/// | 3  | sand     | 11 | dark grass  |
/// | 4  | gravel   | 12 | mud         |
/// | 5  | dry grass| 13 | blight      |
/// | 6  | flowers  | 14 | road        |
/// | 7  | moss     | 15 | tiles       |
pub const MAP_PALETTE: [[f32; 3]; MAX_TEXTURES as usize] = [
    [0.20, 0.45, 0.12],
    [0.40, 0.28, 0.16],
    [0.42, 0.40, 0.38],
    [0.80, 0.72, 0.50],
    [0.55, 0.53, 0.50],
    [0.62, 0.58, 0.28],
    [0.45, 0.50, 0.30],
    [0.22, 0.35, 0.16],
    [0.92, 0.94, 0.96],
    [0.70, 0.82, 0.90],
    [0.20, 0.16, 0.15],
    [0.10, 0.25, 0.08],
    [0.30, 0.22, 0.14],
    [0.35, 0.20, 0.35],
    [0.50, 0.45, 0.38],
    [0.65, 0.62, 0.58],
];

/// The names of the [`MAP_PALETTE`] textures, by texture id (the table above).
pub const MAP_TEXTURE_NAMES: [&str; MAX_TEXTURES as usize] = [
    "grass",
    "dirt",
    "rock",
    "sand",
    "gravel",
    "dry grass",
    "flowers",
    "moss",
    "snow",
    "ice",
    "lava rock",
    "dark grass",
    "mud",
    "blight",
    "road",
    "tiles",
];

/// The colour of cliff walls, mixed in by the mesh's blend attribute.
pub const CLIFF_COLOR: [f32; 3] = [0.33, 0.30, 0.27];

/// The water material's base colour (linear RGBA; alpha 0.6, blended).
pub const WATER_COLOR: [f32; 4] = [0.10, 0.30, 0.55, 0.6];

/// The vertex colour of a splat: the weighted mean of its textures'
/// [`MAP_PALETTE`] colours (texture `ids[0]` when every weight is 0), then
/// mixed towards [`CLIFF_COLOR`] by `blend` (0 ground, 1 cliff wall). Alpha is 1.
pub fn splat_color(splat: Splat, blend: f32) -> [f32; 4] {
    let mut c = [0f32; 3];
    let mut total = 0f32;
    for k in 0..4 {
        let w = splat.weights[k] as f32;
        let p = MAP_PALETTE[(splat.ids[k] % MAX_TEXTURES) as usize];
        for j in 0..3 {
            c[j] += w * p[j];
        }
        total += w;
    }
    if total > 0.0 {
        c = c.map(|v| v / total);
    } else {
        c = MAP_PALETTE[(splat.ids[0] % MAX_TEXTURES) as usize];
    }
    let t = if blend.is_finite() {
        blend.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let mut out = [0f32, 0.0, 0.0, 1.0];
    for j in 0..3 {
        out[j] = (c[j] + (CLIFF_COLOR[j] - c[j]) * t).clamp(0.0, 1.0);
    }
    out
}

/// The splat weights of a vertex as 16 weights, one per texture, that sum
/// to 1 (texture `ids[0]` alone when every weight is 0).
fn texture_weights(splat: Splat) -> [f32; MAX_TEXTURES as usize] {
    let mut w = [0f32; MAX_TEXTURES as usize];
    let total: f32 = splat.weights.iter().map(|&v| f32::from(v)).sum();
    if total > 0.0 {
        for k in 0..4 {
            w[usize::from(splat.ids[k] % MAX_TEXTURES)] += f32::from(splat.weights[k]) / total;
        }
    } else {
        w[usize::from(splat.ids[0] % MAX_TEXTURES)] = 1.0;
    }
    w.map(|v| v.clamp(0.0, 1.0))
}

/// True for a triangle of a cliff or chasm wall: walls join the two
/// vertices of each rim point, one above the other, so they are vertical.
fn is_wall(p: [[f32; 3]; 3]) -> bool {
    let u = [p[1][0] - p[0][0], p[1][1] - p[0][1], p[1][2] - p[0][2]];
    let v = [p[2][0] - p[0][0], p[2][1] - p[0][1], p[2][2] - p[0][2]];
    let n = [
        u[1] * v[2] - u[2] * v[1],
        u[2] * v[0] - u[0] * v[2],
        u[0] * v[1] - u[1] * v[0],
    ];
    let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
    len > 0.0 && n[1].abs() <= 1e-4 * len
}

/// The terrain split for export: ground tops keep the mesher's vertices
/// (UV `(x, z)`); wall triangles get vertices of their own with UV `(u, y)`,
/// `u` the distance along the rim.
struct TerrainParts {
    positions: Vec<[f32; 3]>,
    normals: Vec<[f32; 3]>,
    uvs: Vec<[f32; 2]>,
    colors: Vec<[f32; 4]>,
    splat: Vec<Splat>,
    /// Ground triangles first, then wall triangles.
    indices: Vec<u32>,
    ground: u32,
}

/// A rim point: the bits of its x and z (a wall's upper and lower vertex
/// share them exactly: they are one rim point at two heights).
type RimKey = (u32, u32);

fn rim_key(p: [f32; 3]) -> RimKey {
    (p[0].to_bits(), p[2].to_bits())
}

/// The distance along the rims at each rim point of the band meshed last,
/// so that a rim that runs on into the next band goes on from there.
type RimCarry = BTreeMap<RimKey, f32>;

/// Splits a terrain mesh into ground and walls, in place: its vertex lists
/// become the parts' (wall vertices get copies appended), its triangle list
/// is reordered ground first, and only the UVs and colours are new, so a
/// whole map's mesh is never held twice.
///
/// `carry` holds the distance along the rims at the rim points of the band
/// meshed before this one (empty for a mesh made whole); walks along the
/// rims start there, so a rim that crosses from one band into the next
/// keeps counting. It is replaced by this mesh's.
fn split_terrain(t: MapMeshBuffers, carry: &mut RimCarry) -> TerrainParts {
    // Ground vertices at a rim take the ground's colour and the mean normal
    // of the ground around them; the walls get copies below with the
    // wall's (no saw-tooth of wall colour on the ground along the rims).
    // The copies are made first, from the mesh's own normals and blends;
    // the ground's are changed after.
    let tops = t.top_normals();
    let MapMeshBuffers {
        mut positions,
        mut normals,
        mut splat,
        blend,
        mut indices,
        ..
    } = t;
    // Ground triangles moved to the front of the list, walls set aside.
    let mut walls: Vec<[u32; 3]> = Vec::new();
    let mut ground = 0;
    for k in 0..indices.len() / 3 {
        let tri = [indices[3 * k], indices[3 * k + 1], indices[3 * k + 2]];
        if is_wall(tri.map(|i| positions[i as usize])) {
            walls.push(tri);
        } else {
            indices[ground..ground + 3].copy_from_slice(&tri);
            ground += 3;
        }
    }
    indices.truncate(ground);
    // Every list at its final size: the vertices plus a copy of each wall
    // vertex (a map of millions of vertices grows no list by doubling).
    let copies = 3 * walls.len();
    let n = positions.len() + copies;
    let mut uvs = Vec::with_capacity(n);
    uvs.extend(positions.iter().map(|p| [p[0], p[2]]));
    let mut colors = Vec::with_capacity(n);
    colors.extend(splat.iter().zip(&blend).map(|(&s, &b)| splat_color(s, b)));
    positions.reserve_exact(copies);
    normals.reserve_exact(copies);
    splat.reserve_exact(copies);
    indices.reserve_exact(copies);
    let mut out = TerrainParts {
        positions,
        normals,
        uvs,
        colors,
        splat,
        indices,
        ground: ground as u32,
    };
    // The rim segments the walls stand on: the two rim points of each wall
    // triangle. Walking them in key order gives every segment the distance
    // along its rim at both ends (a loop closes with a seam in u).
    let mut segment_of: Vec<Option<(RimKey, RimKey)>> = Vec::with_capacity(walls.len());
    let mut links: BTreeMap<RimKey, Vec<RimKey>> = BTreeMap::new();
    let mut point: BTreeMap<RimKey, [f32; 2]> = BTreeMap::new();
    for w in &walls {
        let mut keys: Vec<RimKey> = w
            .iter()
            .map(|&i| rim_key(out.positions[i as usize]))
            .collect();
        for (k, &i) in keys.iter().zip(w) {
            let p = out.positions[i as usize];
            point.insert(*k, [p[0], p[2]]);
        }
        keys.sort_unstable();
        keys.dedup();
        if keys.len() == 2 {
            let (a, b) = (keys[0], keys[1]);
            let e = links.entry(a).or_default();
            if !e.contains(&b) {
                e.push(b);
                links.entry(b).or_default().push(a);
            }
            segment_of.push(Some((a, b)));
        } else {
            segment_of.push(None);
        }
    }
    let dist = |a: &RimKey, b: &RimKey| {
        let (p, q) = (point[a], point[b]);
        ((q[0] - p[0]).powi(2) + (q[1] - p[1]).powi(2)).sqrt()
    };
    let mut u_at: BTreeMap<RimKey, f32> = BTreeMap::new();
    let mut seg_u: BTreeMap<(RimKey, RimKey), (f32, f32)> = BTreeMap::new();
    // Rims that come from the band before go on from where it left them;
    // then open rims start at an end, loops at their smallest key.
    let carried: Vec<(RimKey, f32)> = carry
        .iter()
        .filter(|(k, _)| links.contains_key(k))
        .map(|(k, u)| (*k, *u))
        .collect();
    for (k, u) in &carried {
        u_at.insert(*k, *u);
    }
    let mut starts: Vec<RimKey> = carried.iter().map(|(k, _)| *k).collect();
    let from_carry = starts.len();
    starts.extend(links.iter().filter(|(_, l)| l.len() == 1).map(|(k, _)| *k));
    starts.extend(links.keys().copied());
    for (n, start) in starts.into_iter().enumerate() {
        if n >= from_carry {
            if u_at.contains_key(&start) {
                continue;
            }
            u_at.insert(start, 0.0);
        }
        let mut stack = vec![start];
        while let Some(a) = stack.pop() {
            let ua = u_at[&a];
            for b in &links[&a] {
                let key = if a < *b { (a, *b) } else { (*b, a) };
                if seg_u.contains_key(&key) {
                    continue;
                }
                let ub = ua + dist(&a, b);
                let pair = if a < *b { (ua, ub) } else { (ub, ua) };
                seg_u.insert(key, pair);
                if !u_at.contains_key(b) {
                    u_at.insert(*b, ub);
                    stack.push(*b);
                }
            }
        }
    }
    for (w, seg) in walls.iter().zip(&segment_of) {
        for &i in w {
            let p = out.positions[i as usize];
            let k = rim_key(p);
            let u = match seg {
                Some((a, b)) => {
                    let (ua, ub) = seg_u[&(*a, *b)];
                    if k == *a { ua } else { ub }
                }
                // Not a strip between two rim points: the distance along x + z.
                None => p[0] + p[2],
            };
            let i = i as usize;
            out.indices.push(out.positions.len() as u32);
            out.positions.push(p);
            out.normals.push(out.normals[i]);
            out.uvs.push([u, p[1]]);
            out.colors.push(splat_color(out.splat[i], blend[i]));
            out.splat.push(out.splat[i]);
        }
    }
    // Now the ground's rim vertices (the original vertices only).
    for (i, top) in tops.iter().enumerate() {
        if let Some(n) = top
            && blend[i] > 0.0
        {
            out.colors[i] = splat_color(out.splat[i], 0.0);
            out.normals[i] = *n;
        }
    }
    *carry = u_at;
    out
}

/// The meshes of a map ready for a mesh file: the terrain split into ground
/// and walls with their UVs and colours, the splat weight groups, and the
/// water's UVs. [`MapParts::meshes`] lends them as [`GlbMesh`]es.
struct MapParts {
    terrain: TerrainParts,
    splat_groups: Vec<Vec<[f32; 4]>>,
    water: WaterBuffers,
    water_uvs: Vec<[f32; 2]>,
}

/// The water's material: [`WATER_COLOR`], blended.
fn water_material() -> GlbMaterial<'static> {
    GlbMaterial::new("water", WATER_COLOR).with_blend(true)
}

/// How many groups of four splat weights (`_SPLAT0`, …) vertices with
/// `splat` need: up to the highest texture any of them weighs.
fn groups_used(splat: &[Splat]) -> usize {
    let used = splat
        .iter()
        .filter_map(|&s| texture_weights(s).iter().rposition(|v| *v > 0.0))
        .max()
        .unwrap_or(0);
    used / 4 + 1
}

/// The names of the splat weight attributes, four textures each.
const SPLAT_NAMES: [&str; 4] = ["_SPLAT0", "_SPLAT1", "_SPLAT2", "_SPLAT3"];

impl MapParts {
    /// The parts of a map mesh: the terrain `t` is split in place (see
    /// [`split_terrain`], which takes and updates `carry`). `groups` is the
    /// number of splat weight groups to make (`None`: as many as the
    /// terrain uses; `Some(0)`: none, for a mesh only measured).
    fn new(
        t: MapMeshBuffers,
        water: WaterBuffers,
        carry: &mut RimCarry,
        groups: Option<usize>,
    ) -> Result<Self, ExportError> {
        if t.splat.len() != t.positions.len() || t.blend.len() != t.positions.len() {
            return Err(ExportError::InvalidMesh {
                mesh: 0,
                name: "terrain".into(),
                what: "colors",
                detail: format!(
                    "{} splats and {} blends for {} positions",
                    t.splat.len(),
                    t.blend.len(),
                    t.positions.len()
                ),
            });
        }
        let terrain = split_terrain(t, carry);
        // The weights four textures at a time, each computed where it is
        // stored (a map of millions of vertices holds no 16-weight array
        // per vertex).
        let splat_groups = (0..groups.unwrap_or_else(|| groups_used(&terrain.splat)))
            .map(|g| {
                terrain
                    .splat
                    .iter()
                    .map(|&s| {
                        let w = texture_weights(s);
                        [w[4 * g], w[4 * g + 1], w[4 * g + 2], w[4 * g + 3]]
                    })
                    .collect()
            })
            .collect();
        let water_uvs = water.positions.iter().map(|p| [p[0], p[2]]).collect();
        Ok(MapParts {
            terrain,
            splat_groups,
            water,
            water_uvs,
        })
    }

    /// The parts of a whole map's mesh (copied: the mesh stays the caller's).
    fn of_mesh(mesh: &MapMeshOutput) -> Result<Self, ExportError> {
        let (t, w) = (mesh.terrain.clone(), mesh.water.clone());
        MapParts::new(t, w, &mut RimCarry::new(), None)
    }

    /// The ground and wall ranges of the terrain with their materials.
    fn primitives(&self) -> [GlbPrimitive<'static>; 2] {
        let t = &self.terrain;
        let walls = t.indices.len() as u32 - t.ground;
        [
            GlbPrimitive::new(0, t.ground, Some(GlbMaterial::new("terrain", [1.0; 4]))),
            GlbPrimitive::new(t.ground, walls, Some(GlbMaterial::new("cliff", [1.0; 4]))),
        ]
    }

    /// The splat weight attributes.
    fn attributes(&self) -> Vec<GlbAttribute<'_>> {
        self.splat_groups
            .iter()
            .zip(SPLAT_NAMES)
            .map(|(g, name)| GlbAttribute::new(name, GlbAttributeData::Vec4(g)))
            .collect()
    }

    /// The terrain mesh and, when there is water, the water mesh.
    fn meshes<'b>(
        &'b self,
        primitives: &'b [GlbPrimitive<'static>],
        attributes: &'b [GlbAttribute<'b>],
    ) -> Vec<GlbMesh<'b>> {
        let t = &self.terrain;
        let mut meshes = vec![
            GlbMesh::new("terrain", &t.positions, &t.indices)
                .with_normals(&t.normals)
                .with_uvs(&t.uvs)
                .with_colors(&t.colors)
                .with_primitives(primitives)
                .with_attributes(attributes),
        ];
        let w = &self.water;
        if !w.indices.is_empty() {
            meshes.push(
                GlbMesh::new("water", &w.positions, &w.indices)
                    .with_normals(&w.normals)
                    .with_uvs(&self.water_uvs)
                    .with_material(Some(water_material())),
            );
        }
        meshes
    }
}

/// Writes meshes of a map as `.glb`: a node `terrain` and, when there is
/// water, a node `water`.
///
/// * `terrain` has positions, normals, `COLOR_0` from [`splat_color`],
///   `TEXCOORD_0` and `_SPLAT0`..`_SPLATk` (below), in two primitives: the
///   ground (material `terrain`) with world-space UVs `(x, z)`, and the cliff
///   and chasm walls (material `cliff`) with their own vertices and UVs
///   `(u, y)`: `u` the distance along the rim (continuous along a rim, one
///   seam where a loop closes), `v` the height. Both materials are opaque
///   white, so the vertex colours show; one world unit is one UV unit.
///   Ground vertices on a rim take the ground's colour and the mean normal
///   of the ground around them (the walls' copies keep the wall's), so the
///   ground shows no wedges of wall colour along the rims.
/// * `_SPLATk` (RGBA floats) holds the weights of textures `4k..4k + 3` of
///   the map's 16 (see [`MAP_PALETTE`]), normalised so that a vertex's
///   weights sum to 1 — a splat map an engine blends its own textures with.
///   Groups up to the highest texture the map uses are written (`_SPLAT0`
///   always).
/// * `water` has positions, normals, UVs `(x, z)` and a translucent
///   material `water` of [`WATER_COLOR`] with `alphaMode: BLEND`.
///
/// Errors as [`export_glb`].
pub fn export_map_mesh_glb(mesh: &MapMeshOutput) -> Result<Vec<u8>, ExportError> {
    let parts = MapParts::of_mesh(mesh)?;
    let primitives = parts.primitives();
    let attributes = parts.attributes();
    export_glb(&parts.meshes(&primitives, &attributes))
}

/// Writes meshes of a map as Wavefront OBJ with its material library
/// `mtl_file` (see [`export_obj_mtl`]): the same objects, vertices, normals,
/// UVs and triangles as [`export_map_mesh_glb`], grouped by `usemtl terrain`,
/// `usemtl cliff` and `usemtl water`. OBJ has no place for vertex colours or
/// splat weights; the `.mtl` gives each material its base colour (terrain
/// and cliff take the mean ground and the cliff colour, water is
/// translucent).
///
/// Errors as [`export_obj_mtl`].
pub fn export_map_mesh_obj(mesh: &MapMeshOutput, mtl_file: &str) -> Result<ObjFiles, ExportError> {
    let parts = MapParts::of_mesh(mesh)?;
    let t = &parts.terrain;
    let walls = t.indices.len() as u32 - t.ground;
    let ground = mean_color(&t.colors[..]);
    let cliff = [CLIFF_COLOR[0], CLIFF_COLOR[1], CLIFF_COLOR[2], 1.0];
    let primitives = [
        GlbPrimitive::new(0, t.ground, Some(GlbMaterial::new("terrain", ground))),
        GlbPrimitive::new(t.ground, walls, Some(GlbMaterial::new("cliff", cliff))),
    ];
    export_obj_mtl(&parts.meshes(&primitives, &[]), mtl_file)
}

/// The mean of vertex colours (white for none).
fn mean_color(colors: &[[f32; 4]]) -> [f32; 4] {
    let mut sum = ColorSum::default();
    sum.add(colors);
    sum.mean()
}

/// A sum of vertex colours, made a band at a time.
#[derive(Default)]
struct ColorSum {
    sum: [f64; 3],
    n: u64,
}

impl ColorSum {
    fn add(&mut self, colors: &[[f32; 4]]) {
        for c in colors {
            for (sum, v) in self.sum.iter_mut().zip(c) {
                *sum += f64::from(*v);
            }
        }
        self.n += colors.len() as u64;
    }

    /// The mean colour (white for none).
    fn mean(&self) -> [f32; 4] {
        if self.n == 0 {
            return [1.0; 4];
        }
        let n = self.n as f64;
        [
            (self.sum[0] / n) as f32,
            (self.sum[1] / n) as f32,
            (self.sum[2] / n) as f32,
            1.0,
        ]
    }
}

/// How many cells the map's mesh exports mesh at once by default: the map
/// is meshed and written in bands of whole rows of about this many cells,
/// so an export holds one band's mesh, not the map's.
pub const MAP_EXPORT_BAND_CELLS: u64 = 1 << 20;

/// The bands of rows of at most about `band_cells` cells (at least one
/// row) that cover `map`, in order.
fn bands(map: &MapLayers, band_cells: u64) -> Vec<CellRect> {
    let (w, d) = (map.width_cells(), map.depth_cells());
    let rows = (band_cells / u64::from(w.max(1))).clamp(1, u64::from(d.max(1))) as u32;
    (0..d)
        .step_by(rows as usize)
        .map(|y0| CellRect {
            x0: 0,
            y0,
            x1: w,
            y1: y0.saturating_add(rows).min(d),
        })
        .collect()
}

/// A map meshed one band after the other (see [`bands`]), each band's
/// terrain split into its parts with the rims' distances carried on.
struct BandMesher<'m> {
    map: &'m MapLayers,
    options: &'m MapMeshOptions,
    bands: Vec<CellRect>,
    carry: RimCarry,
}

impl<'m> BandMesher<'m> {
    fn new(
        map: &'m MapLayers,
        options: &'m MapMeshOptions,
        band_cells: u64,
    ) -> Result<Self, ExportError> {
        if band_cells == 0 {
            return Err(ExportError::param(
                "band cells",
                band_cells,
                "a map is exported in bands of at least one row of cells",
            ));
        }
        Ok(BandMesher {
            map,
            options,
            bands: bands(map, band_cells),
            carry: RimCarry::new(),
        })
    }

    /// Band `b` meshed, by a mesher of its own that is gone with its
    /// scratch before the mesh is used (a band's mesh is large, and so is
    /// the scratch).
    fn mesh(&self, b: usize) -> Result<MapMeshOutput, ExportError> {
        let mut out = MapMeshOutput::default();
        MapMesher::new()
            .mesh(self.map, self.bands[b], self.options, &mut out)
            .map_err(|e| ExportError::param("map mesh", e, "the map cannot be meshed"))?;
        Ok(out)
    }

    /// The shapes of band `b`'s terrain and water (`None` without water) in
    /// the file, and the splat weight groups its terrain uses: what
    /// [`band`](Self::band) would make, counted without making it.
    fn shapes(
        &mut self,
        b: usize,
    ) -> Result<(PartShape<'static>, Option<PartShape<'static>>, usize), ExportError> {
        let out = self.mesh(b)?;
        let t = &out.terrain;
        // Each wall triangle gets three vertices of its own, copies of
        // existing ones (the bounds stay).
        let walls = t
            .indices
            .chunks_exact(3)
            .filter(|tri| is_wall([0, 1, 2].map(|k| t.positions[tri[k] as usize])))
            .count() as u32
            * 3;
        let ground = t.indices.len() as u32 - walls;
        let (min, max) = bounds(&t.positions);
        let terrain = PartShape {
            vertices: t.positions.len() + walls as usize,
            normals: true,
            uvs: true,
            colors: true,
            attributes: Vec::new(),
            ranges: [
                GlbPrimitive::new(0, ground, Some(GlbMaterial::new("terrain", [1.0; 4]))),
                GlbPrimitive::new(ground, walls, Some(GlbMaterial::new("cliff", [1.0; 4]))),
            ]
            .into_iter()
            .filter(|p| p.count > 0)
            .collect(),
            min,
            max,
        };
        let w = &out.water;
        let water = (!w.indices.is_empty()).then(|| {
            let (min, max) = bounds(&w.positions);
            PartShape {
                vertices: w.positions.len(),
                normals: true,
                uvs: true,
                colors: false,
                attributes: Vec::new(),
                ranges: vec![GlbPrimitive::new(
                    0,
                    w.indices.len() as u32,
                    Some(water_material()),
                )],
                min,
                max,
            }
        });
        Ok((terrain, water, groups_used(&t.splat)))
    }

    /// The parts of band `b` with `groups` splat weight groups (see
    /// [`MapParts::new`]); bands are to be asked for in order.
    fn band(&mut self, b: usize, groups: Option<usize>) -> Result<MapParts, ExportError> {
        let out = self.mesh(b)?;
        MapParts::new(out.terrain, out.water, &mut self.carry, groups)
    }
}

/// Meshes the whole map with `options` and writes it as `.glb` (see
/// [`export_map_mesh_glb`]; [`write_map_glb`] says how it is meshed).
///
/// Errors: invalid layers or options (from the mesher), or as [`export_glb`].
pub fn export_map_glb(map: &MapLayers, options: &MapMeshOptions) -> Result<Vec<u8>, ExportError> {
    let mut out = Vec::new();
    // The file's size is known before its first byte: reserve it once.
    map_glb_in_bands(map, options, MAP_EXPORT_BAND_CELLS, &mut out, |v, total| {
        v.reserve_exact(total)
    })?;
    Ok(out)
}

/// Meshes the map with `options` and writes it as `.glb` to `w`, in bands
/// of rows of about [`MAP_EXPORT_BAND_CELLS`] cells (see
/// [`write_map_glb_in_bands`]).
///
/// Errors: as [`export_map_glb`], and [`ExportError::Write`] when `w`
/// fails.
pub fn write_map_glb<W: std::io::Write + ?Sized>(
    map: &MapLayers,
    options: &MapMeshOptions,
    w: &mut W,
) -> Result<(), ExportError> {
    write_map_glb_in_bands(map, options, MAP_EXPORT_BAND_CELLS, w)
}

/// Meshes the map with `options` a band of rows of about `band_cells` cells
/// at a time and writes it as `.glb` to `w` as it is encoded: the nodes,
/// attributes and materials of [`export_map_mesh_glb`], with each band a
/// pair of primitives (ground and walls) of the `terrain` mesh, and a
/// primitive of the `water` mesh, of its own vertices. A map of one band
/// gives the bytes of [`export_map_mesh_glb`] of its whole mesh.
///
/// Memory: one band's mesh at a time. The map is meshed twice, once to lay
/// the file out (glTF states every length and bound before the first
/// byte) and once to write it.
///
/// The distance along a rim (the walls' `u`) runs on from one band into
/// the next; a rim that crosses back into a band already written starts
/// again there, as a loop does where it closes.
///
/// Errors: as [`write_map_glb`], and a `band_cells` of 0.
pub fn write_map_glb_in_bands<W: std::io::Write + ?Sized>(
    map: &MapLayers,
    options: &MapMeshOptions,
    band_cells: u64,
    w: &mut W,
) -> Result<(), ExportError> {
    map_glb_in_bands(map, options, band_cells, w, |_, _| {})
}

/// [`write_map_glb_in_bands`], telling `sized` the file's length in bytes
/// before the first one is written.
fn map_glb_in_bands<W: std::io::Write + ?Sized>(
    map: &MapLayers,
    options: &MapMeshOptions,
    band_cells: u64,
    w: &mut W,
    sized: impl FnOnce(&mut W, usize),
) -> Result<(), ExportError> {
    let mut bands = BandMesher::new(map, options, band_cells)?;
    // First pass: the shape of every band's terrain and water.
    let mut terrain = Vec::with_capacity(bands.bands.len());
    let mut water = Vec::with_capacity(bands.bands.len());
    let mut groups = 1;
    for b in 0..bands.bands.len() {
        let (t, w, used) = bands.shapes(b)?;
        groups = groups.max(used);
        terrain.push(t);
        water.push(w);
    }
    let names: Vec<&str> = SPLAT_NAMES[..groups].to_vec();
    for t in &mut terrain {
        t.attributes = names.iter().map(|n| (*n, AttributeKind::Vec4)).collect();
    }
    let any_water = water.iter().any(Option::is_some);
    let empty = PartShape {
        vertices: 0,
        normals: false,
        uvs: false,
        colors: false,
        attributes: Vec::new(),
        ranges: Vec::new(),
        min: [0.0; 3],
        max: [0.0; 3],
    };
    let mut shapes = vec![MeshShape {
        name: "terrain",
        translation: None,
        parts: terrain,
    }];
    let mut order = Vec::with_capacity(2 * bands.bands.len());
    for b in 0..bands.bands.len() {
        order.push((0, b));
        if any_water {
            order.push((1, b));
        }
    }
    if any_water {
        shapes.push(MeshShape {
            name: "water",
            translation: None,
            parts: water
                .into_iter()
                .map(|s| s.unwrap_or_else(|| empty.clone()))
                .collect(),
        });
    }
    // Second pass: each band again, written as it is made.
    let mut current: Option<(usize, MapParts)> = None;
    write_glb_parts(&shapes, &order, w, sized, &mut |k, b, emit| {
        if k == 0 {
            current = Some((b, bands.band(b, Some(groups))?));
        }
        let parts = match &current {
            Some((at, parts)) if *at == b => parts,
            _ => {
                return Err(ExportError::InvalidMesh {
                    mesh: k,
                    name: "water".into(),
                    what: "part",
                    detail: format!("band {b} was asked for out of order"),
                });
            }
        };
        let primitives = parts.primitives();
        let attributes = parts.attributes();
        let meshes = parts.meshes(&primitives, &attributes);
        match meshes.get(k) {
            Some(m) => emit(m),
            // A band without water: laid out empty, so never asked for.
            None => Ok(()),
        }
    })
}

/// Meshes the whole map with `options` and writes it as Wavefront OBJ with
/// its material library `mtl_file` (see [`export_map_mesh_obj`];
/// [`write_map_obj`] says how it is meshed).
///
/// Errors: invalid layers or options (from the mesher), or as
/// [`export_obj_mtl`].
pub fn export_map_obj(
    map: &MapLayers,
    options: &MapMeshOptions,
    mtl_file: &str,
) -> Result<ObjFiles, ExportError> {
    let mut obj = Vec::new();
    let mtl = write_map_obj(map, options, mtl_file, &mut obj)?;
    // Every byte written is ASCII.
    let obj = String::from_utf8(obj)
        .map_err(|e| ExportError::param("obj", e, "the OBJ text is not UTF-8 (this is a bug)"))?;
    Ok(ObjFiles { obj, mtl })
}

/// Meshes the map with `options` and writes its OBJ to `w` as it is
/// encoded, in bands of rows of about [`MAP_EXPORT_BAND_CELLS`] cells (see
/// [`write_map_obj_in_bands`]). Returns the material library.
///
/// Errors: as [`export_map_obj`], and [`ExportError::Write`] when `w` fails.
pub fn write_map_obj<W: std::io::Write + ?Sized>(
    map: &MapLayers,
    options: &MapMeshOptions,
    mtl_file: &str,
    w: &mut W,
) -> Result<String, ExportError> {
    write_map_obj_in_bands(map, options, mtl_file, MAP_EXPORT_BAND_CELLS, w)
}

/// Meshes the map with `options` a band of rows of about `band_cells` cells
/// at a time and writes its OBJ to `w` as it is encoded: object `terrain`
/// with each band's vertices and its `usemtl terrain` and `usemtl cliff`
/// faces, then object `water` with each band's (the map is meshed again
/// for the water when it has any). A map of one band gives the text of
/// [`export_map_mesh_obj`] of its whole mesh. Returns the material library.
///
/// Errors: as [`write_map_obj`], and a `band_cells` of 0.
pub fn write_map_obj_in_bands<W: std::io::Write + ?Sized>(
    map: &MapLayers,
    options: &MapMeshOptions,
    mtl_file: &str,
    band_cells: u64,
    w: &mut W,
) -> Result<String, ExportError> {
    check_mtl_file(mtl_file)?;
    let mut bands = BandMesher::new(map, options, band_cells)?;
    // The materials the faces name; the terrain's colour (the mean of the
    // ground's) is known at the end, when the library is made.
    let cliff = [CLIFF_COLOR[0], CLIFF_COLOR[1], CLIFF_COLOR[2], 1.0];
    let materials = [
        GlbMaterial::new("terrain", [1.0; 4]),
        GlbMaterial::new("cliff", cliff),
        water_material(),
    ];
    let names: Vec<(GlbMaterial<'_>, String)> =
        materials.iter().map(|m| (*m, m.name.to_string())).collect();
    let mut used = [false; 3];
    let mut colors = ColorSum::default();
    let mut sink = |text: &str| w.write_all(text.as_bytes()).map_err(ExportError::Write);
    let mut obj = ObjWriter::new(names, Some(mtl_file), &mut sink);
    obj.object("terrain", 0);
    let mut water_bands = Vec::new();
    for b in 0..bands.bands.len() {
        let parts = bands.band(b, Some(0))?;
        let t = &parts.terrain;
        colors.add(&t.colors);
        let walls = t.indices.len() as u32 - t.ground;
        used[0] |= t.ground > 0;
        used[1] |= walls > 0;
        let primitives = [
            GlbPrimitive::new(0, t.ground, Some(materials[0])),
            GlbPrimitive::new(t.ground, walls, Some(materials[1])),
        ];
        let meshes = parts.meshes(&primitives, &[]);
        for (k, m) in meshes.iter().enumerate() {
            m.validate(k)?;
        }
        obj.part(&meshes[0])?;
        if meshes.len() > 1 {
            water_bands.push(b);
        }
    }
    if !water_bands.is_empty() {
        used[2] = true;
        obj.object("water", 1);
        for &b in &water_bands {
            let w = bands.mesh(b)?.water;
            let uvs: Vec<[f32; 2]> = w.positions.iter().map(|p| [p[0], p[2]]).collect();
            let water = GlbMesh::new("water", &w.positions, &w.indices)
                .with_normals(&w.normals)
                .with_uvs(&uvs)
                .with_material(Some(materials[2]));
            water.validate(1)?;
            obj.part(&water)?;
        }
    }
    obj.finish()?;
    let terrain = GlbMaterial::new("terrain", colors.mean());
    let listed: Vec<(GlbMaterial<'_>, String)> = [terrain, materials[1], materials[2]]
        .into_iter()
        .zip(used)
        .filter(|(_, u)| *u)
        .map(|(m, _)| (m, m.name.to_string()))
        .collect();
    Ok(mtl_of(&listed, false))
}
