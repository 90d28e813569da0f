//! A world of any kind over a store, with strokes drawn live.
//!
//! [`Document`] wraps the four typed documents of `isoterra-store`. Every
//! edit goes through it: a stroke is begun ([`Document::begin_stroke`]),
//! placed dab by dab ([`Document::dab`], each dab a live preview applied
//! to the world in memory through the typed document) and ended
//! ([`Document::end_stroke`]), which commits it as one durable stroke.
//! Several strokes may be open at once (several users of one editor): their
//! previews are applied in the order the dabs came. When one ends, every
//! preview is taken back, the stroke is recorded on its own and the
//! previews of the strokes still open are applied again, so the store
//! always holds exactly the finished strokes in the order they finished
//! and replaying its log gives the world in memory. Undo, redo and exports
//! run with the previews lifted the same way.

use std::collections::BTreeMap;
use std::path::Path;

use isoterra_store::{ChunkStore, StoreError, WorldFile};
use isoterra_world::Island;
use serde_json::Value;

use crate::BakeSource;
use crate::create::NewWorld;
use crate::kind::Preview;
use crate::per_kind::TypedDocument;
use crate::recipe::Recipe;
use crate::schema::{Limits, ToolSpec};
use crate::stroke::{Brief, Params, StrokeSpec, Template, checked_point, find_tool, ranged};
use crate::{AnyDocument, KindError, Stamp, WorldKind};

/// How many times [`Document::open_with`] reads a world that other writers
/// keep changing before it takes the world as it is.
pub const OPEN_TRIES: usize = 16;

/// Names an open stroke of a [`Document`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StrokeId(u64);

/// What a finished stroke did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Committed {
    /// The stroke's id in the log; `None` when it changed nothing (and so
    /// was not recorded).
    pub id: Option<i64>,
    /// Nodes it changed.
    pub changed_nodes: usize,
}

/// Where a ray meets a world's ground ([`Document::raycast`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GroundHit {
    /// The first point on the surface, in world units `[x, y, z]` (`z` is 0
    /// in a side view).
    pub point: [f32; 3],
    /// The surface normal there, out of the solid (unit length, or zero
    /// where it is not known).
    pub normal: [f32; 3],
    /// Distance from the ray's origin, in world units.
    pub distance: f32,
}

/// Where the history stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct History {
    /// Whether there is a stroke to undo.
    pub can_undo: bool,
    /// Whether there is an undone stroke to redo.
    pub can_redo: bool,
    /// Strokes done (the undo position).
    pub strokes: u64,
}

impl History {
    /// The history as the editor's messages carry it.
    pub fn json(&self) -> Value {
        serde_json::json!({
            "can_undo": self.can_undo, "can_redo": self.can_redo, "strokes": self.strokes,
        })
    }
}

#[derive(Debug)]
struct OpenStroke {
    template: Template,
    stamps: Vec<Stamp>,
    first: Option<[f32; 3]>,
}

/// The preview of consecutive dabs of one stroke: one per dab for side
/// views and maps, folded into one for heightmaps and voxels.
#[derive(Debug)]
struct Applied {
    stroke: StrokeId,
    stamps: Vec<Stamp>,
    preview: Preview,
}

/// A world of any kind tied to its store, with the strokes being drawn.
#[derive(Debug)]
pub struct Document<S: ChunkStore = WorldFile> {
    doc: AnyDocument<S>,
    open: BTreeMap<StrokeId, OpenStroke>,
    previews: Vec<Applied>,
    next: u64,
    /// The most nodes one stroke may change ([`Limits::stroke_nodes`]).
    stroke_nodes: Option<u64>,
}

