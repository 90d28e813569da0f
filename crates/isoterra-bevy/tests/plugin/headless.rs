//! The plugin in a headless Bevy app (MinimalPlugins, no window, no GPU):
//! chunks stream in around the viewer; their meshes close at mixed LOD; a
//! dig changes exactly the chunks it touched, meshes and colliders both;
//! undo gives the meshes back byte for byte; edits are in the world file
//! after the app is gone; bodies rest on the ground and fall into what is
//! dug under them.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use bevy::mesh::{Indices, Mesh, Mesh2d, Mesh3d, VertexAttributeValues};
use bevy::prelude::*;
use isoterra::kind::{Document, NewWorld, StrokeSpec, WorldKind};
use isoterra_bevy::prelude::*;

use crate::common::{app, run_until};

fn status(app: &mut App, terrain: Entity) -> Option<TerrainStatus> {
    app.world().get::<TerrainStatus>(terrain).copied()
}

/// Runs until the terrain shows chunks and is settled.
fn settle(app: &mut App, terrain: Entity) -> usize {
    let mut n = 0;
    run_until(app, 20_000, |app| {
        n += 1;
        if n % 2000 == 0 {
            eprintln!("status after {n} frames: {:?}", status(app, terrain));
        }
        status(app, terrain).is_some_and(|s| s.settled && s.shown > 0)
    })
}

/// Every chunk: coordinate -> (chunk, its meshes' bytes).
type Snapshot = BTreeMap<[i32; 3], (TerrainChunk, Vec<Vec<u8>>)>;

