//! From isoterra's meshes and colliders (plain arrays) to Bevy meshes and
//! avian colliders. Everything here runs on worker threads, so the main
//! thread only moves finished values into place.

use bevy::asset::RenderAssetUsages;
use bevy::math::{Vec2, Vec3};
use bevy::mesh::{Indices, Mesh, MeshVertexAttribute, PrimitiveTopology, VertexFormat};
use isoterra::mesh::{FillMesh, HeightfieldCollider, HeightmapMesh, Polyline};
use isoterra::world::{Island, MapChunkMesh, VoxelChunkMesh};

/// The material id of each vertex (`Uint32`): the voxel material, the
/// side2d material of the submesh, the map's first splat texture. A custom
/// material can read it to pick its textures.
pub const ATTRIBUTE_MATERIAL: MeshVertexAttribute =
    MeshVertexAttribute::new("Isoterra_Material", 0x1507_e22a_0001, VertexFormat::Uint32);

/// Heightmap morph weight (`Float32`): 1 for a vertex that disappears at
/// the next coarser LOD, 0 for one that stays. Seams are crack-free without
/// it; a shader can use it with [`ATTRIBUTE_MORPH_TARGET`] to blend LODs.
pub const ATTRIBUTE_MORPH: MeshVertexAttribute =
    MeshVertexAttribute::new("Isoterra_Morph", 0x1507_e22a_0002, VertexFormat::Float32);

/// Heightmap morph target (`Float32`): the height of the next coarser LOD's
/// surface at the vertex.
pub const ATTRIBUTE_MORPH_TARGET: MeshVertexAttribute = MeshVertexAttribute::new(
    "Isoterra_MorphTarget",
    0x1507_e22a_0003,
    VertexFormat::Float32,
);

/// The linear RGBA colour of voxel material `id`: the colour of the voxel
/// material table (`MaterialTable::voxel_default`, the one the editor and
/// the exports use), grey for ids past it.
pub fn voxel_color(id: u8) -> [f32; 4] {
    static TABLE: std::sync::OnceLock<Vec<[f32; 4]>> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        isoterra::field::MaterialTable::voxel_default()
            .iter()
            .map(|m| crate::io::srgb_to_linear(m.color))
            .collect()
    });
    table
        .get(id as usize)
        .copied()
        .unwrap_or([0.5, 0.5, 0.5, 1.0])
}

/// A triangle-list mesh the main world keeps (and the renderer uploads).
fn new_mesh() -> Mesh {
    Mesh::new(
        PrimitiveTopology::TriangleList,
        RenderAssetUsages::default(),
    )
}

/// Triplanar-free UVs for a 3D surface: the world position projected on the
/// plane the normal faces most, in world units.
fn planar_uvs(positions: &[[f32; 3]], normals: &[[f32; 3]]) -> Vec<[f32; 2]> {
    positions
        .iter()
        .zip(normals)
        .map(|(p, n)| {
            let a = n.map(f32::abs);
            if a[1] >= a[0] && a[1] >= a[2] {
                [p[0], p[2]]
            } else if a[0] >= a[2] {
                [p[2], p[1]]
            } else {
                [p[0], p[1]]
            }
        })
        .collect()
}

/// The Bevy mesh of a voxel chunk: positions, normals, planar UVs, vertex
/// colours by material and [`ATTRIBUTE_MATERIAL`].
pub(crate) fn voxel_mesh(m: &VoxelChunkMesh) -> Mesh {
    let mut mesh = new_mesh();
    mesh.insert_attribute(Mesh::ATTRIBUTE_UV_0, planar_uvs(&m.positions, &m.normals));
    mesh.insert_attribute(
        Mesh::ATTRIBUTE_COLOR,
        m.materials
            .iter()
            .map(|&id| voxel_color(id))
            .collect::<Vec<_>>(),
    );
    mesh.insert_attribute(
        ATTRIBUTE_MATERIAL,
        m.materials
            .iter()
            .map(|&id| u32::from(id))
            .collect::<Vec<_>>(),
    );
    mesh.insert_attribute(Mesh::ATTRIBUTE_POSITION, m.positions.clone());
    mesh.insert_attribute(Mesh::ATTRIBUTE_NORMAL, m.normals.clone());
    mesh.insert_indices(Indices::U32(m.indices.clone()));
    mesh
}

