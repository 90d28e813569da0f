//! A heightmap world in the kind layer: its defaults, tools, strokes and
//! exports ([`HeightmapKind`] and the heightmap document's
//! [`TypedDocument`]).

mod bake;
mod preview;
mod recipe;

pub use recipe::{HeightmapRecipe, NoiseRecipe};

use isoterra_export::{GlbMaterial, GlbMesh, export_exr, export_png16, export_r16};
use isoterra_field::{HeightParams, HeightPreset};
use isoterra_mesh::HeightmapMesh;
use isoterra_store::{ChunkStore, HeightmapDocument, StoreError};
use isoterra_world::{HeightBrush, HeightmapParams, HeightmapSource, MeshKey, chunk_requests};
use serde_json::json;
use std::sync::Arc;

use crate::BakeSource;
use crate::Stamp;
use crate::WorldParams;
use crate::create::KindDefaults;
use crate::document::{Committed, GroundHit};
use crate::export::{
    FileRole, MAX_EXPORT_CHUNKS, MAX_EXPORT_NODES, MainOut, MeshNames, mesh_file, region,
};
use crate::kind::Preview;
use crate::per_kind::{
    KindSpec, Settings, TypedDocument, committed, misfit, refused, stamps_of, store_forwards,
};
use crate::run::HeightRun;
use crate::schema::{Limits, ParamSpec, ToolSpec, tool};
use crate::stroke::{Brief, height_tool, round_shape};
use crate::{ExportFormat, ExportRequest, Exported, KindError, LodRings, Template, WorldKind};

/// The heightmap kind's facts.
pub(crate) struct HeightmapKind;

impl KindSpec for HeightmapKind {
    fn kind(&self) -> WorldKind {
        WorldKind::Heightmap
    }

    fn summary(&self) -> &'static str {
        "Endless heightmap ground with LOD chunks"
    }

    fn defaults(&self) -> KindDefaults {
        KindDefaults {
            size: None,
            size_range: None,
            preset: "hills",
            presets: &["hills", "mountains", "islands"],
            chunk: HeightmapParams::DEFAULT.chunk_cells,
        }
    }

    fn params(&self, s: &Settings<'_>) -> Result<WorldParams, KindError> {
        let preset =
            HeightPreset::from_name(s.preset).ok_or_else(|| s.unknown_preset(self.kind()))?;
        Ok(WorldParams::Heightmap(
            HeightmapParams::DEFAULT
                .with_generator(HeightParams::preset(preset))
                .with_seed(s.seed)
                .with_chunk_cells(s.chunk)
                .with_cell_size(s.cell),
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
        &["circle"]
    }

    fn limits(&self) -> Limits {
        Limits {
            stroke_nodes: Some(isoterra_store::MAX_HEIGHT_STROKE_NODES as u64),
            ..Limits::common()
        }
    }

    fn formats(&self) -> &'static [ExportFormat] {
        &[
            ExportFormat::Png16,
            ExportFormat::R16,
            ExportFormat::Exr,
            ExportFormat::Glb,
            ExportFormat::Obj,
        ]
    }

    fn companions(&self, format: ExportFormat) -> &'static [FileRole] {
        match format {
            ExportFormat::Obj => &[FileRole::Materials],
            _ => &[],
        }
    }

    fn mesh_names(&self) -> MeshNames {
        MeshNames::new(
            "heightmap",
            "heightmap.glb",
            "heightmap.obj",
            "heightmap.mtl",
        )
    }

    fn point_axes(&self) -> &'static [usize] {
        &[0, 2]
    }
}

impl<S: ChunkStore> TypedDocument<S> for HeightmapDocument<S> {
    store_forwards!(HeightmapDocument);

    fn kind(&self) -> WorldKind {
        WorldKind::Heightmap
    }

    fn params(&self) -> WorldParams {
        WorldParams::Heightmap(HeightmapDocument::params(self).clone())
    }

