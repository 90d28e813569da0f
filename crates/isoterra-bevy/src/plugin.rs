//! The plugin: opening terrains, streaming around viewers, edits through
//! the document, and finished chunks swapped into their entities.

use std::collections::HashMap;
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};

use bevy::app::{App, Plugin, PostUpdate, PreUpdate, Update};
use bevy::asset::{AssetApp, Assets, Handle};
use bevy::ecs::schedule::{IntoScheduleConfigs, SystemSet};
use bevy::ecs::system::{Commands, Local, Query, Res, ResMut};
use bevy::log::warn;
use bevy::math::{Vec2, Vec3};
use bevy::mesh::{Mesh, Mesh2d, Mesh3d};
use bevy::prelude::{
    ChildOf, Component, Entity, GlobalTransform, MessageReader, MessageWriter, Transform, With,
    Without,
};
use bevy::time::Time;
use isoterra::kind::{AnyDocument, Document, WorldKind};
use isoterra::world::{ChunkCoord, HeightmapSource, StreamEvent, StreamScheduler, VoxelSource};

use crate::baked::BakedChunks;
use crate::io::{AnyCollider, Built, Change, Cmd, Layer, Outcome, Remote, Shared, Sources};
use crate::link::EditorLink;
use crate::stream::{BevyExecutor, HeightBuild, ViewerRules, VoxelBuild};
use crate::terrain::{
    EditOp, Terrain, TerrainChunk, TerrainDebris, TerrainEdit, TerrainEdited, TerrainFailed,
    TerrainIsland, TerrainReady, TerrainRedo, TerrainStatus, TerrainUndo, TerrainViewer,
};

/// Streamed events taken per terrain per frame: bounds the main thread's
/// work when many builds finish at once (the rest wait a frame).
const EVENTS_PER_FRAME: usize = 96;
/// Mesh assets of unloaded chunks kept for the chunks that load next.
const MESH_POOL: usize = 512;
/// Spare mesh assets made once, when an endless terrain first settles: one
/// per this many parts shown. A moving viewer briefly holds more chunks
/// than a still one (new ones load before the old ones unload, and more
/// of one kind of ground than another comes into view); the spares cover
/// that, so streaming in steady state creates no mesh asset.
const SPARE_PER_SHOWN: usize = 4;

/// The plugin. Add it after `AssetPlugin` and `TransformPlugin` (both are
/// in `DefaultPlugins`); add avian's `PhysicsPlugins` too for the colliders
/// to collide.
#[derive(Debug, Default, Clone, Copy)]
pub struct IsoterraPlugin;

/// The plugin's systems, in order: [`Open`](Self::Open) and
/// [`Edit`](Self::Edit) in `PreUpdate`; [`Queue`](Self::Queue) and
/// [`Stream`](Self::Stream) in `PostUpdate`, after the game moved its
/// viewers and sent its edits in `Update`. An edit sent in `Update` is
/// queued in the same frame, applied (its chunks rebuilt) once committed,
/// and shown a frame or two later.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IsoterraSystems {
    /// Opens new terrains.
    Open,
    /// Applies committed edits, undos and redos: the chunks they changed
    /// are rebuilt.
    Edit,
    /// Queues the edits, undos and redos sent this frame.
    Queue,
    /// Moves the streams to the viewers and swaps finished chunks in.
    Stream,
}

