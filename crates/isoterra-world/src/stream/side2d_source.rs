//! A [`ChunkSource`] for side-view worlds: the chunks of a rebuilt world
//! snapshot, handed out as viewers come near.

use std::sync::Arc;

use super::select::{Dim, StreamConfig};
use super::source::{CancelFlag, ChunkRequest, ChunkSource};
use crate::{Side2dChunk, Side2dWorld};

/// Streams the chunks of a [`Side2dWorld`] (a finite x/y grid, one world
/// unit per cell): [`Dim::Xy`], stream chunk `[cx, cy, 0]` is world chunk
/// `(cx, cy)`, with its fill mesh, contours and colliders. The world is
/// meshed once when the source is made; `build` shares that chunk (LODs
/// are ignored: a side-view chunk is cheap at full resolution). Chunks
/// outside the world fail; [`stream_config`](Self::stream_config) bounds the
/// grid to the world so none is asked for.
#[derive(Debug)]
pub struct Side2dSource {
    world: Side2dWorld,
}

impl Side2dSource {
    /// A source over `world`, rebuilt first so every chunk is current.
    pub fn new(mut world: Side2dWorld) -> Self {
        world.rebuild_all();
        Side2dSource { world }
    }

    /// The world snapshot.
    pub fn world(&self) -> &Side2dWorld {
        &self.world
    }

    /// The streaming configuration matching the world: [`Dim::Xy`],
    /// `chunk_size = chunk_cells`, LOD 0 only, bounded to the world's
    /// chunks; other fields default.
    pub fn stream_config(&self) -> StreamConfig {
        let max = [
            self.world.chunks_x().saturating_sub(1).min(i32::MAX as u32) as i32,
            self.world.chunks_y().saturating_sub(1).min(i32::MAX as u32) as i32,
            0,
        ];
        StreamConfig::DEFAULT
            .with_dim(Dim::Xy)
            .with_chunk_size(self.world.params().chunk_cells as f32)
            .with_max_lod(0)
            .with_bounds(Some(([0; 3], max)))
    }
}

impl ChunkSource for Side2dSource {
    type Output = Arc<Side2dChunk>;

    fn build(&self, request: &ChunkRequest, cancel: &CancelFlag) -> Option<Arc<Side2dChunk>> {
        let coord = request.coord;
        if cancel.is_cancelled() || coord[0] < 0 || coord[1] < 0 || coord[2] != 0 {
            return None;
        }
        self.world
            .chunk(coord[0] as u32, coord[1] as u32)
            .map(|c| Arc::new(c.clone()))
    }
}
