//! Map interchange: Tiled JSON import/export (read back with the `tiled`
//! crate through TMX), layer textures + sidecar, the pathing image and the
//! map `.glb`.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use isoterra_export::{
    ExportError, PngLayersMesh, TiledEncoding, TiledExport, TiledImport, TiledTiles,
    export_pathing_png, export_png_layers, export_tiled, export_tiled_tmx, import_tiled,
    load_png_layers, pathing_color, quantize_for_png, read_png_layers_sidecar, read_tiled_layer,
};
use isoterra_field::map::{MAX_MAP_CELLS, MapLayers, PathingOverride, Splat};
use isoterra_world::{PathingGrid, PathingRules, high_ground, level_colliders, pathing_grid};
use proptest::prelude::*;
use serde_json::{Value, json};

fn set(m: &mut MapLayers, x: u32, z: u32, f: impl FnOnce(&mut MapLayers, usize)) {
    let i = m.index(x, z).unwrap();
    f(m, i);
}

/// 16 x 12 cells: a level-1 plateau with a level-2 top, a chasm, a lake,
/// painted textures and a pathing override.
fn sample_map() -> MapLayers {
    let mut m = MapLayers::new(16, 12).unwrap();
    for z in 0..=12u32 {
        for x in 0..=16u32 {
            let i = m.index(x, z).unwrap();
            if x >= 9 {
                m.level[i] = if x >= 12 && z <= 5 { 2.0 } else { 1.0 };
            }
            if (2..=4).contains(&x) && (7..=9).contains(&z) {
                m.ground[i] = -1.0;
            }
            if x <= 3 && z <= 3 {
                m.water[i] = 0.8;
                m.splat[i] = Splat::single(3);
            }
            m.height[i] = ((x * 7 + z * 3) % 5) as f32 * 0.01;
            m.splat[i].weights[1] = (x * 13 % 200) as u8;
            m.splat[i].ids[1] = (z % 16) as u8;
        }
    }
    set(&mut m, 6, 6, |m, i| {
        m.pathing[i] = PathingOverride::NO_BUILD
    });
    m
}

fn chasm_cell(m: &MapLayers, x: u32, z: u32) -> bool {
    let g = |dx, dz| m.ground[m.index(x + dx, z + dz).unwrap()];
    g(0, 0) + g(1, 0) + g(0, 1) + g(1, 1) < 0.0
}

// ---------------------------------------------------------------------------
// Tiled export
// ---------------------------------------------------------------------------

#[test]
fn tiled_export_has_level_and_pathing_layers_in_every_encoding() {
    let m = sample_map();
    let grid = pathing_grid(&m, &PathingRules::DEFAULT).unwrap();
    let hg = high_ground(&m);
    for enc in [
        TiledEncoding::Csv,
        TiledEncoding::Base64,
        TiledEncoding::Base64Zlib,
        TiledEncoding::Base64Gzip,
        TiledEncoding::Base64Zstd,
    ] {
        let json = export_tiled(&m, Some(&grid), &TiledExport::DEFAULT.with_encoding(enc)).unwrap();
        let doc: Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(doc["orientation"], "orthogonal");
        assert_eq!(doc["width"], 16);
        assert_eq!(doc["height"], 12);
        assert_eq!(doc["tilesets"][0]["tiles"].as_array().unwrap().len(), 49);
        let level = read_tiled_layer(&json, Some("level")).unwrap();
        let path = read_tiled_layer(&json, Some("pathing")).unwrap();
        assert_eq!((level.width, level.height), (16, 12));
        for z in 0..12u32 {
            for x in 0..16u32 {
                let k = (z * 16 + x) as usize;
                let want = if chasm_cell(&m, x, z) {
                    TiledTiles::CHASM + 1
                } else {
                    TiledTiles::LEVEL + hg[k] as u32 + 1
                };
                assert_eq!(level.gids[k], want, "{enc:?} level at ({x}, {z})");
                assert_eq!(
                    path.gids[k],
                    TiledTiles::PATHING + grid.cells()[k] as u32 + 1,
                    "{enc:?} pathing at ({x}, {z})"
                );
            }
        }
        // The first tile layer is the level layer.
        assert_eq!(read_tiled_layer(&json, None).unwrap(), level);
        // CSV data is a plain array with no `encoding`; base64 always names
        // its compression (empty for none), as loaders expect.
        for layer in doc["layers"].as_array().unwrap() {
            if enc == TiledEncoding::Csv {
                assert!(layer.get("encoding").is_none(), "{enc:?}: {layer}");
                assert!(layer["data"].is_array());
            } else {
                assert_eq!(layer["encoding"], "base64");
                assert!(layer["compression"].is_string(), "{enc:?}");
            }
        }
        // The map says it has one tile per cell.
        assert_eq!(isoterra_export::tiled_cells_per_tile(&json), Some(1));
    }
}

/// A Python with `pytiled_parser` (the loader behind Python Arcade):
/// `ISOTERRA_PYTHON`, else `python3`. Without it the test says so loudly
/// and passes, unless `ISOTERRA_REQUIRE_PYTILED=1` (CI sets it).
fn pytiled_python() -> Option<String> {
    let python = std::env::var("ISOTERRA_PYTHON").unwrap_or_else(|_| "python3".into());
    let ok = std::process::Command::new(&python)
        .args(["-c", "import pytiled_parser"])
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        return Some(python);
    }
    if std::env::var("ISOTERRA_REQUIRE_PYTILED").as_deref() == Ok("1") {
        panic!("pytiled_parser is required but `{python} -c 'import pytiled_parser'` failed");
    }
    eprintln!(
        "\n*** SKIPPED: pytiled_parser not found (pip install pytiled-parser, or set ISOTERRA_PYTHON) ***\n"
    );
    None
}

