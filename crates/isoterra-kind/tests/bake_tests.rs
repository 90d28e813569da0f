//! Baking: bake plans and their parts, order independence, what each
//! kind's baked chunks hold, bakes stored in the `baked` table (content
//! hash, a schema version 1 file), input boxes and the per-chunk input
//! stamps that make a bake after an edit redo only what it changed.

use std::path::{Path, PathBuf};

use isoterra_field::{Side2dGen, Side2dPreset, VoxelGen, VoxelPreset};
use std::collections::{BTreeMap, BTreeSet};

use isoterra_kind::{
    BakeInputBox, BakeInputs, BakePlan, BakeSource, ChunkBaker, MAX_BAKE_CHUNKS, bake_chunks,
};
use isoterra_store::{
    BAKED_TERRAIN, BAKED_WATER, BakedChunk, BakedCollider, BakedRow, ChunkKey, ChunkLayer,
    ChunkStore, HeightmapDocument, MapDocument, MemoryStore, Side2dDocument, StoreError,
    VoxelDocument, WorldFile, encode_baked,
};
use isoterra_world::{
    HeightBrush, HeightTool, HeightmapParams, MapParams, Side2dBrush, Side2dParams, Side2dTool,
    VoxelBrush, VoxelParams, VoxelTool,
};
use proptest::prelude::*;

fn voxel_params() -> VoxelParams {
    VoxelParams::DEFAULT
        .with_chunk_cells(8)
        .with_generator(VoxelGen::new(VoxelPreset::Caves, 42))
}

fn height_params() -> HeightmapParams {
    HeightmapParams::DEFAULT.with_chunk_cells(16).with_seed(11)
}

fn side_params() -> Side2dParams {
    Side2dParams::DEFAULT.with_chunk_cells(16).with_generator(
        Side2dGen::DEFAULT
            .with_preset(Side2dPreset::Caves)
            .with_seed(5)
            .with_size(64, 40),
    )
}

fn hashes(baked: &[(ChunkKey, BakedChunk)]) -> Vec<(ChunkKey, String)> {
    let mut out: Vec<_> = baked
        .iter()
        .map(|(k, c)| (*k, c.content_hash().unwrap()))
        .collect();
    out.sort();
    out
}

/// A deterministic permutation (an LCG walk), different from any sort.
fn scrambled(keys: &[ChunkKey]) -> Vec<ChunkKey> {
    let mut out = keys.to_vec();
    let mut s = 12345u64;
    for i in (1..out.len()).rev() {
        s = s
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        out.swap(i, (s >> 33) as usize % (i + 1));
    }
    out
}

#[test]
fn voxel_bakes_do_not_depend_on_the_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut doc = VoxelDocument::create(dir.path().join("v.isoterra"), &voxel_params()).unwrap();
    doc.stroke(&VoxelBrush::new(VoxelTool::Dig, [4.0, 3.0, 5.0], 5.0))
        .unwrap();
    for lod in [0u8, 1] {
        let source = BakeSource::Voxel(doc.world());
        let plan = source
            .plan(&[-8.0, -8.0, -8.0], &[16.0, 16.0, 16.0], lod)
            .unwrap();
        let keys: Vec<ChunkKey> = plan.keys().collect();
        assert_eq!(keys.len() as u64, plan.count());
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "canonical order");
        let forward = bake_chunks(&source, &keys).unwrap();
        let mut backward_keys = keys.clone();
        backward_keys.reverse();
        let backward = bake_chunks(&source, &backward_keys).unwrap();
        let shuffled = bake_chunks(&source, &scrambled(&keys)).unwrap();
        assert_eq!(hashes(&forward), hashes(&backward));
        assert_eq!(hashes(&forward), hashes(&shuffled));
        assert!(forward.iter().any(|(_, c)| c.triangle_count() > 0));
        for (_, c) in &forward {
            assert_eq!(c.collider, BakedCollider::TriMesh);
            assert_eq!(c.normals.len(), c.positions.len());
        }
        // Payload bytes are equal too, not only the decoded content.
        let bytes = |v: &[(ChunkKey, BakedChunk)]| {
            let mut b: Vec<_> = v
                .iter()
                .map(|(k, c)| (*k, encode_baked(c).unwrap().0))
                .collect();
            b.sort();
            b
        };
        assert_eq!(bytes(&forward), bytes(&shuffled));
    }
}

