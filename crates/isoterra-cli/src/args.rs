//! Command-line arguments.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use isoterra::kind::WorldKind;

/// isoterra: terrain from density fields.
#[derive(Debug, Parser)]
#[command(name = "isoterra", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Let an output file (-o, a bake folder's files) replace what is at its
    /// path even when that is not a regular file (a symlink, a FIFO, a
    /// device); without it those are refused and left alone.
    #[arg(long, global = true)]
    pub force: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the web editor for a world file (created when missing).
    Edit(EditArgs),
    /// Create a world file from a generator preset or a recipe.
    New(NewArgs),
    /// Print a generator recipe (a preset's parameters, every one named) as
    /// JSON, to edit and give to `new --recipe`.
    Recipe(RecipeArgs),
    /// Draw a small picture of the world a preset or recipe makes, without
    /// creating it: side2d and map whole, a heightmap's shaded relief
    /// around the origin, a voxel world's slice through z = 0.
    Preview(PreviewArgs),
    /// Print what a world file holds.
    Info(InfoArgs),
    /// Apply one brush stroke with a tool of the world's kind and save it.
    ///
    /// side2d digs and fills; heightmap raises, lowers, smooths, flattens and
    /// adds noise; voxel digs, adds, smooths, flattens and paints; map shapes
    /// ground and cliffs, ramps, water, textures and pathing (see --tool).
    Stroke(StrokeArgs),
    /// Undo the last stroke.
    Undo(FileArg),
    /// Redo the last undone stroke.
    Redo(FileArg),
    /// Export a world in one of its kind's formats (see --format).
    ///
    /// side2d: png, svg (contours), colliders (JSON), glb, obj (the fill mesh,
    /// with OUT.colliders.json beside it); heightmap: png16, r16, exr, glb, obj
    /// (of a --region, or an imported image's extent, or at mixed LOD around
    /// a point with --lod-rings); voxel: glb, obj (of a --region, or with
    /// --lod-rings); map: glb, obj, png-layers, tiled (JSON or TMX), pathing
    /// (PNG), colliders (each cliff level's outlines, JSON). An OBJ with
    /// materials comes with OUT.mtl beside it.
    Export(ExportArgs),
    /// Contour a 2D .npy array.
    Contour(ContourArgs),
    /// Isosurface of a 3D .npy array (marching cubes).
    Mesh3d(Mesh3dArgs),
    /// Create a heightmap world from a 16-bit PNG, 8-bit PNG, R16 or float
    /// EXR file, or a map world from a Tiled map (JSON or TMX).
    Import(ImportArgs),
    /// Run the standard benchmark workloads of a group.
    Bench(BenchArgs),
    /// Create a side-view world, dig into it and export a PNG, in one go.
    Demo(DemoArgs),
    /// Bake a region's chunk meshes and colliders into the file or a folder.
    Bake(BakeArgs),
    /// Side2d worlds: the floating islands (ground that nothing holds up):
    /// area, centroid, bounds and outline of each.
    Islands(IslandsArgs),
    /// Where a ray first meets the ground of a voxel, side2d or heightmap
    /// world: the point, the surface normal there and the distance.
    Raycast(RaycastArgs),
    /// Heightmap worlds: erode a region (hydraulic droplets, then thermal
    /// slumping if asked) as one undoable stroke. The result on each node
    /// does not depend on the region's bounds (tiling rule), so a region
    /// eroded in parts from the same heights equals it eroded whole.
    Erode(ErodeArgs),
    /// Map worlds: whether a unit at --from sees --to (higher ground sees
    /// lower ground, not the other way round).
    Los(LosArgs),
    /// Map worlds: a shortest route from --from to --to over the cells a
    /// ground unit can walk (around cliffs, steep slopes and deep water),
    /// or an air unit can fly over (--air).
    Path(PathArgs),
    /// Copy baked chunks from part files (copies of the same world, each
    /// baked with `bake --part K/N`, possibly on other machines) into FILE.
    Merge(MergeArgs),
}

/// A world kind as `--kind` takes it: every kind the kind layer has, by
/// name, with its one-line summary as help.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kind(pub WorldKind);

