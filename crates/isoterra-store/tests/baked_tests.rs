//! Baked chunks as the store keeps them: the payload codec, the world
//! stamp, and a newer schema refused. (Baking itself, the `baked` table
//! filled from bakes and the input stamps are tested in the kind layer,
//! `isoterra-kind/tests/bake_tests.rs`.)

use isoterra_field::{Side2dGen, Side2dPreset};

use isoterra_store::{
    BakedChunk, BakedCollider, BakedHeightfield, BakedPolyline, HeightmapDocument, Side2dDocument,
    StoreError, WorldFile, decode_baked, encode_baked,
};
use isoterra_world::{
    HeightBrush, HeightTool, HeightmapParams, Side2dBrush, Side2dParams, Side2dTool,
};
use proptest::prelude::*;

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

#[test]
fn the_world_stamp_follows_the_edits() {
    let dir = tempfile::tempdir().unwrap();
    let mut doc =
        HeightmapDocument::create(dir.path().join("h.isoterra"), &height_params()).unwrap();
    let s0 = doc.file().world_stamp().unwrap();
    assert_eq!(s0.len(), 16);
    assert_eq!(doc.file().world_stamp().unwrap(), s0);
    doc.stroke(&HeightBrush::new(HeightTool::Raise, [3.0, 4.0], 6.0))
        .unwrap();
    let s1 = doc.file().world_stamp().unwrap();
    assert_ne!(s1, s0);
    doc.undo().unwrap();
    assert_eq!(doc.file().world_stamp().unwrap(), s0);

    // Another world with other parameters has another stamp.
    let other = HeightmapDocument::create(
        dir.path().join("h2.isoterra"),
        &height_params().with_seed(12),
    )
    .unwrap();
    assert_ne!(other.file().world_stamp().unwrap(), s0);

    let mut side = Side2dDocument::create(dir.path().join("s.isoterra"), &side_params()).unwrap();
    let t0 = side.file().world_stamp().unwrap();
    side.stroke(&Side2dBrush::new(Side2dTool::Dig, [20.0, 20.0], 5.0))
        .unwrap();
    assert_ne!(side.file().world_stamp().unwrap(), t0);
}

#[test]
fn a_newer_schema_is_still_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.isoterra");
    drop(Side2dDocument::create(&path, &side_params()).unwrap());
    let c = rusqlite::Connection::open(&path).unwrap();
    c.pragma_update(None, "user_version", WorldFile::SCHEMA_VERSION + 1)
        .unwrap();
    drop(c);
    assert!(matches!(
        WorldFile::open(&path),
        Err(StoreError::NewerVersion { .. })
    ));
}

fn collider() -> impl Strategy<Value = BakedCollider> {
    let point = prop::array::uniform2(-1e4f32..1e4);
    prop_oneof![
        Just(BakedCollider::None),
        Just(BakedCollider::TriMesh),
        prop::collection::vec(
            (prop::collection::vec(point, 0..6), any::<bool>())
                .prop_map(|(points, closed)| BakedPolyline { points, closed }),
            0..4
        )
        .prop_map(BakedCollider::Polylines),
        (1u32..5, 1u32..5, any::<f32>()).prop_map(|(rows, cols, h)| {
            BakedCollider::Heightfield(BakedHeightfield {
                rows,
                cols,
                heights: (0..rows * cols).map(|i| h + i as f32).collect(),
                scale: [1.0, 2.0, 3.0],
                translation: [-1.0, 0.0, f32::MIN_POSITIVE],
            })
        }),
    ]
}

fn chunk() -> impl Strategy<Value = BakedChunk> {
    (1usize..30, any::<bool>(), collider(), 0u8..4).prop_flat_map(
        |(v, normals, collider, attributes)| {
            (
                prop::collection::vec(prop::array::uniform3(any::<f32>()), v),
                prop::collection::vec(0..v as u32, 0..20),
                Just(normals),
                Just(collider),
                prop::collection::vec(any::<u8>(), v),
                prop::collection::vec(prop::array::uniform2(any::<f32>()), v),
            )
                .prop_map(
                    move |(positions, mut indices, normals, collider, materials, morph)| {
                        indices.truncate(indices.len() / 3 * 3);
                        BakedChunk {
                            normals: if normals {
                                positions.iter().map(|p| [p[2], p[1], p[0]]).collect()
                            } else {
                                Vec::new()
                            },
                            positions,
                            indices,
                            collider,
                            // Bit 0: materials, bit 1: morph values.
                            materials: if attributes & 1 != 0 {
                                materials
                            } else {
                                Vec::new()
                            },
                            morph: if attributes & 2 != 0 {
                                morph
                            } else {
                                Vec::new()
                            },
                        }
                    },
                )
        },
    )
}

/// The bit patterns of a chunk, so NaN payloads compare too.
type Bits = (Vec<u32>, Vec<u32>, Vec<u32>, String, Vec<u8>, Vec<u32>);

fn bits(c: &BakedChunk) -> Bits {
    let flat = |v: &[[f32; 3]]| v.iter().flatten().map(|f| f.to_bits()).collect();
    (
        flat(&c.positions),
        flat(&c.normals),
        c.indices.clone(),
        format!("{:?}", c.collider),
        c.materials.clone(),
        c.morph.iter().flatten().map(|f| f.to_bits()).collect(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn payloads_round_trip_bit_for_bit(c in chunk()) {
        let (bytes, hash) = encode_baked(&c).unwrap();
        let (back, hash2) = decode_baked(&bytes).unwrap();
        prop_assert_eq!(&hash, &hash2);
        prop_assert_eq!(bits(&back), bits(&c));
        // Chunks without vertex attributes stay in version 1.
        let plain = c.materials.is_empty() && c.morph.is_empty();
        prop_assert_eq!(bytes[4], if plain { 1 } else { 2 });
        // Encoding again gives the same bytes.
        prop_assert_eq!(encode_baked(&back).unwrap().0, bytes);
    }

    #[test]
    fn damaged_payloads_give_errors_not_panics(c in chunk(), cut in 0usize..400, flip in 0usize..400, bit in 0u8..8) {
        let (bytes, _) = encode_baked(&c).unwrap();
        let cut = cut.min(bytes.len().saturating_sub(1));
        prop_assert!(decode_baked(&bytes[..cut]).is_err());
        let mut flipped = bytes.clone();
        let i = flip % flipped.len();
        flipped[i] ^= 1 << bit;
        // Either an error or some chunk: never a panic.
        let _ = decode_baked(&flipped);
    }
}

#[test]
fn encoding_refuses_inconsistent_chunks() {
    let base = BakedChunk {
        positions: vec![[0.0; 3]; 3],
        normals: Vec::new(),
        indices: vec![0, 1, 2],
        collider: BakedCollider::None,
        ..BakedChunk::default()
    };
    assert!(encode_baked(&base).is_ok());
    let mut c = base.clone();
    c.indices = vec![0, 1, 3];
    assert!(encode_baked(&c).is_err());
    let mut c = base.clone();
    c.indices = vec![0, 1];
    assert!(encode_baked(&c).is_err());
    let mut c = base.clone();
    c.normals = vec![[0.0; 3]; 2];
    assert!(encode_baked(&c).is_err());
    let mut c = base;
    c.collider = BakedCollider::Heightfield(BakedHeightfield {
        rows: 2,
        cols: 2,
        heights: vec![0.0; 3],
        ..Default::default()
    });
    assert!(encode_baked(&c).is_err());
    assert!(decode_baked(b"ITBK").is_err());
    assert!(decode_baked(b"XXXX\x01\x00\x00\x00\x00\x00\x00\x00").is_err());
}
