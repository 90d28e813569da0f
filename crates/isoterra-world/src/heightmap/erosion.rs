//! The erosion a heightmap world's starting ground is made with: one
//! region of the generated heights, eroded once when the world is created.

use isoterra_field::erosion::{HydraulicParams, ThermalParams};

use crate::WorldError;

/// An erosion of one region of a new heightmap world's generated ground
/// (the `erosion` step of a heightmap recipe).
///
/// The region is eroded once, when the world is created, by the tiling
/// rule of [`isoterra_field::erosion`]: it is grown by the erosion's
/// margin, that block of generated heights is eroded with droplets spawned
/// from world node coordinates and the world's seed, and the region is
/// kept. Any chunk of the region therefore equals the same chunk eroded on
/// its own (grown by the margin) bit for bit. The result is stored as the
/// world's starting ground, the way an imported heightmap is: no stroke
/// undoes it, and outside the region the ground stays as generated; a
/// `feather` fades the change in from the region's edge so the two meet
/// without a step.
///
/// [`HeightmapWorld`](crate::HeightmapWorld) itself does not erode (an
/// erosion takes seconds); it keeps the parameters so that the recipe
/// that made the world can be printed again. `isoterra_kind`'s
/// `Document::create` runs the erosion and stores the eroded heights.
///
/// Hydraulic erosion sees heights in units of the generator's height range
/// and thermal erosion in cells (see `isoterra_kind::ErodeSpec`, which
/// this is turned into: the same settings as `isoterra erode`).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct HeightErosion {
    /// The region in world units, `[x0, z0, x1, z1]` with `x0 < x1` and
    /// `z0 < z1`, all finite: every node with `x0 <= x <= x1` and
    /// `z0 <= z <= z1`. Default value: `[-256, -256, 256, 256]`.
    pub region: [f64; 4],
    /// Hydraulic passes, `0..=64` (`0`: no hydraulic erosion).
    /// Default value: `8`.
    pub passes: u32,
    /// Droplets per node and pass, `(0, 1]`. Default value: `0.125`.
    pub density: f32,
    /// Most steps of one droplet, `1..=256`. Default value: `30`.
    pub lifetime: u32,
    /// Radius of a droplet's erosion brush in cells, `1..=8`.
    /// Default value: `3`.
    pub radius: u32,
    /// Sediment capacity factor, finite and `> 0`. Default value: `4.0`.
    pub capacity: f32,
    /// Thermal iterations after the hydraulic passes, `0..=10000` (`0`:
    /// none). Default value: `0`.
    pub thermal: u32,
    /// The steepest slope thermal erosion leaves standing (rise over run),
    /// finite and `>= 0`. Default value: `0.8`.
    pub talus: f32,
    /// Radius in nodes of a Gaussian blur run last, `0..=64` (`0`: none).
    /// Default value: `0`.
    pub blur: u32,
    /// World units over which the change fades in from the region's edge,
    /// finite and `>= 0`. Default value: `16.0`.
    pub feather: f64,
}

/// Most hydraulic passes of a [`HeightErosion`].
const MAX_PASSES: u32 = HydraulicParams::MAX_PASSES;
/// Most thermal iterations of a [`HeightErosion`].
const MAX_THERMAL: u32 = ThermalParams::MAX_ITERATIONS;
/// Largest blur radius of a [`HeightErosion`], in nodes.
const MAX_BLUR: u32 = isoterra_field::BlurKind::MAX_RADIUS;

impl HeightErosion {
    /// The defaults (see the field docs): the hydraulic erosion of
    /// `isoterra erode` over a 512-unit square around the origin.
    pub const DEFAULT: Self = HeightErosion {
        region: [-256.0, -256.0, 256.0, 256.0],
        passes: 8,
        density: 0.125,
        lifetime: 30,
        radius: 3,
        capacity: 4.0,
        thermal: 0,
        talus: 0.8,
        blur: 0,
        feather: 16.0,
    };

    /// Sets [`region`](Self::region).
    pub const fn with_region(mut self, region: [f64; 4]) -> Self {
        self.region = region;
        self
    }

    /// Sets [`passes`](Self::passes).
    pub const fn with_passes(mut self, passes: u32) -> Self {
        self.passes = passes;
        self
    }

    /// Sets [`thermal`](Self::thermal).
    pub const fn with_thermal(mut self, thermal: u32) -> Self {
        self.thermal = thermal;
        self
    }

    /// Sets [`blur`](Self::blur).
    pub const fn with_blur(mut self, blur: u32) -> Self {
        self.blur = blur;
        self
    }

    /// Sets [`feather`](Self::feather).
    pub const fn with_feather(mut self, feather: f64) -> Self {
        self.feather = feather;
        self
    }

