//! Map world: tools, undo/redo, dirty tracking, presets and bad input.

use isoterra_field::{LayerMask, MapLayer, MapLayers, NO_WATER, PathingOverride};
use isoterra_world::{
    EditDirection, MapBrush, MapBrushShape, MapEdit, MapParams, MapPreset, MapStroke, MapTool,
    MapWorld, WorldError,
};
use proptest::prelude::*;

/// Every layer as raw bytes, for exact comparisons.
fn bytes(l: &MapLayers) -> Vec<Vec<u8>> {
    let f = |v: &[f32]| {
        v.iter()
            .flat_map(|x| x.to_bits().to_le_bytes())
            .collect::<Vec<u8>>()
    };
    vec![
        f(&l.ground),
        f(&l.level),
        f(&l.softness),
        f(&l.height),
        f(&l.water),
        l.splat.iter().flat_map(|s| s.to_bytes()).collect(),
        l.pathing.clone(),
    ]
}

/// Whether node `i` of `layer` differs between two maps (bitwise).
fn differs(a: &MapLayers, b: &MapLayers, layer: MapLayer, i: usize) -> bool {
    match layer {
        MapLayer::Ground => a.ground[i].to_bits() != b.ground[i].to_bits(),
        MapLayer::Level => a.level[i].to_bits() != b.level[i].to_bits(),
        MapLayer::Softness => a.softness[i].to_bits() != b.softness[i].to_bits(),
        MapLayer::Height => a.height[i].to_bits() != b.height[i].to_bits(),
        MapLayer::Water => a.water[i].to_bits() != b.water[i].to_bits(),
        MapLayer::Splat => a.splat[i] != b.splat[i],
        MapLayer::Pathing => a.pathing[i] != b.pathing[i],
    }
}

/// The dirty chunks between two states, by brute force: chunk `c` of `n`
/// cells reads nodes `c*n - 1 ..= c*n + n + 1` on each axis (clamped).
fn brute_dirty(a: &MapLayers, b: &MapLayers, n: u32) -> Vec<([u32; 2], LayerMask)> {
    let [w, d] = [a.width_cells(), a.depth_cells()];
    let [cw, cd] = [w.div_ceil(n), d.div_ceil(n)];
    let mut out = Vec::new();
    for cz in 0..cd {
        for cx in 0..cw {
            let mut mask = LayerMask::NONE;
            let xs = (cx * n).saturating_sub(1)..=(cx * n + n + 1).min(w);
            let zs = (cz * n).saturating_sub(1)..=(cz * n + n + 1).min(d);
            for layer in MapLayer::ALL {
                'scan: for z in zs.clone() {
                    for x in xs.clone() {
                        if differs(a, b, layer, a.index(x, z).unwrap()) {
                            mask = mask.with(layer);
                            break 'scan;
                        }
                    }
                }
            }
            if !mask.is_empty() {
                out.push(([cx, cz], mask));
            }
        }
    }
    out
}

fn small(preset: MapPreset, seed: u64) -> MapParams {
    MapParams::DEFAULT
        .with_size(40, 33)
        .with_chunk_cells(16)
        .with_seed(seed)
        .with_preset(preset)
}

fn tool_strategy() -> impl Strategy<Value = MapTool> {
    prop::sample::select(MapTool::ALL.to_vec())
}

fn shape_strategy() -> impl Strategy<Value = MapBrushShape> {
    prop::sample::select(MapBrushShape::ALL.to_vec())
}

fn preset_strategy() -> impl Strategy<Value = MapPreset> {
    prop::sample::select(MapPreset::ALL.to_vec())
}