    fn bake_source(&self) -> BakeSource<'_> {
        BakeSource::Heightmap(self.world())
    }

    fn template(&self, b: &Brief<'_>) -> Result<Template, KindError> {
        template(self, b)
    }

    fn stamp(
        &self,
        t: &Template,
        p: [f32; 3],
        _first: Option<[f32; 3]>,
    ) -> Result<Stamp, KindError> {
        let Stamp::Heightmap(b) = t.stamp else {
            return Err(misfit());
        };
        Ok(Stamp::Heightmap(b.with_center([p[0], p[2]])))
    }

    fn dab_size(&self, t: &Template) -> Result<(f32, f32), KindError> {
        let Stamp::Heightmap(b) = t.stamp else {
            return Err(misfit());
        };
        Ok((b.radius, HeightmapDocument::params(self).cell_size))
    }

    fn preview(&mut self, s: &Stamp) -> Result<Preview, KindError> {
        let Stamp::Heightmap(b) = s else {
            return Err(misfit());
        };
        HeightmapDocument::preview(self, b)
            .map(|e| Preview::Heightmap(HeightRun::of(&e)))
            .map_err(refused)
    }

    fn revert(&mut self, p: &Preview) -> Result<(), StoreError> {
        match p {
            Preview::Heightmap(r) => {
                let e = r.edit(self.world());
                self.revert_preview(&e)
            }
            _ => Ok(()),
        }
    }

    fn commit(&mut self, stamps: &[Stamp]) -> Result<Committed, KindError> {
        let brushes = stamps_of(stamps, |s| match s {
            Stamp::Heightmap(b) => Some(*b),
            _ => None,
        });
        let o = self.stroke_stamps(&brushes).map_err(refused)?;
        Ok(committed(o.id, o.changed_nodes))
    }

    fn raycast(&mut self, from: [f32; 3], dir: [f32; 3], max: f32) -> Option<GroundHit> {
        let hit = self.world().raycast(from, dir, max)?;
        Some(GroundHit {
            point: hit.point,
            normal: hit.normal,
            distance: hit.distance,
        })
    }

    fn is_solid(&mut self, p: [f32; 3]) -> bool {
        self.world()
            .height_at(p[0], p[2])
            .is_some_and(|h| p[1] <= h)
    }

    fn density_at(&mut self, p: [f32; 3]) -> Option<f32> {
        self.world().height_at(p[0], p[2]).map(|h| h - p[1])
    }

    fn export(
        &mut self,
        req: &ExportRequest,
        main: &mut MainOut<'_>,
    ) -> Result<Exported, KindError> {
        export(self, req, main)
    }
}

/// The eroded starting heights of a new heightmap world whose recipe has
/// an erosion step (see [`HeightErosion`](isoterra_world::HeightErosion)),
/// computed before anything is created.
fn start_erosion(params: &HeightmapParams) -> Result<Option<crate::ErodedRegion>, KindError> {
    let Some(e) = &params.erosion else {
        return Ok(None);
    };
    let world = isoterra_world::HeightmapWorld::new(params)?;
    crate::erode_region(&world, &crate::ErodeSpec::from(*e)).map(Some)
}

/// Creates a heightmap world file at `path`, eroded first when its recipe
/// says so.
pub(crate) fn create(
    path: &std::path::Path,
    p: &HeightmapParams,
) -> Result<HeightmapDocument<isoterra_store::WorldFile>, KindError> {
    Ok(match start_erosion(p)? {
        Some(e) => HeightmapDocument::create_from_heights(path, p, e.first, e.dims, &e.heights)?,
        None => HeightmapDocument::create(path, p)?,
    })
}

/// Creates a heightmap world in `store`, eroded first when its recipe says
/// so.
pub(crate) fn create_in<S: ChunkStore>(
    store: S,
    p: &HeightmapParams,
) -> Result<HeightmapDocument<S>, KindError> {
    Ok(match start_erosion(p)? {
        Some(e) => {
            HeightmapDocument::create_from_heights_in(store, p, e.first, e.dims, &e.heights)?
        }
        None => HeightmapDocument::create_in(store, p)?,
    })
}