fn mesh_bytes(m: &Mesh) -> Vec<u8> {
    let mut out = Vec::new();
    for attr in [Mesh::ATTRIBUTE_POSITION, Mesh::ATTRIBUTE_NORMAL] {
        if let Some(VertexAttributeValues::Float32x3(p)) = m.attribute(attr) {
            for v in p {
                for c in v {
                    out.extend_from_slice(&c.to_le_bytes());
                }
            }
        }
    }
    if let Some(VertexAttributeValues::Uint32(ids)) = m.attribute(isoterra_bevy::ATTRIBUTE_MATERIAL)
    {
        for v in ids {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    if let Some(Indices::U32(i)) = m.indices() {
        for v in i {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    out
}

fn snapshot(app: &mut App) -> Snapshot {
    let world = app.world_mut();
    let mut parts: HashMap<Entity, Vec<Vec<u8>>> = HashMap::new();
    let mut q = world.query::<(&ChildOf, Option<&Mesh3d>, Option<&Mesh2d>, &TerrainMesh)>();
    let meshes = world.resource::<Assets<Mesh>>();
    let mut found = Vec::new();
    for (parent, m3, m2, _) in q.iter(world) {
        let handle = m3.map(|m| m.0.clone()).or(m2.map(|m| m.0.clone())).unwrap();
        found.push((parent.parent(), handle));
    }
    for (parent, handle) in found {
        let mesh = meshes.get(&handle).expect("a chunk mesh asset");
        parts.entry(parent).or_default().push(mesh_bytes(mesh));
    }
    let mut q = world.query::<(Entity, &TerrainChunk)>();
    q.iter(world)
        .map(|(e, c)| {
            let mut p = parts.remove(&e).unwrap_or_default();
            p.sort();
            (c.coord, (c.clone(), p))
        })
        .collect()
}

/// Every chunk's triangles in the terrain's space.
fn triangles(app: &mut App) -> Vec<[[f32; 3]; 3]> {
    let world = app.world_mut();
    let mut q = world.query::<(&Mesh3d, &TerrainMesh)>();
    let handles: Vec<_> = q.iter(world).map(|(m, _)| m.0.clone()).collect();
    let meshes = world.resource::<Assets<Mesh>>();
    let mut out = Vec::new();
    for h in handles {
        let m = meshes.get(&h).unwrap();
        let Some(VertexAttributeValues::Float32x3(p)) = m.attribute(Mesh::ATTRIBUTE_POSITION)
        else {
            panic!("positions expected");
        };
        let Some(Indices::U32(idx)) = m.indices() else {
            panic!("u32 indices expected");
        };
        for t in idx.chunks_exact(3) {
            out.push([p[t[0] as usize], p[t[1] as usize], p[t[2] as usize]]);
        }
    }
    out
}

/// Edges used by exactly one triangle (welding vertices by exact position)
/// and edges used by more than two.
fn open_and_nonmanifold_edges(tris: &[[[f32; 3]; 3]]) -> (usize, usize) {
    let key = |p: [f32; 3]| p.map(f32::to_bits);
    let mut edges: HashMap<([u32; 3], [u32; 3]), usize> = HashMap::new();
    for t in tris {
        for k in 0..3 {
            let (a, b) = (key(t[k]), key(t[(k + 1) % 3]));
            if a == b {
                continue;
            }
            let e = if a < b { (a, b) } else { (b, a) };
            *edges.entry(e).or_default() += 1;
        }
    }
    let open = edges.values().filter(|&&n| n == 1).count();
    let bad = edges.values().filter(|&&n| n > 2).count();
    (open, bad)
}

fn spawn_terrain(app: &mut App, path: &Path, new: NewWorld) -> Entity {
    app.world_mut()
        .spawn(Terrain::open_or_create(path, new))
        .id()
}

fn edited(app: &mut App) -> Vec<TerrainEdited> {
    app.world_mut()
        .resource_mut::<Messages<TerrainEdited>>()
        .drain()
        .collect()
}

/// Waits for the next committed edit and returns it.
fn wait_edit(app: &mut App) -> TerrainEdited {
    let mut got = None;
    run_until(app, 5_000, |app| {
        got = edited(app).into_iter().next();
        got.is_some()
    });
    got.unwrap()
}

#[test]
fn voxel_chunks_stream_around_the_viewer_and_close_at_mixed_lod() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app();
    // A planet (radius 48 with relief) seen from its side: chunks near the
    // viewer at LOD 0, the far side coarser.
    let terrain = app
        .world_mut()
        .spawn(
            Terrain::open_or_create(
                dir.path().join("planet.isoterra"),
                NewWorld::new(WorldKind::Voxel).with_preset("planet"),
            )
            .with_lod_rings(vec![48.0, 96.0]),
        )
        .id();
    app.world_mut().spawn((
        Transform::from_xyz(70.0, 0.0, 0.0).looking_at(Vec3::ZERO, Vec3::Y),
        TerrainViewer::new(240.0),
    ));
    settle(&mut app, terrain);
    let snap = snapshot(&mut app);
    let lods: std::collections::BTreeSet<u8> = snap.values().map(|(c, _)| c.lod).collect();
    assert!(lods.len() >= 2, "mixed LOD expected, got {lods:?}");
    assert!(snap.values().all(|(c, p)| c.triangles > 0 && !p.is_empty()));
    // Every chunk has a static collider.
    let world = app.world_mut();
    let mut q = world.query::<(&TerrainChunk, &avian3d::prelude::Collider)>();
    assert_eq!(q.iter(world).count(), snap.len());
    // The planet is a closed surface: no open edge anywhere, LOD seams
    // included.
    let tris = triangles(&mut app);
    assert!(tris.len() > 1000);
    assert_eq!(open_and_nonmanifold_edges(&tris), (0, 0));
}

#[test]
fn a_dig_changes_exactly_the_chunks_it_touched_and_undo_gives_the_meshes_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dig.isoterra");
    let mut app = app();
    let terrain = spawn_terrain(
        &mut app,
        &path,
        NewWorld::new(WorldKind::Voxel).with_preset("planet"),
    );
    app.world_mut().spawn((
        Transform::from_xyz(0.0, 70.0, 0.0),
        TerrainViewer::new(120.0),
    ));
    settle(&mut app, terrain);
    let before = snapshot(&mut app);
    let ready = app.world().get::<TerrainReady>(terrain).unwrap().clone();
    let hash_before = ready.content_hash();

    // Dig where a ray from above meets the planet.
    let hit = ready
        .raycast(Vec3::new(3.0, 80.0, 5.0), Vec3::NEG_Y, 100.0)
        .expect("the ray meets the planet");
    assert!(hit.point.y > 30.0 && hit.point.y < 70.0, "{hit:?}");
    assert!(ready.is_solid(hit.point - Vec3::Y));
    assert!(!ready.is_solid(hit.point + Vec3::Y * 2.0));
    let r = 5.0;
    app.world_mut()
        .write_message(TerrainEdit::dab(terrain, "dig", r, hit.point));
    let e = wait_edit(&mut app);
    assert_eq!(e.op, EditOp::Stroke);
    assert!(matches!(e.result, Ok(Some(_))), "{e:?}");
    assert!(e.rebuilt_chunks >= 1);
    settle(&mut app, terrain);
    let after = snapshot(&mut app);
    assert!(!ready.is_solid(hit.point - Vec3::Y));

    // Only chunks whose cells come within the brush (plus the normal
    // stencil) changed; every changed one has a newer version.
    let n = 32.0;
    let mut changed = 0;
    for (coord, (chunk, bytes)) in &after {
        let (old_chunk, old_bytes) = &before[coord];
        if bytes != old_bytes {
            changed += 1;
            assert!(chunk.version > old_chunk.version);
            let lo = Vec3::new(coord[0] as f32, coord[1] as f32, coord[2] as f32) * n;
            let nearest = hit.point.clamp(lo, lo + Vec3::splat(n));
            assert!(
                nearest.distance(hit.point) <= r as f32 + 2.0,
                "chunk {coord:?} changed but is away from the dig"
            );
        } else {
            assert_eq!(
                chunk.version, old_chunk.version,
                "chunk {coord:?} rebuilt for nothing"
            );
        }
    }
    assert!(changed >= 1);
    assert_eq!(before.len(), after.len());

    // Undo: every mesh byte as before, and the content too.
    app.world_mut().write_message(TerrainUndo { terrain });
    let e = wait_edit(&mut app);
    assert_eq!(e.op, EditOp::Undo);
    settle(&mut app, terrain);
    let undone = snapshot(&mut app);
    for (coord, (_, bytes)) in &undone {
        assert_eq!(
            bytes, &before[coord].1,
            "chunk {coord:?} differs after undo"
        );
    }
    assert_eq!(ready.content_hash(), hash_before);

    // Redo, then the app goes away: the stroke is in the file.
    app.world_mut().write_message(TerrainRedo { terrain });
    assert_eq!(wait_edit(&mut app).op, EditOp::Redo);
    let hash_after = ready.content_hash();
    assert_ne!(hash_after, hash_before);
    drop(ready);
    drop(app);
    let doc = Document::open(&path).unwrap();
    assert_eq!(doc.content_hash(), hash_after);
    assert_eq!(doc.history().strokes, 1);
}

#[test]
fn edits_queued_just_before_exit_are_committed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("exit.isoterra");
    let mut app = app();
    let terrain = app
        .world_mut()
        .spawn(
            Terrain::open_or_create(&path, NewWorld::new(WorldKind::Side2d).with_size([128, 64]))
                .with_detached_islands(false),
        )
        .id();
    settle(&mut app, terrain);
    for k in 0..5 {
        app.world_mut().write_message(TerrainEdit::dab(
            terrain,
            "dig",
            4.0,
            Vec3::new(20.0 + 12.0 * k as f32, 40.0, 0.0),
        ));
    }
    // One frame queues them; the app is dropped at once.
    app.update();
    drop(app);
    let doc = Document::open(&path).unwrap();
    assert_eq!(doc.history().strokes, 5);
}

#[test]
fn side2d_chunks_have_material_meshes_and_polyline_colliders() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app();
    let terrain = spawn_terrain(
        &mut app,
        &dir.path().join("side.isoterra"),
        NewWorld::new(WorldKind::Side2d)
            .with_size([128, 64])
            .with_preset("caves"),
    );
    settle(&mut app, terrain);
    let before = snapshot(&mut app);
    // 128x64 cells in chunks of 32: 4x2 chunks, each with ground.
    assert_eq!(before.len(), 8);
    let world = app.world_mut();
    let mut q = world.query::<(&TerrainMesh, &Mesh2d)>();
    let materials: std::collections::BTreeSet<u8> =
        q.iter(world).filter_map(|(m, _)| m.material()).collect();
    assert!(materials.len() >= 2, "materials {materials:?}");
    let mut q = world.query::<(&TerrainChunk, &avian2d::prelude::Collider)>();
    assert_eq!(q.iter(world).count(), 8);

    // A dig inside chunk (1, 1) changes that chunk only.
    let ready = app.world().get::<TerrainReady>(terrain).unwrap().clone();
    let at = Vec3::new(48.0, 48.0, 0.0);
    app.world_mut()
        .write_message(TerrainEdit::dab(terrain, "dig", 6.0, at));
    let e = wait_edit(&mut app);
    assert!(e.result.is_ok(), "{e:?}");
    settle(&mut app, terrain);
    let after = snapshot(&mut app);
    let changed: Vec<[i32; 3]> = after
        .iter()
        .filter(|(c, (_, b))| before.get(*c).map(|x| &x.1) != Some(b))
        .map(|(c, _)| *c)
        .collect();
    if e.result.unwrap().is_some() {
        assert_eq!(changed, vec![[1, 1, 0]]);
        assert!(!ready.is_solid(at));
    } else {
        assert!(changed.is_empty());
    }
    let hit = ready
        .raycast(Vec3::new(10.0, 120.0, 0.0), Vec3::NEG_Y, 200.0)
        .expect("the ground under the sky");
    assert!(hit.point.y < 120.0);
}

