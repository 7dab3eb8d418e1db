//! The root options every index command shares (`--root`, `--no-defaults`, `--app`,
//! `--preset`, `--depth`, `--strict`), and building the index from them.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use skills_executor::UrlRoots;
use skills_index::{SkillIndex, SkillIndexBuilder};
use skills_mcp::{BearerToken, McpServer, McpSource};
use skills_model::Layer;
use skills_remote::{Lock, RemoteSource};
use skills_storage::{EmbeddedSource, Preset, RootsConfig, SkillSource, MAX_ROOT_DEPTH};

/// The skills `skillctl` ships, served as the plugin `builtin` unless `--no-defaults`.
static BUILTIN: &[(&str, &[u8])] = &[(
    "skill-creator/SKILL.md",
    include_bytes!("../builtin/skill-creator/SKILL.md"),
)];

/// The MCP servers started for the roots, by label.
pub(crate) type Started = Vec<(String, Arc<dyn SkillSource>)>;

#[derive(Debug, clap::Args)]
pub(crate) struct RootArgs {
    /// A root: LAYER=DIR, where LAYER is enterprise, personal, project or plugin:ID; or
    /// LAYER=https://HOST[/PATH], a well-known skills index (http:// only on loopback).
    #[arg(long = "root", value_name = "LAYER=DIR|URL")]
    roots: Vec<String>,
    /// How often a URL root asks its origin for a new index (e.g. 30s, 5m).
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = humantime::parse_duration)]
    poll_interval: std::time::Duration,
    /// Read only the roots given with --root.
    #[arg(long)]
    no_defaults: bool,
    /// A host application name: adds `~/.NAME/skills` and `PROJECT/.NAME/skills`.
    #[arg(
        long,
        value_name = "NAME",
        help = "A host application name: adds ~/.NAME/skills and <project>/.NAME/skills"
    )]
    app: Option<String>,
    /// Also read another agent's folders: claude or codex (repeatable). Codex also reads
    /// each skill's agents/openai.yaml (allow_implicit_invocation: false hides it from the
    /// model).
    #[arg(long, value_name = "NAME")]
    preset: Vec<String>,
    /// How deep below a root to search for skills (1 to 6).
    #[arg(long, default_value_t = 1)]
    depth: usize,
    /// Index only skills that pass the strict rules.
    #[arg(long)]
    strict: bool,
    /// An MCP server serving the skills extension, by a label of yours: LABEL=COMMAND
    /// (stdio; the command's words split at spaces, no quoting) or LABEL=https://HOST/PATH
    /// (streamable HTTP; http:// only on loopback). Place it with --root LAYER=mcp:LABEL;
    /// unplaced, it is the plugin LABEL (its skills LABEL:name). Untrusted until
    /// --trust mcp:LABEL.
    #[arg(long = "mcp-server", value_name = "LABEL=COMMAND|URL")]
    mcp_servers: Vec<String>,
    /// A bearer token for an MCP server over HTTP: LABEL=FILE, a file only its owner may
    /// read (chmod 600), checked at start.
    #[arg(long = "mcp-token-file", value_name = "LABEL=FILE")]
    mcp_token_files: Vec<String>,
}

/// Whether URL roots load only what the project's `skills.lock` pins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pinning {
    /// Enforce the lock, when the project has one.
    Lock,
    /// Load what the indexes give (`skillctl lock` reads them so).
    Unpinned,
}

/// An index and the URL roots it reads.
pub(crate) struct Built {
    pub(crate) index: SkillIndex,
    pub(crate) remotes: Vec<Arc<RemoteSource>>,
    /// The MCP servers `--mcp-server` declared (each started once), by label.
    pub(crate) servers: Started,
}

/// The project root a lock belongs to: the nearest ancestor of the working directory
/// holding `.git`, else the working directory.
pub(crate) fn lock_path() -> Result<PathBuf> {
    let cwd = std::env::current_dir().context("the working directory")?;
    let root = skills_storage::project_root(&cwd).unwrap_or(cwd);
    Ok(root.join(skills_remote::LOCK_FILE))
}

impl RootArgs {
    pub(crate) fn build_index(&self, watch: bool) -> Result<SkillIndex> {
        Ok(self.build(watch, Pinning::Lock)?.index)
    }

