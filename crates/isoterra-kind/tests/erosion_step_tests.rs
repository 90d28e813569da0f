//! The erosion step of a heightmap recipe: a world made from a recipe with
//! `erosion` starts eroded over the step's region (as `Document::erode`
//! of that region would make it, but with no stroke to undo), any chunk
//! of the region equals that chunk eroded on its own bit for bit (the
//! tiling rule), the ground outside stays generated, the recipe prints
//! back with its step, and bad steps are refused before anything is made.

use isoterra_kind::{
    AnyDocument, Document, ErodeSpec, KindError, NewWorld, Recipe, RecipeParams, WorldKind,
    erode_region,
};
use isoterra_store::{HeightmapDocument, MemoryStore, StoreError};
use isoterra_world::{HeightErosion, HeightmapParams, HeightmapWorld};
use proptest::prelude::*;

/// Light settings (margin 2 x (12 + 2 + 2) x 2 = 64 nodes), so that cases
/// stay quick; a thermal pass too.
fn step(region: [f64; 4]) -> HeightErosion {
    let mut e = HeightErosion::DEFAULT
        .with_region(region)
        .with_passes(2)
        .with_thermal(3)
        .with_blur(2)
        .with_feather(6.0);
    e.lifetime = 12;
    e.radius = 2;
    e.density = 0.5;
    e
}

fn recipe_with(erosion: Option<HeightErosion>) -> Recipe {
    let mut r = Recipe::preset(WorldKind::Heightmap, "mountains").unwrap();
    let RecipeParams::Heightmap(h) = &mut r.params else {
        unreachable!()
    };
    h.erosion = erosion;
    r.name = None;
    r
}

fn new_world(seed: u64, erosion: Option<HeightErosion>) -> NewWorld {
    NewWorld::new(WorldKind::Heightmap)
        .with_seed(seed)
        .with_recipe(recipe_with(erosion))
}

fn params(doc: &Document<MemoryStore>) -> HeightmapParams {
    match doc.typed() {
        AnyDocument::Heightmap(d) => d.params().clone(),
        _ => unreachable!("a heightmap world"),
    }
}

fn heights(doc: &Document<MemoryStore>, first: [i64; 2], dims: [u32; 2]) -> Vec<f32> {
    let AnyDocument::Heightmap(d) = doc.typed() else {
        unreachable!("a heightmap world")
    };
    let mut out = Vec::new();
    d.world().region_heights(first, dims, &mut out).unwrap();
    out
}

/// What the world stores for an eroded height `e` over a generated `g`:
/// the delta `e - g`, read back as `g + delta`.
fn stored(g: f32, e: f32) -> u32 {
    let d = e - g;
    (if d.to_bits() == 0 { g } else { g + d }).to_bits()
}

/// The step as the region erosion it runs.
fn spec(e: &HeightErosion) -> ErodeSpec {
    let mut s = ErodeSpec::new(e.region);
    s.hydraulic = e.hydraulic();
    s.thermal = e.thermal();
    s.blur = e.blur;
    s.feather = e.feather;
    s
}

