//! Mesh exports through the real binary: materials in glb and OBJ, the
//! side2d mesh export with its colliders, map UVs and splat weights.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

mod common;
use common::*;

/// A parsed GLB: the JSON document and the BIN chunk.
struct Glb {
    json: Value,
    bin: Vec<u8>,
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn read_glb(file: &Path) -> Glb {
    let bytes = std::fs::read(file).unwrap();
    assert_eq!(&bytes[0..4], b"glTF");
    let json_len = u32_at(&bytes, 12) as usize;
    let json: Value = serde_json::from_slice(&bytes[20..20 + json_len]).unwrap();
    let at = 20 + json_len;
    let bin = if at < bytes.len() {
        let n = u32_at(&bytes, at) as usize;
        bytes[at + 8..at + 8 + n].to_vec()
    } else {
        Vec::new()
    };
    Glb { json, bin }
}

impl Glb {
    fn bytes(&self, accessor: &Value) -> &[u8] {
        let a = &self.json["accessors"][accessor.as_u64().unwrap() as usize];
        let v = &self.json["bufferViews"][a["bufferView"].as_u64().unwrap() as usize];
        let off = v["byteOffset"].as_u64().unwrap() as usize;
        &self.bin[off..off + v["byteLength"].as_u64().unwrap() as usize]
    }

