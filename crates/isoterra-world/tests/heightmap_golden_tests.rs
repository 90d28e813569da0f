//! Golden hashes of generated heightmap chunks.
//!
//! Generation is a pure function of `(generator, seed, chunk)` (DESIGN.md,
//! "Determinism"), so the bits of a chunk never change unless the generator
//! itself is changed on purpose. These tests pin an FNV-1a-64 hash of the
//! `f32` bits of the LOD-0 heights of a few chunks per preset and seed, and
//! of one LOD-0 mesh's positions.
//!
//! A deliberate change to the noise, the height generator, the presets or
//! the mesher changes these hashes: update the constants in the same change
//! and say why in its description. Any other failure here is a determinism
//! bug (a value that depends on the machine, the build or the path taken).

use isoterra_field::hash::Fnv1a64;
use isoterra_field::{HeightParams, HeightPreset};
use isoterra_world::{HeightBrush, HeightTool, HeightmapParams, HeightmapWorld, MeshKey};

/// FNV-1a, 64-bit, over the little-endian bytes of each word.
fn fnv1a64(words: impl IntoIterator<Item = u32>) -> u64 {
    let mut h = Fnv1a64::new();
    for w in words {
        h.write(&w.to_le_bytes());
    }
    h.finish()
}

fn world(preset: HeightPreset, seed: u64) -> HeightmapWorld {
    let params = HeightmapParams::DEFAULT
        .with_generator(HeightParams::preset(preset))
        .with_seed(seed);
    HeightmapWorld::new(&params).unwrap()
}

const SEEDS: [u64; 2] = [1, 0xDEAD_BEEF];
const CHUNKS: [[i32; 2]; 3] = [[0, 0], [-1, 2], [5, -3]];

/// `(preset, seed, chunk, hash of the LOD-0 heights read by the chunk's mesh)`.
const GOLDEN_HEIGHTS: [(&str, u64, [i32; 2], u64); 18] = [
    ("hills", 0x1, [0, 0], 0x196A4DBC080A1D95),
    ("hills", 0x1, [-1, 2], 0xB98A42568D7B403E),
    ("hills", 0x1, [5, -3], 0x728528EFF721A496),
    ("hills", 0xDEADBEEF, [0, 0], 0x24BF98F710775FAB),
    ("hills", 0xDEADBEEF, [-1, 2], 0xEA49BDA836F900EF),
    ("hills", 0xDEADBEEF, [5, -3], 0x3E0ACE5AE7E7EA8F),
    ("mountains", 0x1, [0, 0], 0xC021A4FC111CACA6),
    ("mountains", 0x1, [-1, 2], 0x9CD458E946908461),
    ("mountains", 0x1, [5, -3], 0x07EC34F60862B8C5),
    ("mountains", 0xDEADBEEF, [0, 0], 0x73B2C1A0699C814D),
    ("mountains", 0xDEADBEEF, [-1, 2], 0xCF1DCD3C4CBE5668),
    ("mountains", 0xDEADBEEF, [5, -3], 0xCDCCC113A389F9AE),
    ("islands", 0x1, [0, 0], 0x84FD52E6C4E7E0DD),
    ("islands", 0x1, [-1, 2], 0xBAB2E6BFAA40267E),
    ("islands", 0x1, [5, -3], 0xF66018E758EA0559),
    ("islands", 0xDEADBEEF, [0, 0], 0xB4FC70264DBF811C),
    ("islands", 0xDEADBEEF, [-1, 2], 0x067A137139912FE5),
    ("islands", 0xDEADBEEF, [5, -3], 0xA5CA4DA9BA9D0967),
];

/// Hash of the LOD-0 mesh positions of chunk `[-1, 2]` of the hills preset,
/// seed 1, unstitched.
const GOLDEN_MESH_POSITIONS: u64 = 0x8546_D98B_3D56_A1A3;

fn heights_hash(w: &HeightmapWorld, chunk: [i32; 2]) -> (u64, usize) {
    let mut heights = Vec::new();
    w.chunk_heights(chunk, 0, &mut heights).unwrap();
    assert!(heights.iter().all(|h| h.is_finite()));
    (fnv1a64(heights.iter().map(|h| h.to_bits())), heights.len())
}

