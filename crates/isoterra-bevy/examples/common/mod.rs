//! What the three example games share: their command line, a window or an
//! offscreen target, and `--frames N --screenshot PATH` (render N frames,
//! write a PNG of the last one, exit 0).

#![allow(dead_code)]

use std::path::PathBuf;
use std::time::Duration;

use bevy::app::{AppExit, ScheduleRunnerPlugin};
use bevy::camera::RenderTarget;
use bevy::image::Image;
use bevy::prelude::*;
use bevy::render::render_resource::TextureFormat;
use bevy::render::view::screenshot::{Screenshot, ScreenshotCaptured};
use bevy::window::{ExitCondition, WindowPlugin};
use bevy::winit::WinitPlugin;

/// The command line of an example.
#[derive(Resource, Debug, Clone)]
pub struct Args {
    /// No window: render offscreen.
    pub headless: bool,
    /// Frames to run before the screenshot and the exit (0: run until
    /// closed).
    pub frames: u32,
    /// Where to write the PNG of the last frame.
    pub screenshot: Option<PathBuf>,
    /// The world file to open (created when missing).
    pub world: Option<PathBuf>,
    /// The WebSocket URL of an `isoterra edit` serving the same file, to
    /// follow it live (`ws://127.0.0.1:7878/ws`).
    pub link: Option<String>,
}

/// Offscreen size.
pub const SIZE: [u32; 2] = [960, 540];

impl Args {
    /// Reads `--headless --frames N --screenshot PATH --world FILE --link URL`.
    pub fn parse(usage: &str) -> Args {
        let mut a = Args {
            headless: false,
            frames: 0,
            screenshot: None,
            world: None,
            link: None,
        };
        let mut it = std::env::args().skip(1);
        while let Some(arg) = it.next() {
            let mut value = |name: &str| {
                it.next().unwrap_or_else(|| {
                    eprintln!("error: {name} needs a value\n{usage}");
                    std::process::exit(2)
                })
            };
            match arg.as_str() {
                "--headless" => a.headless = true,
                "--frames" => {
                    let v = value("--frames");
                    a.frames = v.parse().unwrap_or_else(|_| {
                        eprintln!("error: --frames takes a count, not {v:?}\n{usage}");
                        std::process::exit(2)
                    });
                }
                "--screenshot" => a.screenshot = Some(value("--screenshot").into()),
                "--world" => a.world = Some(value("--world").into()),
                "--link" => a.link = Some(value("--link")),
                "-h" | "--help" => {
                    println!("{usage}");
                    std::process::exit(0)
                }
                other => {
                    eprintln!("error: unknown argument {other:?}\n{usage}");
                    std::process::exit(2)
                }
            }
        }
        if a.headless && a.frames == 0 {
            a.frames = 300;
        }
        a
    }

    /// The world file: `--world`, or `default` in the system's temp folder.
    pub fn world_or(&self, default: &str) -> PathBuf {
        self.world
            .clone()
            .unwrap_or_else(|| std::env::temp_dir().join(default))
    }
}

/// Spawns the example's terrain, linked to the editor of `--link`.
pub fn spawn_terrain(
    commands: &mut Commands,
    args: &Args,
    terrain: isoterra_bevy::Terrain,
) -> Entity {
    let mut e = commands.spawn(terrain);
    if let Some(url) = &args.link {
        e.insert(isoterra_bevy::EditorLink::new(url.clone()));
    }
    e.id()
}