/// Every kind, as `--kind` lists them.
const KINDS: [Kind; WorldKind::ALL.len()] = {
    let mut out = [Kind(WorldKind::ALL[0]); WorldKind::ALL.len()];
    let mut i = 0;
    while i < out.len() {
        out[i] = Kind(WorldKind::ALL[i]);
        i += 1;
    }
    out
};

impl ValueEnum for Kind {
    fn value_variants<'a>() -> &'a [Self] {
        &KINDS
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.0.name()).help(self.0.summary()))
    }
}

#[derive(Debug, Args)]
pub struct NewArgs {
    /// The world file to create (it must not exist).
    pub file: PathBuf,
    #[command(flatten)]
    pub generator: GeneratorArgs,
    /// Cells per chunk side (default 64 for map and heightmap worlds, 32 for
    /// side2d and voxel worlds).
    #[arg(long)]
    pub chunk: Option<u32>,
}

/// What a new world is made of: `new` and `preview` take the same flags.
#[derive(Debug, Args)]
pub struct GeneratorArgs {
    /// World kind.
    #[arg(long, value_enum, default_value = "side2d")]
    pub kind: Kind,
    /// Generator seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Size in cells, WIDTHxHEIGHT (side2d, default 256x128; map, default
    /// 256x256).
    #[arg(long)]
    pub size: Option<String>,
    /// Generator preset: side2d caves|hills|cellular (default hills), voxel
    /// caves|overhangs|planet|mesas (default caves), heightmap hills|mountains|islands
    /// (default hills), map island|plateaus|blank (default island).
    #[arg(long)]
    pub preset: Option<String>,
    /// A recipe file (JSON, see `isoterra recipe`): the generator in full,
    /// instead of a preset. --seed, --size, --chunk and --cell-size still
    /// apply; a recipe does not carry them.
    #[arg(long, conflicts_with = "preset", value_name = "RECIPE.json")]
    pub recipe: Option<PathBuf>,
    /// World units per cell.
    #[arg(long, default_value_t = 1.0)]
    pub cell_size: f32,
}

#[derive(Debug, Args)]
pub struct InfoArgs {
    /// The world file.
    pub file: PathBuf,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Print, as the last line, a hash of the world: its kind, seed and
    /// generator recipe, the current field data and, when the file holds
    /// baked chunks, those too. Equal worlds print equal hashes whatever
    /// their history.
    #[arg(long)]
    pub hash: bool,
    /// Print the world's generator recipe (JSON, as `isoterra recipe`
    /// prints it) instead of the summary.
    #[arg(long, conflicts_with_all = ["json", "hash"])]
    pub recipe: bool,
}