/// The tools of this kind (the kind's part of the [tool schema](crate::schema::tools)).
fn tools(_materials: usize) -> Vec<ToolSpec> {
    vec![
        tool(
            "raise",
            "#4caf50",
            '1',
            "Lifts the ground under the brush.",
            vec![],
        ),
        tool(
            "lower",
            "#795548",
            '2',
            "Sinks the ground under the brush.",
            vec![],
        ),
        tool(
            "smooth",
            "#2196f3",
            '3',
            "Evens out bumps under the brush.",
            vec![],
        ),
        tool(
            "flatten",
            "#9c27b0",
            '4',
            "Pulls the ground toward one height.",
            vec![ParamSpec::number(
                "height",
                -1.0e6,
                1.0e6,
                None,
                false,
                "The target height (default: the height under each dab's centre).",
            )],
        ),
        tool(
            "noise",
            "#ffc107",
            '5',
            "Adds fractal bumps under the brush.",
            vec![seed_param("The seed of the bumps.")],
        ),
        tool(
            "erode",
            "#00897b",
            '6',
            "Carves gullies where water would run (hydraulic erosion).",
            vec![seed_param("The seed of the droplets.")],
        ),
        tool(
            "thermal",
            "#8d6e63",
            '7',
            "Slumps slopes steeper than about 31 degrees (thermal erosion).",
            vec![],
        ),
    ]
}

/// A tool's 32-bit `seed` parameter (default 0).
fn seed_param(description: &'static str) -> ParamSpec {
    ParamSpec::number("seed", 0.0, 4_294_967_295.0, Some(0.0), true, description)
}

/// The template of a stroke of `tool` on a heightmap world.
fn template<S: ChunkStore>(d: &HeightmapDocument<S>, b: &Brief<'_>) -> Result<Template, KindError> {
    let Brief {
        kind,
        tool,
        params,
        radius,
        strength,
        shape,
    } = *b;
    let stamp = {
        round_shape(kind, shape)?;
        let mut brush =
            HeightBrush::new(height_tool(tool.name), [0.0, 0.0], radius).with_strength(strength);
        if let Some(h) = params.number("height")? {
            brush = brush.with_target_height(Some(h as f32));
        }
        if let Some(s) = params.number("seed")? {
            brush = brush.with_seed(s as u64);
        }
        brush.validate(d.params().cell_size)?;
        Stamp::Heightmap(brush)
    };
    Ok(Template {
        stamp,
        normal: None,
    })
}

/// `heights` of a `dims` grid (x fastest) padded to `side x side` by
/// repeating the last column and the last row.
fn pad_square(heights: &[f32], dims: [u32; 2], side: u32) -> Vec<f32> {
    let (w, h) = (dims[0] as usize, dims[1] as usize);
    let side = side as usize;
    let mut out = Vec::with_capacity(side * side);
    for z in 0..side {
        let row = z.min(h - 1) * w;
        out.extend((0..side).map(|x| heights[row + x.min(w - 1)]));
    }
    out
}

/// The nodes an export covers, both ends included: the request's region
/// (nodes covering it), else an imported world's extent.
fn export_nodes<S: ChunkStore>(
    d: &HeightmapDocument<S>,
    req: &ExportRequest,
) -> Result<([i64; 2], [i64; 2], String), KindError> {
    const FORM: &str = "X0,Z0,X1,Z1";
    let cell = d.params().cell_size;
    match (req.region.as_deref(), &d.params().extent) {
        (Some(text), _) => {
            let (lo, hi) = region(text, 2, FORM)?;
            let first = [(lo[0] / cell).floor() as i64, (lo[1] / cell).floor() as i64];
            let last = [(hi[0] / cell).ceil() as i64, (hi[1] / cell).ceil() as i64];
            Ok((first, last, text.to_string()))
        }
        (None, Some(e)) => {
            let (first, last) = (e.first, e.last());
            let p = d.params();
            let text = format!(
                "{},{},{},{}",
                p.node_coord(first[0]),
                p.node_coord(first[1]),
                p.node_coord(last[0]),
                p.node_coord(last[1])
            );
            Ok((first, last, text))
        }
        (None, None) => Err(KindError::invalid(
            "a heightmap world is endless: say which part to export with --region X0,Z0,X1,Z1",
        )),
    }
}

/// The pixels of an image of nodes `first..=last`, refused beyond the
/// export limit.
fn image_dims(first: [i64; 2], last: [i64; 2], text: &str) -> Result<[u32; 2], KindError> {
    let span = |k: usize| {
        last[k]
            .checked_sub(first[k])
            .and_then(|d| d.checked_add(1))
            .and_then(|d| u32::try_from(d).ok())
    };
    let (Some(w), Some(h)) = (span(0), span(1)) else {
        return Err(KindError::TooLarge(format!(
            "region `{text}` is too large to export as one image"
        )));
    };
    if u64::from(w) * u64::from(h) > MAX_EXPORT_NODES {
        return Err(KindError::TooLarge(format!(
            "region `{text}` has {w}x{h} nodes; at most 2^28 fit in one export"
        )));
    }
    Ok([w, h])
}