#[test]
fn pytiled_parser_reads_the_export_in_every_encoding() {
    let Some(python) = pytiled_python() else {
        return;
    };
    let m = sample_map();
    let grid = pathing_grid(&m, &PathingRules::DEFAULT).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for enc in [
        TiledEncoding::Csv,
        TiledEncoding::Base64,
        TiledEncoding::Base64Zlib,
        TiledEncoding::Base64Gzip,
    ] {
        let json = export_tiled(&m, Some(&grid), &TiledExport::DEFAULT.with_encoding(enc)).unwrap();
        let path = dir.path().join("map.tmj");
        std::fs::write(&path, &json).unwrap();
        let script = r#"
import sys, pathlib, pytiled_parser
m = pytiled_parser.parse_map(pathlib.Path(sys.argv[1]))
print(m.map_size.width, m.map_size.height, len(m.tilesets))
for l in m.layers:
    print(l.name, len(l.data), len(l.data[0]), sum(sum(r) for r in l.data))
"#;
        let out = std::process::Command::new(&python)
            .args(["-c", script, path.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{enc:?}: pytiled_parser failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("16 12 1"), "{enc:?}: {text}");
        for name in ["level", "pathing"] {
            let want = read_tiled_layer(&json, Some(name)).unwrap();
            let sum: u64 = want.gids.iter().map(|&g| u64::from(g)).sum();
            assert_eq!(
                lines.next(),
                Some(format!("{name} 12 16 {sum}").as_str()),
                "{enc:?}: {text}"
            );
        }
    }
}

#[test]
fn the_tiled_crate_reads_the_export_back() {
    let m = sample_map();
    let grid = pathing_grid(&m, &PathingRules::DEFAULT).unwrap();
    let hg = high_ground(&m);
    let dir = tempfile::tempdir().unwrap();
    for enc in [
        TiledEncoding::Csv,
        TiledEncoding::Base64Zlib,
        TiledEncoding::Base64Gzip,
    ] {
        let tmx = export_tiled_tmx(&m, None, &TiledExport::DEFAULT.with_encoding(enc)).unwrap();
        let path = dir.path().join(format!("map_{enc:?}.tmx"));
        std::fs::write(&path, &tmx).unwrap();
        let map = tiled::Loader::new()
            .load_tmx_map(&path)
            .unwrap_or_else(|e| panic!("{enc:?}: {e}"));
        assert_eq!((map.width, map.height), (16, 12));
        assert_eq!(map.orientation, tiled::Orientation::Orthogonal);
        assert_eq!(map.tilesets().len(), 1);
        let names: Vec<String> = map.layers().map(|l| l.name.clone()).collect();
        assert_eq!(names, ["level", "pathing"]);
        let level = map.get_layer(0).unwrap().as_tile_layer().unwrap();
        let pathing = map.get_layer(1).unwrap().as_tile_layer().unwrap();
        for z in 0..12i32 {
            for x in 0..16i32 {
                let k = (z * 16 + x) as usize;
                let t = level.get_tile(x, z).unwrap();
                let tile = t.get_tile().unwrap();
                let solid = tile.properties.get("solid");
                let lvl = tile.properties.get("level");
                if chasm_cell(&m, x as u32, z as u32) {
                    assert_eq!(solid, Some(&tiled::PropertyValue::BoolValue(false)));
                } else {
                    assert_eq!(solid, Some(&tiled::PropertyValue::BoolValue(true)));
                    assert_eq!(lvl, Some(&tiled::PropertyValue::IntValue(hg[k] as i32)));
                }
                let p = pathing.get_tile(x, z).unwrap();
                assert_eq!(p.id(), TiledTiles::PATHING + grid.cells()[k] as u32);
                let props = &p.get_tile().unwrap().properties;
                let walk = grid.cells()[k] & PathingGrid::WALK != 0;
                assert_eq!(
                    props.get("walk"),
                    Some(&tiled::PropertyValue::BoolValue(walk))
                );
            }
        }
    }
}

#[test]
fn tiled_json_round_trip_keeps_levels_and_chasms() {
    // Blocks of 4x4 cells at one level each, so every interior node has a
    // single level among its cells.
    let mut m = MapLayers::new(16, 16).unwrap();
    for z in 0..=16u32 {
        for x in 0..=16u32 {
            let i = m.index(x, z).unwrap();
            m.level[i] = ((x / 4 + z / 4) % 3) as f32;
        }
    }
    let json = export_tiled(&m, None, &TiledExport::DEFAULT).unwrap();
    let back = import_tiled(
        &json,
        &TiledImport::DEFAULT
            .with_layer(Some("level".into()))
            .with_cells_per_tile(1)
            .with_smooth_passes(0),
    )
    .unwrap();
    assert_eq!((back.width_cells(), back.depth_cells()), (16, 16));
    // Inside each block (cells whose corner nodes only touch exported cells
    // of the block: the export takes the lowest corner, so a block loses its
    // last row and column next to a lower block) the levels come back.
    let (hb, hm) = (high_ground(&back), high_ground(&m));
    for z in (0..16usize).filter(|z| z % 4 == 1) {
        for x in (0..16usize).filter(|x| x % 4 == 1) {
            assert_eq!(hb[z * 16 + x], hm[z * 16 + x], "cell ({x}, {z})");
        }
    }
    // The import is all land (every exported level tile is solid).
    assert!(back.ground.iter().all(|&g| g >= 0.0));
}

// ---------------------------------------------------------------------------
// Tiled import
// ---------------------------------------------------------------------------

fn tiled_doc(width: u32, height: u32, layer: Value) -> Value {
    json!({
        "type": "map",
        "orientation": "orthogonal",
        "width": width,
        "height": height,
        "tilewidth": 16,
        "tileheight": 16,
        "infinite": false,
        "layers": [
            { "type": "objectgroup", "name": "things", "objects": [] },
            { "type": "group", "name": "g", "layers": [layer] },
        ],
        "tilesets": [{
            "firstgid": 1,
            "name": "terrain",
            "tiles": [
                { "id": 0, "properties": [{ "name": "solid", "type": "bool", "value": false }] },
                { "id": 1, "properties": [{ "name": "solid", "type": "bool", "value": true }] },
                { "id": 2, "properties": [
                    { "name": "solid", "type": "bool", "value": true },
                    { "name": "level", "type": "int", "value": 2 }
                ] },
            ],
        }],
    })
}

fn csv_layer(name: &str, width: u32, height: u32, gids: &[u32]) -> Value {
    json!({ "type": "tilelayer", "name": name, "width": width, "height": height, "data": gids })
}

fn bytes(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).unwrap()
}

#[test]
fn solid_tiles_become_round_land_and_levels_become_cliffs() {
    // 8x8 tiles: open tiles (gid 1) except a single solid tile and a 3x3
    // block at level 2.
    let mut gids = vec![1u32; 64];
    gids[9] = 2;
    for z in 4..7 {
        for x in 4..7 {
            gids[z * 8 + x] = 3;
        }
    }
    let doc = tiled_doc(8, 8, csv_layer("ground", 8, 8, &gids));
    let m = import_tiled(&bytes(&doc), &TiledImport::DEFAULT).unwrap();
    assert_eq!((m.width_cells(), m.depth_cells()), (16, 16));
    m.validate().unwrap();
    // The single solid tile survives as a small round island.
    let centre = m.index(3, 3).unwrap();
    assert!(m.ground[centre] > 0.0);
    assert!(m.ground[m.index(0, 0).unwrap()] < 0.0);
    let c = level_colliders(&m, 0.05).unwrap();
    let ground = c.iter().find(|c| c.level == 0).unwrap();
    assert_eq!(ground.polylines.len(), 2, "the lone tile and the block");
    // The level-2 block is a plateau of levels 1 and 2 with rims inside it.
    let top = m.index(11, 11).unwrap();
    assert_eq!(m.level_of(top), 2);
    assert!(c.iter().any(|c| c.level == 2));
    // Smoothing rounds corners: a block corner node is lower than its centre.
    assert!(m.level[m.index(8, 8).unwrap()] < m.level[top]);
}

#[test]
fn a_layer_without_solid_tiles_is_all_land_and_ids_can_mark_solid() {
    let gids = vec![5u32; 16];
    let doc = tiled_doc(4, 4, csv_layer("ground", 4, 4, &gids));
    let m = import_tiled(&bytes(&doc), &TiledImport::DEFAULT).unwrap();
    assert!(m.ground.iter().all(|&g| g >= 0.0));
    let mut gids = vec![7u32; 16];
    gids[5] = 9;
    gids[6] = 9 | 0x8000_0000; // flipped horizontally: still gid 9
    let doc = tiled_doc(4, 4, csv_layer("ground", 4, 4, &gids));
    let opts = TiledImport::DEFAULT
        .with_cells_per_tile(1)
        .with_smooth_passes(0)
        .with_solid_gids(vec![9])
        .with_level_gids(vec![(9, 3)]);
    let m = import_tiled(&bytes(&doc), &opts).unwrap();
    // Node (2, 2) is shared by tiles 5, 6, 9 and 10: half solid.
    let i = m.index(2, 2).unwrap();
    assert_eq!(m.ground[i], 0.0);
    assert_eq!(m.level[i], 1.5);
    assert!(m.ground[0] < 0.0);
}

