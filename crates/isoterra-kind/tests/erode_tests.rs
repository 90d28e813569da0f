//! Erosion of a region of a heightmap world (`Document::erode`): the tiling
//! rule holds through the world (a region eroded in parts equals it eroded
//! whole), only the region changes, the feather leaves the edge as it was,
//! undo and redo restore the exact bytes, and bad input changes nothing.

use isoterra_field::erosion::{HydraulicParams, ThermalParams};
use isoterra_kind::{AnyDocument, Document, ErodeSpec, KindError, NewWorld, WorldKind};
use isoterra_store::MemoryStore;
use proptest::prelude::*;

fn world() -> Document<MemoryStore> {
    Document::create_in(MemoryStore::new(), &NewWorld::new(WorldKind::Heightmap)).unwrap()
}

/// Small erosion settings (margin 2 x (8 + 2 + 2) = 24 nodes), so that
/// property cases stay quick.
fn light(region: [f64; 4], thermal: bool) -> ErodeSpec {
    let mut spec = ErodeSpec::new(region);
    spec.hydraulic = Some(
        HydraulicParams::DEFAULT
            .with_passes(1)
            .with_lifetime(8)
            .with_radius(2)
            .with_density(0.5),
    );
    spec.thermal = thermal.then(|| ThermalParams::DEFAULT.with_iterations(4).with_talus(0.3));
    spec.feather = 0.0;
    spec
}

