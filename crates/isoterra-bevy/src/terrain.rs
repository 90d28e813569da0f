//! The components and messages a game uses.

use std::path::PathBuf;
use std::sync::Arc;

use bevy::math::{Vec2, Vec3};
use bevy::prelude::{Component, Entity, Message, Transform};
use isoterra::kind::{History, NewWorld, StrokeSpec, WorldKind};

use crate::io::Shared;

/// A terrain: a world file of any kind, opened (or created) when the entity
/// is spawned. Its chunks become child entities ([`TerrainChunk`]); the
/// entity's transform places the whole world.
#[derive(Component, Debug, Clone)]
#[require(Transform)]
pub struct Terrain {
    pub(crate) path: PathBuf,
    pub(crate) create: Option<NewWorld>,
    pub(crate) lod_rings: Option<Vec<f32>>,
    pub(crate) detach_islands: bool,
    pub(crate) baked: Option<bool>,
}

impl Terrain {
    /// Opens the world file at `path`, whatever kind it holds.
    pub fn open(path: impl Into<PathBuf>) -> Self {
        Terrain {
            path: path.into(),
            create: None,
            lod_rings: None,
            detach_islands: true,
            baked: None,
        }
    }

    /// Opens the world file at `path`, or creates it from `new` when there
    /// is no file there yet.
    pub fn open_or_create(path: impl Into<PathBuf>, new: NewWorld) -> Self {
        Terrain {
            create: Some(new),
            ..Terrain::open(path)
        }
    }

    /// LOD ring radii in world units for the endless kinds: LOD 0 closer
    /// than the first, LOD 1 up to the second, and so on. By default voxel
    /// worlds use 2, 4 and 6 chunk sizes and heightmaps their own
    /// `lod_distance` rings.
    pub fn with_lod_rings(mut self, rings: Vec<f32>) -> Self {
        self.lod_rings = Some(rings);
        self
    }

    /// Side2d worlds: whether ground that a stroke cuts loose (a floating
    /// island) is taken out of the world and becomes a falling
    /// [`TerrainDebris`] body with a [`TerrainIsland`] message (the
    /// default), or stays where it is.
    pub fn with_detached_islands(mut self, detach: bool) -> Self {
        self.detach_islands = detach;
        self
    }

    /// Voxel and heightmap worlds: whether chunks the world file has baked
    /// (`isoterra bake FILE --region …`) are read from it instead of being
    /// generated and meshed. A row is used while it is current (the world
    /// has not changed under it since it was baked, and no edit since has
    /// touched it) and only where the chunk has no neighbour at another LOD
    /// (voxel rows: LOD 0; heightmap rows: each at its LOD); every other
    /// chunk is built live, so the terrain looks and collides the same
    /// either way. [`TerrainStatus::from_baked`] counts the chunks shown
    /// from rows.
    ///
    /// By default voxel worlds use their rows and heightmaps do not: a
    /// voxel chunk costs more to generate and mesh than to read, a
    /// heightmap chunk less (measured in BENCHMARKS.md, "Bevy plugin").
    pub fn with_baked(mut self, use_baked: bool) -> Self {
        self.baked = Some(use_baked);
        self
    }

    /// The world file.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }
}

/// A camera or player around which chunks of the endless kinds stream.
/// Several viewers share one stream.
#[derive(Component, Debug, Clone, Copy)]
#[require(Transform)]
pub struct TerrainViewer {
    /// Chunks within this distance (world units) are loaded.
    pub view_distance: f32,
}

impl TerrainViewer {
    /// A viewer that loads chunks within `view_distance` world units.
    pub fn new(view_distance: f32) -> Self {
        TerrainViewer { view_distance }
    }
}

impl Default for TerrainViewer {
    fn default() -> Self {
        TerrainViewer::new(128.0)
    }
}

/// One chunk of a terrain, a child of the [`Terrain`] entity, with its mesh
/// and collider in the terrain's space.
#[derive(Component, Debug, Clone, PartialEq, Eq)]
pub struct TerrainChunk {
    /// The chunk's coordinate: `[x, y, z]` for voxel chunks, `[x, z, 0]`
    /// for heightmap and map chunks, `[x, y, 0]` for side2d chunks.
    pub coord: [i32; 3],
    /// Its level of detail (0: full resolution).
    pub lod: u8,
    /// Counts the builds of this chunk shown so far, from 1.
    pub version: u64,
    /// Triangles in its meshes.
    pub triangles: usize,
}

/// Added to a [`Terrain`] once its world is open (with a [`TerrainStatus`]): its kind and the queries
/// on it ([`raycast`](Self::raycast), [`is_solid`](Self::is_solid),
/// [`density`](Self::density)).
#[derive(Component, Clone)]
pub struct TerrainReady {
    pub(crate) kind: WorldKind,
    pub(crate) shared: Arc<Shared>,
    pub(crate) baked_rows: usize,
}

impl std::fmt::Debug for TerrainReady {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TerrainReady")
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

impl TerrainReady {
    /// The world's kind.
    pub fn kind(&self) -> WorldKind {
        self.kind
    }

    /// How many baked rows of the file were current when it opened and
    /// stand in for live builds (see [`Terrain::with_baked`]).
    pub fn baked_rows(&self) -> usize {
        self.baked_rows
    }