    fn floats(&self, accessor: &Value) -> Vec<f32> {
        self.bytes(accessor)
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    fn indices(&self, accessor: &Value) -> Vec<u32> {
        let a = &self.json["accessors"][accessor.as_u64().unwrap() as usize];
        let n = a["count"].as_u64().unwrap() as usize;
        let b = self.bytes(accessor);
        if a["componentType"] == 5123 {
            b.chunks_exact(2)
                .take(n)
                .map(|c| u32::from(u16::from_le_bytes(c.try_into().unwrap())))
                .collect()
        } else {
            b.chunks_exact(4)
                .take(n)
                .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                .collect()
        }
    }

    /// The names of the materials, by index.
    fn material_names(&self) -> Vec<String> {
        self.json["materials"]
            .as_array()
            .map(|m| {
                m.iter()
                    .map(|x| x["name"].as_str().unwrap_or("").to_string())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Every primitive of every mesh.
    fn primitives(&self) -> Vec<&Value> {
        self.json["meshes"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|m| m["primitives"].as_array().unwrap())
            .collect()
    }
}

/// Runs the Khronos glTF validator on `file` and asserts 0 errors and 0
/// warnings. Skips loudly when it is not installed, unless
/// `ISOTERRA_REQUIRE_VALIDATOR=1`.
fn assert_clean_glb(file: &Path) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../isoterra-export/tests/validator");
    if !dir.join("node_modules/gltf-validator").exists() {
        let msg = format!(
            "SKIPPED: gltf-validator not installed; run npm ci in {}",
            dir.display()
        );
        if std::env::var("ISOTERRA_REQUIRE_VALIDATOR").is_ok_and(|v| v == "1") {
            panic!("{msg} (ISOTERRA_REQUIRE_VALIDATOR=1)");
        }
        eprintln!("{msg}");
        return;
    }
    let out = Command::new("node")
        .arg(dir.join("validate.mjs"))
        .arg(file)
        .output()
        .expect("node runs");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let issues = &report["issues"];
    assert!(
        out.status.success() && issues["numErrors"] == 0 && issues["numWarnings"] == 0,
        "{} has validator errors or warnings:\n{:#}\n{}",
        file.display(),
        issues,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The linear value of an 8-bit sRGB channel.
fn linear(c: u8) -> f64 {
    let s = f64::from(c) / 255.0;
    if s <= 0.04045 {
        s / 12.92
    } else {
        ((s + 0.055) / 1.055).powf(2.4)
    }
}

/// `usemtl` names with their face counts, and the `mtllib` line's file.
fn obj_groups(text: &str) -> (Option<String>, BTreeMap<String, usize>) {
    let mut lib = None;
    let mut groups = BTreeMap::new();
    let mut cur = String::new();
    for line in text.lines() {
        if let Some(l) = line.strip_prefix("mtllib ") {
            lib = Some(l.to_string());
        } else if let Some(m) = line.strip_prefix("usemtl ") {
            cur = m.to_string();
        } else if line.starts_with("f ") {
            *groups.entry(cur.clone()).or_insert(0) += 1;
        }
    }
    (lib, groups)
}

#[test]
fn side2d_exports_a_mesh_with_materials_uvs_and_colliders_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cave.isoterra");
    ok(&[
        "new",
        s(&file),
        "--kind",
        "side2d",
        "--seed",
        "3",
        "--size",
        "96x48",
        "--preset",
        "hills",
    ]);
    // Some sand (material 2) into the ground, so there are two materials.
    ok(&[
        "stroke",
        s(&file),
        "--tool",
        "fill",
        "--at",
        "40,30",
        "--radius",
        "6",
        "--material",
        "2",
    ]);
    let glb = dir.path().join("cave.glb");
    let out = ok(&["export", s(&file), "--format", "glb", "-o", s(&glb)]);
    let colliders = dir.path().join("cave.colliders.json");
    assert!(out.contains("cave.colliders.json"), "{out}");
    let c: Value = serde_json::from_slice(&std::fs::read(&colliders).unwrap()).unwrap();
    let lines = c["polylines"].as_array().unwrap();
    assert!(!lines.is_empty());
    assert!(
        lines
            .iter()
            .all(|l| l["points"].as_array().unwrap().len() >= 2)
    );

    let g = read_glb(&glb);
    let names = g.material_names();
    assert!(names.contains(&"dirt".to_string()), "{names:?}");
    assert!(names.contains(&"sand".to_string()), "{names:?}");
    // Base colours are the world table's, made linear: sand is
    // [214, 190, 128] in sRGB.
    let sand = names.iter().position(|n| n == "sand").unwrap();
    let f = &g.json["materials"][sand]["pbrMetallicRoughness"]["baseColorFactor"];
    for (k, c) in [214u8, 190, 128].into_iter().enumerate() {
        assert!((f[k].as_f64().unwrap() - linear(c)).abs() < 1e-6, "{f}");
    }
    let prims = g.primitives();
    let mut tris_per_material = BTreeMap::new();
    for p in &prims {
        assert!(
            p["attributes"]["TEXCOORD_0"].is_u64(),
            "UVs on every primitive"
        );
        let uv = g.floats(&p["attributes"]["TEXCOORD_0"]);
        let pos = g.floats(&p["attributes"]["POSITION"]);
        assert_eq!(uv.len() / 2, pos.len() / 3);
        let name = names[p["material"].as_u64().unwrap() as usize].clone();
        *tris_per_material.entry(name).or_insert(0) += g.indices(&p["indices"]).len() / 3;
    }
    assert!(tris_per_material["sand"] > 0 && tris_per_material["dirt"] > 0);
    // The grass rim: blended strips a hundredth of a cell in front of the
    // fill, fading out in their vertex alpha, along the top of the ground.
    assert!(tris_per_material["grass_rim"] > 0, "{tris_per_material:?}");
    let rim = names.iter().position(|n| n == "grass_rim").unwrap();
    assert_eq!(g.json["materials"][rim]["alphaMode"], "BLEND");
    let (mut rim_top, mut fill_top) = (f32::MIN, f32::MIN);
    for p in &prims {
        let pos = g.floats(&p["attributes"]["POSITION"]);
        let top = pos.chunks_exact(3).map(|v| v[1]).fold(f32::MIN, f32::max);
        if p["material"].as_u64() == Some(rim as u64) {
            assert!(pos.chunks_exact(3).all(|v| (v[2] - 0.01).abs() < 1e-6));
            let alpha = g.floats(&p["attributes"]["COLOR_0"]);
            assert!(alpha.chunks_exact(4).any(|c| c[3] > 0.9));
            assert!(alpha.chunks_exact(4).any(|c| c[3] == 0.0));
            rim_top = rim_top.max(top);
        } else {
            fill_top = fill_top.max(top);
        }
    }
    assert!((rim_top - fill_top).abs() < 1e-3, "{rim_top} vs {fill_top}");
    assert_clean_glb(&glb);

    // The OBJ names its library and groups faces by the same materials.
    let obj = dir.path().join("cave.obj");
    ok(&["export", s(&file), "--format", "obj", "-o", s(&obj)]);
    let (lib, groups) = obj_groups(&std::fs::read_to_string(&obj).unwrap());
    assert_eq!(lib.as_deref(), Some("cave.mtl"));
    assert_eq!(
        groups, tris_per_material,
        "same faces per material as the glb"
    );
    let mtl = std::fs::read_to_string(dir.path().join("cave.mtl")).unwrap();
    assert!(
        mtl.contains("newmtl sand") && mtl.contains("newmtl dirt"),
        "{mtl}"
    );
    assert!(dir.path().join("cave.colliders.json").exists());
}

#[test]
fn voxel_glb_and_obj_keep_the_materials_of_strokes() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("v.isoterra");
    ok(&[
        "new",
        s(&file),
        "--kind",
        "voxel",
        "--seed",
        "2",
        "--chunk",
        "16",
    ]);
    // Grass (2) added on the ground, crystal (7) painted onto it.
    ok(&[
        "stroke",
        s(&file),
        "--tool",
        "add",
        "--at",
        "8,0,8",
        "--radius",
        "5",
        "--material",
        "2",
    ]);
    ok(&[
        "stroke",
        s(&file),
        "--tool",
        "paint",
        "--at",
        "8,4,8",
        "--radius",
        "3",
        "--material",
        "7",
    ]);
    let region = "-8,-24,-8,24,24,24";
    let glb = dir.path().join("v.glb");
    ok(&[
        "export",
        s(&file),
        "--format",
        "glb",
        "--region",
        region,
        "-o",
        s(&glb),
    ]);
    let g = read_glb(&glb);
    let names = g.material_names();
    for m in ["earth", "grass", "crystal"] {
        assert!(names.contains(&m.to_string()), "{m} missing from {names:?}");
    }
    let ids = [
        "earth", "stone", "grass", "sand", "basalt", "clay", "snow", "crystal",
    ];
    let mut per_material = BTreeMap::new();
    for p in g.primitives() {
        let name = &names[p["material"].as_u64().unwrap() as usize];
        let id = ids.iter().position(|n| n == name).unwrap() as f32;
        // Every triangle of a primitive has at least two vertices (or, when
        // all three differ, the smallest id) of the primitive's material.
        let vm = g.floats(&p["attributes"]["_MATERIAL"]);
        let idx = g.indices(&p["indices"]);
        for t in idx.chunks_exact(3) {
            let m: Vec<f32> = t.iter().map(|&i| vm[i as usize]).collect();
            let same = m.iter().filter(|&&x| x == id).count();
            assert!(
                same >= 2 || (same == 1 && m.iter().all(|&x| x >= id)),
                "{name} triangle with vertex materials {m:?}"
            );
        }
        *per_material.entry(name.clone()).or_insert(0) += idx.len() / 3;
    }
    assert!(per_material["grass"] > 0 && per_material["crystal"] > 0);
    assert_clean_glb(&glb);

    let obj = dir.path().join("v.obj");
    ok(&[
        "export",
        s(&file),
        "--format",
        "obj",
        "--region",
        region,
        "-o",
        s(&obj),
    ]);
    let (lib, groups) = obj_groups(&std::fs::read_to_string(&obj).unwrap());
    assert_eq!(lib.as_deref(), Some("v.mtl"));
    assert_eq!(groups, per_material);
    let mtl = std::fs::read_to_string(dir.path().join("v.mtl")).unwrap();
    assert!(mtl.contains("newmtl crystal"), "{mtl}");
}

/// Zero-area triangles of an OBJ, and after welding its vertices by
/// position, the triangles that collapse and the edges shared by more than
/// two triangles.
fn obj_defects(text: &str) -> (usize, usize, usize, usize) {
    let mut v: Vec<[f64; 3]> = Vec::new();
    let mut tris: Vec<[usize; 3]> = Vec::new();
    for line in text.lines() {
        let mut p = line.split_whitespace();
        match p.next() {
            Some("v") => {
                let f: Vec<f64> = p.map(|x| x.parse().unwrap()).collect();
                v.push([f[0], f[1], f[2]]);
            }
            Some("f") => {
                let i: Vec<usize> = p
                    .map(|x| x.split('/').next().unwrap().parse::<usize>().unwrap() - 1)
                    .collect();
                tris.push([i[0], i[1], i[2]]);
            }
            _ => {}
        }
    }
    let mut ids: BTreeMap<[u64; 3], usize> = BTreeMap::new();
    let welded: Vec<usize> = v
        .iter()
        .map(|p| {
            let n = ids.len();
            *ids.entry(p.map(f64::to_bits)).or_insert(n)
        })
        .collect();
    let (mut zero, mut collapsed) = (0, 0);
    let mut edges: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    for t in &tris {
        let [a, b, c] = t.map(|i| v[i]);
        let u = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
        let w = [c[0] - a[0], c[1] - a[1], c[2] - a[2]];
        let cross = [
            u[1] * w[2] - u[2] * w[1],
            u[2] * w[0] - u[0] * w[2],
            u[0] * w[1] - u[1] * w[0],
        ];
        zero += usize::from(cross == [0.0; 3]);
        let k = t.map(|i| welded[i]);
        if k[0] == k[1] || k[1] == k[2] || k[0] == k[2] {
            collapsed += 1;
            continue;
        }
        for e in 0..3 {
            let (p, q) = (k[e], k[(e + 1) % 3]);
            *edges.entry((p.min(q), p.max(q))).or_default() += 1;
        }
    }
    let non_manifold = edges.values().filter(|&&n| n > 2).count();
    (tris.len(), zero, collapsed, non_manifold)
}

#[test]
fn voxel_strokes_on_whole_coordinates_leave_no_degenerate_triangles() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("v.isoterra");
    ok(&[
        "new",
        s(&base),
        "--kind",
        "voxel",
        "--seed",
        "2",
        "--chunk",
        "16",
    ]);
    let region = "-8,-24,-8,24,24,24";
    let obj = dir.path().join("v.obj");
    let before = {
        ok(&[
            "export",
            s(&base),
            "--format",
            "obj",
            "--region",
            region,
            "-o",
            s(&obj),
        ]);
        obj_defects(&std::fs::read_to_string(&obj).unwrap())
    };
    assert_eq!((before.1, before.2, before.3), (0, 0, 0), "{before:?}");
    // Whole-number centres and radii: `radius - distance` and the flatten
    // plane are exactly 0 (the iso level) at many nodes.
    for tool in ["add", "flatten", "dig", "smooth"] {
        let file = dir.path().join(format!("{tool}.isoterra"));
        std::fs::copy(&base, &file).unwrap();
        for at in ["8,0,8", "0,2,0"] {
            ok(&[
                "stroke",
                s(&file),
                "--tool",
                tool,
                "--at",
                at,
                "--radius",
                "5",
            ]);
        }
        ok(&[
            "export",
            s(&file),
            "--format",
            "obj",
            "--region",
            region,
            "-o",
            s(&obj),
        ]);
        let (tris, zero, collapsed, non_manifold) =
            obj_defects(&std::fs::read_to_string(&obj).unwrap());
        assert_ne!(tris, before.0, "{tool} changed the surface");
        assert_eq!(
            (zero, collapsed, non_manifold),
            (0, 0, 0),
            "{tool}: zero-area, collapsed after a weld, non-manifold edges"
        );
    }
}

fn npy_u8(path: &Path, dims: [usize; 3], data: &[u8]) {
    let shape = format!("({}, {}, {})", dims[2], dims[1], dims[0]);
    std::fs::write(path, npy_bytes("|u1", &shape, data)).unwrap();
}

#[test]
fn mesh3d_on_integer_data_reports_zero_area_triangles_and_iso_nudge_removes_them() {
    let dir = tempfile::tempdir().unwrap();
    // A blocky ball of labels: 2 inside, 1 on a shell, 0 outside.
    let n = 16;
    let mut data = Vec::new();
    for z in 0..n {
        for y in 0..n {
            for x in 0..n {
                let d = ((x as f32 - 7.5).powi(2)
                    + (y as f32 - 7.5).powi(2)
                    + (z as f32 - 7.5).powi(2))
                .sqrt();
                data.push(if d < 4.0 {
                    2
                } else if d < 6.0 {
                    1
                } else {
                    0
                });
            }
        }
    }
    let npy = dir.path().join("labels.npy");
    npy_u8(&npy, [n, n, n], &data);
    let obj = dir.path().join("labels.obj");
    let o = run(&[
        "mesh3d",
        "--npy",
        s(&npy),
        "--iso",
        "1",
        "--format",
        "obj",
        "-o",
        s(&obj),
        "--timings",
    ]);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("zero-area triangles") && err.contains("--iso-nudge"),
        "{err}"
    );
    let timings: Value = serde_json::from_str(err.lines().last().unwrap()).unwrap();
    let plain = obj_defects(&std::fs::read_to_string(&obj).unwrap());
    assert!(
        plain.1 > 0,
        "samples at the iso level give zero-area triangles"
    );
    assert_eq!(timings["zero_area_triangles"], plain.1 as u64);
    for phase in ["load_ms", "mesh_ms", "check_ms", "write_ms"] {
        assert!(
            timings[phase].as_f64().is_some_and(|ms| ms >= 0.0),
            "{phase}: {timings}"
        );
    }

    let o = run(&[
        "mesh3d",
        "--npy",
        s(&npy),
        "--iso",
        "1",
        "--iso-nudge",
        "0.001",
        "--format",
        "obj",
        "-o",
        s(&obj),
        "--timings",
    ]);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains("note:"), "{err}");
    let nudged = obj_defects(&std::fs::read_to_string(&obj).unwrap());
    assert!(nudged.0 > 100, "{nudged:?}");
    assert_eq!((nudged.1, nudged.2, nudged.3), (0, 0, 0), "{nudged:?}");
    let timings: Value = serde_json::from_str(err.lines().last().unwrap()).unwrap();
    assert_eq!(timings["zero_area_triangles"], 0);

