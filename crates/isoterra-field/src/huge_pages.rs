//! Room for large new buffers (a one-shot mesher's output, a field read
//! from a file), backed by huge pages where the system allows.
//!
//! A buffer the process has never touched takes a page fault at the first
//! write to each 4 KiB page: 59,381 of them for the 243 MB a dense 256³
//! gyroid's mesh makes, about half of a one-shot call's time on the
//! machines measured (BENCHMARKS.md in the repository). Linux backs memory with 2 MiB
//! pages where a program asks for it (`madvise(MADV_HUGEPAGE)`, which the
//! transparent-huge-page setting `madvise` — the default of most
//! distributions — waits for): one fault then maps 512 pages. Only large,
//! new buffers are offered; the advice changes no byte and may be ignored.

/// Buffers below this many bytes are left alone: a huge page would be
/// mostly empty, and small buffers are usually reused memory anyway.
pub const MIN_BYTES: usize = 4 << 20;

/// The huge page size on x86-64 and most 64-bit Arm kernels.
const HUGE_PAGE: usize = 2 << 20;

/// `v.reserve_exact(additional)`, then, when that made new room of at least
/// [`MIN_BYTES`], the advice to back the room with huge pages.
pub fn reserve_exact<T>(v: &mut Vec<T>, additional: usize) {
    let before = v.capacity();
    v.reserve_exact(additional);
    advise_new_room(v, before);
}

/// An empty vector with room for exactly `n` items, advised as
/// [`reserve_exact`] advises: for a buffer about to be filled in full.
pub fn with_capacity<T>(n: usize) -> Vec<T> {
    let mut v = Vec::new();
    reserve_exact(&mut v, n);
    v
}

/// Like [`reserve_exact`], but returns `false` instead of aborting when the
/// memory cannot be had (the vector is then unchanged).
pub fn try_reserve_exact<T>(v: &mut Vec<T>, additional: usize) -> bool {
    let before = v.capacity();
    if v.try_reserve_exact(additional).is_err() {
        return false;
    }
    advise_new_room(v, before);
    true
}

/// Advises huge pages for `v`'s spare room when its capacity is no longer
/// `before` (the room is new).
fn advise_new_room<T>(v: &mut Vec<T>, before: usize) {
    if v.capacity() != before {
        let spare = v.spare_capacity_mut();
        advise_huge(spare.as_ptr().cast(), std::mem::size_of_val(spare));
    }
}

#[cfg(target_os = "linux")]
fn advise_huge(ptr: *const u8, len: usize) {
    if len < MIN_BYTES {
        return;
    }
    let start = (ptr as usize).next_multiple_of(HUGE_PAGE);
    let end = (ptr as usize).saturating_add(len) / HUGE_PAGE * HUGE_PAGE;
    if end > start {
        // SAFETY: `[start, end)` lies inside the allocation `ptr..ptr+len`
        // that the caller's vector owns, and is page aligned. MADV_HUGEPAGE
        // is advice about how to back the range: it neither reads nor
        // changes its contents, and a kernel that refuses it (an error
        // return, ignored) leaves the memory as it was.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge(_ptr: *const u8, _len: usize) {}

#[cfg(test)]
mod tests {
    #[test]
    fn reserving_keeps_the_contents_and_makes_the_room() {
        let mut small: Vec<u32> = vec![1, 2, 3];
        super::reserve_exact(&mut small, 10);
        assert_eq!(small, [1, 2, 3]);
        assert!(small.capacity() >= 13);
        // Large enough to be advised; filled and read back.
        let mut big: Vec<u64> = Vec::new();
        super::reserve_exact(&mut big, 3 << 20);
        assert!(big.capacity() >= 3 << 20);
        big.extend((0..3u64 << 20).map(|i| i * 7));
        assert!(big.iter().enumerate().all(|(i, &v)| v == i as u64 * 7));
        // Room already there: nothing to do, nothing changed.
        let cap = big.capacity();
        big.truncate(10);
        super::reserve_exact(&mut big, 100);
        assert_eq!(big.capacity(), cap);
        // Fallible: a request no machine can meet is refused, nothing changes.
        assert!(!super::try_reserve_exact(&mut big, usize::MAX / 16));
        assert_eq!((big.len(), big.capacity()), (10, cap));
        let mut v: Vec<[f32; 3]> = Vec::new();
        assert!(super::try_reserve_exact(&mut v, 2 << 20));
        assert!(v.capacity() >= 2 << 20);
        let fresh: Vec<f32> = super::with_capacity(5 << 20);
        assert!(fresh.is_empty() && fresh.capacity() >= 5 << 20);
    }
}