impl Plugin for IsoterraPlugin {
    fn build(&self, app: &mut App) {
        app.add_message::<TerrainEdit>()
            .add_message::<TerrainUndo>()
            .add_message::<TerrainRedo>()
            .add_message::<TerrainEdited>()
            .add_message::<TerrainFailed>()
            .add_message::<TerrainIsland>()
            .init_asset::<Mesh>()
            .configure_sets(
                PreUpdate,
                (IsoterraSystems::Open, IsoterraSystems::Edit).chain(),
            )
            .add_systems(
                PreUpdate,
                (
                    (open_terrains, start_links)
                        .chain()
                        .in_set(IsoterraSystems::Open),
                    apply_outcomes.in_set(IsoterraSystems::Edit),
                ),
            )
            .configure_sets(
                PostUpdate,
                (IsoterraSystems::Queue, IsoterraSystems::Stream).chain(),
            )
            .add_systems(
                PostUpdate,
                (
                    queue_edits.in_set(IsoterraSystems::Queue),
                    (update_viewers, poll_streams, wake_bodies)
                        .chain()
                        .in_set(IsoterraSystems::Stream),
                ),
            );
        let _ = Update;
        #[cfg(feature = "render")]
        crate::render::build(app);
    }
}

/// A terrain whose world could not be opened (not retried).
#[derive(Component)]
pub(crate) struct TerrainBroken;

/// The stream of an endless kind.
enum Backend {
    Voxel {
        sched: Box<StreamScheduler<VoxelBuild>>,
        rules: ViewerRules,
    },
    Heightmap {
        sched: Box<StreamScheduler<HeightBuild>>,
        rules: ViewerRules,
    },
    Bounded,
}

/// A shown chunk: its entity and its mesh parts.
struct Shown {
    entity: Entity,
    parts: Vec<(Layer, Entity, Handle<Mesh>)>,
    /// The child holding an offset collider (heightfields).
    collider: Option<Entity>,
    /// The box of what it shows (terrain space).
    bounds: Option<[[f32; 3]; 2]>,
    version: u64,
    /// What it shows was read from a baked row.
    baked: bool,
}

/// The plugin's state of an open terrain.
#[derive(Component)]
pub(crate) struct TerrainRuntime {
    shared: Arc<Shared>,
    results: Mutex<Receiver<Outcome>>,
    backend: Mutex<Backend>,
    chunks: HashMap<[i32; 3], Shown>,
    pool: Vec<Handle<Mesh>>,
    two_d: bool,
    /// Viewer positions at the last stream update.
    last: Vec<[f32; 3]>,
    /// Outcomes applied so far.
    applied: usize,
    /// Boxes (terrain space) whose colliders changed this frame.
    changed: Vec<[[f32; 3]; 2]>,
    /// Whether the spare mesh assets were made.
    spares: bool,
}

impl Drop for TerrainRuntime {
    fn drop(&mut self) {
        // Edits already queued are committed before the world is closed.
        self.shared.flush();
    }
}

fn open_document(t: &Terrain) -> Result<Document, String> {
    match &t.create {
        Some(new) if !t.path.exists() => Document::create(&t.path, new),
        _ => Document::open(&t.path),
    }
    .map_err(|e| format!("{}: {e}", t.path.display()))
}