impl Document<WorldFile> {
    /// Opens the world file at `path`, whatever kind it holds, read as of
    /// one revision (see [`open_with`](Document::open_with)).
    ///
    /// # Errors
    ///
    /// Store errors (no such file, not a world file, damaged), and
    /// [`KindError::Unsupported`] for a kind this build does not know.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, KindError> {
        let path = path.as_ref();
        let kind = isoterra_store::detect_kind(path)?;
        if WorldKind::from_name(&kind).is_none() {
            return Err(KindError::Unsupported {
                location: path.display().to_string(),
                kind,
            });
        }
        Document::open_with(|| Ok(WorldFile::open(path)?))
    }

    /// Creates a world file at `path` (which must not exist) as `new` asks.
    ///
    /// # Errors
    ///
    /// [`KindError::Invalid`] for bad parameters (nothing is created), and
    /// store errors.
    pub fn create(path: impl AsRef<Path>, new: &NewWorld) -> Result<Self, KindError> {
        let path = path.as_ref();
        Ok(Document::wrap(AnyDocument::create(path, new.params()?)?))
    }

    /// The world file.
    pub fn file(&self) -> &WorldFile {
        self.store()
    }

    /// Finishes every open stroke and closes the file, reporting any error
    /// met while doing so.
    ///
    /// # Errors
    ///
    /// Store errors.
    pub fn close(mut self) -> Result<(), KindError> {
        self.end_all_strokes();
        self.doc.into_store().close()?;
        Ok(())
    }
}

impl<S: ChunkStore> Document<S> {
    /// A document over `doc`, with no stroke open.
    pub fn wrap(doc: AnyDocument<S>) -> Self {
        let mut d = Document {
            doc,
            open: BTreeMap::new(),
            previews: Vec::new(),
            next: 0,
            stroke_nodes: None,
        };
        d.stroke_nodes = d.limits().stroke_nodes;
        d
    }

    /// Opens the world held in `store`, whatever its kind.
    ///
    /// # Errors
    ///
    /// As [`Document::open`].
    pub fn open_in(store: S) -> Result<Self, KindError> {
        let meta = store.meta()?;
        let kind = WorldKind::from_name(&meta.kind).ok_or_else(|| KindError::Unsupported {
            location: store.location().display().to_string(),
            kind: meta.kind.clone(),
        })?;
        Ok(Document::wrap(AnyDocument::open_in(kind, store)?))
    }

    /// Opens the world held in the store `open_store` gives, read as of one
    /// revision. A store handle notes the world's revision when it opens;
    /// when another writer committed while the world was being read (the
    /// handle is no longer current afterwards), the chunks and the log read
    /// may belong to different revisions, and a document that later
    /// [follows](Self::follow) the log would build on a world that does not
    /// match it. Then a new handle reads the world again, up to
    /// [`OPEN_TRIES`] times; after that the world is taken as it is, and its
    /// first write reports a conflict.
    ///
    /// # Errors
    ///
    /// Those of `open_store` and of [`open_in`](Self::open_in).
    pub fn open_with(
        mut open_store: impl FnMut() -> Result<S, KindError>,
    ) -> Result<Self, KindError> {
        let mut tries = 1;
        loop {
            let doc = Document::open_in(open_store()?)?;
            match doc.store().check_current() {
                Err(StoreError::Conflict { .. }) if tries < OPEN_TRIES => tries += 1,
                _ => return Ok(doc),
            }
        }
    }

    /// Creates the world `new` asks for in `store` (which must be empty).
    ///
    /// # Errors
    ///
    /// As [`Document::create`].
    pub fn create_in(store: S, new: &NewWorld) -> Result<Self, KindError> {
        Ok(Document::wrap(AnyDocument::create_in(
            store,
            new.params()?,
        )?))
    }

    /// Ends every open stroke and gives the store back (for a world file,
    /// [`close`](Document::close) also reports errors met while closing).
    pub fn into_store(mut self) -> S {
        self.end_all_strokes();
        self.doc.into_store()
    }

    /// The world's kind.
    pub fn kind(&self) -> WorldKind {
        self.doc.ops().kind()
    }

