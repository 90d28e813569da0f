//! The kind layer: one API over the four world kinds.
//!
//! The algorithm crates know one kind at a time (a `Side2dWorld`, a
//! `MapMesher`, a `VoxelDocument`); everything a program does with "a world
//! file, whatever it holds" is written here once, so that the command line,
//! the editor and the engine plugin cannot disagree:
//!
//! - [`WorldKind`]: the kinds, their names and what each offers.
//!
//! The layer sits above `isoterra-store` and `isoterra-export` and below the
//! apps. It does no I/O of its own beyond what the store does.

mod error;
mod kind;

pub use error::KindError;
pub use kind::WorldKind;
