//! What each kind gives the kind layer, as two traits.
//!
//! - [`KindSpec`]: the facts of a kind known before any world exists (its
//!   defaults and presets, how a new world's parameters are made, its recipe
//!   fields, tools and brush shapes, stroke limits, export formats and file
//!   names). [`WorldKind::spec`] returns a kind's.
//! - [`TypedDocument`]: what a kind's typed document does for the generic
//!   [`Document`](crate::Document): strokes placed, previewed, taken back
//!   and committed, history, info, hash, bake source and exports.
//! - [`BakeWorld`](crate::bake::BakeWorld), beside the bake: what a kind's
//!   world gives a bake.
//!
//! Each kind implements them in its own folder (`side2d/`, `heightmap/`,
//! `voxel/`, `map/`); the generic code calls them and does not match on
//! kinds. The enums that carry a value of any kind have one variant per
//! kind; they and the matches that hand each to its kind's code are in
//! `kind.rs`, the one file that lists the kinds.

use isoterra_store::{ChunkStore, Followed, StoreError};
use serde_json::Value;

use crate::create::KindDefaults;
use crate::document::Committed;
use crate::document::GroundHit;
use crate::export::{FileRole, MainOut, MeshNames};
use crate::kind::Preview;
use crate::recipe_fields::RecipeField;
use crate::schema::{Limits, ToolSpec};
use crate::stroke::Brief;
use crate::{
    BakeSource, ExportFormat, ExportRequest, Exported, KindError, Stamp, Template, WorldKind,
    WorldParams,
};

/// A new world's settings, checked as every kind checks them: what a kind's
/// [`KindSpec::params`] turns into its parameters.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Settings<'a> {
    pub seed: u64,
    /// The size, for bounded kinds (the default when none was given).
    pub size: Option<[u32; 2]>,
    /// The preset's name (the kind's default when none was given).
    pub preset: &'a str,
    /// World units per cell.
    pub cell: f32,
    /// Cells per chunk side.
    pub chunk: u32,
}

impl Settings<'_> {
    /// The error for a preset the kind does not have.
    pub(crate) fn unknown_preset(&self, kind: WorldKind) -> KindError {
        KindError::invalid(format!(
            "unknown {kind} preset `{}`; valid presets: {}",
            self.preset,
            kind.spec().defaults().presets.join(", ")
        ))
    }
}

/// The facts of one kind, known before any world exists.
pub(crate) trait KindSpec: Sync {
    /// The kind.
    fn kind(&self) -> WorldKind;

    /// What its worlds are, in one line without a final stop (the command
    /// line's `--kind` help).
    fn summary(&self) -> &'static str;

    /// Its defaults, sizes and presets.
    fn defaults(&self) -> KindDefaults;

    /// The parameters of a new world made with `s`.
    fn params(&self, s: &Settings<'_>) -> Result<WorldParams, KindError>;

    /// Its recipe's fields, in the order an editor shows them.
    fn recipe_fields(&self, out: &mut Vec<RecipeField>);

    /// A preview picture of a new world made with `params` (its kind's),
    /// `pixels` on its longest side; `area` is the world units across for
    /// the endless kinds (checked; `None` picks one).
    fn preview(
        &self,
        params: &WorldParams,
        pixels: u32,
        area: Option<f32>,
    ) -> Result<crate::Preview, KindError>;

    /// Its tools; `materials` is the number of materials the world's table
    /// holds (a kind without a table ignores it).
    fn tools(&self, materials: usize) -> Vec<ToolSpec>;

    /// The brush shapes its strokes take, the default first.
    fn shapes(&self) -> &'static [&'static str];

    /// The limits of its strokes.
    fn limits(&self) -> Limits {
        Limits::common()
    }

    /// The formats its worlds export.
    fn formats(&self) -> &'static [ExportFormat];

    /// The files an export in `format` makes beside the main one.
    fn companions(&self, format: ExportFormat) -> &'static [FileRole];

