//! A voxel world in the kind layer: its strokes' brushes and its exports.

use isoterra_export::{GlbAttribute, GlbAttributeData, GlbMaterial, GlbMesh, GlbPrimitive};
use isoterra_field::MaterialTable;
use isoterra_store::{ChunkStore, VoxelDocument};
use isoterra_world::{
    VoxelBrush, VoxelChunkMesh, VoxelLodMesher, VoxelMesher, VoxelShape, VoxelSource,
    chunk_requests,
};
use serde_json::json;

use crate::export::{
    MAX_EXPORT_CHUNKS, MainOut, MaterialRanges, MeshParts, group_by_material, material_list,
    mesh_file, region,
};
use crate::schema::{ParamKind, ParamSpec, ToolSpec, tool};
use crate::stroke::{Brief, Stamp, voxel_shape, voxel_tool};
use crate::{ExportRequest, Exported, KindError, Template, WorldKind};

/// The tools of this kind (the kind's part of the [tool schema](crate::schema::tools)).
pub(crate) fn tools(_materials: usize) -> Vec<ToolSpec> {
    vec![
        tool(
            "dig",
            "#ff9800",
            '1',
            "Carves the brush's solid (sphere, box or capsule) out of the terrain.",
            vec![blend_param()],
        ),
        tool(
            "add",
            "#4caf50",
            '2',
            "Adds the brush's solid (sphere, box or capsule) of the chosen material.",
            vec![
                ParamSpec::number(
                    "material",
                    0.0,
                    255.0,
                    Some(0.0),
                    true,
                    "The material of the added terrain.",
                ),
                blend_param(),
            ],
        ),
        tool(
            "smooth",
            "#2196f3",
            '3',
            "Rounds off edges and noise.",
            vec![],
        ),
        tool(
            "flatten",
            "#9c27b0",
            '4',
            "Pulls the surface toward a plane through the first dab.",
            vec![ParamSpec {
                name: "normal",
                kind: ParamKind::Vector3 {
                    min: -1.0,
                    max: 1.0,
                    default: [0.0, 1.0, 0.0],
                },
                description: "The plane's normal (it need not be of unit length).",
            }],
        ),
        tool(
            "paint",
            "#e91e63",
            '5',
            "Changes the material of the surface, not its shape.",
            vec![ParamSpec::number(
                "material",
                0.0,
                255.0,
                Some(1.0),
                true,
                "The material to paint.",
            )],
        ),
    ]
}

/// The smooth-blend width of dig and add.
fn blend_param() -> ParamSpec {
    ParamSpec::number(
        "blend",
        0.0,
        f64::from(VoxelBrush::MAX_BLEND),
        Some(0.0),
        false,
        "Rounds the crease where the brush meets the ground into a fillet this many cells wide (0: a sharp edge).",
    )
}

/// The brush shapes of voxel strokes, as the editor offers them.
pub(crate) const SHAPES: [&str; 3] = [
    VoxelShape::ALL[0].name(),
    VoxelShape::ALL[1].name(),
    VoxelShape::ALL[2].name(),
];

/// The template of a stroke of `tool` on a voxel world.
pub(crate) fn template<S: ChunkStore>(
    _d: &VoxelDocument<S>,
    b: &Brief<'_>,
) -> Result<Template, KindError> {
    let Brief {
        kind: _,
        tool,
        params,
        radius,
        strength,
        shape,
    } = *b;
    let mut normal = None;
    let stamp = {
        let vshape = voxel_shape(shape)?;
        let vtool = voxel_tool(tool.name);
        let material = params.number("material")?.unwrap_or(0.0) as u8;
        let blend = params.number("blend")?.unwrap_or(0.0) as f32;
        if vtool == isoterra_world::VoxelTool::Flatten {
            let n = params.vector3("normal")?;
            let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
            if len <= 1e-3 {
                return Err(KindError::invalid(
                    "params.normal (--normal) must not be the zero vector",
                ));
            }
            normal = Some([
                (n[0] / len) as f32,
                (n[1] / len) as f32,
                (n[2] / len) as f32,
            ]);
        }
        let brush = VoxelBrush::new(vtool, [0.0; 3], radius)
            .with_strength(strength)
            .with_material(material)
            .with_shape(vshape)
            .with_blend(blend);
        brush.validate()?;
        Stamp::Voxel(brush)
    };
    Ok(Template { stamp, normal })
}

