//! [`RemoteSource`]: a [`SkillSource`] over a well-known index. It starts from the origin
//! or, when the origin cannot be reached, from the cache's last verified state (saying so
//! once); a poller asks the origin again every interval (conditionally, with `ETag`, else
//! `Last-Modified`), and when the verified state changes it tells the index through its
//! `SourceNotifier`, which reads the root again and publishes the change. Every read of a
//! file is read from the cache and verified against the digest taken when its artifact
//! was verified.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use parking_lot::Mutex;
use skills_model::RemoteOrigin;
use skills_storage::{ReadError, SkillSource, SourceNotifier, MAX_LISTED_FILES};

use crate::disk::Cache;
use crate::held::{Ctx, State};
use crate::http::{Fetched, Fetcher, Validators};
use crate::unpack::Bounds;
use crate::{Digest, IndexDocument, IndexUrl, Pins, RemoteError, MAX_INDEX_BYTES};

/// How often a root asks its origin for a new index, unless told otherwise.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(300);

/// Configures a [`RemoteSource`].
#[derive(Debug, Clone)]
pub struct RemoteSourceBuilder {
    url: IndexUrl,
    cache_root: Option<PathBuf>,
    poll: Option<Duration>,
    pins: Option<Pins>,
    bounds: Bounds,
}

impl RemoteSourceBuilder {
    /// The index's URL.
    pub fn url(&self) -> &IndexUrl {
        &self.url
    }

    /// The folder the cache is kept under (default: the user's cache folder,
    /// `dirs::cache_dir()`, which honours `XDG_CACHE_HOME`).
    pub fn cache_dir(mut self, dir: impl Into<PathBuf>) -> RemoteSourceBuilder {
        self.cache_root = Some(dir.into());
        self
    }

    /// How often to ask the origin for a new index ([`DEFAULT_POLL_INTERVAL`] by default);
    /// `None` polls only when [`RemoteSource::poll_now`] asks.
    pub fn poll_interval(mut self, every: Option<Duration>) -> RemoteSourceBuilder {
        self.poll = every;
        self
    }

    /// Loads only the skills these pins name, at their digests (a project's lock).
    pub fn pins(mut self, pins: Pins) -> RemoteSourceBuilder {
        self.pins = Some(pins);
        self
    }

    /// Overrides the unpacking bounds (tests make them small).
    pub fn bounds(mut self, bounds: Bounds) -> RemoteSourceBuilder {
        self.bounds = bounds;
        self
    }

    /// Reads the index: from the origin, else from the cache (the source is then
    /// [`offline`](RemoteSource::offline)); fails when neither answers, or when the index is
    /// refused (no `$schema`, an unknown one). Starts the poller.
    pub fn open(self) -> Result<Arc<RemoteSource>, RemoteError> {
        let root = match self.cache_root {
            Some(root) => root,
            None => dirs::cache_dir().ok_or_else(|| RemoteError::Cache {
                path: PathBuf::from("(no cache folder)"),
                message: "the user has no cache folder (set XDG_CACHE_HOME)",
                source: std::io::ErrorKind::NotFound.into(),
            })?,
        };
        let (wake, woken) = crossbeam_channel::unbounded();
        let source = Arc::new(RemoteSource {
            cache: Cache::new(&root, &self.url),
            fetcher: Fetcher::new(&self.url),
            url: self.url,
            pins: self.pins,
            bounds: self.bounds,
            inner: Mutex::new(Inner::default()),
            notifier: Mutex::new(None),
            wake,
        });
        source.start()?;
        let weak = Arc::downgrade(&source);
        let poll = self.poll;
        let spawned = std::thread::Builder::new()
            .name("skills-remote-poll".into())
            .spawn(move || poll_loop(&weak, poll, &woken));
        if let Err(e) = spawned {
            tracing::warn!(index = %source.url, "cannot start the poller: {e}");
        }
        Ok(source)
    }
}

/// What a source knows now.
#[derive(Debug, Default)]
struct Inner {
    state: Arc<State>,
    validators: Validators,
    /// Why the source serves the cache, while the origin cannot be reached.
    offline: Option<String>,
}

/// Skills of a well-known index (discovery v0.2.0), verified and cached.
pub struct RemoteSource {
    url: IndexUrl,
    cache: Cache,
    fetcher: Fetcher,
    pins: Option<Pins>,
    bounds: Bounds,
    inner: Mutex<Inner>,
    notifier: Mutex<Option<SourceNotifier>>,
    wake: Sender<()>,
}

impl std::fmt::Debug for RemoteSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteSource")
            .field("url", &self.url)
            .field("cache", &self.cache.dir())
            .finish_non_exhaustive()
    }
}

