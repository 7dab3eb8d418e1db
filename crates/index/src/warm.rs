//! Prefetch hints: the one place the index asks the processor to start loading memory it
//! is about to walk (the search build's and the requirement check's passes over records).

/// Starts loading the cache line `value` begins in (x86-64; elsewhere, nothing).
pub(crate) fn warm<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    safe_arch::prefetch_t0(value);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