#[test]
fn pre_1_2_tile_properties_are_read_too() {
    let mut doc = tiled_doc(2, 2, csv_layer("l", 2, 2, &[11, 12, 12, 11]));
    doc["tilesets"] = json!([{
        "firstgid": 11,
        "tileproperties": { "1": { "solid": true, "level": 1 }, "0": { "solid": false } },
    }]);
    let opts = TiledImport::DEFAULT
        .with_cells_per_tile(1)
        .with_smooth_passes(0);
    let m = import_tiled(&bytes(&doc), &opts).unwrap();
    // Node (1, 1) is shared by all four tiles: half solid, level 0.5.
    let i = m.index(1, 1).unwrap();
    assert_eq!(m.ground[i], 0.0);
    assert_eq!(m.level[i], 0.5);
    assert_eq!(m.ground[0], -1.0);
    assert_eq!(m.ground[m.index(2, 0).unwrap()], 1.0);
    assert_eq!(m.level[m.index(2, 0).unwrap()], 1.0);
}

#[test]
fn base64_layers_in_every_compression_and_infinite_chunks() {
    let gids: Vec<u32> = (0..24).map(|i| if i % 5 == 0 { 3 } else { 2 }).collect();
    let raw: Vec<u8> = gids.iter().flat_map(|g| g.to_le_bytes()).collect();
    let csv = import_tiled(
        &bytes(&tiled_doc(6, 4, csv_layer("l", 6, 4, &gids))),
        &TiledImport::DEFAULT,
    )
    .unwrap();
    let compressed = |c: &str| -> Vec<u8> {
        use std::io::Write;
        match c {
            "" => raw.clone(),
            "zlib" => {
                let mut e = flate2::write::ZlibEncoder::new(Vec::new(), Default::default());
                e.write_all(&raw).unwrap();
                e.finish().unwrap()
            }
            "gzip" => {
                let mut e = flate2::write::GzEncoder::new(Vec::new(), Default::default());
                e.write_all(&raw).unwrap();
                e.finish().unwrap()
            }
            _ => zstd::encode_all(&raw[..], 1).unwrap(),
        }
    };
    for c in ["", "zlib", "gzip", "zstd"] {
        let layer = json!({
            "type": "tilelayer", "name": "l", "width": 6, "height": 4,
            "encoding": "base64", "compression": c,
            "data": BASE64.encode(compressed(c)),
        });
        let m = import_tiled(&bytes(&tiled_doc(6, 4, layer)), &TiledImport::DEFAULT).unwrap();
        assert_eq!(m, csv, "compression {c:?}");
    }
    // The same tiles as two chunks of an infinite map, at negative coordinates.
    let (top, bottom) = gids.split_at(12);
    let layer = json!({
        "type": "tilelayer", "name": "l", "startx": -16, "starty": -2,
        "chunks": [
            { "x": -16, "y": 0, "width": 6, "height": 2, "encoding": "csv", "data": bottom },
            { "x": -16, "y": -2, "width": 6, "height": 2, "data": "" },
        ],
        // As Tiled writes it: the encoding on the layer, for every chunk.
        "encoding": "base64", "compression": "zlib",
    });
    let mut doc = tiled_doc(6, 4, layer);
    doc["infinite"] = json!(true);
    // The compressed chunk: the top rows, base64 + zlib.
    let top_raw: Vec<u8> = top.iter().flat_map(|g| g.to_le_bytes()).collect();
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), Default::default());
    std::io::Write::write_all(&mut e, &top_raw).unwrap();
    doc["layers"][1]["layers"][0]["chunks"][1]["data"] = json!(BASE64.encode(e.finish().unwrap()));
    let l = read_tiled_layer(&bytes(&doc), Some("l")).unwrap();
    assert_eq!((l.width, l.height), (6, 4));
    assert_eq!(l.gids, gids);
    let m = import_tiled(&bytes(&doc), &TiledImport::DEFAULT).unwrap();
    assert_eq!(m, csv);
}

#[test]
fn bad_tiled_input_gives_typed_errors() {
    let ok = tiled_doc(2, 2, csv_layer("l", 2, 2, &[1, 2, 2, 1]));
    let opts = TiledImport::DEFAULT;
    let err = |doc: &[u8]| import_tiled(doc, &opts).unwrap_err();
    assert!(matches!(err(b"{ not json"), ExportError::TiledJson(_)));
    assert!(matches!(err(b"[1, 2]"), ExportError::TiledJson(_)));
    let mut d = ok.clone();
    d["orientation"] = json!("isometric");
    let e = err(&bytes(&d));
    assert!(matches!(&e, ExportError::TiledOrientation(o) if o == "isometric"));
    assert!(e.to_string().contains("orthogonal"));
    d["orientation"] = json!("hexagonal");
    assert!(matches!(err(&bytes(&d)), ExportError::TiledOrientation(_)));
    let e = import_tiled(
        &bytes(&ok),
        &TiledImport::DEFAULT.with_layer(Some("nope".into())),
    )
    .unwrap_err();
    match &e {
        ExportError::TiledLayerNotFound { name, available } => {
            assert_eq!(name, "nope");
            assert_eq!(available, &["l".to_string()]);
        }
        other => panic!("unexpected {other:?}"),
    }
    let layer = |enc: &str, comp: &str| {
        json!({ "type": "tilelayer", "name": "l", "width": 2, "height": 2,
                "encoding": enc, "compression": comp, "data": "AAAA" })
    };
    let e = err(&bytes(&tiled_doc(2, 2, layer("base64", "lz4"))));
    assert!(
        matches!(&e, ExportError::TiledCompression(c) if c.contains("lz4")),
        "{e}"
    );
    assert!(matches!(
        err(&bytes(&tiled_doc(2, 2, layer("xml", "")))),
        ExportError::TiledCompression(_)
    ));
    // Wrong data length, bad base64, corrupt zlib.
    assert!(matches!(
        err(&bytes(&tiled_doc(2, 2, csv_layer("l", 2, 2, &[1, 2, 3])))),
        ExportError::TiledJson(_)
    ));
    assert!(matches!(
        err(&bytes(&tiled_doc(2, 2, layer("base64", "")))),
        ExportError::TiledJson(_)
    ));
    let mut corrupt = layer("base64", "zlib");
    corrupt["data"] = json!(BASE64.encode([1u8, 2, 3, 4, 5, 6]));
    assert!(matches!(
        err(&bytes(&tiled_doc(2, 2, corrupt))),
        ExportError::TiledJson(_)
    ));
    // Too large, before anything is allocated.
    let big = json!({ "type": "tilelayer", "name": "l", "width": MAX_MAP_CELLS + 1,
                      "height": 2, "data": [] });
    assert!(matches!(
        err(&bytes(&tiled_doc(2, 2, big))),
        ExportError::MapTooLarge { .. }
    ));
    let wide = vec![1u32; 3000];
    let e = err(&bytes(&tiled_doc(3000, 1, csv_layer("l", 3000, 1, &wide))));
    assert!(
        matches!(e, ExportError::MapTooLarge { width: 6000, .. }),
        "{e}"
    );
    // A level property out of range.
    let mut d = ok.clone();
    d["tilesets"][0]["tiles"][1]["properties"] =
        json!([{ "name": "level", "type": "int", "value": 16 }]);
    let e = err(&bytes(&d));
    assert!(
        matches!(&e, ExportError::InvalidParameter { name: "level", .. }),
        "{e}"
    );
    assert!(e.to_string().contains("0..=15"));
    // Options out of range.
    assert!(import_tiled(&bytes(&ok), &TiledImport::DEFAULT.with_cells_per_tile(0)).is_err());
    assert!(import_tiled(&bytes(&ok), &TiledImport::DEFAULT.with_smooth_passes(9)).is_err());
    assert!(
        import_tiled(
            &bytes(&ok),
            &TiledImport::DEFAULT.with_level_gids(vec![(1, 16)])
        )
        .is_err()
    );
    // A map without tile layers names no layer.
    let mut d = ok.clone();
    d["layers"] = json!([]);
    assert!(matches!(
        err(&bytes(&d)),
        ExportError::TiledLayerNotFound { .. }
    ));
}