#[test]
fn an_eroded_recipe_makes_a_world_that_starts_eroded() {
    let e = step([-40.0, -30.0, 40.0, 50.0]);
    let eroded = Document::create_in(MemoryStore::new(), &new_world(5, Some(e))).unwrap();
    let plain = Document::create_in(MemoryStore::new(), &new_world(5, None)).unwrap();

    // The region holds what eroding it on the new world gives.
    let AnyDocument::Heightmap(p) = plain.typed() else {
        unreachable!()
    };
    let want = erode_region(p.world(), &spec(&e)).unwrap();
    assert_eq!((want.first, want.dims), ([-40, -30], [81, 81]));
    let base = heights(&plain, want.first, want.dims);
    let got = heights(&eroded, want.first, want.dims);
    let mut changed = 0;
    for k in 0..got.len() {
        assert_eq!(
            got[k].to_bits(),
            stored(base[k], want.heights[k]),
            "node {k}"
        );
        changed += usize::from(got[k] != base[k]);
    }
    assert!(changed > got.len() / 2, "only {changed} nodes eroded");

    // Around it, the ground is as generated.
    let around = heights(&eroded, [-60, -50], [121, 121]);
    let around_plain = heights(&plain, [-60, -50], [121, 121]);
    for j in 0..121i64 {
        for i in 0..121i64 {
            let (x, z) = (-60 + i, -50 + j);
            if !(-40..=40).contains(&x) || !(-30..=50).contains(&z) {
                let k = (j * 121 + i) as usize;
                assert_eq!(around[k].to_bits(), around_plain[k].to_bits(), "({x}, {z})");
            }
        }
    }

    // Nothing to undo; the recipe prints back with its step; another
    // world than the plain one.
    let mut eroded = eroded;
    assert_eq!(eroded.history().strokes, 0);
    assert_eq!(eroded.undo().unwrap(), None);
    assert_eq!(params(&eroded).erosion, Some(e));
    assert_eq!(eroded.recipe(), recipe_with(Some(e)));
    assert_ne!(eroded.content_hash(), plain.content_hash());
    let again = Document::create_in(MemoryStore::new(), &new_world(5, Some(e))).unwrap();
    assert_eq!(again.content_hash(), eroded.content_hash(), "deterministic");
}

#[test]
fn an_eroded_world_file_reopens_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("eroded.isoterra");
    let e = step([0.0, 0.0, 48.0, 40.0]);
    let made = Document::create(&path, &new_world(9, Some(e))).unwrap();
    let hash = made.content_hash();
    made.close().unwrap();
    let back = Document::open(&path).unwrap();
    assert_eq!(back.content_hash(), hash);
    assert_eq!(back.recipe(), recipe_with(Some(e)));
    let memory = Document::create_in(MemoryStore::new(), &new_world(9, Some(e))).unwrap();
    assert_eq!(memory.content_hash(), hash);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6))]

    /// The tiling rule through a new world: any block of the step's
    /// region, at least a feather from its edge, equals that block eroded
    /// on its own (grown by the margin, no feather) bit for bit.
    #[test]
    fn any_chunk_of_an_eroded_world_equals_it_eroded_alone(
        seed in 0u64..1000,
        x0 in -30i64..0,
        z0 in -30i64..0,
        w in 40i64..70,
        d in 40i64..70,
        bx in 0.0f64..1.0,
        bz in 0.0f64..1.0,
        side in 2u32..24,
    ) {
        let e = step([x0 as f64, z0 as f64, (x0 + w) as f64, (z0 + d) as f64]);
        let world = Document::create_in(MemoryStore::new(), &new_world(seed, Some(e))).unwrap();
        let plain = Document::create_in(MemoryStore::new(), &new_world(seed, None)).unwrap();
        // A block inside the feathered border.
        let f = e.feather as i64;
        let room = [w - 2 * f - i64::from(side), d - 2 * f - i64::from(side)];
        prop_assume!(room[0] >= 0 && room[1] >= 0);
        let first = [
            x0 + f + (bx * room[0] as f64) as i64,
            z0 + f + (bz * room[1] as f64) as i64,
        ];
        let last = [first[0] + i64::from(side), first[1] + i64::from(side)];
        let mut alone = spec(&e);
        alone.region = [first[0] as f64, first[1] as f64, last[0] as f64, last[1] as f64];
        alone.feather = 0.0;
        let AnyDocument::Heightmap(p) = plain.typed() else { unreachable!() };
        let want = erode_region(p.world(), &alone).unwrap();
        prop_assert_eq!(want.first, first);
        let base = heights(&plain, want.first, want.dims);
        let got = heights(&world, want.first, want.dims);
        for k in 0..got.len() {
            prop_assert_eq!(got[k].to_bits(), stored(base[k], want.heights[k]), "node {}", k);
        }
    }
}

