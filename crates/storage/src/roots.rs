//! The layered skill roots and their defaults: which folders the enterprise, personal and
//! project layers read, where a host's own folders and the Claude Code and Codex presets add
//! to them, and the environment variables that override them.
//!
//! [`default_roots`] lists the roots of a [`RootsConfig`] in precedence order (enterprise,
//! personal, project; inside a layer, the default root first, then the host's, then the
//! presets'). Plugin roots are registered at run time by the index, not here. Roots are listed
//! whether or not they exist yet: the index watches for them to appear.
//!
//! ```
//! use skills_model::Layer;
//! use skills_storage::{default_roots, Preset, RootOrigin, RootsConfig};
//!
//! let config = RootsConfig::builder()
//!     .app_name(Some("omniforge".into()))
//!     .preset(Preset::ClaudeCode)
//!     .home("/home/ada".into())
//!     .cwd("/nowhere/in/particular".into())
//!     .env(|_| None)
//!     .build()
//!     .unwrap();
//! let personal: Vec<_> = default_roots(&config)
//!     .into_iter()
//!     .filter(|root| root.layer == Layer::Personal)
//!     .map(|root| (root.path().unwrap().to_path_buf(), root.origin))
//!     .collect();
//! assert_eq!(personal[0].0, std::path::Path::new("/home/ada/.agents/skills"));
//! assert_eq!(personal[1].1, RootOrigin::App);
//! assert_eq!(personal[2].1, RootOrigin::Preset(Preset::ClaudeCode));
//! ```

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

use crate::SkillSource;
use skills_model::Layer;
use thiserror::Error;

const ENV_HOME: &str = "AGENT_SKILLS_HOME";
const ENV_ENTERPRISE: &str = "AGENT_SKILLS_ENTERPRISE_DIR";
const ENV_PERSONAL: &str = "AGENT_SKILLS_PERSONAL_DIR";
const ENV_PROJECT: &str = "AGENT_SKILLS_PROJECT_DIR";

/// The environment variables that change the default roots, as (name, what it does), for
/// documentation. A relative path is taken from the working directory; an empty value counts
/// as unset.
pub const ENV_VARS: &[(&str, &str)] = &[
    (
        ENV_HOME,
        "Replaces the home directory under which the personal roots are found \
         (`~/.agents/skills`, `~/.NAME/skills`, the presets' folders).",
    ),
    (
        ENV_ENTERPRISE,
        "Replaces the enterprise root (by default `/etc/agent-skills` on Linux and other Unix, \
         `/Library/Application Support/AgentSkills` on macOS, `%ProgramData%\\AgentSkills` on \
         Windows). The presets' enterprise folders are still read.",
    ),
    (
        ENV_PERSONAL,
        "Replaces the personal root `~/.agents/skills`. The host's and the presets' personal \
         folders are still read.",
    ),
    (
        ENV_PROJECT,
        "Replaces the project root `<project>/.agents/skills`, where the project is the nearest \
         ancestor of the working directory holding `.git`; when set it is read even outside a \
         project. The host's and the presets' project folders are still read.",
    ),
];

/// The longest host application name, in characters.
const MAX_APP_NAME_LEN: usize = 64;

/// Why a roots configuration could not be made.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum RootsError {
    /// A host application name that cannot name a folder (`~/.NAME/skills`).
    #[error("invalid app name {name:?}: {reason}")]
    InvalidAppName {
        /// The rejected name.
        name: String,
        /// Why it was rejected.
        reason: &'static str,
    },
    /// A preset name that is neither `claude-code` (or `claude`) nor `codex`.
    #[error("unknown preset {0:?}: expected claude-code (or claude) or codex")]
    UnknownPreset(String),
}

impl RootsError {
    /// A stable code for programs.
    pub fn code(&self) -> &'static str {
        match self {
            RootsError::InvalidAppName { .. } => "ROOTS_INVALID_APP_NAME",
            RootsError::UnknownPreset(_) => "ROOTS_UNKNOWN_PRESET",
        }
    }
}

/// Another agent's folders to read as well, opt-in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Preset {
    /// Claude Code: `~/.claude/skills`, `<project>/.claude/skills`, and on Linux
    /// `/etc/claude-code/.claude/skills`.
    ClaudeCode,
    /// Codex: `~/.codex/skills`, `<project>/.codex/skills`, and on Unix `/etc/codex/skills`.
    Codex,
}

impl Preset {
    /// Every preset.
    pub const ALL: [Preset; 2] = [Preset::ClaudeCode, Preset::Codex];