fn start(t: &Terrain) -> Result<(TerrainRuntime, TerrainReady), String> {
    let mut doc = open_document(t)?;
    let kind = doc.kind();
    let endless = matches!(kind, WorldKind::Voxel | WorldKind::Heightmap);
    let use_baked = t.baked.unwrap_or(kind == WorldKind::Voxel);
    let baked = if use_baked && endless {
        // A file whose baked rows cannot be read still opens: its chunks
        // are built live.
        match BakedChunks::open(&doc, &t.path, kind == WorldKind::Voxel) {
            Ok(b) => b.map(Arc::new),
            Err(e) => {
                warn!(
                    "isoterra: {}: {e}; building every chunk live",
                    t.path.display()
                );
                None
            }
        }
    } else {
        None
    };
    let err = |e: isoterra::world::WorldError| e.to_string();
    let (sources, backend) = match doc.typed_mut() {
        AnyDocument::Voxel(d) => {
            let _ = d.world_mut().take_dirty();
            let src = Arc::new(VoxelSource::from_world(d.world()).map_err(err)?);
            let baked = baked.clone();
            let n = d.world().chunk_cells() as f32;
            let config = src
                .stream_config()
                .with_unload_hysteresis(n * 0.5)
                .with_max_in_flight(16);
            let rules = ViewerRules::voxel(&config, t.lod_rings.clone());
            let sched = StreamScheduler::with_executor(
                VoxelBuild {
                    source: Arc::clone(&src),
                    baked: baked.clone(),
                },
                config,
                Arc::new(BevyExecutor),
            )
            .map_err(err)?;
            (
                Sources::Voxel(src, baked),
                Backend::Voxel {
                    sched: Box::new(sched),
                    rules,
                },
            )
        }
        AnyDocument::Heightmap(d) => {
            let _ = d.world_mut().take_dirty();
            let baked = baked.clone();
            let range = d.info().height_range;
            let src = Arc::new(
                HeightmapSource::from_world(d.world())
                    .map_err(err)?
                    .with_colliders(true),
            );
            let config = src.stream_config().with_max_in_flight(16);
            let rules = ViewerRules::heightmap(&config, &src, t.lod_rings.clone());
            let sched = StreamScheduler::with_executor(
                HeightBuild {
                    source: Arc::clone(&src),
                    range,
                    baked: baked.clone(),
                },
                config,
                Arc::new(BevyExecutor),
            )
            .map_err(err)?;
            (
                Sources::Heightmap(src, baked),
                Backend::Heightmap {
                    sched: Box::new(sched),
                    rules,
                },
            )
        }
        AnyDocument::Side2d(_) | AnyDocument::Map(_) => {
            (Sources::Bounded(HashMap::new()), Backend::Bounded)
        }
    };
    let (tx, rx) = channel();
    let shared = Arc::new(Shared::new(doc, sources, tx, t.detach_islands));
    if matches!(backend, Backend::Bounded) {
        shared.push(Cmd::Load);
    }
    let ready = TerrainReady {
        kind,
        shared: Arc::clone(&shared),
        baked_rows: baked.as_ref().map_or(0, |b| b.current_count()),
    };
    Ok((
        TerrainRuntime {
            shared,
            results: Mutex::new(rx),
            backend: Mutex::new(backend),
            chunks: HashMap::new(),
            pool: Vec::new(),
            two_d: kind == WorldKind::Side2d,
            last: Vec::new(),
            applied: 0,
            changed: Vec::new(),
            spares: !endless,
        },
        ready,
    ))
}

/// Terrains not opened yet and not given up on.
type Unopened = (Without<TerrainRuntime>, Without<TerrainBroken>);

fn open_terrains(
    mut commands: Commands,
    new: Query<(Entity, &Terrain), Unopened>,
    mut failed: MessageWriter<TerrainFailed>,
) {
    for (entity, t) in &new {
        match start(t) {
            Ok((runtime, ready)) => {
                commands
                    .entity(entity)
                    .insert((runtime, ready, TerrainStatus::default()));
            }
            Err(error) => {
                warn!("isoterra: cannot open the terrain: {error}");
                commands.entity(entity).insert(TerrainBroken);
                failed.write(TerrainFailed {
                    terrain: entity,
                    error,
                });
            }
        }
    }
}

/// Starts the editor links of terrains just opened.
fn start_links(terrains: Query<(&EditorLink, &Terrain, &TerrainRuntime, &TerrainReady)>) {
    for (link, terrain, rt, ready) in &terrains {
        crate::link::start(
            link,
            Arc::clone(&rt.shared),
            ready.kind,
            terrain.path.clone(),
        );
    }
}