fn height(doc: &Document<MemoryStore>, g: [i64; 2]) -> u32 {
    match doc.typed() {
        AnyDocument::Heightmap(d) => d.world().height(g).to_bits(),
        _ => unreachable!("a heightmap world"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    /// Two halves of a region eroded in two worlds equal the whole region
    /// eroded in a third, bit for bit, with and without droplets, thermal
    /// passes and a blur.
    #[test]
    fn a_region_eroded_in_parts_equals_it_eroded_whole(
        x0 in -80i32..40, z0 in -80i32..40, w in 8i32..40, d in 8i32..40,
        cut in 2i32..6, thermal in any::<bool>(), droplets in any::<bool>(),
        blur in 0u32..5,
    ) {
        let split = x0 + w * cut / 8;
        let whole = [x0, z0, x0 + w, z0 + d].map(f64::from);
        let left = [x0, z0, split, z0 + d].map(f64::from);
        let right = [split + 1, z0, x0 + w, z0 + d].map(f64::from);
        let spec = |region| {
            let mut s = light(region, thermal);
            s.blur = blur;
            if !droplets {
                s.hydraulic = None;
                s.blur = blur.max(2);
            }
            s
        };
        let mut all = world();
        let mut a = world();
        let mut b = world();
        let done = all.erode(&spec(whole)).unwrap();
        prop_assert!(done.changed_nodes > 0);
        a.erode(&spec(left)).unwrap();
        b.erode(&spec(right)).unwrap();
        for z in z0..=z0 + d {
            for x in x0..=x0 + w {
                let g = [i64::from(x), i64::from(z)];
                let part = if x <= split { &a } else { &b };
                prop_assert_eq!(height(part, g), height(&all, g), "node {:?}", g);
            }
        }
    }

    /// Nodes outside the region keep their heights; undo gives the exact
    /// bytes back and redo the eroded ones.
    #[test]
    fn only_the_region_changes_and_undo_restores_it(
        x0 in -60i32..60, z0 in -60i32..60, w in 4i32..30, d in 4i32..30,
        feather in 0.0f64..6.0,
    ) {
        let mut doc = world();
        let fresh = world();
        let before = doc.content_hash();
        let mut spec = light([x0, z0, x0 + w, z0 + d].map(f64::from), false);
        spec.feather = feather;
        let done = doc.erode(&spec).unwrap();
        prop_assert!(done.id.is_some());
        let eroded = doc.content_hash();
        prop_assert_ne!(&eroded, &before);
        for z in z0 - 3..=z0 + d + 3 {
            for x in x0 - 3..=x0 + w + 3 {
                let g = [i64::from(x), i64::from(z)];
                let inside = (x0..=x0 + w).contains(&x) && (z0..=z0 + d).contains(&z);
                let edge = x == x0 || x == x0 + w || z == z0 || z == z0 + d;
                if !inside || (edge && feather > 0.0) {
                    prop_assert_eq!(height(&doc, g), height(&fresh, g), "node {:?}", g);
                }
            }
        }
        prop_assert_eq!(doc.undo().unwrap(), done.id);
        prop_assert_eq!(doc.content_hash(), before);
        prop_assert_eq!(doc.redo().unwrap(), done.id);
        prop_assert_eq!(doc.content_hash(), eroded);
    }
}

#[test]
fn hydraulic_erosion_carves_and_thermal_erosion_flattens_steep_slopes() {
    // A raised ridge: thermal erosion with a low talus lowers its crest.
    let mut doc = world();
    let ridge = isoterra_kind::StrokeSpec::new("raise", 6.0).with_strength(1.0);
    for _ in 0..8 {
        doc.stroke(&ridge, &[[0.0, 0.0, 0.0]]).unwrap();
    }
    let crest = |doc: &Document<MemoryStore>| f32::from_bits(height(doc, [0, 0]));
    let top = crest(&doc);
    let mut thermal = ErodeSpec::new([-20.0, -20.0, 20.0, 20.0]);
    thermal.hydraulic = None;
    thermal.thermal = Some(ThermalParams::DEFAULT.with_talus(0.2).with_iterations(40));
    thermal.feather = 0.0;
    let done = doc.erode(&thermal).unwrap();
    assert!(done.changed_nodes > 100, "{done:?}");
    assert!(crest(&doc) < top - 0.5, "{} -> {}", top, crest(&doc));
    // Hydraulic erosion changes most of a region with the defaults.
    let mut doc = world();
    let done = doc.erode(&ErodeSpec::new([0.0, 0.0, 64.0, 64.0])).unwrap();
    assert!(done.changed_nodes > 65 * 65 / 2, "{done:?}");
}

/// A blur alone smooths the region: the summed squared curvature (the
/// discrete Laplacian) drops by more than 30 % (a radius-6 Gaussian halves
/// it on the hills preset), and the mean height stays within a hair.
#[test]
fn a_blur_alone_smooths_the_region() {
    let mut doc = world();
    let fresh = world();
    let mut spec = ErodeSpec::new([-40.0, -40.0, 40.0, 40.0]);
    spec.hydraulic = None;
    spec.blur = 6;
    spec.feather = 0.0;
    let done = doc.erode(&spec).unwrap();
    assert!(done.changed_nodes > 70 * 70, "{done:?}");
    let rough = |d: &Document<MemoryStore>| {
        let mut sum = 0.0f64;
        let mut mean = 0.0f64;
        for z in -39i64..40 {
            for x in -39i64..40 {
                let h = |g| f64::from(f32::from_bits(height(d, g)));
                let lap =
                    h([x + 1, z]) + h([x - 1, z]) + h([x, z + 1]) + h([x, z - 1]) - 4.0 * h([x, z]);
                sum += lap * lap;
                mean += h([x, z]);
            }
        }
        (sum, mean / (79.0 * 79.0))
    };
    let (r0, m0) = rough(&fresh);
    let (r1, m1) = rough(&doc);
    assert!(r1 < r0 * 0.7, "curvature {r0} -> {r1}");
    assert!(
        (m1 - m0).abs() < 0.05 * (1.0 + m0.abs()),
        "mean {m0} -> {m1}"
    );
}

#[test]
fn bad_erosions_are_refused_and_change_nothing() {
    let mut doc = world();
    let hash = doc.content_hash();
    let bad = |f: &dyn Fn(&mut ErodeSpec)| {
        let mut s = ErodeSpec::new([0.0, 0.0, 32.0, 32.0]);
        f(&mut s);
        s
    };
    let cases = [
        bad(&|s| s.region = [0.0, 0.0, f64::NAN, 1.0]),
        bad(&|s| s.region = [5.0, 0.0, 1.0, 9.0]),
        bad(&|s| s.region = [0.0, 0.0, 0.5, 0.5]),
        bad(&|s| s.region = [0.0, 0.0, 1e12, 1.0]),
        bad(&|s| s.region = [0.0, 0.0, 5000.0, 5000.0]),
        bad(&|s| s.feather = -1.0),
        bad(&|s| s.feather = f64::INFINITY),
        bad(&|s| s.hydraulic = None),
        bad(&|s| s.hydraulic = Some(HydraulicParams::DEFAULT.with_passes(0))),
        bad(&|s| s.hydraulic = Some(HydraulicParams::DEFAULT.with_density(f32::NAN))),
        bad(&|s| s.thermal = Some(ThermalParams::DEFAULT.with_talus(-1.0))),
        bad(&|s| s.blur = 65),
    ];
    for spec in &cases {
        let err = doc.erode(spec).unwrap_err();
        assert!(
            matches!(err, KindError::Invalid(_) | KindError::TooLarge(_)),
            "{spec:?}: {err}"
        );
        assert_eq!(doc.content_hash(), hash, "{spec:?} changed the world");
    }
    assert_eq!(doc.history().strokes, 0);
    // Other kinds are refused.
    let mut voxel =
        Document::create_in(MemoryStore::new(), &NewWorld::new(WorldKind::Voxel)).unwrap();
    let err = voxel
        .erode(&ErodeSpec::new([0.0, 0.0, 8.0, 8.0]))
        .unwrap_err();
    assert!(err.to_string().contains("heightmap"), "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6))]

    /// The erode and thermal brushes follow the tiling rule too: the same
    /// stroke on worlds chunked in 32 and in 64 cells gives the same
    /// heights, and undo gives the exact bytes back.
    #[test]
    fn erosion_brushes_do_not_depend_on_chunking(
        x in -100.0f64..100.0, z in -100.0f64..100.0, r in 3.0f64..14.0,
        thermal in any::<bool>(), strength in 0.2f64..1.0,
    ) {
        let tool = if thermal { "thermal" } else { "erode" };
        let spec = isoterra_kind::StrokeSpec::new(tool, r).with_strength(strength);
        let path = [[x, 0.0, z], [x + r, 0.0, z - r / 2.0]];
        let mut docs = Vec::new();
        for chunk in [32, 64] {
            let mut new = NewWorld::new(WorldKind::Heightmap);
            new.chunk = Some(chunk);
            let mut doc = Document::create_in(MemoryStore::new(), &new).unwrap();
            // A steep hill, so that the thermal brush has slopes to slump.
            let hill = isoterra_kind::StrokeSpec::new("raise", r + 4.0).with_strength(1.0);
            for _ in 0..5 {
                doc.stroke(&hill, &[[x, 0.0, z]]).unwrap();
            }
            let before = doc.content_hash();
            let done = doc.stroke(&spec, &path).unwrap();
            prop_assert!(done.changed_nodes > 0, "{} changed nothing", tool);
            docs.push((doc, before));
        }
        let (x0, z0) = ((x - r).floor() as i64 - 1, (z - 1.5 * r).floor() as i64 - 1);
        for gz in z0..=z0 + (2.5 * r) as i64 + 3 {
            for gx in x0..=x0 + (3.0 * r) as i64 + 3 {
                prop_assert_eq!(height(&docs[0].0, [gx, gz]), height(&docs[1].0, [gx, gz]));
            }
        }
        for (doc, before) in &mut docs {
            doc.undo().unwrap();
            prop_assert_eq!(&doc.content_hash(), before);
        }
    }
}
