//! The file watcher: `notify` events, debounced, mapped to the skill folders they touch,
//! then applied by the writer. Runs on its own thread, stopped when the index drops.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use notify::{RecommendedWatcher, RecursiveMode, Watcher};

use crate::index::Shared;
use crate::IndexError;

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

pub(crate) fn start(shared: Arc<Shared>) -> Result<WatchHandle, IndexError> {
    let (tx, rx) = crossbeam_channel::unbounded();
    let fs_tx = tx.clone();
    let watcher = notify::recommended_watcher(move |event| {
        let _ = fs_tx.send(Msg::Fs(event));
    })
    .map_err(|e| IndexError::Watch(e.to_string()))?;
    let thread = std::thread::Builder::new()
        .name("skills-watch".into())
        .spawn(move || run(&shared, watcher, &rx))
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
    fn sync(&mut self, watcher: &mut RecommendedWatcher, roots: &[PathBuf]) {
        let mut wanted: BTreeMap<PathBuf, RecursiveMode> = BTreeMap::new();
        for root in roots {
            if root.is_dir() {
                wanted.insert(root.clone(), RecursiveMode::Recursive);
            } else if let Some(anc) = root.ancestors().skip(1).find(|a| a.is_dir()) {
                wanted
                    .entry(anc.to_path_buf())
                    .or_insert(RecursiveMode::NonRecursive);
            }
        }
        for (path, mode) in &self.watched {
            if wanted.get(path) != Some(mode) {
                let _ = watcher.unwatch(path);
            }
        }
        let mut now = BTreeMap::new();
        for (path, mode) in wanted {
            if self.watched.get(&path) == Some(&mode) || watcher.watch(&path, mode).is_ok() {
                now.insert(path, mode);
            }
        }
        self.watched = now;
    }
}

fn root_paths(shared: &Shared) -> Vec<PathBuf> {
    shared
        .writer
        .lock()
        .roots
        .iter()
        .map(|r| r.spec.path.clone())
        .collect()
}

fn run(shared: &Shared, mut watcher: RecommendedWatcher, rx: &Receiver<Msg>) {
    let mut watches = Watches {
        watched: BTreeMap::new(),
    };
    watches.sync(&mut watcher, &root_paths(shared));
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
                .config
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
        apply(shared, &batch);
        watches.sync(&mut watcher, &root_paths(shared));
    }
}

/// Maps a batch of events to work and does it under the writer lock.
fn apply(shared: &Shared, batch: &[Msg]) {
    let roots = root_paths(shared);
    let depth = shared.config.depth;
    let mut full = false;
    let mut root_rescans: BTreeSet<PathBuf> = BTreeSet::new();
    let mut dirs: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for msg in batch {
        let event = match msg {
            Msg::Fs(Ok(event)) => event,
            Msg::Fs(Err(e)) => {
                tracing::warn!(error = %e, "watch error: rescanning");
                full = true;
                continue;
            }
            Msg::RootsChanged => continue,
            Msg::Stop => return,
        };
        if event.need_rescan() {
            full = true;
            continue;
        }
        for path in &event.paths {
            for root in &roots {
                if root.starts_with(path) || path == root {
                    // The root itself, or an ancestor, was created, deleted or renamed.
                    root_rescans.insert(root.clone());
                } else if let Ok(rel) = path.strip_prefix(root) {
                    match skill_dir(root, rel, depth) {
                        Some(dir) => {
                            dirs.entry(root.clone()).or_default().insert(dir);
                        }
                        None => {
                            root_rescans.insert(root.clone());
                        }
                    }
                }
            }
        }
    }
    let mut writer = shared.writer.lock();
    if full {
        tracing::info!("event queue overflow or watch error: full rescan");
        shared.rescan_all(&mut writer);
        return;
    }
    if root_rescans.is_empty() && dirs.is_empty() {
        return;
    }
    let mut changed = Vec::new();
    for root in &root_rescans {
        shared.rescan_root(&mut writer, root);
        changed.push(root.clone());
    }
    for (root, dirs) in dirs {
        if root_rescans.contains(&root) {
            continue;
        }
        let dirs: Vec<PathBuf> = dirs.into_iter().collect();
        shared.refresh_dirs(&mut writer, &root, &dirs);
        changed.extend(dirs);
    }
    shared.publish(&mut writer, &changed);
}

/// The skill folder a changed path belongs to, or `None` when the change needs a rescan
/// of the root (nested layouts, where a folder's role is not known from its path).
fn skill_dir(root: &Path, rel: &Path, depth: usize) -> Option<PathBuf> {
    let mut comps = rel.components();
    let Some(Component::Normal(first)) = comps.next() else {
        return None;
    };
    if first
        .to_str()
        .is_some_and(|n| n.starts_with('.') || matches!(n, "node_modules" | "target"))
    {
        return Some(root.join(first)); // a skipped folder: refreshing it finds nothing
    }
    if depth == 1 {
        return Some(root.join(first));
    }
    // Nested layouts: the deepest ancestor (within depth) that holds SKILL.md now.
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
