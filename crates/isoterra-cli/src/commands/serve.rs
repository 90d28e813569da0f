//! `isoterra edit`: the web editor.

use std::path::PathBuf;

use anyhow::Context;
use isoterra_editor::EditorOptions;

use crate::args::EditArgs;

pub fn run(a: &EditArgs) -> anyhow::Result<()> {
    let file = a
        .file
        .clone()
        .unwrap_or_else(|| PathBuf::from("world.isoterra"));
    let options = EditorOptions::new(&file)
        .with_host(a.host)
        .with_port(a.port)
        .with_open_browser(a.open);
    isoterra_editor::run(options)
        .with_context(|| format!("cannot serve the editor for {}", file.display()))
}
