//! The contour-only fast path: scan and join in one go.

use isoterra_field::Field2;
use isoterra_field::huge_pages::Room;

use crate::MeshError;
use crate::cells::CellRect;
use crate::contour::{LaneScratch, PolyWriter, Polyline, walk_chains};
use crate::key::EdgeKey;
use crate::scan::{NONE, NoTris, RowScratch, ScanInput, SegSink};
use crate::squares::{check_cells, check_iso};

/// Extracts joined contour polylines from a field, as fast as possible.
///
/// It runs the same scan as [`MarchingSquares`](crate::MarchingSquares) (same
/// points, same saddle decisions, solid on the left) but skips the fill mesh and
/// links each segment to the next one while scanning, so joining is a single walk
/// over the links. The result equals meshing the same cells with
/// `SquaresOptions::DEFAULT.with_fill(false)` and passing the segments to
/// [`ContourJoiner::join`](crate::ContourJoiner::join): the same polylines in the
/// same order.
///
/// ```
/// use isoterra_field::Field2;
/// use isoterra_mesh::{ContourTracer, signed_area};
///
/// // A disc of radius 5 in a 21x21 field.
/// let field = Field2::from_fn(21, 21, |x, y| {
///     let (dx, dy) = (x as f32 - 10.0, y as f32 - 10.0);
///     5.0 - (dx * dx + dy * dy).sqrt()
/// })
/// .unwrap();
/// let mut tracer = ContourTracer::new();
/// let mut lines = Vec::new();
/// tracer.contour_lines(&field, 0.0, &mut lines).unwrap();
/// assert_eq!(lines.len(), 1);
/// assert!(lines[0].closed);
/// let area = signed_area(&lines[0].points);
/// assert!((area - std::f64::consts::PI * 25.0).abs() < 1.0); // counter-clockwise
/// ```
#[derive(Debug, Default, Clone)]
pub struct ContourTracer {
    rows: RowScratch,
    points: Room<[f32; 2]>,
    next: Room<u32>,
    has_prev: Room<bool>,
    no_positions: Vec<[f32; 3]>,
    lanes: LaneScratch,
    /// Point buffers of polylines dropped from a caller's output.
    spare_lines: Vec<Vec<[f32; 2]>>,
    #[cfg(feature = "parallel")]
    parallel: bool,
    #[cfg(feature = "parallel")]
    bands: Vec<crate::tracer_bands::Band>,
}

/// Row bands per worker thread of a parallel call.
#[cfg(feature = "parallel")]
const BANDS_PER_THREAD: usize = 4;

/// The edges of `cells`: room for a crossing on each is room for every
/// point a scan of them can make.
pub(crate) fn edge_count(cells: CellRect) -> usize {
    let (w, h) = (cells.width() as usize, cells.height() as usize);
    w.saturating_mul(h + 1)
        .saturating_add((w + 1).saturating_mul(h))
}

/// Stores points and links each segment's start to its end.
struct Linker<'a> {
    points: &'a mut Room<[f32; 2]>,
    next: &'a mut Room<u32>,
    has_prev: &'a mut Room<bool>,
}

impl SegSink for Linker<'_> {
    const ACTIVE: bool = true;
    #[inline(always)]
    fn point(&mut self, p: [f32; 2], _key: EdgeKey) -> u32 {
        let id = self.points.len() as u32;
        self.points.push(p);
        self.next.push(NONE);
        self.has_prev.push(false);
        id
    }
    #[inline(always)]
    fn segment(&mut self, from: u32, to: u32) {
        self.next[from as usize] = to;
        self.has_prev[to as usize] = true;
    }
}

impl ContourTracer {
    /// A tracer with empty scratch buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// With `true`, each call cuts the cells into bands of rows and scans them
    /// on the current rayon thread pool (run it inside `ThreadPool::install` to
    /// choose the threads), then joins the bands; on a large field the open
    /// chains are followed on the pool's threads too. The polylines are the same,
    /// point for point and in the same order, as a single-thread call's at any
    /// number of threads. A pool of one thread scans on the calling thread.
    /// Default: `false`.
    #[cfg(feature = "parallel")]
    pub fn with_parallel(mut self, parallel: bool) -> Self {
        self.parallel = parallel;
        self
    }