#[allow(clippy::too_many_arguments)]
fn brush(
    tool: MapTool,
    shape: MapBrushShape,
    radius: f32,
    strength: f32,
    height: Option<f32>,
    texture: u8,
    pathing: u8,
    set: bool,
    level: Option<u8>,
) -> MapBrush {
    MapBrush::new(tool, radius)
        .with_shape(shape)
        .with_strength(strength)
        .with_height(height)
        .with_texture(texture)
        .with_pathing(pathing)
        .with_pathing_set(set)
        .with_level(level)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Undo of every tool restores the exact bytes of every layer, redo
    /// re-applies them exactly, and the dirty chunks and their layer masks
    /// are exactly those a brute-force comparison finds.
    #[test]
    fn undo_redo_are_exact_and_dirty_is_exact(
        preset in preset_strategy(),
        seed in 0u64..4,
        tool in tool_strategy(),
        shape in shape_strategy(),
        radius in 0.3f32..14.0,
        strength in 0.0f32..=1.0,
        height in prop::option::of(-3.0f32..3.0),
        texture in 0u8..16,
        pathing in 0u8..8,
        set in any::<bool>(),
        level in prop::option::of(0u8..16),
        extra in prop::option::of(0.0f32..6.0),
        dabs in prop::collection::vec((-6.0f32..46.0, -6.0f32..40.0), 1..5),
        prior in prop::collection::vec((tool_strategy(), 0.0f32..40.0, 0.0f32..33.0), 0..3),
    ) {
        let params = small(preset, seed);
        let mut world = MapWorld::new(&params).unwrap();
        // A little history first, so strokes meet edited ground.
        for (t, x, z) in prior {
            let _ = world.apply_stroke(&MapStroke::dab(MapBrush::new(t, 5.0).with_texture(3), [x, z]));
        }
        world.take_dirty();
        let before = world.layers().clone();
        let hash = world.content_hash();
        // Cliffs get a slope of `extra` cells, ramps a length of `2 + extra`.
        let b = brush(tool, shape, radius, strength, height, texture, pathing, set, level)
            .with_slope(extra)
            .with_length(extra.map(|e| 2.0 + e));
        let stroke = MapStroke::new(b, dabs.iter().map(|&(x, z)| [x, z]).collect());
        let edit = match world.apply_stroke(&stroke) {
            Ok(edit) => edit,
            Err(e) => {
                // Only a cliff tool whose target leaves 0..=15 may fail here.
                prop_assert!(matches!(e, WorldError::InvalidParameter { name: "level", .. }), "{e}");
                prop_assert_eq!(world.content_hash(), hash);
                prop_assert!(world.take_dirty().is_empty());
                return Ok(());
            }
        };
        let after = world.layers().clone();
        after.validate().unwrap();
        let dirty = world.take_dirty();
        prop_assert_eq!(&dirty, &brute_dirty(&before, &after, 16));
        prop_assert_eq!(world.affected(&edit), dirty.clone());
        prop_assert_eq!(edit.is_empty(), dirty.is_empty());
        // One tool touches one layer; a ramp or a sloped cliff its levels
        // and softness.
        let sloped = matches!(tool, MapTool::CliffUp | MapTool::CliffDown)
            && extra.is_some_and(|e| e > 0.0);
        if tool == MapTool::Ramp || sloped {
            let allowed = LayerMask::of(MapLayer::Level).with(MapLayer::Softness);
            prop_assert_eq!(edit.layers().0 & !allowed.0, 0);
        } else {
            prop_assert!(edit.layers().0.count_ones() <= 1);
        }
        if tool == MapTool::Paint || tool == MapTool::Pathing {
            prop_assert!(!edit.layers().affects_geometry());
            prop_assert!(dirty.iter().all(|(_, m)| !m.affects_geometry()));
        }
        // The bytes form survives.
        prop_assert_eq!(&MapEdit::from_bytes(&edit.to_bytes()).unwrap(), &edit);

        world.apply_edit(&edit, EditDirection::Backward).unwrap();
        prop_assert_eq!(bytes(world.layers()), bytes(&before));
        prop_assert_eq!(world.content_hash(), hash.clone());
        prop_assert_eq!(world.take_dirty(), dirty.clone());
        // Undoing twice does not match the world: an error, nothing changes.
        if !edit.is_empty() {
            prop_assert!(world.apply_edit(&edit, EditDirection::Backward).is_err());
            prop_assert_eq!(world.content_hash(), hash.clone());
        }
        world.apply_edit(&edit, EditDirection::Forward).unwrap();
        prop_assert_eq!(bytes(world.layers()), bytes(&after));
    }

    /// A stroke equals its edit computed without applying it.
    #[test]
    fn stroke_edit_previews_the_stroke(
        tool in tool_strategy(),
        x in 0.0f32..40.0,
        z in 0.0f32..33.0,
    ) {
        let mut world = MapWorld::new(&small(MapPreset::Island, 1)).unwrap();
        let stroke = MapStroke::dab(MapBrush::new(tool, 6.0), [x, z]);
        let preview = world.stroke_edit(&stroke);
        let applied = world.apply_stroke(&stroke);
        prop_assert_eq!(preview, applied);
    }
}

#[test]
fn every_tool_and_shape_undoes_and_redoes_exactly() {
    let mut world = MapWorld::new(&small(MapPreset::Island, 11)).unwrap();
    for tool in MapTool::ALL {
        for shape in MapBrushShape::ALL {
            let before = bytes(world.layers());
            let stroke = MapStroke::new(
                MapBrush::new(tool, 9.0)
                    .with_shape(shape)
                    .with_strength(0.7)
                    .with_texture(7)
                    .with_pathing(PathingOverride::ALL)
                    .with_pathing_set(shape != MapBrushShape::Square),
                vec![[12.0, 14.0], [18.5, 16.0], [30.0, 15.0]],
            );
            let edit = world.apply_stroke(&stroke).unwrap();
            assert!(!edit.is_empty(), "{tool} {shape}");
            let after = bytes(world.layers());
            world.apply_edit(&edit, EditDirection::Backward).unwrap();
            assert_eq!(bytes(world.layers()), before, "{tool} {shape}");
            world.apply_edit(&edit, EditDirection::Forward).unwrap();
            assert_eq!(bytes(world.layers()), after, "{tool} {shape}");
        }
    }
}

#[test]
fn texture_strokes_never_mark_geometry() {
    let mut world = MapWorld::new(&MapParams::DEFAULT.with_size(128, 128)).unwrap();
    world.take_dirty();
    let stroke = MapStroke::new(
        MapBrush::new(MapTool::Paint, 20.0)
            .with_texture(4)
            .with_strength(1.0),
        vec![[60.0, 60.0], [70.0, 64.0]],
    );
    let edit = world.apply_stroke(&stroke).unwrap();
    assert_eq!(edit.layers(), LayerMask::of(MapLayer::Splat));
    let dirty = world.take_dirty();
    // A brush across the corner of four chunks dirties all four.
    assert_eq!(
        dirty.iter().map(|(c, _)| *c).collect::<Vec<_>>(),
        vec![[0, 0], [1, 0], [0, 1], [1, 1]]
    );
    assert!(
        dirty
            .iter()
            .all(|(_, m)| *m == LayerMask::of(MapLayer::Splat))
    );
    let centre = world.layers().index(64, 62).unwrap();
    assert_eq!(world.layers().splat[centre].weights[0], 0);
    assert!(world.layers().splat[centre].ids.contains(&4));
}