#[test]
fn heightmap_and_side2d_bakes_carry_their_colliders() {
    let dir = tempfile::tempdir().unwrap();
    let hm = HeightmapDocument::create(dir.path().join("h.isoterra"), &height_params()).unwrap();
    let source = BakeSource::Heightmap(hm.world());
    let plan = source.plan(&[-20.0, 0.0], &[20.0, 16.0], 1).unwrap();
    assert_eq!((plan.min, plan.max), ([-2, 0, 0], [1, 0, 0]));
    let keys: Vec<ChunkKey> = plan.keys().collect();
    let baked = bake_chunks(&source, &keys).unwrap();
    assert_eq!(
        hashes(&baked),
        hashes(&bake_chunks(&source, &scrambled(&keys)).unwrap())
    );
    for (_, c) in &baked {
        let BakedCollider::Heightfield(h) = &c.collider else {
            panic!("a heightmap chunk bakes a heightfield collider");
        };
        // 16 cells at LOD 1: 9 x 9 nodes.
        assert_eq!((h.rows, h.cols, h.heights.len()), (9, 9, 81));
        assert!(c.triangle_count() > 0);
    }

    let mut side = Side2dDocument::create(dir.path().join("s.isoterra"), &side_params()).unwrap();
    let source = BakeSource::Side2d(side.world());
    let plan = source.plan(&[0.0, 0.0], &[64.0, 40.0], 0).unwrap();
    assert_eq!((plan.min, plan.max), ([0, 0, 0], [3, 2, 0]));
    // A fresh world is not rebuilt yet: baking says so instead of guessing.
    let first = plan.keys().next().unwrap();
    assert!(matches!(
        ChunkBaker::new().bake(&source, &first),
        Err(StoreError::InvalidInput { .. })
    ));
    side.rebuild();
    let source = BakeSource::Side2d(side.world());
    let keys: Vec<ChunkKey> = plan.keys().collect();
    let baked = bake_chunks(&source, &keys).unwrap();
    assert!(
        baked
            .iter()
            .any(|(_, c)| matches!(&c.collider, BakedCollider::Polylines(l) if !l.is_empty()))
    );
    assert_eq!(
        hashes(&baked),
        hashes(&bake_chunks(&source, &scrambled(&keys)).unwrap())
    );
    // Clipped to the world; outside is an error.
    let clipped = source.plan(&[-100.0, -5.0], &[20.0, 1000.0], 0).unwrap();
    assert_eq!((clipped.min, clipped.max), ([0, 0, 0], [1, 2, 0]));
    assert!(source.plan(&[100.0, 0.0], &[200.0, 10.0], 0).is_err());
}

#[test]
fn bad_regions_and_lods_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let doc = VoxelDocument::create(dir.path().join("v.isoterra"), &voxel_params()).unwrap();
    let v = BakeSource::Voxel(doc.world());
    let bad = |r: Result<_, StoreError>| matches!(r, Err(StoreError::InvalidInput { .. }));
    assert!(bad(v.plan(&[f32::NAN, 0.0, 0.0], &[1.0; 3], 0)));
    assert!(bad(v.plan(&[0.0; 3], &[f32::INFINITY, 1.0, 1.0], 0)));
    assert!(bad(v.plan(&[0.0; 3], &[1.0, 0.0, 1.0], 0)), "empty");
    assert!(bad(v.plan(&[2.0; 3], &[1.0; 3], 0)), "inverted");
    assert!(bad(v.plan(&[0.0; 2], &[1.0; 2], 0)), "2 axes for voxel");
    assert!(bad(v.plan(&[0.0; 3], &[1.0; 3], 17)), "lod");
    assert!(bad(v.plan(&[0.0; 3], &[1e9, 8.0, 8.0], 0)), "far away");
    // 101 x 100 x 100 chunks of 8 cells: just over the cap.
    let err = v.plan(&[0.0; 3], &[808.0, 800.0, 800.0], 0).unwrap_err();
    assert!(err.to_string().contains("at most"), "{err}");
    let ok = v.plan(&[0.0; 3], &[800.0, 800.0, 800.0], 0).unwrap();
    assert_eq!(ok.count(), MAX_BAKE_CHUNKS);
    // Coarser LODs have fewer, larger chunks.
    assert_eq!(
        v.plan(&[0.0; 3], &[800.0, 800.0, 800.0], 2)
            .unwrap()
            .count(),
        25 * 25 * 25
    );

    let hm = HeightmapDocument::create(dir.path().join("h.isoterra"), &height_params()).unwrap();
    let h = BakeSource::Heightmap(hm.world());
    assert!(bad(h.plan(&[0.0; 2], &[1.0; 2], h.max_lod() + 1)));
    assert!(h.plan(&[0.0; 2], &[1.0; 2], h.max_lod()).is_ok());
    let mut side = Side2dDocument::create(dir.path().join("s.isoterra"), &side_params()).unwrap();
    side.rebuild();
    let s = BakeSource::Side2d(side.world());
    assert!(
        bad(s.plan(&[0.0; 2], &[1.0; 2], 1)),
        "side2d has LOD 0 only"
    );
    let outside = ChunkKey {
        layer: BAKED_TERRAIN,
        x: 9,
        y: 0,
        z: 0,
        lod: 0,
    };
    assert!(matches!(
        ChunkBaker::new().bake(&s, &outside),
        Err(StoreError::InvalidInput { .. })
    ));
}

