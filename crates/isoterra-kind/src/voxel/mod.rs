//! A voxel world in the kind layer: its defaults, tools, strokes and
//! exports ([`VoxelKind`] and the voxel document's [`TypedDocument`]).

mod bake;
mod preview;
mod recipe;

pub use recipe::VoxelRecipe;

use isoterra_export::{GlbAttribute, GlbAttributeData, GlbMaterial, GlbMesh, GlbPrimitive};
use isoterra_field::{MaterialTable, VoxelGen, VoxelPreset};
use isoterra_store::{ChunkStore, StoreError, VoxelDocument};
use isoterra_world::{
    VoxelBrush, VoxelChunkMesh, VoxelLodMesher, VoxelMesher, VoxelParams, VoxelShape, VoxelSource,
    chunk_requests,
};
use serde_json::json;

use crate::BakeSource;
use crate::Stamp;
use crate::WorldParams;
use crate::create::KindDefaults;
use crate::document::{Committed, GroundHit};
use crate::export::{
    FileRole, MAX_EXPORT_CHUNKS, MainOut, MaterialRanges, MeshNames, MeshParts, group_by_material,
    material_list, mesh_file, region,
};
use crate::kind::Preview;
use crate::per_kind::{
    KindSpec, Settings, TypedDocument, committed, misfit, refused, stamps_of, store_forwards,
};
use crate::run::VoxelRun;
use crate::schema::{Limits, ParamKind, ParamSpec, RADIUS, ToolSpec, tool};
use crate::stroke::{Brief, voxel_shape, voxel_tool};
use crate::{ExportFormat, ExportRequest, Exported, KindError, Template, WorldKind};

/// The `overhangs` preset's [`VoxelGen::overhang_strength`].
const OVERHANGS_STRENGTH: f32 = 80.0;
/// The `overhangs` preset's [`VoxelGen::cave_frequency`] (`1/32`).
const OVERHANGS_FREQUENCY: f32 = 1.0 / 32.0;

/// The voxel kind's facts.
pub(crate) struct VoxelKind;

impl KindSpec for VoxelKind {
    fn kind(&self) -> WorldKind {
        WorldKind::Voxel
    }

    fn summary(&self) -> &'static str {
        "Endless 3D density terrain: caves and overhangs (marching cubes)"
    }

    fn defaults(&self) -> KindDefaults {
        KindDefaults {
            size: None,
            size_range: None,
            preset: "caves",
            presets: &["caves", "overhangs", "planet", "mesas"],
            chunk: VoxelParams::DEFAULT.chunk_cells,
        }
    }

    fn params(&self, s: &Settings<'_>) -> Result<WorldParams, KindError> {
        if s.cell != 1.0 {
            return Err(KindError::invalid(
                "voxel worlds have one world unit per cell; --cell-size does not apply",
            ));
        }
        let preset: VoxelPreset = s
            .preset
            .parse()
            .map_err(|_| s.unknown_preset(self.kind()))?;
        let generator = match preset {
            // Pushed harder by a finer 3D noise than the formula's
            // defaults, so that the ground really hangs over: about
            // 15 % of the surface faces down (voxel_overhangs_tests).
            VoxelPreset::Overhangs => VoxelGen::new(preset, s.seed)
                .with_overhang_strength(OVERHANGS_STRENGTH)
                .with_cave_frequency(OVERHANGS_FREQUENCY),
            // Tall tables, wide arches, a boulder in about a third
            // of the rock cells above them.
            VoxelPreset::Mesas => VoxelGen::new(preset, s.seed)
                .with_ground_amplitude(48.0)
                .with_cave_frequency(1.0 / 32.0)
                .with_cave_threshold(0.08)
                .with_rock_density(0.3)
                .with_rock_size(48.0),
            _ => VoxelGen::new(preset, s.seed),
        };
        Ok(WorldParams::Voxel(
            VoxelParams::DEFAULT
                .with_generator(generator)
                .with_chunk_cells(s.chunk),
        ))
    }

    fn recipe_fields(&self, out: &mut Vec<crate::RecipeField>) {
        recipe::fields(out);
    }

    fn preview(
        &self,
        params: &WorldParams,
        n: u32,
        area: Option<f32>,
    ) -> Result<crate::Preview, KindError> {
        preview::preview(params, n, area)
    }

    fn tools(&self, materials: usize) -> Vec<ToolSpec> {
        tools(materials)
    }

    fn shapes(&self) -> &'static [&'static str] {
        &SHAPES
    }

    /// Voxel brushes reach at most
    /// [`VoxelBrush::MAX_RADIUS`](isoterra_world::VoxelBrush::MAX_RADIUS)
    /// cells, so the schema advertises no more than the engine takes.
    fn limits(&self) -> Limits {
        Limits {
            radius: [RADIUS[0], f64::from(VoxelBrush::MAX_RADIUS)],
            stroke_nodes: Some(isoterra_store::MAX_VOXEL_STROKE_NODES as u64),
            ..Limits::common()
        }
    }

    fn formats(&self) -> &'static [ExportFormat] {
        &[ExportFormat::Glb, ExportFormat::Obj]
    }

    fn companions(&self, format: ExportFormat) -> &'static [FileRole] {
        match format {
            ExportFormat::Obj => &[FileRole::Materials],
            _ => &[],
        }
    }

    fn mesh_names(&self) -> MeshNames {
        MeshNames::new("voxel", "voxel.glb", "voxel.obj", "voxel.mtl")
    }

    fn point_axes(&self) -> &'static [usize] {
        &[0, 1, 2]
    }
}

