//! Polylines as an SVG drawing.

use std::fmt::Write;

use isoterra_mesh::Polyline;

use crate::text::Numbers;

/// Options of [`export_polylines_svg`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct SvgOptions {
    /// Width of the drawing in pixels; the height follows the view's aspect
    /// ratio. Default value: `1024.0`.
    pub width_px: f32,
    /// Line width in pixels of the drawing (converted to world units, so it
    /// does not depend on the view). Default value: `1.5`.
    pub stroke_width_px: f32,
    /// Line colour, RGBA. Default value: `[40, 30, 25, 255]`.
    pub stroke: [u8; 4],
    /// Fill colour of the area inside closed loops, RGBA; alpha 0 draws no
    /// fill. Default value: `[150, 110, 75, 255]`.
    pub fill: [u8; 4],
    /// Fill with the `evenodd` rule (holes are holes whatever their winding)
    /// instead of `nonzero` (which relies on holes winding clockwise).
    /// Default value: `true`.
    pub evenodd: bool,
    /// Background colour, RGBA; alpha 0 leaves it transparent.
    /// Default value: `[0, 0, 0, 0]`.
    pub background: [u8; 4],
}

impl SvgOptions {
    /// The defaults.
    pub const DEFAULT: Self = SvgOptions {
        width_px: 1024.0,
        stroke_width_px: 1.5,
        stroke: [40, 30, 25, 255],
        fill: [150, 110, 75, 255],
        evenodd: true,
        background: [0, 0, 0, 0],
    };

    /// Sets [`width_px`](Self::width_px).
    pub const fn with_width_px(mut self, width_px: f32) -> Self {
        self.width_px = width_px;
        self
    }

    /// Sets [`stroke_width_px`](Self::stroke_width_px).
    pub const fn with_stroke_width_px(mut self, stroke_width_px: f32) -> Self {
        self.stroke_width_px = stroke_width_px;
        self
    }

    /// Sets [`stroke`](Self::stroke).
    pub const fn with_stroke(mut self, stroke: [u8; 4]) -> Self {
        self.stroke = stroke;
        self
    }

    /// Sets [`fill`](Self::fill).
    pub const fn with_fill(mut self, fill: [u8; 4]) -> Self {
        self.fill = fill;
        self
    }

    /// Sets [`evenodd`](Self::evenodd).
    pub const fn with_evenodd(mut self, evenodd: bool) -> Self {
        self.evenodd = evenodd;
        self
    }

    /// Sets [`background`](Self::background).
    pub const fn with_background(mut self, background: [u8; 4]) -> Self {
        self.background = background;
        self
    }
}

impl Default for SvgOptions {
    fn default() -> Self {
        Self::DEFAULT
    }
}

fn color(c: [u8; 4]) -> String {
    format!("#{:02x}{:02x}{:02x}", c[0], c[1], c[2])
}

fn opacity(c: [u8; 4]) -> String {
    let a = c[3] as f32 / 255.0;
    format!("{a:.3}")
}

/// The bounding box `[min_x, min_y, w, h]` of all finite points, or
/// `[0, 0, 1, 1]` when there is none.
fn bounds(polylines: &[Polyline]) -> [f32; 4] {
    let mut lo = [f32::INFINITY; 2];
    let mut hi = [f32::NEG_INFINITY; 2];
    for p in polylines.iter().flat_map(|l| &l.points) {
        if p[0].is_finite() && p[1].is_finite() {
            for a in 0..2 {
                lo[a] = lo[a].min(p[a]);
                hi[a] = hi[a].max(p[a]);
            }
        }
    }
    if lo[0] > hi[0] {
        return [0.0, 0.0, 1.0, 1.0];
    }
    [
        lo[0],
        lo[1],
        (hi[0] - lo[0]).max(1e-6),
        (hi[1] - lo[1]).max(1e-6),
    ]
}

