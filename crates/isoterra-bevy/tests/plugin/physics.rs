//! Bodies on the plugin's colliders (avian, headless): a ball rests on a
//! heightmap where the render mesh is (so the heightfield's row and column
//! order is right) and falls into a crater dug under it; a ball rests on a
//! side2d ground and falls through a hole dug under it.

use bevy::ecs::system::RunSystemOnce;
use bevy::prelude::*;
use isoterra::kind::{NewWorld, StrokeSpec, WorldKind};
use isoterra_bevy::prelude::*;

use crate::common::{plugin_app as app, run_until};

fn settled(app: &App, terrain: Entity) -> bool {
    app.world()
        .get::<TerrainStatus>(terrain)
        .is_some_and(|s| s.settled && s.shown > 0)
}

fn wait_edit(app: &mut App) -> TerrainEdited {
    let mut got = None;
    run_until(app, 5_000, |app| {
        got = app
            .world_mut()
            .resource_mut::<Messages<TerrainEdited>>()
            .drain()
            .next();
        got.is_some()
    });
    got.unwrap()
}

fn frames(app: &mut App, n: usize) {
    for _ in 0..n {
        app.update();
    }
}

#[test]
fn a_ball_rests_on_the_heightmap_and_falls_into_a_crater() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app();
    app.add_plugins(avian3d::prelude::PhysicsPlugins::default());
    app.finish();
    app.cleanup();
    let terrain = app
        .world_mut()
        .spawn(Terrain::open_or_create(
            dir.path().join("hills.isoterra"),
            NewWorld::new(WorldKind::Heightmap).with_preset("mountains"),
        ))
        .id();
    app.world_mut().spawn((
        Transform::from_xyz(0.0, 50.0, 0.0),
        TerrainViewer::new(150.0),
    ));
    run_until(&mut app, 20_000, |app| settled(app, terrain));
    let ready = app.world().get::<TerrainReady>(terrain).unwrap().clone();

    // A point where swapping x and z would give another height: a
    // heightfield read in the wrong order would hold the ball elsewhere.
    let (x, z) = (0..40)
        .map(|k| (10.0 + k as f32 * 1.37, 30.0 - k as f32 * 0.91))
        .find(|&(x, z)| {
            let a = ready.height_at(x, z).unwrap();
            let b = ready.height_at(z, x).unwrap();
            (a - b).abs() > 2.0
        })
        .expect("an asymmetric spot");
    let ground = ready.height_at(x, z).unwrap();
    let radius = 0.5;
    let ball = app
        .world_mut()
        .spawn((
            Transform::from_xyz(x, ground + 3.0, z),
            avian3d::prelude::RigidBody::Dynamic,
            avian3d::prelude::Collider::sphere(radius),
            avian3d::prelude::LinearDamping(2.0),
            avian3d::prelude::AngularDamping(2.0),
        ))
        .id();
    // The heightfield colliders agree with the render mesh: at the nodes
    // near the viewer (LOD 0), a ray down meets the collider at the node's
    // height. Read in the wrong row/column order they would not.
    let probes: Vec<(f32, f32, f32)> = (-20..=20)
        .step_by(5)
        .flat_map(|x| (-20..=20).step_by(5).map(move |z| (x as f32, z as f32)))
        .map(|(x, z)| (x, z, ready.height_at(x, z).unwrap()))
        .collect();
    app.update();
    let hits: Vec<Option<f32>> = app
        .world_mut()
        .run_system_once(move |q: avian3d::prelude::SpatialQuery| {
            probes
                .iter()
                .map(|&(x, z, _)| {
                    q.cast_ray(
                        Vec3::new(x, 500.0, z),
                        Dir3::NEG_Y,
                        1000.0,
                        true,
                        &avian3d::prelude::SpatialQueryFilter::default(),
                    )
                    .map(|h| 500.0 - h.distance)
                })
                .collect::<Vec<_>>()
        })
        .unwrap();
    let probes: Vec<(f32, f32, f32)> = (-20..=20)
        .step_by(5)
        .flat_map(|x| (-20..=20).step_by(5).map(move |z| (x as f32, z as f32)))
        .map(|(x, z)| (x, z, ready.height_at(x, z).unwrap()))
        .collect();
    for (&(x, z, h), hit) in probes.iter().zip(&hits) {
        let y = hit.unwrap_or_else(|| panic!("no collider under ({x}, {z})"));
        assert!(
            (y - h).abs() < 1e-2,
            "collider at ({x}, {z}) is {y}, the mesh {h}"
        );
    }

    frames(&mut app, 240);
    let rest = app.world().get::<Transform>(ball).unwrap().translation;
    // It may roll downhill a little; it rests on the surface where it is
    // (on a slope its lowest point sits a little above the ground under its
    // centre).
    let under = ready.height_at(rest.x, rest.z).unwrap();
    assert!(
        (rest.y - radius - under).abs() < 1.0,
        "ball at {rest} but the ground there is {under}"
    );
    assert!(rest.y > ground - 10.0, "the ball fell through: {rest}");

    // Lower the ground under it a lot: it falls into the crater.
    let lower = StrokeSpec::new("lower", 8.0).with_strength(1.0);
    let at = [f64::from(rest.x), f64::from(under), f64::from(rest.z)];
    for _ in 0..6 {
        app.world_mut()
            .write_message(TerrainEdit::new(terrain, lower.clone(), vec![at]));
        let e = wait_edit(&mut app);
        assert!(matches!(e.result, Ok(Some(_))), "{e:?}");
    }
    let dug = ready.height_at(rest.x, rest.z).unwrap();
    assert!(dug < under - 2.0, "the crater is {under} -> {dug}");
    run_until(&mut app, 20_000, |app| settled(app, terrain));
    frames(&mut app, 240);
    let fell = app.world().get::<Transform>(ball).unwrap().translation;
    assert!(
        fell.y < rest.y - 1.5,
        "the ball stayed at {fell} (was {rest})"
    );
    let under = ready.height_at(fell.x, fell.z).unwrap();
    assert!((fell.y - radius - under).abs() < 1.0, "{fell} over {under}");
}