fn queue_edits(
    mut edits: MessageReader<TerrainEdit>,
    mut undos: MessageReader<TerrainUndo>,
    mut redos: MessageReader<TerrainRedo>,
    terrains: Query<&TerrainRuntime>,
    mut done: MessageWriter<TerrainEdited>,
) {
    let mut send = |terrain: Entity, op: EditOp, cmd: Cmd| match terrains.get(terrain) {
        // A linked terrain's edits are the editor's to commit.
        Ok(rt) if rt.shared.linked() => rt.shared.push(match cmd {
            Cmd::Stroke(spec, points) => Cmd::Remote(Remote::Stroke(spec, points)),
            Cmd::Undo => Cmd::Remote(Remote::Undo),
            Cmd::Redo => Cmd::Remote(Remote::Redo),
            other => other,
        }),
        Ok(rt) => rt.shared.push(cmd),
        Err(_) => {
            done.write(TerrainEdited {
                terrain,
                op,
                result: Err("the terrain is not open".into()),
                rebuilt_chunks: 0,
            });
        }
    };
    for e in edits.read() {
        send(
            e.terrain,
            EditOp::Stroke,
            Cmd::Stroke(e.stroke.clone(), e.points.clone()),
        );
    }
    for u in undos.read() {
        send(u.terrain, EditOp::Undo, Cmd::Undo);
    }
    for r in redos.read() {
        send(r.terrain, EditOp::Redo, Cmd::Redo);
    }
}

/// Committed edits: the streams rebuild what they changed; bounded kinds
/// swap in the chunks the IO task meshed.
fn apply_outcomes(
    mut commands: Commands,
    mut terrains: Query<(Entity, &mut TerrainRuntime, &GlobalTransform)>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut done: MessageWriter<TerrainEdited>,
    mut islands: MessageWriter<TerrainIsland>,
) {
    for (terrain, mut rt, place) in &mut terrains {
        let outcomes: Vec<Outcome> = {
            let rx = rt.results.lock().unwrap_or_else(|e| e.into_inner());
            rx.try_iter().collect()
        };
        for mut out in outcomes {
            rt.applied += 1;
            for d in out.debris.drain(..) {
                let local = Vec3::new(d.centroid[0], d.centroid[1], 0.5);
                let at = place.transform_point(local);
                let debris = commands
                    .spawn((
                        TerrainDebris {
                            terrain,
                            area: d.area,
                        },
                        Transform::from_translation(at).with_rotation(place.rotation()),
                        Mesh2d(meshes.add(d.mesh)),
                        d.collider,
                        avian2d::prelude::RigidBody::Dynamic,
                    ))
                    .id();
                islands.write(TerrainIsland {
                    terrain,
                    debris,
                    area: d.area,
                    centroid: Vec2::from_array(d.centroid),
                    outline: d
                        .outline
                        .iter()
                        .map(|l| l.iter().map(|p| Vec2::from_array(*p)).collect())
                        .collect(),
                });
            }
            let rebuilt = match out.change {
                Change::Voxel(dirty) => {
                    let mut b = rt.backend.lock().unwrap_or_else(|e| e.into_inner());
                    match &mut *b {
                        Backend::Voxel { sched, .. } if !dirty.is_empty() => sched
                            .invalidate_where(|src, c, lod| src.source.reads_dirty(c, lod, &dirty)),
                        _ => 0,
                    }
                }
                Change::Heightmap(dirty) => {
                    let mut b = rt.backend.lock().unwrap_or_else(|e| e.into_inner());
                    match &mut *b {
                        Backend::Heightmap { sched, .. } => {
                            sched.invalidate(dirty.iter().map(|c| [c[0], c[1], 0]))
                        }
                        _ => 0,
                    }
                }
                Change::Chunks(updates) => {
                    let n = updates.len();
                    for u in updates {
                        show(
                            &mut commands,
                            &mut meshes,
                            &mut rt,
                            terrain,
                            u.coord,
                            0,
                            Some(u.version),
                            u.built,
                        );
                    }
                    n
                }
            };
            if let Some(op) = out.op {
                done.write(TerrainEdited {
                    terrain,
                    op,
                    result: out.result,
                    rebuilt_chunks: rebuilt,
                });
            }
        }
    }
}

/// Where each viewer stands in one terrain's space, and which way it looks.
struct ViewerPose {
    id: u64,
    position: Vec3,
    forward: Vec3,
    velocity: Vec3,
    distance: f32,
}