#[test]
fn border_nodes_dirty_both_chunks() {
    let params = small(MapPreset::Blank, 0);
    let mut world = MapWorld::new(&params).unwrap();
    world.take_dirty();
    // A tiny brush on node (16, 5): owned by chunk 1, read by chunk 0.
    let b = MapBrush::new(MapTool::Pathing, 0.4).with_pathing(PathingOverride::NO_WALK);
    world.apply_stroke(&MapStroke::dab(b, [16.0, 5.0])).unwrap();
    let chunks: Vec<[u32; 2]> = world.take_dirty().into_iter().map(|(c, _)| c).collect();
    assert_eq!(chunks, vec![[0, 0], [1, 0]]);
    // Node (17, 5): chunk 0 still reads it for normals (apron).
    world.apply_stroke(&MapStroke::dab(b, [17.0, 5.0])).unwrap();
    let chunks: Vec<[u32; 2]> = world.take_dirty().into_iter().map(|(c, _)| c).collect();
    assert_eq!(chunks, vec![[0, 0], [1, 0]]);
    // Node (18, 5) only belongs to chunk 1.
    world.apply_stroke(&MapStroke::dab(b, [18.0, 5.0])).unwrap();
    let chunks: Vec<[u32; 2]> = world.take_dirty().into_iter().map(|(c, _)| c).collect();
    assert_eq!(chunks, vec![[1, 0]]);
}

#[test]
fn a_new_world_is_dirty_everywhere() {
    let mut world = MapWorld::new(&small(MapPreset::Plateaus, 2)).unwrap();
    let dirty = world.take_dirty();
    assert_eq!(dirty.len(), 3 * 3);
    assert!(dirty.iter().all(|(_, m)| *m == LayerMask::ALL));
    assert!(world.take_dirty().is_empty());
    assert_eq!(world.chunk_count(), [3, 3]);
    assert_eq!(world.chunk_cells([2, 2]), Some([32, 32, 40, 33]));
    assert_eq!(world.chunk_cells([3, 0]), None);
}

#[test]
fn cliff_up_makes_a_round_cliff_one_level_up() {
    let mut world = MapWorld::new(&small(MapPreset::Blank, 0)).unwrap();
    let stroke = MapStroke::dab(MapBrush::new(MapTool::CliffUp, 8.0), [20.0, 16.0]);
    let edit = world.apply_stroke(&stroke).unwrap();
    assert_eq!(edit.layers(), LayerMask::of(MapLayer::Level));
    let l = world.layers();
    for z in 0..=33u32 {
        for x in 0..=40u32 {
            let r = ((x as f32 - 20.0).powi(2) + (z as f32 - 16.0).powi(2)).sqrt();
            let level = l.level_of(l.index(x, z).unwrap());
            if r <= 7.5 {
                assert_eq!(level, 1, "({x}, {z})");
                assert_eq!(l.level[l.index(x, z).unwrap()], 1.0);
            } else if r > 8.0 {
                assert_eq!(level, 0, "({x}, {z})");
            }
        }
    }
    // Again from the raised ground: level 2; then down twice to 0.
    world.apply_stroke(&stroke).unwrap();
    let centre = world.layers().index(20, 16).unwrap();
    assert_eq!(world.layers().level_of(centre), 2);
    let down = MapStroke::dab(MapBrush::new(MapTool::CliffDown, 8.0), [20.0, 16.0]);
    world.apply_stroke(&down).unwrap();
    world.apply_stroke(&down).unwrap();
    assert_eq!(world.layers().level_of(centre), 0);
    // Below level 0: an error, nothing changes.
    let hash = world.content_hash();
    let err = world.apply_stroke(&down).unwrap_err();
    assert!(
        matches!(err, WorldError::InvalidParameter { name: "level", .. }),
        "{err}"
    );
    assert_eq!(world.content_hash(), hash);
    // An explicit target.
    let to5 = MapStroke::dab(
        MapBrush::new(MapTool::CliffUp, 4.0).with_level(Some(5)),
        [10.0, 10.0],
    );
    world.apply_stroke(&to5).unwrap();
    assert_eq!(
        world
            .layers()
            .level_of(world.layers().index(10, 10).unwrap()),
        5
    );
}

#[test]
fn height_tools_do_what_they_say() {
    let mut world = MapWorld::new(&small(MapPreset::Blank, 0)).unwrap();
    let at = world.layers().index(20, 16).unwrap();
    let raise = MapStroke::dab(
        MapBrush::new(MapTool::Raise, 6.0).with_strength(1.0),
        [20.0, 16.0],
    );
    let e = world.apply_stroke(&raise).unwrap();
    assert_eq!(e.layers(), LayerMask::of(MapLayer::Height));
    assert_eq!(world.layers().height[at], 1.0);
    let edge = world.layers().index(25, 16).unwrap();
    assert!(world.layers().height[edge] > 0.0 && world.layers().height[edge] < 0.1);
    // Smooth lowers the peak.
    let smooth = MapStroke::dab(
        MapBrush::new(MapTool::Smooth, 6.0).with_strength(1.0),
        [20.0, 16.0],
    );
    world.apply_stroke(&smooth).unwrap();
    assert!(world.layers().height[at] < 1.0);
    // Plateau to a target flattens the inner half exactly.
    let plateau = MapStroke::dab(
        MapBrush::new(MapTool::Plateau, 6.0)
            .with_strength(1.0)
            .with_height(Some(0.5)),
        [20.0, 16.0],
    );
    world.apply_stroke(&plateau).unwrap();
    assert_eq!(world.layers().height[at], 0.5);
    assert_eq!(
        world.layers().height[world.layers().index(22, 16).unwrap()],
        0.5
    );
    // Lower undoes a raise at the centre.
    let lower = MapStroke::dab(
        MapBrush::new(MapTool::Lower, 6.0).with_strength(1.0),
        [20.0, 16.0],
    );
    world.apply_stroke(&lower).unwrap();
    assert_eq!(world.layers().height[at], -0.5);
}