fn computed() -> Vec<(&'static str, u64, [i32; 2], u64)> {
    let mut out = Vec::new();
    for preset in HeightPreset::ALL {
        for seed in SEEDS {
            let w = world(preset, seed);
            for chunk in CHUNKS {
                let (h, len) = heights_hash(&w, chunk);
                // 64 cells plus the apron: (64 + 3)² heights.
                assert_eq!(len, 67 * 67);
                out.push((preset.name(), seed, chunk, h));
            }
        }
    }
    out
}

#[test]
fn chunk_heights_match_their_golden_hashes() {
    let got = computed();
    assert_eq!(got.len(), GOLDEN_HEIGHTS.len());
    for (g, want) in got.iter().zip(GOLDEN_HEIGHTS.iter()) {
        assert_eq!(
            g, want,
            "generated heights changed for {} seed {} chunk {:?}",
            want.0, want.1, want.2
        );
    }
}

#[test]
fn golden_hashes_tell_chunks_seeds_and_presets_apart() {
    // The pinned hashes are a useful fingerprint only if they differ.
    let mut hashes: Vec<u64> = GOLDEN_HEIGHTS.iter().map(|g| g.3).collect();
    hashes.sort_unstable();
    hashes.dedup();
    assert_eq!(hashes.len(), GOLDEN_HEIGHTS.len());
}

#[test]
fn region_heights_agree_with_chunk_heights() {
    // The owned nodes of a chunk, read through the region API, are the same
    // bits as the matching part of the chunk's height block.
    let w = world(HeightPreset::Mountains, SEEDS[1]);
    let chunk = [5, -3];
    let mut block = Vec::new();
    w.chunk_heights(chunk, 0, &mut block).unwrap();
    let (x0, z0) = (i64::from(chunk[0]) * 64, i64::from(chunk[1]) * 64);
    for (dz, dx) in [(0i64, 0i64), (5, 17), (63, 63), (64, 64), (30, 64)] {
        let h = w.height([x0 + dx, z0 + dz]);
        // The block has a one-node apron on the low side.
        let idx = ((dz + 1) * 67 + (dx + 1)) as usize;
        assert_eq!(h.to_bits(), block[idx].to_bits(), "node ({dx}, {dz})");
    }
}

#[test]
fn chunk_mesh_positions_match_their_golden_hash() {
    let w = world(HeightPreset::Hills, SEEDS[0]);
    let mesh = w.build_mesh(&MeshKey::new([-1, 2], 0)).unwrap();
    assert_eq!(mesh.positions.len(), 65 * 65);
    let h = fnv1a64(mesh.positions.iter().flat_map(|p| p.map(f32::to_bits)));
    assert_eq!(h, GOLDEN_MESH_POSITIONS, "LOD-0 mesh positions changed");
}

#[test]
fn chunk_heights_equal_node_heights_at_every_lod_and_cell_size() {
    // Chunk heights may come from the generator's batch fill; they must be
    // the bits of the per-node path, edits included, for cell sizes where
    // the batch applies (1, 0.5) and where it does not (0.3).
    for cell_size in [1.0f32, 0.5, 0.3] {
        let params = HeightmapParams::DEFAULT
            .with_generator(HeightParams::preset(HeightPreset::Mountains))
            .with_seed(5)
            .with_chunk_cells(16)
            .with_lod_count(4)
            .with_cell_size(cell_size);
        let mut w = HeightmapWorld::new(&params).unwrap();
        let brush = HeightBrush::new(HeightTool::Raise, [8.0 * cell_size, 8.0 * cell_size], 9.0)
            .with_strength(1.0);
        assert!(!w.apply_brush(&brush).unwrap().is_empty());
        let mut block = Vec::new();
        for chunk in [[0, 0], [-1, 0], [0, -1], [5, -3]] {
            for lod in 0..4u8 {
                w.chunk_heights(chunk, lod, &mut block).unwrap();
                let step = 1i64 << lod;
                let side = (16 >> lod) + 3;
                assert_eq!(block.len(), (side * side) as usize);
                for j in 0..side {
                    for i in 0..side {
                        let g = [
                            i64::from(chunk[0]) * 16 + (i - 1) * step,
                            i64::from(chunk[1]) * 16 + (j - 1) * step,
                        ];
                        let got = block[(j * side + i) as usize];
                        assert_eq!(
                            got.to_bits(),
                            w.height(g).to_bits(),
                            "cell size {cell_size}, chunk {chunk:?}, LOD {lod}, node {g:?}"
                        );
                    }
                }
            }
        }
    }
}

