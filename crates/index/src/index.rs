//! `SkillIndex`: the roots, the writer that rebuilds and publishes snapshots, plugin
//! registration and subscribers. Readers only ever touch the `ArcSwap`.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use crossbeam_channel::{Receiver, Sender};
use parking_lot::Mutex;
use rayon::prelude::*;
use skills_model::{Diagnostic, Layer, RemoteOrigin, Rule, Severity, Skill, SkillRecord};
use skills_parser::SkillParser;
use skills_storage::{
    DiscoveryOptions, FsSource, RootOrigin, RootSource, SkillRoot, SourceCandidate, MAX_ROOT_DEPTH,
};

use crate::check::{How, Missing, Reading};
use crate::config::Config;
use crate::events::{diff, ChangeEvent};
use crate::snapshot::{Findings, Folders, RootPlace, Snapshot};
use crate::watch::Plan;
use crate::{IndexError, SkillReport, Table, DEFAULT_SKILL_FILE_LIMIT};
use skills_storage::SkillSource;

/// Configures and builds a [`SkillIndex`].
#[derive(Debug, Clone)]
pub struct SkillIndexBuilder {
    roots: Vec<SkillRoot>,
    config: Config,
    watch: bool,
    watch_hook: crate::watch::SetupHook,
}

impl SkillIndexBuilder {
    /// Adds a folder of `layer`. Inside one layer, a name goes to the skill with the
    /// higher `priority`, then to the first path in byte order. A folder already given to
    /// the same layer (as `DIR`, `DIR/`, `X/../DIR` or a link to it) is read once:
    /// otherwise each of its skills would be listed as shadowed by itself.
    pub fn root(self, layer: Layer, path: impl Into<PathBuf>) -> SkillIndexBuilder {
        self.add_root(SkillRoot::explicit(layer, path))
    }

    /// Adds a root as [`skills_storage::default_roots`] lists them (its origin is kept), a
    /// folder already given to the same layer and plugin once.
    pub fn add_root(mut self, root: SkillRoot) -> SkillIndexBuilder {
        if !self.has_root(&root) {
            self.roots.push(root);
        }
        self
    }

    /// Adds the default roots `config` describes (`skills_storage::default_roots`), each
    /// folder once.
    pub fn default_roots(self, config: &skills_storage::RootsConfig) -> SkillIndexBuilder {
        skills_storage::default_roots(config)
            .into_iter()
            .fold(self, SkillIndexBuilder::add_root)
    }

    /// Whether a plugin id is taken by a root given so far.
    pub fn has_plugin(&self, id: &str) -> bool {
        self.roots.iter().any(|r| r.plugin.as_deref() == Some(id))
    }

    /// Whether `root` is a folder already given to the same layer and plugin. Folders that
    /// exist compare as canonical paths; others as absolute paths. Other sources are never
    /// the same root.
    fn has_root(&self, root: &SkillRoot) -> bool {
        let RootSource::Folder(path) = &root.source else {
            return false;
        };
        let key = |p: &Path| {
            std::fs::canonicalize(p)
                .or_else(|_| std::path::absolute(p))
                .unwrap_or_else(|_| p.to_path_buf())
        };
        let wanted = key(path);
        self.roots.iter().any(|r| {
            r.layer == root.layer
                && r.plugin == root.plugin
                && matches!(&r.source, RootSource::Folder(p) if key(p) == wanted)
        })
    }

    /// Adds a plugin whose skills come from a [`SkillSource`] that is not a folder on disk
    /// (an in-memory or embedded source). Its skills' paths read `embedded:<id>/...` (a
    /// label, not a path on disk); they are listed, loaded and their files read through the
    /// source, but their scripts cannot run.
    pub fn plugin_source(self, id: &str, source: Arc<dyn SkillSource>) -> SkillIndexBuilder {
        self.add_root(SkillRoot::plugin_source(id, source))
    }

    /// Adds a root of `layer` whose skills come from a [`SkillSource`] that is not a folder
    /// on disk: a remote index or server (its records carry the source's
    /// [`remote_origin`](SkillSource::remote_origin) and paths under its
    /// [`location`](SkillSource::location)), or skills held in memory. The source tells the
    /// index of its changes through the [`SourceNotifier`](skills_storage::SourceNotifier)
    /// it is given.
    pub fn source(self, layer: Layer, source: Arc<dyn SkillSource>) -> SkillIndexBuilder {
        self.add_root(SkillRoot::source(layer, source))
    }

    /// Adds a plugin root known at start (more can be registered at run time). An id names
    /// one root: giving the same id and folder twice is one root, and the same id for
    /// another folder fails at [`build`](SkillIndexBuilder::build).
    pub fn plugin(self, id: &str, path: impl Into<PathBuf>) -> SkillIndexBuilder {
        self.add_root(SkillRoot::plugin(id, path))
    }

    /// The layer precedence, highest first (default: enterprise, personal, project, plugin).
    pub fn layer_order(mut self, order: [Layer; 4]) -> SkillIndexBuilder {
        self.config.order = order;
        self
    }

    /// Index only skills that pass the strict rules (default: lenient).
    pub fn strict(mut self, yes: bool) -> SkillIndexBuilder {
        self.config.strict = yes;
        self
    }

    /// How deep below a root skills are searched: 1 (the default) is the specification's
    /// layout; at most 6.
    pub fn depth(mut self, depth: usize) -> SkillIndexBuilder {
        self.config.depth = depth.clamp(1, MAX_ROOT_DEPTH);
        self
    }

    /// Read each skill's `agents/openai.yaml` as Codex does (default: off; the Codex preset
    /// turns it on): `policy.allow_implicit_invocation: false` reads as
    /// `disable-model-invocation: true` when the frontmatter does not say otherwise. Off, no
    /// skill pays the extra open.
    pub fn codex_metadata(mut self, yes: bool) -> SkillIndexBuilder {
        self.config.codex_metadata = yes;
        self
    }

    /// The search path a skill's programs (`requires.bins`) are looked for on at each
    /// publication; by default this process's `PATH`, the one scripts receive, read at
    /// each publication.
    pub fn program_path(mut self, path: impl Into<std::ffi::OsString>) -> SkillIndexBuilder {
        self.config.program_path = Some(path.into());
        self
    }

    /// Watch the roots and reload on change (default: off).
    pub fn watch(mut self, yes: bool) -> SkillIndexBuilder {
        self.watch = yes;
        self
    }

    /// How long the watcher waits for a burst of events to end (default 50 ms).
    pub fn debounce(mut self, window: Duration) -> SkillIndexBuilder {
        self.config.debounce = window;
        self
    }

    /// Calls `hook` on the watcher's thread before it sets its first watch (tests hold the
    /// setup with it, to show the index answers meanwhile).
    #[doc(hidden)]
    pub fn watch_setup_hook(
        mut self,
        hook: impl Fn() + Send + Sync + 'static,
    ) -> SkillIndexBuilder {
        self.watch_hook = crate::watch::SetupHook(Some(Arc::new(hook)));
        self
    }