#[test]
fn noise_spares_ramps() {
    let mut world = MapWorld::new(&small(MapPreset::Blank, 5)).unwrap();
    let ramp = MapStroke::dab(
        MapBrush::new(MapTool::Ramp, 20.0).with_strength(1.0),
        [10.0, 16.0],
    );
    world.apply_stroke(&ramp).unwrap();
    let at = world.layers().index(10, 16).unwrap();
    assert_eq!(world.layers().softness[at], 1.0);
    let noise = MapStroke::new(
        MapBrush::new(MapTool::Noise, 30.0).with_strength(1.0),
        vec![[20.0, 16.0]],
    );
    let edit = world.apply_stroke(&noise).unwrap();
    assert!(!edit.is_empty());
    assert_eq!(world.layers().height[at], 0.0);
    // Deterministic: the same stroke on a fresh world gives the same edit.
    let mut again = MapWorld::new(&small(MapPreset::Blank, 5)).unwrap();
    again.apply_stroke(&ramp).unwrap();
    assert_eq!(again.apply_stroke(&noise).unwrap(), edit);
}

#[test]
fn water_rises_from_the_ground_and_drains_away() {
    let mut world = MapWorld::new(&small(MapPreset::Blank, 0)).unwrap();
    let at = world.layers().index(20, 16).unwrap();
    let up = MapStroke::dab(
        MapBrush::new(MapTool::WaterRaise, 5.0).with_strength(1.0),
        [20.0, 16.0],
    );
    let e = world.apply_stroke(&up).unwrap();
    assert_eq!(e.layers(), LayerMask::of(MapLayer::Water));
    assert_eq!(world.layers().water[at], 0.5);
    let far = world.layers().index(0, 0).unwrap();
    assert_eq!(world.layers().water[far], NO_WATER);
    let target = MapStroke::dab(
        MapBrush::new(MapTool::WaterRaise, 5.0)
            .with_strength(1.0)
            .with_height(Some(1.5)),
        [20.0, 16.0],
    );
    world.apply_stroke(&target).unwrap();
    assert_eq!(world.layers().water[at], 1.5);
    let down = MapStroke::dab(
        MapBrush::new(MapTool::WaterLower, 5.0)
            .with_strength(1.0)
            .with_height(Some(-2.0)),
        [20.0, 16.0],
    );
    world.apply_stroke(&down).unwrap();
    assert_eq!(world.layers().water[at], NO_WATER);
}

#[test]
fn pathing_paint_sets_and_clears_bits() {
    let mut world = MapWorld::new(&small(MapPreset::Blank, 0)).unwrap();
    let at = world.layers().index(20, 16).unwrap();
    let b = MapBrush::new(MapTool::Pathing, 3.0)
        .with_shape(MapBrushShape::Square)
        .with_pathing(PathingOverride::NO_WALK | PathingOverride::NO_BUILD);
    world
        .apply_stroke(&MapStroke::dab(b, [20.0, 16.0]))
        .unwrap();
    assert_eq!(world.layers().pathing[at], 5);
    // Square: the corner (23, 19) is inside, (24, 16) is not.
    assert_eq!(
        world.layers().pathing[world.layers().index(23, 19).unwrap()],
        5
    );
    assert_eq!(
        world.layers().pathing[world.layers().index(24, 16).unwrap()],
        0
    );
    let clear = b
        .with_pathing(PathingOverride::NO_WALK)
        .with_pathing_set(false);
    world
        .apply_stroke(&MapStroke::dab(clear, [20.0, 16.0]))
        .unwrap();
    assert_eq!(world.layers().pathing[at], PathingOverride::NO_BUILD);
}

#[test]
fn bad_input_is_a_typed_error_and_changes_nothing() {
    assert!(matches!(
        "bulldoze".parse::<MapTool>(),
        Err(WorldError::InvalidParameter { name: "tool", .. })
    ));
    let mut world = MapWorld::new(&small(MapPreset::Island, 3)).unwrap();
    world.take_dirty();
    let hash = world.content_hash();
    let good = MapBrush::new(MapTool::Raise, 4.0);
    let cases: Vec<(MapStroke, &str)> = vec![
        (
            MapStroke::dab(good.with_radius(f32::NAN), [5.0, 5.0]),
            "radius",
        ),
        (
            MapStroke::dab(good.with_radius(f32::INFINITY), [5.0, 5.0]),
            "radius",
        ),
        (
            MapStroke::dab(good.with_radius(1.0e7), [5.0, 5.0]),
            "radius",
        ),
        (MapStroke::dab(good.with_radius(-1.0), [5.0, 5.0]), "radius"),
        (
            MapStroke::dab(good.with_strength(1.5), [5.0, 5.0]),
            "strength",
        ),
        (
            MapStroke::dab(good.with_strength(-0.5), [5.0, 5.0]),
            "strength",
        ),
        (
            MapStroke::dab(good.with_strength(f32::NAN), [5.0, 5.0]),
            "strength",
        ),
        (
            MapStroke::dab(
                good.with_tool(MapTool::CliffUp).with_level(Some(16)),
                [5.0, 5.0],
            ),
            "level",
        ),
        (MapStroke::dab(good.with_texture(16), [5.0, 5.0]), "texture"),
        (
            MapStroke::dab(good.with_pathing(0x10), [5.0, 5.0]),
            "pathing",
        ),
        (
            MapStroke::dab(good.with_height(Some(f32::INFINITY)), [5.0, 5.0]),
            "height",
        ),
        (
            MapStroke::new(good, vec![[5.0, 5.0], [f32::NAN, 1.0]]),
            "dab",
        ),
        (MapStroke::new(good, vec![[5.0, f32::NEG_INFINITY]]), "dab"),
        (MapStroke::new(good, vec![]), "dabs"),
    ];
    for (stroke, name) in cases {
        match world.apply_stroke(&stroke) {
            Err(WorldError::InvalidParameter { name: got, .. }) => assert_eq!(got, name),
            other => panic!("{name}: {other:?}"),
        }
        assert_eq!(world.content_hash(), hash);
        assert!(world.take_dirty().is_empty());
    }
    // Edits from a map of another size, or garbage bytes.
    let mut other = MapWorld::new(&small(MapPreset::Blank, 0).with_size(20, 20)).unwrap();
    let e = other
        .apply_stroke(&MapStroke::dab(good, [5.0, 5.0]))
        .unwrap();
    assert!(matches!(
        world.apply_edit(&e, EditDirection::Forward),
        Err(WorldError::Mismatch { .. })
    ));
    assert!(MapEdit::from_bytes(b"nonsense").is_err());
    assert_eq!(world.content_hash(), hash);
    // Parameters and layers.
    assert!(MapWorld::new(&MapParams::DEFAULT.with_size(0, 5)).is_err());
    let layers = MapLayers::new(10, 10).unwrap();
    assert!(MapWorld::from_layers(&small(MapPreset::Blank, 0), layers).is_err());
    let mut bad = MapLayers::new(40, 33).unwrap();
    bad.level[3] = 99.0;
    assert!(matches!(
        MapWorld::from_layers(&small(MapPreset::Blank, 0), bad),
        Err(WorldError::Field(_))
    ));
}