#[test]
fn stored_bakes_round_trip_and_hash_independently_of_insertion_order() {
    let dir = tempfile::tempdir().unwrap();
    let doc = VoxelDocument::create(dir.path().join("src.isoterra"), &voxel_params()).unwrap();
    let source = BakeSource::Voxel(doc.world());
    let plan = source.plan(&[-8.0; 3], &[16.0; 3], 0).unwrap();
    let keys: Vec<ChunkKey> = plan.keys().collect();
    let baked = bake_chunks(&source, &keys).unwrap();
    let stamp = doc.file().world_stamp().unwrap();
    let rows: Vec<BakedRow> = baked
        .iter()
        .map(|(k, c)| BakedRow::new(*k, &stamp, c).unwrap())
        .collect();

    let a_path = dir.path().join("a.isoterra");
    let b_path = dir.path().join("b.isoterra");
    let mut a = VoxelDocument::create(&a_path, &voxel_params()).unwrap();
    drop(VoxelDocument::create(&b_path, &voxel_params()).unwrap());
    let mut fa = WorldFile::open(&a_path).unwrap();
    let mut fb = WorldFile::open(&b_path).unwrap();
    assert_eq!(fa.baked_content_hash().unwrap(), None);
    assert_eq!(fa.stored_content_hash("abc").unwrap(), "abc");
    for chunk in rows.chunks(5) {
        fa.put_baked(chunk).unwrap();
    }
    let mut reversed = rows.clone();
    reversed.reverse();
    for chunk in reversed.chunks(7) {
        fb.put_baked(chunk).unwrap();
    }
    assert_eq!(fa.baked_count().unwrap(), rows.len() as u64);
    let ha = fa.baked_content_hash().unwrap().unwrap();
    assert_eq!(Some(ha.clone()), fb.baked_content_hash().unwrap());
    assert_eq!(fa.baked_hashes().unwrap(), fb.baked_hashes().unwrap());
    assert_ne!(fa.stored_content_hash("abc").unwrap(), "abc");
    for (k, c) in &baked {
        assert_eq!(fa.baked(k).unwrap().as_ref(), Some(c));
    }
    assert_eq!(fa.baked_keys_from(&stamp).unwrap().len(), rows.len());
    assert!(fa.baked_keys_from("0000000000000000").unwrap().is_empty());

    // Baked rows are derived data: the document that opened the file before
    // they were written can still commit strokes.
    a.stroke(&VoxelBrush::new(VoxelTool::Dig, [0.0, 0.0, 0.0], 4.0))
        .unwrap();

    // Replacing one row changes the hash; writing it back restores it.
    let mut other = rows[0].clone();
    let (payload, hash) = encode_baked(&BakedChunk::default()).unwrap();
    other.payload = payload;
    other.hash = hash;
    fb.put_baked(&[other]).unwrap();
    assert_ne!(fb.baked_content_hash().unwrap().unwrap(), ha);
    fb.put_baked(&rows[..1]).unwrap();
    assert_eq!(fb.baked_content_hash().unwrap().unwrap(), ha);

    // A payload that does not match its recorded hash is reported.
    let mut lying = rows[1].clone();
    lying.hash = "0123456789abcdef".into();
    fb.put_baked(&[lying]).unwrap();
    assert!(matches!(
        fb.baked_content_hash(),
        Err(StoreError::Corrupt { .. })
    ));
    assert!(matches!(
        fb.baked(&rows[1].key),
        Err(StoreError::Corrupt { .. })
    ));
}

fn fixture_copy(dir: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../isoterra-store/tests/data/side2d_v1.isoterra");
    let path = dir.join("v1.isoterra");
    std::fs::copy(src, &path).unwrap();
    path
}

fn schema_version(path: &Path) -> i64 {
    let c = rusqlite::Connection::open(path).unwrap();
    c.pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap()
}

#[test]
fn a_schema_version_1_file_gets_the_baked_table_on_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture_copy(dir.path());
    assert_eq!(schema_version(&path), 1);
    let mut doc = Side2dDocument::open(&path).unwrap();
    assert_eq!(schema_version(&path), i64::from(WorldFile::SCHEMA_VERSION));
    assert_eq!(doc.file().baked_count().unwrap(), 0);
    doc.file().integrity_check().unwrap();
    doc.rebuild();
    let source = BakeSource::Side2d(doc.world());
    let plan = source.plan(&[0.0, 0.0], &[16.0, 8.0], 0).unwrap();
    let keys: Vec<ChunkKey> = plan.keys().collect();
    let baked = bake_chunks(&source, &keys).unwrap();
    let stamp = doc.file().world_stamp().unwrap();
    let rows: Vec<BakedRow> = baked
        .iter()
        .map(|(k, c)| BakedRow::new(*k, &stamp, c).unwrap())
        .collect();
    let mut f = WorldFile::open(&path).unwrap();
    f.put_baked(&rows).unwrap();
    drop(f);
    // The stroke log still works, and the file reopens with its bakes.
    let id = doc.undo().unwrap();
    assert!(id.is_some());
    drop(doc);
    let doc = Side2dDocument::open(&path).unwrap();
    assert_eq!(doc.file().baked_count().unwrap(), rows.len() as u64);
    assert_eq!(doc.info().undo_position, 0);
}

#[test]
fn a_lod_0_voxel_bake_matches_the_worlds_own_chunk_mesh() {
    let dir = tempfile::tempdir().unwrap();
    let mut doc = VoxelDocument::create(dir.path().join("v.isoterra"), &voxel_params()).unwrap();
    doc.stroke(&VoxelBrush::new(VoxelTool::Dig, [4.0, 3.0, 5.0], 5.0))
        .unwrap();
    doc.ensure_region([-1, -1, -1], [1, 1, 1]).unwrap();
    doc.rebuild(None);
    let source = BakeSource::Voxel(doc.world());
    let plan = source.plan(&[-8.0; 3], &[16.0; 3], 0).unwrap();
    let mut compared = 0;
    for (key, baked) in bake_chunks(&source, &plan.keys().collect::<Vec<_>>()).unwrap() {
        let own = doc.world().chunk_mesh([key.x, key.y, key.z]).unwrap();
        // The same triangles; positions and normals agree up to the last
        // bits of rounding (the LOD mesher places vertices from its own
        // base-node formula).
        assert_eq!(baked.indices, own.indices, "{key:?}");
        let close = |a: &[[f32; 3]], b: &[[f32; 3]]| {
            a.len() == b.len()
                && a.iter()
                    .flatten()
                    .zip(b.iter().flatten())
                    .all(|(x, y)| (x - y).abs() <= 1e-4 * (1.0 + x.abs()))
        };
        assert!(close(&baked.positions, &own.positions), "{key:?}");
        assert!(close(&baked.normals, &own.normals), "{key:?}");
        compared += usize::from(!own.indices.is_empty());
    }
    assert!(compared > 0);
}