#[test]
fn map_chunks_show_ground_and_water() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app();
    let terrain = spawn_terrain(
        &mut app,
        &dir.path().join("map.isoterra"),
        NewWorld::new(WorldKind::Map).with_size([128, 128]),
    );
    settle(&mut app, terrain);
    let snap = snapshot(&mut app);
    assert_eq!(snap.len(), 4);
    let world = app.world_mut();
    let mut q = world.query::<&TerrainMesh>();
    assert!(
        q.iter(world).any(|m| m.is_water()),
        "the island map has water"
    );
    assert!(q.iter(world).any(|m| !m.is_water()));
}

#[test]
fn a_terrain_that_cannot_open_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("not-a-world.isoterra");
    std::fs::write(&bad, b"hello").unwrap();
    let mut app = app();
    let terrain = app.world_mut().spawn(Terrain::open(&bad)).id();
    app.update();
    let failed: Vec<TerrainFailed> = app
        .world_mut()
        .resource_mut::<Messages<TerrainFailed>>()
        .drain()
        .collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].terrain, terrain);
    assert!(app.world().get::<TerrainReady>(terrain).is_none());
    // An edit sent to it is refused, not lost silently.
    app.world_mut()
        .write_message(TerrainEdit::dab(terrain, "dig", 2.0, Vec3::ZERO));
    app.update();
    app.update();
    let e = edited(&mut app);
    assert_eq!(e.len(), 1);
    assert!(e[0].result.is_err());
    // The file is untouched.
    assert_eq!(std::fs::read(&bad).unwrap(), b"hello");
}

