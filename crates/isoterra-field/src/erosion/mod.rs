//! Thermal and hydraulic erosion of heightmaps, with a tiling rule that
//! makes separately eroded tiles agree bit for bit.
//!
//! # Tiling rule
//!
//! Erosion is not local: a droplet travels up to `lifetime` cells and
//! changes heights up to `radius` cells around its path. Both erosions here
//! are therefore written so that the result at a node depends only on the
//! input heights within a known Chebyshev distance, the *margin*:
//!
//! * every pass (thermal iteration, hydraulic pass) reads a snapshot of the
//!   heights taken at the start of the pass and accumulates its changes in a
//!   separate buffer, added at the end of the pass;
//! * hydraulic droplets are spawned by hashing `(seed, pass, world node)` —
//!   a function of world coordinates, not of the region being eroded — and
//!   are simulated in world row-major order of their spawn node, with their
//!   positions kept relative to the spawn node;
//! * each node's change is summed in that same order.
//!
//! A droplet spawned at node `g` reads and writes only nodes within
//! `R = lifetime + radius + 2` of `g`, so in one pass a node `n` receives
//! changes only from droplets spawned within `R` of `n`, which read only
//! heights within `2R` of `n`. After `P` passes the value at `n` is a function
//! of the input within `2 R P` of `n` ([`HydraulicParams::margin`]; thermal
//! erosion: one node per iteration, [`ThermalParams::margin`]).
//!
//! **Rule:** to erode a tile, erode the tile grown by the margin on every
//! side (with the input heights of that larger region, and the world node
//! coordinates of its first node), then keep the tile. Any two tiles eroded
//! this way — and the whole world eroded at once — give bit-identical
//! heights on every node they share. [`erode_tile`] and [`thermal_tile`] do
//! exactly this.

mod hydraulic;
mod thermal;

pub use hydraulic::{ErosionStats, HydraulicParams, erode_tile, hydraulic_erosion};
pub use thermal::{ThermalParams, thermal_erosion, thermal_tile};

use crate::{Field2, FieldError};

/// The tiling rule: reads `height(x, y)` for the tile of `dims` nodes at
/// `origin` grown by `margin` on every side (node coordinates wrap at the
/// ends of the i64 range), lets `erode` work on that region (given its
/// first node), and returns the tile's nodes, row-major.
fn grown_tile(
    origin: [i64; 2],
    dims: [u32; 2],
    margin: u32,
    mut height: impl FnMut(i64, i64) -> f32,
    erode: impl FnOnce(&mut Field2, [i64; 2]) -> Result<(), FieldError>,
) -> Result<Vec<f32>, FieldError> {
    if dims[0] == 0 || dims[1] == 0 {
        return Err(FieldError::InvalidSize {
            width: dims[0] as u64,
            height: dims[1] as u64,
            reason: "the tile needs at least one node",
        });
    }
    let m = margin;
    let gw = dims[0] as u64 + 2 * m as u64;
    let gh = dims[1] as u64 + 2 * m as u64;
    Field2::check_size(gw, gh)?;
    let first = [
        origin[0].wrapping_sub(i64::from(m)),
        origin[1].wrapping_sub(i64::from(m)),
    ];
    let mut region = Field2::from_fn(gw as u32, gh as u32, |x, y| {
        height(
            first[0].wrapping_add(i64::from(x)),
            first[1].wrapping_add(i64::from(y)),
        )
    })?;
    erode(&mut region, first)?;
    let mut out = Vec::with_capacity(dims[0] as usize * dims[1] as usize);
    for y in 0..dims[1] {
        let start = (y + m) as usize * gw as usize + m as usize;
        out.extend_from_slice(&region.values()[start..start + dims[0] as usize]);
    }
    Ok(out)
}
