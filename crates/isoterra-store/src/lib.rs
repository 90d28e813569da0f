//! isoterra-store
