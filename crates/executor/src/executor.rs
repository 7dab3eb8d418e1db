//! The `Executor`, shared by every session: the index, the host's policy, the audit sink,
//! and the plugins registered over the protocol. Also who a session works for
//! (`SessionContext`).

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;
use skills_index::{IndexError, SkillIndex};
use skills_model::SkillRecord;
use skills_storage::SkillSource;

use crate::audit::{AuditSink, NullSink};
use crate::export::{Exported, OtlpExporter};
use crate::origin::PluginOrigin;
use crate::{ExecError, Policy};

/// Serves sessions over one index, one policy and one audit sink. Cheap to clone; share it
/// across threads.
#[derive(Debug, Clone)]
pub struct Executor {
    inner: Arc<Inner>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) index: Arc<SkillIndex>,
    pub(crate) policy: Policy,
    pub(crate) sink: Arc<dyn AuditSink>,
    /// The OpenTelemetry exporter behind the sink, if any.
    export: Option<OtlpExporter>,
    /// Plugin ids registered over the protocol.
    pub(crate) registered: Mutex<HashSet<String>>,
    /// How a plugin root given as a URL is opened, when the host reads URL roots.
    url_roots: Option<UrlRoots>,
    /// How an MCP server given as a URL over the protocol is reached, when the host allows.
    mcp_urls: Option<UrlRoots>,
    /// The MCP servers the host declared (`--mcp-server LABEL=...`), by label: what
    /// `register_plugin` with `"server"` may name.
    pub(crate) servers: std::collections::BTreeMap<String, Arc<dyn skills_storage::SkillSource>>,
    /// The folders host write tools may not touch (every root and skill folder, as given
    /// and resolved), for the snapshot generation they were computed from.
    protected: Mutex<Option<(u64, Arc<[PathBuf]>)>>,
}

/// Configures an [`Executor`].
#[derive(Debug)]
pub struct ExecutorBuilder {
    index: Arc<SkillIndex>,
    policy: Policy,
    sink: Arc<dyn AuditSink>,
    export: Option<OtlpExporter>,
    url_roots: Option<UrlRoots>,
    mcp_urls: Option<UrlRoots>,
    servers: std::collections::BTreeMap<String, Arc<dyn skills_storage::SkillSource>>,
}

/// The error a host's URL-root opener gives.
pub type UrlRootError = Box<dyn std::error::Error + Send + Sync>;

/// How a host opens a plugin root given as a URL (`register_plugin` with an `https://`
/// root, `http://` on loopback): a well-known index as a source, with the host's own
/// cache, polling and lock. The executor knows no HTTP; the host brings it.
#[derive(Clone)]
pub struct UrlRoots(Arc<OpenUrlRoot>);

/// What opens a URL root.
type OpenUrlRoot = dyn Fn(&str) -> Result<Arc<dyn SkillSource>, UrlRootError> + Send + Sync;

impl UrlRoots {
    /// An opener of URL roots.
    pub fn new(
        open: impl Fn(&str) -> Result<Arc<dyn SkillSource>, UrlRootError> + Send + Sync + 'static,
    ) -> UrlRoots {
        UrlRoots(Arc::new(open))
    }
}

impl std::fmt::Debug for UrlRoots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("UrlRoots(..)")
    }
}

/// Whether a plugin root names a URL (`https://`, `http://`) rather than a folder.
fn url_root(root: &std::path::Path) -> Option<&str> {
    root.to_str().filter(|r| skills_storage::names_url(r))
}

impl ExecutorBuilder {
    /// Declares an MCP server the host started, by its label: `register_plugin` with
    /// `"server": LABEL` registers it as a plugin (a peer never starts a program).
    pub fn mcp_server(
        mut self,
        label: &str,
        source: Arc<dyn skills_storage::SkillSource>,
    ) -> ExecutorBuilder {
        self.servers.insert(label.to_owned(), source);
        self
    }

    /// Reaches MCP servers `register_plugin` names by URL (`"server": "https://..."`,
    /// `http://` on loopback) through `opener` (default: such a server is refused). The
    /// same opener type as [`url_roots`](Self::url_roots): the executor knows no HTTP.
    pub fn mcp_urls(mut self, opener: UrlRoots) -> ExecutorBuilder {
        self.mcp_urls = Some(opener);
        self
    }

    /// The policy (default: [`Policy::default`]).
    pub fn policy(mut self, policy: Policy) -> ExecutorBuilder {
        self.policy = policy;
        self
    }

    /// Where audit events are recorded (default: nowhere but `tracing`).
    pub fn audit_sink(mut self, sink: Arc<dyn AuditSink>) -> ExecutorBuilder {
        self.sink = sink;
        self
    }