#[test]
fn map_bakes_terrain_and_water_layers_in_any_order() {
    use isoterra_store::{BAKED_WATER, MapDocument};
    use isoterra_world::MapParams;
    let dir = tempfile::tempdir().unwrap();
    let params = MapParams::DEFAULT.with_size(48, 40).with_chunk_cells(16);
    let doc = MapDocument::create(dir.path().join("m.isoterra"), &params).unwrap();
    let source = BakeSource::Map(doc.world());
    assert_eq!(source.kind(), "map");
    let plan = source.plan(&[-5.0, 0.0], &[1000.0, 20.0], 0).unwrap();
    assert_eq!(
        (plan.min, plan.max, plan.layer_count),
        ([0, 0, 0], [2, 1, 0], 2)
    );
    let keys: Vec<ChunkKey> = plan.keys().collect();
    assert_eq!(keys.len() as u64, plan.count());
    assert_eq!(keys.len(), 12);
    assert!(keys.iter().filter(|k| k.layer == BAKED_WATER).count() == 6);
    let baked = bake_chunks(&source, &keys).unwrap();
    assert_eq!(
        hashes(&baked),
        hashes(&bake_chunks(&source, &scrambled(&keys)).unwrap())
    );
    for (k, c) in &baked {
        if k.layer == BAKED_TERRAIN {
            assert!(c.triangle_count() > 0, "{k:?}");
            assert_eq!(c.collider, BakedCollider::TriMesh);
        } else {
            assert_eq!(c.collider, BakedCollider::None);
        }
    }
    assert!(source.plan(&[0.0, 0.0], &[10.0, 10.0], 1).is_err());
    assert!(source.plan(&[500.0, 0.0], &[600.0, 10.0], 0).is_err());
    let bad_layer = ChunkKey {
        layer: isoterra_store::ChunkLayer(2),
        ..keys[0]
    };
    assert!(ChunkBaker::new().bake(&source, &bad_layer).is_err());
}

fn small_plan(min: [i32; 3], size: [i32; 3], layers: u16) -> BakePlan {
    BakePlan {
        layer: BAKED_TERRAIN,
        layer_count: layers,
        min,
        max: [0, 1, 2].map(|a| min[a] + size[a] - 1),
        lod: 0,
    }
}

/// Checks that `parts` parts of `plan` are contiguous, ordered, near-equal
/// ranges that together are the plan's keys.
fn check_parts(plan: &BakePlan, parts: u64) {
    let all: Vec<ChunkKey> = plan.keys().collect();
    let n = all.len() as u64;
    let mut joined = Vec::new();
    let mut next = 0;
    for i in 0..parts {
        let r = plan.part_range(i, parts).unwrap();
        assert_eq!(
            r.start,
            next,
            "part {i} of {parts} starts where {} ended",
            i.wrapping_sub(1)
        );
        assert!(
            (r.end - r.start).abs_diff(n / parts) <= 1,
            "{r:?} of {n} in {parts}"
        );
        next = r.end;
        let keys: Vec<ChunkKey> = plan.part_keys(i, parts).unwrap().collect();
        assert_eq!(keys.len() as u64, r.end - r.start);
        assert!(keys.iter().all(|k| plan.contains(k)));
        joined.extend(keys);
    }
    assert_eq!(next, n);
    assert_eq!(joined, all, "the parts in order are the plan's keys");
}

#[test]
fn parts_split_the_plan_into_contiguous_ranges() {
    let plan = small_plan([-2, 0, 3], [4, 3, 5], 1);
    assert_eq!(plan.count(), 60);
    for parts in [1, 2, 3, 7, 60, 61, 200] {
        check_parts(&plan, parts);
    }
    assert_eq!(plan.part_range(0, 4).unwrap(), 0..15);
    assert_eq!(plan.part_range(3, 4).unwrap(), 45..60);
    assert_eq!(plan.part_range(0, 7).unwrap(), 0..8);
    assert_eq!(plan.part_range(6, 7).unwrap(), 51..60);
    // More parts than keys: some parts are empty, none overlap.
    assert_eq!(plan.part_range(0, 120).unwrap(), 0..0);
    assert_eq!(plan.part_range(1, 120).unwrap(), 0..1);
    // Maps: the terrain layer first, then water.
    let map = small_plan([0, 0, 0], [2, 2, 1], 2);
    let second: Vec<ChunkKey> = map.part_keys(1, 2).unwrap().collect();
    assert!(second.iter().all(|k| k.layer == ChunkLayer(1)));
    // Huge part counts do not overflow.
    let r = plan.part_range(u64::MAX - 1, u64::MAX).unwrap();
    assert_eq!(r.end, 60);
    assert!(r.start >= 59);
}

