//! Cancelling a run from another thread (a client's cancellation): the script and every
//! descendant are stopped, and no script starts under the cancellation after that.

/// Stops a script run from another thread (a client's cancellation). Made with
/// [`cancellation`]; dropping the [`Canceller`] unused cancels nothing.
#[derive(Debug, Clone)]
pub struct Cancellation {
    rx: crossbeam_channel::Receiver<()>,
    cancelled: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Cancellation {
    pub(crate) fn receiver(&self) -> crossbeam_channel::Receiver<()> {
        self.rx.clone()
    }

    /// Whether it was ever cancelled: no script starts under it after that.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// The side that cancels.
#[derive(Debug)]
pub struct Canceller {
    tx: crossbeam_channel::Sender<()>,
    cancelled: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Canceller {
    /// Cancels the run: the script and every descendant are stopped, and no script starts
    /// under the cancellation from then on.
    pub fn cancel(&self) {
        self.cancelled
            .store(true, std::sync::atomic::Ordering::SeqCst);
        let _ = self.tx.try_send(());
    }
}

/// A linked canceller and cancellation.
pub fn cancellation() -> (Canceller, Cancellation) {
    let (tx, rx) = crossbeam_channel::bounded(1);
    let cancelled = std::sync::Arc::default();
    (
        Canceller {
            tx,
            cancelled: std::sync::Arc::clone(&cancelled),
        },
        Cancellation { rx, cancelled },
    )
}
