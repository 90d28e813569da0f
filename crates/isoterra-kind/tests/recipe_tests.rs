//! Recipes: presets as named recipes (same parameters, same worlds, pinned
//! hashes), validation errors that name the field, and JSON round trips.

use isoterra_field::hash::Fnv1a64;
use isoterra_kind::{
    AnyDocument, Document, FieldControl, KindError, MAX_RECIPE_BYTES, NewWorld, PreviewOptions,
    Recipe, RecipeParams, WorldKind, preview, recipe_fields,
};
use isoterra_store::MemoryStore;
use proptest::prelude::*;
use serde_json::{Value, json};

/// The world a named recipe test makes: small bounded worlds, the endless
/// kinds as they are.
fn new_world(kind: WorldKind) -> NewWorld {
    match kind {
        WorldKind::Side2d => NewWorld::new(kind).with_size([96, 64]),
        WorldKind::Map => NewWorld::new(kind).with_size([80, 72]),
        _ => NewWorld::new(kind),
    }
}

/// A hash of what the world generates: the content hash for bounded kinds;
/// for the endless ones (whose content hash covers edits only) the LOD-0
/// heights of chunk `[0, 0]` (heightmap, the hash the world crate's golden
/// test pins) or the densities and materials of two generated chunks
/// (voxel).
fn generated_hash(doc: &Document<MemoryStore>) -> String {
    match doc.typed() {
        AnyDocument::Heightmap(d) => {
            let mut heights = Vec::new();
            d.world().chunk_heights([0, 0], 0, &mut heights).unwrap();
            let mut h = Fnv1a64::new();
            for v in heights {
                h.write(&v.to_bits().to_le_bytes());
            }
            format!("{:016X}", h.finish())
        }
        AnyDocument::Voxel(d) => {
            let w = d.world();
            let mut h = Fnv1a64::new();
            for c in [[0, 0, 0], [0, -1, 0], [1, 0, -1]] {
                let chunk = w.generated_chunk(c);
                for v in chunk.density.to_dense(w.chunk_len()) {
                    h.write(&v.to_bits().to_le_bytes());
                }
                h.write(&chunk.materials.to_dense(w.chunk_len()));
            }
            format!("{:016X}", h.finish())
        }
        _ => doc.content_hash(),
    }
}

/// `(kind, preset, generated hash)` of every named recipe, seed 1, the
/// sizes of [`new_world`]. The heightmap values are the world crate's
/// `GOLDEN_HEIGHTS` for chunk `[0, 0]`, seed 1. A deliberate change to a
/// generator or a preset changes these: update them in the same change and
/// say why.
const GOLDEN: [(&str, &str, &str); 13] = [
    ("side2d", "hills", "a0fc5315dc9250b0"),
    ("side2d", "caves", "27fa9d747a0fb7c0"),
    ("side2d", "cellular", "234c84fc56e8a2c2"),
    ("heightmap", "hills", "196A4DBC080A1D95"),
    ("heightmap", "mountains", "C021A4FC111CACA6"),
    ("heightmap", "islands", "84FD52E6C4E7E0DD"),
    ("voxel", "caves", "A8F7CDA933CAFEEE"),
    ("voxel", "overhangs", "A5838AAF3B88EF9C"),
    ("voxel", "planet", "28ADA8ABFB27AA40"),
    ("voxel", "mesas", "6A59B753E74DE6CF"),
    ("map", "island", "f11bf8e0b0e552e2"),
    ("map", "plateaus", "3a0e95fcf478f96d"),
    ("map", "blank", "0fb1fc527a310593"),
];

fn named() -> Vec<(WorldKind, &'static str)> {
    WorldKind::ALL
        .into_iter()
        .flat_map(|k| NewWorld::defaults(k).presets.iter().map(move |p| (k, *p)))
        .collect()
}