#[test]
fn bad_parts_are_refused() {
    let plan = small_plan([0, 0, 0], [2, 2, 2], 1);
    for (part, parts) in [(0, 0), (5, 0), (2, 2), (3, 2), (u64::MAX, 1)] {
        let err = plan.part_range(part, parts).unwrap_err();
        assert!(matches!(err, StoreError::InvalidInput { .. }), "{err:?}");
        assert!(plan.part_keys(part, parts).is_err());
    }
    let err = plan.part_range(0, 0).unwrap_err().to_string();
    assert!(err.contains("0 parts"), "{err}");
    let err = plan.part_range(2, 2).unwrap_err().to_string();
    assert!(err.contains("0 to 1"), "{err}");
}

/// Bakes `keys` into `store` through the trait, one commit per key.
fn bake_into(
    store: &mut dyn ChunkStore,
    source: &BakeSource<'_>,
    keys: &[ChunkKey],
) -> Result<(), StoreError> {
    let stamp = store.world_stamp()?;
    let done = store.baked_keys_from(&stamp)?;
    let todo: Vec<ChunkKey> = keys.iter().filter(|k| !done.contains(k)).copied().collect();
    for (key, chunk) in bake_chunks(source, &todo)? {
        store.put_baked(&[BakedRow::new(key, &stamp, &chunk)?])?;
    }
    Ok(())
}

#[test]
fn parts_baked_through_the_trait_in_any_order_equal_a_whole_bake() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v.isoterra");
    let mut doc = VoxelDocument::create(&path, &voxel_params()).unwrap();
    doc.stroke(&VoxelBrush::new(VoxelTool::Dig, [4.0, 3.0, 5.0], 5.0))
        .unwrap();
    drop(doc);
    let copy = dir.path().join("copy.isoterra");
    let doc = VoxelDocument::open(&path).unwrap();
    let source = BakeSource::Voxel(doc.world());
    let plan = source
        .plan(&[-8.0, -8.0, -8.0], &[16.0, 16.0, 16.0], 0)
        .unwrap();
    let whole: Vec<ChunkKey> = plan.keys().collect();
    {
        let mut file = WorldFile::open(&path).unwrap();
        file.checkpoint().unwrap();
        std::fs::copy(&path, &copy).unwrap();
        bake_into(&mut file, &source, &whole).unwrap();
    }
    let mut other = WorldFile::open(&copy).unwrap();
    assert_eq!(
        other.world_stamp().unwrap(),
        WorldFile::open(&path).unwrap().world_stamp().unwrap()
    );
    let store: &mut dyn ChunkStore = &mut other;
    for part in [3, 0, 2, 1] {
        let keys: Vec<ChunkKey> = plan.part_keys(part, 4).unwrap().collect();
        bake_into(store, &source, &keys).unwrap();
        // Baking the same part again finds it done.
        bake_into(store, &source, &keys).unwrap();
    }
    let a = WorldFile::open(&path).unwrap();
    assert_eq!(
        store.baked_content_hash().unwrap(),
        a.baked_content_hash().unwrap()
    );
    assert_eq!(store.baked_keys_after(None, 1000).unwrap(), whole);
    for k in &whole {
        assert_eq!(store.baked_row(k).unwrap(), a.baked_row(k).unwrap());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn parts_always_cover_the_plan_once(
        min in prop::array::uniform3(-5i32..5),
        size in prop::array::uniform3(1i32..6),
        layers in 1u16..3,
        parts in 1u64..40,
    ) {
        check_parts(&small_plan(min, size, layers), parts);
    }
}

fn key3(x: i32, y: i32, z: i32, lod: u8) -> ChunkKey {
    ChunkKey {
        layer: BAKED_TERRAIN,
        x,
        y,
        z,
        lod,
    }
}

fn boxed(min: [i32; 3], max: [i32; 3]) -> BakeInputBox {
    BakeInputBox { min, max }
}