fn update_viewers(
    mut terrains: Query<(&GlobalTransform, &mut TerrainRuntime)>,
    viewers: Query<(Entity, &GlobalTransform, &TerrainViewer)>,
    time: Res<Time>,
    mut previous: Local<HashMap<Entity, Vec3>>,
) {
    let dt = time.delta_secs();
    // World-space velocity of each viewer since the last frame.
    let velocity: HashMap<Entity, Vec3> = viewers
        .iter()
        .map(|(e, g, _)| {
            let v = match previous.get(&e) {
                Some(old) if dt > 0.0 => (g.translation() - *old) / dt,
                _ => Vec3::ZERO,
            };
            (e, if v.is_finite() { v } else { Vec3::ZERO })
        })
        .collect();
    previous.clear();
    previous.extend(viewers.iter().map(|(e, g, _)| (e, g.translation())));
    for (tf, mut rt) in &mut terrains {
        let inverse = tf.affine().inverse();
        let poses: Vec<ViewerPose> = viewers
            .iter()
            .map(|(e, g, v)| ViewerPose {
                id: e.to_bits(),
                position: inverse.transform_point3(g.translation()),
                forward: inverse.transform_vector3(g.forward().as_vec3()),
                velocity: inverse.transform_vector3(velocity[&e]),
                distance: v.view_distance,
            })
            .collect();
        let moved = poses.len() != rt.last.len()
            || poses
                .iter()
                .zip(&rt.last)
                .any(|(p, l)| p.position.distance(Vec3::from_array(*l)) > 0.5);
        if !moved {
            continue;
        }
        rt.last = poses.iter().map(|p| p.position.to_array()).collect();
        let list = |rules: &ViewerRules| {
            poses
                .iter()
                .map(|p| {
                    rules.viewer(
                        p.id,
                        p.position.to_array(),
                        p.forward.to_array(),
                        p.velocity.to_array(),
                        p.distance,
                    )
                })
                .collect::<Vec<_>>()
        };
        let mut b = rt.backend.lock().unwrap_or_else(|e| e.into_inner());
        let r = match &mut *b {
            Backend::Voxel { sched, rules } => sched.update(&list(rules)),
            Backend::Heightmap { sched, rules } => sched.update(&list(rules)),
            Backend::Bounded => Ok(()),
        };
        drop(b);
        if let Err(e) = r {
            warn!("isoterra: viewers refused: {e}");
        }
    }
}

/// Takes finished builds of the streams and swaps them in.
fn poll_streams(
    mut commands: Commands,
    mut terrains: Query<(Entity, &mut TerrainRuntime, &mut TerrainStatus)>,
    mut meshes: ResMut<Assets<Mesh>>,
) {
    for (terrain, mut rt, mut status) in &mut terrains {
        let (events, building, settled): (Vec<StreamEvent<Built>>, usize, bool) = {
            let mut b = rt.backend.lock().unwrap_or_else(|e| e.into_inner());
            match &mut *b {
                Backend::Voxel { sched, .. } => {
                    let ev = sched.poll(EVENTS_PER_FRAME);
                    (ev, sched.stats().in_flight, sched.is_settled())
                }
                Backend::Heightmap { sched, .. } => {
                    let ev = sched.poll(EVENTS_PER_FRAME);
                    (ev, sched.stats().in_flight, sched.is_settled())
                }
                Backend::Bounded => (Vec::new(), 0, true),
            }
        };
        // Sent and not applied yet (queued, running or waiting in the channel).
        let pending = rt.shared.pushed().saturating_sub(rt.applied);
        let new = TerrainStatus {
            shown: 0,
            from_baked: 0,
            building,
            pending_edits: pending,
            settled: settled && pending == 0 && events.is_empty(),
        };
        // Unloads first: their mesh assets go to the pool that the chunks
        // loading in the same frame take theirs from.
        let (unloads, rest): (Vec<_>, Vec<_>) = events
            .into_iter()
            .partition(|e| matches!(e, StreamEvent::ChunkUnloaded { .. }));
        for e in unloads.into_iter().chain(rest) {
            match e {
                StreamEvent::ChunkReady {
                    coord, lod, output, ..
                } => show(
                    &mut commands,
                    &mut meshes,
                    &mut rt,
                    terrain,
                    coord,
                    lod,
                    None,
                    output,
                ),
                StreamEvent::ChunkUnloaded { coord, .. } => hide(&mut commands, &mut rt, coord),
                // A chunk that cannot be built keeps what it showed.
                _ => {}
            }
        }
        let new = TerrainStatus {
            shown: rt.chunks.len(),
            from_baked: rt.chunks.values().filter(|s| s.baked).count(),
            ..new
        };
        if new.settled && !rt.spares {
            rt.spares = true;
            let parts: usize = rt.chunks.values().map(|s| s.parts.len()).sum();
            let want = (parts / SPARE_PER_SHOWN).min(MESH_POOL);
            while rt.pool.len() < want {
                // Empty and kept out of the render world until a chunk
                // fills it.
                rt.pool.push(meshes.add(Mesh::new(
                    bevy::mesh::PrimitiveTopology::TriangleList,
                    bevy::asset::RenderAssetUsages::MAIN_WORLD,
                )));
            }
        }
        if *status != new {
            *status = new;
        }
    }
}

