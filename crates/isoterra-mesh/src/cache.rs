//! Cache hints: asking for memory ahead of its use.

/// Asks for the cache line holding `r` ahead of its use.
#[inline(always)]
pub(crate) fn prefetch<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch only hints the cache; `r` is a valid reference.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            (r as *const T).cast::<i8>(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}

/// Asks for every cache line of `s` ahead of its use.
#[inline]
pub(crate) fn prefetch_slice<T>(s: &[T]) {
    let per_line = (64 / std::mem::size_of::<T>().max(1)).max(1);
    for r in s.iter().step_by(per_line) {
        prefetch(r);
    }
    // The last line when `s` does not start on a line boundary.
    if let Some(r) = s.last() {
        prefetch(r);
    }
}