#[test]
fn bad_erosion_steps_are_refused_before_anything_is_made() {
    let dir = tempfile::tempdir().unwrap();
    // Too many nodes for one erosion: refused when the world is made
    // (the cell size decides), and no file is left.
    let huge = HeightErosion::DEFAULT.with_region([0.0, 0.0, 4096.0, 4096.0]);
    let path = dir.path().join("huge.isoterra");
    let err = Document::create(&path, &new_world(1, Some(huge))).unwrap_err();
    assert!(matches!(err, KindError::TooLarge(_)), "{err}");
    assert!(!path.exists());
    // At a cell size of 4 the same region is 1025 x 1025 nodes: accepted
    // by the check (not run here).
    // Fields out of range name themselves.
    let bad = [
        (
            HeightErosion::DEFAULT.with_passes(65),
            "params.erosion.passes",
        ),
        (HeightErosion::DEFAULT.with_passes(0), "params.erosion"),
        (
            HeightErosion::DEFAULT.with_region([10.0, 0.0, 10.0, 5.0]),
            "params.erosion.region",
        ),
        (
            HeightErosion::DEFAULT.with_region([0.0, 0.0, 2e9, 5.0]),
            "params.erosion.region.2",
        ),
        (
            HeightErosion::DEFAULT.with_feather(-1.0),
            "params.erosion.feather",
        ),
        (
            HeightErosion::DEFAULT.with_thermal(20_000),
            "params.erosion.thermal",
        ),
        (HeightErosion::DEFAULT.with_blur(65), "params.erosion.blur"),
    ];
    for (e, want) in bad {
        let text = recipe_with(Some(e)).to_json_pretty();
        match Recipe::from_json(&text) {
            Err(KindError::Recipe { path, .. }) => assert_eq!(path, want, "{e:?}"),
            other => panic!("{e:?}: {other:?}"),
        }
        let path = dir.path().join("bad.isoterra");
        assert!(Document::create(&path, &new_world(1, Some(e))).is_err());
        assert!(!path.exists());
    }
    // An unknown field in the step is named.
    let mut v = recipe_with(Some(HeightErosion::DEFAULT)).to_json_value();
    v["params"]["erosion"]["droplets"] = serde_json::json!(3);
    match Recipe::from_json(&v.to_string()) {
        Err(KindError::Recipe { path, reason }) => {
            assert!(path.starts_with("params.erosion"), "{path}");
            assert!(reason.contains("droplets"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    // Only heightmaps erode.
    let map = Recipe::preset(WorldKind::Map, "island").unwrap();
    assert!(matches!(
        map.with_default_erosion(),
        Err(KindError::Invalid(_))
    ));
}

#[test]
fn the_store_refuses_an_erosion_it_is_not_given_the_heights_of() {
    let p = HeightmapParams::DEFAULT.with_erosion(Some(HeightErosion::DEFAULT));
    let err = HeightmapDocument::create_in(MemoryStore::new(), &p).unwrap_err();
    assert!(matches!(err, StoreError::World(_)), "{err}");
    // The world takes the parameters (it keeps them; it does not erode).
    let world = HeightmapWorld::new(&p).unwrap();
    assert_eq!(world.params().erosion, Some(HeightErosion::DEFAULT));
}

#[test]
fn recipes_without_an_erosion_print_none_and_read_back() {
    let r = Recipe::preset(WorldKind::Heightmap, "hills").unwrap();
    let v = r.to_json_value();
    assert!(v["params"].get("erosion").is_none(), "{v}");
    let eroded = r.with_default_erosion().unwrap();
    assert_eq!(eroded.name, None);
    let back = Recipe::from_json(&eroded.to_json_pretty()).unwrap();
    assert_eq!(back, eroded);
    let RecipeParams::Heightmap(h) = &back.params else {
        unreachable!()
    };
    assert_eq!(h.erosion, Some(HeightErosion::DEFAULT));
}
