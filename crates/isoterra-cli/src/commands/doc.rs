//! A world file of any kind, opened by what its meta says it holds.

use std::path::Path;

use anyhow::{Context, bail};
use isoterra::store::{
    HEIGHTMAP_KIND, HeightmapDocument, MAP_KIND, MapDocument, SIDE2D_KIND, Side2dDocument,
    VOXEL_KIND, VoxelDocument, detect_kind,
};

/// The world kinds this build can open.
pub const KINDS: &str = "side2d, voxel, heightmap, map";

/// An open world file.
pub enum Doc {
    /// A side-view world.
    Side2d(Box<Side2dDocument>),
    /// A voxel world.
    Voxel(Box<VoxelDocument>),
    /// A heightmap world.
    Heightmap(Box<HeightmapDocument>),
    /// A map world.
    Map(Box<MapDocument>),
}

impl Doc {
    /// Opens `path`, dispatching on the kind recorded in the file.
    pub fn open(path: &Path) -> anyhow::Result<Doc> {
        let kind = detect_kind(path).with_context(|| format!("cannot open {}", path.display()))?;
        let doc = match kind.as_str() {
            SIDE2D_KIND => Doc::Side2d(Box::new(
                Side2dDocument::open(path)
                    .with_context(|| format!("cannot open {}", path.display()))?,
            )),
            VOXEL_KIND => Doc::Voxel(Box::new(
                VoxelDocument::open(path)
                    .with_context(|| format!("cannot open {}", path.display()))?,
            )),
            HEIGHTMAP_KIND => Doc::Heightmap(Box::new(
                HeightmapDocument::open(path)
                    .with_context(|| format!("cannot open {}", path.display()))?,
            )),
            MAP_KIND => Doc::Map(Box::new(
                MapDocument::open(path)
                    .with_context(|| format!("cannot open {}", path.display()))?,
            )),
            other => bail!(
                "{} holds a `{other}` world, which this command cannot open (it knows {KINDS}; map worlds work with new, stroke, undo, redo, info, export)",
                path.display()
            ),
        };
        Ok(doc)
    }

    /// Undoes the last stroke; `None` when there is none.
    pub fn undo(&mut self) -> anyhow::Result<Option<i64>> {
        Ok(match self {
            Doc::Side2d(d) => d.undo()?,
            Doc::Voxel(d) => d.undo()?,
            Doc::Heightmap(d) => d.undo()?,
            Doc::Map(d) => d.undo()?,
        })
    }

    /// Redoes the last undone stroke; `None` when there is none.
    pub fn redo(&mut self) -> anyhow::Result<Option<i64>> {
        Ok(match self {
            Doc::Side2d(d) => d.redo()?,
            Doc::Voxel(d) => d.redo()?,
            Doc::Heightmap(d) => d.redo()?,
            Doc::Map(d) => d.redo()?,
        })
    }

    /// The info record as JSON.
    pub fn info_json(&self) -> anyhow::Result<serde_json::Value> {
        Ok(match self {
            Doc::Side2d(d) => serde_json::to_value(d.info())?,
            Doc::Voxel(d) => serde_json::to_value(d.info())?,
            Doc::Heightmap(d) => serde_json::to_value(d.info())?,
            Doc::Map(d) => serde_json::to_value(d.info())?,
        })
    }

    /// A content hash of the world's current data.
    pub fn content_hash(&self) -> String {
        match self {
            Doc::Side2d(d) => d.content_hash(),
            Doc::Voxel(d) => d.content_hash(),
            Doc::Heightmap(d) => d.content_hash(),
            Doc::Map(d) => d.content_hash(),
        }
    }
}