#[test]
fn a_refused_stroke_is_reported_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app();
    let terrain = spawn_terrain(
        &mut app,
        &dir.path().join("refuse.isoterra"),
        NewWorld::new(WorldKind::Side2d).with_size([64, 32]),
    );
    settle(&mut app, terrain);
    let ready = app.world().get::<TerrainReady>(terrain).unwrap().clone();
    let hash = ready.content_hash();
    for spec in [
        StrokeSpec::new("teleport", 3.0),
        StrokeSpec::new("dig", f64::NAN),
        StrokeSpec::new("dig", 1.0e9),
    ] {
        app.world_mut()
            .write_message(TerrainEdit::new(terrain, spec, vec![[10.0, 10.0, 0.0]]));
        let e = wait_edit(&mut app);
        assert!(e.result.is_err(), "{e:?}");
    }
    assert_eq!(ready.content_hash(), hash);
    assert_eq!(ready.history().strokes, 0);
}

// ----- the live link to the editor -----

/// A browser-like client of the editor at `port`: connected, welcomed.
fn editor_client(port: u16) -> tungstenite::WebSocket<std::net::TcpStream> {
    use tungstenite::client::IntoClientRequest;
    let mut req = format!("ws://127.0.0.1:{port}/ws")
        .into_client_request()
        .unwrap();
    req.headers_mut().insert(
        "Origin",
        format!("http://127.0.0.1:{port}").parse().unwrap(),
    );
    let stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let (mut ws, _) = tungstenite::client(req, stream).unwrap();
    let welcome = next_text(&mut ws, "welcome");
    assert_eq!(welcome["kind"], "side2d");
    ws
}

