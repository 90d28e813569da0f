//! Exports of a world of any kind: the formats each kind offers, one
//! request type, and the files an export makes.

use std::fmt;
use std::str::FromStr;

use isoterra_export::{
    GlbMesh, PngLayersMesh, PngOptions, TiledExport, export_map_glb, export_png_layers,
    export_png16, export_r16, export_tiled, export_tiled_tmx, pathing_png, polylines_json,
    polylines_svg, render_side2d_png, write_glb, write_obj,
};
use isoterra_store::ChunkStore;
use isoterra_world::{
    MeshKey, PathingRules, VoxelChunkMesh, VoxelLodMesher, VoxelMesher, pathing_grid,
};
use serde_json::{Map, Value, json};

use crate::document::AnyDocument;
use crate::schema::COORD_LIMIT;
use crate::{Document, KindError, WorldKind};

/// Largest number of chunks one mesh export (glb, OBJ) covers.
pub const MAX_EXPORT_CHUNKS: i64 = 4096;
/// Largest number of nodes one heightmap image export (PNG16, R16) holds.
pub const MAX_EXPORT_NODES: u64 = 1 << 28;

/// An export format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExportFormat {
    /// A picture: terrain coloured by material with contour lines (side2d).
    Png,
    /// The contours as SVG paths (side2d).
    Svg,
    /// Collider polylines as JSON (side2d).
    Colliders,
    /// glTF 2.0 binary (heightmap, voxel, map).
    Glb,
    /// Wavefront OBJ (heightmap, voxel).
    Obj,
    /// 16-bit grayscale PNG heightmap (heightmap).
    Png16,
    /// Raw little-endian 16-bit heightmap (heightmap).
    R16,
    /// 16-bit RGB layer image and its JSON sidecar (map).
    PngLayers,
    /// Tiled map with level and pathing layers, JSON or TMX (map).
    Tiled,
    /// The pathing grid as an RGB PNG (map).
    Pathing,
}

impl ExportFormat {
    /// Every format.
    pub const ALL: [ExportFormat; 10] = [
        ExportFormat::Png,
        ExportFormat::Svg,
        ExportFormat::Colliders,
        ExportFormat::Glb,
        ExportFormat::Obj,
        ExportFormat::Png16,
        ExportFormat::R16,
        ExportFormat::PngLayers,
        ExportFormat::Tiled,
        ExportFormat::Pathing,
    ];

    /// The format's name, as `--format` and the editor take it.
    pub const fn name(self) -> &'static str {
        match self {
            ExportFormat::Png => "png",
            ExportFormat::Svg => "svg",
            ExportFormat::Colliders => "colliders",
            ExportFormat::Glb => "glb",
            ExportFormat::Obj => "obj",
            ExportFormat::Png16 => "png16",
            ExportFormat::R16 => "r16",
            ExportFormat::PngLayers => "png-layers",
            ExportFormat::Tiled => "tiled",
            ExportFormat::Pathing => "pathing",
        }
    }

    /// The formats a world of `kind` exports.
    pub const fn of(kind: WorldKind) -> &'static [ExportFormat] {
        match kind {
            WorldKind::Side2d => &[
                ExportFormat::Png,
                ExportFormat::Svg,
                ExportFormat::Colliders,
            ],
            WorldKind::Heightmap => &[
                ExportFormat::Png16,
                ExportFormat::R16,
                ExportFormat::Glb,
                ExportFormat::Obj,
            ],
            WorldKind::Voxel => &[ExportFormat::Glb, ExportFormat::Obj],
            WorldKind::Map => &[
                ExportFormat::Glb,
                ExportFormat::PngLayers,
                ExportFormat::Tiled,
                ExportFormat::Pathing,
            ],
        }
    }
}

impl fmt::Display for ExportFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ExportFormat {
    type Err = KindError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ExportFormat::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| KindError::invalid(format!("unknown export format `{s}`")))
    }
}