/// The app with the render plugins: a window, or (headless) none at all
/// and a fixed 60 Hz loop. The camera target is in [`Target`].
pub fn app(args: &Args, title: &str) -> App {
    let mut app = App::new();
    if args.headless {
        app.add_plugins(
            DefaultPlugins
                .set(WindowPlugin {
                    primary_window: None,
                    exit_condition: ExitCondition::DontExit,
                    close_when_requested: false,
                    ..Default::default()
                })
                .disable::<WinitPlugin>(),
        )
        .add_plugins(ScheduleRunnerPlugin::run_loop(Duration::from_secs_f64(
            1.0 / 60.0,
        )));
    } else {
        app.add_plugins(DefaultPlugins.set(WindowPlugin {
            primary_window: Some(Window {
                title: title.into(),
                resolution: (SIZE[0], SIZE[1]).into(),
                ..Default::default()
            }),
            ..Default::default()
        }));
    }
    app.insert_resource(args.clone())
        .insert_resource(ClearColor(Color::srgb(0.55, 0.72, 0.92)))
        .add_systems(Startup, make_target)
        .add_systems(Last, finish);
    app
}

/// Where the camera draws: the window, or an offscreen image.
#[derive(Resource, Debug, Clone)]
pub struct Target(pub RenderTarget);

pub fn make_target(mut commands: Commands, args: Res<Args>, mut images: ResMut<Assets<Image>>) {
    let target = if args.headless {
        let image =
            Image::new_target_texture(SIZE[0], SIZE[1], TextureFormat::Rgba8UnormSrgb, None);
        RenderTarget::Image(images.add(image).into())
    } else {
        RenderTarget::Window(bevy::window::WindowRef::Primary)
    };
    commands.insert_resource(Target(target));
}

/// Counts frames; at `--frames` asks for a screenshot (or exits), and
/// exits once it is written.
fn finish(
    mut commands: Commands,
    args: Res<Args>,
    target: Option<Res<Target>>,
    mut frame: Local<u32>,
    mut asked: Local<bool>,
    written: Option<Res<Written>>,
    mut exit: MessageWriter<AppExit>,
) {
    if written.is_some() {
        exit.write(AppExit::Success);
        return;
    }
    if args.frames == 0 || *asked {
        // Give a screenshot a few frames; then leave anyway.
        if *asked {
            *frame += 1;
            if *frame > args.frames + 240 {
                eprintln!("error: the screenshot was not captured");
                exit.write(AppExit::from_code(1));
            }
        }
        return;
    }
    *frame += 1;
    if *frame < args.frames {
        return;
    }
    let Some(path) = args.screenshot.clone() else {
        exit.write(AppExit::Success);
        return;
    };
    let Some(target) = target else {
        return;
    };
    *asked = true;
    let shot = match &target.0 {
        RenderTarget::Image(image) => Screenshot::image(image.handle.clone()),
        _ => Screenshot::primary_window(),
    };
    commands.spawn(shot).observe(
        move |captured: On<ScreenshotCaptured>, mut commands: Commands| {
            match save(&captured.image, &path) {
                Ok(lit) => println!(
                    "screenshot {} written ({:.1} % of pixels differ from the sky)",
                    path.display(),
                    lit * 100.0
                ),
                Err(e) => eprintln!("error: cannot write {}: {e}", path.display()),
            }
            commands.insert_resource(Written);
        },
    );
}

#[derive(Resource)]
struct Written;

/// Writes `image` as an RGB PNG; returns the share of pixels that are not
/// the clear colour (a blank frame gives 0).
fn save(image: &Image, path: &std::path::Path) -> Result<f64, String> {
    let rgb = image
        .clone()
        .try_into_dynamic()
        .map_err(|e| e.to_string())?
        .to_rgb8();
    let first = *rgb.get_pixel(0, 0);
    let differ = rgb
        .pixels()
        .filter(|p| p.0.iter().zip(first.0).any(|(a, b)| a.abs_diff(b) > 8))
        .count();
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    }
    rgb.save(path).map_err(|e| e.to_string())?;
    Ok(differ as f64 / (rgb.width() as f64 * rgb.height() as f64))
}

/// The cursor position in the window, if there is a window and a cursor.
pub fn cursor(windows: &Query<&Window>) -> Option<Vec2> {
    windows.iter().next().and_then(Window::cursor_position)
}
