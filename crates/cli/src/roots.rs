//! The root options every index command shares (`--root`, `--no-defaults`, `--app`,
//! `--preset`, `--depth`, `--strict`), and building the index from them.

use anyhow::{bail, Context, Result};
use skills_index::SkillIndex;
use skills_model::Layer;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use skills_storage::{default_roots, EmbeddedSource, Preset, RootsConfig};

/// The skills `skillctl` ships, served as the plugin `builtin` unless `--no-defaults`.
static BUILTIN: &[(&str, &[u8])] = &[(
    "skill-creator/SKILL.md",
    include_bytes!("../builtin/skill-creator/SKILL.md"),
)];

#[derive(Debug, clap::Args)]
pub(crate) struct RootArgs {
    /// A root: LAYER=DIR, where LAYER is enterprise, personal, project or plugin:ID.
    #[arg(long = "root", value_name = "LAYER=DIR")]
    roots: Vec<String>,
    /// Read only the roots given with --root.
    #[arg(long)]
    no_defaults: bool,
    /// A host application name: adds ~/.NAME/skills and <project>/.NAME/skills.
    #[arg(long, value_name = "NAME")]
    app: Option<String>,
    /// Also read another agent's folders: claude or codex (repeatable).
    #[arg(long, value_name = "NAME")]
    preset: Vec<String>,
    /// How deep below a root to search for skills (1 to 6).
    #[arg(long, default_value_t = 1)]
    depth: usize,
    /// Index only skills that pass the strict rules.
    #[arg(long)]
    strict: bool,
}

impl RootArgs {
    pub(crate) fn build_index(&self, watch: bool) -> Result<SkillIndex> {
        if !(1..=6).contains(&self.depth) {
            bail!("--depth must be between 1 and 6");
        }
        let mut builder = SkillIndex::builder()
            .depth(self.depth)
            .strict(self.strict)
            .watch(watch);
        // Plugin ids already taken: each names one root, as `SkillIndex::register_plugin`
        // requires, so that `<id>:<name>` is one skill.
        let mut plugin_ids: Vec<String> = Vec::new();
        // Roots already added: a folder given twice to one layer (an explicit root that is
        // also a default one) is read once, as `default_roots` does, or each of its skills
        // would be listed as shadowed by itself.
        let mut seen = Roots::default();
        if !self.no_defaults {
            builder = builder.plugin_source("builtin", Arc::new(EmbeddedSource::new(BUILTIN)));
            plugin_ids.push("builtin".to_owned());
            let mut config = RootsConfig::builder().app_name(self.app.clone());
            for p in &self.preset {
                config = config.preset(
                    p.parse::<Preset>()
                        .map_err(|e| anyhow::anyhow!("--preset {p}: {e}"))?,
                );
            }
            let config = config.build().context("default roots")?;
            for root in default_roots(&config) {
                if !seen.insert(root.layer, root.plugin.as_deref(), &root.path) {
                    continue;
                }
                builder = match &root.plugin {
                    Some(id) => {
                        plugin_ids.push(id.clone());
                        builder.plugin(id, root.path)
                    }
                    None => builder.root(root.layer, root.path),
                };
            }
        }
        for spec in &self.roots {
            let (layer, dir) = spec
                .split_once('=')
                .filter(|(_, dir)| !dir.is_empty())
                .with_context(|| format!("--root {spec:?}: expected LAYER=DIR"))?;
            builder = match layer.strip_prefix("plugin:") {
                Some(id) => {
                    if let Some(problem) = plugin_id_problem(id, &plugin_ids) {
                        bail!("--root {spec:?}: plugin id {id:?} {problem}");
                    }
                    plugin_ids.push(id.to_owned());
                    builder.plugin(id, dir)
                }
                None => {
                    let layer = layer
                        .parse::<Layer>()
                        .with_context(|| format!("--root {spec:?}"))?;
                    if layer == Layer::Plugin {
                        bail!("--root {spec:?}: a plugin root needs an id: plugin:ID=DIR");
                    }
                    if !seen.insert(layer, None, Path::new(dir)) {
                        continue;
                    }
                    builder.root(layer, dir)
                }
            };
        }
        Ok(builder.build()?)
    }
}

/// The roots added so far, by layer, plugin id and absolute folder.
#[derive(Default)]
struct Roots(Vec<(Layer, Option<String>, PathBuf)>);

impl Roots {
    /// Records a root; `false` if the same folder is already a root of that layer (and
    /// plugin). Folders that exist compare as canonical paths (`DIR`, `DIR/`, `X/../DIR` and
    /// a link to `DIR` are one folder); others as absolute paths.
    fn insert(&mut self, layer: Layer, plugin: Option<&str>, dir: &Path) -> bool {
        let dir = std::fs::canonicalize(dir)
            .or_else(|_| std::path::absolute(dir))
            .unwrap_or_else(|_| dir.to_path_buf());
        let plugin = plugin.map(str::to_owned);
        if self
            .0
            .iter()
            .any(|(l, p, d)| *l == layer && *p == plugin && *d == dir)
        {
            return false;
        }
        self.0.push((layer, plugin, dir));
        true
    }
}

/// Why `id` cannot name a plugin root given with `--root plugin:ID=DIR` (the rules of
/// `SkillIndex::register_plugin`), or `None` when it can.
fn plugin_id_problem(id: &str, taken: &[String]) -> Option<&'static str> {
    skills_index::plugin_id_problem(id).or_else(|| {
        taken
            .iter()
            .any(|t| t == id)
            .then_some("is already used by another root")
    })
}
