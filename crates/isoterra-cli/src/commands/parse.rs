//! Parsing of the small value formats the command line takes.

use anyhow::{Context, bail};

/// Parses `WIDTHxHEIGHT` (cells) into two positive integers.
pub fn size(text: &str) -> anyhow::Result<(u32, u32)> {
    let (w, h) = text
        .split_once(['x', 'X'])
        .with_context(|| format!("size `{text}` is not WIDTHxHEIGHT (for example 512x256)"))?;
    let w: u32 = w
        .trim()
        .parse()
        .with_context(|| format!("width `{w}` in size `{text}` is not a whole number"))?;
    let h: u32 = h
        .trim()
        .parse()
        .with_context(|| format!("height `{h}` in size `{text}` is not a whole number"))?;
    if w == 0 || h == 0 {
        bail!("size `{text}` is empty: width and height must be at least 1 cell");
    }
    Ok((w, h))
}

/// Parses `X,Y` into a finite point.
pub fn point(text: &str) -> anyhow::Result<[f32; 2]> {
    let (x, y) = text
        .split_once(',')
        .with_context(|| format!("point `{text}` is not X,Y (for example 120.5,64)"))?;
    let x: f32 = x
        .trim()
        .parse()
        .with_context(|| format!("x `{x}` in point `{text}` is not a number"))?;
    let y: f32 = y
        .trim()
        .parse()
        .with_context(|| format!("y `{y}` in point `{text}` is not a number"))?;
    if !(x.is_finite() && y.is_finite()) {
        bail!("point `{text}` is not finite");
    }
    Ok([x, y])
}

/// Parses `X,Y,Z` into a finite point.
pub fn point3(text: &str) -> anyhow::Result<[f32; 3]> {
    let parts: Vec<&str> = text.split(',').collect();
    if parts.len() != 3 {
        bail!("point `{text}` is not X,Y,Z (for example 10,-4.5,32)");
    }
    let mut p = [0.0f32; 3];
    for (v, part) in p.iter_mut().zip(&parts) {
        *v = part
            .trim()
            .parse()
            .with_context(|| format!("`{part}` in point `{text}` is not a number"))?;
    }
    if !p.iter().all(|v| v.is_finite()) {
        bail!("point `{text}` is not finite");
    }
    Ok(p)
}

/// Parses `A,B` where both are finite and `A < B` (a height range).
pub fn range(text: &str) -> anyhow::Result<[f32; 2]> {
    let [a, b] = point(text).with_context(|| format!("range `{text}` is not MIN,MAX"))?;
    if a >= b {
        bail!("range `{text}` is empty or inverted: MIN must be below MAX");
    }
    Ok([a, b])
}

/// Parses `X0,Z0,X1,Z1` into a finite rectangle with `lo <= hi`.
pub fn region2(text: &str) -> anyhow::Result<([f32; 2], [f32; 2])> {
    let parts: Vec<&str> = text.split(',').collect();
    if parts.len() != 4 {
        bail!("region `{text}` is not X0,Z0,X1,Z1");
    }
    let lo = point(&parts[..2].join(","))?;
    let hi = point(&parts[2..].join(","))?;
    if lo[0] > hi[0] || lo[1] > hi[1] {
        bail!("region `{text}` is inverted: X0,Z0 must be <= X1,Z1");
    }
    Ok((lo, hi))
}

/// Parses `X0,Y0,Z0,X1,Y1,Z1` into a finite box with `lo <= hi`.
pub fn region3(text: &str) -> anyhow::Result<([f32; 3], [f32; 3])> {
    let parts: Vec<&str> = text.split(',').collect();
    if parts.len() != 6 {
        bail!("region `{text}` is not X0,Y0,Z0,X1,Y1,Z1");
    }
    let lo = point3(&parts[..3].join(","))?;
    let hi = point3(&parts[3..].join(","))?;
    if (0..3).any(|a| lo[a] > hi[a]) {
        bail!("region `{text}` is inverted: each of X0,Y0,Z0 must be <= X1,Y1,Z1");
    }
    Ok((lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(size("512x256").unwrap(), (512, 256));
        assert_eq!(size("3X4").unwrap(), (3, 4));
        assert!(size("0x0").is_err());
        assert!(size("12").is_err());
        assert!(size("-1x3").is_err());
        assert!(size("99999999999x3").is_err());
    }

    #[test]
    fn points3_and_regions() {
        assert_eq!(point3("1,-2,3.5").unwrap(), [1.0, -2.0, 3.5]);
        assert!(point3("1,2").is_err());
        assert!(point3("1,2,nan").is_err());
        assert_eq!(
            region3("0,0,0,4,5,6").unwrap(),
            ([0.0, 0.0, 0.0], [4.0, 5.0, 6.0])
        );
        assert!(region3("0,0,0,4,5").is_err());
        assert!(region3("5,0,0,4,5,6").is_err());
    }

    #[test]
    fn points() {
        assert_eq!(point("1.5,-2").unwrap(), [1.5, -2.0]);
        assert!(point("nan,1").is_err());
        assert!(point("1;2").is_err());
        assert!(point("inf,2").is_err());
    }
}