/// A static trimesh collider of a 3D surface; `None` when it has no
/// triangle the physics engine accepts.
pub(crate) fn trimesh_collider(
    positions: &[[f32; 3]],
    indices: &[u32],
) -> Option<avian3d::prelude::Collider> {
    if indices.len() < 3 {
        return None;
    }
    let vertices: Vec<Vec3> = positions.iter().map(|p| Vec3::from_array(*p)).collect();
    let tris: Vec<[u32; 3]> = indices
        .chunks_exact(3)
        .filter(|t| t[0] != t[1] && t[1] != t[2] && t[0] != t[2])
        .map(|t| [t[0], t[1], t[2]])
        .collect();
    if tris.is_empty() {
        return None;
    }
    avian3d::prelude::Collider::try_trimesh(vertices, tris).ok()
}

/// The colour of a heightmap vertex: grass on gentle slopes, rock on steep
/// ones, snow near the top of `range`.
fn height_color(y: f32, ny: f32, range: [f32; 2]) -> [f32; 4] {
    let span = (range[1] - range[0]).max(1e-6);
    let t = ((y - range[0]) / span).clamp(0.0, 1.0);
    let grass = [0.22, 0.42, 0.14];
    let low = [0.45, 0.42, 0.30];
    let rock = [0.40, 0.38, 0.36];
    let snow = [0.92, 0.93, 0.95];
    let mix = |a: [f32; 3], b: [f32; 3], k: f32| {
        [
            a[0] + (b[0] - a[0]) * k,
            a[1] + (b[1] - a[1]) * k,
            a[2] + (b[2] - a[2]) * k,
        ]
    };
    let mut c = mix(low, grass, (t * 8.0).clamp(0.0, 1.0));
    c = mix(c, rock, ((0.8 - ny) * 4.0).clamp(0.0, 1.0));
    c = mix(
        c,
        snow,
        ((t - 0.9) * 10.0).clamp(0.0, 1.0) * ny.clamp(0.0, 1.0),
    );
    [c[0], c[1], c[2], 1.0]
}

/// The Bevy mesh of a heightmap chunk: positions, normals, UVs, colours by
/// height and slope, and the morph attributes.
pub(crate) fn heightmap_mesh(m: &HeightmapMesh, range: [f32; 2]) -> Mesh {
    let mut mesh = new_mesh();
    let colors: Vec<[f32; 4]> = m
        .positions
        .iter()
        .zip(&m.normals)
        .map(|(p, n)| height_color(p[1], n[1], range))
        .collect();
    mesh.insert_attribute(Mesh::ATTRIBUTE_POSITION, m.positions.clone());
    mesh.insert_attribute(Mesh::ATTRIBUTE_NORMAL, m.normals.clone());
    mesh.insert_attribute(Mesh::ATTRIBUTE_UV_0, m.uvs.clone());
    mesh.insert_attribute(Mesh::ATTRIBUTE_COLOR, colors);
    mesh.insert_attribute(ATTRIBUTE_MORPH, m.morph.clone());
    mesh.insert_attribute(ATTRIBUTE_MORPH_TARGET, m.morph_targets.clone());
    mesh.insert_indices(Indices::U32(m.indices.clone()));
    mesh
}

/// The avian heightfield of a chunk collider and where its centre goes.
/// isoterra stores heights row-major with x fastest (`heights[z * cols +
/// x]`); avian (parry) takes one inner vector per x subdivision, holding the
/// heights along z. A heightfield cannot sit inside a compound shape, so it
/// goes on an entity of its own at the returned offset.
pub(crate) fn heightfield_collider(
    c: &HeightfieldCollider,
) -> Option<(avian3d::prelude::Collider, Vec3)> {
    let (rows, cols) = (c.rows as usize, c.cols as usize);
    if rows < 2 || cols < 2 || c.heights.len() != rows * cols {
        return None;
    }
    let columns: Vec<Vec<f32>> = (0..cols)
        .map(|x| (0..rows).map(|z| c.heights[z * cols + x]).collect())
        .collect();
    let hf = avian3d::prelude::Collider::heightfield(columns, Vec3::from_array(c.scale));
    Some((hf, Vec3::from_array(c.translation)))
}