/// Reads until a JSON message of `ty` comes (mesh frames are skipped).
fn next_text(ws: &mut tungstenite::WebSocket<std::net::TcpStream>, ty: &str) -> serde_json::Value {
    loop {
        if let tungstenite::Message::Text(t) = ws.read().unwrap() {
            let v: serde_json::Value = serde_json::from_str(t.as_str()).unwrap();
            assert_ne!(v["type"], "error", "{v}");
            if v["type"] == ty {
                return v;
            }
        }
    }
}

fn send_json(ws: &mut tungstenite::WebSocket<std::net::TcpStream>, v: serde_json::Value) {
    ws.send(tungstenite::Message::text(v.to_string())).unwrap();
}

/// Runs until a [`TerrainEdited`] comes, counting the frames it took.
fn wait_edit_frames(app: &mut App) -> (TerrainEdited, usize) {
    let mut got = None;
    let frames = run_until(app, 5_000, |app| {
        got = edited(app).into_iter().next();
        got.is_some()
    });
    (got.unwrap(), frames)
}

#[test]
fn an_editor_link_shows_browser_strokes_and_has_the_editor_commit_the_games() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("linked.isoterra");
    Document::create(
        &path,
        &NewWorld::new(WorldKind::Side2d).with_size([128, 64]),
    )
    .unwrap()
    .close()
    .unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt
        .block_on(isoterra_editor::serve(
            isoterra_editor::EditorOptions::new(&path).with_port(0),
        ))
        .unwrap();
    let port = server.addr().port();

    let mut app = app();
    let terrain = app
        .world_mut()
        .spawn((Terrain::open(&path), EditorLink::local(port)))
        .id();
    settle(&mut app, terrain);
    run_until(&mut app, 5_000, |app| {
        app.world()
            .get::<EditorLink>(terrain)
            .unwrap()
            .is_connected()
    });
    let ready = app.world().get::<TerrainReady>(terrain).unwrap().clone();
    let fresh = |path: &Path| {
        let d = Document::open(path).unwrap();
        (d.content_hash(), d.history().strokes)
    };
    let before = snapshot(&mut app);
    let hash_before = ready.content_hash();

    // A stroke drawn in the browser shows up in the game.
    let mut browser = editor_client(port);
    send_json(
        &mut browser,
        serde_json::json!({"type": "stroke_begin", "stroke": "b1", "tool": "fill",
                           "radius": 4.0, "strength": 1.0}),
    );
    for x in [40.0, 44.0, 48.0] {
        send_json(
            &mut browser,
            serde_json::json!({"type": "dab", "stroke": "b1", "at": [x, 56.0, 0.0]}),
        );
    }
    send_json(
        &mut browser,
        serde_json::json!({"type": "stroke_end", "stroke": "b1"}),
    );
    let ack = next_text(&mut browser, "ack");
    assert!(ack["id"].is_i64(), "{ack}");
    let (e, frames) = wait_edit_frames(&mut app);
    eprintln!("the browser's stroke showed in the game {frames} frames after its ack");
    assert_eq!(e.op, EditOp::Linked);
    assert!(e.result.is_ok() && e.rebuilt_chunks >= 1, "{e:?}");
    settle(&mut app, terrain);
    let after_browser = snapshot(&mut app);
    assert_ne!(after_browser, before);
    for (coord, (chunk, bytes)) in &after_browser {
        if bytes != &before[coord].1 {
            // Only chunks near the stroke (x 36..52, y 52..60; chunks of 32).
            assert!(coord[0] == 1 && coord[1] == 1, "chunk {coord:?} changed");
            assert!(chunk.version > before[coord].0.version);
        }
    }
    assert_eq!(
        (ready.content_hash(), ready.history().strokes),
        fresh(&path)
    );

    // A stroke made in the game is committed by the editor: the browser
    // hears of it and the file has it.
    app.world_mut().write_message(TerrainEdit::dab(
        terrain,
        "fill",
        4.0,
        Vec3::new(96.0, 56.0, 0.0),
    ));
    let e = wait_edit(&mut app);
    assert_eq!(e.op, EditOp::Stroke);
    assert!(matches!(e.result, Ok(Some(_))), "{e:?}");
    let h = next_text(&mut browser, "history");
    assert_eq!(h["action"], "stroke");
    assert_eq!(h["strokes"], 2);
    settle(&mut app, terrain);
    assert_eq!(
        (ready.content_hash(), ready.history().strokes),
        fresh(&path)
    );

    // The browser undoes the game's stroke, the game undoes the browser's:
    // one history, and the meshes are those of the start byte for byte.
    send_json(&mut browser, serde_json::json!({"type": "undo"}));
    let e = wait_edit(&mut app);
    assert_eq!(e.op, EditOp::Linked);
    settle(&mut app, terrain);
    assert_eq!(snapshot(&mut app).len(), after_browser.len());
    app.world_mut().write_message(TerrainUndo { terrain });
    let e = wait_edit(&mut app);
    assert_eq!(e.op, EditOp::Undo);
    assert!(matches!(e.result, Ok(Some(_))), "{e:?}");
    settle(&mut app, terrain);
    let undone = snapshot(&mut app);
    for (coord, (_, bytes)) in &undone {
        assert_eq!(bytes, &before[coord].1, "chunk {coord:?} after both undos");
    }
    assert_eq!(ready.content_hash(), hash_before);
    assert_eq!(fresh(&path), (hash_before, 0));

    drop(ready);
    drop(app);
    rt.block_on(server.shutdown());
}