    /// Builds the index: scans every root in parallel and publishes generation 1. The
    /// watcher (when on) sets its watches on its own thread: `build` does not wait for it.
    pub fn build(self) -> Result<SkillIndex, IndexError> {
        let mut ids = std::collections::HashSet::new();
        for id in self.roots.iter().filter_map(|r| r.plugin.as_deref()) {
            check_plugin_id(id)?;
            if !ids.insert(id) {
                return Err(IndexError::Plugin {
                    id: id.into(),
                    reason: "already registered",
                });
            }
        }
        let shared = Arc::new(Shared {
            current: ArcSwap::from_pointee(Snapshot::empty()),
            writer: Mutex::new(Writer {
                roots: Vec::new(),
                generation: 0,
            }),
            subscribers: Mutex::new(Vec::new()),
            config: self.config,
            readers: crate::pool::start(),
        });
        let mut writer = shared.writer.lock();
        for root in self.roots {
            writer.roots.push(RootState::new(root, shared.config.depth));
        }
        // The watcher sets its watches on its thread once this scan has let the writer go,
        // then rescans every root: a change made before its folder was watched is read.
        let watcher = if self.watch {
            Some(crate::watch::start(Arc::clone(&shared), self.watch_hook)?)
        } else {
            None
        };
        for root in &writer.roots {
            root.notify_into(&shared);
        }
        shared.rescan_all(&mut writer);
        drop(writer);
        Ok(SkillIndex { shared, watcher })
    }
}

/// Why `id` cannot name a plugin, or `None` when it can: an id is 1-64 characters of ASCII
/// letters, digits, `-`, `_` and `.`, and not a layer's name (qualified names would clash).
pub fn plugin_id_problem(id: &str) -> Option<&'static str> {
    let valid = !id.is_empty()
        && id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !valid {
        Some("is not 1-64 characters of ASCII letters, digits, '-', '_' and '.'")
    } else if Layer::ALL.iter().any(|l| l.as_str() == id) {
        Some("is a layer name (its skills' qualified names would clash with that layer's)")
    } else {
        None
    }
}

fn check_plugin_id(id: &str) -> Result<(), IndexError> {
    match plugin_id_problem(id) {
        Some(reason) => Err(IndexError::Plugin {
            id: id.into(),
            reason,
        }),
        None => Ok(()),
    }
}

/// The live index of skills.
///
/// [`snapshot`](SkillIndex::snapshot) never blocks: it loads an `Arc` published by the
/// writer. Rebuilds (a watcher batch, [`reload_now`](SkillIndex::reload_now), plugin
/// registration) are serialised on a writer lock readers never see. Dropping the index
/// stops its watcher thread.
#[derive(Debug)]
pub struct SkillIndex {
    shared: Arc<Shared>,
    watcher: Option<crate::watch::WatchHandle>,
}

#[derive(Debug)]
pub(crate) struct Shared {
    current: ArcSwap<Snapshot>,
    pub(crate) writer: Mutex<Writer>,
    subscribers: Mutex<Vec<Subscriber>>,
    pub(crate) config: Config,
    /// The threads that read skill files and build snapshots ([`crate::pool`]); `None`
    /// when they could not be started.
    readers: crate::pool::Readers,
}

/// How many skill folders a scan reads between two moves of its results into the map.
const SCAN_CHUNK: usize = 16_384;

#[derive(Debug)]
pub(crate) struct Writer {
    pub(crate) roots: Vec<RootState>,
    generation: u64,
}

#[derive(Debug)]
pub(crate) struct RootState {
    /// The root as given.
    pub(crate) root: SkillRoot,
    /// The prefix of its skills' paths: the folder made absolute, the source's location (a
    /// URL root's folder), or `embedded:<id>` for another source that is not on disk.
    pub(crate) base: PathBuf,
    /// What its skills are read through (an [`FsSource`] for a folder).
    source: Arc<dyn SkillSource>,
    /// The plugin id, shared by its records.
    plugin: Option<Arc<str>>,
    /// The source's remote origin, shared by its records.
    remote: Option<Arc<RemoteOrigin>>,
    /// Skill folder → what was last read there.
    entries: Entries,
}

impl RootState {
    fn new(root: SkillRoot, depth: usize) -> RootState {
        let (base, source): (PathBuf, Arc<dyn SkillSource>) = match &root.source {
            RootSource::Folder(path) => {
                let base = std::path::absolute(path).unwrap_or_else(|_| path.clone());
                let options = DiscoveryOptions::roots().with_max_depth(depth);
                (base.clone(), Arc::new(FsSource::new(base, options)))
            }
            RootSource::Source(source) => {
                let base = match (source.fs_root(), source.location(), &root.plugin) {
                    (Some(path), _, _) => path.to_path_buf(),
                    (None, Some(location), _) => PathBuf::from(location),
                    (None, None, Some(id)) => PathBuf::from(format!("embedded:{id}")),
                    (None, None, None) => PathBuf::from(format!("embedded:{}", root.layer)),
                };
                (base, Arc::clone(source))
            }
        };
        RootState {
            plugin: root.plugin.as_deref().map(Arc::from),
            remote: source.remote_origin().map(Arc::new),
            root,
            base,
            source,
            entries: Entries::default(),
        }
    }

    /// Gives a source root the notifier through which it tells `shared` of its changes:
    /// each call rereads this root on a thread of its own and publishes (also with nothing
    /// changed in the records, so sessions check their active skills' versions). Folders
    /// are the watcher's.
    fn notify_into(&self, shared: &Arc<Shared>) {
        if self.watched() {
            return;
        }
        let shared = Arc::downgrade(shared);
        let source = Arc::downgrade(&self.source);
        self.source
            .set_notifier(skills_storage::SourceNotifier::new(move || {
                let (shared, source) = (shared.clone(), source.clone());
                let spawned = std::thread::Builder::new()
                    .name("skills-source-change".into())
                    .spawn(move || {
                        if let (Some(shared), Some(source)) = (shared.upgrade(), source.upgrade()) {
                            shared.rescan_source(&source);
                        }
                    });
                if let Err(error) = spawned {
                    tracing::warn!(%error, "a source's change could not be read: no thread");
                }
            }));
    }

    /// Whether the watcher follows this root: folders only.
    pub(crate) fn watched(&self) -> bool {
        matches!(self.root.source, RootSource::Folder(_))
    }

    fn place(&self) -> RootPlace {
        RootPlace {
            base: self.base.clone(),
            layer: self.root.layer,
            plugin: self.plugin.clone(),
            source: Arc::clone(&self.source),
        }
    }
}

/// What was last read in one skill folder. Small (32 bytes), since the entries table has a
/// slot of this size for every skill and more: what few entries have is boxed apart.
#[derive(Debug, Clone)]
struct Entry {
    /// The last good record (kept when a later edit breaks the file).
    record: Option<Arc<SkillRecord>>,
    diagnostics: Arc<[Diagnostic]>,
    apart: Option<Box<Apart>>,
}