#[test]
fn tiled_export_rejects_bad_input() {
    let m = sample_map();
    let small = pathing_grid(&MapLayers::new(2, 2).unwrap(), &PathingRules::DEFAULT).unwrap();
    assert!(export_tiled(&m, Some(&small), &TiledExport::DEFAULT).is_err());
    assert!(export_tiled(&m, None, &TiledExport::DEFAULT.with_tile_size(0)).is_err());
    let mut bad = m.clone();
    bad.level[3] = f32::NAN;
    assert!(export_tiled(&bad, None, &TiledExport::DEFAULT).is_err());
    assert!(export_tiled_tmx(&bad, None, &TiledExport::DEFAULT).is_err());
}

// ---------------------------------------------------------------------------
// Layer textures
// ---------------------------------------------------------------------------

#[test]
fn grid_maps_round_trip_exactly_through_png_layers() {
    let m = sample_map();
    // Every value of the sample lies on the grid (levels, softness 0/1, ground +-1).
    assert_eq!(quantize_for_png(&m).unwrap(), m);
    let mesh = PngLayersMesh::new(2.0, 1.5, 3.0);
    let files = export_png_layers(&m, Some(mesh)).unwrap();
    assert_eq!(&files.png[1..4], b"PNG");
    let back = load_png_layers(&files.png, &files.sidecar).unwrap();
    assert_eq!(back, m);
    let info = read_png_layers_sidecar(&files.sidecar).unwrap();
    assert_eq!((info.width_cells, info.depth_cells), (16, 12));
    assert_eq!(info.mesh, Some(mesh));
    let files = export_png_layers(&m, None).unwrap();
    assert_eq!(read_png_layers_sidecar(&files.sidecar).unwrap().mesh, None);
}

#[test]
fn png_layers_decode_as_documented() {
    let mut m = MapLayers::new(3, 2).unwrap();
    m.ground[1] = -1.5;
    m.level[2] = 7.25;
    m.softness[3] = 0.5;
    let files = export_png_layers(&m, None).unwrap();
    let dec = png::Decoder::new(std::io::Cursor::new(&files.png));
    let mut r = dec.read_info().unwrap();
    assert_eq!((r.info().width, r.info().height), (4, 3));
    assert_eq!(r.info().color_type, png::ColorType::Rgb);
    assert_eq!(r.info().bit_depth, png::BitDepth::Sixteen);
    let mut buf = vec![0; r.output_buffer_size().unwrap()];
    r.next_frame(&mut buf).unwrap();
    let px = |i: usize, c: usize| u16::from_be_bytes([buf[i * 6 + c * 2], buf[i * 6 + c * 2 + 1]]);
    let side: Value = serde_json::from_slice(&files.sidecar).unwrap();
    // |ground| <= 1.5 < 2^1.
    assert_eq!(side["quantization"]["ground_exponent"], 1);
    assert_eq!(px(0, 0), 32768 + 16384); // ground 1.0 at step 2^-14
    assert_eq!(px(1, 0), 32768 - 24576); // ground -1.5
    assert_eq!(px(2, 1), 32768 + 7 * 2048 + 512);
    assert_eq!(px(3, 2), 16384);
    assert_eq!(px(0, 1), 32768);
}

#[test]
fn bad_png_layer_files_are_errors() {
    let m = sample_map();
    let files = export_png_layers(&m, None).unwrap();
    let other = export_png_layers(&MapLayers::new(3, 3).unwrap(), None).unwrap();
    assert!(matches!(
        load_png_layers(&other.png, &files.sidecar),
        Err(ExportError::MapLayers(_))
    ));
    assert!(load_png_layers(&files.png, b"{").is_err());
    assert!(load_png_layers(b"not a png", &files.sidecar).is_err());
    let mut side: Value = serde_json::from_slice(&files.sidecar).unwrap();
    side["version"] = json!(99);
    assert!(load_png_layers(&files.png, &bytes(&side)).is_err());
    let mut side: Value = serde_json::from_slice(&files.sidecar).unwrap();
    side["layers"]["water"]["data"] =
        json!(BASE64.encode(zstd::encode_all(&[0u8; 8][..], 1).unwrap()));
    assert!(load_png_layers(&files.png, &bytes(&side)).is_err());
    let mut side: Value = serde_json::from_slice(&files.sidecar).unwrap();
    side["width_cells"] = json!(0);
    assert!(load_png_layers(&files.png, &bytes(&side)).is_err());
    let mut bad = m.clone();
    bad.height.pop();
    assert!(export_png_layers(&bad, None).is_err());
    assert!(quantize_for_png(&bad).is_err());
}

fn arb_map() -> impl Strategy<Value = MapLayers> {
    (1u32..7, 1u32..7).prop_flat_map(|(w, d)| {
        let n = ((w + 1) * (d + 1)) as usize;
        (
            prop::collection::vec(-300.0f32..300.0, n),
            prop::collection::vec(-0.5f32..=15.5, n),
            prop::collection::vec(0.0f32..=1.0, n),
            prop::collection::vec(-50.0f32..50.0, n),
            prop::collection::vec(any::<[u8; 8]>(), n),
            prop::collection::vec(0u8..8, n),
            0.0f32..1.0,
        )
            .prop_map(
                move |(ground, level, soft, height, splat, pathing, scale)| {
                    let mut m = MapLayers::new(w, d).unwrap();
                    m.ground = ground.iter().map(|g| g * scale).collect();
                    m.level = level;
                    m.softness = soft;
                    m.water = height.iter().map(|h| h * 0.5).collect();
                    m.height = height;
                    m.splat = splat
                        .into_iter()
                        .map(|b| {
                            let mut s = Splat::from_bytes(b);
                            s.ids = s.ids.map(|i| i % 16);
                            s
                        })
                        .collect();
                    m.pathing = pathing;
                    m
                },
            )
    })
}