    /// The hydraulic erosion, or `None` when [`passes`](Self::passes) is 0.
    pub fn hydraulic(&self) -> Option<HydraulicParams> {
        (self.passes > 0).then(|| {
            let mut h = HydraulicParams::DEFAULT
                .with_passes(self.passes)
                .with_density(self.density)
                .with_lifetime(self.lifetime)
                .with_radius(self.radius);
            h.capacity = self.capacity;
            h
        })
    }

    /// The thermal erosion, or `None` when [`thermal`](Self::thermal) is 0.
    pub fn thermal(&self) -> Option<ThermalParams> {
        (self.thermal > 0).then(|| {
            ThermalParams::DEFAULT
                .with_iterations(self.thermal)
                .with_talus(self.talus)
        })
    }

    /// Checks every field (the region's size in nodes is checked where the
    /// cell size is known, when the world is created).
    ///
    /// # Errors
    ///
    /// [`WorldError::InvalidParameter`] naming the first bad field, and
    /// for an erosion with neither hydraulic passes nor thermal iterations.
    pub fn validate(&self) -> Result<(), WorldError> {
        let r = self.region;
        if r.iter().any(|v| !v.is_finite()) || r[0] >= r[2] || r[1] >= r[3] {
            return Err(WorldError::param(
                "erosion.region",
                format!("{r:?}"),
                "must be finite with x0 < x1 and z0 < z1",
            ));
        }
        if self.passes > MAX_PASSES {
            return Err(WorldError::param(
                "erosion.passes",
                self.passes,
                "must be 0..=64",
            ));
        }
        if self.thermal > MAX_THERMAL {
            return Err(WorldError::param(
                "erosion.thermal",
                self.thermal,
                "must be 0..=10000",
            ));
        }
        if self.blur > MAX_BLUR {
            return Err(WorldError::param(
                "erosion.blur",
                self.blur,
                "must be 0..=64",
            ));
        }
        if self.passes == 0 && self.thermal == 0 && self.blur == 0 {
            return Err(WorldError::param(
                "erosion",
                "no passes",
                "needs hydraulic passes, thermal iterations or a blur",
            ));
        }
        if !(self.feather.is_finite() && self.feather >= 0.0) {
            return Err(WorldError::param(
                "erosion.feather",
                self.feather,
                "must be finite and at least 0",
            ));
        }
        if !(self.talus.is_finite() && self.talus >= 0.0) {
            return Err(WorldError::param(
                "erosion.talus",
                self.talus,
                "must be finite and at least 0",
            ));
        }
        // The droplet fields are checked even with no passes, so a
        // recipe never stores a value it would refuse once turned on.
        let mut h = HydraulicParams::DEFAULT
            .with_density(self.density)
            .with_lifetime(self.lifetime)
            .with_radius(self.radius);
        h.capacity = self.capacity;
        h.validate().map_err(|e| {
            WorldError::param(
                "erosion",
                e.to_string(),
                "a droplet setting is out of range",
            )
        })
    }
}

impl Default for HeightErosion {
    fn default() -> Self {
        Self::DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_valid_and_bad_fields_are_named() {
        let e = HeightErosion::DEFAULT;
        e.validate().unwrap();
        assert!(e.hydraulic().is_some() && e.thermal().is_none());
        let bad = [
            (e.with_region([0.0, 0.0, 0.0, 10.0]), "erosion.region"),
            (e.with_region([0.0, f64::NAN, 4.0, 10.0]), "erosion.region"),
            (e.with_passes(65), "erosion.passes"),
            (e.with_thermal(10_001), "erosion.thermal"),
            (e.with_passes(0), "erosion"),
            (e.with_blur(65), "erosion.blur"),
            (e.with_feather(-1.0), "erosion.feather"),
            (
                HeightErosion {
                    talus: f32::INFINITY,
                    ..e
                },
                "erosion.talus",
            ),
            (HeightErosion { density: 0.0, ..e }, "erosion"),
            (HeightErosion { radius: 9, ..e }, "erosion"),
            (
                HeightErosion {
                    capacity: -1.0,
                    ..e
                },
                "erosion",
            ),
        ];
        for (b, name) in bad {
            match b.validate() {
                Err(WorldError::InvalidParameter { name: n, .. }) => assert_eq!(n, name, "{b:?}"),
                other => panic!("{b:?}: {other:?}"),
            }
        }
        e.with_passes(0).with_blur(3).validate().unwrap();
        let thermal_only = e.with_passes(0).with_thermal(20);
        thermal_only.validate().unwrap();
        assert!(thermal_only.hydraulic().is_none());
        assert_eq!(thermal_only.thermal().unwrap().iterations, 20);
    }
}
