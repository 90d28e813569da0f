//! `.glb` export of a map's meshes: terrain with vertex colours from the
//! splat palette, water as a separate translucent mesh.

use std::collections::BTreeMap;

use isoterra_field::map::{MAX_TEXTURES, MapLayers, Splat};
use isoterra_mesh::{
    CellRect, MapMeshBuffers, MapMeshOptions, MapMeshOutput, MapMesher, WaterBuffers,
};

use crate::{
    ExportError, GlbAttribute, GlbAttributeData, GlbMaterial, GlbMesh, GlbPrimitive, ObjFiles,
    export_glb, export_obj_mtl, write_glb, write_obj_mtl,
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

/// Splits a terrain mesh into ground and walls, in place: its vertex lists
/// become the parts' (wall vertices get copies appended), its triangle list
/// is reordered ground first, and only the UVs and colours are new, so a
/// whole map's mesh is never held twice.
fn split_terrain(t: MapMeshBuffers) -> TerrainParts {
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
    // Open rims start at an end; loops at their smallest key.
    let mut starts: Vec<RimKey> = links
        .iter()
        .filter(|(_, l)| l.len() == 1)
        .map(|(k, _)| *k)
        .collect();
    starts.extend(links.keys().copied());
    for start in starts {
        if u_at.contains_key(&start) {
            continue;
        }
        u_at.insert(start, 0.0);
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
    out
}

/// The meshes of a map ready for a mesh file: the terrain split into ground
/// and walls with their UVs and colours, the splat weight groups, and the
/// water's UVs. [`MapParts::meshes`] lends them as [`GlbMesh`]es.
struct MapParts<'a> {
    terrain: TerrainParts,
    splat_groups: Vec<Vec<[f32; 4]>>,
    water: &'a WaterBuffers,
    water_uvs: Vec<[f32; 2]>,
}

/// The names of the splat weight attributes, four textures each.
const SPLAT_NAMES: [&str; 4] = ["_SPLAT0", "_SPLAT1", "_SPLAT2", "_SPLAT3"];

impl<'a> MapParts<'a> {
    /// The parts of a map mesh: the terrain `t` is split in place (see
    /// [`split_terrain`]), `water` is lent on to the mesh file.
    fn new(t: MapMeshBuffers, water: &'a WaterBuffers) -> Result<Self, ExportError> {
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
        let terrain = split_terrain(t);
        // The highest texture any vertex weighs, then the weights four
        // textures at a time, each computed where it is stored (a map of
        // millions of vertices holds no 16-weight array per vertex).
        let used = terrain
            .splat
            .iter()
            .filter_map(|&s| texture_weights(s).iter().rposition(|v| *v > 0.0))
            .max()
            .unwrap_or(0);
        let splat_groups = (0..=used / 4)
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
        let w = self.water;
        if !w.indices.is_empty() {
            meshes.push(
                GlbMesh::new("water", &w.positions, &w.indices)
                    .with_normals(&w.normals)
                    .with_uvs(&self.water_uvs)
                    .with_material(Some(
                        GlbMaterial::new("water", WATER_COLOR).with_blend(true),
                    )),
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
    map_glb(&MapParts::new(mesh.terrain.clone(), &mesh.water)?)
}

/// The `.glb` of [`export_map_mesh_glb`] from the split parts.
fn map_glb(parts: &MapParts<'_>) -> Result<Vec<u8>, ExportError> {
    let primitives = parts.primitives();
    let attributes = parts.attributes();
    export_glb(&parts.meshes(&primitives, &attributes))
}

/// [`map_glb`], written to `w` as it is encoded.
fn map_glb_to<W: std::io::Write + ?Sized>(
    parts: &MapParts<'_>,
    w: &mut W,
) -> Result<(), ExportError> {
    let primitives = parts.primitives();
    let attributes = parts.attributes();
    write_glb(&parts.meshes(&primitives, &attributes), w)
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
    let parts = MapParts::new(mesh.terrain.clone(), &mesh.water)?;
    map_obj(&parts, mtl_file)
}

/// The OBJ files of [`export_map_mesh_obj`] from the split parts.
fn map_obj(parts: &MapParts<'_>, mtl_file: &str) -> Result<ObjFiles, ExportError> {
    let primitives = obj_primitives(parts);
    export_obj_mtl(&parts.meshes(&primitives, &[]), mtl_file)
}

/// The terrain's OBJ material groups: the mean ground colour and the cliff
/// colour (OBJ has no vertex colours).
fn obj_primitives(parts: &MapParts<'_>) -> [GlbPrimitive<'static>; 2] {
    let t = &parts.terrain;
    let walls = t.indices.len() as u32 - t.ground;
    let ground = mean_color(&t.colors[..]);
    let cliff = [CLIFF_COLOR[0], CLIFF_COLOR[1], CLIFF_COLOR[2], 1.0];
    [
        GlbPrimitive::new(0, t.ground, Some(GlbMaterial::new("terrain", ground))),
        GlbPrimitive::new(t.ground, walls, Some(GlbMaterial::new("cliff", cliff))),
    ]
}

/// The mean of vertex colours (white for none).
fn mean_color(colors: &[[f32; 4]]) -> [f32; 4] {
    if colors.is_empty() {
        return [1.0; 4];
    }
    let mut sum = [0f64; 3];
    for c in colors {
        for k in 0..3 {
            sum[k] += f64::from(c[k]);
        }
    }
    let n = colors.len() as f64;
    [
        (sum[0] / n) as f32,
        (sum[1] / n) as f32,
        (sum[2] / n) as f32,
        1.0,
    ]
}

/// Meshes the whole map with `options` and writes it as `.glb` (see
/// [`export_map_mesh_glb`]).
///
/// Errors: invalid layers or options (from the mesher), or as [`export_glb`].
///
/// Memory: the terrain mesh is split into ground and walls in place (the
/// mesher's scratch is gone before that), so the peak holds the split
/// mesh, the water and the file, not the mesh twice.
pub fn export_map_glb(map: &MapLayers, options: &MapMeshOptions) -> Result<Vec<u8>, ExportError> {
    let out = whole_map_mesh(map, options)?;
    let water = out.water;
    let parts = MapParts::new(out.terrain, &water)?;
    map_glb(&parts)
}

/// Meshes the whole map with `options` and writes it as `.glb` to `w`: the
/// bytes of [`export_map_glb`], encoded straight from the split mesh
/// without holding the file in memory.
///
/// Errors: as [`export_map_glb`], and [`ExportError::Write`] when `w`
/// fails.
pub fn write_map_glb<W: std::io::Write + ?Sized>(
    map: &MapLayers,
    options: &MapMeshOptions,
    w: &mut W,
) -> Result<(), ExportError> {
    let out = whole_map_mesh(map, options)?;
    let water = out.water;
    let parts = MapParts::new(out.terrain, &water)?;
    map_glb_to(&parts, w)
}

/// The whole map meshed with `options` (the mesher and its scratch are gone
/// when this returns).
fn whole_map_mesh(map: &MapLayers, options: &MapMeshOptions) -> Result<MapMeshOutput, ExportError> {
    let mut mesher = MapMesher::new();
    let mut out = MapMeshOutput::default();
    mesher
        .mesh(map, CellRect::whole(map), options, &mut out)
        .map_err(|e| ExportError::param("map mesh", e, "the map cannot be meshed"))?;
    Ok(out)
}

/// Meshes the whole map with `options` and writes its OBJ to `w` as it is
/// encoded: the OBJ of [`export_map_obj`] without holding its text, which
/// is several times the size of the glb. Returns the material library.
///
/// Errors: as [`export_map_obj`], and [`ExportError::Write`] when `w` fails.
pub fn write_map_obj<W: std::io::Write + ?Sized>(
    map: &MapLayers,
    options: &MapMeshOptions,
    mtl_file: &str,
    w: &mut W,
) -> Result<String, ExportError> {
    let out = whole_map_mesh(map, options)?;
    let water = out.water;
    let parts = MapParts::new(out.terrain, &water)?;
    let primitives = obj_primitives(&parts);
    write_obj_mtl(&parts.meshes(&primitives, &[]), mtl_file, w)
}

/// Meshes the whole map with `options` and writes it as Wavefront OBJ with
/// its material library `mtl_file` (see [`export_map_mesh_obj`]).
///
/// Errors: invalid layers or options (from the mesher), or as
/// [`export_obj_mtl`].
pub fn export_map_obj(
    map: &MapLayers,
    options: &MapMeshOptions,
    mtl_file: &str,
) -> Result<ObjFiles, ExportError> {
    let out = whole_map_mesh(map, options)?;
    let water = out.water;
    let parts = MapParts::new(out.terrain, &water)?;
    map_obj(&parts, mtl_file)
}