    /// The index, with the URL roots it reads.
    pub(crate) fn build(&self, watch: bool, pinning: Pinning) -> Result<Built> {
        if !(1..=MAX_ROOT_DEPTH).contains(&self.depth) {
            bail!("--depth must be between 1 and {MAX_ROOT_DEPTH}");
        }
        let presets = self
            .preset
            .iter()
            .map(|p| {
                p.parse::<Preset>()
                    .map_err(|e| anyhow::anyhow!("--preset {p}: {e}"))
            })
            .collect::<Result<Vec<Preset>>>()?;
        let mut builder = SkillIndex::builder()
            .depth(self.depth)
            .strict(self.strict)
            .codex_metadata(presets.contains(&Preset::Codex))
            .watch(watch);
        if !self.no_defaults {
            builder = builder.plugin_source("builtin", Arc::new(EmbeddedSource::new(BUILTIN)));
            let config = presets
                .iter()
                .fold(RootsConfig::builder().app_name(self.app.clone()), |c, p| {
                    c.preset(*p)
                });
            builder = builder.default_roots(&config.build().context("default roots")?);
        }
        // The lock is read only when a URL root needs it.
        let has_remote = self.roots.iter().any(|spec| remote_spec(spec).is_some());
        let lock = match pinning {
            Pinning::Lock if has_remote => {
                let path = lock_path()?;
                Lock::read(&path)?.map(|lock| (lock, path))
            }
            Pinning::Lock | Pinning::Unpinned => None,
        };
        let mut remotes = Vec::new();
        let mut servers = self.mcp_servers()?;
        let mut started = Vec::new();
        for spec in &self.roots {
            builder = match remote_spec(spec) {
                Some((layer, url)) => {
                    let source = self.open_remote(spec, url, lock.as_ref())?;
                    remotes.push(Arc::clone(&source));
                    let layer = layer
                        .parse::<Layer>()
                        .with_context(|| format!("--root {spec:?}"))?;
                    builder.source(layer, source)
                }
                None => with_root(builder, spec, &mut servers, &mut started)?,
            };
        }
        for (label, server) in servers {
            let source = connect(server, &label)?;
            started.push((label.clone(), Arc::clone(&source)));
            builder = builder.plugin_source(&label, source);
        }
        let index = builder.build()?;
        self.warn_missing(&index, watch);
        Ok(Built {
            index,
            remotes,
            servers: started,
        })
    }

    /// A URL root's source: from its origin, else from the cache.
    fn open_remote(
        &self,
        spec: &str,
        url: &str,
        lock: Option<&(Lock, PathBuf)>,
    ) -> Result<Arc<RemoteSource>> {
        open_url(url, self.poll_interval, lock).with_context(|| format!("--root {spec:?}"))
    }

    /// How `register_plugin` opens a plugin root given as a URL: as `--root` does, under
    /// the project's lock as it is at the registration.
    pub(crate) fn url_roots(&self) -> UrlRoots {
        let poll = self.poll_interval;
        UrlRoots::new(move |url| {
            let path = lock_path()?;
            let lock = Lock::read(&path)?.map(|lock| (lock, path));
            let source: Arc<dyn SkillSource> = open_url(url, poll, lock.as_ref())?;
            Ok(source)
        })
    }

    /// How `register_plugin` reaches an MCP server given as a URL: over streamable HTTP,
    /// labelled by its URL, with no token (a token goes only to the server declared with it).
    pub(crate) fn mcp_urls(&self) -> UrlRoots {
        UrlRoots::new(|url| {
            let source: Arc<dyn SkillSource> = McpSource::connect(McpServer::registered_url(url)?)?;
            Ok(source)
        })
    }

    /// A root named on the command line that does not exist is most likely a typo: say so
    /// (default roots that do not exist are normal and stay quiet).
    fn warn_missing(&self, index: &SkillIndex, watch: bool) {
        for root in index.missing_roots() {
            let named = self.roots.iter().any(|spec| {
                spec.split_once('=')
                    .is_some_and(|(_, dir)| root.path() == Some(std::path::Path::new(dir)))
            });
            if named {
                let path = root
                    .path()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default();
                let what = if watch {
                    "it is watched for and read when it appears"
                } else {
                    "no skills are read from it"
                };
                let _ = writeln!(
                    std::io::stderr(),
                    "skillctl: warning: the {} root {} does not exist; {what}",
                    root.plugin
                        .as_deref()
                        .map_or_else(|| root.layer.to_string(), |id| format!("plugin:{id}")),
                    crate::out::one_line(&path)
                );
            }
        }
    }
}

/// A URL root's source, polled every `poll`, under `lock` when there is one. A start from
/// the cache is said once, by the source's own warning.
fn open_url(
    url: &str,
    poll: std::time::Duration,
    lock: Option<&(Lock, PathBuf)>,
) -> Result<Arc<RemoteSource>, skills_remote::RemoteError> {
    let mut builder = RemoteSource::builder(url)?.poll_interval(Some(poll));
    if let Some((lock, path)) = lock {
        let pins = lock.pins_for(builder.url(), path);
        builder = builder.pins(pins);
    }
    builder.open()
}

