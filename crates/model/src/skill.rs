//! What the index holds for a skill (`SkillRecord`) and what loading one yields (`Skill`).

use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;

use crate::{Diagnostic, Frontmatter, Layer, RemoteOrigin, SkillName};

/// Stage one of progressive disclosure: a skill's metadata, as the index holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkillRecord {
    /// The name it is found by (from the frontmatter).
    pub name: SkillName,
    /// The description, surrounding whitespace removed.
    pub description: String,
    /// The layer of the root it was found in.
    pub layer: Layer,
    /// The plugin id, for skills of the plugin layer.
    pub plugin: Option<Arc<str>>,
    /// The absolute path of its `SKILL.md`; for a skill of a source that is not on disk (a
    /// plugin compiled into the host, or held in memory), the label
    /// `embedded:<plugin>/<folder>/SKILL.md`, which names no file.
    pub path: PathBuf,
    /// The frontmatter, read leniently, without `name` and `description`: the record
    /// holds those itself (`name`, `description`), once.
    pub frontmatter: Arc<Frontmatter>,
    /// Byte offset of the body in `SKILL.md`.
    pub body_offset: usize,
    /// What the parser found.
    pub diagnostics: Arc<[Diagnostic]>,
    /// The remote origin it was read from (a well-known index, an MCP server); `None` for a
    /// skill on disk or in the host's binary. A remote skill is trusted only by its origin.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote: Option<Arc<RemoteOrigin>>,
}

impl SkillRecord {
    /// Whether nothing in the skill limits who may be offered it: no `scope`, nothing it
    /// needs (`requires:` and the other agents' ways of saying so), and model invocation
    /// allowed. Every session's model may be offered such a skill, when no other skill
    /// holds its name (`executor`'s `an_unrestricted_skill_is_offered_to_every_session`);
    /// a search's audience sees it without asking.
    pub fn unrestricted(&self) -> bool {
        self.frontmatter.scope.is_none()
            && self.model_invocable()
            && crate::Requires::of(&self.frontmatter).is_none()
    }

    /// Whether the model may be offered this skill and load it itself: not when it says
    /// `disable-model-invocation: true` (Claude Code), which Codex's
    /// `allow_implicit_invocation: false` also reads as. The host can still activate it on
    /// a user's request. The one home of this rule.
    pub fn model_invocable(&self) -> bool {
        self.frontmatter.disable_model_invocation != Some(true)
    }

    /// The description as listings show it: Claude Code's `when_to_use`, when there is one,
    /// joins the description after ` - `. Without `when_to_use` it is the description
    /// itself, so listings stay as the reference renders them.
    pub fn listed_description(&self) -> std::borrow::Cow<'_, str> {
        match self.frontmatter.when_to_use.as_deref().map(str::trim) {
            Some(when) if !when.is_empty() => {
                std::borrow::Cow::Owned(format!("{} - {when}", self.description.trim_end()))
            }
            _ => std::borrow::Cow::Borrowed(&self.description),
        }
    }

    /// Whether the skill has `tag` among its tags, compared without case (the rule of
    /// `skills_search`'s tag filter).
    pub fn has_tag(&self, tag: &str) -> bool {
        self.frontmatter
            .tags
            .iter()
            .any(|t| t.eq_ignore_ascii_case(tag))
    }

    /// Whether a user may be offered this skill to invoke (prompts, menus): not when it says
    /// `user-invocable: false`.
    pub fn user_invocable(&self) -> bool {
        self.frontmatter.user_invocable != Some(false)
    }

    /// A parsed frontmatter as a record holds it: the description (for the record's own
    /// field) and the rest, without `name` and `description`, so the largest string the
    /// index keeps is held once. The one home of this rule.
    pub fn split_frontmatter(mut frontmatter: Frontmatter) -> (String, Arc<Frontmatter>) {
        let description = frontmatter.description.take().unwrap_or_default();
        frontmatter.name = None;
        (description.into(), Arc::new(frontmatter))
    }

    /// The folder that holds `SKILL.md`.
    pub fn dir(&self) -> &std::path::Path {
        self.path.parent().unwrap_or(&self.path)
    }

    /// `layer:name`, or `plugin-id:name` for plugin skills.
    pub fn qualified_name(&self) -> String {
        match &self.plugin {
            Some(id) => format!("{id}:{}", self.name),
            None => format!("{}:{}", self.layer, self.name),
        }
    }

    /// Whether any diagnostic is an error (the skill is invalid under the strict reading).
    pub fn is_valid(&self) -> bool {
        !self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// A file that belongs to a skill, listed when the skill is loaded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkillFile {
    /// Path relative to the skill folder, with `/` separators (`scripts/run.py`).
    pub path: String,
    /// Size in bytes.
    pub size: u64,
}

/// Stage two: a skill with its instructions and the list of its files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skill {
    /// The record it was loaded from.
    pub record: Arc<SkillRecord>,
    /// The Markdown body.
    pub body: String,
    /// Files under `scripts/`, `references/` and `assets/`, sorted by path.
    pub files: Vec<SkillFile>,
    /// `sha256:<hex>` of the whole `SKILL.md`.
    pub digest: String,
}
