//! Fly through a cave world and dig with the mouse: chunks stream around
//! the camera in LOD rings, left click digs where you look, F adds rock
//! back, space drops a ball that rolls into what you dug, Ctrl+Z undoes.
//! WASD moves, Q/E go down/up, hold the right button to look around.
//! Edits are saved in the world file (`--world`, created when missing).
//!
//! ```text
//! cargo run -p isoterra-bevy --release --example voxel_dig
//! cargo run -p isoterra-bevy --release --example voxel_dig -- --headless --frames 300 --screenshot voxel_dig.png
//! ```

mod common;

use avian3d::prelude::*;
use bevy::core_pipeline::tonemapping::Tonemapping;
use bevy::input::mouse::AccumulatedMouseMotion;
use bevy::prelude::*;
use isoterra_bevy::prelude::*;

use common::{Args, Target};

const USAGE: &str = "usage: voxel_dig [--world FILE] [--link ws://127.0.0.1:7878/ws] [--headless] [--frames N] [--screenshot PATH]";

fn main() {
    let args = Args::parse(USAGE);
    let path = args.world_or("isoterra-voxel-dig.isoterra");
    common::app(&args, "isoterra: voxel_dig")
        .add_plugins((PhysicsPlugins::default(), IsoterraPlugin))
        .insert_resource(WorldPath(path))
        .add_systems(Startup, setup.after(common::make_target))
        .add_systems(Update, (place_camera, fly, dig, script))
        .run();
}

#[derive(Resource)]
struct WorldPath(std::path::PathBuf);

#[derive(Resource)]
struct Ball {
    mesh: Handle<Mesh>,
    material: Handle<StandardMaterial>,
}

/// Set once the camera stands above the ground.
#[derive(Resource)]
struct Placed;

fn setup(
    mut commands: Commands,
    args: Res<Args>,
    path: Res<WorldPath>,
    target: Res<Target>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    common::spawn_terrain(
        &mut commands,
        &args,
        Terrain::open_or_create(
            &path.0,
            NewWorld::new(WorldKind::Voxel).with_preset("caves"),
        ),
    );
    commands.spawn((
        Camera3d::default(),
        target.0.clone(),
        Tonemapping::Reinhard,
        Transform::from_xyz(0.0, 60.0, 0.0).looking_to(Vec3::new(1.0, -0.45, 0.3), Vec3::Y),
        // Offscreen runs draw on the CPU (lavapipe): a shorter view.
        TerrainViewer::new(if args.headless { 96.0 } else { 192.0 }),
    ));
    commands.spawn((
        DirectionalLight {
            illuminance: 9_000.0,
            shadow_maps_enabled: false,
            ..Default::default()
        },
        Transform::default().looking_to(Vec3::new(-0.4, -1.0, -0.3), Vec3::Y),
    ));
    commands.insert_resource(GlobalAmbientLight {
        brightness: 400.0,
        ..Default::default()
    });
    commands.insert_resource(Ball {
        mesh: meshes.add(Sphere::new(1.0)),
        material: materials.add(Color::srgb(0.9, 0.15, 0.1)),
    });
}

/// Puts the camera a little above the ground once the world is open.
fn place_camera(
    mut commands: Commands,
    placed: Option<Res<Placed>>,
    terrains: Query<&TerrainReady>,
    mut cameras: Query<&mut Transform, With<Camera3d>>,
) {
    if placed.is_some() {
        return;
    }
    let (Ok(ready), Ok(mut cam)) = (terrains.single(), cameras.single_mut()) else {
        return;
    };
    if let Some(hit) = ready.raycast(Vec3::new(0.0, 120.0, 0.0), Vec3::NEG_Y, 400.0) {
        cam.translation = hit.point + Vec3::Y * 14.0;
    }
    commands.insert_resource(Placed);
}

