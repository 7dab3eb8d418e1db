//! The rules of one active skill, compiled once at activation from the skill and the facts
//! the executor read about its folder (its real path, its scripts' identities), each list
//! indexed by the command name its rules fix (`index.rs`).

use std::path::PathBuf;
use std::sync::Arc;

use skills_model::{Skill, ToolRules};

use crate::call::ResolvedPath;
use crate::index::{Indexed, RuleIndex};

/// What the file system said about a skill's folder at activation (the executor reads it).
#[derive(Debug, Clone, Default)]
pub struct FolderFacts {
    /// The folder with links resolved (when it exists).
    pub canonical_dir: Option<PathBuf>,
    /// The identities (device, inode) of the files under `scripts/` the load listed.
    pub script_files: Arc<[(u64, u64)]>,
    /// The remote origin the skill comes from, when the host does not trust it
    /// (`url:https://HOST`, `mcp:LABEL`): while it is active the host's code-execution
    /// tools are denied, and its `allowed-tools` pre-approve nothing.
    pub untrusted_origin: Option<String>,
}

/// The rules of one active skill, with `${SKILL_DIR}` expanded.
#[derive(Debug, Clone)]
pub struct CompiledRules {
    /// The skill's name.
    pub skill: String,
    /// `allowed-tools`, if the skill lists tools.
    pub allowed: Option<ToolRules>,
    /// `disallowed-tools` (empty when none).
    pub disallowed: ToolRules,
    /// The skill's folder, as the index knows it.
    pub dir: PathBuf,
    /// `dir` with links resolved (when it exists), to compare resolved paths with.
    pub canonical_dir: Option<PathBuf>,
    /// `allowed` with `${SKILL_DIR}` expanded to the canonical folder, for resolved paths.
    pub allowed_canonical: Option<ToolRules>,
    /// `security.fileSystemScope: skill-directory`: path tools stay inside the skill.
    pub confined: bool,
    /// The files under `scripts/` at activation, as the file system knows them (device and
    /// inode): a hard link to one, wherever it is, is that script.
    pub script_files: Arc<[(u64, u64)]>,
    /// The remote origin the skill comes from, when the host does not trust it
    /// ([`FolderFacts::untrusted_origin`]).
    pub untrusted_origin: Option<String>,
    /// `allowed`, `allowed_canonical` and `disallowed` indexed by command name.
    indexes: [RuleIndex; 3],
}

impl CompiledRules {
    /// Compiles `skill`'s rules, with what the executor read about its folder.
    pub fn compile(skill: &Skill, facts: FolderFacts) -> CompiledRules {
        let record = &skill.record;
        let dir = record.dir().to_path_buf();
        let dir_text = dir.to_string_lossy();
        let fm = &record.frontmatter;
        let expand =
            |rules: &Option<ToolRules>, dir: &str| rules.as_ref().map(|r| r.expand_skill_dir(dir));
        let allowed = expand(&fm.allowed_tools, &dir_text);
        let disallowed = expand(&fm.disallowed_tools, &dir_text).unwrap_or_default();
        let allowed_canonical = facts
            .canonical_dir
            .as_ref()
            .and_then(|c| expand(&fm.allowed_tools, &c.to_string_lossy()));
        let index = |rules: Option<&ToolRules>| rules.map(RuleIndex::build).unwrap_or_default();
        CompiledRules {
            skill: record.name.to_string(),
            indexes: [
                index(allowed.as_ref()),
                index(allowed_canonical.as_ref()),
                index(Some(&disallowed)),
            ],
            allowed,
            disallowed,
            allowed_canonical,
            canonical_dir: facts.canonical_dir,
            confined: fm
                .security
                .as_ref()
                .and_then(|s| s.file_system_scope.as_deref())
                .is_some_and(|s| s == "skill-directory"),
            script_files: facts.script_files,
            untrusted_origin: facts.untrusted_origin,
            dir,
        }
    }

    /// Whether a decision needs the identity of the file a path tool touches (this skill
    /// has scripts a hard link could reach).
    pub fn needs_identity(&self) -> bool {
        !self.script_files.is_empty()
    }

    /// `allowed` with its index.
    pub(crate) fn allowed_indexed(&self) -> Option<Indexed<'_>> {
        self.allowed.as_ref().map(|rules| Indexed {
            rules,
            index: &self.indexes[0],
        })
    }

    /// `allowed_canonical` with its index.
    pub(crate) fn canonical_indexed(&self) -> Option<Indexed<'_>> {
        self.allowed_canonical.as_ref().map(|rules| Indexed {
            rules,
            index: &self.indexes[1],
        })
    }

    /// `disallowed` with its index.
    pub(crate) fn disallowed_indexed(&self) -> Indexed<'_> {
        Indexed {
            rules: &self.disallowed,
            index: &self.indexes[2],
        }
    }

    /// The first deny rule naming `tool`, as written (the rule a denial reports).
    pub(crate) fn disallowed_rule(&self, tool: &str) -> Option<String> {
        self.disallowed
            .rules()
            .iter()
            .find(|r| r.matches_tool(tool))
            .map(ToString::to_string)
    }

    /// The rules as written, for audit events.
    pub fn allowed_list(&self) -> Option<Vec<String>> {
        self.allowed
            .as_ref()
            .map(|r| r.rules().iter().map(ToString::to_string).collect())
    }

    /// Whether `path` as written, or as resolved, is under `sub` of the skill folder.
    fn touches(&self, t: &ResolvedPath, sub: &str) -> bool {
        t.lexical.starts_with(self.dir.join(sub))
            || match (&t.resolved, &self.canonical_dir) {
                (Some(r), Some(d)) => r.starts_with(d.join(sub)),
                _ => false,
            }
    }

    /// Whether `path` is one of the skill's scripts: under its `scripts/`, or the same file
    /// by another name (a hard link elsewhere).
    pub(crate) fn touches_a_script(&self, t: &ResolvedPath) -> bool {
        self.touches(t, "scripts")
            || (self.needs_identity()
                && t.identity.is_some_and(|id| self.script_files.contains(&id)))
    }

    /// Whether `path` stays inside the skill folder both as written and as resolved.
    pub(crate) fn contains(&self, t: &ResolvedPath) -> bool {
        let canonical = self.canonical_dir.as_deref().unwrap_or(&self.dir);
        let lexical_inside = t.lexical.starts_with(&self.dir) || t.lexical.starts_with(canonical);
        // An unresolvable path (links that loop) is not shown to stay inside.
        let resolved_inside = t
            .resolved
            .as_ref()
            .is_some_and(|r| r.starts_with(canonical));
        lexical_inside && resolved_inside
    }
}
