//! What the plugin's test files share: a headless app with the plugin and
//! a frame loop.

#![allow(dead_code)]

use std::time::Duration;

use bevy::asset::AssetPlugin;
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy::transform::TransformPlugin;
use isoterra_bevy::prelude::*;

/// A headless app with the plugin, stepping 1/60 s of game time per frame,
/// not finished yet (add more plugins first).
pub fn plugin_app() -> App {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        AssetPlugin::default(),
        TransformPlugin,
        IsoterraPlugin,
    ))
    .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
        1.0 / 60.0,
    )));
    app
}

/// [`plugin_app`], finished.
pub fn app() -> App {
    let mut app = plugin_app();
    app.finish();
    app.cleanup();
    app
}

/// Runs frames until `done` holds, at most `max` frames (with a short
/// sleep so the worker threads get the CPU); returns the frames run.
pub fn run_until(app: &mut App, max: usize, mut done: impl FnMut(&mut App) -> bool) -> usize {
    for frame in 0..max {
        app.update();
        if done(app) {
            return frame + 1;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    panic!("not done after {max} frames");
}