#[test]
fn input_boxes_follow_what_each_kind_reads() {
    // Voxel, 8-cell chunks: one chunk either way at LOD 0; at LOD k the 2^k
    // world chunks per axis and one more on each side; once 2^k reaches the
    // chunk size the apron sample lies a whole chunk or more away.
    let v = VoxelDocument::create_in(MemoryStore::new(), &voxel_params()).unwrap();
    let src = BakeSource::Voxel(v.world());
    assert_eq!(
        src.input_box(&key3(0, 0, 0, 0)).unwrap(),
        boxed([-1; 3], [1; 3])
    );
    assert_eq!(
        src.input_box(&key3(1, -1, 2, 1)).unwrap(),
        boxed([1, -3, 3], [4, 0, 6])
    );
    assert_eq!(
        src.input_box(&key3(0, 0, 0, 3)).unwrap(),
        boxed([-1; 3], [9; 3])
    );
    assert_eq!(
        src.input_box(&key3(1, 0, 0, 4)).unwrap(),
        boxed([14, -2, -2], [34, 18, 18])
    );
    assert!(src.input_box(&key3(0, 0, 0, 17)).is_err());
    assert!(src.input_box(&key3(i32::MAX, 0, 0, 16)).is_err());

    // Heightmap, 16-cell chunks: a one-sample apron; at the LOD whose step
    // is the chunk size it reaches two chunks up.
    let h = HeightmapDocument::create_in(MemoryStore::new(), &height_params()).unwrap();
    let src = BakeSource::Heightmap(h.world());
    assert_eq!(
        src.input_box(&key3(3, -2, 0, 0)).unwrap(),
        boxed([2, -3, 0], [4, -1, 0])
    );
    assert_eq!(
        src.input_box(&key3(3, -2, 0, 3)).unwrap(),
        boxed([2, -3, 0], [4, -1, 0])
    );
    if src.max_lod() >= 4 {
        assert_eq!(
            src.input_box(&key3(0, 0, 0, 4)).unwrap(),
            boxed([-1, -1, 0], [2, 2, 0])
        );
    }
    assert!(src.input_box(&key3(0, 0, 1, 0)).is_err());

    // Side view, 4 x 3 chunks: its own and the next chunk up on each axis.
    let mut sd = Side2dDocument::create_in(MemoryStore::new(), &side_params()).unwrap();
    sd.rebuild();
    let src = BakeSource::Side2d(sd.world());
    assert_eq!(
        src.input_box(&key3(0, 0, 0, 0)).unwrap(),
        boxed([0, 0, 0], [1, 1, 0])
    );
    assert_eq!(
        src.input_box(&key3(3, 2, 0, 0)).unwrap(),
        boxed([3, 2, 0], [3, 2, 0])
    );
    assert!(src.input_box(&key3(4, 0, 0, 0)).is_err());
    assert!(src.input_box(&key3(-1, 0, 0, 0)).is_err());

    // Map, 4 x 3 chunks of 16 cells: one ring of nodes, both layers.
    let m = MapDocument::create_in(
        MemoryStore::new(),
        &MapParams::DEFAULT.with_size(64, 48).with_chunk_cells(16),
    )
    .unwrap();
    let src = BakeSource::Map(m.world());
    assert_eq!(
        src.input_box(&key3(0, 0, 0, 0)).unwrap(),
        boxed([0, 0, 0], [1, 1, 0])
    );
    let water = ChunkKey {
        layer: BAKED_WATER,
        ..key3(2, 2, 0, 0)
    };
    assert_eq!(src.input_box(&water).unwrap(), boxed([1, 1, 0], [3, 2, 0]));
    let bad_layer = ChunkKey {
        layer: ChunkLayer(2),
        ..key3(0, 0, 0, 0)
    };
    assert!(src.input_box(&bad_layer).is_err());

    let b = boxed([0, 0, 0], [1, 2, 0]);
    assert_eq!(b.count(), 6);
    assert!(b.contains(&ChunkKey::field2(1, 2)));
    assert!(!b.contains(&ChunkKey::field2(2, 2)));
}

#[test]
fn input_stamps_are_the_same_in_any_store_and_differ_per_chunk() {
    let dir = tempfile::tempdir().unwrap();
    let brush = VoxelBrush::new(VoxelTool::Add, [4.0, 3.0, 5.0], 3.0);
    let mut file = VoxelDocument::create(dir.path().join("v.isoterra"), &voxel_params()).unwrap();
    file.stroke(&brush).unwrap();
    let mut mem = VoxelDocument::create_in(MemoryStore::new(), &voxel_params()).unwrap();
    mem.stroke(&brush).unwrap();
    let a = BakeInputs::read(file.file()).unwrap();
    let b = BakeInputs::read(mem.store()).unwrap();
    assert_eq!(a, b);
    assert!(a.stored_count() > 0);
    let src = BakeSource::Voxel(file.world());
    let keys: Vec<ChunkKey> = src
        .plan(&[-8.0; 3], &[16.0; 3], 0)
        .unwrap()
        .keys()
        .collect();
    let stamps: BTreeSet<String> = keys.iter().map(|k| a.stamp(&src, k).unwrap()).collect();
    assert_eq!(stamps.len(), keys.len(), "one stamp per chunk");
    // Another world has another metadata part.
    let other = VoxelDocument::create_in(
        MemoryStore::new(),
        &voxel_params().with_generator(VoxelGen::new(VoxelPreset::Caves, 43)),
    )
    .unwrap();
    assert_ne!(
        BakeInputs::read(other.store()).unwrap().meta_stamp(),
        a.meta_stamp()
    );
}

/// The storage chunks of `store` and their payloads.
fn stored_chunks(store: &dyn ChunkStore) -> BTreeMap<ChunkKey, Vec<u8>> {
    store
        .chunk_keys()
        .unwrap()
        .into_iter()
        .map(|k| (k, store.chunk(&k).unwrap().unwrap()))
        .collect()
}

fn changed_keys(
    a: &BTreeMap<ChunkKey, Vec<u8>>,
    b: &BTreeMap<ChunkKey, Vec<u8>>,
) -> BTreeSet<ChunkKey> {
    a.keys()
        .chain(b.keys())
        .filter(|k| a.get(k) != b.get(k))
        .copied()
        .collect()
}

/// Rows for the keys of `plan` whose recorded source is not their current
/// input stamp (all of them with `fresh`), as a bake would write them.
fn bake_stale(
    source: &BakeSource<'_>,
    store: &dyn ChunkStore,
    keys: &[ChunkKey],
    fresh: bool,
) -> Vec<BakedRow> {
    let inputs = BakeInputs::read(store).unwrap();
    let recorded = store.baked_sources().unwrap();
    let mut baker = ChunkBaker::new();
    let mut out = Vec::new();
    for k in keys {
        let stamp = inputs.stamp(source, k).unwrap();
        if !fresh && recorded.get(k) == Some(&stamp) {
            continue;
        }
        out.push(BakedRow::new(*k, &stamp, &baker.bake(source, k).unwrap()).unwrap());
    }
    out
}