    /// The iso line `value == iso` of the whole field as joined polylines, written
    /// into `out` (its polylines' buffers are reused). Open chains (the contour
    /// leaves the field) come first, then closed loops; see
    /// [`ContourJoiner`](crate::ContourJoiner) for the exact rules.
    ///
    /// # Errors
    ///
    /// [`MeshError::InvalidParameter`] when `iso` is not finite (`out` is untouched).
    pub fn contour_lines(
        &mut self,
        field: &Field2,
        iso: f32,
        out: &mut Vec<Polyline>,
    ) -> Result<(), MeshError> {
        self.contour_lines_in(field, CellRect::whole(field), iso, out)
    }

    /// Like [`contour_lines`](Self::contour_lines), over the cells of `cells` only.
    ///
    /// # Errors
    ///
    /// [`MeshError::InvalidParameter`] when `iso` is not finite,
    /// [`MeshError::RegionOutOfBounds`] when `cells` does not fit the field.
    pub fn contour_lines_in(
        &mut self,
        field: &Field2,
        cells: CellRect,
        iso: f32,
        out: &mut Vec<Polyline>,
    ) -> Result<(), MeshError> {
        check_iso(iso)?;
        check_cells(field, cells)?;
        self.points.clear();
        self.next.clear();
        self.has_prev.clear();
        let origin = field.origin();
        let input = ScanInput {
            values: field.values(),
            width: field.width() as usize,
            iso,
            origin: [origin[0] as f64, origin[1] as f64],
            cell_size: field.cell_size() as f64,
            cells,
            key_offset: [0, 0],
            materials: None,
        };
        // A fresh tracer (what a one-shot call makes) gets room for a point
        // on every edge of the cells before the scan, so that its lists do
        // not grow, copy and fault their way up: room never written is never
        // touched, and on Linux each list is a mapping of its own that starts
        // on a huge-page boundary (`Room`), so that it is written in 2 MiB
        // pages from its first point: a dense 2048^2 field's lists took
        // 600-900 small-page faults a call in `Vec`s, 4 now. What is left is
        // handed back after the walk. Where the address space is refused,
        // they grow.
        let fresh = self.points.capacity() == 0;
        if fresh {
            let edges = edge_count(cells);
            let _ = self.points.try_reserve_exact(edges)
                && self.next.try_reserve_exact(edges)
                && self.has_prev.try_reserve_exact(edges);
        }
        self.link(&input);
        #[cfg(feature = "parallel")]
        let parallel = self.parallel;
        #[cfg(not(feature = "parallel"))]
        let parallel = false;
        let mut w = PolyWriter::with_spare(out, &mut self.spare_lines);
        // Marching squares links each crossing to at most one successor and
        // from at most one predecessor.
        walk_chains(
            &self.points,
            &mut self.next,
            &self.has_prev,
            Some(&mut self.lanes),
            parallel,
            &mut w,
        );
        w.finish();
        if fresh {
            self.points.shrink_to_fit();
            self.next.shrink_to_fit();
            self.has_prev.shrink_to_fit();
        }
        Ok(())
    }

    /// Scans `input` into the points and links.
    fn link(&mut self, input: &ScanInput<'_>) {
        #[cfg(feature = "parallel")]
        if self.parallel {
            let threads = rayon::current_num_threads();
            if threads > 1 && crate::tracer_bands::fits(input.cells) {
                crate::tracer_bands::trace(
                    input,
                    BANDS_PER_THREAD * threads,
                    &mut self.bands,
                    &mut self.points,
                    &mut self.next,
                    &mut self.has_prev,
                );
                return;
            }
        }
        let mut linker = Linker {
            points: &mut self.points,
            next: &mut self.next,
            has_prev: &mut self.has_prev,
        };
        self.rows
            .scan::<false, _, _>(input, &mut self.no_positions, &mut linker, &mut NoTris);
    }
}