/// The paths an [`Entry`] holds apart from its record, when it has any.
#[derive(Debug, Clone, Default)]
struct Apart {
    /// The file, when it is not the record's path (no record, or a last good one kept
    /// from elsewhere).
    file: Option<PathBuf>,
    /// The skill folder, when it is not the folder of the entry's file (set by
    /// [`Entries`], whose key it is).
    dir: Option<PathBuf>,
}

impl Entry {
    fn new(
        record: Option<Arc<SkillRecord>>,
        file: Option<PathBuf>,
        diagnostics: Arc<[Diagnostic]>,
    ) -> Entry {
        Entry {
            record,
            diagnostics,
            apart: file.map(|file| {
                Box::new(Apart {
                    file: Some(file),
                    dir: None,
                })
            }),
        }
    }

    /// The file, when it is not the record's path.
    fn file_apart(&self) -> Option<&Path> {
        self.apart.as_ref()?.file.as_deref()
    }

    /// Asks the processor to start loading the line the entry's record begins in, and its
    /// first diagnostic's: usually the lines that hold their counts, which a publication's
    /// [`root_records`] adds to. A hint only.
    fn warm_counts(&self) {
        if let Some(record) = &self.record {
            crate::warm::warm(&**record);
        }
        if let Some(first) = self.diagnostics.first() {
            crate::warm::warm(first);
        }
    }

    /// The entry's diagnostics with the file they are about, when it has any.
    fn findings(&self) -> Option<Findings> {
        if self.diagnostics.is_empty() {
            return None;
        }
        let list = Arc::clone(&self.diagnostics);
        Some(match (self.file_apart(), &self.record) {
            (None, Some(record)) => Findings::of_record(record, list),
            _ => Findings::at(self.file(), list),
        })
    }

    /// The skill file the entry's diagnostics are about.
    fn file(&self) -> &Path {
        match (self.file_apart(), &self.record) {
            (Some(f), _) => f,
            (None, Some(r)) => &r.path,
            (None, None) => Path::new(""),
        }
    }

    /// This entry as the entry of folder `dir`: the folder is held only when it is not
    /// the folder of the file.
    fn at(mut self, dir: PathBuf) -> Entry {
        if let Some(apart) = self.apart.as_mut() {
            apart.dir = None;
        }
        if self.file().parent() != Some(dir.as_path()) {
            self.apart.get_or_insert_with(Box::default).dir = Some(dir);
        } else if self.apart.as_ref().is_some_and(|a| a.file.is_none()) {
            self.apart = None;
        }
        self
    }

    /// The skill folder: the entry's key in [`Entries`].
    fn dir(&self) -> &Path {
        match self.apart.as_ref().and_then(|a| a.dir.as_deref()) {
            Some(dir) => dir,
            None => self.file().parent().unwrap_or(Path::new("")),
        }
    }
}

/// Skill folder → what was last read there: a hash table whose hashes a scan takes on the
/// reading threads, beside each folder's read. At 10,000 skills, hashing every folder's
/// path on the scan's own thread after the reads was about a twentieth of a build with
/// one core idle. Keyed as [`crate::Map`] is (the standard library's keyed SipHash over
/// the path, compared as paths), so no collisions can be computed ahead.
///
/// A folder is not held apart from its entry when it is the folder of the entry's file
/// (nearly always): the key is read from the file's path, and the copy of the folder's
/// path each skill held (about 60 bytes of heap and an allocation) is not kept.
#[derive(Debug, Clone, Default)]
pub(crate) struct Entries(Table<Entry>);

impl Entries {
    /// A map for `capacity` entries whose hashes were taken with `keys`.
    fn with(keys: crate::Keys, capacity: usize) -> Entries {
        Entries(Table {
            slots: hashbrown::HashTable::with_capacity(capacity),
            keys,
        })
    }

    fn get(&self, dir: &Path) -> Option<&Entry> {
        if self.0.slots.is_empty() {
            return None;
        }
        self.0
            .slots
            .find(self.0.keys.hash_folder(dir), |e| e.dir() == dir)
    }

    fn insert(&mut self, dir: PathBuf, entry: Entry) {
        let hash = self.0.keys.hash_folder(&dir);
        self.insert_hashed(hash, entry.at(dir));
    }

    /// Inserts an entry (made [`Entry::at`] its folder) with the [`hash`](Self::hash) of
    /// its folder, both done where it was read (so a folder's path not kept is freed there
    /// too); an entry already there is replaced, and then `true` is returned.
    fn insert_hashed(&mut self, hash: u64, new: Entry) -> bool {
        let Table { slots, keys } = &mut self.0;
        match slots.entry(
            hash,
            |e| e.dir() == new.dir(),
            |e| keys.hash_folder(e.dir()),
        ) {
            hashbrown::hash_table::Entry::Occupied(mut held) => {
                *held.get_mut() = new;
                true
            }
            hashbrown::hash_table::Entry::Vacant(room) => {
                room.insert(new);
                false
            }
        }
    }

    fn remove(&mut self, dir: &Path) {
        let hash = self.0.keys.hash_folder(dir);
        if let Ok(held) = self.0.slots.find_entry(hash, |e| e.dir() == dir) {
            held.remove();
        }
    }

    /// Each entry; its folder is [`Entry::dir`], read from its file's path when asked for.
    fn iter(&self) -> impl Iterator<Item = &Entry> + Clone {
        self.0.slots.iter()
    }
}

/// A root's scan: its map, and the entries read where the walk found them (with their
/// folders' hashes, one list a reading thread) while they are not in it yet. They are left
/// out of it only when the scan read nothing after the walk; a full rescan then puts them
/// there while the snapshot is built ([`Shared::rescan_all`]).
struct Scan {
    found: Vec<Vec<(u64, Entry)>>,
    entries: Entries,
}

/// The most entries a full rescan holds out of their maps, over all its roots, while its
/// snapshot is built ([`Shared::rescan_all`]): 40 bytes each, 640 KiB (and the lists'
/// spare room).
const BESIDE_THE_BUILD: usize = 16_384;

impl Scan {
    /// How many entries are not in the map yet.
    fn unmapped(&self) -> usize {
        self.found.iter().map(Vec::len).sum()
    }

    /// Every entry of the scan, a folder read twice as often as it was read.
    fn entries(&self) -> impl Iterator<Item = &Entry> + Clone {
        self.entries
            .iter()
            .chain(self.found.iter().flatten().map(|(_, entry)| entry))
    }

    /// This scan with every entry in its map.
    fn mapped(self) -> Scan {
        Scan {
            entries: self.into_entries().0,
            found: Vec::new(),
        }
    }

    /// The root's map, and whether a folder was read twice (the map holds its later read).
    fn into_entries(self) -> (Entries, bool) {
        let Scan { found, mut entries } = self;
        let mut twice = false;
        for (hash, entry) in found.into_iter().flatten() {
            twice |= entries.insert_hashed(hash, entry);
        }
        (entries, twice)
    }
}

#[cfg(target_pointer_width = "64")]
const _: () = assert!(
    std::mem::size_of::<Entry>() == 32,
    "an entry stays small: the table holds a slot of it for every skill and more"
);