/// How far around a changed chunk sleeping bodies are woken (world units).
const WAKE_MARGIN: f32 = 2.0;

/// Wakes the sleeping bodies near chunks whose collider changed, so a body
/// resting on ground that was dug away falls.
fn wake_bodies(
    mut commands: Commands,
    mut terrains: Query<(&GlobalTransform, &mut TerrainRuntime)>,
    sleeping3d: Query<(Entity, &GlobalTransform), With<avian3d::prelude::Sleeping>>,
    sleeping2d: Query<(Entity, &GlobalTransform), With<avian2d::prelude::Sleeping>>,
) {
    for (place, mut rt) in &mut terrains {
        if rt.changed.is_empty() {
            continue;
        }
        let boxes = std::mem::take(&mut rt.changed);
        let inverse = place.affine().inverse();
        let two_d = rt.two_d;
        let near = |g: &GlobalTransform| {
            let p = inverse.transform_point3(g.translation());
            boxes.iter().any(|b| {
                (0..3).all(|a| {
                    // Side2d chunks are flat: any z is near.
                    (two_d && a == 2)
                        || (b[0][a] - WAKE_MARGIN..=b[1][a] + WAKE_MARGIN).contains(&p[a])
                })
            })
        };
        if two_d {
            for (e, g) in &sleeping2d {
                if near(g) {
                    commands.entity(e).remove::<avian2d::prelude::Sleeping>();
                }
            }
        } else {
            for (e, g) in &sleeping3d {
                if near(g) {
                    commands.entity(e).remove::<avian3d::prelude::Sleeping>();
                }
            }
        }
    }
}

/// Removes a chunk's entity; its mesh assets go back to the pool.
fn hide(commands: &mut Commands, rt: &mut TerrainRuntime, coord: ChunkCoord) {
    if let Some(s) = rt.chunks.remove(&coord) {
        rt.changed.extend(s.bounds);
        commands.entity(s.entity).despawn();
        for (_, _, h) in s.parts {
            if rt.pool.len() < MESH_POOL {
                rt.pool.push(h);
            }
        }
    }
}