/// The layer and URL of a `--root LAYER=URL`, when its value is a URL.
fn remote_spec(spec: &str) -> Option<(&str, &str)> {
    let (layer, url) = spec.split_once('=')?;
    skills_storage::names_url(url).then_some((layer, url))
}

impl RootArgs {
    /// The servers `--mcp-server` declares, by label, not yet placed, with the tokens
    /// `--mcp-token-file` gives them.
    fn mcp_servers(&self) -> Result<BTreeMap<String, McpServer>> {
        let mut tokens = self.mcp_tokens()?;
        let mut out = BTreeMap::new();
        for spec in &self.mcp_servers {
            let (label, command) = spec.split_once('=').with_context(|| {
                format!("--mcp-server {spec:?}: expected LABEL=COMMAND or LABEL=URL")
            })?;
            if let Some(problem) = skills_index::plugin_id_problem(label) {
                bail!("--mcp-server {spec:?}: the label {label:?} {problem}");
            }
            let server = if skills_storage::names_url(command) {
                McpServer::http(label, command, tokens.remove(label))
                    .with_context(|| format!("--mcp-server {spec:?}"))?
            } else {
                let argv: Vec<String> = command.split_whitespace().map(str::to_owned).collect();
                if argv.is_empty() {
                    bail!("--mcp-server {spec:?}: no command");
                }
                McpServer::stdio(label, argv)
            };
            if out.insert(label.to_owned(), server).is_some() {
                bail!("--mcp-server {spec:?}: the label {label:?} is declared twice");
            }
        }
        if let Some(label) = tokens.keys().next() {
            bail!("--mcp-token-file {label}=...: no --mcp-server {label}=https://... is declared (a token is for a server over HTTP)");
        }
        Ok(out)
    }

    /// The tokens `--mcp-token-file LABEL=FILE` gives, by label: each file checked by the
    /// rule of every file holding a secret, and read once.
    fn mcp_tokens(&self) -> Result<BTreeMap<String, BearerToken>> {
        let mut out = BTreeMap::new();
        for spec in &self.mcp_token_files {
            let (label, file) = spec
                .split_once('=')
                .filter(|(_, file)| !file.is_empty())
                .with_context(|| format!("--mcp-token-file {spec:?}: expected LABEL=FILE"))?;
            let what = || format!("--mcp-token-file {label}: the token file {file}");
            let text =
                crate::secrets::read_private(std::path::Path::new(file)).with_context(what)?;
            let token = BearerToken::new(&text).with_context(what)?;
            if out.insert(label.to_owned(), token).is_some() {
                bail!("--mcp-token-file {label}: a token file is given twice for it");
            }
        }
        Ok(out)
    }
}

/// Starts a declared MCP server and lists its skills.
fn connect(server: McpServer, label: &str) -> Result<Arc<dyn SkillSource>> {
    let source = McpSource::connect(server).with_context(|| format!("--mcp-server {label}"))?;
    Ok(source)
}

/// `builder` with the root `--root spec` names (LAYER=DIR, plugin:ID=DIR, or either
/// `=mcp:LABEL`, a server `--mcp-server` declared).
fn with_root(
    builder: SkillIndexBuilder,
    spec: &str,
    servers: &mut BTreeMap<String, McpServer>,
    started: &mut Started,
) -> Result<SkillIndexBuilder> {
    let (layer, dir) = spec
        .split_once('=')
        .filter(|(_, dir)| !dir.is_empty())
        .with_context(|| format!("--root {spec:?}: expected LAYER=DIR"))?;
    let server = match dir.strip_prefix("mcp:") {
        Some(label) => Some(
            servers
                .remove(label)
                .with_context(|| {
                    format!(
                        "--root {spec:?}: no --mcp-server {label} declared (or it is placed twice)"
                    )
                })
                .and_then(|s| connect(s, label))
                .inspect(|source| started.push((label.to_owned(), Arc::clone(source))))?,
        ),
        None => None,
    };
    Ok(match layer.strip_prefix("plugin:") {
        Some(id) => {
            let problem = skills_index::plugin_id_problem(id).or_else(|| {
                builder
                    .has_plugin(id)
                    .then_some("is already used by another root")
            });
            if let Some(problem) = problem {
                bail!("--root {spec:?}: plugin id {id:?} {problem}");
            }
            match server {
                Some(source) => builder.plugin_source(id, source),
                None => builder.plugin(id, dir),
            }
        }
        None => {
            let layer = layer
                .parse::<Layer>()
                .with_context(|| format!("--root {spec:?}"))?;
            if layer == Layer::Plugin {
                bail!("--root {spec:?}: a plugin root needs an id: plugin:ID=DIR");
            }
            match server {
                Some(source) => builder.source(layer, source),
                None => builder.root(layer, dir),
            }
        }
    })
}