#[test]
fn a_linked_terrain_without_its_editor_refuses_edits_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("alone.isoterra");
    let mut app = app();
    // Nothing listens on port 9 of this machine.
    let terrain = app
        .world_mut()
        .spawn((
            Terrain::open_or_create(&path, NewWorld::new(WorldKind::Side2d).with_size([64, 32])),
            EditorLink::local(9),
        ))
        .id();
    settle(&mut app, terrain);
    let ready = app.world().get::<TerrainReady>(terrain).unwrap().clone();
    let hash = ready.content_hash();
    run_until(&mut app, 5_000, |app| {
        app.world()
            .get::<EditorLink>(terrain)
            .unwrap()
            .last_error()
            .is_some()
    });
    let link = app.world().get::<EditorLink>(terrain).unwrap().clone();
    assert!(!link.is_connected());
    assert!(
        link.last_error()
            .unwrap()
            .contains("cannot reach the editor"),
        "{:?}",
        link.last_error()
    );
    app.world_mut().write_message(TerrainEdit::dab(
        terrain,
        "dig",
        4.0,
        Vec3::new(32.0, 8.0, 0.0),
    ));
    let e = wait_edit(&mut app);
    assert_eq!(e.op, EditOp::Stroke);
    let err = e.result.unwrap_err();
    assert!(err.contains("not connected"), "{err}");
    assert_eq!(ready.content_hash(), hash, "nothing changed");
}