/// Shows a built chunk: mesh parts and collider swapped in together.
#[allow(clippy::too_many_arguments)]
fn show(
    commands: &mut Commands,
    meshes: &mut Assets<Mesh>,
    rt: &mut TerrainRuntime,
    terrain: Entity,
    coord: ChunkCoord,
    lod: u8,
    version: Option<u64>,
    built: Built,
) {
    if built.parts.is_empty() && matches!(built.collider, AnyCollider::None) {
        hide(commands, rt, coord);
        return;
    }
    let two_d = rt.two_d;
    let mut shown = match rt.chunks.remove(&coord) {
        Some(s) => s,
        None => Shown {
            entity: commands
                .spawn((Transform::default(), ChildOf(terrain)))
                .id(),
            parts: Vec::new(),
            collider: None,
            bounds: None,
            version: 0,
            baked: false,
        },
    };
    // Bodies resting on what was there or on what is there now wake up.
    rt.changed.extend(shown.bounds.take());
    rt.changed.extend(built.bounds);
    shown.bounds = built.bounds;
    shown.baked = built.baked;
    shown.version = version.unwrap_or(shown.version + 1);
    let chunk = shown.entity;
    let mut ec = commands.entity(chunk);
    ec.insert(TerrainChunk {
        coord,
        lod,
        version: shown.version,
        triangles: built.triangles,
    });
    let offset = match built.collider {
        AnyCollider::D3(c) => {
            ec.insert((c, avian3d::prelude::RigidBody::Static));
            None
        }
        AnyCollider::D2(c) => {
            ec.insert((c, avian2d::prelude::RigidBody::Static));
            None
        }
        AnyCollider::D3At(c, at) => {
            ec.insert(avian3d::prelude::RigidBody::Static);
            Some((c, at))
        }
        AnyCollider::None => {
            ec.remove::<(avian3d::prelude::Collider, avian2d::prelude::Collider)>();
            None
        }
    };
    match (offset, shown.collider) {
        (Some((c, at)), Some(child)) => {
            commands
                .entity(child)
                .insert((c, Transform::from_translation(at)));
        }
        (Some((c, at)), None) => {
            let child = commands
                .spawn((
                    c,
                    Transform::from_translation(at),
                    TerrainCollider,
                    ChildOf(chunk),
                ))
                .id();
            shown.collider = Some(child);
        }
        (None, Some(child)) => {
            commands.entity(child).despawn();
            shown.collider = None;
        }
        (None, None) => {}
    }
    // Parts: reuse the entity and mesh asset of a part with the same layer.
    let mut old = std::mem::take(&mut shown.parts);
    for (layer, mesh) in built.parts {
        if let Some(i) = old.iter().position(|(l, _, _)| *l == layer) {
            let (l, e, h) = old.swap_remove(i);
            let _ = meshes.insert(h.id(), mesh);
            shown.parts.push((l, e, h));
            continue;
        }
        let handle = match rt.pool.pop() {
            Some(h) => {
                let _ = meshes.insert(h.id(), mesh);
                h
            }
            None => meshes.add(mesh),
        };
        let mut part = commands.spawn((TerrainMesh { layer }, ChildOf(chunk)));
        if two_d {
            part.insert(Mesh2d(handle.clone()));
        } else {
            part.insert(Mesh3d(handle.clone()));
        }
        shown.parts.push((layer, part.id(), handle));
    }
    for (_, e, h) in old {
        commands.entity(e).despawn();
        if rt.pool.len() < MESH_POOL {
            rt.pool.push(h);
        }
    }
    rt.chunks.insert(coord, shown);
}

/// The child of a [`TerrainChunk`] entity that holds its collider when the
/// collider sits off the chunk's origin (a heightmap chunk's heightfield,
/// centred on the chunk); the chunk entity holds the static body.
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq)]
pub struct TerrainCollider;

/// One mesh of a chunk (a child of its [`TerrainChunk`] entity): the
/// ground, the water of a map, or one material of a side2d chunk.
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq)]
pub struct TerrainMesh {
    pub(crate) layer: Layer,
}

impl TerrainMesh {
    /// The side2d material id of this mesh, if it is one.
    pub fn material(&self) -> Option<u8> {
        match self.layer {
            Layer::Side(id) => Some(id),
            _ => None,
        }
    }

    /// True for a map's water.
    pub fn is_water(&self) -> bool {
        self.layer == Layer::Water
    }
}

#[allow(dead_code)]
fn _assert_send_sync() {
    fn check<T: Send + Sync>() {}
    check::<TerrainRuntime>();
    check::<TerrainReady>();
}