/// How many of `heights` lie outside `range`.
fn clipped(heights: &[f32], range: [f32; 2]) -> usize {
    heights
        .iter()
        .filter(|h| **h < range[0] || **h > range[1])
        .count()
}

/// The part of a chunk mesh within the nodes `lo..=hi` (world units, x and
/// z): the triangles whose three corners lie in it, and their vertices in
/// their old order, so surface vertices and indices still precede the
/// skirt's. `None` when the whole mesh lies within.
fn crop(mesh: &HeightmapMesh, lo: [f32; 2], hi: [f32; 2]) -> Option<HeightmapMesh> {
    let inside = |v: u32| {
        let p = mesh.positions[v as usize];
        p[0] >= lo[0] && p[0] <= hi[0] && p[2] >= lo[1] && p[2] <= hi[1]
    };
    if (0..mesh.positions.len() as u32).all(inside) {
        return None;
    }
    let mut keep = vec![false; mesh.positions.len()];
    let mut tris = Vec::new();
    for (t, tri) in mesh.indices.chunks_exact(3).enumerate() {
        if tri.iter().all(|&v| inside(v)) {
            tri.iter().for_each(|&v| keep[v as usize] = true);
            tris.push(t);
        }
    }
    let mut remap = vec![u32::MAX; keep.len()];
    let mut out = HeightmapMesh::default();
    for (v, _) in keep.iter().enumerate().filter(|(_, k)| **k) {
        if v as u32 == mesh.skirt_vertex_start {
            out.skirt_vertex_start = out.positions.len() as u32;
        }
        remap[v] = out.positions.len() as u32;
        out.positions.push(mesh.positions[v]);
        out.normals.push(mesh.normals[v]);
        out.uvs.push(mesh.uvs[v]);
        if let (Some(m), Some(t)) = (mesh.morph.get(v), mesh.morph_targets.get(v)) {
            out.morph.push(*m);
            out.morph_targets.push(*t);
        }
    }
    let skirt_v = keep[..mesh.skirt_vertex_start as usize]
        .iter()
        .filter(|k| **k)
        .count();
    out.skirt_vertex_start = skirt_v as u32;
    let mut skirt_i = None;
    for t in tris {
        if skirt_i.is_none() && (t * 3) as u32 >= mesh.skirt_index_start {
            skirt_i = Some(out.indices.len() as u32);
        }
        out.indices.extend(
            mesh.indices[t * 3..t * 3 + 3]
                .iter()
                .map(|&v| remap[v as usize]),
        );
    }
    out.skirt_index_start = skirt_i.unwrap_or(out.indices.len() as u32);
    Some(out)
}