/// Draws polylines as an SVG document.
///
/// `view` is the world rectangle `[min_x, min_y, width, height]` to show.
/// World y points up and SVG y points down, so the drawing is flipped: world
/// `(x, y)` lands at SVG `(x - min_x, min_y + height - y)` in a
/// `viewBox="0 0 width height"`. All closed loops form one `<path>` whose
/// sub-paths end in `Z`, filled with [`SvgOptions::fill`] using the
/// `evenodd` or `nonzero` rule; open polylines form a second, unfilled path.
///
/// A `view` that is not finite or has a width or height `<= 0` is replaced by
/// the bounding box of the points; bad option values fall back to the
/// defaults. Points that are not finite are skipped.
pub fn export_polylines_svg(
    polylines: &[Polyline],
    view: [f32; 4],
    options: &SvgOptions,
) -> String {
    let view = if view.iter().all(|v| v.is_finite()) && view[2] > 0.0 && view[3] > 0.0 {
        view
    } else {
        bounds(polylines)
    };
    let [min_x, min_y, vw, vh] = view;
    let width_px = if options.width_px.is_finite() && options.width_px > 0.0 {
        options.width_px
    } else {
        SvgOptions::DEFAULT.width_px
    };
    let height_px = (width_px * vh / vw).max(1.0);
    let stroke_px = if options.stroke_width_px.is_finite() && options.stroke_width_px >= 0.0 {
        options.stroke_width_px
    } else {
        SvgOptions::DEFAULT.stroke_width_px
    };
    let stroke_world = stroke_px * vw / width_px;
    let top = min_y + vh;

    let mut closed = String::new();
    let mut open = String::new();
    let mut num = Numbers::default();
    for line in polylines {
        let target = if line.closed { &mut closed } else { &mut open };
        let mut first = true;
        for p in &line.points {
            if !(p[0].is_finite() && p[1].is_finite()) {
                continue;
            }
            target.push(if first { 'M' } else { 'L' });
            first = false;
            num.push_f32(target, p[0] - min_x);
            target.push(' ');
            num.push_f32(target, top - p[1]);
            target.push(' ');
        }
        if line.closed && !first {
            target.push_str("Z ");
        }
    }

    let mut svg = String::new();
    let _ = writeln!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width_px}\" height=\"{height_px}\" viewBox=\"0 0 {vw} {vh}\">"
    );
    if options.background[3] > 0 {
        let _ = writeln!(
            svg,
            "  <rect x=\"0\" y=\"0\" width=\"{vw}\" height=\"{vh}\" fill=\"{}\" fill-opacity=\"{}\"/>",
            color(options.background),
            opacity(options.background)
        );
    }
    let stroke_attrs = format!(
        "stroke=\"{}\" stroke-opacity=\"{}\" stroke-width=\"{stroke_world}\" stroke-linejoin=\"round\" stroke-linecap=\"round\"",
        color(options.stroke),
        opacity(options.stroke)
    );
    if !closed.is_empty() {
        let fill = if options.fill[3] > 0 {
            format!(
                "fill=\"{}\" fill-opacity=\"{}\" fill-rule=\"{}\"",
                color(options.fill),
                opacity(options.fill),
                if options.evenodd {
                    "evenodd"
                } else {
                    "nonzero"
                }
            )
        } else {
            "fill=\"none\"".to_owned()
        };
        let _ = writeln!(
            svg,
            "  <path d=\"{}\" {fill} {stroke_attrs}/>",
            closed.trim_end()
        );
    }
    if !open.is_empty() {
        let _ = writeln!(
            svg,
            "  <path d=\"{}\" fill=\"none\" {stroke_attrs}/>",
            open.trim_end()
        );
    }
    svg.push_str("</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_ignore_non_finite_points() {
        let lines = [Polyline::new(
            vec![[1.0, 2.0], [f32::NAN, 9.0], [3.0, -1.0]],
            false,
        )];
        assert_eq!(bounds(&lines), [1.0, -1.0, 2.0, 3.0]);
        assert_eq!(bounds(&[]), [0.0, 0.0, 1.0, 1.0]);
    }

    #[test]
    fn colours_are_hex() {
        assert_eq!(color([255, 0, 16, 0]), "#ff0010");
        assert_eq!(opacity([0, 0, 0, 255]), "1.000");
    }
}