    /// The file names of its mesh exports.
    fn mesh_names(&self) -> MeshNames;

    /// The axes of its worlds' space: 2 for a side view (`x, y`), 3
    /// otherwise.
    fn dims(&self) -> usize {
        3
    }

    /// Whether rays and points query its ground (a density or a height
    /// field): [`Document::raycast`](crate::Document::raycast),
    /// [`is_solid`](crate::Document::is_solid) and
    /// [`density_at`](crate::Document::density_at).
    fn has_ground_queries(&self) -> bool {
        true
    }

    /// The world axes (0 x, 1 y, 2 z) of the numbers of a point a user
    /// types: `x,y` in a side view, `x,z` seen from above, `x,y,z` in 3D.
    fn point_axes(&self) -> &'static [usize];
}

/// What one kind's typed document does for [`Document`](crate::Document).
///
/// Stamps and previews handed in come from this document (the generic code
/// never mixes kinds); one of another kind is refused with
/// [`misfit`].
pub(crate) trait TypedDocument<S: ChunkStore> {
    /// The kind.
    fn kind(&self) -> WorldKind;

    /// The store holding the world.
    fn store(&self) -> &S;

    /// The info record (what `isoterra info` prints) as JSON.
    fn info_json(&self) -> Value;

    /// Strokes in the log, the undo position, and whether a redo is kept.
    fn history(&self) -> (u64, u64, bool);

    /// The parameters the world was made with.
    fn params(&self) -> WorldParams;

    /// A hash of the world's current contents.
    fn content_hash(&self) -> String;

    /// What a baked chunk of this world reads.
    fn bake_source(&self) -> BakeSource<'_>;

    /// Materials in the world's table (256 for kinds without one).
    fn materials(&self) -> usize {
        256
    }

    /// Meshes what is dirty now (kinds with a mesh cache kept by the
    /// document); others mesh on demand.
    fn rebuild(&mut self) {}

