//! A side-view world in the kind layer: its defaults, tools, strokes and
//! exports ([`Side2dKind`] and the side-view document's
//! [`TypedDocument`]).

mod bake;
mod preview;
mod recipe;

pub use recipe::Side2dRecipe;

use isoterra_export::{
    GlbMaterial, GlbMesh, GlbPrimitive, PngOptions, export_polylines_json, export_polylines_svg,
    export_side2d_png,
};
use isoterra_field::{Side2dGen, Side2dPreset};
use isoterra_store::{ChunkStore, Side2dDocument, StoreError};
use isoterra_world::{Side2dBrush, Side2dParams};
use serde_json::json;

use crate::BakeSource;
use crate::Stamp;
use crate::WorldParams;
use crate::create::{KindDefaults, SIDE2D_SIZE};
use crate::document::{Committed, GroundHit};
use crate::export::{ExportFile, FileRole, MainOut, MeshNames, material_list, mesh_file};
use crate::kind::Preview;
use crate::per_kind::{
    KindSpec, Settings, TypedDocument, committed, misfit, refused, stamps_of, store_forwards,
};
use crate::schema::{ParamSpec, ToolSpec, tool};
use crate::stroke::{Brief, plain_shape, side2d_tool};
use crate::{ExportFormat, ExportRequest, Exported, KindError, Template, WorldKind};

/// The side-view kind's facts.
pub(crate) struct Side2dKind;

impl KindSpec for Side2dKind {
    fn kind(&self) -> WorldKind {
        WorldKind::Side2d
    }

    fn summary(&self) -> &'static str {
        "2D side-view destructible terrain (marching squares)"
    }

    fn defaults(&self) -> KindDefaults {
        KindDefaults {
            size: Some([256, 128]),
            size_range: Some(SIDE2D_SIZE),
            preset: "hills",
            presets: &["hills", "caves", "cellular"],
            chunk: 32,
        }
    }

    fn params(&self, s: &Settings<'_>) -> Result<WorldParams, KindError> {
        let [w, h] = s.size.unwrap_or([256, 128]);
        let preset: Side2dPreset = s
            .preset
            .parse()
            .map_err(|_| s.unknown_preset(self.kind()))?;
        let generator = Side2dGen::DEFAULT
            .with_preset(preset)
            .with_seed(s.seed)
            .with_width_cells(w)
            .with_height_cells(h)
            .with_cell_size(s.cell);
        Ok(WorldParams::Side2d(
            Side2dParams::DEFAULT
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
        _area: Option<f32>,
    ) -> Result<crate::Preview, KindError> {
        preview::preview(params, n)
    }

    fn tools(&self, materials: usize) -> Vec<ToolSpec> {
        tools(materials)
    }

    fn shapes(&self) -> &'static [&'static str] {
        &["circle", "square"]
    }

    fn formats(&self) -> &'static [ExportFormat] {
        &[
            ExportFormat::Png,
            ExportFormat::Svg,
            ExportFormat::Colliders,
            ExportFormat::Glb,
            ExportFormat::Obj,
        ]
    }

    fn companions(&self, format: ExportFormat) -> &'static [FileRole] {
        match format {
            ExportFormat::Glb => &[FileRole::Colliders],
            ExportFormat::Obj => &[FileRole::Materials, FileRole::Colliders],
            _ => &[],
        }
    }

    fn mesh_names(&self) -> MeshNames {
        MeshNames::new("world", "world.glb", "world.obj", "world.mtl")
    }

    fn dims(&self) -> usize {
        2
    }

    fn point_axes(&self) -> &'static [usize] {
        &[0, 1]
    }
}

impl<S: ChunkStore> TypedDocument<S> for Side2dDocument<S> {
    store_forwards!(Side2dDocument);

    fn kind(&self) -> WorldKind {
        WorldKind::Side2d
    }

    fn params(&self) -> WorldParams {
        WorldParams::Side2d(*Side2dDocument::params(self))
    }

