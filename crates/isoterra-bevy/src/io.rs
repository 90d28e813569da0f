//! The document of a terrain and its edit queue: edits, undo and redo run
//! on Bevy's IO pool one after another, each committed to the world file
//! before its result goes back to the main thread with the chunks it
//! changed (meshed there too for the bounded kinds).

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use bevy::mesh::Mesh;
use bevy::tasks::IoTaskPool;
use isoterra::field::MaterialTable;
use isoterra::kind::{AnyDocument, Document, KindError, StrokeSpec};
use isoterra::world::{ChunkCoord, HeightmapSource, VoxelSource};

use crate::baked::BakedChunks;
use crate::build;
use crate::terrain::EditOp;

/// What a chunk's layer is, for the material the renderer gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Layer {
    /// Ground of a 3D kind (vertex colours).
    Ground,
    /// Water of a map (translucent).
    Water,
    /// A side2d submesh of one material.
    Side(u8),
}

/// A finished chunk: its meshes and its collider, built off the main thread.
pub(crate) struct Built {
    pub parts: Vec<(Layer, Mesh)>,
    pub collider: AnyCollider,
    pub triangles: usize,
    /// The box the chunk's surface spans (terrain space), where sleeping
    /// bodies are woken when its collider changes.
    pub bounds: Option<[[f32; 3]; 2]>,
    /// Read from a baked row instead of generated and meshed.
    pub baked: bool,
}

/// The box around `positions`.
pub(crate) fn bounds_of(positions: &[[f32; 3]]) -> Option<[[f32; 3]; 2]> {
    let first = *positions.first()?;
    let mut b = [first, first];
    for p in positions {
        for a in 0..3 {
            b[0][a] = b[0][a].min(p[a]);
            b[1][a] = b[1][a].max(p[a]);
        }
    }
    Some(b)
}

/// A collider of either dimension.
pub(crate) enum AnyCollider {
    None,
    D2(avian2d::prelude::Collider),
    D3(avian3d::prelude::Collider),
    /// A 3D collider on a child entity at an offset (heightfields).
    D3At(avian3d::prelude::Collider, bevy::math::Vec3),
}

/// A chunk of a bounded kind, rebuilt after an edit (or at load).
pub(crate) struct ChunkUpdate {
    pub coord: [i32; 3],
    pub version: u64,
    pub built: Built,
}

/// What an edit changed, for the main thread to show.
pub(crate) enum Change {
    /// Voxel chunks whose nodes changed: every streamed chunk reading one
    /// is rebuilt.
    Voxel(HashSet<ChunkCoord>),
    /// Heightmap chunks whose heights changed.
    Heightmap(Vec<[i32; 2]>),
    /// Rebuilt chunks of a bounded kind.
    Chunks(Vec<ChunkUpdate>),
}

/// A floating island taken out of a side2d world: its mesh and collider
/// around its centroid, for a debris body.
pub(crate) struct Debris {
    pub centroid: [f32; 2],
    pub area: f32,
    pub outline: Vec<Vec<[f32; 2]>>,
    pub mesh: Mesh,
    pub collider: avian2d::prelude::Collider,
}

/// One finished command.
pub(crate) struct Outcome {
    /// `None` for the initial load.
    pub op: Option<EditOp>,
    pub result: Result<Option<i64>, String>,
    pub change: Change,
    /// Islands a side2d stroke cut loose (already removed from the world).
    pub debris: Vec<Debris>,
}

pub(crate) enum Cmd {
    /// Builds every chunk of a bounded kind.
    Load,
    Stroke(StrokeSpec, Vec<[f64; 3]>),
    Undo,
    Redo,
    /// Catches up with what the editor wrote to the file; the reply to an
    /// own edit sent through the link, when this answers one.
    Follow(Option<(EditOp, Result<Option<i64>, String>)>),
    /// An edit for the editor: checked against the document here, then
    /// sent through the link in order with the others.
    Remote(Remote),
    /// The editor refused an own edit.
    Refused(EditOp, String),
}

/// An edit the editor makes for the game.
pub(crate) enum Remote {
    Stroke(StrokeSpec, Vec<[f64; 3]>),
    Undo,
    Redo,
}