/// Exports a heightmap world.
///
/// The region is `--region` (the nodes covering it), else an imported
/// world's extent; 16-bit images use `--range`, else the world's recorded
/// range, and count (or with `--strict` refuse) the heights that would
/// clip. Mesh exports hold exactly the region's nodes (at LOD `k`, the
/// region grows to whole steps of `2^k` nodes).
fn export<S: ChunkStore>(
    d: &mut HeightmapDocument<S>,
    req: &ExportRequest,
    main: &mut MainOut<'_>,
) -> Result<Exported, KindError> {
    if let Some(rings) = &req.lod_rings {
        return export_rings(d, req, rings, main);
    }
    let (first, last, text) = export_nodes(d, req)?;
    let text = text.as_str();
    let params = d.params().clone();
    match req.format {
        ExportFormat::Png16 | ExportFormat::R16 => {
            if req.lod != 0 {
                return Err(KindError::invalid(
                    "png16 and r16 export every node; --lod applies to glb and obj",
                ));
            }
            let [w, h] = image_dims(first, last, text)?;
            if req.format == ExportFormat::R16 && w != h && !req.pad {
                return Err(KindError::invalid(format!(
                    "region `{text}` is {w}x{h} nodes, but an R16 file must be square: \
                     engines (Unity, Unreal) read its size from its length. Export a square \
                     region (X1 - X0 = Z1 - Z0), or pass --pad to repeat the last row and \
                     column up to {s}x{s}",
                    s = w.max(h)
                )));
            }
            let range = req.range.unwrap_or(d.info().height_range);
            let mut heights = Vec::new();
            d.world().region_heights(first, [w, h], &mut heights)?;
            let clip = clipped(&heights, range);
            if clip > 0 && req.strict {
                return Err(KindError::invalid(format!(
                    "{clip} of the {n} heights lie outside the range {}..{} and would clip; \
                     give a --range that holds them",
                    range[0],
                    range[1],
                    n = heights.len()
                )));
            }
            let mut counts = json!({ "width": w, "height": h, "range": range, "clipped": clip });
            if clip > 0 {
                counts["warnings"] = json!([format!(
                    "{clip} of the {n} heights lie outside the range {}..{} and were clipped \
                     to it (give --range to keep them, or --strict to refuse)",
                    range[0],
                    range[1],
                    n = heights.len()
                )]);
            }
            let (w, h) = if req.format == ExportFormat::R16 && w != h {
                let side = w.max(h);
                heights = pad_square(&heights, [w, h], side);
                counts["width"] = json!(side);
                counts["height"] = json!(side);
                counts["padded_from"] = json!([w, h]);
                (side, side)
            } else {
                (w, h)
            };
            Ok(if req.format == ExportFormat::Png16 {
                Exported::one(
                    export_png16(&heights, [w, h], range)?,
                    "image/png",
                    "heightmap.png",
                    counts,
                )
            } else {
                Exported::one(
                    export_r16(&heights, [w, h], range)?,
                    "application/octet-stream",
                    "heightmap.r16",
                    counts,
                )
            })
        }
        ExportFormat::Exr => {
            if req.lod != 0 || req.range.is_some() || req.strict || req.pad {
                return Err(KindError::invalid(
                    "an EXR holds every node's height as a float: --lod, --range, --strict \
                     and --pad do not apply",
                ));
            }
            let [w, h] = image_dims(first, last, text)?;
            let mut heights = Vec::new();
            d.world().region_heights(first, [w, h], &mut heights)?;
            let lo = heights.iter().copied().fold(f32::INFINITY, f32::min);
            let hi = heights.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            Ok(Exported::one(
                export_exr(&heights, [w, h])?,
                "image/x-exr",
                "heightmap.exr",
                json!({ "width": w, "height": h, "heights": [lo, hi] }),
            ))
        }
        _ => {
            if req.range.is_some() || req.strict {
                return Err(KindError::invalid(
                    "--range and --strict apply to png16 and r16 exports",
                ));
            }
            if req.lod > params.max_lod() {
                return Err(KindError::invalid(format!(
                    "--lod {} is beyond this world's coarsest level {}",
                    req.lod,
                    params.max_lod()
                )));
            }
            // The region's nodes, grown to whole LOD steps.
            let step = 1i64 << req.lod;
            let first = [
                first[0].div_euclid(step) * step,
                first[1].div_euclid(step) * step,
            ];
            let last = [
                div_ceil(last[0], step) * step,
                div_ceil(last[1], step) * step,
            ];
            let n = i64::from(params.chunk_cells);
            let c0 = [first[0].div_euclid(n), first[1].div_euclid(n)];
            let c1 = [
                (last[0] - 1).max(first[0]).div_euclid(n),
                (last[1] - 1).max(first[1]).div_euclid(n),
            ];
            // In i128: a huge region on a fine world overflows i64 here.
            let count = (i128::from(c1[0]) - i128::from(c0[0]) + 1)
                * (i128::from(c1[1]) - i128::from(c0[1]) + 1);
            if count > i128::from(MAX_EXPORT_CHUNKS) {
                return Err(KindError::TooLarge(format!(
                    "region `{text}` covers {count} chunks; export at most {MAX_EXPORT_CHUNKS} at a time"
                )));
            }
            let lo = [params.node_coord(first[0]), params.node_coord(first[1])];
            let hi = [params.node_coord(last[0]), params.node_coord(last[1])];
            let mut meshes = Vec::new();
            for cz in c0[1]..=c1[1] {
                for cx in c0[0]..=c1[0] {
                    let key =
                        MeshKey::new([cx as i32, cz as i32], req.lod).with_neighbours([req.lod; 4]);
                    let m = d.world_mut().mesh(&key)?;
                    let m = match crop(&m, lo, hi) {
                        None => m,
                        Some(part) if part.indices.is_empty() => continue,
                        Some(part) => Arc::new(part),
                    };
                    meshes.push((format!("chunk_{cx}_{cz}"), m));
                }
            }
            let glb: Vec<GlbMesh> = meshes
                .iter()
                .map(|(name, m)| ground_mesh(name, m))
                .collect();
            let triangles: usize = meshes.iter().map(|(_, m)| m.indices.len() / 3).sum();
            let counts = json!({
                "chunks": glb.len(),
                "triangles": triangles,
                "nodes": [(last[0] - first[0]) / step + 1, (last[1] - first[1]) / step + 1],
            });
            mesh_file(&glb, req, WorldKind::Heightmap, counts, main)
        }
    }
}