    /// The typed document, for what only one kind has (its world, for
    /// meshing and streaming). Edits go through this document instead.
    pub fn typed(&self) -> &AnyDocument<S> {
        &self.doc
    }

    /// The typed document, mutably: for meshing and streaming (mesh caches,
    /// dirty sets, loading chunks). Edits made through it directly bypass
    /// the history; draw them as strokes instead.
    pub fn typed_mut(&mut self) -> &mut AnyDocument<S> {
        &mut self.doc
    }

    /// The store holding the world.
    pub fn store(&self) -> &S {
        self.doc.ops().store()
    }

    /// The info record (what `isoterra info` prints) as JSON.
    pub fn info_json(&self) -> Value {
        self.doc.ops().info_json()
    }

    /// Where the history stands.
    pub fn history(&self) -> History {
        let (total, pos, redo) = self.doc.ops().history();
        History {
            can_undo: pos > 0,
            can_redo: redo && total > pos,
            strokes: pos,
        }
    }

    /// The world's generator as a [`Recipe`], derived from the parameters
    /// the world file stores (so files made before recipes existed have
    /// one too). It is named after a preset when it is exactly that
    /// preset's.
    pub fn recipe(&self) -> Recipe {
        Recipe::of_params(&self.doc.ops().params())
    }

    /// A hash of the world's current contents: equal contents give equal
    /// hashes whatever the history. Take it with no stroke open: a voxel
    /// world's hash covers its stored chunks only, so open previews show
    /// in the other kinds' hashes but not in a voxel world's.
    pub fn content_hash(&self) -> String {
        self.doc.ops().content_hash()
    }