/// A random edit of a small world: tool, centre, radius, and whether the
/// stroke is undone again right away.
type RandomStroke = (u8, [f32; 3], f32, bool);

fn strokes() -> impl Strategy<Value = Vec<RandomStroke>> {
    prop::collection::vec(
        (
            0u8..3,
            prop::array::uniform3(-16.0f32..24.0),
            0.75f32..2.5,
            prop::bool::weighted(0.2),
        ),
        1..4,
    )
}

/// Bakes `plan` incrementally into `store` after each round of strokes and
/// checks it against a fresh bake and against the expected stale set.
fn check_voxel_rounds(lod: u8, rounds: &[Vec<RandomStroke>]) {
    let mut store = MemoryStore::new();
    drop(VoxelDocument::create_in(&mut store, &voxel_params()).unwrap());
    let (lo, hi) = ([-16.0f32; 3], [24.0f32; 3]);
    let span = 1i32 << lod;
    let mut before = stored_chunks(&store);
    for round in rounds {
        // The rebake this round should do: every chunk whose input box (the
        // test's own rule) holds a storage chunk changed since the last one.
        {
            let mut doc = VoxelDocument::open_in(&mut store).unwrap();
            for &(tool, at, r, undo) in round {
                let tool = [VoxelTool::Dig, VoxelTool::Add, VoxelTool::Smooth][tool as usize];
                doc.stroke(&VoxelBrush::new(tool, at, r)).unwrap();
                if undo {
                    doc.undo().unwrap();
                }
            }
        }
        let after = stored_chunks(&store);
        let changed = changed_keys(&before, &after);
        let had_rows = store.baked_count() > 0;
        let (rows, fresh, keys) = {
            let doc = VoxelDocument::open_in(&mut store).unwrap();
            let source = BakeSource::Voxel(doc.world());
            let keys: Vec<ChunkKey> = source.plan(&lo, &hi, lod).unwrap().keys().collect();
            let rows = bake_stale(&source, doc.store(), &keys, false);
            let fresh = bake_stale(&source, doc.store(), &keys, true);
            (rows, fresh, keys)
        };
        let expected: BTreeSet<ChunkKey> = keys
            .iter()
            .filter(|k| {
                !had_rows
                    || changed.iter().any(|t| {
                        [(k.x, t.x), (k.y, t.y), (k.z, t.z)]
                            .iter()
                            .all(|&(c, s)| c * span - 1 <= s && s <= (c + 1) * span)
                    })
            })
            .copied()
            .collect();
        let rebaked: BTreeSet<ChunkKey> = rows.iter().map(|r| r.key).collect();
        assert_eq!(rebaked, expected, "changed storage chunks {changed:?}");
        store.put_baked(&rows).unwrap();
        // Incremental equals fresh, byte for byte and stamp for stamp.
        for f in &fresh {
            let got = store.baked_row(&f.key).unwrap();
            assert!(
                got.as_ref() == Some(f),
                "chunk {:?}: the incremental row differs from a fresh bake",
                f.key
            );
        }
        assert_eq!(store.baked_count(), keys.len());
        before = after;
    }
}

/// The same for a side-view world (4 x 3 chunks of 16 cells).
fn check_side2d_rounds(rounds: &[Vec<RandomStroke>]) {
    let mut store = MemoryStore::new();
    drop(Side2dDocument::create_in(&mut store, &side_params()).unwrap());
    let mut before = stored_chunks(&store);
    for round in rounds {
        {
            let mut doc = Side2dDocument::open_in(&mut store).unwrap();
            for &(tool, at, r, undo) in round {
                let tool = [Side2dTool::Dig, Side2dTool::Fill, Side2dTool::Dig][tool as usize];
                // Spread the centres over the 64 x 40 world.
                let at = [(at[0] + 16.0) * 1.6, at[1] + 16.0];
                doc.stroke(&Side2dBrush::new(tool, at, r * 1.5)).unwrap();
                if undo {
                    doc.undo().unwrap();
                }
            }
        }
        let after = stored_chunks(&store);
        let changed = changed_keys(&before, &after);
        let had_rows = store.baked_count() > 0;
        let (rows, fresh, keys) = {
            let mut doc = Side2dDocument::open_in(&mut store).unwrap();
            doc.rebuild();
            let source = BakeSource::Side2d(doc.world());
            let keys: Vec<ChunkKey> = source
                .plan(&[0.0, 0.0], &[64.0, 40.0], 0)
                .unwrap()
                .keys()
                .collect();
            let rows = bake_stale(&source, doc.store(), &keys, false);
            let fresh = bake_stale(&source, doc.store(), &keys, true);
            (rows, fresh, keys)
        };
        let expected: BTreeSet<ChunkKey> = keys
            .iter()
            .filter(|k| {
                !had_rows
                    || changed.iter().any(|t| {
                        (k.x..=(k.x + 1).min(3)).contains(&t.x)
                            && (k.y..=(k.y + 1).min(2)).contains(&t.y)
                    })
            })
            .copied()
            .collect();
        let rebaked: BTreeSet<ChunkKey> = rows.iter().map(|r| r.key).collect();
        assert_eq!(rebaked, expected, "changed storage chunks {changed:?}");
        store.put_baked(&rows).unwrap();
        for f in &fresh {
            let got = store.baked_row(&f.key).unwrap();
            assert!(
                got.as_ref() == Some(f),
                "chunk {:?}: the incremental row differs from a fresh bake",
                f.key
            );
        }
        before = after;
    }
}

