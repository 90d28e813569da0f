//! The three example games run headless (offscreen, no window) for a few
//! hundred frames on Mesa's software Vulkan driver (lavapipe) and write a
//! screenshot that is not blank. Without lavapipe the test says so loudly
//! and passes, unless `ISOTERRA_REQUIRE_LAVAPIPE=1` (CI sets it).

use std::path::{Path, PathBuf};
use std::process::Command;

fn lavapipe() -> Option<PathBuf> {
    let dir = Path::new("/usr/share/vulkan/icd.d");
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("lvp_icd"))
        })
}

/// The example binaries `cargo test` built next to this test's folder.
fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let target = exe.parent().and_then(Path::parent).unwrap();
    let path = target.join("examples").join(name);
    assert!(
        path.exists(),
        "{} is missing: `cargo test -p isoterra-bevy` builds it",
        path.display()
    );
    path
}

/// Share of pixels that differ from the top-left one, and how many distinct
/// colours (coarsely) the image has.
fn contents(png_path: &Path) -> (f64, usize) {
    let file = std::fs::File::open(png_path).unwrap();
    let mut decoder = png::Decoder::new(std::io::BufReader::new(file));
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let px = info.color_type.samples();
    let data = &buf[..info.buffer_size()];
    let first = &data[..3];
    let mut differ = 0usize;
    let mut colours = std::collections::HashSet::new();
    for p in data.chunks_exact(px) {
        if p[..3].iter().zip(first).any(|(a, b)| a.abs_diff(*b) > 8) {
            differ += 1;
        }
        colours.insert([p[0] >> 4, p[1] >> 4, p[2] >> 4]);
    }
    (differ as f64 / (data.len() / px) as f64, colours.len())
}

/// One example at a time: each renders on every core.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn run(name: &str, frames: u32) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if lavapipe().is_none() {
        if std::env::var("ISOTERRA_REQUIRE_LAVAPIPE").as_deref() == Ok("1") {
            panic!("lavapipe (Debian's mesa-vulkan-drivers) is required but missing");
        }
        eprintln!(
            "\n*** SKIPPED: the {name} example needs Mesa's lavapipe \
             (apt-get install mesa-vulkan-drivers) to render headless ***\n"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let shot = dir.path().join(format!("{name}.png"));
    let out = Command::new(example(name))
        .args([
            "--headless",
            "--frames",
            &frames.to_string(),
            "--screenshot",
        ])
        .arg(&shot)
        .arg("--world")
        .arg(dir.path().join(format!("{name}.isoterra")))
        .env("WGPU_BACKEND", "vulkan")
        .output()
        .unwrap();
    let log = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{name} failed:\n{log}");
    let (lit, colours) = contents(&shot);
    assert!(
        lit > 0.15 && colours >= 8,
        "{name}'s screenshot looks blank: {:.1} % of pixels differ from the corner, \
         {colours} colours\n{log}",
        lit * 100.0
    );
    // Keep the picture where a user can look at it.
    if let Ok(keep) = std::env::var("ISOTERRA_EXAMPLE_SCREENSHOTS") {
        std::fs::create_dir_all(&keep).unwrap();
        std::fs::copy(&shot, Path::new(&keep).join(format!("{name}.png"))).unwrap();
    }
}

#[test]
fn dig2d_runs_headless_and_draws_the_ground() {
    run("dig2d", 150);
}

#[test]
fn voxel_dig_runs_headless_and_draws_the_caves() {
    run("voxel_dig", 30);
}

#[test]
fn heightmap_fly_runs_headless_and_draws_the_mountains() {
    run("heightmap_fly", 45);
}
