//! Prefetch hints: the one place the index asks the processor to start loading memory it
//! is about to walk (passes over records: the search build's, the requirement check's, a
//! publication's gathering of them and the snapshot's).

/// Starts loading the cache line `value` begins in (x86-64; elsewhere, nothing).
pub(crate) fn warm<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    safe_arch::prefetch_t0(value);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