#[test]
fn every_preset_is_a_named_recipe_with_the_same_params() {
    assert_eq!(named().len(), 13);
    assert_eq!(Recipe::presets().len(), 13);
    for (kind, preset) in named() {
        let recipe = Recipe::preset(kind, preset).unwrap();
        assert_eq!(recipe.kind(), kind);
        assert_eq!(recipe.name.as_deref(), Some(preset));
        let text = recipe.to_json_pretty();
        let read = Recipe::from_json(&text).unwrap();
        assert_eq!(read, recipe, "{kind} {preset}");
        let by_preset = new_world(kind).with_preset(preset).params().unwrap();
        let by_recipe = new_world(kind).with_recipe(read).params().unwrap();
        assert_eq!(by_preset, by_recipe, "{kind} {preset}");
    }
    assert!(Recipe::preset(WorldKind::Voxel, "volcano").is_err());
}

#[test]
fn named_recipes_make_the_preset_worlds_and_pin_their_hashes() {
    let mut report = String::new();
    let mut ok = true;
    for ((kind, preset), (gk, gp, golden)) in named().into_iter().zip(GOLDEN) {
        assert_eq!((kind.name(), preset), (gk, gp));
        let recipe =
            Recipe::from_json(&Recipe::preset(kind, preset).unwrap().to_json_pretty()).unwrap();
        let a =
            Document::create_in(MemoryStore::new(), &new_world(kind).with_preset(preset)).unwrap();
        let b =
            Document::create_in(MemoryStore::new(), &new_world(kind).with_recipe(recipe)).unwrap();
        let (ha, hb) = (generated_hash(&a), generated_hash(&b));
        assert_eq!(ha, hb, "{kind} {preset}: recipe and preset differ");
        assert_eq!(a.content_hash(), b.content_hash(), "{kind} {preset}");
        assert_eq!(b.recipe().name.as_deref(), Some(preset));
        report.push_str(&format!("    (\"{kind}\", \"{preset}\", \"{ha}\"),\n"));
        ok &= ha == golden;
    }
    assert!(ok, "golden hashes moved; computed:\n{report}");
}

#[test]
fn an_edited_recipe_changes_the_world_and_is_read_back() {
    for kind in WorldKind::ALL {
        let recipe = Recipe::preset(kind, NewWorld::defaults(kind).preset).unwrap();
        let mut v = recipe.to_json_value();
        let field = match kind {
            WorldKind::Side2d => &mut v["params"]["fill"],
            WorldKind::Heightmap => &mut v["params"]["base"]["octaves"],
            WorldKind::Voxel => &mut v["params"]["cave_threshold"],
            WorldKind::Map => &mut v["params"]["generator"],
        };
        *field = match kind {
            WorldKind::Side2d => json!(0.45),
            WorldKind::Heightmap => json!(3),
            WorldKind::Voxel => json!(0.2),
            WorldKind::Map => json!("plateaus"),
        };
        let edited = Recipe::from_json(&v.to_string()).unwrap();
        let a = Document::create_in(MemoryStore::new(), &new_world(kind)).unwrap();
        let b = Document::create_in(
            MemoryStore::new(),
            &new_world(kind).with_recipe(edited.clone()),
        )
        .unwrap();
        assert_ne!(generated_hash(&a), generated_hash(&b), "{kind}");
        let back = b.recipe();
        assert_eq!(back.params, edited.params, "{kind}");
        // Choosing another map generator is exactly that preset; the other
        // edits match no preset.
        let name = (kind == WorldKind::Map).then_some("plateaus");
        assert_eq!(back.name.as_deref(), name, "{kind}");
    }
}

/// The error of reading `v` as a recipe.
fn error_of(v: &Value) -> String {
    match Recipe::from_json(&v.to_string()) {
        Ok(r) => panic!("accepted {r:?}"),
        Err(e) => e.to_string(),
    }
}

fn heightmap_json() -> Value {
    Recipe::preset(WorldKind::Heightmap, "mountains")
        .unwrap()
        .to_json_value()
}