/// The submeshes of a side2d chunk, one per material: `(material id,
/// mesh)`, each with only the vertices its triangles use.
pub(crate) fn side2d_meshes(m: &FillMesh, colors: &dyn Fn(u8) -> [f32; 4]) -> Vec<(u8, Mesh)> {
    let mut parts: Vec<(u8, u32, u32)> = m
        .submeshes
        .iter()
        .map(|s| (s.material, s.start, s.count))
        .collect();
    if parts.is_empty() && !m.indices.is_empty() {
        parts.push((0, 0, m.indices.len() as u32));
    }
    let mut out: Vec<(u8, Mesh)> = Vec::new();
    for (material, start, count) in parts {
        let Some(range) = m
            .indices
            .get(start as usize..(start as usize).saturating_add(count as usize))
        else {
            continue;
        };
        if range.is_empty() {
            continue;
        }
        let mut remap = vec![u32::MAX; m.positions.len()];
        let (mut pos, mut nor, mut uv, mut idx) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for &i in range {
            let i = i as usize;
            if remap[i] == u32::MAX {
                remap[i] = pos.len() as u32;
                pos.push(m.positions[i]);
                nor.push(m.normals.get(i).copied().unwrap_or([0.0, 0.0, 1.0]));
                uv.push(m.uvs.get(i).copied().unwrap_or([0.0, 0.0]));
            }
            idx.push(remap[i]);
        }
        let n = pos.len();
        let mut mesh = new_mesh();
        mesh.insert_attribute(Mesh::ATTRIBUTE_POSITION, pos);
        mesh.insert_attribute(Mesh::ATTRIBUTE_NORMAL, nor);
        mesh.insert_attribute(Mesh::ATTRIBUTE_UV_0, uv);
        mesh.insert_attribute(Mesh::ATTRIBUTE_COLOR, vec![colors(material); n]);
        mesh.insert_attribute(ATTRIBUTE_MATERIAL, vec![u32::from(material); n]);
        mesh.insert_indices(Indices::U32(idx));
        // Several submeshes of one material are merged into one mesh.
        if let Some((_, prev)) = out.iter_mut().find(|(id, _)| *id == material) {
            prev.merge(&mesh).ok();
        } else {
            out.push((material, mesh));
        }
    }
    out
}

/// The 2D collider of a side2d chunk: every collider outline in one
/// polyline shape (closed loops closed again by their last segment).
pub(crate) fn polyline_collider(lines: &[Polyline]) -> Option<avian2d::prelude::Collider> {
    let mut vertices: Vec<Vec2> = Vec::new();
    let mut segments: Vec<[u32; 2]> = Vec::new();
    for l in lines {
        if l.points.len() < 2 {
            continue;
        }
        let first = vertices.len() as u32;
        vertices.extend(l.points.iter().map(|p| Vec2::from_array(*p)));
        let last = vertices.len() as u32 - 1;
        segments.extend((first..last).map(|i| [i, i + 1]));
        if l.closed && l.points.first() != l.points.last() {
            segments.push([last, first]);
        }
    }
    if segments.is_empty() {
        return None;
    }
    Some(avian2d::prelude::Collider::polyline(
        vertices,
        Some(segments),
    ))
}

/// A debris body of a floating island: its fill mesh and a solid 2D
/// collider (the same triangles), both around the island's centroid.
pub(crate) fn debris(island: &Island, color: [f32; 4]) -> Option<crate::io::Debris> {
    let m = &island.mesh;
    let centroid = island.centroid()?;
    let local: Vec<[f32; 3]> = m
        .positions
        .iter()
        .map(|p| [p[0] - centroid[0], p[1] - centroid[1], 0.0])
        .collect();
    let tris: Vec<[u32; 3]> = m
        .indices
        .chunks_exact(3)
        .map(|t| [t[0], t[1], t[2]])
        .collect();
    let collider = avian2d::prelude::Collider::try_trimesh(
        local.iter().map(|p| Vec2::new(p[0], p[1])).collect(),
        tris,
    )
    .ok()?;
    let n = local.len();
    let mut mesh = new_mesh();
    mesh.insert_attribute(Mesh::ATTRIBUTE_POSITION, local);
    mesh.insert_attribute(Mesh::ATTRIBUTE_NORMAL, vec![[0.0, 0.0, 1.0]; n]);
    let uvs = if m.uvs.len() == n {
        m.uvs.clone()
    } else {
        vec![[0.0, 0.0]; n]
    };
    mesh.insert_attribute(Mesh::ATTRIBUTE_UV_0, uvs);
    mesh.insert_attribute(Mesh::ATTRIBUTE_COLOR, vec![color; n]);
    mesh.insert_indices(Indices::U32(m.indices.clone()));
    Some(crate::io::Debris {
        centroid,
        area: island.area,
        outline: island.outline.iter().map(|l| l.points.clone()).collect(),
        mesh,
        collider,
    })
}