    /// Reads plugin roots given as URLs (over the protocol too) through `opener` (default:
    /// a URL root is refused).
    pub fn url_roots(mut self, opener: UrlRoots) -> ExecutorBuilder {
        self.url_roots = Some(opener);
        self
    }

    /// Also export every audit event the sink records as an OpenTelemetry log record
    /// (default: none). The sink stays the record a call fails closed on: an event is
    /// offered to the exporter once the sink has recorded it, and the exporter never holds
    /// up a call (what its queue cannot take is dropped and counted).
    pub fn audit_export(mut self, exporter: OtlpExporter) -> ExecutorBuilder {
        self.export = Some(exporter);
        self
    }

    /// The executor.
    pub fn build(self) -> Executor {
        let sink: Arc<dyn AuditSink> = match &self.export {
            Some(exporter) => Arc::new(Exported {
                durable: self.sink,
                exporter: exporter.clone(),
            }),
            None => self.sink,
        };
        Executor {
            inner: Arc::new(Inner {
                index: self.index,
                policy: self.policy,
                sink,
                export: self.export,
                registered: Mutex::new(HashSet::new()),
                url_roots: self.url_roots,
                mcp_urls: self.mcp_urls,
                servers: self.servers,
                protected: Mutex::new(None),
            }),
        }
    }
}

impl Executor {
    /// A builder over `index`.
    pub fn builder(index: Arc<SkillIndex>) -> ExecutorBuilder {
        ExecutorBuilder {
            index,
            policy: Policy::default(),
            sink: Arc::new(NullSink),
            url_roots: None,
            mcp_urls: None,
            export: None,
            servers: std::collections::BTreeMap::new(),
        }
    }

    /// The OpenTelemetry exporter of the audit, if one was given
    /// ([`ExecutorBuilder::audit_export`]): its [`stats`](OtlpExporter::stats) say what
    /// it dropped.
    pub fn audit_export(&self) -> Option<&OtlpExporter> {
        self.inner.export.as_ref()
    }

    pub(crate) fn inner(&self) -> &Arc<Inner> {
        &self.inner
    }

    pub(crate) fn from_inner(inner: Arc<Inner>) -> Executor {
        Executor { inner }
    }

    /// The policy.
    pub fn policy(&self) -> &Policy {
        &self.inner.policy
    }

    /// The index.
    pub fn index(&self) -> &SkillIndex {
        &self.inner.index
    }

    /// Adds a plugin's skill folder to the index and returns once the new snapshot is
    /// published. A root registered with [`PluginOrigin::Protocol`] runs no scripts and no
    /// hooks unless the policy trusts it.
    pub fn register_plugin(
        &self,
        id: &str,
        root: impl Into<PathBuf>,
        origin: PluginOrigin,
    ) -> Result<crate::PluginRegistered, ExecError> {
        let root = root.into();
        let source = match url_root(&root) {
            Some(url) => Some(self.open_url_root(url)?),
            None => None,
        };
        let root = match source {
            Some(_) => root,
            None => std::path::absolute(&root).unwrap_or(root),
        };
        // A plugin manager's root never shadows a skill of the host's plugins.
        let from = match origin {
            PluginOrigin::Protocol => skills_storage::RootOrigin::Registered,
            PluginOrigin::Host => skills_storage::RootOrigin::Explicit,
        };
        let skills = self.register_marked(id, origin, |index| match source {
            Some(source) => index.register_plugin_source(id, source, from),
            None => index.register_plugin_from(id, &root, from),
        })?;
        Ok(crate::PluginRegistered {
            id: id.to_owned(),
            warnings: match url_root(&root) {
                Some(_) => Vec::new(),
                None => root_warnings(&root, self.inner.index.watching()),
            },
            root: root.display().to_string(),
            skills,
        })
    }

    /// Registers plugin `id` through `register`, and returns how many skills it brought. A
    /// plugin registered over the protocol is marked so before the snapshot is published,
    /// so no session ever sees its skills as trusted; it is unmarked on failure only if this
    /// call marked it (a refused registration under a host plugin's id must not make the
    /// host's plugin untrusted).
    fn register_marked(
        &self,
        id: &str,
        origin: PluginOrigin,
        register: impl FnOnce(&SkillIndex) -> Result<Arc<skills_index::Snapshot>, IndexError>,
    ) -> Result<usize, ExecError> {
        let marked =
            origin == PluginOrigin::Protocol && self.inner.registered.lock().insert(id.to_owned());
        let snapshot = register(&self.inner.index).inspect_err(|_| {
            if marked {
                self.inner.registered.lock().remove(id);
            }
        })?;
        Ok(snapshot
            .records()
            .iter()
            .filter(|r| r.plugin.as_deref() == Some(id))
            .count())
    }