    let e = fails(&[
        "mesh3d",
        "--npy",
        s(&npy),
        "--iso",
        "1",
        "--iso-nudge",
        "-1",
        "--format",
        "obj",
        "-o",
        s(&obj),
    ]);
    assert!(e.contains("--iso-nudge"), "{e}");
    let e = fails(&[
        "mesh3d",
        "--npy",
        s(&npy),
        "--iso",
        "1000",
        "--iso-nudge",
        "1e-9",
        "--format",
        "obj",
        "-o",
        s(&obj),
    ]);
    assert!(e.contains("too small"), "{e}");
}

/// The height of the first surface a ray straight down from `y = 1e4` hits.
fn height_below(
    shape: &dyn parry3d::query::RayCast,
    pose: &parry3d::math::Pose,
    x: f32,
    z: f32,
) -> Option<f32> {
    use parry3d::math::Vector;
    let ray = parry3d::query::Ray::new(Vector::new(x, 1.0e4, z), Vector::new(0.0, -1.0, 0.0));
    shape.cast_ray(pose, &ray, 1.0e5, true).map(|t| 1.0e4 - t)
}

#[test]
fn heightfield_collider_json_builds_a_parry_heightfield_that_matches_the_render_mesh() {
    use parry3d::math::{Pose, Vector};
    use parry3d::shape::{HeightField, HeightFieldCellStatus, TriMesh};
    use parry3d::utils::Array2;

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("h.isoterra");
    ok(&[
        "new",
        s(&file),
        "--kind",
        "heightmap",
        "--seed",
        "2",
        "--chunk",
        "32",
        "--preset",
        "mountains",
    ]);
    ok(&[
        "stroke",
        s(&file),
        "--tool",
        "raise",
        "--at",
        "30,30",
        "--radius",
        "10",
    ]);
    let bake = |layout: &str| {
        let out = dir.path().join(layout);
        ok(&[
            "bake",
            s(&file),
            "--region",
            "0,0,64,64",
            "--out",
            s(&out),
            "--layout",
            layout,
            "-q",
        ]);
        out
    };
    let rows_dir = bake("row-major");
    let cols_dir = bake("column-major");
    let mut checked = 0;
    for entry in std::fs::read_dir(&cols_dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let Some(stem) = name.strip_suffix(".collider.json") else {
            continue;
        };
        let json: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let h = &json["heightfield"];
        assert_eq!(h["layout"], "column-major");
        assert_eq!(h["diagonal"], "min-x-min-z-to-max-x-max-z");
        let rows = h["rows"].as_u64().unwrap() as usize;
        let cols = h["cols"].as_u64().unwrap() as usize;
        let f = |v: &Value| -> Vec<f32> {
            v.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap() as f32)
                .collect()
        };
        let heights = f(&h["heights"]);
        let (scale, t) = (f(&h["scale"]), f(&h["translation"]));
        // The row-major file holds the same heights, x fastest.
        let row: Value =
            serde_json::from_slice(&std::fs::read(rows_dir.join(&name)).unwrap()).unwrap();
        assert_eq!(row["heightfield"]["layout"], "row-major");
        let row_heights = f(&row["heightfield"]["heights"]);
        for z in 0..rows {
            for x in 0..cols {
                assert_eq!(row_heights[z * cols + x], heights[x * rows + z]);
            }
        }
        // Straight into parry: Array2 is column-major with rows along z.
        let mut field = HeightField::new(
            Array2::new(rows, cols, heights),
            Vector::new(scale[0], scale[1], scale[2]),
        );
        for s in field.cells_statuses_mut().data_mut() {
            *s = HeightFieldCellStatus::ZIGZAG_SUBDIVISION;
        }
        let pose = Pose::from_translation(Vector::new(t[0], t[1], t[2]));
        // The render mesh of the same chunk.
        let g = read_glb(&cols_dir.join(format!("{stem}.glb")));
        let prim = &g.primitives()[0];
        let p = g.floats(&prim["attributes"]["POSITION"]);
        let verts: Vec<Vector> = p
            .chunks_exact(3)
            .map(|c| Vector::new(c[0], c[1], c[2]))
            .collect();
        let idx: Vec<[u32; 3]> = g
            .indices(&prim["indices"])
            .chunks_exact(3)
            .map(|c| [c[0], c[1], c[2]])
            .collect();
        let mesh = TriMesh::new(verts, idx).unwrap();
        let identity = Pose::IDENTITY;
        // Sample points: every node, every cell centre and points inside
        // cells on both sides of the diagonal.
        let (x0, z0) = (t[0] - scale[0] / 2.0, t[2] - scale[2] / 2.0);
        let (dx, dz) = (scale[0] / (cols - 1) as f32, scale[2] / (rows - 1) as f32);
        for j in 0..rows - 1 {
            for i in 0..cols - 1 {
                for (fx, fz) in [(0.0, 0.0), (0.5, 0.5), (0.8, 0.15), (0.15, 0.8), (0.3, 0.6)] {
                    let x = x0 + (i as f32 + fx) * dx;
                    let z = z0 + (j as f32 + fz) * dz;
                    let a = height_below(&field, &pose, x, z).unwrap();
                    let b = height_below(&mesh, &identity, x, z).unwrap();
                    assert!(
                        (a - b).abs() <= 1e-3 * (1.0 + a.abs()),
                        "{stem} at ({x}, {z}): collider {a}, render mesh {b}"
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 4 * 32 * 32, "{checked} sample points");
}

#[test]
fn r16_refuses_a_region_that_is_not_square_or_pads_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("h.isoterra");
    ok(&[
        "new",
        s(&file),
        "--kind",
        "heightmap",
        "--seed",
        "2",
        "--chunk",
        "32",
    ]);
    let r16 = dir.path().join("h.r16");
    // 0..=32 by 0..=16: 33 x 17 nodes.
    let e = fails(&[
        "export",
        s(&file),
        "--format",
        "r16",
        "--region",
        "0,0,32,16",
        "-o",
        s(&r16),
    ]);
    assert!(
        e.contains("33x17") && e.contains("square") && e.contains("--pad"),
        "{e}"
    );
    assert!(!r16.exists(), "a refused export writes nothing");

    ok(&[
        "export",
        s(&file),
        "--format",
        "r16",
        "--region",
        "0,0,32,16",
        "--pad",
        "-o",
        s(&r16),
    ]);
    let padded = std::fs::read(&r16).unwrap();
    assert_eq!(padded.len(), 33 * 33 * 2);
    // The padding repeats the last row (z = 16) of the same region exported
    // square where it exists.
    let code = |b: &[u8], x: usize, z: usize| {
        u16::from_le_bytes([b[2 * (z * 33 + x)], b[2 * (z * 33 + x) + 1]])
    };
    let square = dir.path().join("sq.r16");
    ok(&[
        "export",
        s(&file),
        "--format",
        "r16",
        "--region",
        "0,0,32,32",
        "-o",
        s(&square),
    ]);
    let full = std::fs::read(&square).unwrap();
    for x in 0..33 {
        for z in 0..=16 {
            assert_eq!(code(&padded, x, z), code(&full, x, z), "({x}, {z})");
        }
        for z in 17..33 {
            assert_eq!(code(&padded, x, z), code(&full, x, 16), "({x}, {z})");
        }
    }
    let e = fails(&[
        "export",
        s(&file),
        "--format",
        "png16",
        "--region",
        "0,0,32,16",
        "--pad",
        "-o",
        s(&dir.path().join("h.png")),
    ]);
    assert!(e.contains("--pad applies to r16"), "{e}");
}

#[test]
fn map_glb_has_world_space_uvs_on_ground_walls_and_water_and_splat_weights() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.isoterra");
    ok(&[
        "new",
        s(&file),
        "--kind",
        "map",
        "--size",
        "96x64",
        "--preset",
        "plateaus",
        "--seed",
        "5",
    ]);
    // Texture 5 (in _SPLAT1) and water, besides the preset's cliffs.
    ok(&[
        "stroke",
        s(&file),
        "--tool",
        "paint",
        "--at",
        "30,30",
        "--radius",
        "8",
        "--texture",
        "5",
    ]);
    ok(&[
        "stroke",
        s(&file),
        "--tool",
        "water-raise",
        "--at",
        "60,30",
        "--radius",
        "10",
        "--height",
        "3",
    ]);
    let glb = dir.path().join("m.glb");
    ok(&["export", s(&file), "--format", "glb", "-o", s(&glb)]);
    assert_clean_glb(&glb);
    let g = read_glb(&glb);
    let names = g.material_names();
    assert_eq!(names, ["terrain", "cliff", "water"]);
    let terrain = g.json["meshes"][0]["primitives"].as_array().unwrap();
    let (ground, walls) = (&terrain[0], &terrain[1]);
    assert_eq!(
        names[ground["material"].as_u64().unwrap() as usize],
        "terrain"
    );
    assert_eq!(names[walls["material"].as_u64().unwrap() as usize], "cliff");
    let a = &ground["attributes"];
    let pos = g.floats(&a["POSITION"]);
    let uv = g.floats(&a["TEXCOORD_0"]);
    let splat: Vec<Vec<f32>> = ["_SPLAT0", "_SPLAT1"]
        .iter()
        .map(|n| g.floats(&a[*n]))
        .collect();
    let nv = pos.len() / 3;
    // Splat weights of every vertex sum to 1; texture 5 is used.
    for v in 0..nv {
        let sum: f32 = splat
            .iter()
            .map(|s| s[4 * v..4 * v + 4].iter().sum::<f32>())
            .sum();
        assert!((sum - 1.0).abs() < 1e-5, "vertex {v}: weights sum to {sum}");
    }
    assert!(
        (0..nv).any(|v| splat[1][4 * v + 1] > 0.5),
        "texture 5 painted"
    );
    // Ground: UV (x, z).
    for &i in &g.indices(&ground["indices"]) {
        let i = i as usize;
        assert_eq!([uv[2 * i], uv[2 * i + 1]], [pos[3 * i], pos[3 * i + 2]]);
    }
    // Walls: vertical, v = y, and u advances by the horizontal distance
    // between the corners of each wall triangle (away from a loop's seam).
    let widx = g.indices(&walls["indices"]);
    assert!(widx.len() > 300, "the plateaus have cliff walls");
    let mut continuous = 0;
    for t in widx.chunks_exact(3) {
        for &i in t {
            let i = i as usize;
            assert_eq!(uv[2 * i + 1], pos[3 * i + 1], "v is the height");
        }
        // Every pair of corners at different rim points: |du| is their
        // horizontal distance.
        let mut pairs = 0;
        let mut along = 0;
        for (a, b) in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
            let (a, b) = (a as usize, b as usize);
            let d = ((pos[3 * a] - pos[3 * b]).powi(2) + (pos[3 * a + 2] - pos[3 * b + 2]).powi(2))
                .sqrt();
            if d > 1e-6 {
                pairs += 1;
                along += usize::from(((uv[2 * a] - uv[2 * b]).abs() - d).abs() < 1e-3);
            }
        }
        assert!(pairs > 0, "a wall triangle spans two rim points");
        if along == pairs {
            continuous += 1;
        }
    }
    let tris = widx.len() / 3;
    assert!(
        continuous * 100 >= tris * 98,
        "u runs along the rim: {continuous} of {tris}"
    );
    // Water: UV (x, z).
    let w = &g.json["meshes"][1]["primitives"][0];
    let wp = g.floats(&w["attributes"]["POSITION"]);
    let wu = g.floats(&w["attributes"]["TEXCOORD_0"]);
    assert!(!wp.is_empty());
    for i in 0..wp.len() / 3 {
        assert_eq!([wu[2 * i], wu[2 * i + 1]], [wp[3 * i], wp[3 * i + 2]]);
    }
}

#[test]
fn glb_of_every_kind_passes_the_validator_without_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let worlds: [(&str, &[&str], Option<&str>); 4] = [
        ("side2d", &["--size", "64x32"], None),
        ("heightmap", &["--chunk", "32"], Some("0,0,64,64")),
        ("voxel", &["--chunk", "16"], Some("-8,-24,-8,24,24,24")),
        ("map", &["--size", "64x64", "--preset", "plateaus"], None),
    ];
    for (kind, extra, region) in worlds {
        let file = dir.path().join(format!("{kind}.isoterra"));
        let mut args = vec!["new", s(&file), "--kind", kind, "--seed", "7"];
        args.extend_from_slice(extra);
        ok(&args);
        let glb = dir.path().join(format!("{kind}.glb"));
        let mut args = vec!["export", s(&file), "--format", "glb", "-o", s(&glb)];
        if let Some(r) = region {
            args.extend_from_slice(&["--region", r]);
        }
        ok(&args);
        assert!(!read_glb(&glb).primitives().is_empty(), "{kind}");
        assert_clean_glb(&glb);
    }
}