    fn bake_source(&self) -> BakeSource<'_> {
        BakeSource::Side2d(self.world())
    }

    fn materials(&self) -> usize {
        self.world().table().len()
    }

    fn rebuild(&mut self) {
        Side2dDocument::rebuild(self);
    }

    fn template(&self, b: &Brief<'_>) -> Result<Template, KindError> {
        template(b)
    }

    fn stamp(
        &self,
        t: &Template,
        p: [f32; 3],
        _first: Option<[f32; 3]>,
    ) -> Result<Stamp, KindError> {
        let Stamp::Side2d(b) = t.stamp else {
            return Err(misfit());
        };
        Ok(Stamp::Side2d(b.with_center([p[0], p[1]])))
    }

    fn dab_size(&self, t: &Template) -> Result<(f32, f32), KindError> {
        let Stamp::Side2d(b) = t.stamp else {
            return Err(misfit());
        };
        Ok((b.radius, Side2dDocument::params(self).generator.cell_size))
    }

    fn preview(&mut self, s: &Stamp) -> Result<Preview, KindError> {
        let Stamp::Side2d(b) = s else {
            return Err(misfit());
        };
        Side2dDocument::preview(self, b)
            .map(Preview::Side2d)
            .map_err(refused)
    }

    fn revert(&mut self, p: &Preview) -> Result<(), StoreError> {
        match p {
            Preview::Side2d(e) => self.revert_preview(e),
            _ => Ok(()),
        }
    }

    fn commit(&mut self, stamps: &[Stamp]) -> Result<Committed, KindError> {
        let brushes = stamps_of(stamps, |s| match s {
            Stamp::Side2d(b) => Some(*b),
            _ => None,
        });
        let o = self.stroke_stamps(&brushes).map_err(refused)?;
        Ok(committed(o.id, o.changed_nodes))
    }

    fn raycast(&mut self, from: [f32; 3], dir: [f32; 3], max: f32) -> Option<GroundHit> {
        let to = [from[0] + dir[0] * max, from[1] + dir[1] * max];
        let hit = self.world().raycast([from[0], from[1]], to)?;
        Some(GroundHit {
            point: [hit.point[0], hit.point[1], 0.0],
            normal: [hit.normal[0], hit.normal[1], 0.0],
            distance: hit.t * max,
        })
    }

    fn is_solid(&mut self, p: [f32; 3]) -> bool {
        self.world().is_solid([p[0], p[1]])
    }

    fn density_at(&mut self, p: [f32; 3]) -> Option<f32> {
        self.world().density_at([p[0], p[1]])
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
fn tools(materials: usize) -> Vec<ToolSpec> {
    let last = materials.saturating_sub(1) as f64;
    vec![
        tool(
            "dig",
            "#ff9800",
            '1',
            "Removes ground inside the brush.",
            vec![],
        ),
        tool(
            "fill",
            "#4caf50",
            '2',
            "Adds ground of the chosen material inside the brush.",
            vec![ParamSpec::number(
                "material",
                0.0,
                last,
                Some(0.0),
                true,
                "The material the new ground is made of.",
            )],
        ),
    ]
}

/// The template of a stroke of `tool` on a side-view world.
fn template(b: &Brief<'_>) -> Result<Template, KindError> {
    let Brief {
        kind,
        tool,
        params,
        radius,
        strength,
        shape,
    } = *b;
    let stamp = {
        let shape = plain_shape(kind, shape)?;
        let material = params.number("material")?.unwrap_or(0.0) as u8;
        let brush = Side2dBrush::new(side2d_tool(tool.name), [0.0, 0.0], radius)
            .with_shape(shape)
            .with_strength(strength)
            .with_material(material);
        brush.validate()?;
        Stamp::Side2d(brush)
    };
    Ok(Template {
        stamp,
        normal: None,
    })
}

/// Exports a side-view world.
fn export<S: ChunkStore>(
    d: &mut Side2dDocument<S>,
    req: &ExportRequest,
    main: &mut MainOut<'_>,
) -> Result<Exported, KindError> {
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
            let bytes = export_side2d_png(
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
            let svg = export_polylines_svg(&contours, [ox, oy, w, h], &Default::default());
            Exported::one(svg.into_bytes(), "image/svg+xml", "world.svg", counts)
        }
        ExportFormat::Glb | ExportFormat::Obj => {
            // The fill mesh, one node per chunk and one primitive per
            // material (named and coloured from the world's table), with the
            // collider polylines beside it.
            let table = material_list(world.table());
            let chunks: Vec<_> = world
                .chunks()
                .iter()
                .filter(|c| !c.mesh.indices.is_empty())
                .collect();
            let names: Vec<String> = chunks
                .iter()
                .map(|c| format!("chunk_{}_{}", c.coord[0], c.coord[1]))
                .collect();
            let primitives: Vec<Vec<GlbPrimitive>> = chunks
                .iter()
                .map(|c| {
                    c.mesh
                        .submeshes
                        .iter()
                        .map(|s| {
                            let (name, color) = &table[usize::from(s.material)];
                            let mat = GlbMaterial::new(name, *color);
                            GlbPrimitive::new(s.start, s.count, Some(mat))
                        })
                        .collect()
                })
                .collect();
            let mut meshes: Vec<GlbMesh> = chunks
                .iter()
                .zip(&names)
                .zip(&primitives)
                .map(|((c, n), p)| {
                    GlbMesh::new(n, &c.mesh.positions, &c.mesh.indices)
                        .with_normals(&c.mesh.normals)
                        .with_uvs(&c.mesh.uvs)
                        .with_primitives(p)
                })
                .collect();
            let grass = grass_rims(world);
            let grass_material = grass_material(&table);
            meshes.extend(grass.iter().map(|g| {
                GlbMesh::new(&g.name, &g.positions, &g.strip.indices)
                    .with_normals(&g.normals)
                    .with_uvs(&g.strip.uvs)
                    .with_colors(&g.colors)
                    .with_material(Some(grass_material))
            }));
            let triangles: usize = chunks.iter().map(|c| c.mesh.indices.len() / 3).sum();
            let colliders = world
                .colliders(req.tolerance)
                .map_err(|e| KindError::invalid(format!("cannot build colliders: {e}")))?;
            let counts = json!({
                "chunks": chunks.len(),
                "grass_rims": grass.len(),
                "triangles": triangles,
                "contours": contours.len(),
                "colliders": colliders.len(),
            });
            let mut out = mesh_file(&meshes, req, WorldKind::Side2d, counts, main)?;
            out.files.push(ExportFile {
                role: FileRole::Colliders,
                bytes: export_polylines_json(&colliders).into_bytes(),
                content_type: "application/json",
                file_name: "world.colliders.json",
            });
            out
        }
        _ => {
            let colliders = world
                .colliders(req.tolerance)
                .map_err(|e| KindError::invalid(format!("cannot build colliders: {e}")))?;
            Exported::one(
                export_polylines_json(&colliders).into_bytes(),
                "application/json",
                "world.json",
                counts,
            )
        }
    })
}