#[test]
fn validation_names_the_bad_field() {
    let cases: Vec<(Value, &str)> = vec![
        (
            {
                let mut v = heightmap_json();
                v["params"]["base"]["octaves"] = json!(40);
                v
            },
            "params.base.octaves: must be 1..=32, got 40",
        ),
        (
            {
                let mut v = heightmap_json();
                v["params"]["warp"]["frequency"] = json!(1e39);
                v
            },
            "params.warp.frequency: must be finite",
        ),
        (
            {
                let mut v = heightmap_json();
                v["params"]["mask"]["persistence"] = json!(-0.5);
                v
            },
            "params.mask.persistence: must be finite and in [0, 4], got -0.5",
        ),
        (
            {
                let mut v = heightmap_json();
                v["params"]["base"]["octaves"] = json!("many");
                v
            },
            "params.base.octaves: invalid type",
        ),
        (
            {
                let mut v = heightmap_json();
                v["params"]["curve"] = json!([[0.0, 0.0], [0.5, 0.2], [0.4, 0.3], [1.0, 1.0]]);
                v
            },
            "params.curve[2][0]: x values must increase strictly",
        ),
        (
            {
                let mut v = heightmap_json();
                v["params"]["curve"] = json!([[0.0, 0.0]]);
                v
            },
            "params.curve: must have 2 to 16 points, got 1",
        ),
        (
            {
                let mut v = heightmap_json();
                v["params"]["height_scale"] = json!(0.0);
                v
            },
            "params.height_scale: must be finite and in (0, 1000000]",
        ),
        (
            {
                let mut v = heightmap_json();
                v["params"]["base"]["noise_scale"] = json!(2.0);
                v
            },
            "params.base",
        ),
        (
            {
                let mut v = heightmap_json();
                v["params"]["base"]["fractal"] = json!("wobbly");
                v
            },
            "params.base.fractal: unknown variant `wobbly`",
        ),
        (
            {
                let mut v = heightmap_json();
                v["params"].as_object_mut().unwrap().remove("warp");
                v
            },
            "missing field `warp`",
        ),
        (
            {
                let mut v = heightmap_json();
                v["seed"] = json!(4);
                v
            },
            "bad recipe: seed: unknown field",
        ),
        (
            {
                let mut v = heightmap_json();
                v["version"] = json!(2);
                v
            },
            "bad recipe: version: unsupported recipe version 2",
        ),
        (
            {
                let mut v = heightmap_json();
                v.as_object_mut().unwrap().remove("version");
                v
            },
            "bad recipe: version: missing",
        ),
        (
            {
                let mut v = heightmap_json();
                v["kind"] = json!("teapot");
                v
            },
            "bad recipe: kind: unknown world kind `teapot`",
        ),
        (
            {
                let mut v = heightmap_json();
                v["kind"] = json!("voxel");
                v
            },
            "bad recipe: params",
        ),
        (
            {
                let mut v = Recipe::preset(WorldKind::Side2d, "caves")
                    .unwrap()
                    .to_json_value();
                v["params"]["fill"] = json!(1.5);
                v
            },
            "params.fill: must be finite and in [0, 1], got 1.5",
        ),
        (
            {
                let mut v = Recipe::preset(WorldKind::Side2d, "caves")
                    .unwrap()
                    .to_json_value();
                v["params"]["iso"] = json!(1.0);
                v
            },
            "params.iso: must be finite and in (-1, 1), got 1",
        ),
        (
            {
                let mut v = Recipe::preset(WorldKind::Voxel, "caves")
                    .unwrap()
                    .to_json_value();
                v["params"]["cave_threshold"] = json!(1.0);
                v
            },
            "params.cave_threshold: must be finite and in [0, 1), got 1",
        ),
        (
            {
                let mut v = Recipe::preset(WorldKind::Map, "island")
                    .unwrap()
                    .to_json_value();
                v["params"]["level_height"] = json!(-2.0);
                v
            },
            "params.level_height: must be finite and in (0, 1000000], got -2",
        ),
        (
            {
                let mut v = Recipe::preset(WorldKind::Map, "island")
                    .unwrap()
                    .to_json_value();
                v["name"] = json!(7);
                v
            },
            "bad recipe: name: must be a string",
        ),
        (json!([1, 2]), "bad recipe: a recipe is a JSON object"),
    ];
    for (v, want) in cases {
        let got = error_of(&v);
        assert!(got.contains(want), "want `{want}`, got `{got}`");
    }
    let not_json = Recipe::from_json("{\"version\": 1,").unwrap_err();
    assert!(matches!(&not_json, KindError::Recipe { path, .. } if path.is_empty()));
    assert!(
        not_json.to_string().contains("not valid JSON"),
        "{not_json}"
    );
    let huge = vec![b' '; MAX_RECIPE_BYTES + 1];
    assert!(matches!(
        Recipe::from_slice(&huge),
        Err(KindError::TooLarge(_))
    ));
}