    /// Where the history stands (after the edits committed so far).
    pub fn history(&self) -> History {
        self.shared.with_doc(|d| d.history())
    }

    /// The hash of the world's content (the same as `isoterra info` shows).
    pub fn content_hash(&self) -> String {
        self.shared.with_doc(|d| d.content_hash())
    }

    /// Blocks until every edit sent so far is committed to the file.
    pub fn flush(&self) {
        self.shared.flush();
    }
}

/// Where a ready terrain's chunks stand, refreshed every frame.
#[derive(Component, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TerrainStatus {
    /// Chunks shown (with a mesh or a collider).
    pub shown: usize,
    /// Of those, the chunks whose mesh and collider were read from baked
    /// rows ([`Terrain::with_baked`]).
    pub from_baked: usize,
    /// Chunk builds running or queued on the worker threads.
    pub building: usize,
    /// Edits, undos and redos sent and not committed yet.
    pub pending_edits: usize,
    /// True when nothing is being built or committed and every chunk the
    /// viewers want is shown: nothing changes until a viewer moves or an
    /// edit comes.
    pub settled: bool,
}

/// Draws a stroke on a terrain: any tool of its kind (see
/// `isoterra tools` or [`Document::tools`](isoterra::kind::Document::tools)),
/// with a dab at each point (a drag along them for two or more), in the
/// terrain's space. Committed to the file in order, off the main thread.
#[derive(Message, Debug, Clone)]
pub struct TerrainEdit {
    /// The [`Terrain`] entity.
    pub terrain: Entity,
    /// Tool, radius, strength and parameters.
    pub stroke: StrokeSpec,
    /// Dab positions in the terrain's space (side2d: `z` is ignored; map:
    /// `y` is ignored).
    pub points: Vec<[f64; 3]>,
}

impl TerrainEdit {
    /// A stroke of `spec` through `points`.
    pub fn new(terrain: Entity, stroke: StrokeSpec, points: Vec<[f64; 3]>) -> Self {
        TerrainEdit {
            terrain,
            stroke,
            points,
        }
    }

    /// One dab of `tool` with `radius` at `at`, with the tool's defaults.
    pub fn dab(terrain: Entity, tool: &str, radius: f64, at: Vec3) -> Self {
        TerrainEdit::new(
            terrain,
            StrokeSpec::new(tool, radius),
            vec![[f64::from(at.x), f64::from(at.y), f64::from(at.z)]],
        )
    }
}

/// Undoes the last stroke of a terrain (committed in order with its edits).
#[derive(Message, Debug, Clone, Copy)]
pub struct TerrainUndo {
    /// The [`Terrain`] entity.
    pub terrain: Entity,
}

/// Redoes the last undone stroke of a terrain.
#[derive(Message, Debug, Clone, Copy)]
pub struct TerrainRedo {
    /// The [`Terrain`] entity.
    pub terrain: Entity,
}

/// What a [`TerrainEdited`] message reports on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditOp {
    /// A [`TerrainEdit`].
    Stroke,
    /// A [`TerrainUndo`].
    Undo,
    /// A [`TerrainRedo`].
    Redo,
    /// Strokes, undos or redos made in the editor an [`EditorLink`](crate::EditorLink)
    /// follows (the result carries no stroke id).
    Linked,
}

/// Sent once an edit, undo or redo is committed (or refused).
#[derive(Message, Debug, Clone)]
pub struct TerrainEdited {
    /// The [`Terrain`] entity.
    pub terrain: Entity,
    /// What was done.
    pub op: EditOp,
    /// The stroke's id in the world's log (`Ok(None)`: it changed nothing,
    /// or there was nothing to undo or redo), or why it was refused (then
    /// nothing changed).
    pub result: Result<Option<i64>, String>,
    /// Chunks rebuilt because of it.
    pub rebuilt_chunks: usize,
}

/// A piece of side2d ground that a stroke cut loose, now a dynamic body
/// (avian2d) with its own mesh. Its removal from the world is a stroke of
/// its own (tool `detach`): undoing it puts the ground back, and the debris
/// entity is the game's to keep or despawn.
#[derive(Component, Debug, Clone, Copy, PartialEq)]
pub struct TerrainDebris {
    /// The [`Terrain`] it came from.
    pub terrain: Entity,
    /// Its area in square world units.
    pub area: f32,
}

/// Sent when a side2d stroke cuts ground loose and it becomes a
/// [`TerrainDebris`] body.
#[derive(Message, Debug, Clone)]
pub struct TerrainIsland {
    /// The [`Terrain`] entity.
    pub terrain: Entity,
    /// The debris body.
    pub debris: Entity,
    /// Area in square world units.
    pub area: f32,
    /// Centroid in the terrain's space.
    pub centroid: Vec2,
    /// Outlines in the terrain's space: outer loops counter-clockwise,
    /// holes clockwise.
    pub outline: Vec<Vec<Vec2>>,
}

/// Sent when a terrain's world cannot be opened.
#[derive(Message, Debug, Clone)]
pub struct TerrainFailed {
    /// The [`Terrain`] entity.
    pub terrain: Entity,
    /// Why.
    pub error: String,
}