    /// The name it is written as (`claude-code`, `codex`).
    pub fn as_str(self) -> &'static str {
        match self {
            Preset::ClaudeCode => "claude-code",
            Preset::Codex => "codex",
        }
    }

    /// The folder under the home directory and the project root (`.claude`, `.codex`).
    fn dot_dir(self) -> &'static str {
        match self {
            Preset::ClaudeCode => ".claude",
            Preset::Codex => ".codex",
        }
    }

    /// The preset's enterprise folder on `os`, if it has one there.
    fn enterprise_dir(self, os: Platform) -> Option<PathBuf> {
        match self {
            Preset::ClaudeCode if os == Platform::Linux => {
                Some(PathBuf::from("/etc/claude-code/.claude/skills"))
            }
            Preset::Codex if os.is_unix() => Some(PathBuf::from("/etc/codex/skills")),
            _ => None,
        }
    }
}

impl fmt::Display for Preset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Preset {
    type Err = RootsError;

    /// Reads `claude`, `claude-code` or `codex`, in any case.
    fn from_str(s: &str) -> Result<Preset, RootsError> {
        if s.eq_ignore_ascii_case("claude") || s.eq_ignore_ascii_case("claude-code") {
            Ok(Preset::ClaudeCode)
        } else if s.eq_ignore_ascii_case("codex") {
            Ok(Preset::Codex)
        } else {
            Err(RootsError::UnknownPreset(s.to_owned()))
        }
    }
}

/// Which rule put a root in the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RootOrigin {
    /// A built-in default (`/etc/agent-skills`, `~/.agents/skills`, `<project>/.agents/skills`).
    Default,
    /// An `AGENT_SKILLS_*_DIR` environment variable (see [`ENV_VARS`]).
    Env,
    /// The host application's name (`~/.NAME/skills`, `<project>/.NAME/skills`).
    App,
    /// An opt-in preset.
    Preset(Preset),
    /// Given by the host at run time (plugin roots, extra folders).
    Explicit,
    /// Registered at run time for a plugin manager the host does not vouch for (over a
    /// protocol): its skills never shadow a skill of their layer from a root of another
    /// origin, whatever their `priority`.
    Registered,
}

impl fmt::Display for RootOrigin {
    /// `default`, `env`, `app`, `preset:claude-code`, `preset:codex`, `explicit`,
    /// `registered`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RootOrigin::Default => f.write_str("default"),
            RootOrigin::Env => f.write_str("env"),
            RootOrigin::App => f.write_str("app"),
            RootOrigin::Preset(p) => write!(f, "preset:{p}"),
            RootOrigin::Explicit => f.write_str("explicit"),
            RootOrigin::Registered => f.write_str("registered"),
        }
    }
}

/// A root of skills: where they are read from, the layer they belong to, and why it is
/// listed. The one root type of the project: the index keeps these as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillRoot {
    /// The layer its skills belong to.
    pub layer: Layer,
    /// Where its skills are read from.
    pub source: RootSource,
    /// The plugin id, for roots of the plugin layer.
    pub plugin: Option<String>,
    /// Which rule put it in the list.
    pub origin: RootOrigin,
}

/// Where a root's skills are read from: a folder on disk, or another [`SkillSource`]. Every
/// root is read through a source; a folder is read through an [`FsSource`](crate::FsSource)
/// made for it.
#[derive(Debug, Clone)]
pub enum RootSource {
    /// A folder (it may not exist yet), watched for changes.
    Folder(PathBuf),
    /// Skills from memory or a binary, never watched.
    Source(Arc<dyn SkillSource>),
}