/// The same for a heightmap world (16-cell chunks, LODs 0 to 4: at LOD 4
/// the step is the chunk size and the apron reaches two chunks up).
fn check_heightmap_rounds(lod: u8, rounds: &[Vec<RandomStroke>]) {
    let params = height_params().with_lod_count(5);
    let mut store = MemoryStore::new();
    drop(HeightmapDocument::create_in(&mut store, &params).unwrap());
    let mut before = stored_chunks(&store);
    for round in rounds {
        {
            let mut doc = HeightmapDocument::open_in(&mut store).unwrap();
            for &(tool, at, r, undo) in round {
                let tool =
                    [HeightTool::Raise, HeightTool::Lower, HeightTool::Smooth][tool as usize];
                let at = [at[0] * 2.0, at[2] * 2.0];
                doc.stroke(&HeightBrush::new(tool, at, r * 2.0)).unwrap();
                if undo {
                    doc.undo().unwrap();
                }
            }
        }
        let after = stored_chunks(&store);
        let changed = changed_keys(&before, &after);
        let had_rows = store.baked_count() > 0;
        let (rows, fresh, keys) = {
            let doc = HeightmapDocument::open_in(&mut store).unwrap();
            let source = BakeSource::Heightmap(doc.world());
            let keys: Vec<ChunkKey> = source
                .plan(&[-32.0, -32.0], &[48.0, 48.0], lod)
                .unwrap()
                .keys()
                .collect();
            let rows = bake_stale(&source, doc.store(), &keys, false);
            let fresh = bake_stale(&source, doc.store(), &keys, true);
            (rows, fresh, keys)
        };
        let up = if lod == 4 { 2 } else { 1 };
        let expected: BTreeSet<ChunkKey> = keys
            .iter()
            .filter(|k| {
                !had_rows
                    || changed.iter().any(|t| {
                        (k.x - 1..=k.x + up).contains(&t.x) && (k.y - 1..=k.y + up).contains(&t.y)
                    })
            })
            .copied()
            .collect();
        let rebaked: BTreeSet<ChunkKey> = rows.iter().map(|r| r.key).collect();
        assert_eq!(rebaked, expected, "changed storage chunks {changed:?}");
        store.put_baked(&rows).unwrap();
        for f in &fresh {
            let got = store.baked_row(&f.key).unwrap();
            assert!(
                got.as_ref() == Some(f),
                "chunk {:?}: the incremental row differs from a fresh bake",
                f.key
            );
        }
        before = after;
    }
}

#[test]
fn undoing_an_edit_makes_the_earlier_rows_current_again() {
    let mut store = MemoryStore::new();
    drop(VoxelDocument::create_in(&mut store, &voxel_params()).unwrap());
    let keys_of = |doc: &VoxelDocument<&mut MemoryStore>| -> Vec<ChunkKey> {
        BakeSource::Voxel(doc.world())
            .plan(&[-8.0; 3], &[16.0; 3], 0)
            .unwrap()
            .keys()
            .collect()
    };
    let rows = {
        let doc = VoxelDocument::open_in(&mut store).unwrap();
        bake_stale(
            &BakeSource::Voxel(doc.world()),
            doc.store(),
            &keys_of(&doc),
            false,
        )
    };
    assert_eq!(rows.len(), 27);
    store.put_baked(&rows).unwrap();
    let pristine = stored_chunks(&store);
    let (stale, restored) = {
        let mut doc = VoxelDocument::open_in(&mut store).unwrap();
        doc.stroke(&VoxelBrush::new(VoxelTool::Add, [13.0, 13.0, 13.0], 1.5))
            .unwrap();
        let keys = keys_of(&doc);
        let stale = bake_stale(&BakeSource::Voxel(doc.world()), doc.store(), &keys, false);
        doc.undo().unwrap();
        let restored = bake_stale(&BakeSource::Voxel(doc.world()), doc.store(), &keys, false);
        (stale.len(), restored.len())
    };
    // The stroke stays inside storage chunk (1, 1, 1): the chunks from
    // (0, 0, 0) to (1, 1, 1) read it, the other 19 do not.
    assert_eq!(stored_chunks(&store).len(), 0);
    assert_eq!(stale, 8);
    assert_eq!(stored_chunks(&store), pristine);
    assert_eq!(restored, 0, "undo brings the earlier stamps back");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn incremental_voxel_rebakes_equal_fresh_bakes(
        lod in 0u8..2,
        rounds in prop::collection::vec(strokes(), 1..4),
    ) {
        check_voxel_rounds(lod, &rounds);
    }

    #[test]
    fn incremental_heightmap_rebakes_equal_fresh_bakes(
        lod in 0u8..5,
        rounds in prop::collection::vec(strokes(), 1..4),
    ) {
        check_heightmap_rounds(lod, &rounds);
    }

    #[test]
    fn incremental_side2d_rebakes_equal_fresh_bakes(
        rounds in prop::collection::vec(strokes(), 1..4),
    ) {
        check_side2d_rounds(&rounds);
    }
}
