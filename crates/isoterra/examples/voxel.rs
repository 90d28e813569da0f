//! A voxel world end to end: create a world file, dig a cave, undo and redo
//! it, and export the meshes of a small region as glb.
//!
//! ```text
//! cargo run -p isoterra --example voxel
//! ```
//!
//! Everything goes to a new folder in the temporary directory, whose path
//! is printed.

use std::path::PathBuf;

use isoterra::export::{GlbMesh, export_glb};
use isoterra::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = example_dir("voxel")?;
    let file = dir.join("caves.isoterra");

    // Endless ground with caves, in chunks of 16^3 cells of one world unit.
    let params = VoxelParams::DEFAULT
        .with_generator(VoxelGen::new(VoxelPreset::Caves, 5))
        .with_chunk_cells(16);
    let mut doc = VoxelDocument::create(&file, &params)?;
    println!("created {}", file.display());
    let fresh = doc.content_hash();

    // Dig a ball out of the ground below the origin; the stroke is in the
    // file when `stroke` returns.
    let dig = VoxelBrush::new(VoxelTool::Dig, [0.0, -4.0, 0.0], 6.0);
    let outcome = doc.stroke(&dig)?;
    let id = outcome.id.ok_or("the dig changed nothing")?;
    println!("stroke {id}: dug {} nodes", outcome.changed_nodes);
    let dug = doc.content_hash();

    // Undo gives the generated ground back exactly; redo digs again.
    doc.undo()?.ok_or("nothing to undo")?;
    assert_eq!(doc.content_hash(), fresh);
    doc.redo()?.ok_or("nothing to redo")?;
    assert_eq!(doc.content_hash(), dug);
    println!("undid and redid stroke {id} (content hash {dug})");

    // Load and mesh the 2 x 2 x 2 chunks around the hole, one glb mesh per
    // chunk.
    let (min, max) = doc
        .world()
        .chunks_covering([-16.0, -16.0, -16.0], [15.0, 15.0, 15.0])?;
    doc.ensure_region(min, max)?;
    doc.rebuild(None);
    let world = doc.world();
    let mut names = Vec::new();
    let mut meshes = Vec::new();
    for c in world.meshed_chunks() {
        let inside = (0..3).all(|k| min[k] <= c[k] && c[k] <= max[k]);
        if let Some(mesh) = world.chunk_mesh(c).filter(|m| inside && !m.is_empty()) {
            names.push(format!("chunk_{}_{}_{}", c[0], c[1], c[2]));
            meshes.push(mesh);
        }
    }
    let glb_meshes: Vec<GlbMesh> = names
        .iter()
        .zip(&meshes)
        .map(|(name, m)| GlbMesh::new(name, &m.positions, &m.indices).with_normals(&m.normals))
        .collect();
    let glb = export_glb(&glb_meshes)?;
    let glb_path = dir.join("caves.glb");
    std::fs::write(&glb_path, &glb)?;
    let triangles: usize = meshes.iter().map(|m| m.indices.len() / 3).sum();
    println!(
        "wrote {} ({} chunks, {triangles} triangles, {} bytes)",
        glb_path.display(),
        meshes.len(),
        glb.len()
    );
    Ok(())
}

/// A new folder in the temporary directory for this run.
fn example_dir(kind: &str) -> std::io::Result<PathBuf> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let dir = std::env::temp_dir().join(format!(
        "isoterra-example-{kind}-{}-{nanos}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}