impl PartialEq for RootSource {
    /// Folders compare by path; other sources by identity.
    fn eq(&self, other: &RootSource) -> bool {
        match (self, other) {
            (RootSource::Folder(a), RootSource::Folder(b)) => a == b,
            (RootSource::Source(a), RootSource::Source(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl Eq for RootSource {}

/// Whether a root, a plugin root or a server given as text names a URL (`https://`,
/// `http://`) rather than a folder or a command: the one rule for every place that takes
/// either.
pub fn names_url(text: &str) -> bool {
    text.starts_with("https://") || text.starts_with("http://")
}

impl SkillRoot {
    /// A folder the host names itself, in any layer, without a plugin id.
    pub fn explicit(layer: Layer, path: impl Into<PathBuf>) -> SkillRoot {
        SkillRoot {
            layer,
            source: RootSource::Folder(path.into()),
            plugin: None,
            origin: RootOrigin::Explicit,
        }
    }

    /// A plugin's folder: its skills are reached as `<plugin>:<name>`.
    pub fn plugin(plugin: impl Into<String>, path: impl Into<PathBuf>) -> SkillRoot {
        SkillRoot {
            layer: Layer::Plugin,
            source: RootSource::Folder(path.into()),
            plugin: Some(plugin.into()),
            origin: RootOrigin::Explicit,
        }
    }

    /// A plugin whose skills come from a source that is not a folder (memory, a binary).
    pub fn plugin_source(plugin: impl Into<String>, source: Arc<dyn SkillSource>) -> SkillRoot {
        SkillRoot {
            layer: Layer::Plugin,
            source: RootSource::Source(source),
            plugin: Some(plugin.into()),
            origin: RootOrigin::Explicit,
        }
    }

    /// A root of `layer` read through `source` (a remote index or server, or memory), with
    /// no plugin id.
    pub fn source(layer: Layer, source: Arc<dyn SkillSource>) -> SkillRoot {
        SkillRoot {
            layer,
            source: RootSource::Source(source),
            plugin: None,
            origin: RootOrigin::Explicit,
        }
    }

    /// The folder, for a root on disk.
    pub fn path(&self) -> Option<&Path> {
        match &self.source {
            RootSource::Folder(path) => Some(path),
            RootSource::Source(source) => source.fs_root(),
        }
    }
}

type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// What the default roots depend on: the host's name, the presets, the working and home
/// directories, and the environment. Made with [`RootsConfig::builder`].
#[derive(Clone)]
pub struct RootsConfig {
    app_name: Option<String>,
    presets: Vec<Preset>,
    cwd: Option<PathBuf>,
    home: Option<PathBuf>,
    env: EnvLookup,
}

impl fmt::Debug for RootsConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RootsConfig")
            .field("app_name", &self.app_name)
            .field("presets", &self.presets)
            .field("cwd", &self.cwd)
            .field("home", &self.home)
            .finish_non_exhaustive()
    }
}

impl RootsConfig {
    /// A builder with nothing set: no app name, no presets, the process's working directory,
    /// the user's home directory and the process environment.
    pub fn builder() -> RootsConfigBuilder {
        RootsConfigBuilder::default()
    }

    /// The host application's name, if any.
    pub fn app_name(&self) -> Option<&str> {
        self.app_name.as_deref()
    }

    /// The presets, in the order given, without repeats.
    pub fn presets(&self) -> &[Preset] {
        &self.presets
    }

    /// The working directory the project root is searched from (absolute), if known.
    pub fn cwd(&self) -> Option<&Path> {
        self.cwd.as_deref()
    }

    /// The home directory the personal roots are under: `AGENT_SKILLS_HOME` if set, else the
    /// one given to the builder, else the user's.
    pub fn home(&self) -> Option<PathBuf> {
        self.env_path(ENV_HOME).or_else(|| self.home.clone())
    }

    /// The project root: the nearest ancestor of the working directory holding `.git`.
    pub fn project_root(&self) -> Option<PathBuf> {
        self.cwd.as_deref().and_then(project_root)
    }

    /// An environment variable as a path: unset or empty is `None`; a relative path is taken
    /// from the working directory.
    fn env_path(&self, name: &str) -> Option<PathBuf> {
        let value = (self.env)(name).filter(|v| !v.is_empty())?;
        let path = PathBuf::from(value);
        Some(match &self.cwd {
            Some(cwd) if path.is_relative() => cwd.join(path),
            _ => path,
        })
    }
}

/// Builds a [`RootsConfig`].
#[derive(Default)]
#[must_use]
pub struct RootsConfigBuilder {
    app_name: Option<String>,
    presets: Vec<Preset>,
    cwd: Option<PathBuf>,
    home: Option<PathBuf>,
    env: Option<EnvLookup>,
}

impl fmt::Debug for RootsConfigBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RootsConfigBuilder")
            .field("app_name", &self.app_name)
            .field("presets", &self.presets)
            .field("cwd", &self.cwd)
            .field("home", &self.home)
            .finish_non_exhaustive()
    }
}

impl RootsConfigBuilder {
    /// The host application's name: adds `~/.NAME/skills` and `<project>/.NAME/skills`. It
    /// must be 1 to 64 characters of ASCII letters, digits, `.`, `_` and `-`, not starting
    /// with `.` (checked by [`build`](Self::build)).
    pub fn app_name(mut self, name: Option<String>) -> Self {
        self.app_name = name;
        self
    }

    /// Reads a preset's folders as well; call once for each preset.
    pub fn preset(mut self, preset: Preset) -> Self {
        self.presets.push(preset);
        self
    }

    /// The working directory the project root is searched from (default: the process's).
    /// A relative path is taken from the process's working directory.
    pub fn cwd(mut self, cwd: PathBuf) -> Self {
        self.cwd = Some(cwd);
        self
    }