#[test]
fn presets_are_deterministic_from_the_seed() {
    for preset in MapPreset::ALL {
        let a = MapWorld::new(&small(preset, 7)).unwrap();
        let b = MapWorld::new(&small(preset, 7)).unwrap();
        assert_eq!(bytes(a.layers()), bytes(b.layers()), "{preset}");
        a.layers().validate().unwrap();
        let c = MapWorld::new(&small(preset, 8)).unwrap();
        if preset == MapPreset::Blank {
            assert_eq!(a.content_hash(), c.content_hash());
        } else {
            assert_ne!(a.content_hash(), c.content_hash(), "{preset}");
        }
    }
    // The island has sea, several levels and land.
    let island = MapWorld::new(&MapParams::DEFAULT.with_seed(1)).unwrap();
    let l = island.layers();
    let levels: std::collections::BTreeSet<u8> =
        (0..l.node_count()).map(|i| l.level_of(i)).collect();
    assert!(levels.len() >= 3, "{levels:?}");
    assert!(l.water.iter().any(|&w| w > NO_WATER));
    let plateaus = MapWorld::new(&MapParams::DEFAULT.with_preset(MapPreset::Plateaus)).unwrap();
    assert!(plateaus.layers().ground.iter().any(|&g| g < 0.0));
    assert!(plateaus.layers().softness.iter().any(|&s| s > 0.5));
}

#[test]
fn from_layers_keeps_the_layers() {
    let params = small(MapPreset::Plateaus, 4);
    let layers = MapWorld::generate(&params).unwrap();
    let world = MapWorld::from_layers(&params, layers.clone()).unwrap();
    assert_eq!(bytes(world.layers()), bytes(&layers));
    assert_eq!(
        world.content_hash(),
        MapWorld::new(&params).unwrap().content_hash()
    );
}

/// Every chunk's mesh.
fn meshes(world: &MapWorld) -> Vec<isoterra_mesh::MapMeshOutput> {
    let mut mesher = isoterra_mesh::MapMesher::new();
    let [cw, cd] = world.chunk_count();
    let mut all = Vec::new();
    for cz in 0..cd {
        for cx in 0..cw {
            let mut out = isoterra_mesh::MapMeshOutput::default();
            world.mesh_chunk([cx, cz], &mut mesher, &mut out).unwrap();
            all.push(out);
        }
    }
    all
}

#[test]
fn only_dirty_chunks_change_their_meshes() {
    let mut world = MapWorld::new(&small(MapPreset::Island, 2)).unwrap();
    world.take_dirty();
    let [cw, _] = world.chunk_count();
    for (tool, at) in [
        (MapTool::CliffUp, [16.0, 16.0]),
        (MapTool::Raise, [31.0, 17.0]),
        (MapTool::Paint, [17.0, 30.0]),
        (MapTool::WaterRaise, [33.0, 2.0]),
        (MapTool::Ramp, [15.0, 15.0]),
    ] {
        let before = meshes(&world);
        world
            .apply_stroke(&MapStroke::dab(
                MapBrush::new(tool, 3.0).with_texture(9),
                at,
            ))
            .unwrap();
        let dirty = world.take_dirty();
        let after = meshes(&world);
        for (k, (a, b)) in before.iter().zip(&after).enumerate() {
            let c = [k as u32 % cw, k as u32 / cw];
            let mask = dirty.iter().find(|(d, _)| *d == c).map(|(_, m)| *m);
            if a != b {
                assert!(
                    mask.is_some(),
                    "{tool}: chunk {c:?} changed but is not dirty"
                );
            }
            if a.terrain.positions != b.terrain.positions {
                assert!(mask.unwrap().affects_geometry(), "{tool}: {c:?}");
            }
        }
        assert!(!dirty.is_empty());
    }
    // Many chunks at once equal one by one.
    let [cw, cd] = world.chunk_count();
    let all: Vec<[u32; 2]> = (0..cd).flat_map(|z| (0..cw).map(move |x| [x, z])).collect();
    assert_eq!(world.mesh_chunks(&all).unwrap(), meshes(&world));
    assert!(world.mesh_chunks(&[[0, 0], [0, 9]]).is_err());
    let mut mesher = isoterra_mesh::MapMesher::new();
    let mut out = isoterra_mesh::MapMeshOutput::default();
    assert!(matches!(
        world.mesh_chunk([3, 0], &mut mesher, &mut out),
        Err(WorldError::OutOfBounds { .. })
    ));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// After random texture strokes, refreshing the attributes of the dirty
    /// chunks' old meshes gives the bytes a full remesh gives.
    #[test]
    fn attribute_refresh_equals_a_full_remesh(
        preset in preset_strategy(),
        seed in 0u64..1000,
        strokes in proptest::collection::vec(
            (shape_strategy(), 1.0f32..12.0, 0.05f32..=1.0, 0u8..16, 0.0f32..40.0, 0.0f32..33.0, any::<bool>()),
            1..4,
        ),
    ) {
        let mut world = MapWorld::new(&small(preset, seed)).unwrap();
        world.take_dirty();
        let mut kept = meshes(&world);
        let [cw, _] = world.chunk_count();
        for (shape, radius, strength, texture, x, z, pathing) in strokes {
            let tool = if pathing { MapTool::Pathing } else { MapTool::Paint };
            let b = MapBrush::new(tool, radius)
                .with_shape(shape)
                .with_strength(strength)
                .with_texture(texture)
                .with_pathing(PathingOverride::NO_BUILD);
            world.apply_stroke(&MapStroke::dab(b, [x, z])).unwrap();
            for (c, mask) in world.take_dirty() {
                prop_assert!(!mask.affects_geometry());
                let k = (c[1] * cw + c[0]) as usize;
                world.refresh_chunk_attributes(c, &mut kept[k]).unwrap();
            }
        }
        let fresh = meshes(&world);
        prop_assert!(kept == fresh);
    }
}