impl Remote {
    pub fn op(&self) -> EditOp {
        match self {
            Remote::Stroke(..) => EditOp::Stroke,
            Remote::Undo => EditOp::Undo,
            Remote::Redo => EditOp::Redo,
        }
    }
}

/// The streaming sources that follow the document's edits, with the
/// terrain's current baked chunks.
pub(crate) enum Sources {
    Voxel(Arc<VoxelSource>, Option<Arc<BakedChunks>>),
    Heightmap(Arc<HeightmapSource>, Option<Arc<BakedChunks>>),
    /// Bounded kinds: the chunk versions already sent.
    Bounded(HashMap<[i32; 3], u64>),
}

struct Queue {
    cmds: VecDeque<Cmd>,
    running: bool,
    pushed: usize,
}

/// A terrain's document, shared by the main thread (queries), the IO pool
/// (edits) and the streaming workers (through the sources).
pub(crate) struct Shared {
    doc: Mutex<Document>,
    sources: Mutex<Sources>,
    queue: Mutex<Queue>,
    idle: Condvar,
    results: Mutex<Sender<Outcome>>,
    table: Option<MaterialTable>,
    detach: bool,
    /// The link to an editor, once one is started: edits go there instead.
    link: Mutex<Option<Arc<crate::link::LinkShared>>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock leaves the data as it was committed:
    // the document rolls back what a failed stroke began.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    pub fn new(doc: Document, sources: Sources, results: Sender<Outcome>, detach: bool) -> Self {
        let table = match doc.typed() {
            AnyDocument::Side2d(d) => Some(d.world().table().clone()),
            _ => None,
        };
        Shared {
            doc: Mutex::new(doc),
            sources: Mutex::new(sources),
            queue: Mutex::new(Queue {
                cmds: VecDeque::new(),
                running: false,
                pushed: 0,
            }),
            idle: Condvar::new(),
            results: Mutex::new(results),
            table,
            detach,
            link: Mutex::new(None),
        }
    }

    /// Sends this terrain's edits to the editor of `link` from now on.
    pub fn set_link(&self, link: Arc<crate::link::LinkShared>) {
        *lock(&self.link) = Some(link);
    }

    /// Whether edits go to an editor.
    pub fn linked(&self) -> bool {
        lock(&self.link).is_some()
    }

    /// Runs `f` on the document (waiting for a commit in progress).
    pub fn with_doc<T>(&self, f: impl FnOnce(&mut Document) -> T) -> T {
        f(&mut lock(&self.doc))
    }

    /// Queues a command; a task on the IO pool runs the queue in order.
    pub fn push(self: &Arc<Self>, cmd: Cmd) {
        let mut q = lock(&self.queue);
        q.cmds.push_back(cmd);
        q.pushed += 1;
        if q.running {
            return;
        }
        q.running = true;
        drop(q);
        let me = Arc::clone(self);
        IoTaskPool::get().spawn(async move { me.drain() }).detach();
    }

    /// Runs queued commands until none is left.
    fn drain(&self) {
        loop {
            let cmd = {
                let mut q = lock(&self.queue);
                match q.cmds.pop_front() {
                    Some(c) => c,
                    None => {
                        q.running = false;
                        self.idle.notify_all();
                        return;
                    }
                }
            };
            let op = match &cmd {
                Cmd::Load | Cmd::Follow(None) => None,
                Cmd::Stroke(..) | Cmd::Remote(Remote::Stroke(..)) => Some(EditOp::Stroke),
                Cmd::Undo | Cmd::Remote(Remote::Undo) => Some(EditOp::Undo),
                Cmd::Redo | Cmd::Remote(Remote::Redo) => Some(EditOp::Redo),
                Cmd::Follow(Some((op, _))) | Cmd::Refused(op, _) => Some(*op),
            };
            // A bug in meshing must not stop the queue: the command's
            // result says what went wrong and the next one runs.
            let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.run(cmd)))
                .unwrap_or_else(|panic| {
                    let why = panic
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_else(|| "unknown".into());
                    bevy::log::error!("isoterra: an edit failed inside the plugin: {why}");
                    Outcome {
                        op,
                        result: Err(format!("internal error: {why}")),
                        change: Change::Chunks(Vec::new()),
                        debris: Vec::new(),
                    }
                });
            // The receiver goes with the terrain; nobody waits any more then.
            let _ = lock(&self.results).send(out);
        }
    }

    /// Commands pushed so far.
    pub fn pushed(&self) -> usize {
        lock(&self.queue).pushed
    }

    /// Blocks until the queue is empty and nothing runs.
    pub fn flush(&self) {
        let mut q = lock(&self.queue);
        while q.running || !q.cmds.is_empty() {
            q = self.idle.wait(q).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn run(&self, cmd: Cmd) -> Outcome {
        let mut doc = lock(&self.doc);
        // The box a stroke reached (its dabs and radius, a cell more).
        let reach = match &cmd {
            Cmd::Stroke(spec, points) if !points.is_empty() => {
                let r = spec.radius.abs() as f32 + 1.0;
                let mut lo = [f32::INFINITY; 2];
                let mut hi = [f32::NEG_INFINITY; 2];
                for p in points {
                    for a in 0..2 {
                        lo[a] = lo[a].min(p[a] as f32 - r);
                        hi[a] = hi[a].max(p[a] as f32 + r);
                    }
                }
                Some([lo, hi])
            }
            _ => None,
        };
        let text = |r: Result<Option<i64>, KindError>| r.map_err(|e| e.to_string());
        let (op, result): (Option<EditOp>, Result<Option<i64>, String>) = match cmd {
            Cmd::Load => (None, Ok(None)),
            Cmd::Stroke(spec, points) => (
                Some(EditOp::Stroke),
                text(doc.stroke(&spec, &points).map(|c| c.id)),
            ),
            Cmd::Undo => (Some(EditOp::Undo), text(doc.undo())),
            Cmd::Redo => (Some(EditOp::Redo), text(doc.redo())),
            Cmd::Follow(reply) => match (doc.follow(), reply) {
                (Err(e), reply) => {
                    bevy::log::error!(
                        "isoterra: cannot follow the editor's changes ({e}); restart the game to see them"
                    );
                    (
                        Some(reply.map_or(EditOp::Linked, |r| r.0)),
                        Err(e.to_string()),
                    )
                }
                (Ok(_), Some((op, result))) => (Some(op), result),
                (Ok(f), None) => (f.changed().then_some(EditOp::Linked), Ok(None)),
            },
            Cmd::Remote(remote) => {
                let link = lock(&self.link).clone();
                let sent = match link {
                    None => Err((remote.op(), "the terrain has no editor link".to_string())),
                    Some(link) => crate::link::send(&link, &doc, remote),
                };
                match sent {
                    // The reply comes through the link.
                    Ok(()) => {
                        return Outcome {
                            op: None,
                            result: Ok(None),
                            change: Change::Chunks(Vec::new()),
                            debris: Vec::new(),
                        };
                    }
                    Err((op, why)) => (Some(op), Err(why)),
                }
            }
            Cmd::Refused(op, why) => (Some(op), Err(why)),
        };
        let debris = match reach {
            Some(near) if self.detach && !self.linked() && matches!(result, Ok(Some(_))) => {
                self.detach(&mut doc, near)
            }
            _ => Vec::new(),
        };
        let change = self.changes(&mut doc);
        Outcome {
            op,
            result,
            change,
            debris,
        }
    }

    /// The colour of side2d material `id`, linear.
    fn side_color(&self, id: u8) -> [f32; 4] {
        let c = self
            .table
            .as_ref()
            .and_then(|t| t.get(id))
            .map_or([200, 200, 200, 255], |m| m.color);
        srgb_to_linear(c)
    }

    /// Takes the floating islands out of a side2d world (one recorded
    /// stroke) and makes their debris.
    fn detach(&self, doc: &mut Document, near: [[f32; 2]; 2]) -> Vec<Debris> {
        if doc.kind() != isoterra::kind::WorldKind::Side2d {
            return Vec::new();
        }
        let Ok((islands, _)) = doc.detach_islands(Some(near)) else {
            return Vec::new();
        };
        let AnyDocument::Side2d(d) = doc.typed() else {
            return Vec::new();
        };
        // The removed nodes keep their material ids.
        let ids = d.world().materials().ids();
        islands
            .into_iter()
            .filter_map(|island| {
                let mut counts = [0u32; 256];
                for &n in &island.nodes {
                    counts[ids[n as usize] as usize] += 1;
                }
                let material = (0..256).max_by_key(|&k| counts[k]).unwrap_or(0) as u8;
                build::debris(&island, self.side_color(material))
            })
            .collect()
    }

    /// Hands what the document changed to the sources, or meshes the
    /// changed chunks of a bounded kind.
    fn changes(&self, doc: &mut Document) -> Change {
        let mut sources = lock(&self.sources);
        match (doc.typed_mut(), &mut *sources) {
            (AnyDocument::Voxel(d), Sources::Voxel(src, baked)) => {
                let dirty: HashSet<ChunkCoord> = d.world_mut().take_dirty().into_iter().collect();
                if let Some(b) = baked {
                    // Before the source changes: a build that sees the new
                    // nodes never reads a row made from the old ones.
                    b.forget_voxel(&dirty);
                }
                if !dirty.is_empty() {
                    // Same chunk size by construction: this cannot fail.
                    let _ = src.update_from_world(d.world(), dirty.iter().copied());
                }
                Change::Voxel(dirty)
            }
            (AnyDocument::Heightmap(d), Sources::Heightmap(src, baked)) => {
                let dirty = d.world_mut().take_dirty();
                if let Some(b) = baked {
                    b.forget_heightmap(&dirty);
                }
                if !dirty.is_empty() {
                    let _ = src.update_from_world(d.world(), dirty.iter().copied());
                }
                Change::Heightmap(dirty)
            }
            (AnyDocument::Side2d(d), Sources::Bounded(sent)) => {
                d.rebuild();
                let color = |id: u8| self.side_color(id);
                let mut out = Vec::new();
                for chunk in d.world().chunks() {
                    let coord = [chunk.coord[0] as i32, chunk.coord[1] as i32, 0];
                    if chunk.version == 0 || sent.get(&coord) == Some(&chunk.version) {
                        continue;
                    }
                    sent.insert(coord, chunk.version);
                    let parts: Vec<(Layer, Mesh)> = build::side2d_meshes(&chunk.mesh, &color)
                        .into_iter()
                        .map(|(id, m)| (Layer::Side(id), m))
                        .collect();
                    let collider = build::polyline_collider(&chunk.colliders)
                        .map_or(AnyCollider::None, AnyCollider::D2);
                    out.push(ChunkUpdate {
                        coord,
                        version: chunk.version,
                        built: Built {
                            parts,
                            collider,
                            triangles: chunk.mesh.indices.len() / 3,
                            bounds: bounds_of(&chunk.mesh.positions),
                            baked: false,
                        },
                    });
                }
                Change::Chunks(out)
            }
            (AnyDocument::Map(d), Sources::Bounded(sent)) => {
                let _ = d.world_mut().rebuild(None);
                let mut out = Vec::new();
                for m in d.world().chunk_meshes() {
                    let coord = [m.coord[0] as i32, m.coord[1] as i32, 0];
                    if sent.get(&coord) == Some(&m.version) {
                        continue;
                    }
                    sent.insert(coord, m.version);
                    let (terrain, water) = build::map_meshes(m);
                    let t = &m.mesh.terrain;
                    let collider = build::trimesh_collider(&t.positions, &t.indices)
                        .map_or(AnyCollider::None, AnyCollider::D3);
                    let mut parts = Vec::new();
                    parts.extend(terrain.map(|m| (Layer::Ground, m)));
                    parts.extend(water.map(|m| (Layer::Water, m)));
                    out.push(ChunkUpdate {
                        coord,
                        version: m.version,
                        built: Built {
                            parts,
                            collider,
                            triangles: (t.indices.len() + m.mesh.water.indices.len()) / 3,
                            bounds: bounds_of(&t.positions),
                            baked: false,
                        },
                    });
                }
                Change::Chunks(out)
            }
            _ => Change::Chunks(Vec::new()),
        }
    }
}

/// An sRGB byte colour as linear floats.
pub(crate) fn srgb_to_linear(c: [u8; 4]) -> [f32; 4] {
    let f = |v: u8| {
        let s = f32::from(v) / 255.0;
        if s <= 0.04045 {
            s / 12.92
        } else {
            ((s + 0.055) / 1.055).powf(2.4)
        }
    };
    [f(c[0]), f(c[1]), f(c[2]), f32::from(c[3]) / 255.0]
}