/// A mesh export of the chunks around a point at their ring's LOD, each
/// stitched to its coarser neighbours, as a stream shows them: the world's
/// streaming source builds every chunk of the wanted set with the LODs of
/// its neighbours (skirts left out: stitched seams need none).
fn export_rings<S: ChunkStore>(
    d: &mut HeightmapDocument<S>,
    req: &ExportRequest,
    rings: &LodRings,
    main: &mut MainOut<'_>,
) -> Result<Exported, KindError> {
    let p = d.params().clone();
    let mut unskirted = p.clone();
    unskirted.mesh = unskirted.mesh.with_skirt_depth(0.0);
    let source =
        HeightmapSource::with_edits(&unskirted, d.world().edit_layer())?.with_colliders(false);
    let config = source.stream_config();
    let selection = rings.selection(&config, 2, p.ring_distances())?;
    let built: Vec<(String, HeightmapMesh, u8)> = chunk_requests(config.dim, &selection)
        .iter()
        .filter_map(|r| {
            let chunk = source.build_request(r)?;
            let lod = r.lod.min(p.max_lod());
            let name = format!("lod{lod}_chunk_{}_{}", r.coord[0], r.coord[1]);
            Some((name, chunk.mesh, lod))
        })
        .filter(|(_, m, _)| !m.indices.is_empty())
        .collect();
    let glb: Vec<GlbMesh> = built.iter().map(|(n, m, _)| ground_mesh(n, m)).collect();
    let mut per_lod = vec![0usize; usize::from(p.max_lod()) + 1];
    for (_, _, lod) in &built {
        per_lod[usize::from(*lod)] += 1;
    }
    let triangles: usize = built.iter().map(|(_, m, _)| m.indices.len() / 3).sum();
    let counts = json!({
        "chunks": glb.len(),
        "triangles": triangles,
        "chunks_per_lod": per_lod,
    });
    mesh_file(&glb, req, WorldKind::Heightmap, counts, main)
}

/// The base colour of the `ground` material of heightmap mesh exports
/// (linear RGBA): a mid grass green, so the OBJ's `.mtl` and an engine's
/// first import show ground rather than white.
pub(crate) const GROUND_COLOR: [f32; 4] = [0.24, 0.36, 0.16, 1.0];

/// A heightmap chunk mesh for a mesh file, with the `ground` material.
fn ground_mesh<'a>(name: &'a str, mesh: &'a HeightmapMesh) -> GlbMesh<'a> {
    GlbMesh::from_heightmap(name, mesh)
        .with_material(Some(GlbMaterial::new("ground", GROUND_COLOR)))
}

/// `a / b` rounded up, for `b > 0`.
fn div_ceil(a: i64, b: i64) -> i64 {
    -((-a).div_euclid(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_repeats_the_last_row_and_column() {
        // 3 x 2 nodes (x fastest) to 3 x 3.
        let h = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        assert_eq!(
            pad_square(&h, [3, 2], 3),
            [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 4.0, 5.0, 6.0]
        );
        // 1 x 2 to 2 x 2.
        assert_eq!(pad_square(&[7.0, 8.0], [1, 2], 2), [7.0, 7.0, 8.0, 8.0]);
    }
}