fn bits_eq(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn quantized_maps_round_trip_bit_for_bit(m in arb_map()) {
        let q = quantize_for_png(&m).unwrap();
        let files = export_png_layers(&q, None).unwrap();
        let back = load_png_layers(&files.png, &files.sidecar).unwrap();
        prop_assert!(bits_eq(&back.ground, &q.ground));
        prop_assert!(bits_eq(&back.level, &q.level));
        prop_assert!(bits_eq(&back.softness, &q.softness));
        prop_assert!(bits_eq(&back.height, &m.height));
        prop_assert!(bits_eq(&back.water, &m.water));
        prop_assert_eq!(&back.splat, &m.splat);
        prop_assert_eq!(&back.pathing, &m.pathing);
        // Quantising is idempotent and close to the input.
        prop_assert_eq!(&quantize_for_png(&q).unwrap(), &q);
        for (a, b) in q.level.iter().zip(&m.level) {
            prop_assert!((a - b).abs() <= 0.5 / 2048.0 + 1e-6);
        }
        for (a, b) in q.softness.iter().zip(&m.softness) {
            prop_assert!((a - b).abs() <= 0.5 / 32768.0 + 1e-7);
        }
    }
}

// ---------------------------------------------------------------------------
// Pathing image
// ---------------------------------------------------------------------------

#[test]
fn pathing_png_has_one_colour_per_bit_combination() {
    let mut colours: Vec<[u8; 3]> = (0..32u8).map(pathing_color).collect();
    colours.sort();
    colours.dedup();
    assert_eq!(colours.len(), 32);
    assert_eq!(
        pathing_color(PathingGrid::WALK | PathingGrid::FLY | PathingGrid::BUILD),
        [0, 160, 0]
    );
    assert_eq!(pathing_color(PathingGrid::FLY), [160, 0, 0]);
    let m = sample_map();
    let grid = pathing_grid(&m, &PathingRules::DEFAULT).unwrap();
    let bytes = export_pathing_png(&grid).unwrap();
    let mut r = png::Decoder::new(std::io::Cursor::new(&bytes))
        .read_info()
        .unwrap();
    assert_eq!((r.info().width, r.info().height), (16, 12));
    assert_eq!(r.info().color_type, png::ColorType::Rgb);
    let mut buf = vec![0; r.output_buffer_size().unwrap()];
    r.next_frame(&mut buf).unwrap();
    for (k, &b) in grid.cells().iter().enumerate() {
        assert_eq!(&buf[k * 3..k * 3 + 3], &pathing_color(b));
    }
}

// ---------------------------------------------------------------------------
// Meshes from loaded layers, and the map .glb
// ---------------------------------------------------------------------------

use isoterra_export::{export_map_glb, export_map_mesh_glb, splat_color};
use isoterra_mesh::{CellRect, MapMeshOptions, MapMeshOutput, MapMesher};

fn mesh_of(m: &MapLayers) -> MapMeshOutput {
    let mut out = MapMeshOutput::default();
    MapMesher::new()
        .mesh(m, CellRect::whole(m), &MapMeshOptions::DEFAULT, &mut out)
        .unwrap();
    out
}

fn same_mesh(a: &MapMeshOutput, b: &MapMeshOutput) -> bool {
    let f3 = |x: &[[f32; 3]], y: &[[f32; 3]]| {
        x.len() == y.len()
            && x.iter()
                .zip(y)
                .all(|(p, q)| (0..3).all(|k| p[k].to_bits() == q[k].to_bits()))
    };
    let f1 = |x: &[f32], y: &[f32]| bits_eq(x, y);
    f3(&a.terrain.positions, &b.terrain.positions)
        && f3(&a.terrain.normals, &b.terrain.normals)
        && a.terrain.splat == b.terrain.splat
        && f1(&a.terrain.blend, &b.terrain.blend)
        && a.terrain.indices == b.terrain.indices
        && f3(&a.water.positions, &b.water.positions)
        && f3(&a.water.normals, &b.water.normals)
        && f1(&a.water.depth, &b.water.depth)
        && a.water.indices == b.water.indices
}

#[test]
fn meshes_from_loaded_png_layers_are_bitwise_equal() {
    let m = sample_map();
    let files = export_png_layers(&m, None).unwrap();
    let back = load_png_layers(&files.png, &files.sidecar).unwrap();
    let (a, b) = (mesh_of(&m), mesh_of(&back));
    assert!(a.terrain.triangle_count() > 0 && a.water.triangle_count() > 0);
    assert!(same_mesh(&a, &b));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn quantized_maps_mesh_identically_after_loading(m in arb_map()) {
        let q = quantize_for_png(&m).unwrap();
        let files = export_png_layers(&q, None).unwrap();
        let back = load_png_layers(&files.png, &files.sidecar).unwrap();
        prop_assert!(same_mesh(&mesh_of(&q), &mesh_of(&back)));
    }
}

#[test]
fn splat_colours_follow_the_palette() {
    let c = splat_color(Splat::single(0), 0.0);
    assert_eq!(c, [0.20, 0.45, 0.12, 1.0]);
    let half = Splat {
        ids: [0, 8, 0, 0],
        weights: [100, 100, 0, 0],
    };
    let c = splat_color(half, 0.0);
    assert!((c[0] - 0.56).abs() < 1e-6);
    assert_eq!(splat_color(Splat::single(0), 1.0), [0.33, 0.30, 0.27, 1.0]);
    let none = Splat {
        ids: [3, 0, 0, 0],
        weights: [0; 4],
    };
    assert_eq!(splat_color(none, f32::NAN), [0.80, 0.72, 0.50, 1.0]);
}

fn validator_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/validator")
}

/// Runs the Khronos validator; `None` (with a loud note) when it is not installed.
fn validate(file: &std::path::Path) -> Option<Value> {
    use std::io::Write;
    let dir = validator_dir();
    let required = std::env::var("ISOTERRA_REQUIRE_VALIDATOR").is_ok_and(|v| v == "1");
    let node_ok = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !(node_ok && dir.join("node_modules/gltf-validator").is_dir()) {
        let msg = format!(
            "SKIPPED: gltf-validator not installed; run npm ci in {} (node found: {node_ok})",
            dir.display()
        );
        assert!(!required, "{msg} (ISOTERRA_REQUIRE_VALIDATOR=1)");
        let _ = writeln!(std::io::stderr(), "\n!!!!!!!!\n{msg}\n!!!!!!!!\n");
        return None;
    }
    let out = std::process::Command::new("node")
        .arg(dir.join("validate.mjs"))
        .arg(file)
        .output()
        .expect("node runs");
    let report: Value = serde_json::from_slice(&out.stdout).expect("validator prints JSON");
    Some(report)
}