    /// What a baked chunk of this world reads and how it is meshed.
    pub fn bake_source(&self) -> BakeSource<'_> {
        self.doc.ops().bake_source()
    }

    /// Erodes a region of a heightmap world (hydraulic, thermal or both;
    /// see [`ErodeSpec`](crate::ErodeSpec)) and commits the new heights as one stroke of
    /// tool `erode`, undoable like any other. Open strokes keep their
    /// previews.
    ///
    /// # Errors
    ///
    /// [`KindError::Invalid`] for a world of another kind and as
    /// [`erode_region`](crate::erode_region); store errors as
    /// [`end_stroke`](Self::end_stroke). Nothing changes on error.
    pub fn erode(&mut self, spec: &crate::ErodeSpec) -> Result<Committed, KindError> {
        let kind = self.kind();
        let params = serde_json::to_value(spec).unwrap_or(Value::Null);
        // Eroded from the committed heights: open strokes' previews are
        // lifted first and put back after.
        self.with_previews_lifted(|doc| {
            let AnyDocument::Heightmap(d) = doc else {
                return Err(KindError::invalid(format!(
                    "erode works on heightmap worlds; this is a {kind} world"
                )));
            };
            let eroded = crate::erode_region(d.world(), spec)?;
            let out =
                d.set_heights_as(eroded.first, eroded.dims, &eroded.heights, "erode", params)?;
            Ok(Committed {
                id: out.id,
                changed_nodes: out.changed_nodes,
            })
        })
    }

    /// The rows a bake of the box `lo..hi` (world units, as
    /// [`BakeSource::plan`] takes it) at `lod` stores: every chunk of the
    /// plan baked on this thread, each with its input stamp. This is what
    /// `isoterra bake` computes, without its threads and batches; store the
    /// rows with [`ChunkStore::put_baked`] on the world's file.
    ///
    /// # Errors
    ///
    /// As [`BakeSource::plan`] and [`ChunkBaker::bake`](crate::ChunkBaker::bake)
    /// (a side-view world must be [rebuilt](Self::rebuild) first).
    pub fn bake_rows(
        &self,
        lo: &[f32],
        hi: &[f32],
        lod: u8,
    ) -> Result<Vec<isoterra_store::BakedRow>, KindError> {
        let source = self.bake_source();
        let plan = source.plan(lo, hi, lod)?;
        let inputs = crate::BakeInputs::read(self.store())?;
        let mut baker = crate::ChunkBaker::new();
        let mut rows = Vec::with_capacity(plan.count() as usize);
        for key in plan.keys() {
            let chunk = baker.bake(&source, &key)?;
            let stamp = inputs.stamp(&source, &key)?;
            rows.push(isoterra_store::BakedRow::new(key, &stamp, &chunk)?);
        }
        Ok(rows)
    }

    /// Meshes every dirty chunk of a side-view world now (bounded kinds
    /// with a mesh cache); other kinds mesh on demand and ignore this.
    pub fn rebuild(&mut self) {
        self.doc.ops_mut().rebuild();
    }

    // ----- ground queries -----

    /// Where the ray from `from` along `dir` first enters the ground within
    /// `max` world units, sampling the density field (trilinear in voxel
    /// worlds, linear between nodes in a side view, bilinear heights on a
    /// heightmap), not a collider: where a dig would start. Points are
    /// `[x, y, z]` world units (a side view uses `x, y`). Voxel chunks along
    /// the ray are loaded first. `None` for a ray that hits nothing, a
    /// non-finite point, a zero or non-finite direction, `max` not above 0,
    /// and for kinds without ground queries
    /// ([`WorldKind::has_ground_queries`]: maps answer line of sight and
    /// paths instead).
    pub fn raycast(&mut self, from: [f32; 3], dir: [f32; 3], max: f32) -> Option<GroundHit> {
        let len = (dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]).sqrt();
        let finite = from.iter().chain(&dir).all(|v| v.is_finite());
        if !(finite && len.is_finite() && len > 0.0 && max.is_finite() && max > 0.0) {
            return None;
        }
        let unit = dir.map(|v| v / len);
        self.doc.ops_mut().raycast(from, unit, max)
    }

    /// Whether `p` (`[x, y, z]` world units) is inside the ground: the
    /// density there is at least the iso level (under the surface on a
    /// heightmap). False for a non-finite point and for kinds without
    /// ground queries.
    pub fn is_solid(&mut self, p: [f32; 3]) -> bool {
        p.iter().all(|v| v.is_finite()) && self.doc.ops_mut().is_solid(p)
    }

    /// The density at `p` (`[x, y, z]` world units): the field value in voxel
    /// and side-view worlds (solid where it is at least the world's iso),
    /// the height above `p` on a heightmap (positive under the surface).
    /// `None` outside a bounded world, for a non-finite point, and for
    /// kinds without ground queries.
    pub fn density_at(&mut self, p: [f32; 3]) -> Option<f32> {
        if !p.iter().all(|v| v.is_finite()) {
            return None;
        }
        self.doc.ops_mut().density_at(p)
    }

    /// The tools of this world, with their parameters.
    pub fn tools(&self) -> Vec<ToolSpec> {
        self.kind().spec().tools(self.doc.ops().materials())
    }

    /// The limits every stroke obeys.
    pub fn limits(&self) -> Limits {
        self.kind().spec().limits()
    }

    // ----- strokes -----

    /// Checks a stroke against the tool schema and the world.
    ///
    /// # Errors
    ///
    /// [`KindError::UnknownTool`], or [`KindError::Invalid`] naming the bad
    /// value (radius, strength, shape or a parameter).
    pub fn template(&self, spec: &StrokeSpec) -> Result<Template, KindError> {
        let limits = self.limits();
        let radius = ranged("radius", spec.radius, limits.radius[0], limits.radius[1])? as f32;
        let strength = ranged(
            "strength",
            spec.strength,
            limits.strength[0],
            limits.strength[1],
        )? as f32;
        let kind = self.kind();
        let tools = self.tools();
        let tool = &tools[find_tool(kind, &tools, &spec.tool)?];
        let params = Params::new(tool, &spec.params);
        let b = Brief {
            kind,
            tool,
            params: &params,
            radius,
            strength,
            shape: spec.shape.as_deref(),
        };
        self.doc.ops().template(&b)
    }

    /// Begins a stroke: checks it (see [`template`](Self::template)) and
    /// opens it. Nothing changes until its first dab.
    ///
    /// # Errors
    ///
    /// As [`template`](Self::template).
    pub fn begin_stroke(&mut self, spec: &StrokeSpec) -> Result<StrokeId, KindError> {
        let template = self.template(spec)?;
        Ok(self.begin_template(template))
    }

    /// Opens a stroke of an already checked template.
    pub fn begin_template(&mut self, template: Template) -> StrokeId {
        let id = StrokeId(self.next);
        self.next += 1;
        self.open.insert(
            id,
            OpenStroke {
                template,
                stamps: Vec::new(),
                first: None,
            },
        );
        id
    }

    /// Whether `stroke` is open.
    pub fn is_open(&self, stroke: StrokeId) -> bool {
        self.open.contains_key(&stroke)
    }

    /// Strokes open now.
    pub fn open_strokes(&self) -> usize {
        self.open.len()
    }

    /// Places a dab of `stroke` at `at` (world units: `[x, y, 0]` side view,
    /// `[x, y, z]` voxel, `[x, _, z]` heightmap and map) and shows it: the
    /// world in memory changes, the store does not until the stroke ends.
    ///
    /// # Errors
    ///
    /// [`KindError::UnknownStroke`] for a stroke that is not open,
    /// [`KindError::TooLarge`] past [`MAX_DABS_PER_STROKE`](crate::schema::MAX_DABS_PER_STROKE)
    /// dabs, [`KindError::Invalid`] for a bad point or a dab the world
    /// refuses; nothing changes then.
    pub fn dab(&mut self, stroke: StrokeId, at: [f64; 3]) -> Result<(), KindError> {
        let open = self.open.get(&stroke).ok_or(KindError::UnknownStroke)?;
        if open.stamps.len() >= self.limits().dabs_per_stroke {
            return Err(KindError::TooLarge(format!(
                "a stroke holds at most {} dabs",
                self.limits().dabs_per_stroke
            )));
        }
        let (template, first) = (open.template, open.first);
        let stamp = stamp_of(self.doc.ops(), &template, at, first)?;
        let preview = self.preview(&stamp)?;
        // The stroke may not grow past what the store records in one stroke:
        // refused at the dab that would pass it, not when the stroke ends.
        if let (Some(limit), Some(dab_nodes)) = (self.stroke_nodes, preview.folded_nodes()) {
            let last = self.previews.last().filter(|a| a.stroke == stroke);
            let added = last
                .and_then(|a| a.preview.new_nodes(&preview))
                .unwrap_or(dab_nodes);
            let held: usize = self
                .previews
                .iter()
                .filter(|a| a.stroke == stroke)
                .filter_map(|a| a.preview.folded_nodes())
                .sum();
            if held.saturating_add(added) as u64 > limit {
                revert(self.doc.ops_mut(), &preview);
                return Err(KindError::TooLarge(format!(
                    "the stroke would change more than {limit} nodes, the most one stroke may record: end it and draw on with a new stroke"
                )));
            }
        }
        if let Some(open) = self.open.get_mut(&stroke) {
            open.stamps.push(stamp);
            if open.first.is_none() {
                open.first = Some([at[0] as f32, at[1] as f32, at[2] as f32]);
                // Targets taken under the first dab are fixed now, against
                // the world as it was before this stroke showed anything.
                open.template = self.doc.ops().fix_targets(template, &stamp);
            }
        }
        self.push_preview(stroke, stamp, preview);
        Ok(())
    }

    /// Adds a dab's preview: folded into the last one when that is of the
    /// same stroke and of a kind that folds.
    fn push_preview(&mut self, stroke: StrokeId, stamp: Stamp, preview: Preview) {
        if let Some(last) = self.previews.last_mut().filter(|a| a.stroke == stroke) {
            match last.preview.absorb(preview) {
                None => {
                    last.stamps.push(stamp);
                    return;
                }
                Some(preview) => {
                    return self.previews.push(Applied {
                        stroke,
                        stamps: vec![stamp],
                        preview,
                    });
                }
            }
        }
        self.previews.push(Applied {
            stroke,
            stamps: vec![stamp],
            preview,
        });
    }

    /// Ends `stroke`: records its dabs as one stroke, committed to the store
    /// before this returns.
    ///
    /// # Errors
    ///
    /// [`KindError::UnknownStroke`] for a stroke that is not open; store
    /// errors (the stroke is then dropped, and the world holds what the
    /// store holds plus the other open strokes).
    pub fn end_stroke(&mut self, stroke: StrokeId) -> Result<Committed, KindError> {
        let open = self.open.remove(&stroke).ok_or(KindError::UnknownStroke)?;
        self.with_previews_lifted(|doc| doc.ops_mut().commit(&open.stamps))
    }

    /// Drops `stroke` and takes its dabs back; nothing is recorded.
    pub fn cancel_stroke(&mut self, stroke: StrokeId) {
        if self.open.remove(&stroke).is_some() {
            self.with_previews_lifted(|_| ());
        }
    }

    /// Ends every open stroke, in the order they were begun; the results
    /// in that order.
    pub fn end_all_strokes(&mut self) -> Vec<Result<Committed, KindError>> {
        let ids: Vec<StrokeId> = self.open.keys().copied().collect();
        ids.into_iter().map(|id| self.end_stroke(id)).collect()
    }

    /// The dabs [`stroke`](Self::stroke) places for `spec` through
    /// `points`: the points themselves for fewer than two, otherwise dabs a
    /// quarter of the radius apart along the path. A program that sends a
    /// stroke elsewhere dab by dab (an editor's `stroke_begin`, `dab`,
    /// `stroke_end`) sends these to get the same stroke.
    ///
    /// # Errors
    ///
    /// As [`template`](Self::template), [`KindError::Invalid`] for a point
    /// that is not finite or out of range, [`KindError::TooLarge`] past the
    /// dab limit.
    pub fn stroke_dabs(
        &self,
        spec: &StrokeSpec,
        points: &[[f64; 3]],
    ) -> Result<Vec<[f64; 3]>, KindError> {
        let template = self.template(spec)?;
        for p in points {
            checked_point("at", *p)?;
        }
        let dabs = self.path_dabs(&template, points)?;
        let max = self.limits().dabs_per_stroke;
        if dabs.len() > max {
            return Err(KindError::TooLarge(format!(
                "a stroke holds at most {max} dabs"
            )));
        }
        Ok(dabs)
    }

    /// Draws a whole stroke: `spec` with a dab at each point of `dabs`, then
    /// committed. A stroke with two points or more is dragged along the
    /// path with dabs a quarter of the radius apart (at least a quarter
    /// cell), as a mouse drag would place them.
    ///
    /// # Errors
    ///
    /// Those of [`begin_stroke`](Self::begin_stroke), [`dab`](Self::dab) and
    /// [`end_stroke`](Self::end_stroke); nothing changes on error.
    pub fn stroke(&mut self, spec: &StrokeSpec, dabs: &[[f64; 3]]) -> Result<Committed, KindError> {
        let template = self.template(spec)?;
        let dabs = self.path_dabs(&template, dabs)?;
        let max = self.limits().dabs_per_stroke;
        if dabs.len() > max {
            return Err(KindError::TooLarge(format!(
                "a stroke holds at most {max} dabs"
            )));
        }
        self.with_previews_lifted(|doc| {
            let doc = doc.ops_mut();
            let Some(at0) = dabs.first().copied() else {
                return doc.commit(&[]);
            };
            let first_stamp = stamp_of(doc, &template, at0, None)?;
            let fixed = doc.fix_targets(template, &first_stamp);
            let first = Some([at0[0] as f32, at0[1] as f32, at0[2] as f32]);
            let mut stamps = vec![first_stamp];
            for at in &dabs[1..] {
                stamps.push(stamp_of(doc, &fixed, *at, first)?);
            }
            doc.commit(&stamps)
        })
    }

    /// The dabs of a stroke dragged through `points`: a quarter of the
    /// radius apart (at least a quarter cell), both ends included. A map
    /// places them as [`MapStroke::along`](isoterra_world::MapStroke::along)
    /// does.
    fn path_dabs(&self, t: &Template, points: &[[f64; 3]]) -> Result<Vec<[f64; 3]>, KindError> {
        if points.len() < 2 {
            return Ok(points.to_vec());
        }
        for p in points {
            checked_point("at", *p)?;
        }
        self.doc
            .ops()
            .path_dabs(t, points, self.limits().dabs_per_stroke)
    }

    /// Side2d worlds: removes the floating islands (ground that nothing
    /// holds up any more, see [`Side2dWorld::islands`](isoterra_world::Side2dWorld::islands))
    /// that reach into the box `near` (`[min, max]` in world units; every
    /// island for `None`) as one recorded stroke, so undo puts them back,
    /// and returns them as they were (outline, area, nodes, mesh) with the
    /// stroke's result. A game turns them into falling debris: pass the box
    /// of the stroke that just ended to take only what it cut loose. Other
    /// kinds have no islands: an empty list and nothing recorded.
    ///
    /// # Errors
    ///
    /// Store errors; nothing changes then.
    pub fn detach_islands(
        &mut self,
        near: Option<[[f32; 2]; 2]>,
    ) -> Result<(Vec<Island>, Committed), KindError> {
        let reaches = move |i: &Island| {
            let Some([lo, hi]) = near else {
                return true;
            };
            i.outline
                .iter()
                .flat_map(|l| &l.points)
                .any(|p| p[0] >= lo[0] && p[0] <= hi[0] && p[1] >= lo[1] && p[1] <= hi[1])
        };
        self.with_previews_lifted(|doc| match doc {
            AnyDocument::Side2d(d) => {
                let (islands, out) = d.detach_islands(reaches)?;
                Ok((
                    islands,
                    Committed {
                        id: out.id,
                        changed_nodes: out.changed_nodes,
                    },
                ))
            }
            _ => Ok((
                Vec::new(),
                Committed {
                    id: None,
                    changed_nodes: 0,
                },
            )),
        })
    }

    /// Undoes the last stroke; its id, or `None` when there is none.
    ///
    /// # Errors
    ///
    /// Store errors; nothing changes then.
    pub fn undo(&mut self) -> Result<Option<i64>, KindError> {
        self.with_previews_lifted(|doc| Ok(doc.ops_mut().undo()?))
    }

    /// Redoes the last undone stroke; its id, or `None` when there is none.
    ///
    /// # Errors
    ///
    /// Store errors; nothing changes then.
    pub fn redo(&mut self) -> Result<Option<i64>, KindError> {
        self.with_previews_lifted(|doc| Ok(doc.ops_mut().redo()?))
    }

    /// Catches the world in memory up with what another program (an
    /// editor, a second process) wrote to the world file or store since
    /// this document last read or wrote it — its strokes, undos and redos,
    /// applied from the store's log without writing anything — and returns
    /// how many strokes were taken back and applied. The changed chunks are
    /// marked dirty as after an own edit. Afterwards this document may
    /// write again.
    ///
    /// # Errors
    ///
    /// Store errors (a history this document cannot reach from the log:
    /// reopen it then); nothing changes then.
    pub fn follow(&mut self) -> Result<isoterra_store::Followed, KindError> {
        self.with_previews_lifted(|doc| Ok(doc.ops_mut().follow()?))
    }

    /// Runs `f` on the typed document with every preview taken back, then
    /// applies the previews of the strokes still open again.
    pub(crate) fn with_previews_lifted<T>(
        &mut self,
        f: impl FnOnce(&mut AnyDocument<S>) -> T,
    ) -> T {
        let applied = std::mem::take(&mut self.previews);
        for a in applied.iter().rev() {
            revert(self.doc.ops_mut(), &a.preview);
        }
        // The previews are taken back: only their stamps are needed again.
        // Freed before `f`, since a stroke's preview holds each node it
        // touched (hundreds of MB for the largest voxel strokes) and `f`
        // may commit that stroke, which builds its edit anew.
        let lifted: Vec<(StrokeId, Vec<Stamp>)> =
            applied.into_iter().map(|a| (a.stroke, a.stamps)).collect();
        let out = f(&mut self.doc);
        for (stroke, stamps) in lifted {
            if !self.open.contains_key(&stroke) {
                continue;
            }
            for stamp in stamps {
                if let Ok(preview) = self.preview(&stamp) {
                    self.push_preview(stroke, stamp, preview);
                }
            }
        }
        out
    }

    /// Applies a stamp in memory only.
    fn preview(&mut self, s: &Stamp) -> Result<Preview, KindError> {
        self.doc.ops_mut().preview(s)
    }
}