    /// A URL root's source, through the host's opener.
    fn open_url_root(&self, url: &str) -> Result<Arc<dyn SkillSource>, ExecError> {
        open_through(
            self.inner.url_roots.as_ref(),
            url,
            "this host reads no URL roots (a host enables them with ExecutorBuilder::url_roots)",
        )
    }

    /// Registers, over the protocol, an MCP server as the plugin `id` (untrusted unless the
    /// host trusts its label): one the host declared under the label `server`, or one over
    /// streamable HTTP at the URL `server` (labelled by that URL), reached through the
    /// host's opener. Anything else is refused: a peer never starts a program.
    pub(crate) fn register_server(
        &self,
        id: &str,
        server: &str,
    ) -> Result<crate::PluginRegistered, ExecError> {
        let source = if skills_storage::names_url(server) {
            self.open_mcp_url(server)?
        } else {
            let Some(source) = self.inner.servers.get(server) else {
                return Err(ExecError::BadInput(format!(
                    "\"server\": {server:?} is neither a server label the host declared nor an https:// URL: a peer never starts a program (the host declares one with --mcp-server LABEL=COMMAND)"
                )));
            };
            Arc::clone(source)
        };
        let skills = self.register_marked(id, PluginOrigin::Protocol, |index| {
            index.register_plugin_source(id, source, skills_storage::RootOrigin::Registered)
        })?;
        Ok(crate::PluginRegistered {
            id: id.to_owned(),
            warnings: Vec::new(),
            root: format!("mcp:{server}"),
            skills,
        })
    }

    /// An MCP server given as a URL, through the host's opener.
    fn open_mcp_url(&self, url: &str) -> Result<Arc<dyn SkillSource>, ExecError> {
        open_through(
            self.inner.mcp_urls.as_ref(),
            url,
            "this host reaches no MCP servers by URL (a host enables them with ExecutorBuilder::mcp_urls)",
        )
    }

    /// Whether plugin `id` was registered over the protocol (and not by the host itself).
    pub(crate) fn registered_over_protocol(&self, id: &str) -> bool {
        self.inner.registered.lock().contains(id)
    }

    /// Removes a plugin's skills from the index and returns once the new snapshot is
    /// published. Sessions deactivate the plugin's active skills (audited) at their next
    /// call; [`Session::unregister_plugin`](crate::Session::unregister_plugin) does it at once for its own session.
    pub fn unregister_plugin(&self, id: &str) -> Result<crate::PluginUnregistered, ExecError> {
        let before = self
            .inner
            .index
            .snapshot()
            .records()
            .iter()
            .filter(|r| r.plugin.as_deref() == Some(id))
            .count();
        self.inner.index.unregister_plugin(id)?;
        self.inner.registered.lock().remove(id);
        Ok(crate::PluginUnregistered {
            id: id.to_owned(),
            removed: before,
        })
    }

    /// Rescans every root and returns the generation of the snapshot published.
    pub fn reload(&self) -> crate::Reloaded {
        crate::Reloaded {
            generation: self.inner.index.reload_now().generation(),
        }
    }
}

impl Inner {
    /// The root or skill folder `path` lies in (as written or as resolved), if any. A path
    /// whose links cannot be resolved (a loop) is taken to lie in one: fail closed.
    pub(crate) fn protected_folder(&self, path: &str) -> Option<PathBuf> {
        let folders = self.protected_folders();
        let t = crate::resolve::touched(path);
        let Some(resolved) = &t.resolved else {
            return Some(PathBuf::from(path));
        };
        let lexical = std::path::absolute(&t.lexical).unwrap_or(t.lexical);
        folders
            .iter()
            .find(|f| resolved.starts_with(f) || lexical.starts_with(f))
            .cloned()
    }

