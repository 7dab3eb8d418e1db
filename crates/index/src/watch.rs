//! The file watcher: `notify` events, debounced, mapped to the skill folders they touch,
//! then applied by the writer. Runs on its own thread, stopped when the index drops.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, TryRecvError};
use notify::event::{AccessKind, AccessMode, CreateKind, ModifyKind, RemoveKind};
use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use parking_lot::{Condvar, Mutex};

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
    /// Runs `f` (which works in parallel: the walks of the roots) on the index's reading
    /// threads, never on a pool of the watcher's own making.
    fn reading(&self, f: &mut (dyn FnMut() + Send));
}

/// Longest a burst of events may delay a reload.
const MAX_BATCH: Duration = Duration::from_millis(500);

enum Msg {
    Fs(notify::Result<notify::Event>),
    RootsChanged,
    Stop,
}

/// A hold on the watcher's setup (tests): called on the watcher thread before it sets any
/// watch.
#[derive(Clone, Default)]
pub(crate) struct SetupHook(pub(crate) Option<Arc<dyn Fn() + Send + Sync>>);

impl std::fmt::Debug for SetupHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "SetupHook(set)"
        } else {
            "SetupHook(none)"
        })
    }
}

/// How far the watcher's setup has come: `None` while it runs, then the number of folders
/// watched when it ended.
#[derive(Debug, Default)]
pub(crate) struct Setup {
    done: Mutex<Option<usize>>,
    ready: Condvar,
}

impl Setup {
    fn finish(&self, folders: usize) {
        *self.done.lock() = Some(folders);
        self.ready.notify_all();
    }

    /// The number of folders watched once the setup has ended, waiting at most `wait`.
    pub(crate) fn wait(&self, wait: Duration) -> Option<usize> {
        let mut done = self.done.lock();
        let end = Instant::now() + wait;
        while done.is_none() {
            if self.ready.wait_until(&mut done, end).timed_out() {
                break;
            }
        }
        *done
    }
}

/// Owns the watcher thread.
#[derive(Debug)]
pub(crate) struct WatchHandle {
    tx: Sender<Msg>,
    quiet: Arc<Quiet>,
    thread: Option<JoinHandle<()>>,
    pub(crate) setup: Arc<Setup>,
}

impl std::fmt::Debug for Msg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Msg")
    }
}

impl WatchHandle {
    pub(crate) fn roots_changed(&self) {
        self.quiet.mark();
        let _ = self.tx.send(Msg::RootsChanged);
    }

    pub(crate) fn inject(&self, event: notify::Event) {
        self.quiet.mark();
        let _ = self.tx.send(Msg::Fs(Ok(event)));
    }