#[test]
fn attribute_refresh_checks_its_chunk() {
    let world = MapWorld::new(&small(MapPreset::Plateaus, 3)).unwrap();
    let mut all = meshes(&world);
    let before = all[0].clone();
    assert!(matches!(
        world.refresh_chunk_attributes([9, 0], &mut all[0]),
        Err(WorldError::OutOfBounds { .. })
    ));
    all[0].terrain.splat_node.push(u32::MAX);
    assert!(matches!(
        world.refresh_chunk_attributes([0, 0], &mut all[0]),
        Err(WorldError::Mesh(_))
    ));
    all[0].terrain.splat_node.pop();
    assert!(all[0] == before);
    world.refresh_chunk_attributes([0, 0], &mut all[0]).unwrap();
    assert!(all[0] == before);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// The world's own rebuild queue: after random strokes of any tool and
    /// a rebuild (in slices of any budget), every cached mesh equals a
    /// fresh mesh of its chunk, and exactly the chunks whose meshes can
    /// have changed got a new version (pathing-only changes keep theirs).
    #[test]
    fn rebuild_keeps_the_mesh_cache_equal_to_fresh_meshes(
        preset in preset_strategy(),
        seed in 0u64..1000,
        strokes in proptest::collection::vec(
            (tool_strategy(), 1.0f32..10.0, 0.0f32..40.0, 0.0f32..33.0),
            1..4,
        ),
        sliced in any::<bool>(),
    ) {
        let mut world = MapWorld::new(&small(preset, seed)).unwrap();
        let [cw, cd] = world.chunk_count();
        prop_assert_eq!(world.stale_count(), (cw * cd) as usize);
        world.rebuild(None).unwrap();
        prop_assert_eq!(world.stale_count(), 0);
        let before: Vec<(u64, [u32; 2])> =
            world.chunk_meshes().map(|m| (m.version, m.coord)).collect();
        prop_assert_eq!(before.len(), (cw * cd) as usize);
        world.take_dirty();
        let mut touched = vec![LayerMask::default(); (cw * cd) as usize];
        for (tool, radius, x, z) in strokes {
            let b = MapBrush::new(tool, radius).with_level(Some(2)).with_texture(5);
            if world.apply_stroke(&MapStroke::dab(b, [x, z])).is_err() {
                continue;
            }
            for (c, mask) in world.take_dirty() {
                let k = (c[1] * cw + c[0]) as usize;
                touched[k] = touched[k].union(mask);
            }
        }
        if sliced {
            // A zero budget still makes progress: one chunk per call.
            while world.stale_count() > 0 {
                prop_assert!(world.rebuild(Some(std::time::Duration::ZERO)).unwrap() >= 1);
            }
        } else {
            world.rebuild(None).unwrap();
        }
        let fresh = meshes(&world);
        for (k, m) in world.chunk_meshes().enumerate() {
            prop_assert!(m.mesh == fresh[k], "chunk {:?}", m.coord);
            let mask = touched[k];
            let changed = mask.affects_geometry() || mask.contains(MapLayer::Splat);
            prop_assert_eq!(m.version != before[k].0, changed, "chunk {:?} {:?}", m.coord, mask);
        }
    }
}

