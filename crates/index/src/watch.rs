//! The file watcher: `notify` events, debounced, mapped to the skill folders they touch,
//! then applied by the writer. Runs on its own thread, stopped when the index drops.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use notify::event::{AccessKind, AccessMode};
use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};

use crate::config::Config;
use crate::IndexError;

/// What the watcher asks of the index it watches for: its settings, the folders to follow,
/// and the writer's work for a batch. The index's shared state implements it, so the
/// watcher needs nothing else of the index.
pub(crate) trait Rebuild: Send + Sync + 'static {
    /// The index's settings (the watcher reads the depth and the debounce).
    fn config(&self) -> &Config;
    /// The roots the watcher follows (folders only), as the writer has them now.
    fn watched_roots(&self) -> Vec<PathBuf>;
    /// Does a plan's work under the writer lock and publishes the result.
    fn rebuild(&self, plan: Plan);
}

/// Longest a burst of events may delay a reload.
const MAX_BATCH: Duration = Duration::from_millis(500);

enum Msg {
    Fs(notify::Result<notify::Event>),
    RootsChanged,
    Stop,
}

/// Owns the watcher thread.
#[derive(Debug)]
pub(crate) struct WatchHandle {
    tx: Sender<Msg>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Msg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Msg")
    }
}

impl WatchHandle {
    pub(crate) fn roots_changed(&self) {
        let _ = self.tx.send(Msg::RootsChanged);
    }

    pub(crate) fn inject(&self, event: notify::Event) {
        let _ = self.tx.send(Msg::Fs(Ok(event)));
    }

