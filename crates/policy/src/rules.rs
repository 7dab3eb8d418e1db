//! The rules of one active skill, compiled once at activation from the skill and the facts
//! the executor read about its folder (its real path, its scripts' identities), each list
//! indexed by the command name its rules fix, and the bound on the comparisons one
//! decision makes.

use std::cell::Cell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use skills_model::{Skill, Specifier, ToolRule, ToolRules};

use crate::call::ResolvedPath;

/// What the file system said about a skill's folder at activation (the executor reads it).
#[derive(Debug, Clone, Default)]
pub struct FolderFacts {
    /// The folder with links resolved (when it exists).
    pub canonical_dir: Option<PathBuf>,
    /// The identities (device, inode) of the files under `scripts/` the load listed.
    pub script_files: Arc<[(u64, u64)]>,
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

/// The most rule comparisons one decision makes (a rule matched against one form of the
/// call: the argument, a path, one command of a Bash line). Past it the call is refused:
/// a line of megabytes and thousands of rules for its commands' names would otherwise hold
/// the session for as long as they take.
pub const MAX_COMPARISONS: u64 = 1_000_000;

/// The comparisons one decision has made, against [`MAX_COMPARISONS`].
#[derive(Debug, Default)]
pub(crate) struct Work {
    done: Cell<u64>,
}

impl Work {
    /// Counts one comparison; `false` once the bound is passed (nothing more is compared).
    fn spend(&self) -> bool {
        let done = self.done.get().saturating_add(1);
        self.done.set(done);
        done <= MAX_COMPARISONS
    }

    /// Whether the bound was passed: what was not compared may have denied the call.
    pub(crate) fn exhausted(&self) -> bool {
        self.done.get() > MAX_COMPARISONS
    }

    /// The comparisons made (the one that passed the bound included).
    pub(crate) fn done(&self) -> u64 {
        self.done.get()
    }
}

/// A list of rules indexed by the command name (an argument's first word, up to its first
/// blank) a rule's specifier fixes: `Bash(git status:*)`, `Bash(git *)` and `Bash(git)`
/// match only arguments whose first word is `git`. The rest (a rule with no specifier, a
/// prefix with no blank such as `Bash(gi*)` or `Read(/src/*)`) may match any argument and
/// are compared with every one.
#[derive(Debug, Clone, Default)]
pub(crate) struct RuleIndex {
    by_name: HashMap<Box<str>, Vec<u32>>,
    open: Vec<u32>,
}

/// The first word of `text`: up to its first blank (all of it when it has none).
fn first_word(text: &str) -> &str {
    text.split(char::is_whitespace).next().unwrap_or("")
}

/// The first word every argument `rule` matches has, if the rule fixes one.
fn fixed_name(rule: &ToolRule) -> Option<&str> {
    match rule.specifier()? {
        Specifier::Exact(text) | Specifier::WordPrefix(text) => Some(first_word(text)),
        Specifier::Prefix(text) => text.contains(char::is_whitespace).then(|| first_word(text)),
    }
}

impl RuleIndex {
    fn build(rules: &ToolRules) -> RuleIndex {
        let mut index = RuleIndex::default();
        for (i, rule) in rules.rules().iter().enumerate() {
            let i = u32::try_from(i).unwrap_or(u32::MAX);
            match fixed_name(rule) {
                Some(name) => index.by_name.entry(name.into()).or_default().push(i),
                None => index.open.push(i),
            }
        }
        index
    }
}

/// A rule list with its index: the rules that may match an argument, in their order.
#[derive(Clone, Copy)]
pub(crate) struct Indexed<'r> {
    pub(crate) rules: &'r ToolRules,
    index: &'r RuleIndex,
}

impl<'r> Indexed<'r> {
    /// The rules that may match `argument` (for none, those without a specifier may), in
    /// the list's order, each counted in `work`; none once the bound is passed.
    pub(crate) fn candidates<'w>(
        self,
        argument: Option<&str>,
        work: &'w Work,
    ) -> impl Iterator<Item = &'r ToolRule> + 'w
    where
        'r: 'w,
    {
        let keyed: &[u32] = argument
            .and_then(|a| self.index.by_name.get(first_word(a)))
            .map_or(&[], Vec::as_slice);
        Merged {
            a: keyed,
            b: &self.index.open,
        }
        .map(move |i| &self.rules.rules()[i as usize])
        .take_while(move |_| work.spend())
    }

    /// Whether a rule matches the call (`tool` on `argument`).
    pub(crate) fn any_matches(self, tool: &str, argument: Option<&str>, work: &Work) -> bool {
        self.candidates(argument, work)
            .any(|r| r.matches(tool, argument))
    }

    /// The first rule that matches the call.
    pub(crate) fn first_match(
        self,
        tool: &str,
        argument: Option<&str>,
        work: &Work,
    ) -> Option<&'r ToolRule> {
        self.candidates(argument, work)
            .find(|r| r.matches(tool, argument))
    }

    /// Whether some rule could match a call of `tool` on a command named `name` (a Bash
    /// line's command, however it goes on), each rule looked at counted in `work`.
    pub(crate) fn may_admit_name(self, tool: &str, name: &str, work: &Work) -> bool {
        self.candidates(Some(name), work).any(|r| {
            r.matches_tool(tool)
                && match r.specifier() {
                    None => true,
                    Some(Specifier::Prefix(text)) if fixed_name(r).is_none() => {
                        name.starts_with(&**text)
                    }
                    Some(_) => fixed_name(r) == Some(name),
                }
        })
    }
}

/// Two ascending lists of positions, merged in ascending order.
struct Merged<'a> {
    a: &'a [u32],
    b: &'a [u32],
}

impl Iterator for Merged<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        let take_a = match (self.a.first(), self.b.first()) {
            (Some(a), Some(b)) => a < b,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return None,
        };
        let list = if take_a { &mut self.a } else { &mut self.b };
        let (first, rest) = list.split_first()?;
        *list = rest;
        Some(*first)
    }
}