    pub(crate) fn stop(mut self) {
        let _ = self.tx.send(Msg::Stop);
        if let Some(t) = self.thread.take() {
            // Waiting out a debounce window, it sleeps: wake it to read the stop.
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

/// When the newest message was sent, for the debounce: the watcher thread sleeps until the
/// window after it has passed instead of waking for each of a burst's thousands of events.
#[derive(Debug)]
struct Quiet {
    base: Instant,
    /// Nanoseconds from `base` to the newest message.
    last: std::sync::atomic::AtomicU64,
}

impl Quiet {
    fn new() -> Quiet {
        Quiet {
            base: Instant::now(),
            last: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// A message is sent now.
    fn mark(&self) {
        let nanos = u64::try_from(self.base.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.last
            .fetch_max(nanos, std::sync::atomic::Ordering::Relaxed);
    }

    /// When the newest message was sent.
    fn last(&self) -> Instant {
        let nanos = self.last.load(std::sync::atomic::Ordering::Relaxed);
        self.base + Duration::from_nanos(nanos)
    }
}

/// Starts the thread that watches the roots and applies what the watches report, and
/// returns at once: setting the watches walks every root (a host answers meanwhile). Events
/// wait in the channel until the setup ends; then every root is rescanned, as after an
/// event-queue overflow, so a change made before its folder was watched is read all the
/// same (an edit no record shows, of a reference say, is told as an empty batch).
pub(crate) fn start<S: Rebuild>(
    shared: Arc<S>,
    hook: SetupHook,
) -> Result<WatchHandle, IndexError> {
    let (tx, rx) = crossbeam_channel::unbounded();
    let fs_tx = tx.clone();
    let quiet = Arc::new(Quiet::new());
    let marks = Arc::clone(&quiet);
    let waits = Arc::clone(&quiet);
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        // Reads change nothing: they neither join a batch nor hold one open.
        if event.as_ref().is_ok_and(reads_only) {
            return;
        }
        marks.mark();
        let _ = fs_tx.send(Msg::Fs(event));
    })
    .map_err(|e| IndexError::Watch(e.to_string()))?;
    let setup = Arc::new(Setup::default());
    let done = Arc::clone(&setup);
    let thread = std::thread::Builder::new()
        .name("skills-watch".into())
        .spawn(move || {
            if let Some(hook) = hook.0 {
                hook();
            }
            let roots = shared.watched_roots();
            let mut watches = Watches::default();
            let changes = Changes {
                rewalk: roots.iter().cloned().collect(),
                ..Changes::default()
            };
            let depth = shared.config().depth;
            shared.reading(&mut || {
                watches.sync(&mut watcher, &roots, depth, &changes);
            });
            shared.rebuild(Plan {
                full: true,
                ..Plan::default()
            });
            done.finish(watches.watched.len());
            run(shared.as_ref(), watcher, watches, (&rx, &waits));
        })
        .map_err(|e| IndexError::Watch(e.to_string()))?;
    Ok(WatchHandle {
        tx,
        quiet,
        thread: Some(thread),
        setup,
    })
}

/// What a batch asks of the watches: roots to walk again, skill folders whose own folders
/// to list again, and paths deleted or renamed (their watches, and their folders', go).
#[derive(Debug, Default)]
struct Changes {
    rewalk: BTreeSet<PathBuf>,
    relist: BTreeSet<PathBuf>,
    gone: BTreeSet<PathBuf>,
}

/// The folders watched (each on its own, never recursively: a recursive watch follows
/// every link below it), by the roots that want them.
#[derive(Default)]
struct Watches {
    /// Every folder watched.
    watched: BTreeSet<PathBuf>,
    /// Each root's folders, and its path resolved when they were walked.
    roots: BTreeMap<PathBuf, RootWatch>,
    /// The folders below each skill folder, as last listed.
    interiors: BTreeMap<PathBuf, Vec<PathBuf>>,
}

#[derive(Default)]
struct RootWatch {
    resolved: Option<PathBuf>,
    folders: BTreeSet<PathBuf>,
    /// The skill folders the walk found.
    skills: BTreeSet<PathBuf>,
}

impl Watches {
    /// Brings the watches in line with the roots as they are on disk now, walking again the
    /// roots `changes` names (and any not walked yet). Returns the roots whose own folder
    /// just became watched: changes made in them before were not reported, so the caller
    /// rescans them.
    fn sync(
        &mut self,
        watcher: &mut RecommendedWatcher,
        roots: &[PathBuf],
        depth: usize,
        changes: &Changes,
    ) -> BTreeSet<PathBuf> {
        self.roots.retain(|root, _| roots.contains(root));
        // Nothing to walk and nothing unwatched: the wanted watches are the ones set (a
        // burst of saves inside skill folders costs no pass over every watched folder).
        let mut dirty = !changes.relist.is_empty();
        dirty |= self.unwatch_gone(watcher, &changes.gone);
        for dir in &changes.relist {
            self.interiors.remove(dir);
        }
        let mut fresh = BTreeSet::new();
        // A folder may appear or vanish while its watch is being set up, unseen by the
        // watches being replaced: walk again until the wanted watches stop moving.
        for _ in 0..8 {
            let mut moved = false;
            for root in roots {
                let walk = changes.rewalk.contains(root) || !self.roots.contains_key(root);
                if walk || moved_root(root, self.roots.get(root)) {
                    dirty = true;
                    let folders = self.root_folders(root, depth);
                    let old = self.roots.insert(root.clone(), folders);
                    moved |= old.is_none_or(|o| o.folders != self.roots[root].folders);
                }
            }
            if !dirty {
                break;
            }
            let wanted: BTreeSet<PathBuf> = self
                .roots
                .values()
                .flat_map(|r| r.folders.iter().cloned())
                .collect();
            for path in self.watched.difference(&wanted) {
                let _ = watcher.unwatch(path);
            }
            self.watched.retain(|p| wanted.contains(p));
            for path in wanted {
                if !self.watched.contains(&path)
                    && watcher.watch(&path, RecursiveMode::NonRecursive).is_ok()
                {
                    if roots.contains(&path) {
                        fresh.insert(path.clone());
                    }
                    self.watched.insert(path);
                }
            }
            if !moved {
                break;
            }
        }
        fresh
    }

    /// Unwatches every watched folder at or below a path deleted or renamed (a root's
    /// folders too, when the root or an ancestor went) and forgets the skill folders' lists
    /// there. Whether any watch went.
    fn unwatch_gone(
        &mut self,
        watcher: &mut RecommendedWatcher,
        gone_paths: &BTreeSet<PathBuf>,
    ) -> bool {
        let mut dirty = false;
        for gone in gone_paths {
            let mut below: Vec<PathBuf> = self
                .watched
                .range(gone.clone()..)
                .take_while(|w| w.starts_with(gone))
                .cloned()
                .collect();
            // A root (or an ancestor) gone: every watch it set goes, its ancestor's too.
            let roots_below: Vec<PathBuf> = self
                .roots
                .keys()
                .filter(|r| r.starts_with(gone))
                .cloned()
                .collect();
            for root in roots_below {
                below.extend(self.roots.remove(&root).into_iter().flat_map(|r| r.folders));
            }
            for path in below {
                let _ = watcher.unwatch(&path);
                dirty |= self.watched.remove(&path);
            }
            // What is below a path sorts right after it: a range, not a pass over every
            // skill folder for each path a burst renames (that was quadratic).
            let stale: Vec<PathBuf> = self
                .interiors
                .range(gone.clone()..)
                .take_while(|(dir, _)| dir.starts_with(gone))
                .map(|(dir, _)| dir.clone())
                .collect();
            for dir in stale {
                self.interiors.remove(&dir);
            }
        }
        dirty
    }

    /// Whether `root` now resolves to another folder than when it was walked.
    fn moved(&self, root: &Path) -> bool {
        moved_root(root, self.roots.get(root))
    }

    /// Whether an event on `path`, below the folder `dir` of `root`, leaves the watched
    /// folders as they are: a file (not `SKILL.md` gone) in a folder the last walk found to
    /// be a skill. A folder or a link that comes, goes or is renamed, a path watched, or a
    /// folder not known as a skill asks for the root to be walked again.
    fn keeps_layout(&self, root: &Path, dir: &Path, path: &Path, kind: &EventKind) -> bool {
        let known_skill = self.roots.get(root).is_some_and(|r| r.skills.contains(dir));
        if !known_skill || path == dir || self.watched.contains(path) {
            return false;
        }
        if matches!(
            kind,
            EventKind::Create(CreateKind::Folder) | EventKind::Remove(RemoveKind::Folder)
        ) {
            return false;
        }
        match std::fs::symlink_metadata(path) {
            Ok(meta) => meta.is_file(),
            Err(_) => !path
                .file_name()
                .is_some_and(|n| n.eq_ignore_ascii_case(skills_storage::SKILL_FILE)),
        }
    }

    /// The folders that watch `root`: the folders a scan visits, each skill folder's own
    /// folders, and, for a root that is a link, its parent (a watch follows the link to the
    /// folder it names when it is set, so retargeting the link is seen only there). A root
    /// that does not exist is watched through its nearest existing ancestor, to see it
    /// appear.
    fn root_folders(&mut self, root: &Path, depth: usize) -> RootWatch {
        let mut folders = BTreeSet::new();
        let mut skills = BTreeSet::new();
        let is_link = std::fs::symlink_metadata(root).is_ok_and(|m| m.file_type().is_symlink());
        if is_link {
            if let Some(parent) = root.parent().filter(|p| p.is_dir()) {
                folders.insert(parent.to_path_buf());
            }
        }
        if root.is_dir() {
            let options = skills_storage::DiscoveryOptions::roots().with_max_depth(depth);
            for folder in skills_storage::folders_to_watch(root, &options) {
                if folder.skill {
                    skills.insert(folder.dir.clone());
                    let inside = self
                        .interiors
                        .entry(folder.dir.clone())
                        .or_insert_with(|| skills_storage::skill_folders(&folder.dir));
                    folders.extend(inside.iter().cloned());
                }
                folders.insert(folder.dir);
            }
        } else if let Some(anc) = root.ancestors().skip(1).find(|a| a.is_dir()) {
            folders.insert(anc.to_path_buf());
        }
        RootWatch {
            resolved: std::fs::canonicalize(root).ok(),
            folders,
            skills,
        }
    }
}

/// Whether `root` now resolves to another folder than when it was walked (it, or a folder
/// on its path, was replaced by a link, or a link was retargeted): its watches then watch
/// the old folder.
fn moved_root(root: &Path, walked: Option<&RootWatch>) -> bool {
    walked.is_some_and(|w| w.resolved != std::fs::canonicalize(root).ok())
}

fn run<S: Rebuild>(
    shared: &S,
    mut watcher: RecommendedWatcher,
    mut watches: Watches,
    (rx, quiet): (&Receiver<Msg>, &Quiet),
) {
    loop {
        let first = match rx.recv() {
            Ok(Msg::Stop) | Err(_) => return,
            Ok(msg) => msg,
        };
        let mut batch = vec![first];
        let started = Instant::now();
        // Debounce: wait until the burst goes quiet, or MAX_BATCH passes, taking what has
        // queued at each wake-up (not waking for each event).
        loop {
            loop {
                match rx.try_recv() {
                    Ok(Msg::Stop) | Err(TryRecvError::Disconnected) => return,
                    Ok(msg) => batch.push(msg),
                    Err(TryRecvError::Empty) => break,
                }
            }
            let until = (quiet.last() + shared.config().debounce).min(started + MAX_BATCH);
            let now = Instant::now();
            if now >= until {
                break;
            }
            std::thread::park_timeout(until - now);
        }
        let roots = shared.watched_roots();
        let mut plan = plan(&roots, shared.config().depth, &batch);
        // A root whose path now resolves elsewhere (replaced by a link, say) is read anew.
        for root in roots.iter().filter(|r| watches.moved(r)) {
            plan.root_rescans.insert(root.clone());
            plan.touched_roots.insert(root.clone());
        }
        let depth = shared.config().depth;
        let changes = changes(&watches, (&roots, depth), &plan, &batch);
        // Watches first, then the reads: what changes in between is reported, not lost.
        shared.reading(&mut || {
            plan.newly_watched = watches.sync(&mut watcher, &roots, depth, &changes);
        });
        shared.rebuild(plan);
    }
}

/// What a batch and its plan ask of the watches. A root rescanned (created, deleted or
/// renamed, or an ancestor was) is watched anew even if it seems watched: a deleted
/// folder's watch goes with it, and a folder recreated under the same path is another
/// folder. So is every path deleted or renamed, and what is below it. A root is walked
/// again, and a skill folder's own folders listed again, only for an event that may change
/// which folders are watched ([`Watches::keeps_layout`]); a save inside a skill folder
/// changes none.
fn changes(
    watches: &Watches,
    (roots, depth): (&[PathBuf], usize),
    plan: &Plan,
    batch: &[Msg],
) -> Changes {
    let stale: BTreeSet<PathBuf> = if plan.full {
        roots.iter().cloned().collect()
    } else {
        plan.root_rescans.clone()
    };
    let mut gone = stale.clone();
    let mut seen: Seen<&OsStr> = Seen::default();
    for msg in batch {
        if let Msg::Fs(Ok(event)) = msg {
            if matches!(
                event.kind,
                EventKind::Remove(_) | EventKind::Modify(ModifyKind::Name(_))
            ) {
                let new = event.paths.iter().filter(|p| seen.insert(p.as_os_str()));
                gone.extend(new.cloned());
            }
        }
    }
    let mut rewalk = stale;
    let mut relist = BTreeSet::new();
    // Whether a path keeps the layout depends on the path and on whether the event is of a
    // folder: each pair is judged once (a burst names each path many times).
    let mut judged: Seen<(&OsStr, bool)> = Seen::default();
    for msg in batch {
        let Msg::Fs(Ok(event)) = msg else { continue };
        if reads_only(event) {
            continue;
        }
        let of_folder = matches!(
            event.kind,
            EventKind::Create(CreateKind::Folder) | EventKind::Remove(RemoveKind::Folder)
        );
        for path in &event.paths {
            if !judged.insert((path.as_os_str(), of_folder)) {
                continue;
            }
            for root in roots {
                let Some(dir) = watched_dir(root, path, depth) else {
                    continue; // not below the root, the root itself, or a rescan of it
                };
                if !watches.keeps_layout(root, &dir, path, &event.kind) {
                    rewalk.insert(root.clone());
                    relist.insert(dir);
                }
            }
        }
    }
    Changes {
        rewalk,
        relist,
        gone,
    }
}

/// The skill folder `path` (strictly below `root`) belongs to, unless no listing of that
/// folder shows it (a hidden name on the way, an editor's temporary file say): what
/// happens there changes nothing a reader of the skill can see.
fn watched_dir(root: &Path, path: &Path, depth: usize) -> Option<PathBuf> {
    let rel = path.strip_prefix(root).ok()?;
    if rel.as_os_str().is_empty() {
        return None;
    }
    let dir = skill_dir(root, rel, depth)?;
    listed_below(&dir, path).then_some(dir)
}

/// Whether a listing of the skill folder `dir` can show `path` (at or below it): no name
/// on the way from `dir` is hidden or `node_modules`. What happens to a path no listing
/// shows (an editor's temporary file, `.SKILL.md.swp`) changes nothing a reader of the
/// skill can see, so it is no change of the skill.
fn listed_below(dir: &Path, path: &Path) -> bool {
    path.strip_prefix(dir).is_ok_and(|inside| {
        inside.components().all(|c| {
            c.as_os_str()
                .to_str()
                .is_none_or(skills_storage::listed_name)
        })
    })
}

/// What a batch of events asks the writer to do.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    /// Rescan every root (an event-queue overflow or a watch error).
    pub(crate) full: bool,
    /// Roots to rescan whole.
    pub(crate) root_rescans: BTreeSet<PathBuf>,
    /// The rescanned roots in which something changed that no skill folder names (a
    /// nested layout's change, a root now resolving elsewhere): each of their skills counts
    /// as changed. A root rescanned because its own path (or an ancestor) was created or
    /// renamed is not one: what it holds reports a change only if it reads differently.
    pub(crate) touched_roots: BTreeSet<PathBuf>,
    /// Skill folders to re-read, by root.
    pub(crate) dirs: BTreeMap<PathBuf, BTreeSet<PathBuf>>,
    /// Roots whose watch just began: rescanned for what changed unseen before it, though no
    /// file in them is known to have changed.
    pub(crate) newly_watched: BTreeSet<PathBuf>,
}

/// Opening or reading a file (or listing a folder) changes nothing, and the index's own
/// reads would otherwise trigger the next reload, and the next walk, forever.
fn reads_only(event: &notify::Event) -> bool {
    matches!(event.kind, EventKind::Access(kind) if kind != AccessKind::Close(AccessMode::Write))
}

/// The paths of a batch already dealt with.
type Seen<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;

/// Maps a batch of events to the work it needs.
fn plan(roots: &[PathBuf], depth: usize, batch: &[Msg]) -> Plan {
    let mut plan = Plan::default();
    let mut seen: Seen<&OsStr> = Seen::default();
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
        if reads_only(event) {
            continue;
        }
        for path in &event.paths {
            // What a path asks for depends on the path alone: a burst names each many
            // times (a save is five events or more).
            if !seen.insert(path.as_os_str()) {
                continue;
            }
            for root in roots {
                if root.starts_with(path) || path == root {
                    // The root itself, or an ancestor, was created, deleted or renamed.
                    plan.root_rescans.insert(root.clone());
                } else if let Ok(rel) = path.strip_prefix(root) {
                    match skill_dir(root, rel, depth) {
                        Some(dir) if !listed_below(&dir, path) => {} // a temporary file, say
                        Some(dir) => {
                            plan.dirs.entry(root.clone()).or_default().insert(dir);
                        }
                        None => {
                            plan.root_rescans.insert(root.clone());
                            plan.touched_roots.insert(root.clone());
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
