//! isoterra in a Bevy game: density-field terrain of any kind, streamed
//! around the players, dug into at runtime, with colliders from the same
//! meshing pass and every edit saved to the world file with undo.
//!
//! ```no_run
//! use bevy::prelude::*;
//! use isoterra_bevy::prelude::*;
//!
//! fn setup(mut commands: Commands) {
//!     // Any kind of world file: side2d, heightmap, voxel or map.
//!     commands.spawn(Terrain::open("caves.isoterra"));
//!     commands.spawn((Transform::from_xyz(0.0, 20.0, 0.0), TerrainViewer::new(160.0)));
//! }
//!
//! fn dig(terrains: Query<Entity, With<TerrainReady>>, mut edits: MessageWriter<TerrainEdit>) {
//!     for terrain in &terrains {
//!         edits.write(TerrainEdit::dab(terrain, "dig", 4.0, Vec3::new(0.0, 10.0, 0.0)));
//!     }
//! }
//!
//! App::new()
//!     .add_plugins((MinimalPlugins, AssetPlugin::default(), TransformPlugin))
//!     .add_plugins(IsoterraPlugin)
//!     .add_systems(Startup, setup)
//!     .add_systems(Update, dig)
//!     .run();
//! # use bevy::asset::AssetPlugin;
//! # use bevy::transform::TransformPlugin;
//! ```
//!
//! # What the plugin does
//!
//! * A [`Terrain`] entity opens (or creates) a world file through the kind
//!   layer ([`isoterra::kind::Document`]). Once it is open it gets
//!   [`TerrainReady`]; a file that cannot be opened gives a
//!   [`TerrainFailed`] message and the entity stays as it is.
//! * Endless kinds (voxel, heightmap) stream chunks around every
//!   [`TerrainViewer`] with LOD rings, on Bevy's [`AsyncComputeTaskPool`](bevy::tasks::AsyncComputeTaskPool)
//!   (the shared [`StreamScheduler`](isoterra::world::StreamScheduler) runs
//!   its builds there). Bounded kinds (side2d, map) show every chunk. Each
//!   chunk is a child entity with a [`TerrainChunk`], a mesh (positions,
//!   normals, UVs, vertex colours from the material, and the material id as
//!   [`ATTRIBUTE_MATERIAL`]) and a static collider built on the worker
//!   threads too. The main thread only swaps finished meshes in; the mesh
//!   assets of unloaded chunks are kept and refilled by the chunks that take
//!   their slot.
//! * [`TerrainEdit`], [`TerrainUndo`] and [`TerrainRedo`] go through the
//!   document on Bevy's IO pool, in order: each is committed to the file
//!   before its [`TerrainEdited`] message comes back, and only the chunks it
//!   changed are rebuilt (mesh and collider in the same frame).
//! * Queries on a ready terrain ([`TerrainReady::raycast`], `is_solid`,
//!   `density`).
//! * An [`EditorLink`] on a terrain keeps a running game and a running
//!   `isoterra edit` on the same file in step: strokes made in the browser
//!   appear in the game once the editor committed them, and the game's
//!   edits are committed by the editor, in one history.
//!
//! Colliders are [avian](https://docs.rs/avian3d) components (`avian3d`
//! for voxel, heightmap and map worlds, `avian2d` for side2d). The game adds
//! the physics plugins it wants; without them the colliders are inert data.
//! Without the `render` feature (a headless server) the plugin needs only
//! `MinimalPlugins`, `AssetPlugin` and `TransformPlugin`.

mod baked;
mod build;
mod io;
mod link;
mod plugin;
mod query;
#[cfg(feature = "render")]
mod render;
mod stream;
mod terrain;

pub use build::{ATTRIBUTE_MATERIAL, ATTRIBUTE_MORPH, ATTRIBUTE_MORPH_TARGET, voxel_color};
pub use link::EditorLink;
pub use plugin::{IsoterraPlugin, IsoterraSystems, TerrainCollider, TerrainMesh};
pub use query::{MapPathing, PathUnit, TerrainHit};
#[cfg(feature = "render")]
pub use render::TerrainMaterials;
pub use terrain::{
    EditOp, Terrain, TerrainChunk, TerrainDebris, TerrainEdit, TerrainEdited, TerrainFailed,
    TerrainIsland, TerrainReady, TerrainRedo, TerrainStatus, TerrainUndo, TerrainViewer,
};

/// What a game using the plugin needs in scope.
pub mod prelude {
    #[cfg(feature = "render")]
    pub use crate::TerrainMaterials;
    pub use crate::{
        EditOp, EditorLink, IsoterraPlugin, MapPathing, PathUnit, Terrain, TerrainChunk,
        TerrainDebris, TerrainEdit, TerrainEdited, TerrainFailed, TerrainHit, TerrainIsland,
        TerrainMesh, TerrainReady, TerrainRedo, TerrainStatus, TerrainUndo, TerrainViewer,
    };
    pub use isoterra::kind::{NewWorld, StrokeSpec, WorldKind};
}