#[test]
fn a_recipe_of_another_kind_or_with_a_preset_is_refused() {
    let recipe = Recipe::preset(WorldKind::Heightmap, "hills").unwrap();
    let e = NewWorld::new(WorldKind::Voxel)
        .with_recipe(recipe.clone())
        .params()
        .unwrap_err();
    assert!(
        matches!(&e, KindError::Recipe { path, .. } if path == "kind"),
        "{e}"
    );
    let e = NewWorld::new(WorldKind::Heightmap)
        .with_preset("hills")
        .with_recipe(recipe)
        .params()
        .unwrap_err();
    assert!(e.to_string().contains("not both"), "{e}");
}

#[test]
fn printed_recipes_name_every_field() {
    let v = Recipe::preset(WorldKind::Heightmap, "hills")
        .unwrap()
        .to_json_value();
    assert_eq!(v["version"], 1);
    assert_eq!(v["kind"], "heightmap");
    assert_eq!(v["name"], "hills");
    let base = &v["params"]["base"];
    for key in [
        "basis",
        "fractal",
        "octaves",
        "frequency",
        "lacunarity",
        "persistence",
    ] {
        assert!(base.get(key).is_some(), "{key} missing from {base}");
    }
    assert_eq!(v["params"]["height_scale"], 64.0);
    let v = Recipe::preset(WorldKind::Voxel, "overhangs")
        .unwrap()
        .to_json_value();
    assert_eq!(v["params"]["generator"], "overhangs");
    assert_eq!(v["params"]["iso"], 0.0);
}

/// A fractal noise from valid ranges (kept where no octave overflows).
fn noise() -> impl Strategy<Value = Value> {
    (
        prop_oneof![
            Just(json!({"type": "perlin"})),
            Just(json!({"type": "open_simplex2"})),
            Just(json!({"type": "value"})),
            (0.0f32..=1.0)
                .prop_map(|j| json!({"type": "cellular", "ret": "f2_minus_f1", "jitter": j})),
        ],
        prop_oneof![Just("fbm"), Just("ridged"), Just("billow")],
        1u32..=12,
        1.0e-4f32..=1.0,
        0.5f32..=4.0,
        0.0f32..=1.0,
    )
        .prop_map(
            |(basis, fractal, octaves, frequency, lacunarity, persistence)| {
                json!({
                    "basis": basis, "fractal": fractal, "octaves": octaves,
                    "frequency": frequency, "lacunarity": lacunarity, "persistence": persistence,
                })
            },
        )
}

fn heightmap_params() -> impl Strategy<Value = Value> {
    (
        [noise(), noise(), noise(), noise()],
        -1.0f32..=1.0,
        0.0f32..=2.0,
        0.0f32..=10.0,
        0.0f32..=100.0,
        prop::collection::vec((0.01f32..0.2, -2.0f32..2.0), 1..15),
        0.01f32..=1000.0,
        prop::option::of(erosion()),
    )
        .prop_map(
            |([base, mountains, mask, warp], t, b, s, a, steps, scale, erosion)| {
                let mut x = 0.0f32;
                let mut curve = vec![json!([0.0, 0.0])];
                for (dx, y) in steps {
                    x += dx;
                    curve.push(json!([x, y]));
                }
                let mut p = json!({
                    "base": base, "mountains": mountains, "mask": mask,
                    "mask_threshold": t, "mask_blend": b, "mountain_strength": s,
                    "warp_amplitude": a, "warp": warp, "curve": curve, "height_scale": scale,
                });
                if let Some(e) = erosion {
                    p["erosion"] = e;
                }
                p
            },
        )
}

