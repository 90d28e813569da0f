//! Streaming for every world kind: viewers and the wanted set of chunks,
//! a scheduler that builds them on a thread pool and hands them to the
//! application as events, and the sources that build voxel and heightmap
//! chunks.

mod heightmap_source;
#[cfg(feature = "parallel")]
mod scheduler;
mod select;
mod side2d_source;
mod source;
mod voxel_source;

pub use heightmap_source::{HeightmapChunk, HeightmapEdits, HeightmapSource};
#[cfg(feature = "parallel")]
pub use scheduler::{StreamExecutor, StreamScheduler, StreamStats};
pub use select::{ChunkCoord, Dim, StreamConfig, StreamViewer, chunk_requests, desired_chunks};
pub use side2d_source::Side2dSource;
pub use source::{CancelFlag, ChunkRequest, ChunkSource, SlotId, StreamEvent};
pub use voxel_source::{VoxelEdits, VoxelSource};