/// The grass rim of one chunk for a mesh export, lying a hundredth of a
/// cell in front of the fill (toward +z, where a glTF camera looks from) so
/// that it draws over it.
struct GrassRim {
    name: String,
    strip: isoterra_mesh::StripMesh,
    positions: Vec<[f32; 3]>,
    normals: Vec<[f32; 3]>,
    /// White, with the rim's fade in alpha (the material carries the colour).
    colors: Vec<[f32; 4]>,
}

/// The grass rims of every chunk that has one (see
/// [`Side2dWorld::grass_strip`](isoterra_world::Side2dWorld::grass_strip)).
fn grass_rims(world: &isoterra_world::Side2dWorld) -> Vec<GrassRim> {
    let z = 0.01 * world.field().cell_size();
    world
        .chunks()
        .iter()
        .filter_map(|c| {
            let mut strip = isoterra_mesh::StripMesh::default();
            world.grass_strip(c, &mut strip).ok()?;
            if strip.indices.is_empty() {
                return None;
            }
            Some(GrassRim {
                name: format!("grass_{}_{}", c.coord[0], c.coord[1]),
                positions: strip.positions.iter().map(|p| [p[0], p[1], z]).collect(),
                normals: vec![[0.0, 0.0, 1.0]; strip.positions.len()],
                colors: strip
                    .uvs
                    .iter()
                    .map(|uv| [1.0, 1.0, 1.0, isoterra_world::grass_alpha(uv[1])])
                    .collect(),
                strip,
            })
        })
        .collect()
}

/// The grass rims' material: the table's `grass` colour (a default green
/// when it has none), blended by the rims' alpha.
fn grass_material(table: &[(String, [f32; 4])]) -> GlbMaterial<'static> {
    let color = table
        .iter()
        .find(|(name, _)| name == "grass")
        .map_or([0.09, 0.30, 0.05, 1.0], |(_, c)| *c);
    GlbMaterial::new("grass_rim", color).with_blend(true)
}
