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

/// A list of Tiled gids: `3,7,10-12` (ranges inclusive).
pub fn gid_list(text: &str) -> anyhow::Result<Vec<u32>> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let gid = |t: &str| -> anyhow::Result<u32> {
            t.trim()
                .parse()
                .map_err(|_| anyhow::anyhow!("`{t}` is not a tile gid (a whole number)"))
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (gid(a)?, gid(b)?);
                if a > b || b - a >= 1 << 20 {
                    anyhow::bail!("`{part}` is not a range of at most 2^20 gids, low-high");
                }
                out.extend(a..=b);
            }
            None => out.push(gid(part)?),
        }
    }
    if out.is_empty() {
        anyhow::bail!("give at least one gid: `3,7,10-12`");
    }
    Ok(out)
}

/// Tiled gids with a cliff level: `3:1,4:2` (gid:level, level 0..=15).
pub fn gid_levels(text: &str) -> anyhow::Result<Vec<(u32, u8)>> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((g, l)) = part.split_once(':') else {
            anyhow::bail!("`{part}` is not GID:LEVEL");
        };
        let g: u32 = g
            .trim()
            .parse()
            .map_err(|_| anyhow::anyhow!("`{g}` is not a tile gid"))?;
        let l: u8 = l
            .trim()
            .parse()
            .ok()
            .filter(|l| *l <= 15)
            .ok_or_else(|| anyhow::anyhow!("`{l}` is not a cliff level 0..=15"))?;
        out.push((g, l));
    }
    if out.is_empty() {
        anyhow::bail!("give at least one GID:LEVEL: `3:1,4:2`");
    }
    Ok(out)
}

/// Comma-separated finite numbers, any count, for flag `--name`.
pub fn numbers(name: &str, text: &str) -> anyhow::Result<Vec<f32>> {
    let v = text
        .split(',')
        .map(|p| {
            p.trim()
                .parse::<f32>()
                .with_context(|| format!("--{name} `{text}`: `{p}` is not a number"))
        })
        .collect::<anyhow::Result<Vec<f32>>>()?;
    if v.iter().any(|x| !x.is_finite()) {
        anyhow::bail!("--{name} `{text}` is not finite");
    }
    Ok(v)
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
    fn points3() {
        assert_eq!(point3("1,-2,3.5").unwrap(), [1.0, -2.0, 3.5]);
        assert!(point3("1,2").is_err());
        assert!(point3("1,2,nan").is_err());
    }

    #[test]
    fn gid_lists() {
        assert_eq!(gid_list("3, 7,10-12").unwrap(), vec![3, 7, 10, 11, 12]);
        for bad in ["", "x", "5-2", "1-99999999", "-3", "4294967296"] {
            assert!(gid_list(bad).is_err(), "{bad}");
        }
        assert_eq!(gid_levels("3:1, 4:15").unwrap(), vec![(3, 1), (4, 15)]);
        for bad in ["", "3", "3:16", "x:1", "3:-1"] {
            assert!(gid_levels(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn points() {
        assert_eq!(point("1.5,-2").unwrap(), [1.5, -2.0]);
        assert!(point("nan,1").is_err());
        assert!(point("1;2").is_err());
        assert!(point("inf,2").is_err());
    }
}