    /// The home directory (default: the user's, from `dirs::home_dir`).
    /// `AGENT_SKILLS_HOME` still overrides it.
    pub fn home(mut self, home: PathBuf) -> Self {
        self.home = Some(home);
        self
    }

    /// How environment variables are looked up (default: the process environment). Tests
    /// and hosts that must ignore the environment pass their own.
    pub fn env(mut self, lookup: impl Fn(&str) -> Option<String> + Send + Sync + 'static) -> Self {
        self.env = Some(Arc::new(lookup));
        self
    }

    /// The configuration, or why the app name is refused.
    pub fn build(self) -> Result<RootsConfig, RootsError> {
        if let Some(name) = &self.app_name {
            if let Some(reason) = app_name_problem(name) {
                return Err(RootsError::InvalidAppName {
                    name: name.clone(),
                    reason,
                });
            }
        }
        let mut presets = Vec::with_capacity(self.presets.len());
        for preset in self.presets {
            if !presets.contains(&preset) {
                presets.push(preset);
            }
        }
        let cwd = match self.cwd {
            Some(cwd) if cwd.is_relative() => std::path::absolute(&cwd).ok(),
            Some(cwd) => Some(cwd),
            None => std::env::current_dir().ok(),
        };
        Ok(RootsConfig {
            app_name: self.app_name,
            presets,
            cwd,
            home: self.home.or_else(dirs::home_dir),
            env: self
                .env
                .unwrap_or_else(|| Arc::new(|name: &str| std::env::var(name).ok())),
        })
    }
}

fn app_name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("it is empty")
    } else if name.len() > MAX_APP_NAME_LEN {
        Some("it is over 64 characters")
    } else if name.starts_with('.') {
        Some("it starts with '.'")
    } else if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    {
        Some("it holds a character other than ASCII letters, digits, '.', '_' and '-'")
    } else {
        None
    }
}

/// The platform, as far as default roots care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Platform {
    Linux,
    MacOs,
    Windows,
    OtherUnix,
    Other,
}

impl Platform {
    fn current() -> Platform {
        if cfg!(target_os = "linux") {
            Platform::Linux
        } else if cfg!(target_os = "macos") {
            Platform::MacOs
        } else if cfg!(windows) {
            Platform::Windows
        } else if cfg!(unix) {
            Platform::OtherUnix
        } else {
            Platform::Other
        }
    }

    fn is_unix(self) -> bool {
        matches!(
            self,
            Platform::Linux | Platform::MacOs | Platform::OtherUnix
        )
    }
}

/// The built-in enterprise root of `os`.
fn enterprise_default(os: Platform, config: &RootsConfig) -> Option<PathBuf> {
    match os {
        Platform::Linux | Platform::OtherUnix => Some(PathBuf::from("/etc/agent-skills")),
        Platform::MacOs => Some(PathBuf::from("/Library/Application Support/AgentSkills")),
        Platform::Windows => {
            let program_data = (config.env)("ProgramData")
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| r"C:\ProgramData".to_owned());
            Some(PathBuf::from(program_data).join("AgentSkills"))
        }
        Platform::Other => None,
    }
}

/// The default roots of `config`, in precedence order: enterprise, personal, project. Inside
/// a layer: the default root (or its environment override), then the host's
/// (`.NAME/skills`), then each preset's in the order given. Roots are listed whether or not
/// they exist; a path listed twice is kept at its first place only.
pub fn default_roots(config: &RootsConfig) -> Vec<SkillRoot> {
    default_roots_for(config, Platform::current())
}

fn default_roots_for(config: &RootsConfig, os: Platform) -> Vec<SkillRoot> {
    let mut roots = Listed(Vec::new());
    enterprise_roots(config, os, &mut roots);
    personal_and_project_roots(config, &mut roots);
    codex_project_roots(config, &mut roots);
    roots.0
}

/// Roots in the order listed, a path listed twice kept at its first place only.
struct Listed(Vec<SkillRoot>);

impl Listed {
    fn push(&mut self, layer: Layer, path: PathBuf, origin: RootOrigin) {
        if self.0.iter().any(|r: &SkillRoot| r.path() == Some(&path)) {
            tracing::debug!(path = %path.display(), %origin, "root listed twice, first kept");
            return;
        }
        self.0.push(SkillRoot {
            layer,
            source: RootSource::Folder(path),
            plugin: None,
            origin,
        });
    }
}