/// The Bevy meshes of a map chunk: the terrain (colours from the splat
/// blend, cliff walls darker, tops apart from the walls at the rims, the
/// first splat texture as
/// [`ATTRIBUTE_MATERIAL`]) and the water (colour and opacity by depth;
/// `None` without water).
pub(crate) fn map_meshes(chunk: &MapChunkMesh) -> (Option<Mesh>, Option<Mesh>) {
    // The tops apart from the walls at the rims: no saw-tooth of wall
    // colour and tilted light along them.
    let t = &chunk.mesh.terrain.tops_apart();
    let terrain = (!t.indices.is_empty()).then(|| {
        let mut colors = Vec::with_capacity(t.positions.len());
        let mut ids = Vec::with_capacity(t.positions.len());
        for i in 0..t.positions.len() {
            let splat = t
                .splat
                .get(i)
                .copied()
                .unwrap_or(isoterra::field::Splat::single(0));
            let blend = t.blend.get(i).copied().unwrap_or(0.0).clamp(0.0, 1.0);
            let c = isoterra::export::splat_color(splat, blend);
            let dark = 1.0 - 0.3 * blend;
            colors.push([c[0] * dark, c[1] * dark, c[2] * dark, 1.0]);
            ids.push(u32::from(splat.ids[0]));
        }
        let mut mesh = new_mesh();
        mesh.insert_attribute(Mesh::ATTRIBUTE_POSITION, t.positions.clone());
        mesh.insert_attribute(Mesh::ATTRIBUTE_NORMAL, t.normals.clone());
        mesh.insert_attribute(
            Mesh::ATTRIBUTE_UV_0,
            t.positions.iter().map(|p| [p[0], p[2]]).collect::<Vec<_>>(),
        );
        mesh.insert_attribute(Mesh::ATTRIBUTE_COLOR, colors);
        mesh.insert_attribute(ATTRIBUTE_MATERIAL, ids);
        mesh.insert_indices(Indices::U32(t.indices.clone()));
        mesh
    });
    let w = &chunk.mesh.water;
    let water = (!w.indices.is_empty()).then(|| {
        let shallow = [0.16f32, 0.55, 0.62];
        let deep = isoterra::export::WATER_COLOR;
        let colors: Vec<[f32; 4]> = w
            .depth
            .iter()
            .map(|&d| {
                let k = if d.is_finite() {
                    (d / 3.0).clamp(0.0, 1.0)
                } else {
                    1.0
                };
                [
                    shallow[0] + (deep[0] - shallow[0]) * k,
                    shallow[1] + (deep[1] - shallow[1]) * k,
                    shallow[2] + (deep[2] - shallow[2]) * k,
                    0.35 + 0.5 * k,
                ]
            })
            .collect();
        let mut mesh = new_mesh();
        mesh.insert_attribute(Mesh::ATTRIBUTE_POSITION, w.positions.clone());
        mesh.insert_attribute(Mesh::ATTRIBUTE_NORMAL, w.normals.clone());
        mesh.insert_attribute(
            Mesh::ATTRIBUTE_UV_0,
            w.positions.iter().map(|p| [p[0], p[2]]).collect::<Vec<_>>(),
        );
        mesh.insert_attribute(Mesh::ATTRIBUTE_COLOR, colors);
        mesh.insert_indices(Indices::U32(w.indices.clone()));
        mesh
    });
    (terrain, water)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn palette_colours_are_opaque_and_in_range() {
        for id in 0..=255u8 {
            let c = voxel_color(id);
            assert!(c.iter().all(|v| (0.0..=1.0).contains(v)), "{id}: {c:?}");
            assert_eq!(c[3], 1.0);
        }
        assert_ne!(voxel_color(0), voxel_color(1));
    }

    #[test]
    fn degenerate_or_empty_surfaces_have_no_collider() {
        assert!(trimesh_collider(&[], &[]).is_none());
        let p = [[0.0; 3], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]];
        assert!(trimesh_collider(&p, &[0, 0, 1]).is_none());
        assert!(trimesh_collider(&p, &[0, 2, 1]).is_some());
    }
}
