//! Baked chunks as a terrain source: the rows `isoterra bake` stored in a
//! voxel or heightmap world file, read by the build workers in place of
//! generating and meshing a chunk.
//!
//! A row is used only while it is current and only for a request it was
//! made for:
//! - current: its recorded input stamp equals the chunk's stamp when the
//!   terrain opens (the world's parameters and the stored chunks it is made
//!   from are the same), and no edit since has touched a chunk it reads
//!   (such chunks are built live from then on, undo included);
//! - made for the request: a baked chunk has no seams toward other LODs, so
//!   it stands in only for a request with no neighbour at another LOD.
//!   Voxel rows are used at LOD 0 (a baked voxel chunk at LOD `k` covers
//!   `2^k` world chunks per axis, the stream's covers one), heightmap rows
//!   at their own LOD.
//!
//! In those cases the row holds what the live build gives (the bake runs
//! the same meshers), so a baked terrain looks and collides exactly like a
//! live one.

use std::collections::HashSet;
use std::path::Path;
use std::sync::{Mutex, RwLock};

use isoterra::kind::{BakeInputs, Document};
use isoterra::store::{BAKED_TERRAIN, BakedChunk, ChunkKey, WorldFile};
use isoterra::world::{ChunkCoord, ChunkRequest};

/// The current baked chunks of one terrain and a read handle on its file.
pub(crate) struct BakedChunks {
    file: Mutex<WorldFile>,
    /// `(x, y, z, lod)` of the current rows.
    current: RwLock<HashSet<[i32; 4]>>,
}

impl std::fmt::Debug for BakedChunks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BakedChunks")
            .field("current", &self.current_count())
            .finish_non_exhaustive()
    }
}

impl BakedChunks {
    /// The current rows of the world `doc` holds at `path`; `None` when it
    /// has none. Voxel rows count at LOD 0 only.
    pub fn open(doc: &Document, path: &Path, voxel: bool) -> Result<Option<Self>, String> {
        let store = doc.store();
        let err = |e: isoterra::store::StoreError| format!("baked chunks: {e}");
        let recorded = store.baked_sources().map_err(err)?;
        if recorded.is_empty() {
            return Ok(None);
        }
        let inputs = BakeInputs::read(store).map_err(err)?;
        let source = doc.bake_source();
        let mut current = HashSet::new();
        for (key, stamp) in &recorded {
            if key.layer != BAKED_TERRAIN || (voxel && key.lod != 0) {
                continue;
            }
            if inputs.stamp(&source, key).is_ok_and(|s| &s == stamp) {
                current.insert([key.x, key.y, key.z, i32::from(key.lod)]);
            }
        }
        if current.is_empty() {
            return Ok(None);
        }
        let file = WorldFile::open(path).map_err(err)?;
        Ok(Some(BakedChunks {
            file: Mutex::new(file),
            current: RwLock::new(current),
        }))
    }

    /// How many rows are current.
    pub fn current_count(&self) -> usize {
        self.current.read().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// The row standing in for `request` at key `[x, y, z]`, if there is a
    /// current one made for it. A row that cannot be read is dropped (the
    /// chunk is built live).
    pub fn take(&self, request: &ChunkRequest, key: [i32; 3]) -> Option<BakedChunk> {
        let seamless = request.neighbour_lods.iter().all(Option::is_none)
            && request.edge_lods.iter().all(Option::is_none);
        let id = [key[0], key[1], key[2], i32::from(request.lod)];
        if !seamless
            || !self
                .current
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .contains(&id)
        {
            return None;
        }
        let key = ChunkKey {
            layer: BAKED_TERRAIN,
            x: key[0],
            y: key[1],
            z: key[2],
            lod: request.lod,
        };
        let read = self
            .file
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .baked(&key);
        match read {
            Ok(Some(chunk)) => Some(chunk),
            _ => {
                self.forget_ids([id]);
                None
            }
        }
    }

    /// Voxel chunks an edit changed: their rows are no longer current.
    pub fn forget_voxel(&self, dirty: &HashSet<ChunkCoord>) {
        self.forget_ids(dirty.iter().map(|c| [c[0], c[1], c[2], 0]));
    }

    /// Heightmap chunks an edit changed: their rows at every LOD are no
    /// longer current.
    pub fn forget_heightmap(&self, dirty: &[[i32; 2]]) {
        let set: HashSet<[i32; 2]> = dirty.iter().copied().collect();
        self.current
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|k| !set.contains(&[k[0], k[1]]));
    }

    fn forget_ids(&self, ids: impl IntoIterator<Item = [i32; 4]>) {
        let mut current = self.current.write().unwrap_or_else(|e| e.into_inner());
        for id in ids {
            current.remove(&id);
        }
    }
}