/// The enterprise layer's roots: the default (or its environment override), then each
/// preset's.
fn enterprise_roots(config: &RootsConfig, os: Platform, roots: &mut Listed) {
    match config.env_path(ENV_ENTERPRISE) {
        Some(path) => roots.push(Layer::Enterprise, path, RootOrigin::Env),
        None => {
            if let Some(path) = enterprise_default(os, config) {
                roots.push(Layer::Enterprise, path, RootOrigin::Default);
            }
        }
    }
    for &preset in &config.presets {
        if let Some(path) = preset.enterprise_dir(os) {
            roots.push(Layer::Enterprise, path, RootOrigin::Preset(preset));
        }
    }
}

/// The personal and project layers' roots: the same folders under the home directory and
/// the project root.
fn personal_and_project_roots(config: &RootsConfig, roots: &mut Listed) {
    let home = config.home();
    let project = config.project_root();
    for (layer, base, env_var) in [
        (Layer::Personal, home, ENV_PERSONAL),
        (Layer::Project, project, ENV_PROJECT),
    ] {
        match config.env_path(env_var) {
            Some(path) => roots.push(layer, path, RootOrigin::Env),
            None => {
                if let Some(base) = &base {
                    roots.push(
                        layer,
                        base.join(".agents").join("skills"),
                        RootOrigin::Default,
                    );
                }
            }
        }
        let Some(base) = base else {
            continue;
        };
        if let Some(app) = &config.app_name {
            roots.push(
                layer,
                base.join(format!(".{app}")).join("skills"),
                RootOrigin::App,
            );
        }
        for &preset in &config.presets {
            roots.push(
                layer,
                base.join(preset.dot_dir()).join("skills"),
                RootOrigin::Preset(preset),
            );
        }
    }
}

/// Codex also reads project skills from every folder between the repository root and the
/// working directory, and from the working directory when there is no repository.
fn codex_project_roots(config: &RootsConfig, roots: &mut Listed) {
    if config.presets.contains(&Preset::Codex) {
        for dir in codex_project_dirs(config) {
            for dot in [".codex", ".agents"] {
                roots.push(
                    Layer::Project,
                    dir.join(dot).join("skills"),
                    RootOrigin::Preset(Preset::Codex),
                );
            }
        }
    }
}

/// The folders below the repository root down to the working directory (outermost first),
/// or the working directory alone when it is in no repository.
fn codex_project_dirs(config: &RootsConfig) -> Vec<PathBuf> {
    let Some(cwd) = config.cwd.clone() else {
        return Vec::new();
    };
    let Some(project) = config.project_root() else {
        return vec![cwd];
    };
    let mut dirs: Vec<PathBuf> = cwd
        .ancestors()
        .take_while(|dir| *dir != project)
        .map(Path::to_path_buf)
        .collect();
    dirs.reverse();
    dirs
}