/// What to export.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ExportRequest {
    /// The format.
    pub format: ExportFormat,
    /// The region of an endless world, as text: `X0,Z0,X1,Z1` (heightmap)
    /// or `X0,Y0,Z0,X1,Y1,Z1` (voxel), world units. Bounded worlds export
    /// whole and take none.
    pub region: Option<String>,
    /// Level of detail of a mesh export (0 = full resolution).
    pub lod: u8,
    /// The height range 16-bit codes map to (heightmap images; default: the
    /// generator's fixed range).
    pub range: Option<[f32; 2]>,
    /// PNG pixels per cell (side2d; default: about 1024 pixels wide).
    pub scale: Option<f32>,
    /// Collider simplification tolerance in cells (side2d).
    pub tolerance: f32,
    /// Tiled: write TMX instead of JSON.
    pub tmx: bool,
}

impl ExportRequest {
    /// A request for `format` with every option at its default.
    pub fn new(format: ExportFormat) -> Self {
        ExportRequest {
            format,
            region: None,
            lod: 0,
            range: None,
            scale: None,
            tolerance: 0.05,
            tmx: false,
        }
    }

    /// Sets the region.
    pub fn with_region(mut self, region: Option<String>) -> Self {
        self.region = region;
        self
    }
}

/// What a file of an export is to its export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileRole {
    /// The file the user asked for.
    Main,
    /// A JSON file that goes beside it (the map layer image's sidecar).
    Sidecar,
}

/// One file of an export.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportFile {
    /// What the file is to the export.
    pub role: FileRole,
    /// Its contents.
    pub bytes: Vec<u8>,
    /// Its media type.
    pub content_type: &'static str,
    /// A file name for a download.
    pub file_name: &'static str,
}

/// The result of an export: its files (the main one first) and counts of
/// what it holds (`chunks`, `triangles`, `contours`, `width`, …).
#[derive(Debug, Clone, PartialEq)]
pub struct Exported {
    /// The files, the [`FileRole::Main`] one first.
    pub files: Vec<ExportFile>,
    /// What the export holds.
    pub counts: Map<String, Value>,
}

impl Exported {
    fn one(
        bytes: Vec<u8>,
        content_type: &'static str,
        file_name: &'static str,
        counts: Value,
    ) -> Self {
        let counts = match counts {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        Exported {
            files: vec![ExportFile {
                role: FileRole::Main,
                bytes,
                content_type,
                file_name,
            }],
            counts,
        }
    }

    /// The main file.
    pub fn main(&self) -> &ExportFile {
        &self.files[0]
    }
}

/// Parses `n` comma-separated finite numbers within the coordinate limit.
fn numbers(text: &str, n: usize, form: &str) -> Result<Vec<f32>, KindError> {
    let parts: Vec<&str> = text.split(',').collect();
    if parts.len() != n {
        return Err(KindError::invalid(format!("region `{text}` is not {form}")));
    }
    parts
        .iter()
        .map(|p| {
            let v: f32 = p.trim().parse().map_err(|_| {
                KindError::invalid(format!("`{p}` in region `{text}` is not a number ({form})"))
            })?;
            if !v.is_finite() || f64::from(v).abs() > COORD_LIMIT {
                return Err(KindError::invalid(format!(
                    "region `{text}` must hold finite numbers within ±{COORD_LIMIT}"
                )));
            }
            Ok(v)
        })
        .collect()
}

/// A region `lo..=hi` of `axes` numbers each.
fn region(text: &str, axes: usize, form: &str) -> Result<(Vec<f32>, Vec<f32>), KindError> {
    let v = numbers(text, 2 * axes, form)?;
    let (lo, hi) = v.split_at(axes);
    if lo.iter().zip(hi).any(|(a, b)| a > b) {
        return Err(KindError::invalid(format!(
            "region `{text}` is inverted: the minimum corner must come first ({form})"
        )));
    }
    Ok((lo.to_vec(), hi.to_vec()))
}

impl<S: ChunkStore> Document<S> {
    /// The formats this world exports.
    pub fn exports(&self) -> &'static [ExportFormat] {
        ExportFormat::of(self.kind())
    }

