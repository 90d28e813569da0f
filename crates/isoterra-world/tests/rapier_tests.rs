//! The world's collider polylines in a real physics engine (rapier2d): balls
//! dropped on generated hills come to rest on the surface, never inside it,
//! and fall into a crater once it is dug and the colliders are rebuilt.

use isoterra_field::{Side2dGen, Side2dPreset};
use isoterra_mesh::Polyline;
use isoterra_world::{Side2dBrush, Side2dParams, Side2dTool, Side2dWorld};
use rapier2d::prelude::*;

const W: u32 = 160;
const H: u32 = 80;
const BALLS: usize = 100;
const RADIUS: f32 = 0.4;

fn hills() -> Side2dWorld {
    let spec = Side2dGen::DEFAULT
        .with_preset(Side2dPreset::Hills)
        .with_seed(7)
        .with_size(W, H);
    let mut world = Side2dWorld::generate(&Side2dParams::DEFAULT.with_generator(spec)).unwrap();
    world.rebuild_all();
    world
}

/// Static polyline colliders on one fixed body; returns their handles.
fn add_terrain(
    physics: &mut PhysicsWorld,
    body: RigidBodyHandle,
    lines: &[Polyline],
) -> Vec<ColliderHandle> {
    let mut handles = Vec::new();
    for line in lines {
        let n = line.points.len() as u32;
        if n < 2 {
            continue;
        }
        let vertices: Vec<Vector> = line
            .points
            .iter()
            .map(|p| Vector::new(p[0], p[1]))
            .collect();
        let mut indices: Vec<[u32; 2]> = (1..n).map(|i| [i - 1, i]).collect();
        if line.closed {
            indices.push([n - 1, 0]);
        }
        let collider = ColliderBuilder::polyline(vertices, Some(indices)).friction(1.0);
        handles.push(
            physics
                .colliders
                .insert_with_parent(collider, body, &mut physics.bodies),
        );
    }
    handles
}

fn centre(physics: &PhysicsWorld, h: RigidBodyHandle) -> [f32; 2] {
    let t = physics.bodies[h].translation();
    [t.x, t.y]
}

fn assert_outside_solid(
    world: &Side2dWorld,
    physics: &PhysicsWorld,
    balls: &[RigidBodyHandle],
    when: &str,
) {
    let iso = world.params().iso;
    for (i, &h) in balls.iter().enumerate() {
        let p = centre(physics, h);
        let d = world.density_at(p);
        assert!(
            d.is_none_or(|d| d < iso),
            "{when}: ball {i} ended inside solid at {p:?} (density {d:?})"
        );
        assert!(
            p[1] > 0.0,
            "{when}: ball {i} fell out of the world at {p:?}"
        );
    }
}

fn assert_resting(physics: &PhysicsWorld, balls: &[RigidBodyHandle], when: &str) {
    for (i, &h) in balls.iter().enumerate() {
        let b = &physics.bodies[h];
        let v = b.linvel();
        let speed = (v.x * v.x + v.y * v.y).sqrt();
        assert!(
            b.is_sleeping() || speed < 0.05,
            "{when}: ball {i} still moves at {speed} at {:?}",
            centre(physics, h)
        );
    }
}

#[test]
fn balls_rest_on_the_terrain_and_fall_into_a_dug_crater() {
    let mut world = hills();
    let mut physics = PhysicsWorld::default();
    let ground = physics.bodies.insert(RigidBodyBuilder::fixed());
    let colliders = world.colliders(0.05).unwrap();
    assert!(!colliders.is_empty());
    let mut terrain = add_terrain(&mut physics, ground, &colliders);

    // Spread the balls over the width, a few cells above the surface.
    let top = H as f32;
    let mut balls = Vec::new();
    for i in 0..BALLS {
        let x = 2.0 + i as f32 * (W as f32 - 4.0) / (BALLS - 1) as f32;
        let surface = world
            .raycast([x, top], [x, 0.0])
            .map_or(2.0, |h| h.point[1]);
        let y = (surface + 3.0).min(top - 1.0);
        assert!(!world.is_solid([x, y]), "spawn point inside solid");
        let body = physics.bodies.insert(
            RigidBodyBuilder::dynamic()
                .translation(Vector::new(x, y))
                .lock_rotations()
                .linear_damping(0.5)
                .ccd_enabled(true),
        );
        physics.colliders.insert_with_parent(
            ColliderBuilder::ball(RADIUS).friction(1.0).restitution(0.0),
            body,
            &mut physics.bodies,
        );
        balls.push(body);
    }

    for _ in 0..600 {
        physics.step();
    }
    assert_outside_solid(&world, &physics, &balls, "after landing");
    assert_resting(&physics, &balls, "after landing");

    // Dig a crater under the balls around the middle of the world.
    let mid = balls
        .iter()
        .copied()
        .min_by(|&a, &b| {
            let da = (centre(&physics, a)[0] - W as f32 / 2.0).abs();
            let db = (centre(&physics, b)[0] - W as f32 / 2.0).abs();
            da.total_cmp(&db)
        })
        .unwrap();
    let [cx, cy] = centre(&physics, mid);
    let crater_r = 6.0;
    let crater = [cx, cy - 1.0];
    let edit = world
        .apply_brush(&Side2dBrush::new(Side2dTool::Dig, crater, crater_r))
        .unwrap();
    assert!(!edit.is_empty());
    world.rebuild(None);
    let before: Vec<[f32; 2]> = balls.iter().map(|&h| centre(&physics, h)).collect();
    let over_crater: Vec<usize> = (0..BALLS)
        .filter(|&i| {
            (before[i][0] - crater[0]).abs() < 3.0 && (before[i][1] - crater[1]).abs() < crater_r
        })
        .collect();
    assert!(!over_crater.is_empty());

    // Replace the static colliders with the new ones and wake everything.
    for h in terrain.drain(..) {
        physics.colliders.remove(
            h,
            &mut physics.islands,
            &mut physics.bodies,
            &mut physics.soft_bodies,
            true,
        );
    }
    terrain = add_terrain(&mut physics, ground, &world.colliders(0.05).unwrap());
    assert!(!terrain.is_empty());
    for &h in &balls {
        physics.bodies[h].wake_up(true);
    }
    for _ in 0..600 {
        physics.step();
    }
    assert_outside_solid(&world, &physics, &balls, "after the crater");
    for &i in &over_crater {
        let y = centre(&physics, balls[i])[1];
        assert!(
            y < before[i][1] - 2.0,
            "ball {i} over the crater did not fall: {} -> {y}",
            before[i][1]
        );
    }
    // Replacing the colliders leaves the rest of the terrain as it was: balls
    // far from the crater stay put (a few balanced on cliff edges may slide
    // off once woken).
    let far: Vec<usize> = (0..BALLS)
        .filter(|&i| (before[i][0] - crater[0]).abs() > crater_r + 6.0)
        .collect();
    let still = far
        .iter()
        .filter(|&&i| {
            let p = centre(&physics, balls[i]);
            (p[0] - before[i][0]).abs() < 0.5 && (p[1] - before[i][1]).abs() < 0.5
        })
        .count();
    assert!(
        still * 10 >= far.len() * 9,
        "only {still} of {} balls far from the crater stayed put",
        far.len()
    );
}