    fn protected_folders(&self) -> Arc<[PathBuf]> {
        let snapshot = self.index.snapshot();
        let generation = snapshot.generation();
        let mut cache = self.protected.lock();
        if let Some((g, folders)) = &*cache {
            if *g == generation {
                return Arc::clone(folders);
            }
        }
        let mut folders: Vec<PathBuf> = Vec::new();
        let roots = self.index.roots();
        let dirs = roots
            .iter()
            .filter_map(|r| {
                r.path()
                    .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.into()))
            })
            .chain(snapshot.records().iter().map(|r| r.dir().to_path_buf()));
        // Each also as the kernel reaches it, through its links, whether or not it exists
        // yet: a root not made yet, named through a linked home, is written by its real
        // path (canonicalising gave nothing for it, and left the real path open).
        for dir in dirs {
            if let Some(real) = crate::resolve::resolve_physical(&dir) {
                folders.push(real);
            }
            folders.push(dir);
        }
        folders.sort();
        folders.dedup();
        let folders: Arc<[PathBuf]> = folders.into();
        *cache = Some((generation, Arc::clone(&folders)));
        folders
    }

    /// Who registered `record`'s plugin, as things stand now.
    pub(crate) fn origin_of(&self, record: &SkillRecord) -> PluginOrigin {
        match record.plugin.as_deref() {
            Some(id) if self.registered.lock().contains(id) => PluginOrigin::Protocol,
            _ => PluginOrigin::Host,
        }
    }

    /// Whether `record`'s skill may run scripts and hooks.
    pub(crate) fn trusts(&self, record: &SkillRecord) -> bool {
        let origin = self.origin_of(record);
        self.policy.trusts_skill(record, origin)
    }

    /// Whether an active skill may run scripts and hooks: a skill loaded from a plugin
    /// registered over the protocol stays that plugin's, however its id is registered
    /// since (unregistered, its skill would have counted as a host plugin's; registered
    /// again by the host, the host's trust would have gone to the other folder's skill).
    /// `record` is the active skill's, `loaded` who had registered its plugin at its load.
    pub(crate) fn trusts_active(&self, record: &SkillRecord, loaded: PluginOrigin) -> bool {
        let origin = match (loaded, self.origin_of(record)) {
            (PluginOrigin::Host, PluginOrigin::Host) => PluginOrigin::Host,
            _ => PluginOrigin::Protocol,
        };
        self.policy.trusts_skill(record, origin)
    }
}

/// Who a session works for. Build one with [`SessionContext::builder`].
#[derive(Debug, Clone, Default)]
pub struct SessionContext {
    pub(crate) id: Option<String>,
    pub(crate) agent: Option<String>,
    pub(crate) tenant: Option<String>,
    pub(crate) environment: Option<String>,
    pub(crate) correlation_id: Option<String>,
    pub(crate) task_id: Option<String>,
}

/// Configures a [`SessionContext`].
#[derive(Debug, Clone, Default)]
pub struct SessionContextBuilder {
    context: SessionContext,
}

impl SessionContext {
    /// An empty context (a generated id, no agent, tenant or environment).
    pub fn builder() -> SessionContextBuilder {
        SessionContextBuilder::default()
    }
}

impl SessionContextBuilder {
    /// The session id (default: generated).
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.context.id = Some(id.into());
        self
    }
    /// The agent type (matched against a skill's `scope.agents`).
    pub fn agent(mut self, agent: impl Into<String>) -> Self {
        self.context.agent = Some(agent.into());
        self
    }
    /// The tenant (matched against `scope.tenants`).
    pub fn tenant(mut self, tenant: impl Into<String>) -> Self {
        self.context.tenant = Some(tenant.into());
        self
    }
    /// The environment (matched against `scope.environments`).
    pub fn environment(mut self, environment: impl Into<String>) -> Self {
        self.context.environment = Some(environment.into());
        self
    }
    /// The host's correlation id, copied into audit events.
    pub fn correlation_id(mut self, id: impl Into<String>) -> Self {
        self.context.correlation_id = Some(id.into());
        self
    }
    /// The task id, copied into audit events.
    pub fn task_id(mut self, id: impl Into<String>) -> Self {
        self.context.task_id = Some(id.into());
        self
    }
    /// The context.
    pub fn build(self) -> SessionContext {
        self.context
    }
}

/// What a registered plugin's caller should hear of its root: that it does not exist, or
/// is not a folder (no skills are read from it), as the CLI's `--root` warns.
fn root_warnings(root: &std::path::Path, watching: bool) -> Vec<String> {
    let problem = match std::fs::metadata(root) {
        Ok(meta) if meta.is_dir() => return Vec::new(),
        Ok(_) => "is not a folder; no skills are read from it",
        Err(_) if watching => "does not exist; it is watched for and read when it appears",
        Err(_) => "does not exist; no skills are read from it",
    };
    vec![format!("the plugin root {} {problem}", root.display())]
}

/// The source `opener` (a host's, for URL roots or MCP servers) gives for `url`; refused,
/// saying `missing`, when the host gave none.
fn open_through(
    opener: Option<&UrlRoots>,
    url: &str,
    missing: &str,
) -> Result<Arc<dyn SkillSource>, ExecError> {
    let failed = |source: UrlRootError| ExecError::RemoteRoot {
        url: url.to_owned(),
        source,
    };
    let opener = opener.ok_or_else(|| failed(missing.into()))?;
    (opener.0)(url).map_err(failed)
}
