//! Per-vertex colours: the server colours meshes so the browser only lights
//! and draws them.

/// Linear blend of two colours, `t` in `[0, 1]`.
pub(crate) fn mix(a: [u8; 4], b: [u8; 4], t: f32) -> [u8; 4] {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let mut out = [0u8; 4];
    for k in 0..4 {
        out[k] = (f32::from(a[k]) + (f32::from(b[k]) - f32::from(a[k])) * t).round() as u8;
    }
    out
}

/// Scales the RGB channels by `f` (alpha kept).
pub(crate) fn shade(c: [u8; 4], f: f32) -> [u8; 4] {
    let f = if f.is_finite() { f.max(0.0) } else { 1.0 };
    let s = |v: u8| (f32::from(v) * f).round().clamp(0.0, 255.0) as u8;
    [s(c[0]), s(c[1]), s(c[2]), c[3]]
}

/// Ground colour of a heightmap vertex from its height, normalised to the
/// generator's range (`t` in `[0, 1]`), and the up component of its normal:
/// sand low, grass, then rock and snow high; steep slopes turn to rock.
pub(crate) fn terrain(t: f32, up: f32) -> [u8; 4] {
    const SAND: [u8; 4] = [196, 178, 128, 255];
    const GRASS: [u8; 4] = [88, 140, 62, 255];
    const FOREST: [u8; 4] = [62, 104, 52, 255];
    const ROCK: [u8; 4] = [118, 110, 104, 255];
    const SNOW: [u8; 4] = [236, 238, 242, 255];
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.5
    };
    let base = if t < 0.12 {
        mix(SAND, GRASS, t / 0.12)
    } else if t < 0.55 {
        mix(GRASS, FOREST, (t - 0.12) / 0.43)
    } else if t < 0.8 {
        mix(FOREST, ROCK, (t - 0.55) / 0.25)
    } else {
        mix(ROCK, SNOW, (t - 0.8) / 0.2)
    };
    let up = if up.is_finite() {
        up.clamp(0.0, 1.0)
    } else {
        1.0
    };
    // Slopes steeper than about 45 degrees show rock.
    let steep = ((0.85 - up) / 0.2).clamp(0.0, 1.0);
    mix(base, ROCK, steep)
}

/// The detail texture class of map texture `id` (see
/// `isoterra::export::MAP_TEXTURE_NAMES`): grass and the other plants,
/// soil (dirt, sand, gravel, mud, road), rock (rock, lava rock, tiles) or
/// snow (snow, ice).
pub(crate) fn map_texture_class(id: u8) -> usize {
    use crate::frame::{SURFACE_GRASS, SURFACE_ROCK, SURFACE_SNOW, SURFACE_SOIL};
    match id {
        1 | 3 | 4 | 12 | 14 => SURFACE_SOIL,
        2 | 10 | 15 => SURFACE_ROCK,
        8 | 9 => SURFACE_SNOW,
        _ => SURFACE_GRASS,
    }
}

/// The detail texture class of a side-view material, by its name (tables
/// are the user's): grass and moss are grass; rock, stone, bedrock, basalt,
/// granite, metal and ore are rock; snow and ice are snow; dirt, sand, clay
/// and anything else is soil.
pub(crate) fn side2d_material_class(name: &str) -> usize {
    use crate::frame::{SURFACE_GRASS, SURFACE_ROCK, SURFACE_SNOW, SURFACE_SOIL};
    let name = name.to_ascii_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| name.contains(w));
    if has(&["grass", "moss"]) {
        SURFACE_GRASS
    } else if has(&[
        "rock", "stone", "basalt", "granite", "metal", "ore", "steel",
    ]) {
        SURFACE_ROCK
    } else if has(&["snow", "ice"]) {
        SURFACE_SNOW
    } else {
        SURFACE_SOIL
    }
}

/// The detail texture class of voxel material `id` (the default table's
/// order, `id % 8` past its end): earth, sand and clay are soil; stone,
/// basalt and crystal rock.
pub(crate) fn voxel_material_class(id: u8) -> usize {
    use crate::frame::{SURFACE_GRASS, SURFACE_ROCK, SURFACE_SNOW, SURFACE_SOIL};
    match id % 8 {
        2 => SURFACE_GRASS,
        0 | 3 | 5 => SURFACE_SOIL,
        6 => SURFACE_SNOW,
        _ => SURFACE_ROCK,
    }
}

/// Detail class weights of a heightmap vertex, by the same rules as
/// [`terrain`]: sand (soil) low, grass, rock and snow high, rock on slopes.
pub(crate) fn terrain_surface(t: f32, up: f32) -> [f32; 4] {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.5
    };
    let up = if up.is_finite() {
        up.clamp(0.0, 1.0)
    } else {
        1.0
    };
    let lerp = |a: [f32; 4], b: [f32; 4], k: f32| -> [f32; 4] {
        std::array::from_fn(|i| a[i] + (b[i] - a[i]) * k.clamp(0.0, 1.0))
    };
    const GRASS: [f32; 4] = [1.0, 0.0, 0.0, 0.0];
    const SOIL: [f32; 4] = [0.0, 1.0, 0.0, 0.0];
    const ROCK: [f32; 4] = [0.0, 0.0, 1.0, 0.0];
    const SNOW: [f32; 4] = [0.0, 0.0, 0.0, 1.0];
    let base = if t < 0.12 {
        lerp(SOIL, GRASS, t / 0.12)
    } else if t < 0.55 {
        GRASS
    } else if t < 0.8 {
        lerp(GRASS, ROCK, (t - 0.55) / 0.25)
    } else {
        lerp(ROCK, SNOW, (t - 0.8) / 0.2)
    };
    lerp(base, ROCK, (0.85 - up) / 0.2)
}

/// Colour of a voxel material id: the voxel material table's (the one glb
/// and OBJ exports name), `id % 8` past its end.
pub(crate) fn voxel_material(id: u8) -> [u8; 4] {
    static COLORS: std::sync::OnceLock<Vec<[u8; 4]>> = std::sync::OnceLock::new();
    let colors = COLORS.get_or_init(|| {
        isoterra::field::MaterialTable::voxel_default()
            .iter()
            .map(|m| m.color)
            .collect()
    });
    colors[usize::from(id) % colors.len()]
}

/// Colour of a contour line.
pub(crate) const OUTLINE: [u8; 4] = [24, 20, 18, 255];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mix_hits_both_ends() {
        let a = [0, 10, 20, 255];
        let b = [100, 110, 120, 255];
        assert_eq!(mix(a, b, 0.0), a);
        assert_eq!(mix(a, b, 1.0), b);
        assert_eq!(mix(a, b, f32::NAN), a);
        assert_eq!(shade([100, 100, 100, 7], 0.5), [50, 50, 50, 7]);
    }

    #[test]
    fn steep_terrain_is_rock_and_high_terrain_is_light() {
        let flat = terrain(0.3, 1.0);
        let steep = terrain(0.3, 0.3);
        assert_ne!(flat, steep);
        let snow = terrain(1.0, 1.0);
        assert!(snow[0] > 200);
        assert_eq!(voxel_material(9), voxel_material(1));
    }
}