impl RemoteSource {
    /// A source for the index at `url` (`https://HOST[/PATH]`, `http://` on loopback; see
    /// [`IndexUrl::parse`]).
    pub fn builder(url: &str) -> Result<RemoteSourceBuilder, RemoteError> {
        Ok(RemoteSourceBuilder {
            url: IndexUrl::parse(url)?,
            cache_root: None,
            poll: Some(DEFAULT_POLL_INTERVAL),
            pins: None,
            bounds: Bounds::default(),
        })
    }

    /// The index's URL.
    pub fn url(&self) -> &IndexUrl {
        &self.url
    }

    /// The origin (`https://HOST[:PORT]`).
    pub fn origin(&self) -> String {
        self.url.origin()
    }

    /// The cache folder of this root.
    pub fn cache_dir(&self) -> &Path {
        self.cache.dir()
    }

    /// Why the source serves the cache's last verified state, while its origin cannot be
    /// reached; `None` when online.
    pub fn offline(&self) -> Option<String> {
        self.inner.lock().offline.clone()
    }

    /// The skills with no verified version (refused by verification or by the lock), each
    /// with why.
    pub fn refused(&self) -> Vec<(String, String)> {
        let state = Arc::clone(&self.inner.lock().state);
        state
            .refused
            .iter()
            .map(|(n, w)| (n.clone(), w.clone()))
            .collect()
    }

    /// Every skill served, with the digest of its artifact as the index gives it.
    pub fn digests(&self) -> Vec<(String, Digest)> {
        let state = Arc::clone(&self.inner.lock().state);
        state
            .held
            .values()
            .map(|h| (h.entry.name.clone(), h.entry.digest))
            .collect()
    }

    /// Asks the poller to ask the origin now (a host's "check for updates", and tests).
    pub fn poll_now(&self) {
        let _ = self.wake.send(());
    }

    /// Asks the origin for the index (or reads the cache) and takes the state it leads to;
    /// whether the state changed.
    pub fn refresh(&self) -> Result<bool, RemoteError> {
        let (old, validators) = {
            let inner = self.inner.lock();
            (Arc::clone(&inner.state), inner.validators.clone())
        };
        let sent = (!old.held.is_empty() || !old.refused.is_empty()).then_some(&validators);
        let fetched = match self.fetcher.get(self.url.as_str(), MAX_INDEX_BYTES, sent) {
            Ok(fetched) => fetched,
            Err(e) if e.is_unreachable() => {
                let mut inner = self.inner.lock();
                if inner.offline.is_none() {
                    tracing::warn!(
                        "{} cannot be reached ({e}); serving the skills last verified, from the cache {}",
                        self.url,
                        self.cache.dir().display()
                    );
                    inner.offline = Some(e.to_string());
                }
                return Ok(false);
            }
            Err(e) => return Err(e),
        };
        let Fetched::Fresh(bytes, validators) = fetched else {
            self.inner.lock().offline = None;
            return Ok(false);
        };
        let document = IndexDocument::parse(&self.url, &bytes)?;
        let next = old.next(&document, &self.ctx(Some(&self.fetcher)));
        let changed = !next.same(&old);
        // An entry not served at the index's digest is asked for again at the next poll:
        // the index's validators are not kept until every entry is.
        let complete = document
            .entries
            .iter()
            .all(|e| next.held.get(&e.name).is_some_and(|h| h.entry == *e));
        let validators = if complete {
            validators
        } else {
            Validators::default()
        };
        if let Err(e) = self.cache.keep_index(&next.as_index(), &validators) {
            tracing::warn!(code = e.code(), "{e}");
        }
        let mut inner = self.inner.lock();
        inner.state = Arc::new(next);
        inner.validators = validators;
        inner.offline = None;
        Ok(changed)
    }

    fn ctx<'a>(&'a self, fetcher: Option<&'a Fetcher>) -> Ctx<'a> {
        Ctx {
            url: &self.url,
            cache: &self.cache,
            fetcher,
            pins: self.pins.as_ref(),
            bounds: self.bounds,
        }
    }

    /// The first read: the origin, else the cache.
    fn start(&self) -> Result<(), RemoteError> {
        let error = match self.refresh() {
            Ok(_) if self.inner.lock().offline.is_none() => return Ok(()),
            Ok(_) => None,
            Err(e) => Some(e),
        };
        if let Some(e) = error.filter(|e| !matches!(e, RemoteError::Status { status: 500.., .. })) {
            return Err(e);
        }
        let Some((bytes, validators)) = self.cache.index()? else {
            let why = self.offline().unwrap_or_else(|| "the origin failed".into());
            return Err(RemoteError::Cache {
                path: self.cache.dir().to_path_buf(),
                message: "the origin cannot be reached and nothing is cached",
                source: std::io::Error::other(why),
            });
        };
        let document = IndexDocument::parse(&self.url, &bytes)?;
        let state = State::default().next(&document, &self.ctx(None));
        let mut inner = self.inner.lock();
        inner.state = Arc::new(state);
        inner.validators = validators;
        inner
            .offline
            .get_or_insert_with(|| "the origin failed".into());
        Ok(())
    }

