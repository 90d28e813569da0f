//! Erosion of a region of a heightmap world, as one undoable stroke
//! ([`Document::erode`](crate::Document::erode), `isoterra erode`).

use isoterra_field::erosion::{HydraulicParams, ThermalParams, erode_tile, thermal_tile};
use isoterra_field::{BlurKind, Field2, blur};
use isoterra_world::{HeightErosion, HeightmapWorld};
use serde::{Deserialize, Serialize};

use crate::KindError;

/// The most nodes one erosion may change (a 2049 x 2049 region).
pub const MAX_ERODE_NODES: u64 = 2049 * 2049;

/// An erosion of a region of a heightmap world.
///
/// The region's nodes are eroded by the tiling rule of
/// [`isoterra_field::erosion`]: the region is grown by the erosion's margin,
/// that larger block is read from the world (generated heights plus edits)
/// and eroded, and only the region is kept. Droplets are spawned from world
/// node coordinates, so the result on a node does not depend on where the
/// region starts or how large it is: two overlapping regions eroded from
/// the same heights agree bit for bit on the nodes they share, and a chunk
/// of an eroded region equals the same chunk of a larger one.
///
/// Hydraulic erosion sees heights in units of the generator's height range
/// (the scale its parameters are tuned for: the same settings carve a
/// world of hills and one of 256-unit mountains alike); thermal erosion
/// sees them in cells, so its talus is a slope of the world (rise over
/// run). The defaults here ([`ErodeSpec::new`]) take eight lighter passes
/// instead of the library's four: droplets of one pass do not see each
/// other's changes, and fewer per pass leave smoother channels.
///
/// A border `feather` (world units) fades the change in from the region's
/// edge, so an eroded region meets the ground around it without a step;
/// with `feather = 0` every node of the region takes its eroded height.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErodeSpec {
    /// The region in world units, `[x0, z0, x1, z1]`: every node with
    /// `x0 <= x <= x1` and `z0 <= z <= z1`.
    pub region: [f64; 4],
    /// Hydraulic erosion (droplets), or none.
    pub hydraulic: Option<HydraulicParams>,
    /// Thermal erosion (slumping of slopes steeper than the talus), run
    /// after the hydraulic passes, or none.
    pub thermal: Option<ThermalParams>,
    /// A Gaussian blur of this radius in nodes (`0..=64`, `0`: none), run
    /// last: softens what the droplets left, or the whole region on its
    /// own. Left out of stroke records written before it existed: `0`.
    #[serde(default)]
    pub blur: u32,
    /// The droplet seed (the world's seed unless given).
    pub seed: Option<u64>,
    /// World units over which the change fades in from the region's edge.
    pub feather: f64,
}

impl ErodeSpec {
    /// The default hydraulic erosion of a region: the library's defaults
    /// in 8 passes of 0.125 droplets per node (one droplet per node in
    /// all, as the library's 4 x 0.25).
    pub const DEFAULT_HYDRAULIC: HydraulicParams =
        HydraulicParams::DEFAULT.with_passes(8).with_density(0.125);

    /// Hydraulic erosion of `region` ([`ErodeSpec::DEFAULT_HYDRAULIC`]), no
    /// thermal pass, the world's seed and a feather of 8 world units.
    pub fn new(region: [f64; 4]) -> Self {
        ErodeSpec {
            region,
            hydraulic: Some(Self::DEFAULT_HYDRAULIC),
            thermal: None,
            blur: 0,
            seed: None,
            feather: 8.0,
        }
    }
}

impl From<HeightErosion> for ErodeSpec {
    /// The region erosion a recipe's erosion step runs (the world's seed).
    fn from(e: HeightErosion) -> Self {
        ErodeSpec {
            region: e.region,
            hydraulic: e.hydraulic(),
            thermal: e.thermal(),
            blur: e.blur,
            seed: None,
            feather: e.feather,
        }
    }
}