    pub(crate) fn stop(mut self) {
        let _ = self.tx.send(Msg::Stop);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Starts watching `roots` (before this returns, so a scan made after it misses nothing)
/// and the thread that applies what the watches report.
pub(crate) fn start<S: Rebuild>(
    shared: Arc<S>,
    roots: &[PathBuf],
) -> Result<WatchHandle, IndexError> {
    let (tx, rx) = crossbeam_channel::unbounded();
    let fs_tx = tx.clone();
    let mut watcher = notify::recommended_watcher(move |event| {
        let _ = fs_tx.send(Msg::Fs(event));
    })
    .map_err(|e| IndexError::Watch(e.to_string()))?;
    let mut watches = Watches {
        watched: BTreeMap::new(),
    };
    watches.sync(&mut watcher, roots, &BTreeSet::new());
    let thread = std::thread::Builder::new()
        .name("skills-watch".into())
        .spawn(move || run(shared.as_ref(), watcher, watches, &rx))
        .map_err(|e| IndexError::Watch(e.to_string()))?;
    Ok(WatchHandle {
        tx,
        thread: Some(thread),
    })
}

/// What each root is watched through: itself (recursively), or its nearest existing
/// ancestor (non-recursively) until it exists.
struct Watches {
    watched: BTreeMap<PathBuf, RecursiveMode>,
}

impl Watches {
    /// Brings the watches in line with the roots as they are on disk now. Returns the roots
    /// that just became watched recursively: changes made in them before the watch began were
    /// not reported, so the caller rescans them.
    ///
    /// `stale` roots (the root or an ancestor was created, deleted or renamed) are watched
    /// anew even if they seem watched: a deleted folder's watch goes with it, and a folder
    /// recreated under the same path is another folder.
    fn sync(
        &mut self,
        watcher: &mut RecommendedWatcher,
        roots: &[PathBuf],
        stale: &BTreeSet<PathBuf>,
    ) -> BTreeSet<PathBuf> {
        let old: Vec<PathBuf> = self
            .watched
            .keys()
            .filter(|w| stale.iter().any(|root| root.starts_with(w)))
            .cloned()
            .collect();
        for path in old {
            self.watched.remove(&path);
            let _ = watcher.unwatch(&path);
        }
        let mut fresh = BTreeSet::new();
        let mut wanted = wanted_watches(roots);
        // A root (or an ancestor) may appear or vanish while its watch is being set up, unseen
        // by the watch being replaced: look again until the wanted watches stop moving.
        for _ in 0..8 {
            for (path, mode) in &self.watched {
                if wanted.get(path) != Some(mode) {
                    let _ = watcher.unwatch(path);
                }
            }
            let mut now = BTreeMap::new();
            for (path, mode) in &wanted {
                let had = self.watched.get(path) == Some(mode);
                if had || watcher.watch(path, *mode).is_ok() {
                    now.insert(path.clone(), *mode);
                    if !had && *mode == RecursiveMode::Recursive {
                        fresh.insert(path.clone());
                    }
                }
            }
            self.watched = now;
            let again = wanted_watches(roots);
            if again == wanted {
                break;
            }
            wanted = again;
        }
        fresh
    }
}

/// Each root itself (recursively) if it exists, else its nearest existing ancestor
/// (non-recursively), to see it appear. A root that is a link is also watched through its
/// parent (non-recursively): a watch follows the link to the folder it names when it is
/// set, so retargeting the link (`current -> releases/v2`) is seen only there.
fn wanted_watches(roots: &[PathBuf]) -> BTreeMap<PathBuf, RecursiveMode> {
    let mut wanted: BTreeMap<PathBuf, RecursiveMode> = BTreeMap::new();
    for root in roots {
        let is_link = std::fs::symlink_metadata(root).is_ok_and(|m| m.file_type().is_symlink());
        if is_link {
            if let Some(parent) = root.parent().filter(|p| p.is_dir()) {
                wanted
                    .entry(parent.to_path_buf())
                    .or_insert(RecursiveMode::NonRecursive);
            }
        }
        if root.is_dir() {
            wanted.insert(root.clone(), RecursiveMode::Recursive);
        } else if let Some(anc) = root.ancestors().skip(1).find(|a| a.is_dir()) {
            wanted
                .entry(anc.to_path_buf())
                .or_insert(RecursiveMode::NonRecursive);
        }
    }
    wanted
}

fn run<S: Rebuild>(
    shared: &S,
    mut watcher: RecommendedWatcher,
    mut watches: Watches,
    rx: &Receiver<Msg>,
) {
    loop {
        let first = match rx.recv() {
            Ok(Msg::Stop) | Err(_) => return,
            Ok(msg) => msg,
        };
        let mut batch = vec![first];
        let started = Instant::now();
        // Debounce: wait until the burst goes quiet, or MAX_BATCH passes.
        loop {
            let wait = shared
                .config()
                .debounce
                .min(MAX_BATCH.saturating_sub(started.elapsed()));
            match rx.recv_timeout(wait) {
                Ok(Msg::Stop) | Err(RecvTimeoutError::Disconnected) => return,
                Ok(msg) => batch.push(msg),
                Err(RecvTimeoutError::Timeout) => break,
            }
            if started.elapsed() >= MAX_BATCH {
                break;
            }
        }
        let roots = shared.watched_roots();
        let mut plan = plan(&roots, shared.config().depth, &batch);
        // Watches first, then the reads: what changes in between is reported, not lost.
        let stale = if plan.full {
            roots.iter().cloned().collect()
        } else {
            plan.root_rescans.clone()
        };
        plan.newly_watched = watches.sync(&mut watcher, &roots, &stale);
        shared.rebuild(plan);
    }
}

/// What a batch of events asks the writer to do.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    /// Rescan every root (an event-queue overflow or a watch error).
    pub(crate) full: bool,
    /// Roots to rescan whole.
    pub(crate) root_rescans: BTreeSet<PathBuf>,
    /// Skill folders to re-read, by root.
    pub(crate) dirs: BTreeMap<PathBuf, BTreeSet<PathBuf>>,
    /// Roots whose watch just began: rescanned for what changed unseen before it, though no
    /// file in them is known to have changed.
    pub(crate) newly_watched: BTreeSet<PathBuf>,
}

/// Maps a batch of events to the work it needs.
fn plan(roots: &[PathBuf], depth: usize, batch: &[Msg]) -> Plan {
    let mut plan = Plan::default();
    for msg in batch {
        let event = match msg {
            Msg::Fs(Ok(event)) => event,
            Msg::Fs(Err(e)) => {
                tracing::warn!(error = %e, "watch error: rescanning");
                plan.full = true;
                continue;
            }
            Msg::RootsChanged | Msg::Stop => continue,
        };
        if event.need_rescan() {
            plan.full = true;
            continue;
        }
        // Opening or reading a file changes nothing, and the index's own reads would
        // otherwise trigger the next reload, forever.
        if matches!(event.kind, EventKind::Access(kind) if kind != AccessKind::Close(AccessMode::Write))
        {
            continue;
        }
        for path in &event.paths {
            for root in roots {
                if root.starts_with(path) || path == root {
                    // The root itself, or an ancestor, was created, deleted or renamed.
                    plan.root_rescans.insert(root.clone());
                } else if let Ok(rel) = path.strip_prefix(root) {
                    match skill_dir(root, rel, depth) {
                        Some(dir) => {
                            plan.dirs.entry(root.clone()).or_default().insert(dir);
                        }
                        None => {
                            plan.root_rescans.insert(root.clone());
                        }
                    }
                }
            }
        }
    }
    plan
}

/// Applies changes to `paths` exactly as the watcher does once a debounced batch holding
/// them arrives (benchmarks time this step alone).
pub(crate) fn apply_paths<S: Rebuild>(shared: &S, paths: &[PathBuf]) {
    let event = notify::Event {
        kind: notify::EventKind::Modify(notify::event::ModifyKind::Data(
            notify::event::DataChange::Content,
        )),
        paths: paths.to_vec(),
        attrs: notify::event::EventAttributes::new(),
    };
    let roots = shared.watched_roots();
    let plan = plan(&roots, shared.config().depth, &[Msg::Fs(Ok(event))]);
    shared.rebuild(plan);
}

/// The skill folder a changed path belongs to, or `None` when the change needs a rescan
/// of the root (nested layouts, where a folder's role is not known from its path).
fn skill_dir(root: &Path, rel: &Path, depth: usize) -> Option<PathBuf> {
    let mut comps = rel.components();
    let Some(Component::Normal(first)) = comps.next() else {
        return None;
    };
    if skills_storage::skipped_folder(first) {
        return Some(root.join(first)); // a skipped folder: refreshing it finds nothing
    }
    if depth == 1 {
        return Some(root.join(first));
    }
    // Nested layouts: a SKILL.md that comes or goes changes which folders are skills (a
    // skill above another hides it from discovery), so the root is rescanned.
    if rel
        .file_name()
        .is_some_and(|n| n.eq_ignore_ascii_case(skills_storage::SKILL_FILE))
    {
        return None;
    }
    // Otherwise the shallowest ancestor (within depth) that holds SKILL.md now.
    let mut dir = root.to_path_buf();
    for (i, comp) in rel.components().enumerate() {
        if i >= depth {
            break;
        }
        dir.push(comp);
        if dir.join(skills_storage::SKILL_FILE).exists() {
            return Some(dir);
        }
    }
    None
}