/// A triangle as its three corner positions.
type Triangle = [[f32; 3]; 3];
/// Exported chunks (their coordinates) with their LODs.
type ChunkLods = BTreeMap<Vec<i64>, u8>;

/// The chunks of a mixed-LOD export (from the node names
/// `lodL_chunk_X_Z` / `lodL_chunk_X_Y_Z`) with their LODs, and every
/// triangle.
fn ring_export(glb: &Glb) -> (ChunkLods, Vec<Triangle>) {
    let mut chunks = BTreeMap::new();
    let mut triangles = Vec::new();
    for node in glb.json["nodes"].as_array().unwrap() {
        let name = node["name"].as_str().unwrap();
        let (lod, coords) = name
            .strip_prefix("lod")
            .and_then(|r| r.split_once("_chunk_"))
            .unwrap_or_else(|| panic!("node {name} is not lodL_chunk_…"));
        let coord: Vec<i64> = coords.split('_').map(|v| v.parse().unwrap()).collect();
        chunks.insert(coord, lod.parse::<u8>().unwrap());
        let mesh = &glb.json["meshes"][node["mesh"].as_u64().unwrap() as usize];
        for prim in mesh["primitives"].as_array().unwrap() {
            let pos = glb.floats(&prim["attributes"]["POSITION"]);
            for t in glb.indices(&prim["indices"]).chunks_exact(3) {
                let t: [u32; 3] = t.try_into().unwrap();
                triangles.push(t.map(|i| {
                    let i = i as usize;
                    [pos[3 * i], pos[3 * i + 1], pos[3 * i + 2]]
                }));
            }
        }
    }
    (chunks, triangles)
}