/// The eroded heights of a region: its first node, its size in nodes and
/// the heights (row-major, x fastest).
#[derive(Debug, Clone, PartialEq)]
pub struct ErodedRegion {
    /// The first (smallest) global node.
    pub first: [i64; 2],
    /// Nodes along x and z.
    pub dims: [u32; 2],
    /// The new heights.
    pub heights: Vec<f32>,
}

fn param(what: &str, e: impl std::fmt::Display) -> KindError {
    KindError::invalid(format!("{what}: {e}"))
}

/// Computes the eroded heights of `spec`'s region of `world` without
/// changing it.
///
/// # Errors
///
/// [`KindError::Invalid`] for a region that is not finite, is empty or
/// inverted, lies beyond the node range, holds fewer than 2 x 2 or more
/// than [`MAX_ERODE_NODES`] nodes, for neither erosion asked, for a
/// parameter out of its range or a negative or non-finite feather.
pub fn erode_region(world: &HeightmapWorld, spec: &ErodeSpec) -> Result<ErodedRegion, KindError> {
    let r = spec.region;
    if r.iter().any(|v| !v.is_finite()) || r[0] >= r[2] || r[1] >= r[3] {
        return Err(KindError::invalid(format!(
            "region {r:?}: must be finite with x0 < x1 and z0 < z1"
        )));
    }
    if !(spec.feather.is_finite() && spec.feather >= 0.0) {
        return Err(KindError::invalid(format!(
            "feather {}: must be finite and at least 0",
            spec.feather
        )));
    }
    if spec.hydraulic.is_none() && spec.thermal.is_none() && spec.blur == 0 {
        return Err(KindError::invalid(
            "nothing to do: ask for hydraulic or thermal erosion or a blur",
        ));
    }
    if spec.blur > BlurKind::MAX_RADIUS {
        return Err(KindError::invalid(format!(
            "blur radius {}: must be 0..={} nodes",
            spec.blur,
            BlurKind::MAX_RADIUS
        )));
    }
    if let Some(h) = &spec.hydraulic {
        h.validate().map_err(|e| param("hydraulic erosion", e))?;
    }
    if let Some(t) = &spec.thermal {
        t.validate().map_err(|e| param("thermal erosion", e))?;
    }
    let cs = f64::from(world.params().cell_size);
    // Nodes well inside the ±2^30 range, margins included.
    let limit = (1i64 << 29) as f64;
    let node = |v: f64, up: bool| -> Result<i64, KindError> {
        let n = if up {
            (v / cs).ceil()
        } else {
            (v / cs).floor()
        };
        if n.abs() > limit {
            return Err(KindError::invalid(format!(
                "region {r:?}: beyond the world's node range"
            )));
        }
        Ok(n as i64)
    };
    let first = [node(r[0], true)?, node(r[1], true)?];
    let last = [node(r[2], false)?, node(r[3], false)?];
    if last[0] <= first[0] || last[1] <= first[1] {
        return Err(KindError::invalid(format!(
            "region {r:?}: holds fewer than 2 x 2 nodes (cell size {cs})"
        )));
    }
    let dims = [
        (last[0] - first[0] + 1) as u64,
        (last[1] - first[1] + 1) as u64,
    ];
    if dims[0] * dims[1] > MAX_ERODE_NODES {
        return Err(KindError::TooLarge(format!(
            "region {r:?}: {} x {} nodes; one erosion changes at most {MAX_ERODE_NODES} \
             (erode it in parts)",
            dims[0], dims[1]
        )));
    }
    let dims = [dims[0] as u32, dims[1] as u32];
    let bm = spec.blur;
    let tm = spec.thermal.map_or(0, |t| t.margin());
    let hm = spec.hydraulic.map_or(0, |h| h.margin());
    // The blurred block: the region grown by the blur's radius; the
    // thermal block: that grown by the thermal margin.
    let b_first = [first[0] - i64::from(bm), first[1] - i64::from(bm)];
    let b_dims = [dims[0] + 2 * bm, dims[1] + 2 * bm];
    let t_first = [b_first[0] - i64::from(tm), b_first[1] - i64::from(tm)];
    let t_dims = [b_dims[0] + 2 * tm, b_dims[1] + 2 * tm];
    // Everything read: the thermal block grown by the hydraulic margin.
    let read_first = [t_first[0] - i64::from(hm), t_first[1] - i64::from(hm)];
    let read_dims = [t_dims[0] + 2 * hm, t_dims[1] + 2 * hm];
    let mut read = Vec::new();
    world
        .region_heights(read_first, read_dims, &mut read)
        .map_err(|e| param("region", e))?;
    let raw = |x: i64, z: i64| -> f32 {
        let i = (x - read_first[0]) as usize;
        let j = (z - read_first[1]) as usize;
        read[j * read_dims[0] as usize + i]
    };
    // Hydraulic erosion runs on heights in units of the generator's
    // height range (0..1 over the range), the scale its parameters are
    // tuned for; thermal erosion in cell units, so that the talus is a
    // slope in the world.
    let unit = world.erosion_height_unit();
    let cell = cs as f32;
    // The thermal block (the region when there is no thermal pass).
    let (block, scale) = match &spec.hydraulic {
        Some(h) => {
            let seed = spec.seed.unwrap_or(world.params().seed);
            let inv = 1.0 / unit;
            let b = erode_tile(h, seed, t_first, t_dims, |x, z| raw(x, z) * inv)
                .map_err(|e| param("hydraulic erosion", e))?;
            (b, unit)
        }
        None => {
            let inv = 1.0 / cell;
            let mut out = Vec::with_capacity(t_dims[0] as usize * t_dims[1] as usize);
            for j in 0..i64::from(t_dims[1]) {
                for i in 0..i64::from(t_dims[0]) {
                    out.push(raw(t_first[0] + i, t_first[1] + j) * inv);
                }
            }
            (out, cell)
        }
    };
    // The blurred block's eroded heights.
    let (eroded, scale) = match &spec.thermal {
        Some(t) => {
            let to_cells = scale / cell;
            let tw = t_dims[0] as usize;
            let at = |x: i64, z: i64| {
                block[(z - t_first[1]) as usize * tw + (x - t_first[0]) as usize] * to_cells
            };
            let v =
                thermal_tile(t, b_first, b_dims, at).map_err(|e| param("thermal erosion", e))?;
            (v, cell)
        }
        None => (block, scale),
    };
    // The blur, on the block grown by its radius: every node of the region
    // reads only nodes of that block (its clamped edge is never reached),
    // so the region does not depend on where the block starts. Then the
    // region is cut out.
    let eroded = if bm > 0 {
        let mut f = Field2::new(b_dims[0], b_dims[1], 0.0).map_err(|e| param("blur", e))?;
        f.values_mut().copy_from_slice(&eroded);
        blur(&mut f, BlurKind::Gaussian, bm).map_err(|e| param("blur", e))?;
        let bw = b_dims[0] as usize;
        let m = bm as usize;
        let mut out = Vec::with_capacity(dims[0] as usize * dims[1] as usize);
        for j in 0..dims[1] as usize {
            let row = (j + m) * bw + m;
            out.extend_from_slice(&f.values()[row..row + dims[0] as usize]);
        }
        out
    } else {
        eroded
    };
    let feather = spec.feather / cs;
    let mut heights = Vec::with_capacity(dims[0] as usize * dims[1] as usize);
    for j in 0..dims[1] {
        for i in 0..dims[0] {
            let eroded = eroded[j as usize * dims[0] as usize + i as usize] * scale;
            let old = raw(first[0] + i64::from(i), first[1] + i64::from(j));
            // Nodes from the edge (the edge itself is 0).
            let edge = i.min(j).min(dims[0] - 1 - i).min(dims[1] - 1 - j);
            let w = if feather > 0.0 {
                (f64::from(edge) / feather).min(1.0) as f32
            } else {
                1.0
            };
            heights.push(if w >= 1.0 {
                eroded
            } else if w <= 0.0 {
                old
            } else {
                old + w * (eroded - old)
            });
        }
    }
    Ok(ErodedRegion {
        first,
        dims,
        heights,
    })
}