/// The stamp of a dab at `at` (world units, checked); `first` is the
/// stroke's first dab (map targets and the voxel flatten plane are
/// fixed there).
fn stamp_of<S: ChunkStore>(
    doc: &dyn TypedDocument<S>,
    t: &Template,
    at: [f64; 3],
    first: Option<[f32; 3]>,
) -> Result<Stamp, KindError> {
    doc.stamp(t, checked_point("at", at)?, first)
}

/// Takes a preview back (it came from this world, so it fits).
fn revert<S: ChunkStore>(doc: &mut dyn TypedDocument<S>, p: &Preview) {
    let reverted = doc.revert(p);
    debug_assert!(reverted.is_ok(), "a preview did not revert: {reverted:?}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use isoterra_store::MemoryStore;

    fn heightmap() -> Document<MemoryStore> {
        Document::create_in(MemoryStore::new(), &NewWorld::new(WorldKind::Heightmap)).unwrap()
    }

    #[test]
    fn a_dab_that_would_take_a_stroke_past_the_node_limit_is_refused_there() {
        let mut doc = heightmap();
        let spec = StrokeSpec::new("raise", 8.0);
        // One dab of radius 8 touches about 200 nodes; allow a few dabs.
        let one = {
            let s = doc.begin_stroke(&spec).unwrap();
            doc.dab(s, [0.0, 0.0, 0.0]).unwrap();
            let n = doc.previews[0].preview.folded_nodes().unwrap();
            doc.cancel_stroke(s);
            n as u64
        };
        doc.stroke_nodes = Some(3 * one);
        let before = doc.content_hash();
        let s = doc.begin_stroke(&spec).unwrap();
        // Dabs on the same spot fold into the nodes already held: any number fit.
        for _ in 0..50 {
            doc.dab(s, [0.0, 0.0, 0.0]).unwrap();
        }
        doc.dab(s, [100.0, 0.0, 0.0]).unwrap();
        doc.dab(s, [200.0, 0.0, 0.0]).unwrap();
        let shown = doc.content_hash();
        let err = doc.dab(s, [300.0, 0.0, 0.0]).unwrap_err();
        assert!(matches!(err, KindError::TooLarge(_)), "{err}");
        assert!(err.to_string().contains("nodes"), "{err}");
        // The refused dab shows nothing; the stroke so far is kept and ends.
        assert_eq!(doc.content_hash(), shown);
        let done = doc.end_stroke(s).unwrap();
        assert!(done.id.is_some());
        assert!(done.changed_nodes as u64 <= 3 * one);
        assert_ne!(doc.content_hash(), before);
    }
}