    /// Exports the world (open strokes' previews left out).
    ///
    /// # Errors
    ///
    /// [`KindError::Invalid`] for a format or option that does not apply to
    /// this kind, a bad region or one that is too large; export errors.
    pub fn export(&mut self, req: &ExportRequest) -> Result<Exported, KindError> {
        let kind = self.kind();
        if !self.exports().contains(&req.format) {
            let names: Vec<&str> = self.exports().iter().map(|f| f.name()).collect();
            return Err(KindError::invalid(format!(
                "format {} does not apply to {kind} worlds ({kind} exports {})",
                req.format,
                names.join(", ")
            )));
        }
        self.with_previews_lifted(|doc| match doc {
            AnyDocument::Side2d(d) => {
                if req.region.is_some() || req.lod != 0 || req.range.is_some() {
                    return Err(KindError::invalid(
                        "--region, --lod and --range apply to voxel and heightmap worlds; a side2d export covers the whole world",
                    ));
                }
                d.rebuild();
                let world = d.world();
                let contours = world.contours();
                let counts = json!({ "contours": contours.len() });
                Ok(match req.format {
                    ExportFormat::Png => {
                        let mut options = PngOptions::DEFAULT.with_iso(world.params().iso);
                        if let Some(s) = req.scale {
                            options = options.with_pixels_per_cell(s);
                        }
                        let bytes = render_side2d_png(
                            world.field(),
                            Some(world.materials()),
                            world.table(),
                            &contours,
                            &options,
                        )?;
                        Exported::one(bytes, "image/png", "world.png", counts)
                    }
                    ExportFormat::Svg => {
                        let f = world.field();
                        let [ox, oy] = f.origin();
                        let w = (f.width() - 1) as f32 * f.cell_size();
                        let h = (f.height() - 1) as f32 * f.cell_size();
                        let svg = polylines_svg(&contours, [ox, oy, w, h], &Default::default());
                        Exported::one(svg.into_bytes(), "image/svg+xml", "world.svg", counts)
                    }
                    _ => {
                        let colliders = world
                            .colliders(req.tolerance)
                            .map_err(|e| KindError::invalid(format!("cannot build colliders: {e}")))?;
                        Exported::one(
                            polylines_json(&colliders).into_bytes(),
                            "application/json",
                            "world.json",
                            counts,
                        )
                    }
                })
            }
            AnyDocument::Map(d) => {
                if req.region.is_some() || req.lod != 0 || req.range.is_some() {
                    return Err(KindError::invalid(
                        "--region, --lod and --range do not apply to map worlds; a map export covers the whole map",
                    ));
                }
                let params = *d.params();
                let layers = d.world().layers();
                let rules = PathingRules::DEFAULT.with_level_height(params.mesh.level_height);
                let invalid = |e: isoterra_world::WorldError| KindError::invalid(e.to_string());
                Ok(match req.format {
                    ExportFormat::Glb => Exported::one(
                        export_map_glb(layers, &params.mesh)?,
                        "model/gltf-binary",
                        "map.glb",
                        json!({}),
                    ),
                    ExportFormat::PngLayers => {
                        let m = PngLayersMesh::new(
                            params.mesh.cell_size,
                            params.mesh.level_height,
                            params.mesh.chasm_depth,
                        );
                        let files = export_png_layers(layers, Some(m))?;
                        let mut out =
                            Exported::one(files.png, "image/png", "map-layers.png", json!({}));
                        out.files.push(ExportFile {
                            role: FileRole::Sidecar,
                            bytes: files.sidecar,
                            content_type: "application/json",
                            file_name: "map-layers.json",
                        });
                        out
                    }
                    ExportFormat::Tiled => {
                        let grid = pathing_grid(layers, &rules).map_err(invalid)?;
                        if req.tmx {
                            let bytes = export_tiled_tmx(layers, Some(&grid), &TiledExport::DEFAULT)?;
                            Exported::one(bytes, "application/xml", "map.tmx", json!({}))
                        } else {
                            let bytes = export_tiled(layers, Some(&grid), &TiledExport::DEFAULT)?;
                            Exported::one(bytes, "application/json", "map.tmj", json!({}))
                        }
                    }
                    _ => {
                        let grid = pathing_grid(layers, &rules).map_err(invalid)?;
                        Exported::one(
                            pathing_png(&grid)?,
                            "image/png",
                            "map-pathing.png",
                            json!({}),
                        )
                    }
                })
            }
            AnyDocument::Heightmap(d) => {
                const FORM: &str = "X0,Z0,X1,Z1";
                let text = req.region.as_deref().ok_or_else(|| {
                    KindError::invalid(
                        "a heightmap world is endless: say which part to export with --region X0,Z0,X1,Z1",
                    )
                })?;
                let (lo, hi) = region(text, 2, FORM)?;
                let params = *d.params();
                let cell = params.cell_size;
                // Nodes covering the region, both ends included.
                let first = [(lo[0] / cell).floor() as i64, (lo[1] / cell).floor() as i64];
                let last = [(hi[0] / cell).ceil() as i64, (hi[1] / cell).ceil() as i64];
                let invalid = |e: isoterra_world::WorldError| KindError::invalid(e.to_string());
                match req.format {
                    ExportFormat::Png16 | ExportFormat::R16 => {
                        if req.lod != 0 {
                            return Err(KindError::invalid(
                                "png16 and r16 export every node; --lod applies to glb and obj",
                            ));
                        }
                        let w = u32::try_from(last[0] - first[0] + 1).ok();
                        let h = u32::try_from(last[1] - first[1] + 1).ok();
                        let (Some(w), Some(h)) = (w, h) else {
                            return Err(KindError::TooLarge(format!(
                                "region `{text}` is too large to export as one image"
                            )));
                        };
                        if u64::from(w) * u64::from(h) > MAX_EXPORT_NODES {
                            return Err(KindError::TooLarge(format!(
                                "region `{text}` has {w}x{h} nodes; at most 2^28 fit in one export"
                            )));
                        }
                        let range = req.range.unwrap_or(d.info().height_range);
                        let mut heights = Vec::new();
                        d.world()
                            .region_heights(first, [w, h], &mut heights)
                            .map_err(invalid)?;
                        let counts = json!({ "width": w, "height": h, "range": range });
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
                    _ => {
                        if req.range.is_some() {
                            return Err(KindError::invalid(
                                "--range applies to png16 and r16 exports",
                            ));
                        }
                        if req.lod > params.max_lod() {
                            return Err(KindError::invalid(format!(
                                "--lod {} is beyond this world's coarsest level {}",
                                req.lod,
                                params.max_lod()
                            )));
                        }
                        let n = i64::from(params.chunk_cells);
                        let c0 = [first[0].div_euclid(n), first[1].div_euclid(n)];
                        let c1 = [
                            (last[0] - 1).max(first[0]).div_euclid(n),
                            (last[1] - 1).max(first[1]).div_euclid(n),
                        ];
                        let count = (c1[0] - c0[0] + 1) * (c1[1] - c0[1] + 1);
                        if count > MAX_EXPORT_CHUNKS {
                            return Err(KindError::TooLarge(format!(
                                "region `{text}` covers {count} chunks; export at most {MAX_EXPORT_CHUNKS} at a time"
                            )));
                        }
                        let mut meshes = Vec::new();
                        for cz in c0[1]..=c1[1] {
                            for cx in c0[0]..=c1[0] {
                                let key = MeshKey::new([cx as i32, cz as i32], req.lod)
                                    .with_neighbours([req.lod; 4]);
                                let m = d.world_mut().mesh(&key).map_err(invalid)?;
                                meshes.push((format!("chunk_{cx}_{cz}"), m));
                            }
                        }
                        let glb: Vec<GlbMesh> = meshes
                            .iter()
                            .map(|(name, m)| GlbMesh::from_heightmap(name, m))
                            .collect();
                        let triangles: usize =
                            meshes.iter().map(|(_, m)| m.indices.len() / 3).sum();
                        let counts = json!({ "chunks": glb.len(), "triangles": triangles });
                        mesh_file(&glb, req.format, "heightmap", counts)
                    }
                }
            }
            AnyDocument::Voxel(d) => {
                const FORM: &str = "X0,Y0,Z0,X1,Y1,Z1";
                let text = req.region.as_deref().ok_or_else(|| {
                    KindError::invalid(
                        "a voxel world is endless: say which part to export with --region X0,Y0,Z0,X1,Y1,Z1",
                    )
                })?;
                let (lo, hi) = region(text, 3, FORM)?;
                let invalid = |e: isoterra_world::WorldError| KindError::invalid(e.to_string());
                let (min, max) = d
                    .world()
                    .chunks_covering([lo[0], lo[1], lo[2]], [hi[0], hi[1], hi[2]])
                    .map_err(invalid)?;
                let count: i64 = (0..3)
                    .map(|k| i64::from(max[k]) - i64::from(min[k]) + 1)
                    .product();
                if count > MAX_EXPORT_CHUNKS {
                    return Err(KindError::TooLarge(format!(
                        "region `{text}` covers {count} chunks; export at most {MAX_EXPORT_CHUNKS} at a time"
                    )));
                }
                let mut names = Vec::new();
                let mut parts: Vec<MeshParts> = Vec::new();
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
                                    parts.push((m.positions, m.normals, m.indices));
                                }
                            }
                        }
                    }
                } else {
                    // Coarser levels sample every 2^lod nodes; unedited
                    // chunks come straight from the generator.
                    let meshed = VoxelLodMesher::new()
                        .mesh_region(d.world(), min, max, req.lod)
                        .map_err(invalid)?;
                    for (c, m) in meshed {
                        if !m.indices.is_empty() {
                            names.push(format!("lod{}_chunk_{}_{}_{}", req.lod, c[0], c[1], c[2]));
                            parts.push((m.positions, m.normals, m.indices));
                        }
                    }
                }
                let glb: Vec<GlbMesh> = names
                    .iter()
                    .zip(&parts)
                    .map(|(n, (p, nr, i))| GlbMesh::new(n, p, i).with_normals(nr))
                    .collect();
                let triangles: usize = parts.iter().map(|(_, _, i)| i.len() / 3).sum();
                let counts = json!({ "chunks": glb.len(), "triangles": triangles });
                mesh_file(&glb, req.format, "voxel", counts)
            }
        })
    }
}