/// The edges of `triangles` used by one triangle only, once vertices at the
/// same position are one vertex.
fn open_edges(triangles: &[[[f32; 3]; 3]]) -> Vec<[[f32; 3]; 2]> {
    let key = |p: [f32; 3]| p.map(f32::to_bits);
    type Edge = ([u32; 3], [u32; 3]);
    let mut uses: BTreeMap<Edge, (usize, [[f32; 3]; 2])> = BTreeMap::new();
    for t in triangles {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            let (ka, kb) = (key(a), key(b));
            let e = if ka < kb { (ka, kb) } else { (kb, ka) };
            uses.entry(e).or_insert((0, [a, b])).0 += 1;
        }
    }
    uses.into_values()
        .filter(|(n, _)| *n == 1)
        .map(|(_, e)| e)
        .collect()
}

/// Asserts that every open edge lies on the outside of the exported chunk
/// set: on a chunk plane (`axes` of the position, chunks `size` wide), with
/// a chunk that touches its midpoint missing from `chunks`. An open edge
/// inside a chunk, or between exported chunks, is a crack.
fn assert_no_cracks(
    chunks: &BTreeMap<Vec<i64>, u8>,
    triangles: &[[[f32; 3]; 3]],
    axes: &[usize],
    size: f32,
) {
    let edges = open_edges(triangles);
    for [a, b] in &edges {
        let on_plane = axes
            .iter()
            .any(|&k| a[k] == b[k] && (a[k] / size).fract() == 0.0 && (a[k] / size).is_finite());
        assert!(on_plane, "open edge {a:?}-{b:?} inside a chunk: a crack");
        // The chunks whose closed box holds the midpoint.
        let mid: Vec<f32> = axes.iter().map(|&k| 0.5 * (a[k] + b[k]) / size).collect();
        let mut around: Vec<Vec<i64>> = vec![Vec::new()];
        for m in &mid {
            let choices: Vec<i64> = if m.fract() == 0.0 {
                vec![*m as i64 - 1, *m as i64]
            } else {
                vec![m.floor() as i64]
            };
            around = around
                .into_iter()
                .flat_map(|c| {
                    choices.iter().map(move |&v| {
                        let mut c = c.clone();
                        c.push(v);
                        c
                    })
                })
                .collect();
        }
        assert!(
            around.iter().any(|c| !chunks.contains_key(c)),
            "open edge {a:?}-{b:?} between exported chunks {around:?}: a crack"
        );
    }
}

