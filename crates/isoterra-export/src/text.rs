//! Numbers written as text, fast: the text formats (OBJ, SVG, JSON)
//! write millions of them; and large files made in pieces on the worker
//! threads, written in order.

use std::fmt::Write;

use crate::ExportError;

/// Number formatting for text formats (OBJ, SVG), several times faster
/// than `write!` (a dense volume's mesh has millions of vertices).
#[derive(Default)]
pub(crate) struct Numbers {
    float: zmij::Buffer,
    /// For integers: `int.format(n)`.
    pub(crate) int: itoa::Buffer,
}

impl Numbers {
    /// Appends `v` as serde_json writes an `f32` in JSON: zmij's shortest
    /// digits in zmij's layout (`1.0`, `1e-7`), `null` when not finite.
    pub(crate) fn push_json_f32(&mut self, s: &mut String, v: f32) {
        if let Some(i) = small_integer(v) {
            // zmij writes these as the integer and `.0` (tested below).
            s.push_str(self.int.format(i));
            s.push_str(".0");
        } else if v.is_finite() {
            s.push_str(self.float.format_finite(v));
        } else {
            s.push_str("null");
        }
    }

    /// Appends `v` laid out as `{}` lays it out: the shortest digits that
    /// read back to the same `f32`, without an exponent (`1`, `0.5`, `-0`,
    /// `0.0000001`, `100000000000000000000`). The digits are zmij's, which
    /// are `{}`'s but where two shortest texts are as near (2015.65625:
    /// zmij takes the even 2015.6562, std 2015.6563); only zmij's layout
    /// (`1.0`, `1e-7`) is rewritten. NaN and infinities are written as
    /// `{}` writes them.
    pub(crate) fn push_f32(&mut self, s: &mut String, v: f32) {
        if let Some(i) = small_integer(v) {
            // What the rest writes for them, faster (tested below): mesh
            // vertices in sample units have integer coordinates on two axes.
            s.push_str(self.int.format(i));
            return;
        }
        if !v.is_finite() {
            let _ = write!(s, "{v}");
            return;
        }
        let r = self.float.format_finite(v);
        let r = match r.strip_prefix('-') {
            Some(r) => {
                s.push('-');
                r
            }
            None => r,
        };
        let Some((m, e)) = r.split_once('e') else {
            s.push_str(r.strip_suffix(".0").unwrap_or(r));
            return;
        };
        // `m` is one digit, then maybe a point and more digits; the
        // decimal point goes `e` places after the first digit.
        let e: i64 = e.parse().unwrap_or(0);
        let (int, frac) = m.split_once('.').unwrap_or((m, ""));
        let point = int.len() as i64 + e;
        let zeros = |s: &mut String, n: i64| s.extend(std::iter::repeat_n('0', n.max(0) as usize));
        if point <= 0 {
            s.push_str("0.");
            zeros(s, -point);
            s.push_str(int);
            s.push_str(frac);
        } else if point as usize >= int.len() + frac.len() {
            s.push_str(int);
            s.push_str(frac);
            zeros(s, point - (int.len() + frac.len()) as i64);
        } else {
            let (a, b) = frac.split_at(point as usize - int.len());
            s.push_str(int);
            s.push_str(a);
            s.push('.');
            s.push_str(b);
        }
    }
}

/// `v` as an integer when it is one of magnitude below 2^24 (every such
/// integer is an `f32`), other than `-0`.
#[inline(always)]
fn small_integer(v: f32) -> Option<i32> {
    let i = v as i32;
    (i as f32 == v && i.unsigned_abs() < 1 << 24 && (i != 0 || v.to_bits() == 0)).then_some(i)
}

/// Hands `sink` pieces `0..n` of a file in order, each made by
/// `piece(i, buf)`, which replaces what the buffer held (a `String` of
/// text, a `Vec<u8>` of bytes; buffers are reused from piece to piece).
/// With more than one thread in the current rayon pool, the pieces are
/// made on its threads a round at a time while the previous round is
/// handed on; the bytes are the same at any thread count.
/// A round holds two pieces per thread, sixteen at most, so what is held in
/// memory is a few pieces, never the whole file.
pub(crate) fn ordered_pieces<B: Default + Clone + Send>(
    n: usize,
    piece: &(dyn Fn(usize, &mut B) + Sync),
    sink: &mut dyn FnMut(&B) -> Result<(), ExportError>,
) -> Result<(), ExportError> {
    #[cfg(feature = "parallel")]
    {
        let threads = rayon::current_num_threads();
        if threads > 1 && n > 1 {
            return ordered_pieces_parallel(n, (2 * threads).min(16), piece, sink);
        }
    }
    let mut buf = B::default();
    for i in 0..n {
        piece(i, &mut buf);
        sink(&buf)?;
    }
    Ok(())
}

