//! `.glb` export of a map's meshes: terrain with vertex colours from the
//! splat palette, water as a separate translucent mesh.

use isoterra_field::map::{MAX_TEXTURES, MapLayers, Splat};
use isoterra_mesh::{CellRect, MapMeshOptions, MapMeshOutput, MapMesher};

use crate::{ExportError, GlbMaterial, GlbMesh, export_glb};

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

/// Writes meshes of a map as `.glb`: a node `terrain` (positions, normals,
/// `COLOR_0` from [`splat_color`], an opaque white material `terrain`) and,
/// when there is water, a node `water` (positions, normals, a translucent
/// material `water` of [`WATER_COLOR`] with `alphaMode: BLEND`).
///
/// Errors as [`export_glb`].
pub fn export_map_mesh_glb(mesh: &MapMeshOutput) -> Result<Vec<u8>, ExportError> {
    let t = &mesh.terrain;
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
    let colors: Vec<[f32; 4]> = t
        .splat
        .iter()
        .zip(&t.blend)
        .map(|(&s, &b)| splat_color(s, b))
        .collect();
    let mut meshes = vec![
        GlbMesh::new("terrain", &t.positions, &t.indices)
            .with_normals(&t.normals)
            .with_colors(&colors)
            .with_material(Some(GlbMaterial::new("terrain", [1.0; 4]))),
    ];
    let w = &mesh.water;
    if !w.indices.is_empty() {
        meshes.push(
            GlbMesh::new("water", &w.positions, &w.indices)
                .with_normals(&w.normals)
                .with_material(Some(
                    GlbMaterial::new("water", WATER_COLOR).with_blend(true),
                )),
        );
    }
    export_glb(&meshes)
}

/// Meshes the whole map with `options` and writes it as `.glb` (see
/// [`export_map_mesh_glb`]).
///
/// Errors: invalid layers or options (from the mesher), or as [`export_glb`].
pub fn export_map_glb(map: &MapLayers, options: &MapMeshOptions) -> Result<Vec<u8>, ExportError> {
    let mut mesher = MapMesher::new();
    let mut out = MapMeshOutput::default();
    mesher
        .mesh(map, CellRect::whole(map), options, &mut out)
        .map_err(|e| ExportError::param("map mesh", e, "the map cannot be meshed"))?;
    export_map_mesh_glb(&out)
}
