//! isoterra
