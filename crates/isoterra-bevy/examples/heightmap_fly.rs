//! Endless mountains with LOD around a flying camera; sculpt with the
//! mouse: left button raises, right button lowers where you point, Ctrl+Z
//! undoes. W/S speed up and slow down, A/D turn. Edits are saved in the
//! world file (`--world`, created when missing).
//!
//! ```text
//! cargo run -p isoterra-bevy --release --example heightmap_fly
//! cargo run -p isoterra-bevy --release --example heightmap_fly -- --headless --frames 300 --screenshot heightmap_fly.png
//! ```

mod common;

use bevy::core_pipeline::tonemapping::Tonemapping;
use bevy::prelude::*;
use isoterra_bevy::prelude::*;

use common::{Args, Target};

const USAGE: &str = "usage: heightmap_fly [--world FILE] [--link ws://127.0.0.1:7878/ws] [--headless] [--frames N] [--screenshot PATH]";

fn main() {
    let args = Args::parse(USAGE);
    let path = args.world_or("isoterra-heightmap-fly.isoterra");
    common::app(&args, "isoterra: heightmap_fly")
        .add_plugins(IsoterraPlugin)
        .insert_resource(WorldPath(path))
        .insert_resource(Flight {
            speed: 40.0,
            heading: 0.6,
        })
        .add_systems(Startup, setup.after(common::make_target))
        .add_systems(Update, (fly, sculpt, script))
        .run();
}

#[derive(Resource)]
struct WorldPath(std::path::PathBuf);

#[derive(Resource)]
struct Flight {
    speed: f32,
    heading: f32,
}

fn setup(mut commands: Commands, args: Res<Args>, path: Res<WorldPath>, target: Res<Target>) {
    common::spawn_terrain(
        &mut commands,
        &args,
        Terrain::open_or_create(
            &path.0,
            NewWorld::new(WorldKind::Heightmap).with_preset("mountains"),
        ),
    );
    commands.spawn((
        Camera3d::default(),
        target.0.clone(),
        Tonemapping::Reinhard,
        Projection::Perspective(PerspectiveProjection {
            far: 4000.0,
            ..Default::default()
        }),
        Transform::from_xyz(0.0, 120.0, 0.0),
        // Offscreen runs draw on the CPU (lavapipe): a shorter view.
        TerrainViewer::new(if args.headless { 800.0 } else { 1500.0 }),
    ));
    commands.spawn((
        DirectionalLight {
            illuminance: 10_000.0,
            shadow_maps_enabled: false,
            ..Default::default()
        },
        Transform::default().looking_to(Vec3::new(-0.5, -0.8, -0.2), Vec3::Y),
    ));
    commands.insert_resource(GlobalAmbientLight {
        brightness: 350.0,
        ..Default::default()
    });
}

/// Flies forward over the ground, keeping well above it.
fn fly(
    time: Res<Time>,
    keys: Res<ButtonInput<KeyCode>>,
    mut flight: ResMut<Flight>,
    terrains: Query<&TerrainReady>,
    mut cameras: Query<&mut Transform, With<Camera3d>>,
) {
    let (Ok(ready), Ok(mut cam)) = (terrains.single(), cameras.single_mut()) else {
        return;
    };
    let dt = time.delta_secs();
    if keys.pressed(KeyCode::KeyW) {
        flight.speed = (flight.speed + 60.0 * dt).min(400.0);
    }
    if keys.pressed(KeyCode::KeyS) {
        flight.speed = (flight.speed - 60.0 * dt).max(0.0);
    }
    if keys.pressed(KeyCode::KeyA) {
        flight.heading += dt;
    }
    if keys.pressed(KeyCode::KeyD) {
        flight.heading -= dt;
    }
    let dir = Vec3::new(flight.heading.cos(), 0.0, -flight.heading.sin());
    let mut p = cam.translation + dir * flight.speed * dt;
    // Look ahead so the camera climbs before a ridge.
    let ground = [0.0, 60.0, 120.0]
        .iter()
        .filter_map(|d| ready.height_at(p.x + dir.x * d, p.z + dir.z * d))
        .fold(f32::MIN, f32::max);
    if ground > f32::MIN {
        let want = ground + 70.0;
        p.y += (want - p.y) * (2.0 * dt).min(1.0);
    }
    cam.translation = p;
    let look = p + dir * 100.0 + Vec3::NEG_Y * 45.0;
    cam.look_at(look, Vec3::Y);
}

fn sculpt(
    buttons: Res<ButtonInput<MouseButton>>,
    keys: Res<ButtonInput<KeyCode>>,
    windows: Query<&Window>,
    cameras: Query<(&Camera, &GlobalTransform)>,
    terrains: Query<(Entity, &TerrainReady)>,
    mut edits: MessageWriter<TerrainEdit>,
    mut undo: MessageWriter<TerrainUndo>,
) {
    let Ok((terrain, ready)) = terrains.single() else {
        return;
    };
    if keys.just_pressed(KeyCode::KeyZ) && keys.pressed(KeyCode::ControlLeft) {
        undo.write(TerrainUndo { terrain });
    }
    let tool = if buttons.just_pressed(MouseButton::Left) {
        "raise"
    } else if buttons.just_pressed(MouseButton::Right) {
        "lower"
    } else {
        return;
    };
    let (Some(cursor), Ok((camera, at))) = (common::cursor(&windows), cameras.single()) else {
        return;
    };
    let Ok(ray) = camera.viewport_to_world(at, cursor) else {
        return;
    };
    if let Some(hit) = ready.raycast(ray.origin, ray.direction.as_vec3(), 2000.0) {
        edits.write(TerrainEdit::new(
            terrain,
            StrokeSpec::new(tool, 24.0).with_strength(1.0),
            vec![[
                f64::from(hit.point.x),
                f64::from(hit.point.y),
                f64::from(hit.point.z),
            ]],
        ));
    }
}

/// Headless runs raise a row of hills ahead of the camera as it flies.
fn script(
    args: Res<Args>,
    terrains: Query<(Entity, &TerrainReady)>,
    cameras: Query<&GlobalTransform, With<Camera3d>>,
    mut frame: Local<u32>,
    mut edits: MessageWriter<TerrainEdit>,
) {
    if !args.headless {
        return;
    }
    let (Ok((terrain, ready)), Ok(cam)) = (terrains.single(), cameras.single()) else {
        return;
    };
    *frame += 1;
    if !(*frame).is_multiple_of(40) || *frame > 240 {
        return;
    }
    let from = cam.translation();
    if let Some(hit) = ready.raycast(from, cam.forward().as_vec3(), 2000.0) {
        let raise = StrokeSpec::new("raise", 30.0).with_strength(1.0);
        let p = [
            f64::from(hit.point.x),
            f64::from(hit.point.y),
            f64::from(hit.point.z),
        ];
        edits.write(TerrainEdit::new(terrain, raise, vec![p, p, p]));
    }
}