/// The project root of `cwd`: the nearest ancestor (`cwd` included) holding `.git`, a folder
/// or, as in a worktree, a file. `None` when there is none.
pub fn project_root(cwd: &Path) -> Option<PathBuf> {
    cwd.ancestors()
        .filter(|dir| !dir.as_os_str().is_empty())
        .find(|dir| std::fs::metadata(dir.join(".git")).is_ok_and(|m| m.is_dir() || m.is_file()))
        .map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + Send + Sync + 'static {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name| map.get(name).cloned()
    }

    /// A home folder and a project (with `.git`) with a subfolder to work in, in a tempdir.
    struct Fixture {
        _tmp: tempfile::TempDir,
        home: PathBuf,
        project: PathBuf,
        cwd: PathBuf,
    }

    fn fixture() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let project = tmp.path().join("work/proj");
        let cwd = project.join("src/deep");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(project.join(".git")).unwrap();
        std::fs::create_dir_all(&cwd).unwrap();
        Fixture {
            _tmp: tmp,
            home,
            project,
            cwd,
        }
    }

    fn builder(f: &Fixture, vars: &[(&str, &str)]) -> RootsConfigBuilder {
        RootsConfig::builder()
            .home(f.home.clone())
            .cwd(f.cwd.clone())
            .env(env(vars))
    }

    fn listed(roots: &[SkillRoot]) -> Vec<(Layer, PathBuf, RootOrigin)> {
        roots
            .iter()
            .map(|r| (r.layer, r.path().unwrap().to_path_buf(), r.origin.clone()))
            .collect()
    }

    #[test]
    fn project_root_is_the_nearest_ancestor_with_git() {
        let f = fixture();
        assert_eq!(project_root(&f.cwd), Some(f.project.clone()));
        assert_eq!(project_root(&f.project), Some(f.project.clone()));
        // A worktree's `.git` is a file, and a nearer one wins.
        let worktree = f.cwd.join("wt");
        std::fs::create_dir_all(worktree.join("sub")).unwrap();
        std::fs::write(worktree.join(".git"), "gitdir: elsewhere\n").unwrap();
        assert_eq!(project_root(&worktree.join("sub")), Some(worktree));
        // Outside any project inside the tempdir, nothing inside the tempdir is found.
        let found = project_root(&f.home);
        assert!(!found.is_some_and(|p| p.starts_with(f.home.parent().unwrap())));
    }

    #[test]
    fn defaults_on_linux() {
        let f = fixture();
        let config = builder(&f, &[]).build().unwrap();
        let roots = default_roots_for(&config, Platform::Linux);
        assert_eq!(
            listed(&roots),
            [
                (
                    Layer::Enterprise,
                    PathBuf::from("/etc/agent-skills"),
                    RootOrigin::Default
                ),
                (
                    Layer::Personal,
                    f.home.join(".agents/skills"),
                    RootOrigin::Default
                ),
                (
                    Layer::Project,
                    f.project.join(".agents/skills"),
                    RootOrigin::Default
                ),
            ]
        );
        assert!(roots.iter().all(|r| r.plugin.is_none()));
    }

    #[test]
    fn enterprise_defaults_per_platform() {
        let f = fixture();
        let enterprise = |vars: &[(&str, &str)], os| {
            let config = builder(&f, vars).build().unwrap();
            default_roots_for(&config, os)
                .into_iter()
                .filter(|r| r.layer == Layer::Enterprise)
                .map(|r| r.path().unwrap().to_path_buf())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            enterprise(&[], Platform::MacOs),
            [PathBuf::from("/Library/Application Support/AgentSkills")]
        );
        assert_eq!(
            enterprise(&[("ProgramData", r"D:\Data")], Platform::Windows),
            [PathBuf::from(r"D:\Data").join("AgentSkills")]
        );
        assert_eq!(
            enterprise(&[], Platform::Windows),
            [PathBuf::from(r"C:\ProgramData").join("AgentSkills")]
        );
        assert_eq!(
            enterprise(&[], Platform::OtherUnix),
            [PathBuf::from("/etc/agent-skills")]
        );
        assert!(enterprise(&[], Platform::Other).is_empty());
    }

    #[test]
    fn environment_overrides() {
        let f = fixture();
        let alt_home = f.home.parent().unwrap().join("alt-home");
        let alt_home = alt_home.to_str().unwrap();
        let config = builder(
            &f,
            &[
                ("AGENT_SKILLS_HOME", alt_home),
                ("AGENT_SKILLS_ENTERPRISE_DIR", "/opt/skills"),
                ("AGENT_SKILLS_PROJECT_DIR", "local-skills"),
                ("AGENT_SKILLS_PERSONAL_DIR", ""),
            ],
        )
        .app_name(Some("omniforge".into()))
        .build()
        .unwrap();
        let alt_home = PathBuf::from(alt_home);
        assert_eq!(config.home(), Some(alt_home.clone()));
        assert_eq!(
            listed(&default_roots_for(&config, Platform::Linux)),
            [
                (
                    Layer::Enterprise,
                    PathBuf::from("/opt/skills"),
                    RootOrigin::Env
                ),
                // An empty value counts as unset.
                (
                    Layer::Personal,
                    alt_home.join(".agents/skills"),
                    RootOrigin::Default
                ),
                (
                    Layer::Personal,
                    alt_home.join(".omniforge/skills"),
                    RootOrigin::App
                ),
                // A relative override is taken from the working directory.
                (Layer::Project, f.cwd.join("local-skills"), RootOrigin::Env),
                (
                    Layer::Project,
                    f.project.join(".omniforge/skills"),
                    RootOrigin::App
                ),
            ]
        );
        let config = builder(&f, &[("AGENT_SKILLS_PERSONAL_DIR", "/srv/me/skills")])
            .build()
            .unwrap();
        let personal: Vec<_> = default_roots_for(&config, Platform::Linux)
            .into_iter()
            .filter(|r| r.layer == Layer::Personal)
            .map(|r| (r.path().unwrap().to_path_buf(), r.origin))
            .collect();
        assert_eq!(
            personal,
            [(PathBuf::from("/srv/me/skills"), RootOrigin::Env)]
        );
    }

    #[test]
    fn app_name_and_presets_follow_the_default_of_their_layer() {
        let f = fixture();
        let config = builder(&f, &[])
            .app_name(Some("omniforge".into()))
            .preset(Preset::Codex)
            .preset(Preset::ClaudeCode)
            .preset(Preset::Codex)
            .build()
            .unwrap();
        assert_eq!(config.presets(), [Preset::Codex, Preset::ClaudeCode]);
        let codex = RootOrigin::Preset(Preset::Codex);
        let claude = RootOrigin::Preset(Preset::ClaudeCode);
        let (h, p) = (&f.home, &f.project);
        assert_eq!(
            listed(&default_roots_for(&config, Platform::Linux)),
            [
                (
                    Layer::Enterprise,
                    PathBuf::from("/etc/agent-skills"),
                    RootOrigin::Default
                ),
                (
                    Layer::Enterprise,
                    PathBuf::from("/etc/codex/skills"),
                    codex.clone()
                ),
                (
                    Layer::Enterprise,
                    PathBuf::from("/etc/claude-code/.claude/skills"),
                    claude.clone()
                ),
                (
                    Layer::Personal,
                    h.join(".agents/skills"),
                    RootOrigin::Default
                ),
                (
                    Layer::Personal,
                    h.join(".omniforge/skills"),
                    RootOrigin::App
                ),
                (Layer::Personal, h.join(".codex/skills"), codex.clone()),
                (Layer::Personal, h.join(".claude/skills"), claude.clone()),
                (
                    Layer::Project,
                    p.join(".agents/skills"),
                    RootOrigin::Default
                ),
                (Layer::Project, p.join(".omniforge/skills"), RootOrigin::App),
                (Layer::Project, p.join(".codex/skills"), codex.clone()),
                (Layer::Project, p.join(".claude/skills"), claude.clone()),
                // Codex: every folder between the repository root and the working folder.
                (Layer::Project, p.join("src/.codex/skills"), codex.clone()),
                (Layer::Project, p.join("src/.agents/skills"), codex.clone()),
                (
                    Layer::Project,
                    p.join("src/deep/.codex/skills"),
                    codex.clone()
                ),
                (
                    Layer::Project,
                    p.join("src/deep/.agents/skills"),
                    codex.clone()
                ),
            ]
        );
        // Claude Code's enterprise folder is Linux only; Codex's is any Unix.
        let on_mac: Vec<_> = default_roots_for(&config, Platform::MacOs)
            .into_iter()
            .filter(|r| r.layer == Layer::Enterprise)
            .map(|r| r.origin)
            .collect();
        assert_eq!(on_mac, [RootOrigin::Default, codex]);
        let on_windows = default_roots_for(&config, Platform::Windows);
        assert_eq!(
            on_windows
                .iter()
                .filter(|r| r.layer == Layer::Enterprise)
                .count(),
            1
        );
    }

    #[test]
    fn outside_a_project_there_are_no_project_roots_unless_overridden() {
        let f = fixture();
        let config = RootsConfig::builder()
            .home(f.home.clone())
            .cwd(f.home.clone())
            .app_name(Some("omniforge".into()))
            .env(env(&[]))
            .build()
            .unwrap();
        // The tempdir may sit inside a checkout on some machine: then there is a project.
        if config.project_root().is_none() {
            let roots = default_roots_for(&config, Platform::Linux);
            assert!(roots.iter().all(|r| r.layer != Layer::Project));
        }
        let config = RootsConfig::builder()
            .home(f.home.clone())
            .cwd(f.home.clone())
            .env(env(&[("AGENT_SKILLS_PROJECT_DIR", "/srv/project-skills")]))
            .build()
            .unwrap();
        let project: Vec<_> = default_roots_for(&config, Platform::Linux)
            .into_iter()
            .filter(|r| r.layer == Layer::Project)
            .map(|r| (r.path().unwrap().to_path_buf(), r.origin))
            .collect();
        assert_eq!(
            project,
            [(PathBuf::from("/srv/project-skills"), RootOrigin::Env)]
        );
    }

    #[test]
    fn duplicate_paths_keep_their_first_place() {
        let f = fixture();
        // The home directory is the project root: the project's folders repeat the personal ones.
        let config = RootsConfig::builder()
            .home(f.project.clone())
            .cwd(f.cwd.clone())
            .app_name(Some("omniforge".into()))
            .env(env(&[("AGENT_SKILLS_ENTERPRISE_DIR", "/etc/codex/skills")]))
            .preset(Preset::Codex)
            .build()
            .unwrap();
        assert_eq!(
            listed(&default_roots_for(&config, Platform::Linux)),
            [
                (
                    Layer::Enterprise,
                    PathBuf::from("/etc/codex/skills"),
                    RootOrigin::Env
                ),
                (
                    Layer::Personal,
                    f.project.join(".agents/skills"),
                    RootOrigin::Default
                ),
                (
                    Layer::Personal,
                    f.project.join(".omniforge/skills"),
                    RootOrigin::App
                ),
                (
                    Layer::Personal,
                    f.project.join(".codex/skills"),
                    RootOrigin::Preset(Preset::Codex)
                ),
                // Codex's folders between the repository root and the working folder.
                (
                    Layer::Project,
                    f.project.join("src/.codex/skills"),
                    RootOrigin::Preset(Preset::Codex)
                ),
                (
                    Layer::Project,
                    f.project.join("src/.agents/skills"),
                    RootOrigin::Preset(Preset::Codex)
                ),
                (
                    Layer::Project,
                    f.project.join("src/deep/.codex/skills"),
                    RootOrigin::Preset(Preset::Codex)
                ),
                (
                    Layer::Project,
                    f.project.join("src/deep/.agents/skills"),
                    RootOrigin::Preset(Preset::Codex)
                ),
            ]
        );
    }

    #[test]
    fn app_names_are_checked() {
        for good in ["omniforge", "my.app", "A_b-9", &"x".repeat(64)] {
            let config = RootsConfig::builder()
                .app_name(Some(good.to_owned()))
                .env(env(&[]))
                .build();
            assert_eq!(config.unwrap().app_name(), Some(good));
        }
        for bad in ["", ".hidden", "a/b", "a b", "..", "é", &"x".repeat(65)] {
            let err = RootsConfig::builder()
                .app_name(Some(bad.to_owned()))
                .build()
                .unwrap_err();
            assert_eq!(err.code(), "ROOTS_INVALID_APP_NAME", "{bad:?}");
        }
    }

    #[test]
    fn presets_parse_and_display() {
        assert_eq!("claude".parse::<Preset>().unwrap(), Preset::ClaudeCode);
        assert_eq!("Claude-Code".parse::<Preset>().unwrap(), Preset::ClaudeCode);
        assert_eq!("codex".parse::<Preset>().unwrap(), Preset::Codex);
        let err = "cursor".parse::<Preset>().unwrap_err();
        assert_eq!(err.code(), "ROOTS_UNKNOWN_PRESET");
        for preset in Preset::ALL {
            assert_eq!(preset.to_string().parse::<Preset>().unwrap(), preset);
        }
        assert_eq!(
            RootOrigin::Preset(Preset::ClaudeCode).to_string(),
            "preset:claude-code"
        );
    }

    #[test]
    fn relative_cwd_is_made_absolute_and_roots_are_in_layer_order() {
        let config = RootsConfig::builder()
            .cwd(PathBuf::from("some/where"))
            .env(env(&[]))
            .build()
            .unwrap();
        assert!(config.cwd().unwrap().is_absolute());
        let roots = default_roots(&config);
        assert!(roots.windows(2).all(|w| w[0].layer <= w[1].layer));
    }

    #[test]
    fn explicit_and_plugin_roots() {
        let root = SkillRoot::plugin("acme", "/plugins/acme/skills");
        assert_eq!(root.layer, Layer::Plugin);
        assert_eq!(root.plugin.as_deref(), Some("acme"));
        assert_eq!(root.origin, RootOrigin::Explicit);
        let root = SkillRoot::explicit(Layer::Project, "/x");
        assert_eq!((root.layer, root.plugin), (Layer::Project, None));
    }

    #[test]
    fn env_table_names_every_variable() {
        let names: Vec<_> = ENV_VARS.iter().map(|(name, _)| *name).collect();
        assert_eq!(names, [ENV_HOME, ENV_ENTERPRISE, ENV_PERSONAL, ENV_PROJECT]);
    }

    /// Codex outside a repository reads the working folder's skills; Claude Code alone
    /// reads no project skills there.
    #[test]
    fn codex_reads_the_working_folder_outside_a_repository() {
        let tmp = tempfile::tempdir().unwrap();
        let cwd = tmp.path().join("loose/folder");
        std::fs::create_dir_all(&cwd).unwrap();
        let project = |preset: Preset| -> Vec<PathBuf> {
            let config = RootsConfig::builder()
                .home(tmp.path().join("home"))
                .cwd(cwd.clone())
                .env(env(&[]))
                .preset(preset)
                .build()
                .unwrap();
            default_roots_for(&config, Platform::Linux)
                .into_iter()
                .filter(|r| r.layer == Layer::Project)
                .map(|r| r.path().unwrap().to_path_buf())
                .collect()
        };
        assert_eq!(
            project(Preset::Codex),
            [cwd.join(".codex/skills"), cwd.join(".agents/skills")]
        );
        assert!(project(Preset::ClaudeCode).is_empty());
    }
}