impl SkillIndex {
    /// A builder with no roots.
    pub fn builder() -> SkillIndexBuilder {
        SkillIndexBuilder {
            roots: Vec::new(),
            config: Config {
                order: Layer::ALL,
                strict: false,
                depth: 1,
                debounce: Duration::from_millis(50),
                parser: SkillParser::default(),
                file_limit: DEFAULT_SKILL_FILE_LIMIT,
                codex_metadata: false,
                program_path: None,
            },
            watch: false,
            watch_hook: crate::watch::SetupHook::default(),
        }
    }

    /// The current snapshot. Never blocks, never fails.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.shared.current.load_full()
    }

    /// What `record` (a record of the current snapshot) needs and this machine lacks, as
    /// the current snapshot checked it ([`Snapshot::unmet`]).
    pub fn unmet(&self, record: &SkillRecord) -> Vec<skills_model::Unmet> {
        self.shared.current.load().unmet(record)
    }

    /// Rescans every root now and publishes the result (for hosts that watch nothing).
    pub fn reload_now(&self) -> Arc<Snapshot> {
        let mut writer = self.shared.writer.lock();
        self.shared.rescan_all(&mut writer);
        self.snapshot()
    }

    /// Adds a plugin's skill folder and publishes the result. Its skills are reachable as
    /// `<id>:<name>`.
    pub fn register_plugin(
        &self,
        id: &str,
        root: impl Into<PathBuf>,
    ) -> Result<Arc<Snapshot>, IndexError> {
        self.register_plugin_from(id, root, RootOrigin::Explicit)
    }

    /// [`register_plugin`](Self::register_plugin) with the root's origin: a root of
    /// [`RootOrigin::Registered`] (a plugin manager's, over a protocol) never shadows a
    /// skill of the plugin layer from another root, whatever its `priority`.
    pub fn register_plugin_from(
        &self,
        id: &str,
        root: impl Into<PathBuf>,
        origin: RootOrigin,
    ) -> Result<Arc<Snapshot>, IndexError> {
        let mut root = SkillRoot::plugin(id, root);
        root.origin = origin;
        self.add_plugin(id, root)
    }

    /// Adds a plugin whose skills come from a [`SkillSource`] (a remote index or server)
    /// and publishes the result, as [`register_plugin_from`](Self::register_plugin_from)
    /// does a folder.
    pub fn register_plugin_source(
        &self,
        id: &str,
        source: Arc<dyn SkillSource>,
        origin: RootOrigin,
    ) -> Result<Arc<Snapshot>, IndexError> {
        let mut root = SkillRoot::plugin_source(id, source);
        root.origin = origin;
        self.add_plugin(id, root)
    }

    fn add_plugin(&self, id: &str, root: SkillRoot) -> Result<Arc<Snapshot>, IndexError> {
        check_plugin_id(id)?;
        {
            let mut writer = self.shared.writer.lock();
            if writer
                .roots
                .iter()
                .any(|r| r.root.plugin.as_deref() == Some(id))
            {
                return Err(IndexError::Plugin {
                    id: id.into(),
                    reason: "already registered",
                });
            }
            let mut state = RootState::new(root, self.shared.config.depth);
            state.notify_into(&self.shared);
            state.entries = self.shared.scan_root(&state, &Entries::default());
            writer.roots.push(state);
            self.shared.publish(&mut writer, &[]);
        }
        self.roots_changed();
        Ok(self.snapshot())
    }

    /// Removes a plugin's skills and publishes the result.
    pub fn unregister_plugin(&self, id: &str) -> Result<Arc<Snapshot>, IndexError> {
        {
            let mut writer = self.shared.writer.lock();
            let before = writer.roots.len();
            writer
                .roots
                .retain(|r| r.root.plugin.as_deref() != Some(id));
            if writer.roots.len() == before {
                return Err(IndexError::Plugin {
                    id: id.into(),
                    reason: "not registered",
                });
            }
            self.shared.publish(&mut writer, &[]);
        }
        self.roots_changed();
        Ok(self.snapshot())
    }

    fn roots_changed(&self) {
        if let Some(w) = &self.watcher {
            w.roots_changed();
        }
    }

    /// The roots, in the order they were given (registered plugins last). Takes the
    /// writer lock for as long as the copy lasts: for hosts' occasional questions, not for
    /// a hot path.
    pub fn roots(&self) -> Vec<SkillRoot> {
        self.shared
            .writer
            .lock()
            .roots
            .iter()
            .map(|r| r.root.clone())
            .collect()
    }

    /// Whether the index watches its roots (built with [`watch`](SkillIndexBuilder::watch)).
    pub fn watching(&self) -> bool {
        self.watcher.is_some()
    }

    /// The folder roots that do not exist (yet): a typo in a path shows here, and the
    /// watcher (when on) picks such a root up when it appears. Takes the writer lock.
    pub fn missing_roots(&self) -> Vec<SkillRoot> {
        self.shared
            .writer
            .lock()
            .roots
            .iter()
            .filter(|r| r.watched() && !r.base.is_dir())
            .map(|r| r.root.clone())
            .collect()
    }

    /// A channel of change events, from the next publication on.
    pub fn subscribe(&self) -> Receiver<ChangeEvent> {
        let (tx, rx) = crossbeam_channel::unbounded();
        self.shared.subscribers.lock().push(Subscriber::Each(tx));
        rx
    }

    /// A channel of the change events of each publication, one message per generation (a
    /// publication that changes nothing sends nothing, but for a rescan of every root, a
    /// host's reload or the watcher's after an overflow, which sends an empty batch: an
    /// edit of a body, script or reference alone changes no record), from the next
    /// publication on.
    pub fn subscribe_batches(&self) -> Receiver<Arc<[ChangeEvent]>> {
        let (tx, rx) = crossbeam_channel::unbounded();
        self.shared.subscribers.lock().push(Subscriber::Batch(tx));
        rx
    }

    /// Loads a skill's body, file list and digest (stage two), cached for the current
    /// snapshot's generation.
    pub fn load(&self, name: &str) -> Result<Arc<Skill>, IndexError> {
        crate::load::load(&self.snapshot(), name, &self.shared.config)
    }

    /// Loads the skill of `record` itself, as [`load`](SkillIndex::load) does a name: its
    /// `SKILL.md` through its layer and plugin, not whichever skill now holds its name (one
    /// its reader may not see, say). Not found, with no suggestion, once it left the index.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # for (folder, extra) in [("a", "priority: 9\n"), ("b", "")] {
    /// #     let d = dir.path().join(folder);
    /// #     std::fs::create_dir_all(&d).unwrap();
    /// #     std::fs::write(d.join("SKILL.md"), format!("---\nname: deploy\ndescription: Deploys.\n{extra}---\nFolder {folder}.\n")).unwrap();
    /// # }
    /// let index = skills_index::SkillIndex::builder()
    ///     .root(skills_model::Layer::Project, dir.path())
    ///     .build()
    ///     .unwrap();
    /// let shadowed = index.snapshot().shadowed()[0].record.clone();
    /// // By name, the winner; by record, the record itself.
    /// assert_eq!(index.load("deploy").unwrap().body.trim(), "Folder a.");
    /// assert_eq!(index.load_record(&shadowed).unwrap().body.trim(), "Folder b.");
    /// ```
    pub fn load_record(&self, record: &SkillRecord) -> Result<Arc<Skill>, IndexError> {
        crate::load::load_record(&self.snapshot(), record, &self.shared.config)
    }

    /// Applies changes to `paths` as the watcher does after its debounce window, on this
    /// thread, and returns once the new snapshot is published. Benchmarks use it to time
    /// the reload step alone; hosts that learn of changes their own way may use it too.
    #[doc(hidden)]
    pub fn apply_changed_paths(&self, paths: &[PathBuf]) {
        crate::watch::apply_paths(self.shared.as_ref(), paths);
    }

    /// Waits at most `wait` for the watcher to set its watches, and returns how many folders
    /// it watches (`None` without a watcher, or still setting up). Tests count the work.
    #[doc(hidden)]
    pub fn watched_folders(&self, wait: Duration) -> Option<usize> {
        self.watcher.as_ref()?.setup.wait(wait)
    }

    /// Feeds the watcher an event as if the file system had sent it (tests use this to
    /// simulate an event-queue overflow).
    #[doc(hidden)]
    pub fn inject_event(&self, event: notify::Event) {
        if let Some(w) = &self.watcher {
            w.inject(event);
        }
    }
}

