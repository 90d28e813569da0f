//! A baked world as a terrain source: chunks that `isoterra bake` stored
//! in the world file are read instead of generated and meshed, the
//! terrain shows exactly what a live one shows, and a chunk an edit
//! touched (in this run or before it) is built live again.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::Duration;

use bevy::mesh::{Indices, Mesh, Mesh3d, VertexAttributeValues};
use bevy::prelude::*;
use isoterra::kind::{Document, NewWorld, WorldKind};
use isoterra::store::WorldFile;
use isoterra_bevy::prelude::*;

use crate::common::app;

fn status(app: &App, terrain: Entity) -> Option<TerrainStatus> {
    app.world().get::<TerrainStatus>(terrain).copied()
}

fn settle(app: &mut App, terrain: Entity) -> TerrainStatus {
    for _ in 0..20_000 {
        app.update();
        if let Some(s) = status(app, terrain).filter(|s| s.settled && s.shown > 0) {
            return s;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    panic!("the terrain did not settle: {:?}", status(app, terrain));
}

/// Every attribute the plugin sets, and the indices, as bytes.
fn mesh_bytes(m: &Mesh) -> Vec<u8> {
    let mut out = Vec::new();
    for (_, values) in m.attributes() {
        let floats: Vec<f32> = match values {
            VertexAttributeValues::Float32(v) => v.clone(),
            VertexAttributeValues::Float32x2(v) => v.iter().flatten().copied().collect(),
            VertexAttributeValues::Float32x3(v) => v.iter().flatten().copied().collect(),
            VertexAttributeValues::Float32x4(v) => v.iter().flatten().copied().collect(),
            VertexAttributeValues::Uint32(v) => v.iter().map(|&u| f32::from_bits(u)).collect(),
            other => panic!("unexpected attribute {other:?}"),
        };
        for f in floats {
            out.extend_from_slice(&f.to_bits().to_le_bytes());
        }
    }
    if let Some(Indices::U32(i)) = m.indices() {
        for v in i {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    out
}

/// coordinate -> (LOD, mesh bytes, has a collider).
type Snapshot = BTreeMap<[i32; 3], (u8, Vec<u8>, bool)>;

fn snapshot(app: &mut App) -> Snapshot {
    let world = app.world_mut();
    let mut q = world.query::<(&ChildOf, &Mesh3d, &TerrainMesh)>();
    let found: Vec<(Entity, Handle<Mesh>)> = q
        .iter(world)
        .map(|(p, m, _)| (p.parent(), m.0.clone()))
        .collect();
    let meshes = world.resource::<Assets<Mesh>>();
    let mut bytes: HashMap<Entity, Vec<u8>> = HashMap::new();
    for (parent, h) in found {
        bytes.insert(parent, mesh_bytes(meshes.get(&h).unwrap()));
    }
    let mut colliders = world.query::<(&avian3d::prelude::Collider, &ChildOf)>();
    let with_child_collider: Vec<Entity> = colliders.iter(world).map(|(_, p)| p.parent()).collect();
    let mut q = world.query::<(Entity, &TerrainChunk, Option<&avian3d::prelude::Collider>)>();
    q.iter(world)
        .map(|(e, c, col)| {
            let collider = col.is_some() || with_child_collider.contains(&e);
            (
                c.coord,
                (c.lod, bytes.remove(&e).unwrap_or_default(), collider),
            )
        })
        .collect()
}

/// Bakes the region `lo..hi` of the world at `path` at `lods` into the
/// file, as `isoterra bake` does; returns the rows written.
fn bake(path: &Path, lo: &[f32], hi: &[f32], lods: &[u8]) -> usize {
    let doc = Document::open(path).unwrap();
    let rows: Vec<_> = lods
        .iter()
        .flat_map(|&lod| doc.bake_rows(lo, hi, lod).unwrap())
        .collect();
    doc.close().unwrap();
    let mut file = WorldFile::open(path).unwrap();
    file.put_baked(&rows).unwrap();
    rows.len()
}

/// Runs a terrain of the file at `path` around one viewer and returns its
/// settled status and snapshot.
fn show(
    path: &Path,
    baked: impl Into<Option<bool>>,
    viewer: Transform,
    distance: f32,
) -> (App, Entity, TerrainStatus, Snapshot) {
    let mut app = app();
    let mut t = Terrain::open(path);
    if let Some(b) = baked.into() {
        t = t.with_baked(b);
    }
    if path.ends_with("baked.isoterra") {
        // Most of the planet at LOD 0.
        t = t.with_lod_rings(vec![96.0, 192.0]);
    }
    let terrain = app.world_mut().spawn(t).id();
    app.world_mut()
        .spawn((viewer, TerrainViewer::new(distance)));
    let s = settle(&mut app, terrain);
    let snap = snapshot(&mut app);
    (app, terrain, s, snap)
}

fn assert_same(a: &Snapshot, b: &Snapshot) {
    assert_eq!(
        a.keys().collect::<Vec<_>>(),
        b.keys().collect::<Vec<_>>(),
        "the same chunks"
    );
    for (coord, x) in a {
        assert!(x == &b[coord], "chunk {coord:?} differs");
    }
}

#[test]
fn a_baked_voxel_world_shows_its_rows_exactly_as_live_builds_and_edits_go_live() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("baked.isoterra");
    Document::create(
        &path,
        &NewWorld::new(WorldKind::Voxel).with_preset("planet"),
    )
    .unwrap()
    .close()
    .unwrap();
    let viewer = Transform::from_xyz(0.0, 70.0, 0.0);
    let rows = bake(&path, &[-96.0; 3], &[96.0; 3], &[0]);
    assert!(rows > 100, "{rows} rows");

    let (_live_app, _, live_status, live) = show(&path, false, viewer, 120.0);
    assert_eq!(live_status.from_baked, 0);
    let (mut app, terrain, s, from_rows) = show(&path, None, viewer, 120.0);
    let ready = app.world().get::<TerrainReady>(terrain).unwrap().clone();
    assert_eq!(ready.baked_rows(), rows);
    assert!(
        s.from_baked >= 8 && s.from_baked < s.shown,
        "{s:?}: LOD 0 chunks come from rows, the others are built live"
    );
    assert!(from_rows.values().all(|(_, _, collider)| *collider));
    assert_same(&live, &from_rows);

    // A dig: the chunks it touched are built live from now on.
    let hit = ready
        .raycast(Vec3::new(3.0, 80.0, 5.0), Vec3::NEG_Y, 100.0)
        .expect("the ray meets the planet");
    app.world_mut()
        .write_message(TerrainEdit::dab(terrain, "dig", 5.0, hit.point));
    let after = settle_after_edit(&mut app, terrain);
    assert!(after.from_baked < s.from_baked, "{after:?} after {s:?}");
    assert!(
        s.from_baked - after.from_baked >= changed(&from_rows, &snapshot(&mut app)),
        "every changed chunk left its row"
    );
    drop(ready);
    drop(app);

    // Opened again: the rows whose inputs the dig changed are stale (their
    // stamps cover every stored chunk they are made from, so a few more
    // than the chunks rebuilt above), the others still count, and it all
    // equals a live build.
    let (reopened_app, t, reopened, again) = show(&path, true, viewer, 120.0);
    let (_live_app, _, _, live_again) = show(&path, false, viewer, 120.0);
    assert!(
        reopened.from_baked > 0 && reopened.from_baked <= after.from_baked,
        "{reopened:?} after {after:?}"
    );
    let current = reopened_app
        .world()
        .get::<TerrainReady>(t)
        .unwrap()
        .baked_rows();
    assert!(current < rows, "{current} of {rows} rows still current");
    assert_same(&live_again, &again);
}

#[test]
fn a_baked_heightmap_shows_its_rows_at_every_lod_exactly_as_live_builds() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("land.isoterra");
    Document::create(&path, &NewWorld::new(WorldKind::Heightmap))
        .unwrap()
        .close()
        .unwrap();
    let viewer = Transform::from_xyz(10.0, 60.0, 10.0);
    let rows = bake(&path, &[-640.0; 2], &[640.0; 2], &[0, 1, 2, 3]);
    let (_l, _, _, live) = show(&path, false, viewer, 400.0);
    let (_b, _, s, from_rows) = show(&path, true, viewer, 400.0);
    // By default a heightmap builds its chunks live (cheaper than reading
    // them); a voxel world reads its rows.
    let (_d, _, by_default, _) = show(&path, None, viewer, 400.0);
    assert_eq!(by_default.from_baked, 0);
    assert!(rows > 0);
    let lods: std::collections::BTreeSet<u8> = live.values().map(|(l, _, _)| *l).collect();
    assert!(lods.len() >= 2, "mixed LOD expected: {lods:?}");
    assert!(s.from_baked * 3 > s.shown, "{s:?}");
    assert!(from_rows.values().all(|(_, _, collider)| *collider));
    assert_same(&live, &from_rows);
}

fn settle_after_edit(app: &mut App, terrain: Entity) -> TerrainStatus {
    // The edit is pending from the frame it is sent in.
    for _ in 0..5_000 {
        app.update();
        let done = app
            .world_mut()
            .resource_mut::<Messages<TerrainEdited>>()
            .drain()
            .next();
        if let Some(e) = done {
            assert!(matches!(e.result, Ok(Some(_))), "{e:?}");
            return settle(app, terrain);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    panic!("the edit was not committed");
}

fn changed(a: &Snapshot, b: &Snapshot) -> usize {
    a.iter().filter(|(c, x)| b.get(*c) != Some(*x)).count()
}