/// Exports a voxel world.
pub(crate) fn export<S: ChunkStore>(
    d: &mut VoxelDocument<S>,
    req: &ExportRequest,
    main: &mut MainOut<'_>,
) -> Result<Exported, KindError> {
    const FORM: &str = "X0,Y0,Z0,X1,Y1,Z1";
    let mut names = Vec::new();
    let mut parts: Vec<MeshParts> = Vec::new();
    if let Some(rings) = &req.lod_rings {
        // The chunks around a point at their ring's LOD, with transition
        // cells toward finer neighbours, as a stream shows them.
        let source = VoxelSource::from_world(d.world())?;
        let config = source.stream_config();
        let n = d.world().chunk_cells() as f32;
        let default_rings = VOXEL_RINGS_CHUNKS.iter().map(|r| r * n).collect();
        let selection = rings.selection(&config, 3, default_rings)?;
        for r in chunk_requests(config.dim, &selection) {
            let Some(m) = source.build_request(&r, None) else {
                continue;
            };
            if !m.indices.is_empty() {
                let lod = r.lod.min(config.max_lod);
                let c = r.coord;
                names.push(format!("lod{lod}_chunk_{}_{}_{}", c[0], c[1], c[2]));
                parts.push((m.positions, m.normals, m.materials, m.indices));
            }
        }
        return voxel_mesh_file(req, names, parts, main);
    }
    let text = req.region.as_deref().ok_or_else(|| {
        KindError::invalid(
            "a voxel world is endless: say which part to export with --region X0,Y0,Z0,X1,Y1,Z1",
        )
    })?;
    let (lo, hi) = region(text, 3, FORM)?;
    let (min, max) = d
        .world()
        .chunks_covering([lo[0], lo[1], lo[2]], [hi[0], hi[1], hi[2]])?;
    // In i128: three axes of a huge region overflow i64.
    let count: i128 = (0..3)
        .map(|k| i128::from(max[k]) - i128::from(min[k]) + 1)
        .product();
    if count > i128::from(MAX_EXPORT_CHUNKS) {
        return Err(KindError::TooLarge(format!(
            "region `{text}` covers {count} chunks; export at most {MAX_EXPORT_CHUNKS} at a time"
        )));
    }
    if req.lod == 0 {
        // Meshed here, into buffers of their own: the world's
        // dirty set (what a stream follows) and its mesh cache
        // are left alone.
        let (a, b) = (
            min.map(|v| v.saturating_sub(1)),
            max.map(|v| v.saturating_add(1)),
        );
        let mut need = Vec::new();
        for z in a[2]..=b[2] {
            for y in a[1]..=b[1] {
                for x in a[0]..=b[0] {
                    need.push([x, y, z]);
                }
            }
        }
        d.world_mut().load_chunks(&need);
        let world = d.world();
        let mut mesher = VoxelMesher::new();
        for z in min[2]..=max[2] {
            for y in min[1]..=max[1] {
                for x in min[0]..=max[0] {
                    let mut m = VoxelChunkMesh::default();
                    world.mesh_chunk([x, y, z], &mut mesher, &mut m);
                    if !m.is_empty() {
                        names.push(format!("chunk_{x}_{y}_{z}"));
                        parts.push((m.positions, m.normals, m.materials, m.indices));
                    }
                }
            }
        }
    } else {
        // Coarser levels sample every 2^lod nodes; unedited
        // chunks come straight from the generator.
        let meshed = VoxelLodMesher::new().mesh_region(d.world(), min, max, req.lod)?;
        for (c, m) in meshed {
            if !m.indices.is_empty() {
                names.push(format!("lod{}_chunk_{}_{}_{}", req.lod, c[0], c[1], c[2]));
                parts.push((m.positions, m.normals, m.materials, m.indices));
            }
        }
    }
    voxel_mesh_file(req, names, parts, main)
}

/// The LOD rings of a voxel stream, in chunks: LOD 1 from 1.5 chunks away,
/// LOD 2 from 3, LOD 3 from 4.5. The editor streams voxel worlds with them,
/// and a voxel mesh export with `--lod-rings` and no radii uses them.
pub const VOXEL_RINGS_CHUNKS: [f32; 3] = [1.5, 3.0, 4.5];

/// A voxel mesh file of named chunk meshes: one primitive per material
/// (named and coloured from the voxel material table) and the per-vertex id
/// as `_MATERIAL`.
fn voxel_mesh_file(
    req: &ExportRequest,
    names: Vec<String>,
    parts: Vec<MeshParts>,
    main: &mut MainOut<'_>,
) -> Result<Exported, KindError> {
    let table = material_list(&MaterialTable::voxel_default());
    let grouped: Vec<(Vec<u32>, MaterialRanges, Vec<f32>)> = parts
        .iter()
        .map(|(_, _, mats, idx)| {
            let (indices, ranges) = group_by_material(idx, mats);
            (
                indices,
                ranges,
                mats.iter().map(|&m| f32::from(m)).collect(),
            )
        })
        .collect();
    let primitives: Vec<Vec<GlbPrimitive>> = grouped
        .iter()
        .map(|(_, ranges, _)| {
            ranges
                .iter()
                .map(|&(m, start, count)| {
                    let (name, color) = &table[usize::from(m)];
                    GlbPrimitive::new(start, count, Some(GlbMaterial::new(name, *color)))
                })
                .collect()
        })
        .collect();
    let attributes: Vec<[GlbAttribute; 1]> = grouped
        .iter()
        .map(|(_, _, ids)| {
            [GlbAttribute::new(
                "_MATERIAL",
                GlbAttributeData::Scalar(ids),
            )]
        })
        .collect();
    let glb: Vec<GlbMesh> = names
        .iter()
        .zip(&parts)
        .zip(&grouped)
        .zip(primitives.iter().zip(&attributes))
        .map(|(((n, (p, nr, _, _)), (idx, _, _)), (prims, attrs))| {
            GlbMesh::new(n, p, idx)
                .with_normals(nr)
                .with_primitives(prims)
                .with_attributes(attrs)
        })
        .collect();
    let triangles: usize = parts.iter().map(|(_, _, _, i)| i.len() / 3).sum();
    let materials: std::collections::BTreeSet<u8> = grouped
        .iter()
        .flat_map(|(_, r, _)| r.iter().map(|x| x.0))
        .collect();
    let counts = json!({
        "chunks": glb.len(),
        "triangles": triangles,
        "materials": materials.len(),
    });
    mesh_file(&glb, req, WorldKind::Voxel, counts, main)
}
