//! Materials for the chunk meshes when the game renders (feature
//! `render`): vertex-coloured PBR for the 3D kinds, translucent water, and
//! one 2D colour material per side2d material id. A game replaces them by
//! changing [`TerrainMaterials`] before chunks load, or by swapping the
//! material components on the [`TerrainMesh`](crate::TerrainMesh) entities.

use std::collections::HashMap;

use bevy::app::{App, PostUpdate};
use bevy::asset::{Assets, Handle};
use bevy::camera::visibility::Visibility;
use bevy::color::Color;
use bevy::ecs::schedule::IntoScheduleConfigs;
use bevy::ecs::system::{Commands, Query, ResMut};
use bevy::pbr::{MeshMaterial3d, StandardMaterial};
use bevy::prelude::{Added, AlphaMode, Entity, Resource, Without};
use bevy::sprite_render::{ColorMaterial, MeshMaterial2d};

use crate::IsoterraSystems;
use crate::io::Layer;
use crate::plugin::TerrainMesh;
use crate::terrain::{Terrain, TerrainChunk, TerrainDebris};

/// The materials new chunk meshes get. Filled with defaults the first time
/// a chunk needs one; a game may insert its own first.
#[derive(Resource, Debug, Clone, Default)]
pub struct TerrainMaterials {
    /// Ground of voxel, heightmap and map worlds (its colour multiplies the
    /// vertex colours).
    pub ground: Option<Handle<StandardMaterial>>,
    /// Water of map worlds.
    pub water: Option<Handle<StandardMaterial>>,
    /// Side2d meshes, by material id (vertex colours carry the world's
    /// material colours; `None` for an id: the shared white material).
    pub side2d: HashMap<u8, Handle<ColorMaterial>>,
    /// The shared side2d material.
    pub side2d_default: Option<Handle<ColorMaterial>>,
}

pub(crate) fn build(app: &mut App) {
    app.init_resource::<TerrainMaterials>().add_systems(
        PostUpdate,
        (visible_terrains, dress_meshes).after(IsoterraSystems::Stream),
    );
}

/// Terrains and chunks take part in visibility, so their meshes draw.
fn visible_terrains(
    mut commands: Commands,
    terrains: Query<Entity, (Added<Terrain>, Without<Visibility>)>,
    chunks: Query<Entity, (Added<TerrainChunk>, Without<Visibility>)>,
    debris: Query<Entity, (Added<TerrainDebris>, Without<Visibility>)>,
) {
    for e in terrains.iter().chain(chunks.iter()).chain(debris.iter()) {
        commands.entity(e).insert(Visibility::default());
    }
}

fn dress_meshes(
    mut commands: Commands,
    parts: Query<(Entity, &TerrainMesh), Added<TerrainMesh>>,
    debris: Query<Entity, Added<TerrainDebris>>,
    mut materials: ResMut<TerrainMaterials>,
    standard: Option<ResMut<Assets<StandardMaterial>>>,
    colors: Option<ResMut<Assets<ColorMaterial>>>,
) {
    if parts.is_empty() && debris.is_empty() {
        return;
    }
    let mut standard = standard;
    let mut colors = colors;
    if let Some(assets) = colors.as_deref_mut() {
        for e in &debris {
            let handle = materials
                .side2d_default
                .get_or_insert_with(|| assets.add(ColorMaterial::from_color(Color::WHITE)))
                .clone();
            commands.entity(e).insert(MeshMaterial2d(handle));
        }
    }
    for (e, part) in &parts {
        match part.layer {
            Layer::Ground | Layer::Water => {
                let Some(assets) = standard.as_deref_mut() else {
                    continue;
                };
                let water = part.layer == Layer::Water;
                let slot = if water {
                    &mut materials.water
                } else {
                    &mut materials.ground
                };
                let handle = slot
                    .get_or_insert_with(|| {
                        assets.add(if water {
                            StandardMaterial {
                                base_color: Color::WHITE,
                                alpha_mode: AlphaMode::Blend,
                                perceptual_roughness: 0.1,
                                ..Default::default()
                            }
                        } else {
                            StandardMaterial {
                                base_color: Color::WHITE,
                                perceptual_roughness: 0.9,
                                ..Default::default()
                            }
                        })
                    })
                    .clone();
                commands.entity(e).insert(MeshMaterial3d(handle));
            }
            Layer::Side(id) => {
                let Some(assets) = colors.as_deref_mut() else {
                    continue;
                };
                let handle = match materials.side2d.get(&id) {
                    Some(h) => h.clone(),
                    None => materials
                        .side2d_default
                        .get_or_insert_with(|| assets.add(ColorMaterial::from_color(Color::WHITE)))
                        .clone(),
                };
                commands.entity(e).insert(MeshMaterial2d(handle));
            }
        }
    }
}
