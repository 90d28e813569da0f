//! Embeds the front end: walks `web/` and writes a table of
//! `include_bytes!` entries into `OUT_DIR/assets.rs`; makes the tiling
//! detail textures from isoterra's noise into `OUT_DIR/detail.bin`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[path = "build/detail.rs"]
mod detail;

fn walk(dir: &Path, base: &Path, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with('.') || name.is_empty() {
            continue;
        }
        if path.is_dir() {
            walk(&path, base, out);
        } else if path.is_file() {
            let Ok(rel) = path.strip_prefix(base) else {
                continue;
            };
            let rel: Vec<&str> = rel.iter().filter_map(|c| c.to_str()).collect();
            out.push((rel.join("/"), path.clone()));
        }
    }
}

fn main() {
    println!("cargo:rerun-if-changed=web");
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let web = manifest.join("web");
    let mut files = Vec::new();
    walk(&web, &web, &mut files);
    let mut code = String::from(
        "/// Every embedded front-end file: its URL path (no leading slash) and bytes.\n",
    );
    code.push_str("pub(crate) static ASSETS: &[(&str, &[u8])] = &[\n");
    for (rel, path) in &files {
        // Directories too, so that added files trigger a rebuild.
        if let Some(parent) = path.parent() {
            println!("cargo:rerun-if-changed={}", parent.display());
        }
        println!("cargo:rerun-if-changed={}", path.display());
        let _ = writeln!(
            code,
            "    ({rel:?}, include_bytes!({:?})),",
            path.display().to_string()
        );
    }
    code.push_str("];\n");
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    std::fs::write(out_dir.join("assets.rs"), code).expect("write assets.rs");

    println!("cargo:rerun-if-changed=build/detail.rs");
    let textures = detail::generate();
    std::fs::write(out_dir.join("detail.bin"), textures).expect("write detail.bin");
    let info = format!(
        "/// Texels per side of each detail texture layer.\n\
         pub(crate) const DETAIL_SIDE: usize = {};\n\
         /// The detail texture layers, in array order.\n\
         pub(crate) const DETAIL_LAYERS: [&str; {}] = {:?};\n",
        detail::SIDE,
        detail::LAYERS.len(),
        detail::LAYERS
    );
    std::fs::write(out_dir.join("detail_info.rs"), info).expect("write detail_info.rs");
}