impl Shared {
    /// Runs `f` (which reads skill files in parallel) on the index's reading threads
    /// ([`crate::pool::run`]).
    fn reading<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        crate::pool::run(self.readers.as_deref(), f)
    }

    /// Reads one root from scratch (in parallel), keeping last good records from `previous`.
    fn scan_root(&self, root: &RootState, previous: &Entries) -> Entries {
        self.scan_root_found(root, previous).into_entries().0
    }

    /// [`Self::scan_root`], with the entries read where the walk found them not yet put in
    /// the root's map when they are all it read ([`Scan`]).
    fn scan_root_found(&self, root: &RootState, previous: &Entries) -> Scan {
        // The scan reads through the source's scan view (for a folder: a handle on it).
        let view = root.source.for_scan();
        let source = view.as_deref().unwrap_or(root.source.as_ref());
        // Discovery walks nested layouts in parallel, on the reading threads too, and each
        // skill it finds by asking for its `SKILL.md` is read there and then (one `stat`,
        // not the walk's and the read's, and no second pass); a flat layout's skills are
        // read as the root's listing names them (the listing on one thread, the reads on
        // the others).
        // Held with their hashes until the map is made to its size: a map grown as they
        // came rehashed every path on each growth (twice the hashing of the build). Each is
        // 40 bytes, where the walk's candidates it replaces held their paths.
        let keys = crate::Keys(std::hash::RandomState::new());
        // One list a reading thread, and one for a thread of no pool: a flat layout's root
        // is read as it is listed, every reading thread at once, and a list they shared
        // had them wait on each other (a build at 10,000 skills took 15% longer).
        let lists = self
            .readers
            .as_deref()
            .map_or(0, rayon::ThreadPool::current_num_threads)
            + 1;
        let found: Vec<Mutex<Vec<(u64, Entry)>>> =
            (0..lists).map(|_| Mutex::new(Vec::new())).collect();
        let read_found = |c: &SourceCandidate| {
            let Ok((dir, entry)) = self.read_if_there(root, source, c, previous) else {
                return false;
            };
            let hash = keys.hash_folder(&dir);
            let entry = entry.at(dir);
            let list = rayon::current_thread_index().map_or(lists - 1, |i| i.min(lists - 1));
            found[list].lock().push((hash, entry));
            true
        };
        let mut candidates = self.reading(|| source.expected_candidates_reading(&read_found));
        let found: Vec<Vec<(u64, Entry)>> = found.into_iter().map(Mutex::into_inner).collect();
        let read_already: usize = found.iter().map(Vec::len).sum();
        let mut scan = Scan {
            found,
            entries: Entries::with(keys.clone(), read_already + candidates.len()),
        };
        if !candidates.is_empty() {
            // The entries read after the walk go after those read during it (a folder read
            // twice keeps its later read), so these are put in the map first.
            scan = scan.mapped();
        }
        let entries = &mut scan.entries;
        // Read a chunk at a time, each chunk's results going straight into the map: at
        // 100,000 skills a collected list of them all beside the map was tens of MiB of
        // peak memory. Each candidate is made whole by the thread that reads it (the list
        // holds a listed folder's name only), and freed there once read.
        let mut read = Vec::new();
        while !candidates.is_empty() {
            let chunk = candidates.split_off_last(SCAN_CHUNK);
            self.reading(|| {
                chunk
                    .into_par_candidates()
                    .map(|c| {
                        let (dir, entry) = self.read_expected(root, source, &c, previous)?;
                        let hash = keys.hash_folder(&dir);
                        Some((hash, entry.at(dir)))
                    })
                    .collect_into_vec(&mut read);
            });
            for (hash, entry) in read.drain(..).flatten() {
                entries.insert_hashed(hash, entry);
            }
        }
        // The scan's scratch goes with it: each reading thread's prefix buffer, kept until
        // the next scan, was up to 33 KiB beside the index (the bench counted it as the
        // index's heap at 1,000 skills, more or less as threads happened to read).
        if let Some(pool) = self.readers.as_deref() {
            self.reading(|| pool.broadcast(|_| crate::check::release_scratch()));
        }
        scan
    }

    /// The entry of a candidate expected to hold `SKILL.md`, with its folder (the key of
    /// its entry), as a scan and a watcher's refresh read it: when its `SKILL.md` is not there, the folder is asked about alone, as
    /// discovery would have (a misnamed `skill.md` is read; a folder with no skill file is
    /// no entry). The folder is the check's own (its report's `dir`) wherever that is the
    /// folder as reached, so it is made once.
    fn read_expected(
        &self,
        root: &RootState,
        source: &dyn SkillSource,
        candidate: &SourceCandidate,
        previous: &Entries,
    ) -> Option<(PathBuf, Entry)> {
        let dir = match self.read_if_there(root, source, candidate, previous) {
            Ok(read) => return Some(read),
            Err(dir) => dir,
        };
        let found = source.candidate(&candidate.dir)?;
        let report = self.report_of(root, source, &found);
        let entry = self.entry_from(root, report, previous.get(&dir));
        Some((dir, entry))
    }

    /// [`read_expected`](Self::read_expected) as far as the candidate's own file: its
    /// entry, or its folder (the entry's key) when that file is not there.
    fn read_if_there(
        &self,
        root: &RootState,
        source: &dyn SkillSource,
        candidate: &SourceCandidate,
        previous: &Entries,
    ) -> Result<(PathBuf, Entry), PathBuf> {
        let Some(mut report) =
            crate::check::checked(source, &root.base, candidate, self.how(), Missing::Skipped)
        else {
            return Err(crate::check::under(&root.base, &candidate.dir));
        };
        self.apply_policy(source, candidate, &mut report);
        let dir = match candidate.resolved {
            None => std::mem::take(&mut report.dir),
            // The report's folder is the resolved one, which the entry no longer needs.
            Some(_) => crate::check::under_reusing(&root.base, &candidate.dir, &mut report.dir),
        };
        let entry = self.entry_from(root, report, previous.get(&dir));
        Ok((dir, entry))
    }

    /// How the index reads and checks a skill file: the frontmatter only.
    fn how(&self) -> How<'_> {
        How {
            parser: &self.config.parser,
            limit: self.config.file_limit,
            reading: Reading::Metadata,
        }
    }

    /// A candidate read and checked as the index reads it (the frontmatter only), with the
    /// Codex policy applied.
    fn report_of(
        &self,
        root: &RootState,
        source: &dyn SkillSource,
        candidate: &SourceCandidate,
    ) -> SkillReport {
        let mut report = crate::check::check(source, &root.base, candidate, self.how());
        self.apply_policy(source, candidate, &mut report);
        report
    }

    /// Applies the Codex policy to a report's frontmatter, in place (a report is large).
    fn apply_policy(
        &self,
        source: &dyn SkillSource,
        candidate: &SourceCandidate,
        report: &mut SkillReport,
    ) {
        if let Some(parsed) = &mut report.parsed {
            crate::load::apply_codex_policy(
                &self.config,
                source,
                &candidate.dir,
                &mut parsed.frontmatter,
            );
        }
    }

    /// Turns a checked skill folder into an index entry, keeping the last good record when
    /// the new version cannot be loaded.
    fn entry_from(&self, root: &RootState, report: SkillReport, previous: Option<&Entry>) -> Entry {
        // Strict: a skill the validator fails (its file misnamed, too) is no record.
        let refused = self.config.strict && !report.is_valid();
        // Most skills have no diagnostics: share one empty slice instead of a header each.
        static NONE: std::sync::OnceLock<Arc<[Diagnostic]>> = std::sync::OnceLock::new();
        let diagnostics: Arc<[Diagnostic]> = if report.diagnostics.is_empty() {
            Arc::clone(NONE.get_or_init(|| Arc::from(Vec::new())))
        } else {
            report.diagnostics.into()
        };
        // Made to its size by the check: moved into the record when there is one.
        let mut file = Some(report.file);
        let record = report.parsed.and_then(|mut parsed| {
            if refused {
                return None;
            }
            let name = parsed.take_lenient_name()?;
            let (description, frontmatter) = SkillRecord::split_frontmatter(parsed.frontmatter);
            Some(Arc::new(SkillRecord {
                name,
                description,
                layer: root.root.layer,
                plugin: root.plugin.clone(),
                path: file.take()?,
                frontmatter,
                body_offset: parsed.body_offset,
                diagnostics: Arc::clone(&diagnostics),
                remote: root.remote.clone(),
            }))
        });
        let (record, diagnostics) = match (record, previous.and_then(|p| p.record.clone())) {
            (Some(r), _) => (Some(r), diagnostics),
            (None, Some(last_good)) => {
                let mut kept = diagnostics.to_vec();
                kept.push(Diagnostic::new(
                    Rule::FileUnreadable,
                    Severity::Info,
                    "this version cannot be loaded; the last good version stays indexed until it is fixed",
                ));
                (Some(last_good), kept.into())
            }
            (None, None) => (None, diagnostics),
        };
        // The file is the record's path whenever there is a record: keep one copy.
        let file = file.filter(|file| record.as_ref().is_none_or(|r| r.path != *file));
        Entry::new(record, file, diagnostics)
    }

    pub(crate) fn rescan_all(&self, writer: &mut Writer) {
        // The scans and the snapshot's build are handed to the reading threads at once: a
        // hand-over from outside them wakes one and waits to be woken in turn (about 30 us
        // when they sleep), and a build made four of them. As one job, a reading thread
        // that takes it up while it waits inside another (a first search's build) returns
        // to that one only once the whole rescan is done: later, never stuck.
        let snapshot = self.reading(|| {
            // The records are gathered from the scans as they are, and the maps made while
            // the snapshot is built (`join` offers the build to another reading thread: the
            // map of 1,700 skills took 120 us with the other core idle). The records are
            // the maps' unless a folder was read twice in a scan, which its map resolves
            // (the later read stays): then they are gathered again, from the maps. Past
            // `BESIDE_THE_BUILD` entries held out of their maps, a scan's go into its map
            // at once, as before: held beside the build, the lists of 100,000 skills raised
            // the peak memory of `list` by a megabyte or two.
            let mut held = 0;
            let scans: Vec<Scan> = (0..writer.roots.len())
                .map(|i| {
                    let previous = std::mem::take(&mut writer.roots[i].entries);
                    let scan = self.scan_root_found(&writer.roots[i], &previous);
                    if held + scan.unmapped() > BESIDE_THE_BUILD {
                        return scan.mapped();
                    }
                    held += scan.unmapped();
                    scan
                })
                .collect();
            writer.generation += 1;
            let (records, findings) = gathered(scans.iter().map(Scan::entries));
            let made = &*writer;
            // A build that panics leaves the maps made, as a rescan that made them first did.
            let (maps, snapshot) = rayon::join(
                || {
                    scans
                        .into_iter()
                        .map(Scan::into_entries)
                        .collect::<Vec<_>>()
                },
                || {
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        self.snapshot_of(made, records, findings)
                    }))
                },
            );
            let mut read_twice = false;
            for (root, (entries, twice)) in writer.roots.iter_mut().zip(maps) {
                root.entries = entries;
                read_twice |= twice;
            }
            let snapshot = snapshot.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            if read_twice {
                return self.snapshot_of_maps(writer);
            }
            snapshot
        });
        // A rescan reads no folder as changed, and a record holds no body: an edit of a
        // body, a script or a reference alone moves no record. Subscribers are told of the
        // rescan even with no change to name, so a session checks its active skills' files
        // (`active_skill_outdated` after a host's reload, or the watcher's overflow).
        self.swap_in(writer, snapshot, &[], Tell::EvenNothing);
    }

    /// Rereads the root read through `source` (a source's notifier asked) and publishes,
    /// telling subscribers even when no record changed.
    fn rescan_source(&self, source: &Arc<dyn SkillSource>) {
        let mut writer = self.writer.lock();
        let Some(i) = writer
            .roots
            .iter()
            .position(|r| Arc::ptr_eq(&r.source, source))
        else {
            return;
        };
        let previous = std::mem::take(&mut writer.roots[i].entries);
        writer.roots[i].entries = self.scan_root(&writer.roots[i], &previous);
        self.publish_telling(&mut writer, &[], Tell::EvenNothing);
    }

    /// Rescans one root (by path) from scratch.
    /// Every root with this path is rescanned: one folder may be a root of two layers.
    pub(crate) fn rescan_root(&self, writer: &mut Writer, root: &Path) {
        for i in 0..writer.roots.len() {
            if writer.roots[i].base == root {
                let previous = std::mem::take(&mut writer.roots[i].entries);
                writer.roots[i].entries = self.scan_root(&writer.roots[i], &previous);
            }
        }
    }

    /// Re-reads the given skill folders of a root as a full scan would read them: a folder
    /// with `SKILL.md` (or a misnamed `skill.md`) is (re)read; a folder without one, or one
    /// that discovery skips (hidden, `node_modules`, `target`), is dropped. A folder reached
    /// through a link needs the whole root (discovery skips links into regions already
    /// walked), so the root is rescanned instead.
    pub(crate) fn refresh_dirs(&self, writer: &mut Writer, root: &Path, dirs: &[PathBuf]) {
        let through_link = |d: &PathBuf| {
            d.ancestors()
                .take_while(|a| *a != root)
                .any(|a| std::fs::symlink_metadata(a).is_ok_and(|m| m.file_type().is_symlink()))
        };
        if dirs.iter().any(through_link) {
            self.rescan_root(writer, root);
            return;
        }
        // One folder may be a root of two layers: refresh every root with this path.
        for state in writer.roots.iter_mut().filter(|r| r.base == root) {
            self.refresh_state(state, root, dirs);
        }
    }

    fn refresh_state(&self, state: &mut RootState, root: &Path, dirs: &[PathBuf]) {
        // Read through the source's scan view, as a scan reads (for a folder: a handle on
        // it, so each read walks only the path below the root).
        let view = state.source.for_scan();
        let source = view.as_deref().unwrap_or(state.source.as_ref());
        let updates: Vec<(PathBuf, Option<Entry>)> = self.reading(|| {
            dirs.par_iter()
                .map(|dir| {
                    let rel = dir.strip_prefix(root).ok().and_then(|rel| {
                        let mut parts = Vec::new();
                        for c in rel.components() {
                            match c {
                                Component::Normal(name)
                                    if !skills_storage::skipped_folder(name) =>
                                {
                                    parts.push(name.to_str()?);
                                }
                                _ => return None,
                            }
                        }
                        Some(parts.join("/"))
                    });
                    // A skipped folder, or one no relative path names: nothing to read there.
                    let Some(rel) = rel else {
                        return (dir.clone(), None);
                    };
                    // Read as a scan reads a folder expected to hold `SKILL.md` (no folder
                    // reached here is through a link); a folder where it is not found is
                    // asked about alone, as the source's discovery would see it.
                    let expected = SourceCandidate {
                        dir: if rel.is_empty() { ".".to_owned() } else { rel },
                        file: skills_storage::SKILL_FILE.to_owned(),
                        misnamed: false,
                        resolved: None,
                    };
                    let read = self.read_expected(state, source, &expected, &state.entries);
                    (dir.clone(), read.map(|(_, entry)| entry))
                })
                .collect()
        });
        for (dir, entry) in updates {
            match entry {
                Some(e) => {
                    state.entries.insert(dir, e);
                }
                None => {
                    state.entries.remove(&dir);
                }
            }
        }
    }

    /// Builds a snapshot from every root's entries, publishes it, and tells subscribers.
    pub(crate) fn publish(&self, writer: &mut Writer, changed_dirs: &[PathBuf]) {
        self.publish_telling(writer, changed_dirs, Tell::Changes);
    }

    /// [`publish`](Self::publish), telling batch subscribers as `tell` says.
    fn publish_telling(&self, writer: &mut Writer, changed_dirs: &[PathBuf], tell: Tell) {
        let snapshot = self.next_snapshot(writer);
        self.swap_in(writer, snapshot, changed_dirs, tell);
    }

    /// The next generation's snapshot, of every root's entries.
    fn next_snapshot(&self, writer: &mut Writer) -> Snapshot {
        writer.generation += 1;
        self.snapshot_of_maps(writer)
    }

    /// The snapshot of the writer's generation, of the records in its roots' maps.
    fn snapshot_of_maps(&self, writer: &Writer) -> Snapshot {
        let (records, findings) = gathered(writer.roots.iter().map(|root| root.entries.iter()));
        self.snapshot_of(writer, records, findings)
    }

    /// Makes `snapshot` (of the writer's generation) the current one and tells subscribers;
    /// under the writer's lock (`writer`), so that publications are told in their order.
    fn swap_in(&self, writer: &Writer, snapshot: Snapshot, changed_dirs: &[PathBuf], tell: Tell) {
        let snapshot = Arc::new(snapshot);
        let old = self.current.swap(Arc::clone(&snapshot));
        self.tell(writer.generation, (&old, &snapshot), changed_dirs, tell);
    }

    /// The snapshot of the writer's current generation, built from `records` and
    /// `findings` on the reading threads, its search index kept current.
    fn snapshot_of(
        &self,
        writer: &Writer,
        records: Vec<Arc<SkillRecord>>,
        findings: Vec<Findings>,
    ) -> Snapshot {
        let sources = writer.roots.iter().map(RootState::place).collect();
        // One folder on disk is discovered with each resolved folder once; any other source
        // (a plugin's) may name one folder twice.
        let folders = match writer.roots.as_slice() {
            [only] if matches!(only.root.source, RootSource::Folder(_)) => Folders::Distinct,
            _ => Folders::MayRepeat,
        };
        // On the reading threads, as the scan was: a build that never searches then starts
        // no other pool (rayon's global one is two more threads beside the readers).
        let generation = writer.generation;
        // Plugins registered for a plugin manager: their skills rank below their layer's.
        let registered: Vec<String> = writer
            .roots
            .iter()
            .filter(|r| r.root.origin == RootOrigin::Registered)
            .filter_map(|r| r.root.plugin.clone())
            .collect();
        // What each skill needs is checked on the reading threads too, beside the build
        // (whose steps are mostly sequential: the other thread would wait), on the records as
        // loaded.
        let path = self.config.program_path.as_deref();
        let snapshot = self
            .reading(|| {
                let loaded = records.clone();
                let (snapshot, availability) = rayon::join(
                    || {
                        Snapshot::build(
                            generation,
                            records,
                            findings,
                            &self.config.order,
                            folders,
                            &registered,
                        )
                    },
                    // Its copy of the records is let go there too.
                    move || crate::available::Availability::check(&loaded, path),
                );
                snapshot.with_availability(availability)
            })
            .with_sources(sources)
            .with_readers(&self.readers);
        // Once searched, every publication keeps the search index current before the swap.
        snapshot.follow_search(&self.current.load());
        snapshot
    }

    /// Tells subscribers what changed from `old` to `new` (and batch subscribers an empty
    /// batch when `tell` asks for one); none are told anything when nobody listens.
    fn tell(
        &self,
        generation: u64,
        (old, new): (&Snapshot, &Snapshot),
        changed_dirs: &[PathBuf],
        tell: Tell,
    ) {
        let mut subscribers = self.subscribers.lock();
        if subscribers.is_empty() {
            // Nobody listens: no events to compute (the initial build of a large index
            // would otherwise make one per skill).
            return;
        }
        let events = diff(old, new, changed_dirs);
        tracing::debug!(
            generation,
            skills = new.len(),
            events = events.len(),
            "published snapshot"
        );
        if events.is_empty() && tell == Tell::Changes {
            return;
        }
        let batch: Arc<[ChangeEvent]> = events.into();
        subscribers.retain(|s| match s {
            Subscriber::Each(tx) => batch.iter().all(|e| tx.send(e.clone()).is_ok()),
            Subscriber::Batch(tx) => tx.send(Arc::clone(&batch)).is_ok(),
        });
    }
}

