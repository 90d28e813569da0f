//! A stroke record is trusted only as far as its world allows: a small
//! record that claims (and would honestly decompress to) hundreds of
//! megabytes is refused before anything is decoded.
//!
//! Alone in its test binary because it measures the heap with its own
//! allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use isoterra_field::{Side2dGen, Side2dPreset};
use isoterra_store::{Side2dDocument, StoreError};
use isoterra_world::{Side2dBrush, Side2dParams, Side2dTool};

struct Peak;

static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator, only counting bytes.
unsafe impl GlobalAlloc for Peak {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's layout is passed on unchanged.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = NOW.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) };
        NOW.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOC: Peak = Peak;

const MB: usize = 1 << 20;

#[test]
fn undo_of_a_record_claiming_far_more_than_the_world_holds_allocates_nothing_for_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.isoterra");
    let params = Side2dParams::DEFAULT.with_chunk_cells(16).with_generator(
        Side2dGen::DEFAULT
            .with_preset(Side2dPreset::Hills)
            .with_seed(7)
            .with_size(64, 32),
    );
    let mut doc = Side2dDocument::create(&path, &params).unwrap();
    let brush = Side2dBrush::new(Side2dTool::Dig, [32.0, 16.0], 6.0);
    let id = doc.stroke(&brush).unwrap().id.unwrap();
    drop(doc);
    // The record's body becomes 200 MB of zeros, which zstd packs into a
    // few kilobytes; the header declares exactly that length.
    let raw_len: usize = 200 * MB;
    let packed = zstd::bulk::compress(&vec![0u8; raw_len], 19).unwrap();
    assert!(packed.len() < 64 * 1024);
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        let mut delta: Vec<u8> = conn
            .query_row("SELECT delta FROM strokes WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .unwrap();
        delta.truncate(12);
        delta[5] |= 2; // zstd-compressed body
        delta[8..12].copy_from_slice(&(raw_len as u32).to_le_bytes());
        delta.extend_from_slice(&packed);
        conn.execute("UPDATE strokes SET delta = ?1 WHERE id = ?2", (delta, id))
            .unwrap();
    }
    let mut doc = Side2dDocument::open(&path).unwrap();
    let base = NOW.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let err = doc.undo().unwrap_err();
    let peak = PEAK.load(Ordering::Relaxed) - base;
    assert!(
        matches!(
            err,
            StoreError::CorruptData { .. } | StoreError::Corrupt { .. }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("declares"), "{err}");
    assert!(peak < 16 * MB, "undo allocated {} MB", peak / MB);
    // Nothing changed: the stroke is still done.
    assert_eq!(doc.file().stroke_counts().unwrap().done, 1);
}