#[test]
fn map_glb_passes_the_khronos_validator() {
    let m = sample_map();
    let bytes = export_map_glb(&m, &MapMeshOptions::DEFAULT.with_cell_size(2.0)).unwrap();
    // The container: terrain with colours and an opaque material, water blended.
    let json_len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let doc: Value = serde_json::from_slice(&bytes[20..20 + json_len]).unwrap();
    assert_eq!(doc["nodes"][0]["name"], "terrain");
    assert_eq!(doc["nodes"][1]["name"], "water");
    // Terrain: ground and cliff walls, each a primitive of its own material;
    // water blended.
    let prims = doc["meshes"][0]["primitives"].as_array().unwrap();
    assert_eq!(prims.len(), 2);
    for prim in prims {
        for a in ["COLOR_0", "NORMAL", "TEXCOORD_0", "_SPLAT0"] {
            assert!(prim["attributes"][a].is_u64(), "{a}");
        }
    }
    let names: Vec<&str> = doc["materials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["terrain", "cliff", "water"]);
    assert_eq!(doc["materials"][2]["alphaMode"], "BLEND");
    assert!(doc["meshes"][1]["primitives"][0]["attributes"]["TEXCOORD_0"].is_u64());
    // The same bytes from an existing mesh.
    let mut out = MapMeshOutput::default();
    MapMesher::new()
        .mesh(
            &m,
            CellRect::whole(&m),
            &MapMeshOptions::DEFAULT.with_cell_size(2.0),
            &mut out,
        )
        .unwrap();
    assert_eq!(export_map_mesh_glb(&out).unwrap(), bytes);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("map.glb");
    std::fs::write(&file, &bytes).unwrap();
    if let Some(report) = validate(&file) {
        let issues = &report["issues"];
        assert_eq!(
            issues["numErrors"], 0,
            "validator errors: {:#}",
            issues["messages"]
        );
        assert_eq!(
            issues["numWarnings"], 0,
            "validator warnings: {:#}",
            issues["messages"]
        );
        assert_eq!(report["info"]["drawCallCount"].as_u64(), Some(3));
    }
    // A map without water has a terrain node only.
    let dry = MapLayers::new(4, 4).unwrap();
    let bytes = export_map_glb(&dry, &MapMeshOptions::DEFAULT).unwrap();
    let json_len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let doc: Value = serde_json::from_slice(&bytes[20..20 + json_len]).unwrap();
    assert_eq!(doc["nodes"].as_array().unwrap().len(), 1);
    let mut bad = dry.clone();
    bad.ground[0] = f32::INFINITY;
    assert!(export_map_glb(&bad, &MapMeshOptions::DEFAULT).is_err());
}

#[test]
fn tiled_import_of_a_big_layer_of_distinct_gids_completes() {
    // 1024 x 1024 tiles, every one its own gid, half of them marked solid
    // and some with a level by tileset properties: classifying the gids
    // used to cost (distinct gids) x (gids + properties), which did not
    // finish; it is linear now.
    let n = 1024u32;
    let count = n * n;
    let data: Vec<u32> = (1..=count).collect();
    let tiles: Vec<Value> = (0..count)
        .step_by(2)
        .map(|id| {
            let mut p = vec![json!({"name": "solid", "type": "bool", "value": true})];
            if id % 6 == 0 {
                p.push(json!({"name": "level", "type": "int", "value": (id / 6) % 4}));
            }
            json!({"id": id, "properties": p})
        })
        .collect();
    let doc = json!({
        "type": "map", "orientation": "orthogonal", "width": n, "height": n,
        "tilewidth": 16, "tileheight": 16, "infinite": false,
        "layers": [{"type": "tilelayer", "name": "ground", "width": n, "height": n,
                    "x": 0, "y": 0, "data": data}],
        "tilesets": [{"firstgid": 1, "name": "t", "tiles": tiles}],
    });
    let opts = TiledImport::DEFAULT
        .with_cells_per_tile(1)
        .with_smooth_passes(0);
    let m = import_tiled(&bytes(&doc), &opts).unwrap();
    assert_eq!((m.width_cells(), m.depth_cells()), (n, n));
    // Gid 1 (tile 0) is solid with level 0, gid 2 is not solid; gid 7
    // (tile 6) is solid at level 1.
    let [nx, _] = m.nodes();
    let corner = |x: u32, z: u32| m.ground[(z * nx + x) as usize];
    assert!(corner(0, 0) > -1.0, "the solid first tile shows as land");
    assert!(m.level.iter().any(|&l| l > 0.0), "levels from properties");
}

#[test]
fn tmx_import_gives_the_json_import_in_every_encoding() {
    let m = sample_map();
    let opts = TiledImport::DEFAULT
        .with_layer(Some("level".into()))
        .with_cells_per_tile(1);
    let want = import_tiled(
        &export_tiled(&m, None, &TiledExport::DEFAULT).unwrap(),
        &opts,
    )
    .unwrap();
    for enc in [
        TiledEncoding::Csv,
        TiledEncoding::Base64,
        TiledEncoding::Base64Zlib,
        TiledEncoding::Base64Gzip,
        TiledEncoding::Base64Zstd,
    ] {
        let tmx = export_tiled_tmx(&m, None, &TiledExport::DEFAULT.with_encoding(enc)).unwrap();
        assert_eq!(import_tiled(&tmx, &opts).unwrap(), want, "{enc:?}");
        assert_eq!(
            read_tiled_layer(&tmx, Some("pathing")).unwrap(),
            read_tiled_layer(
                &export_tiled(&m, None, &TiledExport::DEFAULT).unwrap(),
                Some("pathing")
            )
            .unwrap(),
            "{enc:?}"
        );
    }
    for bad in [
        &b"<map"[..],
        b"<tileset/>",
        b"<map width=\"x\"/>",
        b"<!DOCTYPE map [<!ENTITY a \"b\">]><map/>",
    ] {
        assert!(
            import_tiled(bad, &opts).is_err(),
            "{}",
            String::from_utf8_lossy(bad)
        );
    }
}

#[test]
fn external_tilesets_are_read_through_the_resolver() {
    // Gid 1 is open ground, gid 2 a wall; the tileset is a file of its own.
    let tileset = json!({ "type": "tileset", "name": "t", "tiles": [
        { "id": 1, "properties": [{ "name": "wall", "type": "bool", "value": true }] },
        { "id": 0, "type": "floor" },
    ]});
    let mut doc = tiled_doc(4, 2, csv_layer("l", 4, 2, &[1, 2, 2, 1, 1, 2, 2, 1]));
    doc["tilesets"] = json!([{ "firstgid": 1, "source": "../sets/t.tsj" }]);
    let opts = TiledImport::DEFAULT
        .with_cells_per_tile(4)
        .with_solid_property("wall");
    // Without the files beside it the tileset is named, not ignored.
    let err = import_tiled(&bytes(&doc), &opts).unwrap_err();
    assert!(
        matches!(&err, ExportError::TiledTileset { source_path, .. } if source_path == "../sets/t.tsj"),
        "{err}"
    );
    let mut asked = Vec::new();
    let mut files = |p: &str| {
        asked.push(p.to_string());
        Ok(bytes(&tileset))
    };
    let m = isoterra_export::import_tiled_with(&bytes(&doc), &opts, &mut files).unwrap();
    assert_eq!(asked, ["../sets/t.tsj"]);
    // The walls (columns 1-2) are land, the floor is not.
    let land = |x: u32| m.ground[m.index(x, 4).unwrap()] >= 0.0;
    assert!(land(8) && !land(0) && !land(16));
    // The same by gid, or by tile class.
    let by_gid = TiledImport::DEFAULT
        .with_cells_per_tile(4)
        .with_solid_gids(vec![2]);
    let mut files = |_: &str| Ok(bytes(&tileset));
    assert_eq!(
        isoterra_export::import_tiled_with(&bytes(&doc), &by_gid, &mut files).unwrap(),
        m
    );
    // A resolver that fails, or a file that is not a tileset, is an error.
    let mut gone = |_: &str| Err("no such file".to_string());
    assert!(isoterra_export::import_tiled_with(&bytes(&doc), &opts, &mut gone).is_err());
    let mut junk = |_: &str| Ok(b"{\"type\":\"map\"}".to_vec());
    assert!(isoterra_export::import_tiled_with(&bytes(&doc), &opts, &mut junk).is_err());
}

#[test]
fn empty_infinite_layers_are_empty_not_malformed() {
    // As Tiled writes an infinite map whose first layer was never painted.
    let doc = json!({
        "type": "map", "orientation": "orthogonal", "infinite": true,
        "width": 16, "height": 8, "tilewidth": 16, "tileheight": 16,
        "layers": [
            { "type": "tilelayer", "name": "empty", "chunks": [], "width": 16, "height": 8, "startx": 0, "starty": 0 },
            { "type": "tilelayer", "name": "painted", "width": 16, "height": 16, "chunks": [
                { "x": 0, "y": 0, "width": 16, "height": 16, "data": vec![1u32; 256] }
            ]},
        ],
        "tilesets": [],
    });
    let empty = read_tiled_layer(&bytes(&doc), Some("empty")).unwrap();
    assert_eq!((empty.width, empty.height), (16, 8));
    assert!(empty.gids.iter().all(|&g| g == 0));
    // The default layer is the first one with a tile.
    assert_eq!(
        read_tiled_layer(&bytes(&doc), None).unwrap().name,
        "painted"
    );
}

#[test]
fn the_tileset_image_has_a_tile_per_id_and_the_maps_name_it() {
    let png = isoterra_export::tiled_tileset_png(32).unwrap();
    let decoder = png::Decoder::new(std::io::Cursor::new(&png));
    let reader = decoder.read_info().unwrap();
    assert_eq!((reader.info().width, reader.info().height), (224, 224));
    assert!(isoterra_export::tiled_tileset_png(0).is_err());
    assert!(isoterra_export::tiled_tileset_png(257).is_err());
    let m = sample_map();
    let opts = TiledExport::DEFAULT.with_image("m.tiles.png");
    let json: Value = serde_json::from_slice(&export_tiled(&m, None, &opts).unwrap()).unwrap();
    assert_eq!(json["tilesets"][0]["image"], "m.tiles.png");
    assert_eq!(json["tilesets"][0]["imagewidth"], 224);
    let tmx = String::from_utf8(export_tiled_tmx(&m, None, &opts).unwrap()).unwrap();
    assert!(
        tmx.contains("<image source=\"m.tiles.png\" width=\"224\" height=\"224\"/>"),
        "{tmx}"
    );
    assert!(export_tiled(&m, None, &opts.clone().with_tile_size(512)).is_err());
}

// ---------------------------------------------------------------------------
// Map mesh files made a band of rows at a time
// ---------------------------------------------------------------------------

use isoterra_export::{write_map_glb_in_bands, write_map_obj_in_bands};

/// A triangle as the bits of its three positions, corners in a canonical
/// order (a band's vertex numbering is its own).
type Tri = [[u32; 3]; 3];

fn canonical(mut t: Tri) -> Tri {
    // Rotate so the smallest corner comes first; the winding is kept.
    let first = (0..3).min_by_key(|&k| t[k]).unwrap();
    t.rotate_left(first);
    t
}

/// The floats of accessor `a` of a `.glb`.
fn glb_floats(doc: &Value, bin: &[u8], a: usize) -> Vec<f32> {
    let acc = &doc["accessors"][a];
    let view = &doc["bufferViews"][acc["bufferView"].as_u64().unwrap() as usize];
    let width = match acc["type"].as_str().unwrap() {
        "SCALAR" => 1,
        "VEC2" => 2,
        "VEC3" => 3,
        _ => 4,
    };
    let start = view["byteOffset"].as_u64().unwrap() as usize;
    let n = acc["count"].as_u64().unwrap() as usize * width;
    assert_eq!(view["byteLength"].as_u64().unwrap() as usize, 4 * n);
    (0..n)
        .map(|k| f32::from_le_bytes(bin[start + 4 * k..start + 4 * k + 4].try_into().unwrap()))
        .collect()
}

/// The indices of accessor `a` of a `.glb`.
fn glb_indices(doc: &Value, bin: &[u8], a: usize) -> Vec<u32> {
    let acc = &doc["accessors"][a];
    let view = &doc["bufferViews"][acc["bufferView"].as_u64().unwrap() as usize];
    let start = view["byteOffset"].as_u64().unwrap() as usize;
    let n = acc["count"].as_u64().unwrap() as usize;
    match acc["componentType"].as_u64().unwrap() {
        5123 => (0..n)
            .map(|k| {
                u32::from(u16::from_le_bytes(
                    bin[start + 2 * k..start + 2 * k + 2].try_into().unwrap(),
                ))
            })
            .collect(),
        _ => (0..n)
            .map(|k| u32::from_le_bytes(bin[start + 4 * k..start + 4 * k + 4].try_into().unwrap()))
            .collect(),
    }
}

/// The JSON of a `.glb` and its binary chunk.
fn glb_parts(bytes: &[u8]) -> (Value, &[u8]) {
    assert_eq!(&bytes[0..4], b"glTF");
    assert_eq!(
        u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize,
        bytes.len()
    );
    let json_len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let doc: Value = serde_json::from_slice(&bytes[20..20 + json_len]).unwrap();
    let bin = bytes.get(28 + json_len..).unwrap_or(&[]);
    (doc, bin)
}

/// Every triangle of each node's mesh, by material name, sorted; checks
/// on the way that every vertex is used and in range, and that wall UVs
/// have the height as `v`.
fn glb_triangles(bytes: &[u8]) -> std::collections::BTreeMap<String, Vec<Tri>> {
    let (doc, bin) = glb_parts(bytes);
    let mut out: std::collections::BTreeMap<String, Vec<Tri>> = Default::default();
    for mesh in doc["meshes"].as_array().into_iter().flatten() {
        for prim in mesh["primitives"].as_array().unwrap() {
            let material = doc["materials"][prim["material"].as_u64().unwrap() as usize]["name"]
                .as_str()
                .unwrap()
                .to_string();
            let attrs = &prim["attributes"];
            let pos = glb_floats(&doc, bin, attrs["POSITION"].as_u64().unwrap() as usize);
            let uv = glb_floats(&doc, bin, attrs["TEXCOORD_0"].as_u64().unwrap() as usize);
            let idx = glb_indices(&doc, bin, prim["indices"].as_u64().unwrap() as usize);
            let list = out.entry(material.clone()).or_default();
            for tri in idx.chunks_exact(3) {
                let t = [0, 1, 2].map(|k| {
                    let i = tri[k] as usize;
                    assert!(3 * i + 2 < pos.len(), "index {i} out of range");
                    if material == "cliff" {
                        assert_eq!(uv[2 * i + 1], pos[3 * i + 1], "a wall's v is its height");
                    }
                    [
                        pos[3 * i].to_bits(),
                        pos[3 * i + 1].to_bits(),
                        pos[3 * i + 2].to_bits(),
                    ]
                });
                list.push(canonical(t));
            }
        }
    }
    for list in out.values_mut() {
        list.sort_unstable();
    }
    out
}

/// Every triangle of an OBJ text by its `usemtl` group, sorted.
fn obj_triangles(obj: &str) -> std::collections::BTreeMap<String, Vec<Tri>> {
    let mut v: Vec<[u32; 3]> = Vec::new();
    let mut group = String::new();
    let mut out: std::collections::BTreeMap<String, Vec<Tri>> = Default::default();
    for line in obj.lines() {
        let mut it = line.split_whitespace();
        match it.next() {
            Some("v") => {
                let p: Vec<f32> = it.map(|t| t.parse().unwrap()).collect();
                v.push([p[0].to_bits(), p[1].to_bits(), p[2].to_bits()]);
            }
            Some("usemtl") => group = it.next().unwrap().to_string(),
            Some("f") => {
                let c: Vec<usize> = it
                    .map(|t| t.split('/').next().unwrap().parse::<usize>().unwrap() - 1)
                    .collect();
                let t = [v[c[0]], v[c[1]], v[c[2]]];
                out.entry(group.clone()).or_default().push(canonical(t));
            }
            _ => {}
        }
    }
    for list in out.values_mut() {
        list.sort_unstable();
    }
    out
}

/// 40 x 30 cells of terraces, a chasm and a lake, with rims that run
/// across every band boundary.
fn banded_sample_map() -> MapLayers {
    let mut m = MapLayers::new(40, 30).unwrap();
    for z in 0..=30u32 {
        for x in 0..=40u32 {
            let i = m.index(x, z).unwrap();
            m.level[i] = ((x / 7 + z / 9) % 3) as f32;
            m.height[i] = ((x * 7 + z * 3) % 5) as f32 * 0.03;
            if (20..=24).contains(&x) && (3..=14).contains(&z) {
                m.ground[i] = -1.0;
            }
            if x <= 6 && z >= 20 {
                m.water[i] = 0.8;
            }
            m.splat[i] = Splat::single(((x / 5 + z / 4) % 12) as u8);
        }
    }
    m
}

#[test]
fn map_mesh_files_made_in_bands_hold_the_whole_maps_triangles() {
    let m = banded_sample_map();
    let options = MapMeshOptions::DEFAULT.with_cell_size(2.0);
    let mut whole = Vec::new();
    write_map_glb_in_bands(&m, &options, u64::MAX, &mut whole).unwrap();
    assert_eq!(whole, export_map_glb(&m, &options).unwrap());
    let want = glb_triangles(&whole);
    assert_eq!(
        want.keys().map(String::as_str).collect::<Vec<_>>(),
        ["cliff", "terrain", "water"]
    );
    let mut whole_obj = Vec::new();
    let whole_mtl =
        write_map_obj_in_bands(&m, &options, "m.mtl", u64::MAX, &mut whole_obj).unwrap();
    let want_obj = obj_triangles(std::str::from_utf8(&whole_obj).unwrap());
    assert_eq!(want_obj, want);
    // One row, three rows, seven rows (the last band short) at a time.
    for rows in [1u64, 3, 7] {
        let mut bytes = Vec::new();
        write_map_glb_in_bands(&m, &options, rows * 40, &mut bytes).unwrap();
        let (doc, _) = glb_parts(&bytes);
        let bands = 30u64.div_ceil(rows) as usize;
        // Terrain: a ground and a wall primitive per band that has walls;
        // water: a primitive per band with water. Materials written once.
        let terrain = doc["meshes"][0]["primitives"].as_array().unwrap().len();
        assert!(
            terrain > bands && terrain <= 2 * bands,
            "{terrain} for {bands} bands"
        );
        assert_eq!(doc["materials"].as_array().unwrap().len(), 3);
        assert_eq!(glb_triangles(&bytes), want, "{rows} rows a band");
        let mut obj = Vec::new();
        let mtl = write_map_obj_in_bands(&m, &options, "m.mtl", rows * 40, &mut obj).unwrap();
        assert_eq!(obj_triangles(std::str::from_utf8(&obj).unwrap()), want);
        let names = |t: &str| -> Vec<String> {
            t.lines()
                .filter_map(|l| l.strip_prefix("newmtl "))
                .map(str::to_string)
                .collect()
        };
        assert_eq!(names(&mtl), names(&whole_mtl));
        if rows == 3 {
            let dir = tempfile::tempdir().unwrap();
            let file = dir.path().join("banded.glb");
            std::fs::write(&file, &bytes).unwrap();
            if let Some(report) = validate(&file) {
                let issues = &report["issues"];
                assert_eq!(issues["numErrors"], 0, "{:#}", issues["messages"]);
                assert_eq!(issues["numWarnings"], 0, "{:#}", issues["messages"]);
            }
        }
    }
    // No band is an error, not a panic.
    assert!(write_map_glb_in_bands(&m, &options, 0, &mut Vec::new()).is_err());
    assert!(write_map_obj_in_bands(&m, &options, "m.mtl", 0, &mut Vec::new()).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Any map, cut into bands of any height, gives the triangles of the
    /// whole map's file, in the glb and in the OBJ.
    #[test]
    fn bands_of_any_height_give_the_whole_maps_triangles(
        m in arb_map(),
        rows in 1u64..8,
    ) {
        let options = MapMeshOptions::DEFAULT;
        let whole = glb_triangles(&export_map_glb(&m, &options).unwrap());
        let band_cells = rows * u64::from(m.width_cells());
        let mut bytes = Vec::new();
        write_map_glb_in_bands(&m, &options, band_cells, &mut bytes).unwrap();
        prop_assert_eq!(&glb_triangles(&bytes), &whole);
        let mut obj = Vec::new();
        write_map_obj_in_bands(&m, &options, "m.mtl", band_cells, &mut obj).unwrap();
        prop_assert_eq!(&obj_triangles(std::str::from_utf8(&obj).unwrap()), &whole);
    }
}

/// The rim points (x, z bits) of a `.glb`'s wall vertices that carry more
/// than one distinct `u`: where the distance along a rim jumps.
fn wall_u_jumps(bytes: &[u8]) -> usize {
    let (doc, bin) = glb_parts(bytes);
    let mut us: std::collections::BTreeMap<(u32, u32), Vec<u32>> = Default::default();
    for prim in doc["meshes"][0]["primitives"].as_array().unwrap() {
        let material = doc["materials"][prim["material"].as_u64().unwrap() as usize]["name"]
            .as_str()
            .unwrap();
        if material != "cliff" {
            continue;
        }
        let attrs = &prim["attributes"];
        let pos = glb_floats(&doc, bin, attrs["POSITION"].as_u64().unwrap() as usize);
        let uv = glb_floats(&doc, bin, attrs["TEXCOORD_0"].as_u64().unwrap() as usize);
        for i in glb_indices(&doc, bin, prim["indices"].as_u64().unwrap() as usize) {
            let i = i as usize;
            let e = us
                .entry((pos[3 * i].to_bits(), pos[3 * i + 2].to_bits()))
                .or_default();
            let u = uv[2 * i].to_bits();
            if !e.contains(&u) {
                e.push(u);
            }
        }
    }
    us.values().filter(|u| u.len() > 1).count()
}

/// The walls' `u` runs on across band boundaries: cut into bands of one
/// row, the sample's rims jump 10 times where the whole map's jump 6 times
/// (loops closing, and rims crossing back into a band already written);
/// starting each band's rims at 0 made 188 jumps.
#[test]
fn wall_uvs_run_on_from_band_to_band() {
    let m = banded_sample_map();
    let options = MapMeshOptions::DEFAULT.with_cell_size(2.0);
    let jumps = |rows: u64| {
        let mut bytes = Vec::new();
        write_map_glb_in_bands(&m, &options, rows * 40, &mut bytes).unwrap();
        wall_u_jumps(&bytes)
    };
    let whole = jumps(1000);
    assert!(whole > 0, "the sample's loops close somewhere");
    for rows in [1, 3, 7] {
        let banded = jumps(rows);
        assert!(
            banded <= 2 * whole,
            "{banded} jumps in u in bands of {rows} rows, {whole} whole"
        );
    }
}