/// The records and diagnostics of a publication of roots, each root's `entries` in turn
/// ([`root_records`]).
fn gathered<'e, I: Iterator<Item = &'e Entry> + Clone>(
    roots: impl Iterator<Item = I>,
) -> (Vec<Arc<SkillRecord>>, Vec<Findings>) {
    let (mut records, mut findings) = (Vec::new(), Vec::new());
    for entries in roots {
        root_records(entries, &mut records, &mut findings);
    }
    (records, findings)
}

/// Adds a root's records and diagnostics (of its `entries`) to a publication's. A last good
/// record kept for a folder whose skill file is now another, and unreadable (a link pointed
/// elsewhere): its file may be read live through another folder of the root, or kept by
/// another such folder too. One file, one record: a live one wins, else the one kept for
/// the folder first in path order.
fn root_records<'e, I: Iterator<Item = &'e Entry> + Clone>(
    entries: I,
    records: &mut Vec<Arc<SkillRecord>>,
    findings: &mut Vec<Findings>,
) {
    let mut last_good = Vec::new();
    // Each record and diagnostics list is counted once more here: a write to memory
    // another thread made, asked for eight entries ahead.
    let mut ahead = entries.clone().skip(8);
    for entry in entries.clone() {
        if let Some(ahead) = ahead.next() {
            ahead.warm_counts();
        }
        match (&entry.record, entry.file_apart()) {
            (Some(r), Some(_)) => last_good.push((r, entry.dir())),
            (Some(r), None) => records.push(Arc::clone(r)),
            (None, _) => {}
        }
        findings.extend(entry.findings());
    }
    if last_good.is_empty() {
        return;
    }
    let live: std::collections::HashSet<&Path> = entries
        .filter(|e| e.file_apart().is_none())
        .filter_map(|e| e.record.as_ref().map(|r| r.path.as_path()))
        .collect();
    last_good.sort_by(|a, b| (&a.0.path, a.1).cmp(&(&b.0.path, b.1)));
    last_good.dedup_by(|a, b| a.0.path == b.0.path);
    records.extend(
        last_good
            .into_iter()
            .filter(|(r, _)| !live.contains(r.path.as_path()))
            .map(|(r, _)| Arc::clone(r)),
    );
}