/// A heightmap recipe's erosion step from valid ranges (some hydraulic
/// passes or thermal iterations, or both).
fn erosion() -> impl Strategy<Value = Value> {
    (
        (
            -1.0e6f64..1.0e6,
            -1.0e6f64..1.0e6,
            1.0f64..1.0e5,
            1.0f64..1.0e5,
        ),
        (
            0u32..=64,
            0.001f32..=1.0,
            1u32..=256,
            1u32..=8,
            0.01f32..1.0e5,
        ),
        (0u32..=10_000, 0.0f32..10.0, 0u32..=64, 0.0f64..1.0e6),
    )
        .prop_filter(
            "does something",
            |(_, (passes, ..), (thermal, _, blur, _))| *passes > 0 || *thermal > 0 || *blur > 0,
        )
        .prop_map(
            |(
                (x, z, w, d),
                (passes, density, lifetime, radius, capacity),
                (thermal, talus, blur, feather),
            )| {
                json!({
                    "region": [x, z, x + w, z + d], "passes": passes, "density": density,
                    "lifetime": lifetime, "radius": radius, "capacity": capacity,
                    "thermal": thermal, "talus": talus, "blur": blur, "feather": feather,
                })
            },
        )
}

fn any_recipe() -> impl Strategy<Value = Value> {
    prop_oneof![
        (
            prop_oneof![Just("caves"), Just("hills"), Just("cellular")],
            2.0f32..=65536.0,
            0.0f32..=1.0,
            -0.99f32..0.99,
            prop_oneof![Just("f32"), Just("u16"), Just("u8")],
        )
            .prop_map(|(g, f, fill, iso, storage)| json!({
                "version": 1, "kind": "side2d",
                "params": {"generator": g, "feature_cells": f, "fill": fill, "iso": iso, "storage": storage}
            })),
        heightmap_params().prop_map(|p| json!({
            "version": 1, "kind": "heightmap", "name": "mine", "params": p
        })),
        (
            prop_oneof![Just("caves"), Just("overhangs"), Just("planet")],
            -1.0e6f32..=1.0e6,
            0.001f32..=1.0e6,
            0.0001f32..=1.0,
            0.0f32..0.99,
            0.0f32..=1.0e6,
            (0.01f32..=1.0e6, 0.01f32..=1.0e6, -0.99f32..0.99),
        )
            .prop_map(
                |(g, level, amp, freq, thr, over, (radius, falloff, iso))| json!({
                    "version": 1, "kind": "voxel",
                    "params": {
                        "generator": g, "ground_level": level, "ground_amplitude": amp,
                        "cave_frequency": freq, "cave_threshold": thr, "overhang_strength": over,
                        "planet_radius": radius, "falloff": falloff, "iso": iso,
                    }
                })
            ),
        (
            prop_oneof![Just("island"), Just("plateaus"), Just("blank")],
            0.001f32..=1.0e6,
            0.001f32..=1.0e6
        )
            .prop_map(|(g, l, c)| json!({
                "version": 1, "kind": "map",
                "params": {"generator": g, "level_height": l, "chasm_depth": c}
            })),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any recipe drawn from the documented ranges validates, survives a
    /// JSON round trip unchanged, and makes world parameters whose recipe
    /// is itself.
    #[test]
    fn recipes_from_valid_ranges_validate_and_round_trip(v in any_recipe()) {
        let recipe = Recipe::from_json(&v.to_string())
            .map_err(|e| TestCaseError::fail(format!("{e}: {v}")))?;
        let again = Recipe::from_json(&recipe.to_json_pretty()).unwrap();
        prop_assert_eq!(&again, &recipe);
        let kind = recipe.kind();
        let params = new_world(kind).with_recipe(recipe.clone()).params()
            .map_err(|e| TestCaseError::fail(format!("{e}: {v}")))?;
        prop_assert_eq!(RecipeParams::of(&params), recipe.params);
    }
}

/// Writes `value` at the dot-separated `path` of a recipe's params.
fn set(recipe: &mut Value, path: &str, value: Value) {
    let mut v = &mut recipe["params"];
    for k in path.split('.') {
        v = match k.parse::<usize>() {
            Ok(i) if v.is_array() => &mut v[i],
            _ => &mut v[k],
        };
    }
    *v = value;
}

/// The error path of a recipe document, or `None` when it is valid.
fn error_path(doc: &Value) -> Option<String> {
    match Recipe::from_json(&doc.to_string()) {
        Ok(_) => None,
        Err(KindError::Recipe { path, .. }) => Some(path),
        Err(e) => Some(format!("not a recipe error: {e}")),
    }
}

/// The controls an editor builds from `recipe_fields` offer exactly what
/// validation accepts: each number's hard range is the one checked (its
/// ends in or out as the range says, just past them refused, naming the
/// field), each slider's ends are accepted, each choice is accepted, and
/// every parameter of every named recipe has a control.
#[test]
fn recipe_fields_agree_with_validation() {
    for base in Recipe::presets() {
        let kind = base.kind();
        let fields = recipe_fields(kind);
        let doc = base.to_json_value();
        for f in &fields {
            let path = format!("params.{}", f.path);
            let mut doc = doc.clone();
            if let Some(part) = &f.within {
                // The optional part turned on, as its toggle does.
                let toggle = fields.iter().find(|g| &g.path == part).unwrap();
                let FieldControl::Toggle { initial } = &toggle.control else {
                    panic!("{path}: {part} is not a toggle");
                };
                set(&mut doc, part, initial.clone());
                assert_eq!(error_path(&doc), None, "{path}: the part's initial value");
            }
            if let Some([cond, value]) = &f.when {
                // The condition, and every field that comes with it at
                // its initial value (as the editor does).
                set(&mut doc, cond, json!(value));
                for g in fields.iter().filter(|g| g.when == f.when) {
                    set(&mut doc, &g.path, g.initial.clone().unwrap());
                }
                assert_eq!(error_path(&doc), None, "{path}: its initial value");
            }
            let with = |v: Value| {
                let mut d = doc.clone();
                set(&mut d, &f.path, v);
                error_path(&d)
            };
            match &f.control {
                FieldControl::Number { bounds, slider, .. } => {
                    for v in slider {
                        assert_eq!(with(json!(v)), None, "{path}: slider end {v}");
                    }
                    let ends = [
                        (bounds.min, bounds.open[0], f32::next_down(bounds.min)),
                        (bounds.max, bounds.open[1], f32::next_up(bounds.max)),
                    ];
                    for (end, open, past) in ends {
                        let at = with(json!(end));
                        if open {
                            assert_eq!(at.as_deref(), Some(path.as_str()), "{path} = {end}");
                        } else {
                            assert_ne!(at.as_deref(), Some(path.as_str()), "{path} = {end}");
                        }
                        assert_eq!(
                            with(json!(past)).as_deref(),
                            Some(path.as_str()),
                            "{path} = {past}"
                        );
                    }
                }
                FieldControl::Integer { min, max, slider } => {
                    for v in slider {
                        assert_eq!(with(json!(v)), None, "{path}: slider end {v}");
                    }
                    let below = i64::from(*min) - 1;
                    assert_eq!(with(json!(below)).as_deref(), Some(path.as_str()));
                    assert_eq!(with(json!(max + 1)).as_deref(), Some(path.as_str()));
                }
                FieldControl::Choice { options } => {
                    for o in *options {
                        let r = with(json!(o));
                        assert!(
                            r.is_none() || !r.as_deref().unwrap().starts_with(&path),
                            "{path} = {o}: {r:?}"
                        );
                    }
                    assert!(with(json!("volcano")).is_some());
                }
                FieldControl::Curve { points, y } => {
                    let n = points[1] + 1;
                    let long: Vec<[f32; 2]> = (0..n).map(|i| [i as f32, 0.0]).collect();
                    assert_eq!(with(json!(long)).as_deref(), Some(path.as_str()));
                    assert!(with(json!([[0.0, f32::next_up(y.max)], [1.0, 1.0]])).is_some());
                }
                FieldControl::Toggle { initial } => {
                    // On (its initial value) and off (left out) are both
                    // valid; a value of the wrong shape names the part.
                    assert_eq!(with(initial.clone()), None, "{path}: on");
                    assert_eq!(with(Value::Null), None, "{path}: off");
                    let wrong = with(json!("yes")).unwrap_or_default();
                    assert!(wrong.starts_with(&path), "{path}: {wrong}");
                }
                other => panic!("{path}: no check for {other:?}"),
            }
        }
        // Every parameter (leaf) of the recipe has a control.
        fn leaves(v: &Value, at: String, out: &mut Vec<String>) {
            match v {
                Value::Object(m) => {
                    for (k, x) in m {
                        let p = if at.is_empty() {
                            k.clone()
                        } else {
                            format!("{at}.{k}")
                        };
                        leaves(x, p, out);
                    }
                }
                _ => out.push(at),
            }
        }
        let mut all = Vec::new();
        let mut doc = doc.clone();
        // With every optional part on, its fields too.
        for f in &fields {
            if let FieldControl::Toggle { initial } = &f.control {
                set(&mut doc, &f.path, initial.clone());
            }
        }
        leaves(&doc["params"], String::new(), &mut all);
        for leaf in all {
            // An array is one control (the curve) or one per element
            // (the erosion region's four edges).
            let element = format!("{leaf}.");
            assert!(
                fields
                    .iter()
                    .any(|f| f.path == leaf || f.path.starts_with(&element)),
                "{kind}: params.{leaf} has no control"
            );
        }
    }
}

/// Every named recipe previews as a PNG of the promised size, the same
/// picture twice; another seed or parameter draws another picture.
#[test]
fn previews_of_every_named_recipe() {
    for recipe in Recipe::presets() {
        let kind = recipe.kind();
        let new = new_world(kind).with_recipe(recipe.clone());
        let p = preview(&new, &PreviewOptions::DEFAULT.with_pixels(96)).unwrap();
        assert!(p.png.starts_with(b"\x89PNG\r\n\x1a\n"), "{kind}");
        let ihdr = &p.png[16..24];
        let w = u32::from_be_bytes(ihdr[0..4].try_into().unwrap());
        let h = u32::from_be_bytes(ihdr[4..8].try_into().unwrap());
        assert_eq!((w, h), (p.width, p.height), "{kind}");
        assert_eq!(w.max(h), 96, "{kind}");
        assert!(p.area > 0.0);
        let again = preview(&new, &PreviewOptions::DEFAULT.with_pixels(96)).unwrap();
        assert_eq!(again, p, "{kind}: previews are deterministic");
        let other = preview(
            &new.clone().with_seed(7),
            &PreviewOptions::DEFAULT.with_pixels(96),
        );
        if recipe.name.as_deref() != Some("blank") {
            assert_ne!(
                other.unwrap().png,
                p.png,
                "{kind} {:?}: seed 7",
                recipe.name
            );
        }
    }
}

#[test]
fn bad_preview_options_are_refused() {
    let side = new_world(WorldKind::Side2d);
    let hm = NewWorld::new(WorldKind::Heightmap);
    for (new, options) in [
        (&side, PreviewOptions::DEFAULT.with_pixels(0)),
        (&side, PreviewOptions::DEFAULT.with_pixels(4096)),
        (&side, PreviewOptions::DEFAULT.with_area(Some(64.0))),
        (&hm, PreviewOptions::DEFAULT.with_area(Some(f32::NAN))),
        (&hm, PreviewOptions::DEFAULT.with_area(Some(0.0))),
        (&hm, PreviewOptions::DEFAULT.with_area(Some(1e9))),
    ] {
        assert!(
            matches!(preview(new, &options), Err(KindError::Invalid(_))),
            "{options:?}"
        );
    }
    let mut bad = Recipe::preset(WorldKind::Heightmap, "hills").unwrap();
    if let RecipeParams::Heightmap(h) = &mut bad.params {
        h.height_scale = -1.0;
    }
    let e = preview(&hm.clone().with_recipe(bad), &PreviewOptions::DEFAULT).unwrap_err();
    assert!(e.to_string().contains("params.height_scale"), "{e}");
}

/// Voxel recipes written before the mesas fields existed still read: the
/// rock fields take their defaults, and the world is the one they made.
#[test]
fn voxel_recipes_without_the_rock_fields_still_read() {
    let mut v = Recipe::preset(WorldKind::Voxel, "caves")
        .unwrap()
        .to_json_value();
    let params = v["params"].as_object_mut().unwrap();
    params.remove("rock_density");
    params.remove("rock_size");
    let old = Recipe::from_json(&v.to_string()).unwrap();
    assert_eq!(old, Recipe::preset(WorldKind::Voxel, "caves").unwrap());
    // The mesas preset prints them, and they are checked.
    let mut m = Recipe::preset(WorldKind::Voxel, "mesas")
        .unwrap()
        .to_json_value();
    assert_eq!(m["params"]["rock_density"], json!(0.3));
    m["params"]["rock_size"] = json!(2.0);
    let e = Recipe::from_json(&m.to_string()).unwrap_err().to_string();
    assert!(e.contains("params.rock_size"), "{e}");
}