    /// The template of a checked stroke.
    fn template(&self, b: &Brief<'_>) -> Result<Template, KindError>;

    /// The stamp of a dab at `p` (world units, checked); `first` is the
    /// stroke's first dab, `None` for the first itself.
    fn stamp(&self, t: &Template, p: [f32; 3], first: Option<[f32; 3]>)
    -> Result<Stamp, KindError>;

    /// The dabs of a stroke dragged through `points` (two or more, checked):
    /// by default a quarter of the radius apart (at least a quarter cell),
    /// both ends included, at most `max`.
    fn path_dabs(
        &self,
        t: &Template,
        points: &[[f64; 3]],
        max: usize,
    ) -> Result<Vec<[f64; 3]>, KindError> {
        let (radius, cell) = self.dab_size(t)?;
        evenly_along(points, f64::from((radius / 4.0).max(0.25 * cell)), max)
    }

    /// `t` with the targets the stroke's first dab `first` fixed (a map
    /// tool's plateau height or cliff level): the template later dabs are
    /// placed with. Most kinds fix nothing.
    fn fix_targets(&self, t: Template, _first: &Stamp) -> Template {
        t
    }

    /// The brush radius of `t` and the world's cell size, in world units.
    fn dab_size(&self, t: &Template) -> Result<(f32, f32), KindError>;

    /// Applies a stamp in memory only.
    fn preview(&mut self, s: &Stamp) -> Result<Preview, KindError>;

    /// Takes a preview back.
    fn revert(&mut self, p: &Preview) -> Result<(), StoreError>;

    /// Records a whole stroke (no previews applied).
    fn commit(&mut self, stamps: &[Stamp]) -> Result<Committed, KindError>;

    /// Undoes the last stroke.
    fn undo(&mut self) -> Result<Option<i64>, StoreError>;

    /// Redoes the last undone stroke.
    fn redo(&mut self) -> Result<Option<i64>, StoreError>;

    /// Catches up with what other handles wrote.
    fn follow(&mut self) -> Result<Followed, StoreError>;

    /// Where the ray from `from` along the unit vector `dir` first enters
    /// the ground within `max` world units (all checked finite, `max > 0`).
    fn raycast(&mut self, _from: [f32; 3], _dir: [f32; 3], _max: f32) -> Option<GroundHit> {
        None
    }

    /// Whether `p` (finite) is inside the ground.
    fn is_solid(&mut self, _p: [f32; 3]) -> bool {
        false
    }

    /// The density at `p` (finite): positive or at least the iso level
    /// inside, as the kind defines it.
    fn density_at(&mut self, _p: [f32; 3]) -> Option<f32> {
        None
    }

    /// Exports the world as `req` asks, the main file through `main`.
    fn export(
        &mut self,
        req: &ExportRequest,
        main: &mut MainOut<'_>,
    ) -> Result<Exported, KindError>;
}

/// The [`TypedDocument`] methods every typed document answers the same
/// way from what the store gives it (its store, info record, history,
/// content hash, undo, redo and follow), written once; use it inside each
/// kind's `impl TypedDocument<S> for $doc<S>`.
macro_rules! store_forwards {
    ($doc:ident) => {
        fn store(&self) -> &S {
            $doc::store(self)
        }

        fn info_json(&self) -> serde_json::Value {
            serde_json::to_value(self.info()).unwrap_or(serde_json::Value::Null)
        }

        fn history(&self) -> (u64, u64, bool) {
            let i = self.info();
            (i.strokes_total, i.undo_position, i.redo_available)
        }

        fn content_hash(&self) -> String {
            $doc::content_hash(self)
        }

        fn undo(&mut self) -> Result<Option<i64>, isoterra_store::StoreError> {
            $doc::undo(self)
        }

        fn redo(&mut self) -> Result<Option<i64>, isoterra_store::StoreError> {
            $doc::redo(self)
        }

        fn follow(&mut self) -> Result<isoterra_store::Followed, isoterra_store::StoreError> {
            $doc::follow(self)
        }
    };
}

pub(crate) use store_forwards;

/// A stroke's outcome as [`Committed`], from the store's record of it.
pub(crate) fn committed(id: Option<i64>, changed_nodes: usize) -> Committed {
    Committed { id, changed_nodes }
}

/// The error for a stamp or preview of another kind.
pub(crate) fn misfit() -> KindError {
    KindError::invalid("the stroke does not fit this world")
}

/// A store error while applying or recording a stroke: the world's refusal
/// is the stroke's fault ([`KindError::Invalid`]), anything else the store's.
pub(crate) fn refused(e: StoreError) -> KindError {
    match e {
        StoreError::World(w) => KindError::invalid(w.to_string()),
        other => KindError::Store(other),
    }
}

/// The stamps of one kind: `pick` takes each stamp's brush.
pub(crate) fn stamps_of<B>(stamps: &[Stamp], pick: impl Fn(&Stamp) -> Option<B>) -> Vec<B> {
    stamps.iter().filter_map(pick).collect()
}

/// Points `spacing` apart along the path through `points`, both ends
/// included; at most `max` steps a segment.
fn evenly_along(points: &[[f64; 3]], spacing: f64, max: usize) -> Result<Vec<[f64; 3]>, KindError> {
    let mut dabs = vec![points[0]];
    for w in points.windows(2) {
        let d = [w[1][0] - w[0][0], w[1][1] - w[0][1], w[1][2] - w[0][2]];
        let len = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
        let steps = (len / spacing).ceil().max(1.0);
        if steps > max as f64 {
            return Err(KindError::TooLarge(format!(
                "a stroke holds at most {max} dabs"
            )));
        }
        for k in 1..=steps as usize {
            let f = k as f64 / steps;
            dabs.push([w[0][0] + d[0] * f, w[0][1] + d[1] * f, w[0][2] + d[2] * f]);
        }
    }
    Ok(dabs)
}