impl crate::watch::Rebuild for Shared {
    fn config(&self) -> &Config {
        &self.config
    }

    fn watched_roots(&self) -> Vec<PathBuf> {
        self.writer
            .lock()
            .roots
            .iter()
            .filter(|r| r.watched())
            .map(|r| r.base.clone())
            .collect()
    }

    fn reading(&self, f: &mut (dyn FnMut() + Send)) {
        self.reading(f);
    }

    fn rebuild(&self, plan: Plan) {
        let mut writer = self.writer.lock();
        if plan.full {
            tracing::info!("watches set, event queue overflow or watch error: full rescan");
            self.rescan_all(&mut writer);
            return;
        }
        if plan.root_rescans.is_empty() && plan.dirs.is_empty() && plan.newly_watched.is_empty() {
            return;
        }
        let mut changed = Vec::new();
        for root in &plan.root_rescans {
            self.rescan_root(&mut writer, root);
            if plan.touched_roots.contains(root) {
                changed.push(root.clone());
            }
        }
        for root in plan.newly_watched.difference(&plan.root_rescans) {
            self.rescan_root(&mut writer, root);
        }
        for (root, dirs) in plan.dirs {
            if plan.root_rescans.contains(&root) {
                changed.extend(dirs); // the rescan read them
                continue;
            }
            let dirs: Vec<PathBuf> = dirs.into_iter().collect();
            if !plan.newly_watched.contains(&root) {
                self.refresh_dirs(&mut writer, &root, &dirs); // else the rescan read them
            }
            changed.extend(dirs);
        }
        self.publish(&mut writer, &changed);
    }
}

