//! The plugin's headless tests: streaming and editing (`headless`), baked
//! worlds as a source (`baked`) and colliders with physics (`physics`).
//!
//! They are one test binary because each binary links Bevy, which is most
//! of the time a test build takes.

mod baked;
mod common;
mod headless;
mod physics;