/// A blank 64 x 48 map whose level rises from 0 to 1 across a straight
/// line through `(32, 24)` at `angle` (radians): `0.5 + s / 2` clamped,
/// `s` the signed distance in cells, so the rim (`level = 0.5`) lies
/// exactly on the line.
fn straight_cliff(angle: f32, offset: f32) -> (MapWorld, impl Fn(f32, f32) -> f32) {
    let params = MapParams::DEFAULT
        .with_size(64, 48)
        .with_chunk_cells(16)
        .with_preset(MapPreset::Blank);
    let mut layers = MapWorld::generate(&params).unwrap();
    let (nx, nz) = (angle.cos(), angle.sin());
    let signed = move |x: f32, z: f32| (x - 32.0) * nx + (z - 24.0) * nz - offset;
    for z in 0..=48u32 {
        for x in 0..=64u32 {
            let i = layers.index(x, z).unwrap();
            layers.level[i] = (0.5 + signed(x as f32, z as f32) * 0.5).clamp(0.0, 1.0);
        }
    }
    (MapWorld::from_layers(&params, layers).unwrap(), signed)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// A ramp across a straight cliff is one plane: every node and every
    /// mesh vertex in the brush's full-strength core lies on
    /// `level = 0.5 + s / length` (clamped to the two levels), and no wall
    /// is left there.
    #[test]
    fn a_ramp_across_a_straight_cliff_is_one_plane(
        angle in 0.0f32..std::f32::consts::TAU,
        offset in -0.5f32..0.5,
        length in 2.0f32..9.0,
    ) {
        let (mut world, signed) = straight_cliff(angle, offset);
        let radius = 18.0;
        let ramp = MapBrush::new(MapTool::Ramp, radius)
            .with_strength(1.0)
            .with_length(Some(length));
        let edit = world.apply_stroke(&MapStroke::dab(ramp, [32.0, 24.0])).unwrap();
        prop_assert_eq!(edit.layers(), LayerMask::of(MapLayer::Level).with(MapLayer::Softness));
        let expect = |x: f32, z: f32| (0.5 + signed(x, z) / length).clamp(0.0, 1.0);
        let core = |x: f32, z: f32| ((x - 32.0).powi(2) + (z - 24.0).powi(2)).sqrt() <= radius * 0.5 - 1.0;
        let l = world.layers();
        for z in 0..=48u32 {
            for x in 0..=64u32 {
                let (fx, fz) = (x as f32, z as f32);
                if !core(fx, fz) {
                    continue;
                }
                let i = l.index(x, z).unwrap();
                prop_assert_eq!(l.softness[i], 1.0);
                // Nodes within a hair of the rim stay just below it.
                let tol = if signed(fx, fz).abs() < 0.01 { 2.0e-3 } else { 1.0e-4 };
                prop_assert!(
                    (l.level[i] - expect(fx, fz)).abs() <= tol,
                    "node ({}, {}): level {} want {}", x, z, l.level[i], expect(fx, fz)
                );
            }
        }
        // The mesh: every terrain vertex of the core on the plane, and one
        // vertex per point (no wall between the two bands).
        let lh = world.params().mesh.level_height;
        let mut seen: std::collections::HashMap<(u32, u32), f32> = Default::default();
        for out in meshes(&world) {
            for p in &out.terrain.positions {
                if !core(p[0], p[2]) {
                    continue;
                }
                let want = expect(p[0], p[2]) * lh;
                prop_assert!(
                    (p[1] - want).abs() <= 2.0e-3,
                    "vertex {:?}: height {} want {}", p, p[1], want
                );
                if let Some(&y) = seen.get(&(p[0].to_bits(), p[2].to_bits())) {
                    prop_assert!((y - p[1]).abs() <= 1.0e-6, "a wall at {:?}", p);
                }
                seen.insert((p[0].to_bits(), p[2].to_bits()), p[1]);
            }
        }
    }

    /// A ramp never moves a node to another cliff band, on any preset, so
    /// the rims stay where they were.
    #[test]
    fn a_ramp_keeps_every_band(
        preset in preset_strategy(),
        seed in 0u64..4,
        radius in 1.0f32..14.0,
        strength in 0.0f32..=1.0,
        length in prop::option::of(2.0f32..=64.0),
        cliffs in prop::collection::vec((0.0f32..40.0, 0.0f32..33.0, 2.0f32..8.0, any::<bool>()), 0..4),
        dabs in prop::collection::vec((-4.0f32..44.0, -4.0f32..37.0), 1..6),
    ) {
        let mut world = MapWorld::new(&small(preset, seed)).unwrap();
        for (x, z, r, up) in cliffs {
            let tool = if up { MapTool::CliffUp } else { MapTool::CliffDown };
            let _ = world.apply_stroke(&MapStroke::dab(MapBrush::new(tool, r), [x, z]));
        }
        let n = world.layers().node_count();
        let bands: Vec<u8> = (0..n).map(|i| world.layers().level_of(i)).collect();
        let dabs: Vec<[f32; 2]> = dabs.into_iter().map(|(x, z)| [x, z]).collect();
        let ramp = MapBrush::new(MapTool::Ramp, radius)
            .with_length(length)
            .with_strength(strength);
        world.apply_stroke(&MapStroke::new(ramp, dabs)).unwrap();
        let after: Vec<u8> = (0..n).map(|i| world.layers().level_of(i)).collect();
        prop_assert_eq!(&after, &bands);
        world.layers().validate().unwrap();
    }

    /// Painting the same ramp again over a plateau made with the cliff
    /// tool does not creep: four more full-strength dabs move its core by
    /// less than half a cell of slope. (The nodes at the brush's soft edge
    /// move on toward their targets, and a rim between one of them and a
    /// core node shifts a little with them. Where two rims lie closer than
    /// a ramp length — a narrow gap or ridge, or stacked levels — the
    /// slopes overlap and a rim can move by up to a cell, never out of its
    /// band; so the plateau here is wider than the ramp is long.)
    #[test]
    fn a_ramp_painted_again_does_not_creep(
        radius in 2.0f32..14.0,
        length in prop::option::of(2.0f32..=8.0),
        cliff in (0.0f32..40.0, 0.0f32..33.0, 1.0f32..10.0),
        at in (0.0f32..40.0, 0.0f32..33.0),
    ) {
        let mut world = MapWorld::new(&small(MapPreset::Blank, 0)).unwrap();
        let run = length.unwrap_or(isoterra_world::DEFAULT_RAMP_LENGTH);
        let plateau = MapBrush::new(MapTool::CliffUp, run + cliff.2).with_level(Some(1));
        world.apply_stroke(&MapStroke::dab(plateau, [cliff.0, cliff.1])).unwrap();
        let at = [at.0, at.1];
        let again = MapStroke::dab(
            MapBrush::new(MapTool::Ramp, radius).with_length(length).with_strength(1.0),
            at,
        );
        world.apply_stroke(&again).unwrap();
        let once = world.layers().level.clone();
        for _ in 0..4 {
            world.apply_stroke(&again).unwrap();
        }
        let l = world.layers();
        let bound = 0.5 / run + 0.01;
        for z in 0..=33u32 {
            for x in 0..=40u32 {
                let d = ((x as f32 - at[0]).powi(2) + (z as f32 - at[1]).powi(2)).sqrt();
                if d > radius * 0.5 {
                    continue;
                }
                let i = l.index(x, z).unwrap();
                prop_assert!(
                    (once[i] - l.level[i]).abs() <= bound,
                    "node ({}, {}) crept from {} to {}", x, z, once[i], l.level[i]
                );
            }
        }
    }
}

