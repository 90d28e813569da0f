//! isoterra-world