impl<S: ChunkStore> TypedDocument<S> for VoxelDocument<S> {
    store_forwards!(VoxelDocument);

    fn kind(&self) -> WorldKind {
        WorldKind::Voxel
    }

    fn params(&self) -> WorldParams {
        WorldParams::Voxel(*VoxelDocument::params(self))
    }

    fn bake_source(&self) -> BakeSource<'_> {
        BakeSource::Voxel(self.world())
    }

    fn template(&self, b: &Brief<'_>) -> Result<Template, KindError> {
        template(b)
    }

    /// The plane of a flatten stroke passes through its first dab.
    fn stamp(
        &self,
        t: &Template,
        p: [f32; 3],
        first: Option<[f32; 3]>,
    ) -> Result<Stamp, KindError> {
        let Stamp::Voxel(mut b) = t.stamp else {
            return Err(misfit());
        };
        b.center = p;
        if let Some(n) = t.normal {
            let o = first.unwrap_or(p);
            b = b.with_plane(n, n[0] * o[0] + n[1] * o[1] + n[2] * o[2]);
        }
        Ok(Stamp::Voxel(b))
    }

    fn dab_size(&self, t: &Template) -> Result<(f32, f32), KindError> {
        let Stamp::Voxel(b) = t.stamp else {
            return Err(misfit());
        };
        Ok((b.radius, 1.0))
    }

    fn preview(&mut self, s: &Stamp) -> Result<Preview, KindError> {
        let Stamp::Voxel(b) = s else {
            return Err(misfit());
        };
        VoxelDocument::preview(self, b)
            .map(|e| Preview::Voxel(VoxelRun::of(&e)))
            .map_err(refused)
    }

    fn revert(&mut self, p: &Preview) -> Result<(), StoreError> {
        match p {
            Preview::Voxel(r) => {
                let e = r.edit(self.world());
                self.revert_preview(&e)
            }
            _ => Ok(()),
        }
    }

    fn commit(&mut self, stamps: &[Stamp]) -> Result<Committed, KindError> {
        let brushes = stamps_of(stamps, |s| match s {
            Stamp::Voxel(b) => Some(*b),
            _ => None,
        });
        let o = self.stroke_stamps(&brushes).map_err(refused)?;
        Ok(committed(o.id, o.changed_nodes))
    }

    fn raycast(&mut self, from: [f32; 3], dir: [f32; 3], max: f32) -> Option<GroundHit> {
        let to = [0, 1, 2].map(|a| from[a] + dir[a] * max);
        let world = self.world_mut();
        world.load_along(from, to);
        let hit = world.raycast(from, to)?;
        Some(GroundHit {
            point: hit.point,
            normal: hit.normal,
            distance: hit.t * max,
        })
    }

    fn is_solid(&mut self, p: [f32; 3]) -> bool {
        let world = self.world_mut();
        world.load_along(p, p);
        world.is_solid(p)
    }

    fn density_at(&mut self, p: [f32; 3]) -> Option<f32> {
        let world = self.world_mut();
        world.load_along(p, p);
        world.density_at(p)
    }

    fn export(
        &mut self,
        req: &ExportRequest,
        main: &mut MainOut<'_>,
    ) -> Result<Exported, KindError> {
        export(self, req, main)
    }
}

/// The tools of this kind (the kind's part of the [tool schema](crate::schema::tools)).
fn tools(_materials: usize) -> Vec<ToolSpec> {
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
const SHAPES: [&str; 3] = [
    VoxelShape::ALL[0].name(),
    VoxelShape::ALL[1].name(),
    VoxelShape::ALL[2].name(),
];

/// The template of a stroke of `tool` on a voxel world.
fn template(b: &Brief<'_>) -> Result<Template, KindError> {
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
fn export<S: ChunkStore>(
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
