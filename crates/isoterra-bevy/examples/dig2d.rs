//! A Worms-like side view: left click digs, right click fills, space drops
//! a ball; balls fall and rest on the ground and roll into what you dig.
//! Every dig is saved in the world file (`--world`, created when missing):
//! start the game again and the holes are still there. Ctrl+Z undoes.
//!
//! ```text
//! cargo run -p isoterra-bevy --release --example dig2d
//! # Live with the editor: both on one file, strokes show up in both.
//! cargo run --release -- new dig.isoterra --kind side2d
//! cargo run --release -- edit dig.isoterra &
//! cargo run -p isoterra-bevy --release --example dig2d -- --world dig.isoterra --link ws://127.0.0.1:7878/ws
//! cargo run -p isoterra-bevy --release --example dig2d -- --headless --frames 300 --screenshot dig2d.png
//! ```

mod common;

use avian2d::prelude::*;
use bevy::prelude::*;
use isoterra_bevy::prelude::*;

use common::{Args, Target};

const USAGE: &str = "usage: dig2d [--world FILE] [--link ws://127.0.0.1:7878/ws] [--headless] [--frames N] [--screenshot PATH]";
/// The world's size in cells (one world unit each).
const SIZE: [u32; 2] = [256, 128];

fn main() {
    let args = Args::parse(USAGE);
    let path = args.world_or("isoterra-dig2d.isoterra");
    common::app(&args, "isoterra: dig2d")
        .add_plugins((PhysicsPlugins::default(), IsoterraPlugin))
        .insert_resource(Gravity(Vec2::NEG_Y * 60.0))
        .insert_resource(World(path))
        .add_systems(Startup, setup.after(common::make_target))
        .add_systems(Update, (mouse, keys, script))
        .run();
}

#[derive(Resource)]
struct World(std::path::PathBuf);

#[derive(Resource)]
struct Ball {
    mesh: Handle<Mesh>,
    material: Handle<ColorMaterial>,
}

fn setup(
    mut commands: Commands,
    args: Res<Args>,
    world: Res<World>,
    target: Res<Target>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<ColorMaterial>>,
) {
    common::spawn_terrain(
        &mut commands,
        &args,
        Terrain::open_or_create(
            &world.0,
            NewWorld::new(WorldKind::Side2d)
                .with_size(SIZE)
                .with_preset("hills"),
        ),
    );
    let centre = Vec3::new(SIZE[0] as f32 / 2.0, SIZE[1] as f32 / 2.0, 0.0);
    commands.spawn((
        Camera2d,
        target.0.clone(),
        Projection::Orthographic(OrthographicProjection {
            scale: SIZE[0] as f32 / common::SIZE[0] as f32 * 1.05,
            ..OrthographicProjection::default_2d()
        }),
        Transform::from_translation(centre + Vec3::Z * 100.0),
    ));
    commands.insert_resource(Ball {
        mesh: meshes.add(Circle::new(2.0)),
        material: materials.add(ColorMaterial::from_color(Color::srgb(0.9, 0.2, 0.2))),
    });
}

fn drop_ball(commands: &mut Commands, ball: &Ball, at: Vec2) {
    commands.spawn((
        Mesh2d(ball.mesh.clone()),
        MeshMaterial2d(ball.material.clone()),
        Transform::from_xyz(at.x, at.y, 1.0),
        RigidBody::Dynamic,
        Collider::circle(2.0),
        Friction::new(0.6),
    ));
}

fn mouse(
    buttons: Res<ButtonInput<MouseButton>>,
    windows: Query<&Window>,
    cameras: Query<(&Camera, &GlobalTransform)>,
    terrains: Query<Entity, With<TerrainReady>>,
    mut edits: MessageWriter<TerrainEdit>,
) {
    let tool = if buttons.pressed(MouseButton::Left) {
        "dig"
    } else if buttons.pressed(MouseButton::Right) {
        "fill"
    } else {
        return;
    };
    let (Some(cursor), Ok((camera, at)), Ok(terrain)) = (
        common::cursor(&windows),
        cameras.single(),
        terrains.single(),
    ) else {
        return;
    };
    if let Ok(p) = camera.viewport_to_world_2d(at, cursor) {
        edits.write(TerrainEdit::dab(terrain, tool, 8.0, p.extend(0.0)));
    }
}

fn keys(
    mut commands: Commands,
    keys: Res<ButtonInput<KeyCode>>,
    windows: Query<&Window>,
    cameras: Query<(&Camera, &GlobalTransform)>,
    terrains: Query<Entity, With<TerrainReady>>,
    ball: Res<Ball>,
    mut undo: MessageWriter<TerrainUndo>,
) {
    let Ok(terrain) = terrains.single() else {
        return;
    };
    if keys.just_pressed(KeyCode::KeyZ) && keys.pressed(KeyCode::ControlLeft) {
        undo.write(TerrainUndo { terrain });
    }
    if keys.just_pressed(KeyCode::Space) {
        let at = match (common::cursor(&windows), cameras.single()) {
            (Some(c), Ok((camera, t))) => camera.viewport_to_world_2d(t, c).ok(),
            _ => None,
        };
        let at = at.unwrap_or(Vec2::new(SIZE[0] as f32 / 2.0, SIZE[1] as f32 - 4.0));
        drop_ball(&mut commands, &ball, at);
    }
}

/// Headless runs play a short scene: balls drop, two craters are dug
/// under them, more balls roll in.
fn script(
    mut commands: Commands,
    args: Res<Args>,
    terrains: Query<(Entity, &TerrainReady)>,
    ball: Res<Ball>,
    mut frame: Local<u32>,
    mut edits: MessageWriter<TerrainEdit>,
) {
    if !args.headless {
        return;
    }
    let Ok((terrain, ready)) = terrains.single() else {
        return;
    };
    *frame += 1;
    let f = *frame;
    let ground = |x: f32| {
        ready
            .raycast(Vec3::new(x, SIZE[1] as f32 - 2.0, 0.0), Vec3::NEG_Y, 200.0)
            .map_or(SIZE[1] as f32 / 2.0, |h| h.point.y)
    };
    match f {
        5 | 25 | 45 => {
            for x in [60.0, 128.0, 190.0] {
                drop_ball(
                    &mut commands,
                    &ball,
                    Vec2::new(x + f as f32 * 0.2, ground(x) + 20.0),
                );
            }
        }
        60 | 90 => {
            let x = if f == 60 { 90.0 } else { 170.0 };
            let y = ground(x);
            let points = (0..6)
                .map(|k| [f64::from(x), f64::from(y) - 4.0 * k as f64, 0.0])
                .collect();
            edits.write(TerrainEdit::new(
                terrain,
                StrokeSpec::new("dig", 12.0),
                points,
            ));
        }
        _ => {}
    }
}