#[derive(Debug, Args)]
pub struct RecipeArgs {
    /// World kind.
    #[arg(long, value_enum)]
    pub kind: Kind,
    /// The preset whose recipe to print (default: the kind's default
    /// preset; see `new --preset`).
    #[arg(long)]
    pub preset: Option<String>,
    /// Heightmaps: add the default erosion step (hydraulic erosion of the
    /// 512-unit square around the origin, run once when the world is
    /// created), to edit before `new --recipe`.
    #[arg(long)]
    pub erosion: bool,
    /// Write the recipe to this file instead of standard output.
    #[arg(short = 'o', long = "out")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct PreviewArgs {
    /// The PNG file to write.
    pub out: PathBuf,
    #[command(flatten)]
    pub generator: GeneratorArgs,
    /// Longest side of the picture in pixels (16 to 1024).
    #[arg(long, default_value_t = 256)]
    pub pixels: u32,
    /// World units across the picture: a heightmap's square, a voxel
    /// world's slice (default: 1024 for a heightmap, 256 for voxel ground,
    /// a planet's diameter and a margin).
    #[arg(long)]
    pub area: Option<f32>,
    /// Print one JSON object (file, size, area, milliseconds).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct IslandsArgs {
    /// The side2d world file.
    pub file: PathBuf,
    /// Print one JSON object (with every island's outline).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RaycastArgs {
    /// The world file.
    pub file: PathBuf,
    /// The ray's origin in world units: `X,Y,Z` (voxel, heightmap) or `X,Y`
    /// (side2d).
    #[arg(long, allow_hyphen_values = true)]
    pub from: String,
    /// The ray's direction, as --from (any length but zero).
    #[arg(long, allow_hyphen_values = true)]
    pub dir: String,
    /// How far the ray reaches, in world units (at most 4096).
    #[arg(long, default_value_t = 1024.0)]
    pub max: f32,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ErodeArgs {
    /// The heightmap world file.
    pub file: PathBuf,
    /// Region in world units: X0,Z0,X1,Z1 (every node within it, edges
    /// included; at most 2049 x 2049 nodes).
    #[arg(long, allow_hyphen_values = true)]
    pub region: String,
    /// Hydraulic passes, 1..=64 (default 8); 0 for thermal erosion only.
    #[arg(long)]
    pub passes: Option<u32>,
    /// Droplets per node and pass, (0, 1] (default 0.125).
    #[arg(long)]
    pub density: Option<f32>,
    /// Most steps of one droplet, 1..=256 (default 30).
    #[arg(long)]
    pub lifetime: Option<u32>,
    /// Radius of a droplet's erosion brush in cells, 1..=8 (default 3).
    #[arg(long)]
    pub radius: Option<u32>,
    /// Sediment capacity factor, > 0 (default 4).
    #[arg(long)]
    pub capacity: Option<f32>,
    /// Thermal iterations after the hydraulic passes, 0..=10000 (default 0:
    /// none).
    #[arg(long, default_value_t = 0)]
    pub thermal: u32,
    /// Thermal talus: the steepest stable slope, rise over run (default 0.8).
    #[arg(long)]
    pub talus: Option<f32>,
    /// A Gaussian blur of this radius in nodes after the erosion, 0..=64
    /// (default 0: none); with `--passes 0` and no `--thermal`, a blur of
    /// the region alone.
    #[arg(long, default_value_t = 0)]
    pub blur: u32,
    /// Droplet seed (default: the world's seed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// World units over which the change fades in from the region's edge
    /// (0: every node takes its eroded height).
    #[arg(long, default_value_t = 8.0, allow_negative_numbers = true)]
    pub feather: f64,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct LosArgs {
    /// The map world file.
    pub file: PathBuf,
    /// The viewer, `X,Z` in world units.
    #[arg(long, allow_hyphen_values = true)]
    pub from: String,
    /// The point looked at, `X,Z` in world units.
    #[arg(long, allow_hyphen_values = true)]
    pub to: String,
    /// Levels above its own that the viewer sees over (0..=15).
    #[arg(long, default_value_t = 0)]
    pub levels_above: u8,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct PathArgs {
    /// The map world file.
    pub file: PathBuf,
    /// The start, `X,Z` in world units.
    #[arg(long, allow_hyphen_values = true)]
    pub from: String,
    /// The goal, `X,Z` in world units.
    #[arg(long, allow_hyphen_values = true)]
    pub to: String,
    /// A route for air units (over every cell not marked no-fly).
    #[arg(long)]
    pub air: bool,
    /// Print one JSON object (with every cell of the route).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Shape {
    /// Round brush.
    Circle,
    /// Square brush.
    Square,
    /// Diamond brush (map).
    Diamond,
    /// Ball (voxel; what `circle` means there).
    Sphere,
    /// Cube of half side --radius (voxel).
    Box,
    /// Upright capsule, 2 x --radius tall and --radius wide (voxel).
    Capsule,
}

#[derive(Debug, Args)]
pub struct StrokeArgs {
    /// The world file.
    pub file: PathBuf,
    /// Brush tool: side2d dig|fill; voxel dig|add|smooth|flatten|paint;
    /// heightmap raise|lower|smooth|flatten|noise; map raise|lower|plateau|
    /// smooth|noise|cliff-up|cliff-down|ramp|water|water-lower|paint|pathing.
    #[arg(long)]
    pub tool: String,
    /// Brush centre in world units: X,Y (side2d), X,Y,Z (voxel) or X,Z
    /// (heightmap, map).
    #[arg(long, allow_hyphen_values = true)]
    pub at: String,
    /// Brush radius in world units.
    #[arg(long, allow_hyphen_values = true)]
    pub radius: f32,
    /// Brush shape: circle or square (side2d); circle, square or diamond
    /// (map); sphere (circle), box or capsule (voxel); heightmap brushes
    /// are round.
    #[arg(long, value_enum, default_value = "circle")]
    pub shape: Shape,
    /// Strength in (0, 1].
    #[arg(long, default_value_t = 1.0, allow_hyphen_values = true)]
    pub strength: f32,
    /// Material id that a fill, add or paint uses (default: the tool's, 0 for
    /// fill and add, 1 for voxel paint).
    #[arg(long)]
    pub material: Option<u8>,
    /// Heightmap flatten: the target height (default: the height at the centre).
    #[arg(long, allow_hyphen_values = true)]
    pub height: Option<f32>,
    /// Voxel flatten: the plane's normal, X,Y,Z (the plane passes through
    /// --at; default 0,1,0).
    #[arg(long, allow_hyphen_values = true)]
    pub normal: Option<String>,
    /// Heightmap noise: the seed of the bumps (default 0).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Drag the brush from --at to this point (same form as --at), with
    /// dabs a quarter of the radius apart.
    #[arg(long, allow_hyphen_values = true)]
    pub to: Option<String>,
    /// Map paint: the texture id (0..=15).
    #[arg(long)]
    pub texture: Option<u8>,
    /// Map pathing: the capabilities to block, a list of walk, fly, build.
    #[arg(long)]
    pub pathing: Option<String>,
    /// Map pathing: clear the flags instead of setting them.
    #[arg(long)]
    pub clear: bool,
    /// Map cliff-up / cliff-down: the target level (0..=15).
    #[arg(long)]
    pub level: Option<u8>,
    /// Map ramp: cells of slope per cliff level (2..=64; default 4).
    #[arg(long)]
    pub length: Option<f32>,
    /// Map cliff-up / cliff-down: cells of slope at the rim, inside the
    /// brush (0..=32; default 0, a vertical wall).
    #[arg(long)]
    pub slope: Option<f32>,
    /// Voxel dig / add: round the crease where the brush meets the ground
    /// into a fillet this many cells wide (0..=8; default 0, a sharp edge).
    #[arg(long)]
    pub blend: Option<f32>,
}

#[derive(Debug, Args)]
pub struct FileArg {
    /// The world file.
    pub file: PathBuf,
}

/// Parses an export format name (the kind layer's names).
fn export_format(text: &str) -> Result<isoterra::kind::ExportFormat, String> {
    text.parse().map_err(|_| {
        let names: Vec<&str> = isoterra::kind::ExportFormat::ALL
            .iter()
            .map(|f| f.name())
            .collect();
        format!("valid formats: {}", names.join(", "))
    })
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The world file.
    pub file: PathBuf,
    /// Output format: png, svg, colliders, glb or obj (side2d); png16, r16,
    /// exr (32-bit float), glb or obj (heightmap); glb or obj (voxel); glb,
    /// obj, png-layers (a 16-bit RGB layer image and a JSON sidecar beside
    /// it), tiled (JSON, or TMX for a .tmx output), pathing or colliders
    /// (each cliff level's outlines as JSON) (map).
    #[arg(long, value_parser = export_format)]
    pub format: isoterra::kind::ExportFormat,
    /// Output file.
    #[arg(short = 'o', long = "out")]
    pub out: PathBuf,
    /// PNG pixels per cell (default: about 1024 pixels wide).
    #[arg(long)]
    pub scale: Option<f32>,
    /// Collider simplification tolerance in cells.
    #[arg(long, default_value_t = 0.05)]
    pub tolerance: f32,
    /// Region to export in world units: X0,Y0,Z0,X1,Y1,Z1 (voxel) or X0,Z0,X1,Z1
    /// (heightmap; both end rows and columns of nodes are included; default
    /// for an imported heightmap: its extent).
    #[arg(long, allow_hyphen_values = true)]
    pub region: Option<String>,
    /// Height range that 16-bit codes map to, MIN,MAX (heightmap; default: an
    /// imported heightmap's recorded range, else the generator's fixed range,
    /// never the region's own minimum and maximum). Heights outside it clip,
    /// with a warning.
    #[arg(long, allow_hyphen_values = true)]
    pub range: Option<String>,
    /// Level of detail (0 = full resolution).
    #[arg(long, default_value_t = 0)]
    pub lod: u8,
    /// r16: pad a region that is not square to a square, repeating its last
    /// row and column (an R16 file has no header: engines read its size from
    /// its length, so a non-square region is refused without --pad).
    #[arg(long)]
    pub pad: bool,
    /// png16/r16: fail instead of clipping heights that lie outside the range.
    #[arg(long)]
    pub strict: bool,
    /// glb/obj of heightmap and voxel worlds: export the chunks around
    /// --around at mixed LOD, as the editor streams them (crack-free): LOD 0
    /// closer than the first radius, one level coarser past each. Radii in
    /// world units, ascending (`64,128,256`), or `auto` for the world's own
    /// streaming rings. Replaces --region and --lod.
    #[arg(long, value_name = "RADII|auto")]
    pub lod_rings: Option<String>,
    /// With --lod-rings: the centre, X,Z (heightmap) or X,Y,Z (voxel).
    #[arg(long, allow_hyphen_values = true, value_name = "POINT")]
    pub around: Option<String>,
    /// With --lod-rings: how far from the centre chunks are exported, in
    /// world units (default: twice the last ring).
    #[arg(long)]
    pub radius: Option<f32>,
    /// Print phase timings as one JSON line on stderr.
    #[arg(long)]
    pub timings: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ContourFormat {
    /// `{"polylines": [{"points": [[x, y], ...], "closed": bool}, ...]}`
    Json,
    /// SVG paths.
    Svg,
}

#[derive(Debug, Args)]
pub struct ContourArgs {
    /// Input array: 2D, float32 or float64, C order, shape (H, W).
    #[arg(long)]
    pub npy: PathBuf,
    /// Iso level.
    #[arg(long, allow_hyphen_values = true)]
    pub iso: f32,
    /// Simplify with Ramer-Douglas-Peucker at this tolerance (sample units).
    #[arg(long)]
    pub simplify: Option<f32>,
    /// Output format.
    #[arg(long, value_enum, default_value = "json")]
    pub format: ContourFormat,
    /// Output file.
    #[arg(short = 'o', long = "out")]
    pub out: PathBuf,
    /// Worker threads (default: all cores). The lines are the same, byte for
    /// byte, at any thread count.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Print phase timings as one JSON line on stderr.
    #[arg(long)]
    pub timings: bool,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The heightmap: .png (16- or 8-bit grayscale), .r16 (square, raw u16
    /// LE) or .exr (float heights: an R, Y or Z channel, or the only one); or
    /// a Tiled map (.json, .tmj, .tmx, with embedded tilesets or
    /// external .tsj/.tsx ones beside it) for a map world.
    pub input: PathBuf,
    /// The world file to create.
    #[arg(short = 'o', long = "out")]
    pub out: PathBuf,
    /// Height range the codes map to, MIN,MAX (a range recorded in a PNG by
    /// isoterra wins; otherwise required for R16 and defaults to 0,1 for PNG).
    /// The world records it as the default range of its 16-bit exports (for
    /// an EXR, whose heights need none, it defaults to their own extremes).
    #[arg(long, allow_hyphen_values = true)]
    pub range: Option<String>,
    /// World units per pixel.
    #[arg(long, default_value_t = 1.0)]
    pub cell_size: f32,
    /// Heightmaps: what the world holds outside the image. `edge` (default):
    /// the image's edge carried straight out, flat, so the image is the
    /// whole world; `generated`: the image is laid over endless generated
    /// hills (a step at its edge is possible).
    #[arg(long, value_enum)]
    pub outside: Option<Outside>,
    /// Tiled maps: the tile layer to import (default: the first that holds
    /// a tile).
    #[arg(long)]
    pub layer: Option<String>,
    /// Tiled maps: map cells per tile along each axis, 1..=16 (default: what
    /// the map says, as isoterra's exports do, else 2).
    #[arg(long)]
    pub cells_per_tile: Option<u32>,
    /// Tiled maps: the bool tile property (or tile class) that marks land
    /// (default: solid). When no tile of the layer is solid, all is land.
    #[arg(long, value_name = "NAME")]
    pub solid_property: Option<String>,
    /// Tiled maps: gids that are land besides the solid property's tiles,
    /// as a list with ranges: 3,7,10-12.
    #[arg(long, value_name = "LIST")]
    pub solid_gids: Option<String>,
    /// Tiled maps: the int tile property that gives a tile its cliff level
    /// (default: level).
    #[arg(long, value_name = "NAME")]
    pub level_property: Option<String>,
    /// Tiled maps: gids with a cliff level besides the level property's
    /// tiles, as GID:LEVEL pairs: 3:1,4:2.
    #[arg(long, value_name = "LIST")]
    pub level_gids: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Outside {
    /// The image's edge heights carried straight out.
    Edge,
    /// The world's generated hills.
    Generated,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MeshFormat {
    /// Wavefront OBJ (text).
    Obj,
    /// Binary little-endian PLY.
    Ply,
    /// glTF 2.0 binary.
    Glb,
}

#[derive(Debug, Args)]
pub struct Mesh3dArgs {
    /// Input array: 3D, float32/float64/uint8/int16/uint16, C order, shape
    /// (Z, Y, X) so x is the fastest axis.
    #[arg(long)]
    pub npy: PathBuf,
    /// Iso level; a sample is inside when value >= iso.
    #[arg(long, allow_hyphen_values = true)]
    pub iso: f32,
    /// Mesh at iso - EPS instead of iso. Samples exactly at the iso level
    /// (integer data at an integer iso, say) put the vertices of all their
    /// edges on the sample itself, which makes zero-area triangles; a nudge
    /// smaller than the data's step (1e-3 for integer data) keeps the same
    /// samples inside and moves those vertices apart. Default: 0.
    #[arg(
        long,
        value_name = "EPS",
        default_value_t = 0.0,
        allow_hyphen_values = true
    )]
    pub iso_nudge: f32,
    /// Output format.
    #[arg(long, value_enum)]
    pub format: MeshFormat,
    /// Output file.
    #[arg(short = 'o', long = "out")]
    pub out: PathBuf,
    /// Leave vertex normals out.
    #[arg(long)]
    pub no_normals: bool,
    /// Worker threads (default: all cores). The mesh is the same, byte for
    /// byte, at any thread count.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Print phase timings as one JSON line on stderr.
    #[arg(long)]
    pub timings: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BenchGroup {
    /// Marching squares: contour lines, fill mesh, dig + rebuild.
    Squares,
    /// Noise: fBm samples.
    Noise,
    /// Editing: dig + rebuild of the dirty chunks.
    Edit,
    /// Marching cubes: sphere+noise and gyroid volumes.
    Cubes,
    /// Hydraulic erosion of a heightmap.
    Erosion,
    /// Map kind: radius-100 brush + remesh, full 512x512 mesh, texture stroke.
    Map,
    /// Streaming: voxel and heightmap chunks around a moving viewer, memory
    /// per loaded chunk, world file bytes per edited chunk.
    Stream,
    /// Storage: chunk rows inserted and upserted per second and stroke
    /// commit latency, on a world file and (with --url) a PostgreSQL server.
    Store,
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Workload group.
    #[arg(value_enum)]
    pub group: BenchGroup,
    /// One JSON object per line.
    #[arg(long)]
    pub json: bool,
    /// Repetitions per workload (the median is reported).
    #[arg(long, default_value_t = 15)]
    pub reps: u32,
    /// `store`: also measure a PostgreSQL server (postgres://USER@HOST/DB;
    /// a throwaway world is made and removed).
    #[arg(long)]
    pub url: Option<String>,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Folder for the world file and the PNG.
    #[arg(long, default_value = "isoterra-demo")]
    pub out: PathBuf,
    /// Generator seed.
    #[arg(long, default_value_t = 7)]
    pub seed: u64,
}

#[derive(Debug, Args)]
pub struct BakeArgs {
    /// The world file, or a world on a PostgreSQL server
    /// (postgres://USER@HOST/DB?world=NAME).
    pub file: PathBuf,
    /// Region in world units, minimum corner then maximum corner: X0,Y0,X1,Y1
    /// (side2d, clipped to the world), X0,Z0,X1,Z1 (heightmap; map, clipped,
    /// which bakes terrain and water as layers 0 and 1) or
    /// X0,Y0,Z0,X1,Y1,Z1 (voxel). Half-open: every chunk whose cells meet
    /// [X0, X1) x ... is baked, so 0,0,0,256,128,256 is 8x4x8 chunks of a
    /// voxel world with 32-cell chunks.
    #[arg(long, allow_hyphen_values = true)]
    pub region: String,
    /// Level of detail (0 = full resolution; side2d and map have only 0, heightmap up
    /// to its coarsest level, voxel up to 16 with chunks 2^LOD times larger).
    #[arg(long, default_value_t = 0)]
    pub lod: u8,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Write one .glb (and a collider .json for side2d and heightmap) per
    /// chunk and a manifest.json into this folder instead of the world file.
    #[arg(long = "out")]
    pub out: Option<PathBuf>,
    /// Order of the heights in a heightmap chunk's collider JSON (folder
    /// output): row-major (x fastest, `heights[z * cols + x]`: Godot's
    /// HeightMapShape3D, Unity) or column-major (z fastest,
    /// `heights[x * rows + z]`: parry/rapier's `HeightField`, nalgebra). The
    /// JSON states the one it holds as `layout`.
    #[arg(long, value_enum, default_value = "row-major")]
    pub layout: HeightLayout,
    /// No progress bar.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Print the summary as one JSON line.
    #[arg(long)]
    pub json: bool,
    /// Bake the chunks in an order shuffled with this seed (results are the same).
    #[arg(long, hide = true)]
    pub shuffle: Option<u64>,
    /// Bake only part K of N: the region's chunks in their canonical key
    /// order (layer, x, y, z) cut into N contiguous ranges of near-equal
    /// size, numbered from 1 to N. Run parts 1/N .. N/N as separate
    /// processes, or on separate machines each with its own copy of the
    /// world file, then bring the copies together with `isoterra merge`.
    #[arg(long, value_name = "K/N")]
    pub part: Option<String>,
    /// Share the bake of a world on a PostgreSQL server among any number of
    /// workers: run `isoterra bake URL --region ... --queue` on as many
    /// machines as you like; each claims jobs (small ranges of chunks) from
    /// the server until none is left, a job whose worker dies is taken over
    /// at once, and a stopped bake resumes where it stopped.
    #[arg(long)]
    pub queue: bool,
    /// Chunks per job of --queue (default 64).
    #[arg(long, value_name = "N")]
    pub job_chunks: Option<u64>,
}

/// The order of a heightfield collider's heights.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HeightLayout {
    /// x fastest: `heights[z * cols + x]`.
    RowMajor,
    /// z fastest: `heights[x * rows + z]` (parry, rapier, nalgebra).
    ColumnMajor,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The world file that receives the baked chunks.
    pub file: PathBuf,
    /// A part file: a copy of the same world (same generator, same edits)
    /// baked with `bake --part`. Repeat for each part. A part of another
    /// world, or a chunk baked differently on both sides, is refused before
    /// anything is written; chunks FILE already holds are skipped.
    #[arg(long = "from", value_name = "PART", required = true)]
    pub from: Vec<PathBuf>,
    /// Print the summary as one JSON line.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct EditArgs {
    /// The world file (default: world.isoterra, created when missing).
    pub file: Option<PathBuf>,
    /// Port to listen on (0 picks a free one).
    #[arg(long, default_value_t = 7878)]
    pub port: u16,
    /// Address to listen on (an IP address, or `localhost` for 127.0.0.1);
    /// anything but a loopback address lets other machines edit the world.
    #[arg(long, default_value = "127.0.0.1", value_parser = parse_host)]
    pub host: std::net::IpAddr,
    /// Open the editor in a browser.
    #[arg(long)]
    pub open: bool,
}

/// `--host`: an IP address, or `localhost` (127.0.0.1).
fn parse_host(text: &str) -> Result<std::net::IpAddr, String> {
    if text.eq_ignore_ascii_case("localhost") {
        return Ok(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST));
    }
    text.parse().map_err(|_| {
        format!("`{text}` is not an IP address or `localhost` (e.g. 127.0.0.1, ::1, 0.0.0.0)")
    })
}