/// A mountains world, seed 7, 16-cell chunks, cells of `cell_size`.
fn mountains(cell_size: f32) -> HeightmapWorld {
    let params = HeightmapParams::DEFAULT
        .with_generator(HeightParams::preset(HeightPreset::Mountains))
        .with_seed(7)
        .with_chunk_cells(16)
        .with_cell_size(cell_size);
    HeightmapWorld::new(&params).unwrap()
}

#[test]
fn region_heights_equal_node_heights_at_every_cell_size() {
    // Region heights may come from the generator's batch fill too: the
    // same bits as the per-node path, edits included, where the batch
    // applies (cells of 1, 0.5 and 2) and where it does not (0.3).
    for cell_size in [1.0f32, 0.5, 2.0, 0.3] {
        let mut w = mountains(cell_size);
        let brush = HeightBrush::new(HeightTool::Raise, [4.0 * cell_size, 6.0 * cell_size], 7.0)
            .with_strength(1.0);
        assert!(!w.apply_brush(&brush).unwrap().is_empty());
        let mut out = Vec::new();
        for (first, dims) in [
            ([-7i64, -3i64], [29u32, 17u32]),
            ([100, -250], [9, 40]),
            ([-1_000_000, 999_990], [13, 3]),
        ] {
            w.region_heights(first, dims, &mut out).unwrap();
            assert_eq!(out.len(), (dims[0] * dims[1]) as usize);
            for j in 0..i64::from(dims[1]) {
                for i in 0..i64::from(dims[0]) {
                    let g = [first[0] + i, first[1] + j];
                    let got = out[(j * i64::from(dims[0]) + i) as usize];
                    assert_eq!(
                        got.to_bits(),
                        w.height(g).to_bits(),
                        "cell size {cell_size}, node {g:?}"
                    );
                }
            }
        }
    }
}

/// `(cell size, hash of every tool's edit)`: a brush reads the generated
/// heights of its square eight at a time where the batch applies (cells of
/// one unit) and node by node where it does not (0.3); both give the bits
/// of the node-by-node reads. The erode tool's edit changes with the
/// droplet model too (see `golden_hash_pins_the_droplet_model`).
const GOLDEN_BRUSH_EDITS: [(f32, u64); 2] =
    [(1.0, 0xb27c_a1ae_ee38_c8cc), (0.3, 0x7f0c_a30a_f621_104a)];

#[test]
fn brush_edits_of_every_tool_are_pinned() {
    for (cell_size, want) in GOLDEN_BRUSH_EDITS {
        let mut w = mountains(cell_size);
        let mut words = Vec::new();
        for (k, tool) in HeightTool::ALL.into_iter().enumerate() {
            let at = [
                (3.0 + k as f32) * cell_size,
                (-5.0 + 2.0 * k as f32) * cell_size,
            ];
            let brush = HeightBrush::new(tool, at, 9.0 * cell_size).with_strength(0.8);
            let edit = w.brush_edit(&brush).unwrap();
            assert!(!edit.is_empty(), "{tool:?} at cell size {cell_size}");
            for ((g, b), a) in edit.nodes.iter().zip(&edit.before).zip(&edit.after) {
                words.extend([g[0] as u32, g[1] as u32, b.to_bits(), a.to_bits()]);
            }
            w.apply_brush(&brush).unwrap();
        }
        let got = fnv1a64(words);
        assert_eq!(got, want, "cell size {cell_size}: got {got:#018x}");
    }
}