#[test]
fn lod_rings_export_the_streamed_chunks_crack_free_at_mixed_lod() {
    let dir = tempfile::tempdir().unwrap();
    // Heightmap: three rings around a point off the origin, with a stroke
    // there that the export must show.
    let hm = dir.path().join("h.isoterra");
    ok(&[
        "new",
        s(&hm),
        "--kind",
        "heightmap",
        "--seed",
        "7",
        "--chunk",
        "32",
    ]);
    ok(&[
        "stroke",
        s(&hm),
        "--tool",
        "raise",
        "--at",
        "40,-20",
        "--radius",
        "12",
        "--strength",
        "1",
    ]);
    let glb = dir.path().join("h.glb");
    ok(&[
        "export",
        s(&hm),
        "--format",
        "glb",
        "-o",
        s(&glb),
        "--lod-rings",
        "40,80,120",
        "--around",
        "40,-20",
        "--radius",
        "200",
    ]);
    assert_clean_glb(&glb);
    let parsed = read_glb(&glb);
    assert_eq!(parsed.material_names(), ["ground"]);
    let (chunks, triangles) = ring_export(&parsed);
    let lods: std::collections::BTreeSet<u8> = chunks.values().copied().collect();
    assert!(lods.len() >= 3, "LODs {lods:?}");
    // The chunk under the centre is full resolution, far ones are coarse.
    assert_eq!(chunks[&vec![1, -1]], 0);
    assert!(chunks.values().any(|&l| l >= 2));
    // Neighbours differ by at most one level.
    for (c, l) in &chunks {
        for d in [[1, 0], [0, 1]] {
            if let Some(n) = chunks.get(&vec![c[0] + d[0], c[1] + d[1]]) {
                assert!(l.abs_diff(*n) <= 1, "{c:?} at {l}, neighbour at {n}");
            }
        }
    }
    assert_no_cracks(&chunks, &triangles, &[0, 2], 32.0);
    // The same chunks at one LOD through --region show the stroke the same
    // way: the highest point near the centre is the raised one.
    let top = |tris: &[[[f32; 3]; 3]]| {
        tris.iter()
            .flatten()
            .filter(|p| (p[0] - 40.0).abs() <= 2.0 && (p[2] + 20.0).abs() <= 2.0)
            .map(|p| p[1])
            .fold(f32::NEG_INFINITY, f32::max)
    };
    let flat = dir.path().join("flat.glb");
    ok(&[
        "export",
        s(&hm),
        "--format",
        "glb",
        "-o",
        s(&flat),
        "--region",
        "32,-32,64,0",
    ]);
    let reference = read_glb(&flat);
    let ref_tris: Vec<[[f32; 3]; 3]> = reference
        .primitives()
        .iter()
        .flat_map(|p| {
            let pos = reference.floats(&p["attributes"]["POSITION"]);
            reference
                .indices(&p["indices"])
                .chunks_exact(3)
                .map(|t| {
                    <[u32; 3]>::try_from(t).unwrap().map(|i| {
                        let i = i as usize;
                        [pos[3 * i], pos[3 * i + 1], pos[3 * i + 2]]
                    })
                })
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(top(&triangles), top(&ref_tris));

    // An OBJ of the same rings names its material library.
    let obj = dir.path().join("h.obj");
    ok(&[
        "export",
        s(&hm),
        "--format",
        "obj",
        "-o",
        s(&obj),
        "--lod-rings",
        "auto",
        "--around",
        "0,0",
    ]);
    let (lib, groups) = obj_groups(&std::fs::read_to_string(&obj).unwrap());
    assert_eq!(lib.as_deref(), Some("h.mtl"));
    assert!(groups.contains_key("ground"));
    assert!(dir.path().join("h.mtl").exists());

    // Voxel: transition cells toward finer neighbours close every seam.
    let vx = dir.path().join("v.isoterra");
    ok(&[
        "new",
        s(&vx),
        "--kind",
        "voxel",
        "--seed",
        "3",
        "--chunk",
        "16",
    ]);
    let glb = dir.path().join("v.glb");
    ok(&[
        "export",
        s(&vx),
        "--format",
        "glb",
        "-o",
        s(&glb),
        "--lod-rings",
        "16,32,48",
        "--around",
        "0,0,0",
        "--radius",
        "72",
    ]);
    assert_clean_glb(&glb);
    let (chunks, triangles) = ring_export(&read_glb(&glb));
    let lods: std::collections::BTreeSet<u8> = chunks.values().copied().collect();
    assert!(lods.len() >= 3, "LODs {lods:?}");
    assert!(triangles.len() > 1000);
    assert_no_cracks(&chunks, &triangles, &[0, 1, 2], 16.0);
}

#[test]
fn lod_rings_refuse_what_does_not_fit_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let hm = dir.path().join("h.isoterra");
    ok(&["new", s(&hm), "--kind", "heightmap", "--chunk", "32"]);
    let map = dir.path().join("m.isoterra");
    ok(&["new", s(&map), "--kind", "map", "--size", "32x32"]);
    let out = dir.path().join("out.glb");
    let o = s(&out);
    let cases: [(&Path, &[&str], &str); 8] = [
        (&hm, &["--lod-rings", "40,80"], "--around"),
        (&hm, &["--around", "0,0"], "--lod-rings"),
        (
            &hm,
            &["--lod-rings", "80,40", "--around", "0,0"],
            "ascending",
        ),
        (
            &hm,
            &["--lod-rings", "40,x", "--around", "0,0"],
            "not a number",
        ),
        (&hm, &["--lod-rings", "40", "--around", "0,0,0"], "X,Z"),
        (
            &hm,
            &["--lod-rings", "40", "--around", "0,0", "--radius", "1e9"],
            "at most",
        ),
        (
            &hm,
            &[
                "--lod-rings",
                "40",
                "--around",
                "0,0",
                "--region",
                "0,0,8,8",
            ],
            "--region",
        ),
        (
            &map,
            &["--lod-rings", "40", "--around", "0,0"],
            "heightmap and voxel",
        ),
    ];
    for (file, extra, says) in cases {
        let mut args = vec!["export", s(file), "--format", "glb", "-o", o];
        args.extend_from_slice(extra);
        let err = fails(&args);
        assert!(err.contains(says), "{extra:?}: {err}");
        assert!(!out.exists(), "{extra:?} wrote a file");
    }
}