/// What a publication tells its batch subscribers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tell {
    /// Its changes, if it has any.
    Changes,
    /// Its changes, and an empty batch when it has none (a rescan: what changed may be in
    /// no record).
    EvenNothing,
}

/// A listener of [`SkillIndex::subscribe`] or [`SkillIndex::subscribe_batches`].
#[derive(Debug)]
pub(crate) enum Subscriber {
    /// One message per event.
    Each(Sender<ChangeEvent>),
    /// One message per publication.
    Batch(Sender<Arc<[ChangeEvent]>>),
}

impl Drop for SkillIndex {
    fn drop(&mut self) {
        if let Some(w) = self.watcher.take() {
            w.stop();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};
    use std::sync::Arc;

    use super::{Entries, Entry};

    fn entry(file: &str) -> Entry {
        Entry::new(None, Some(PathBuf::from(file)), Arc::from(Vec::new()))
    }

    /// A folder is found, replaced and removed by its path whether the table reads it from
    /// the entry's file (its folder) or holds it apart (a file elsewhere, or none); only
    /// the second kind holds a copy.
    #[test]
    fn entries_are_found_by_folder_held_apart_or_not() {
        // (folder, the entry's file, whether the folder is held apart)
        let table = [
            ("/r/a", "/r/a/SKILL.md", false),
            ("/r/b", "/r/b/skill.md", false),
            ("/r/c", "/elsewhere/c/SKILL.md", true),
            ("/r/d", "", true),
            ("/r/e/f", "/r/e/f/SKILL.md", false),
            ("/r/e", "/r/e", true),
        ];
        let mut entries = Entries::default();
        for (dir, file, _) in table {
            entries.insert(PathBuf::from(dir), entry(file));
        }
        for (dir, file, apart) in table {
            let found = entries.get(Path::new(dir)).expect("found by its folder");
            assert_eq!(found.file(), Path::new(file), "{dir}");
            let held = entries
                .iter()
                .find(|h| h.dir() == Path::new(dir))
                .expect("listed");
            let held_apart = held.apart.as_ref().is_some_and(|a| a.dir.is_some());
            assert_eq!(held_apart, apart, "{dir}");
        }
        assert_eq!(entries.iter().count(), table.len());
        // Replaced in place: the folder kept, the file changed, and the other way round.
        entries.insert(PathBuf::from("/r/a"), entry("/elsewhere/a/SKILL.md"));
        entries.insert(PathBuf::from("/r/c"), entry("/r/c/SKILL.md"));
        assert_eq!(entries.iter().count(), table.len());
        let a = entries.get(Path::new("/r/a")).expect("still there");
        assert_eq!(a.file(), Path::new("/elsewhere/a/SKILL.md"));
        let c = entries.get(Path::new("/r/c")).expect("still there");
        assert_eq!(c.file(), Path::new("/r/c/SKILL.md"));
        entries.remove(Path::new("/r/e"));
        assert!(entries.get(Path::new("/r/e")).is_none());
        assert!(
            entries.get(Path::new("/r/e/f")).is_some(),
            "its subfolder stays"
        );
        assert!(entries.get(Path::new("/r")).is_none());
    }
}