#[test]
fn a_ball_rests_on_side2d_ground_and_falls_through_a_hole() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app();
    app.add_plugins(avian2d::prelude::PhysicsPlugins::default());
    app.finish();
    app.cleanup();
    let terrain = app
        .world_mut()
        .spawn(Terrain::open_or_create(
            dir.path().join("side.isoterra"),
            NewWorld::new(WorldKind::Side2d).with_size([128, 64]),
        ))
        .id();
    run_until(&mut app, 5_000, |app| settled(app, terrain));
    let ready = app.world().get::<TerrainReady>(terrain).unwrap().clone();
    let x = 64.0;
    let hit = ready
        .raycast(Vec3::new(x, 63.0, 0.0), Vec3::NEG_Y, 64.0)
        .expect("ground under the sky");
    let ball = app
        .world_mut()
        .spawn((
            Transform::from_xyz(x, hit.point.y + 3.0, 0.0),
            avian2d::prelude::RigidBody::Dynamic,
            avian2d::prelude::Collider::circle(1.0),
            avian2d::prelude::LinearDamping(1.0),
        ))
        .id();
    frames(&mut app, 240);
    let rest = app.world().get::<Transform>(ball).unwrap().translation;
    assert!(
        rest.y > hit.point.y - 1.0 && rest.y < hit.point.y + 2.5,
        "ball at {rest}, ground at {}",
        hit.point.y
    );
    // Dig a shaft under it.
    let points: Vec<[f64; 3]> = (0..12)
        .map(|k| [f64::from(rest.x), f64::from(rest.y) - 2.0 * k as f64, 0.0])
        .collect();
    app.world_mut().write_message(TerrainEdit::new(
        terrain,
        StrokeSpec::new("dig", 4.0),
        points,
    ));
    let e = wait_edit(&mut app);
    assert!(matches!(e.result, Ok(Some(_))), "{e:?}");
    frames(&mut app, 240);
    let fell = app.world().get::<Transform>(ball).unwrap().translation;
    assert!(
        fell.y < rest.y - 5.0,
        "the ball stayed at {fell} (was {rest})"
    );
}

#[test]
fn ground_cut_loose_becomes_a_falling_debris_body() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app();
    app.add_plugins(avian2d::prelude::PhysicsPlugins::default());
    app.finish();
    app.cleanup();
    let terrain = app
        .world_mut()
        .spawn(Terrain::open_or_create(
            dir.path().join("islands.isoterra"),
            NewWorld::new(WorldKind::Side2d).with_size([128, 64]),
        ))
        .id();
    run_until(&mut app, 5_000, |app| settled(app, terrain));
    let ready = app.world().get::<TerrainReady>(terrain).unwrap().clone();
    // A blob of ground filled into the sky holds on to nothing.
    let at = Vec3::new(64.0, 58.0, 0.0);
    assert!(!ready.is_solid(at));
    app.world_mut()
        .write_message(TerrainEdit::dab(terrain, "fill", 3.0, at));
    let e = wait_edit(&mut app);
    assert!(matches!(e.result, Ok(Some(_))), "{e:?}");
    let islands: Vec<TerrainIsland> = app
        .world_mut()
        .resource_mut::<Messages<TerrainIsland>>()
        .drain()
        .collect();
    assert_eq!(islands.len(), 1, "one island");
    let island = &islands[0];
    assert!(island.area > 10.0);
    assert!(island.centroid.distance(at.truncate()) < 1.0);
    assert!(!island.outline.is_empty());
    // It left the world (as a stroke of its own) and became a body.
    assert!(!ready.is_solid(at));
    assert_eq!(ready.history().strokes, 2);
    let world = app.world();
    let debris = world.get::<TerrainDebris>(island.debris).unwrap();
    assert_eq!(debris.terrain, terrain);
    assert!(
        world
            .get::<avian2d::prelude::Collider>(island.debris)
            .is_some()
    );
    assert_eq!(
        world.get::<avian2d::prelude::RigidBody>(island.debris),
        Some(&avian2d::prelude::RigidBody::Dynamic)
    );
    let start = world.get::<Transform>(island.debris).unwrap().translation;
    frames(&mut app, 60);
    let now = app
        .world()
        .get::<Transform>(island.debris)
        .unwrap()
        .translation;
    assert!(
        now.y < start.y - 2.0,
        "the debris did not fall: {start} -> {now}"
    );
}
