//! isoterra-export