/// Positions, normals and indices of one chunk's mesh.
type MeshParts = (Vec<[f32; 3]>, Vec<[f32; 3]>, Vec<u32>);

/// A glb or OBJ file of `meshes`.
fn mesh_file(
    meshes: &[GlbMesh],
    format: ExportFormat,
    stem: &'static str,
    counts: Value,
) -> Result<Exported, KindError> {
    Ok(if format == ExportFormat::Glb {
        let name = if stem == "voxel" {
            "voxel.glb"
        } else {
            "heightmap.glb"
        };
        Exported::one(write_glb(meshes)?, "model/gltf-binary", name, counts)
    } else {
        let name = if stem == "voxel" {
            "voxel.obj"
        } else {
            "heightmap.obj"
        };
        Exported::one(
            write_obj(meshes)?.into_bytes(),
            "text/plain; charset=utf-8",
            name,
            counts,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_parse_and_bad_ones_are_refused() {
        let f = "X0,Y0,Z0,X1,Y1,Z1";
        assert_eq!(
            region("0,0,0,4,5,6", 3, f).unwrap(),
            (vec![0.0, 0.0, 0.0], vec![4.0, 5.0, 6.0])
        );
        assert!(region("0,0,0,4,5", 3, f).is_err());
        assert!(region("5,0,0,4,5,6", 3, f).is_err());
        assert!(region("nan,0,1,1", 2, f).is_err());
        assert!(region("1e30,0,1e31,1", 2, f).is_err());
        assert!(region("inf,0,1,1", 2, f).is_err());
        assert_eq!(
            region("1,2,1,2", 2, f).unwrap(),
            (vec![1.0, 2.0], vec![1.0, 2.0])
        );
    }

    #[test]
    fn every_kind_exports_and_formats_round_trip() {
        for kind in WorldKind::ALL {
            assert!(!ExportFormat::of(kind).is_empty());
        }
        for f in ExportFormat::ALL {
            assert_eq!(f.name().parse::<ExportFormat>().unwrap(), f);
        }
    }
}