#[test]
fn a_ramp_up_a_round_cliff_is_walkable_and_climbs_one_level() {
    let mut world = MapWorld::new(&small(MapPreset::Blank, 0)).unwrap();
    world
        .apply_stroke(&MapStroke::dab(
            MapBrush::new(MapTool::CliffUp, 10.0),
            [20.0, 16.0],
        ))
        .unwrap();
    // The rim crosses x = 30 on the row z = 16; ramp it, 6 cells per level.
    let ramp = MapBrush::new(MapTool::Ramp, 6.0)
        .with_strength(1.0)
        .with_length(Some(6.0));
    world
        .apply_stroke(&MapStroke::dab(ramp, [30.0, 16.0]))
        .unwrap();
    let l = world.layers();
    let lh = world.params().mesh.level_height;
    let surface = |x: u32, z: u32| {
        let i = l.index(x, z).unwrap();
        isoterra_field::map::node_surface(l.level[i], l.softness[i], l.height[i], lh)
    };
    // Down the ramp's middle row: from the plateau (1) to the ground (0)
    // in even steps of at most a sixth of a level, never a wall.
    let row: Vec<f32> = (26..=34).map(|x| surface(x, 16)).collect();
    assert!(
        (row[0] - lh).abs() < 1.0e-6 && row[8].abs() < 1.0e-6,
        "{row:?}"
    );
    for w in row.windows(2) {
        assert!(w[1] <= w[0] + 1.0e-6, "not downhill: {row:?}");
        assert!(w[0] - w[1] <= lh / 6.0 * 1.15, "too steep: {row:?}");
    }
    // The brush's edge keeps the cliff beside the ramp.
    assert_eq!(l.softness[l.index(30, 24).unwrap()], 0.0);
}

#[test]
fn a_bad_ramp_length_is_refused() {
    let mut world = MapWorld::new(&small(MapPreset::Blank, 0)).unwrap();
    let hash = world.content_hash();
    for bad in [f32::NAN, 1.9, 64.5, f32::INFINITY, -4.0] {
        let b = MapBrush::new(MapTool::Ramp, 4.0).with_length(Some(bad));
        let err = world
            .apply_stroke(&MapStroke::dab(b, [10.0, 10.0]))
            .unwrap_err();
        assert!(
            matches!(err, WorldError::InvalidParameter { name: "length", .. }),
            "{bad}: {err}"
        );
    }
    assert_eq!(world.content_hash(), hash);
}

#[test]
fn a_sloped_cliff_climbs_evenly_with_no_wall() {
    let mut world = MapWorld::new(&small(MapPreset::Blank, 0)).unwrap();
    let cliff = MapBrush::new(MapTool::CliffUp, 12.0)
        .with_level(Some(1))
        .with_slope(Some(4.0));
    let edit = world
        .apply_stroke(&MapStroke::dab(cliff, [20.0, 16.0]))
        .unwrap();
    assert_eq!(
        edit.layers(),
        LayerMask::of(MapLayer::Level).with(MapLayer::Softness)
    );
    let l = world.layers();
    let lh = world.params().mesh.level_height;
    // Every node: 0 outside, a straight climb over the 4 cells inside the
    // outline, then the plateau.
    for z in 0..=33u32 {
        for x in 0..=40u32 {
            let i = l.index(x, z).unwrap();
            let r = ((x as f32 - 20.0).powi(2) + (z as f32 - 16.0).powi(2)).sqrt();
            let want = ((12.0 - r) / 4.0).clamp(0.0, 1.0) * lh;
            let got = isoterra_field::map::node_surface(l.level[i], l.softness[i], l.height[i], lh);
            assert!((got - want).abs() < 1.0e-5, "({x}, {z}): {got} want {want}");
        }
    }
    // The mesh has no wall: one height per point.
    let mut seen: std::collections::HashMap<(u32, u32), f32> = Default::default();
    for out in meshes(&world) {
        for p in &out.terrain.positions {
            let key = (p[0].to_bits(), p[2].to_bits());
            if let Some(&y) = seen.get(&key) {
                assert!((y - p[1]).abs() < 1.0e-5, "a wall at {p:?}");
            }
            seen.insert(key, p[1]);
        }
    }
    // Without a slope the same stroke still makes a vertical wall and
    // leaves the softness alone.
    let steep = MapWorld::new(&small(MapPreset::Blank, 0)).unwrap();
    for slope in [None, Some(0.0)] {
        let cliff = MapBrush::new(MapTool::CliffUp, 12.0)
            .with_level(Some(1))
            .with_slope(slope);
        let e = steep
            .stroke_edit(&MapStroke::dab(cliff, [20.0, 16.0]))
            .unwrap();
        assert_eq!(e.layers(), LayerMask::of(MapLayer::Level));
    }
    // Bad widths are refused and change nothing.
    let hash = world.content_hash();
    for bad in [-1.0, 32.5, f32::NAN, f32::INFINITY] {
        let b = MapBrush::new(MapTool::CliffDown, 4.0).with_slope(Some(bad));
        let err = world
            .apply_stroke(&MapStroke::dab(b, [10.0, 10.0]))
            .unwrap_err();
        assert!(
            matches!(err, WorldError::InvalidParameter { name: "slope", .. }),
            "{bad}: {err}"
        );
    }
    assert_eq!(world.content_hash(), hash);
}
