//! The index's reading threads, and the one way work is sent to them ([`run`]).
//!
//! Reads, scans, snapshot builds and search index builds run on the index's own rayon
//! pool, never on a host's: a host calling from a worker of its own pool must not have
//! that worker wait in a way that runs the host's other queued jobs while the index holds
//! a lock (the writer's; a snapshot's search index being built), since one of those jobs
//! may take the same lock again (`a_host_calling_from_its_rayon_pool_never_deadlocks`).

/// The index's reading threads (`None` when they could not be started); its snapshots hold
/// them weakly, to build their search indexes there while the index lives.
pub(crate) type Readers = Option<std::sync::Arc<rayon::ThreadPool>>;

/// This machine's cores, asked once (the answer reads cgroup files on Linux).
pub(crate) fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get))
}

/// How many reading threads [`start`] starts: twice the cores, at least 4 and at most 16.
/// Reads wait on the disk when the page cache is cold, and more threads keep it busy.
/// Measured on 2 cores (`skillctl list`, medians, `cargo xtask bench` cold rows): cold
/// 1,000 skills 65 ms with 2 threads, 46 ms with 4, 41 ms with 8; warm 12.7, 12.8 and
/// 18.5 ms. Four is as fast as two when warm and a third faster when cold; eight slows the
/// warm case. Where the process may run on two processors at most (its affinity), that is 4
/// whatever its cgroup allows, and the cgroup files [`cores`] reads are not read: they were
/// about 80 us of a `skillctl` process's start, before any skill was read.
fn reading_threads() -> usize {
    #[cfg(target_os = "linux")]
    if rustix::thread::sched_getaffinity(None).is_ok_and(|cpus| cpus.count() <= 2) {
        return 4;
    }
    cores().saturating_mul(2).clamp(4, 16)
}

/// The index's own reading threads ([`reading_threads`] of them). `None` when they cannot
/// be started (work then runs where it is asked for).
pub(crate) fn start() -> Readers {
    rayon::ThreadPoolBuilder::new()
        .num_threads(reading_threads())
        .thread_name(|i| format!("skills-read-{i}"))
        .build()
        .map(std::sync::Arc::new)
        .map_err(
            |e| tracing::warn!(error = %e, "cannot start the reading threads; working where asked"),
        )
        .ok()
}

/// Runs `f` (which works in parallel) on the reading threads and waits for it.
///
/// From a thread of no pool, or one of the reading threads, that is `install`. From a
/// worker of another pool (a host's), `install` would have the worker run its own pool's
/// queued jobs while it waits; so a plain thread is started to wait instead, and the
/// host's worker waits on that thread alone.
pub(crate) fn run<R: Send>(readers: Option<&rayon::ThreadPool>, f: impl FnOnce() -> R + Send) -> R {
    let Some(pool) = readers else {
        return f();
    };
    if rayon::current_thread_index().is_none() || pool.current_thread_index().is_some() {
        return pool.install(f);
    }
    let mut f = Some(f);
    let handed = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("skills-wait".into())
            .spawn_scoped(scope, || f.take().map(|f| pool.install(f)))
            .map(|thread| {
                thread
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
    });
    match (handed, f) {
        (Ok(Some(done)), _) => done,
        (Err(e), Some(f)) => {
            // No thread to wait on: here, as before the reading threads existed.
            tracing::warn!(error = %e, "cannot start a thread to wait on; working here");
            f()
        }
        // The thread took `f` and ran it, or never started and left it.
        (Ok(None), _) | (Err(_), None) => unreachable!("f ran or stayed"),
    }
}