/// [`ordered_pieces`] on the pool: `round` pieces made at once, the next
/// round made while the current thread hands on this one.
#[cfg(feature = "parallel")]
fn ordered_pieces_parallel<B: Default + Clone + Send>(
    n: usize,
    round: usize,
    piece: &(dyn Fn(usize, &mut B) + Sync),
    sink: &mut dyn FnMut(&B) -> Result<(), ExportError>,
) -> Result<(), ExportError> {
    use rayon::prelude::*;
    let make = |start: usize, bufs: &mut [B]| {
        let count = n.saturating_sub(start).min(bufs.len());
        bufs[..count]
            .par_iter_mut()
            .enumerate()
            .for_each(|(k, b)| piece(start + k, b));
    };
    let make = &make;
    let mut ready = vec![B::default(); round];
    let mut next = vec![B::default(); round];
    make(0, &mut ready);
    let mut start = 0;
    while start < n {
        let following = start + round;
        let mut result = Ok(());
        rayon::in_place_scope(|scope| {
            if following < n {
                let next = &mut next;
                scope.spawn(move |_| make(following, next));
            }
            for b in &ready[..round.min(n - start)] {
                result = sink(b);
                if result.is_err() {
                    break;
                }
            }
        });
        result?;
        std::mem::swap(&mut ready, &mut next);
        start = following;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{Numbers, small_integer};
    use proptest::prelude::*;

    /// Checks what `push_f32` writes for `v` against `{}`: the same
    /// layout (no exponent, no `.0`), as few digits, and the same `f32`
    /// read back. Returns whether the text is the same byte for byte (it
    /// differs only where two shortest texts are as near, and std rounds
    /// the tie up where zmij takes the even digit).
    fn check(num: &mut Numbers, v: f32) -> bool {
        let mut s = String::new();
        num.push_f32(&mut s, v);
        let want = format!("{v}");
        assert!(!s.contains(['e', 'E']), "{s:?} for {v:e}");
        assert!(!s.ends_with(".0"), "{s:?}");
        assert_eq!(s.len(), want.len(), "{s:?} against {want:?}");
        let back: f32 = s.parse().unwrap();
        assert_eq!(
            back.to_bits(),
            v.to_bits(),
            "{s:?} does not read back to {v:e}"
        );
        s == want
    }

    #[test]
    fn floats_are_written_shortest_without_an_exponent() {
        let mut num = Numbers::default();
        let edges = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            0.1,
            1e-7,
            1.5e-7,
            1e-5,
            9.99e-6,
            1e16,
            1.2345e20,
            123456.0,
            255.0,
            0.33333334,
            f32::MAX,
            f32::MIN,
            f32::MIN_POSITIVE,
            f32::from_bits(1),
            f32::EPSILON,
        ];
        for v in edges {
            assert!(check(&mut num, v), "{v:e} is not written as {{}} writes it");
        }
        // Every exponent, and a spread of mantissas in each: nearly all the
        // same bytes as `{}`.
        let (mut same, mut all) = (0u32, 0u32);
        for bits in (0..u32::MAX).step_by(65_521) {
            let v = f32::from_bits(bits);
            if v.is_finite() {
                all += 1;
                same += u32::from(check(&mut num, v));
            }
        }
        assert!(same as f64 >= 0.99 * all as f64, "{same} of {all}");
        // A tie: 2015.65625 is as near to 2015.6562 as to 2015.6563.
        let mut s = String::new();
        num.push_f32(&mut s, f32::from_bits(0x44fb_f500));
        assert_eq!(s, "2015.6562");
        // Not finite: as `{}` writes it.
        for v in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            let mut s = String::from("x");
            num.push_f32(&mut s, v);
            assert_eq!(s, format!("x{v}"));
        }
    }

    /// The integer shortcut writes what the general path writes: every
    /// integer of magnitude below 2^17, a spread of larger ones up to 2^24,
    /// and the edges.
    #[test]
    fn small_integers_are_written_as_the_general_path_writes_them() {
        let mut num = Numbers::default();
        let mut float = zmij::Buffer::new();
        let all = -(1i32 << 17)..(1 << 17);
        let spread = (-(1i32 << 24)..=1 << 24).step_by(61);
        let edges = [
            (1 << 24) - 1,
            1 << 24,
            (1 << 24) + 2,
            -(1 << 24),
            i32::MAX,
            i32::MIN,
        ];
        for i in all.chain(spread).chain(edges) {
            let v = i as f32;
            let mut s = String::new();
            num.push_json_f32(&mut s, v);
            assert_eq!(s, float.format_finite(v), "{v:e} in JSON");
            let mut s = String::new();
            num.push_f32(&mut s, v);
            assert_eq!(s, format!("{v}"), "{v:e}");
        }
        for v in [-0.0f32, 0.5, -0.5, 1e-30, f32::NAN, f32::INFINITY] {
            assert_eq!(small_integer(v), None, "{v:e}");
        }
        assert_eq!(small_integer(0.0), Some(0));
        let mut s = String::new();
        num.push_json_f32(&mut s, -0.0);
        num.push_f32(&mut s, -0.0);
        assert_eq!(s, "-0.0-0");
    }

    proptest! {
        #[test]
        fn any_finite_float_is_written_shortest(bits in any::<u32>()) {
            let v = f32::from_bits(bits);
            prop_assume!(v.is_finite());
            check(&mut Numbers::default(), v);
        }

        #[test]
        fn mesh_like_coordinates_are_written_shortest(v in -1.0e4f32..1.0e4) {
            check(&mut Numbers::default(), v);
        }
    }
}