fn fly(
    time: Res<Time>,
    keys: Res<ButtonInput<KeyCode>>,
    buttons: Res<ButtonInput<MouseButton>>,
    motion: Res<AccumulatedMouseMotion>,
    mut cameras: Query<&mut Transform, With<Camera3d>>,
) {
    let Ok(mut cam) = cameras.single_mut() else {
        return;
    };
    let dt = time.delta_secs();
    if buttons.pressed(MouseButton::Right) {
        let (yaw, pitch, _) = cam.rotation.to_euler(EulerRot::YXZ);
        let yaw = yaw - motion.delta.x * 0.003;
        let pitch = (pitch - motion.delta.y * 0.003).clamp(-1.5, 1.5);
        cam.rotation = Quat::from_euler(EulerRot::YXZ, yaw, pitch, 0.0);
    }
    let mut v = Vec3::ZERO;
    let (f, r) = (cam.forward().as_vec3(), cam.right().as_vec3());
    for (key, d) in [
        (KeyCode::KeyW, f),
        (KeyCode::KeyS, -f),
        (KeyCode::KeyD, r),
        (KeyCode::KeyA, -r),
        (KeyCode::KeyE, Vec3::Y),
        (KeyCode::KeyQ, Vec3::NEG_Y),
    ] {
        if keys.pressed(key) {
            v += d;
        }
    }
    let speed = if keys.pressed(KeyCode::ShiftLeft) {
        60.0
    } else {
        20.0
    };
    cam.translation += v.normalize_or_zero() * speed * dt;
}

#[allow(clippy::too_many_arguments)]
fn dig(
    mut commands: Commands,
    buttons: Res<ButtonInput<MouseButton>>,
    keys: Res<ButtonInput<KeyCode>>,
    terrains: Query<(Entity, &TerrainReady)>,
    cameras: Query<&GlobalTransform, With<Camera3d>>,
    ball: Res<Ball>,
    mut edits: MessageWriter<TerrainEdit>,
    mut undo: MessageWriter<TerrainUndo>,
) {
    let (Ok((terrain, ready)), Ok(cam)) = (terrains.single(), cameras.single()) else {
        return;
    };
    if keys.just_pressed(KeyCode::KeyZ) && keys.pressed(KeyCode::ControlLeft) {
        undo.write(TerrainUndo { terrain });
    }
    let tool = if buttons.just_pressed(MouseButton::Left) {
        Some("dig")
    } else if keys.just_pressed(KeyCode::KeyF) {
        Some("add")
    } else {
        None
    };
    let (from, dir) = (cam.translation(), cam.forward().as_vec3());
    if let Some(tool) = tool
        && let Some(hit) = ready.raycast(from, dir, 200.0)
    {
        edits.write(TerrainEdit::dab(terrain, tool, 5.0, hit.point));
    }
    if keys.just_pressed(KeyCode::Space) {
        drop_ball(&mut commands, &ball, from + dir * 4.0);
    }
}

fn drop_ball(commands: &mut Commands, ball: &Ball, at: Vec3) {
    commands.spawn((
        Mesh3d(ball.mesh.clone()),
        MeshMaterial3d(ball.material.clone()),
        Transform::from_translation(at),
        RigidBody::Dynamic,
        Collider::sphere(1.0),
    ));
}

/// Headless runs play a short scene: the camera glides forward, digs two
/// holes in front of it and drops a ball into the first.
#[allow(clippy::too_many_arguments)]
fn script(
    mut commands: Commands,
    args: Res<Args>,
    placed: Option<Res<Placed>>,
    terrains: Query<(Entity, &TerrainReady)>,
    mut cameras: Query<&mut Transform, With<Camera3d>>,
    ball: Res<Ball>,
    mut frame: Local<u32>,
    mut first: Local<Option<Vec3>>,
    mut edits: MessageWriter<TerrainEdit>,
) {
    if !args.headless || placed.is_none() {
        return;
    }
    let (Ok((terrain, ready)), Ok(mut cam)) = (terrains.single(), cameras.single_mut()) else {
        return;
    };
    *frame += 1;
    let f = *frame;
    let dir = cam.forward().as_vec3();
    if f < 120 {
        cam.translation += Vec3::new(dir.x, 0.0, dir.z).normalize_or_zero() * 0.1;
    }
    if (f == 60 || f == 90)
        && let Some(hit) = ready.raycast(cam.translation, dir, 200.0)
    {
        edits.write(TerrainEdit::dab(terrain, "dig", 6.0, hit.point));
        first.get_or_insert(hit.point);
    }
    if f == 130
        && let Some(p) = *first
    {
        drop_ball(&mut commands, &ball, p + Vec3::Y * 10.0);
    }
}