#[test]
fn map_queries_see_down_from_cliffs_and_route_around_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app();
    let terrain = spawn_terrain(
        &mut app,
        &dir.path().join("map.isoterra"),
        NewWorld::new(WorldKind::Map)
            .with_size([48, 48])
            .with_preset("blank"),
    );
    settle(&mut app, terrain);
    // A plateau one level up in the middle.
    app.world_mut().write_message(TerrainEdit::new(
        terrain,
        StrokeSpec::new("cliff-up", 6.0),
        vec![[24.0, 0.0, 24.0]],
    ));
    let e = wait_edit(&mut app);
    assert!(matches!(e.result, Ok(Some(_))), "{e:?}");
    let ready = app.world().get::<TerrainReady>(terrain).unwrap().clone();
    let (low, high) = (Vec3::new(6.5, 0.0, 24.5), Vec3::new(24.5, 0.0, 24.5));
    assert_eq!(ready.line_of_sight(high, low), Some(true), "down is seen");
    assert_eq!(ready.line_of_sight(low, high), Some(false), "up is not");
    assert_eq!(
        ready.line_of_sight(low, Vec3::new(6.5, 0.0, 40.5)),
        Some(true)
    );
    let p = ready.pathing_at(low).unwrap();
    assert!(p.walk && p.fly && p.build && !p.water, "{p:?}");
    assert_eq!(ready.pathing_at(Vec3::new(-1.0, 0.0, 4.0)), None);

    // West to east: ground units go around the plateau, flyers straight.
    let (a, b) = (low, Vec3::new(42.5, 0.0, 24.5));
    let route = ready.find_path(a, b, PathUnit::Ground).unwrap();
    let xz = |p: &Vec3| [p.x, p.z];
    assert_eq!(route.first().map(xz), Some(xz(&a)));
    assert_eq!(route.last().map(xz), Some(xz(&b)));
    let length = |r: &[Vec3]| -> f32 {
        r.windows(2)
            .map(|p| Vec2::new(p[1].x - p[0].x, p[1].z - p[0].z).length())
            .sum()
    };
    assert!(
        length(&route) > 36.5,
        "around the plateau, not across: {} world units",
        length(&route)
    );
    for p in &route {
        assert!(ready.pathing_at(*p).unwrap().walk, "{p} is not walkable");
        assert!(ready.line_of_sight(*p, high).is_some());
    }
    let air = ready.find_path(a, b, PathUnit::Air).unwrap();
    assert_eq!(air.len(), 37, "straight over it");
    assert!((length(&air) - 36.0).abs() < 1e-4);
    let ground = route[0].y;
    assert!(
        air.iter().any(|p| p.y > ground + 0.5),
        "over the plateau, on its top"
    );
    assert_eq!(
        ready.find_path(a, Vec3::new(100.0, 0.0, 0.0), PathUnit::Ground),
        None
    );
    // Undo flattens the map: the ground route is straight again.
    app.world_mut().write_message(TerrainUndo { terrain });
    wait_edit(&mut app);
    let flat = ready.find_path(a, b, PathUnit::Ground).unwrap();
    assert!((length(&flat) - 36.0).abs() < 1e-4, "straight once flat");
}