    /// The skill and file a source path names, and the held state.
    fn split(&self, path: &str) -> Option<(Arc<State>, String, String)> {
        let rel = skills_model::RelPath::file(path).ok()?;
        let (name, file) = rel.as_str().split_once('/')?;
        let state = Arc::clone(&self.inner.lock().state);
        Some((state, name.to_owned(), file.to_owned()))
    }
}

/// Polls every `every` (or only when woken) until the source is dropped.
fn poll_loop(source: &Weak<RemoteSource>, every: Option<Duration>, woken: &Receiver<()>) {
    loop {
        let waited = match every {
            Some(every) => woken.recv_timeout(every),
            None => woken.recv().map_err(|_| RecvTimeoutError::Disconnected),
        };
        if waited == Err(RecvTimeoutError::Disconnected) {
            return;
        }
        let Some(source) = source.upgrade() else {
            return;
        };
        match source.refresh() {
            Ok(true) => {
                let notifier = source.notifier.lock().clone();
                if let Some(notifier) = notifier {
                    notifier.changed();
                }
            }
            Ok(false) => {}
            Err(e) => tracing::warn!(index = %source.url, code = e.code(), "{e}"),
        }
    }
}

impl SkillSource for RemoteSource {
    /// The index's folder: a skill's path is `<folder>/<name>/SKILL.md`.
    fn location(&self) -> Option<String> {
        Some(self.url.folder())
    }

    /// `url:https://HOST[:PORT]`: every record of this source carries it.
    fn remote_origin(&self) -> Option<RemoteOrigin> {
        Some(RemoteOrigin::url(self.url.origin()))
    }

    /// The poller tells the index through it when the verified state changes.
    fn set_notifier(&self, notifier: SourceNotifier) {
        *self.notifier.lock() = Some(notifier);
    }

    fn skill_dirs(&self) -> Vec<String> {
        let state = Arc::clone(&self.inner.lock().state);
        let mut names: Vec<String> = state
            .held
            .keys()
            .chain(state.refused.keys())
            .cloned()
            .collect();
        names.sort();
        names
    }

    /// A file of a verified skill, read from the cache and verified again; a refused
    /// skill's `SKILL.md` reads as its error, which the index reports.
    fn read(&self, path: &str, limit: u64) -> Result<Vec<u8>, ReadError> {
        let (state, name, file) = self.split(path).ok_or(ReadError::NotFound)?;
        let Some(held) = state.held.get(&name) else {
            return match state.refused.get(&name) {
                Some(why) if file == skills_storage::SKILL_FILE => {
                    Err(ReadError::Io(std::io::Error::other(why.clone())))
                }
                _ => Err(ReadError::NotFound),
            };
        };
        let (_, expected) = held.files.get(&file).ok_or(ReadError::NotFound)?;
        let on_disk = held.folder.join(&file);
        let bytes = skills_storage::read_bounded(&on_disk, limit)?;
        let actual = Digest::of(&bytes);
        if actual != *expected {
            let e = RemoteError::Digest {
                url: on_disk.display().to_string(),
                expected: expected.to_string(),
                actual: actual.to_string(),
            };
            tracing::warn!(code = e.code(), "a cache file was altered: {e}");
            return Err(ReadError::Io(std::io::Error::other(format!(
                "the cache file was altered: {e}"
            ))));
        }
        Ok(bytes)
    }

    fn files(&self, skill_dir: &str) -> Vec<(String, u64)> {
        let state = Arc::clone(&self.inner.lock().state);
        let Some(held) = state.held.get(skill_dir) else {
            return Vec::new();
        };
        held.files
            .iter()
            .filter(|(path, _)| {
                path.split('/')
                    .all(|p| !p.starts_with('.') && p != "node_modules")
            })
            .take(MAX_LISTED_FILES)
            .map(|(path, (size, _))| (path.clone(), *size))
            .collect()
    }

    fn is_dir(&self, path: &str) -> bool {
        let Ok(rel) = skills_model::RelPath::folder(path) else {
            return false;
        };
        let rel = rel.as_str();
        let state = Arc::clone(&self.inner.lock().state);
        match rel.split_once('/') {
            None => state.held.contains_key(rel),
            Some((name, below)) => state.held.get(name).is_some_and(|h| {
                let prefix = format!("{below}/");
                h.files.keys().any(|f| f.starts_with(&prefix))
            }),
        }
    }
}
