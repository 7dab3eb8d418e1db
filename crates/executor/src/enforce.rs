//! Tool-rule enforcement: the rules of an active skill, compiled once at activation, and the
//! decision for one host tool call. Deciding allocates only for the reason of a denial.

use std::borrow::Cow;
use std::path::{Component, Path, PathBuf};

use crate::{AllowedToolsMode, DefaultDecision};
use skills_model::{Skill, ToolRules};

/// The rules of one active skill, with `${SKILL_DIR}` expanded.
#[derive(Debug, Clone)]
pub(crate) struct CompiledRules {
    pub(crate) skill: String,
    pub(crate) allowed: Option<ToolRules>,
    pub(crate) disallowed: ToolRules,
    pub(crate) dir: PathBuf,
    /// `dir` with links resolved (when it exists), to compare resolved paths with.
    pub(crate) canonical_dir: Option<PathBuf>,
    /// `allowed` with `${SKILL_DIR}` expanded to the canonical folder, for resolved paths.
    pub(crate) allowed_canonical: Option<ToolRules>,
    /// `security.fileSystemScope: skill-directory`: path tools stay inside the skill.
    pub(crate) confined: bool,
    /// The files under `scripts/` at activation, as the file system knows them (device and
    /// inode): a hard link to one, wherever it is, is that script.
    pub(crate) script_files: std::sync::Arc<[(u64, u64)]>,
}

impl CompiledRules {
    pub(crate) fn compile(skill: &Skill) -> CompiledRules {
        let record = &skill.record;
        let dir = record.dir().to_path_buf();
        let dir_text = dir.to_string_lossy();
        let fm = &record.frontmatter;
        CompiledRules {
            skill: record.name.to_string(),
            allowed: fm
                .allowed_tools
                .as_ref()
                .map(|r| r.expand_skill_dir(&dir_text)),
            disallowed: fm
                .disallowed_tools
                .as_ref()
                .map(|r| r.expand_skill_dir(&dir_text))
                .unwrap_or_default(),
            allowed_canonical: std::fs::canonicalize(&dir).ok().and_then(|c| {
                fm.allowed_tools
                    .as_ref()
                    .map(|r| r.expand_skill_dir(&c.to_string_lossy()))
            }),
            canonical_dir: std::fs::canonicalize(&dir).ok(),
            confined: fm
                .security
                .as_ref()
                .and_then(|s| s.file_system_scope.as_deref())
                .is_some_and(|s| s == "skill-directory"),
            script_files: script_ids(&dir, &skill.files),
            dir,
        }
    }

    /// The first deny rule naming `tool`, as written (the rule a denial reports).
    fn disallowed_rule(&self, tool: &str) -> Option<String> {
        self.disallowed
            .rules()
            .iter()
            .find(|r| r.matches_tool(tool))
            .map(ToString::to_string)
    }

    /// The rules as written, for audit events.
    pub(crate) fn allowed_list(&self) -> Option<Vec<String>> {
        self.allowed
            .as_ref()
            .map(|r| r.rules().iter().map(ToString::to_string).collect())
    }
}

/// The outcome of a tool check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// Whether the call may proceed.
    pub allowed: bool,
    /// Why (empty when allowed by default).
    pub reason: String,
    /// Whether the denial is the script-read protection.
    pub script_read: bool,
    /// The active skill whose rules decided (none when no active skill restricts the call).
    pub skill: Option<String>,
    /// The rule that decided, as written (none for a call no rule names).
    pub rule: Option<String>,
}

/// The most of a call's argument a denial's reason quotes.
const QUOTED_MAX: usize = 1024;

impl Decision {
    fn allow(reason: &str) -> Decision {
        Decision {
            allowed: true,
            reason: reason.to_owned(),
            script_read: false,
            skill: None,
            rule: None,
        }
    }

    fn deny(reason: String) -> Decision {
        Decision {
            allowed: false,
            reason,
            script_read: false,
            skill: None,
            rule: None,
        }
    }

    /// This decision with its reason cut to
    /// [`MESSAGE_MAX`](skills_model::MESSAGE_MAX): a reason quotes the call it judged,
    /// and a call may be megabytes long.
    pub(crate) fn bounded(mut self) -> Decision {
        if self.reason.len() > skills_model::MESSAGE_MAX {
            self.reason =
                skills_model::cut_text(&self.reason, skills_model::MESSAGE_MAX).into_owned();
        }
        self
    }

    /// A denial of the executor itself (the audit cannot be written).
    pub fn refused(reason: String) -> Decision {
        Decision::deny(reason)
    }

    fn by(mut self, rules: &CompiledRules, rule: Option<String>) -> Decision {
        self.skill = Some(rules.skill.clone());
        self.rule = rule;
        self
    }
}

/// What a tool does with the path it is given (the policy says which tools are path
/// tools: [`crate::Policy`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PathAccess {
    /// Not a path tool.
    None,
    /// It reads (Read, Grep, Glob, LS).
    Read,
    /// It may write (Write, Edit, MultiEdit, NotebookEdit, and tools the host declares).
    Write,
}

/// `..` and `.` removed without touching the filesystem.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for comp in path.components() {
        match comp {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The path a path tool touches: normalised as written, and with links resolved (the
/// deepest existing ancestor canonicalised, the rest appended, so a file not created yet
/// under a link is resolved through the link).
pub(crate) struct Touched {
    pub(crate) lexical: PathBuf,
    pub(crate) resolved: Option<PathBuf>,
}

pub(crate) fn touched(arg: &str) -> Touched {
    Touched {
        lexical: normalize(Path::new(arg)),
        resolved: resolve_physical(Path::new(arg)),
    }
}

/// The path the kernel would open: each existing prefix resolved through its links before
/// the next component applies, so `link/..` climbs from where the link points, not from
/// where it sits. A missing component is kept as written, and resolution goes on after it:
/// a host that normalises `missing/../link` (or creates `missing`) reaches `link`, so
/// `link` is resolved too. A dangling link is followed by hand (a write through it creates
/// its target). `None` when the links loop (the kernel refuses such a path too) or the
/// working folder is unknown.
pub(crate) fn resolve_physical(raw: &Path) -> Option<PathBuf> {
    let start = if raw.is_absolute() {
        PathBuf::new()
    } else {
        std::fs::canonicalize(std::env::current_dir().ok()?).ok()?
    };
    // The kernel's own limit on links followed in one lookup.
    let mut links = 40u32;
    resolve_from(start, raw, &mut links)
}

/// Resolves `raw` from `current`, which has no links in it: one `lstat` per component
/// (linear in the path's length), a link followed by resolving its target from where it
/// sits.
fn resolve_from(mut current: PathBuf, raw: &Path, links: &mut u32) -> Option<PathBuf> {
    for comp in raw.components() {
        match comp {
            Component::Prefix(_) | Component::RootDir => current.push(comp),
            Component::CurDir => {}
            Component::ParentDir => {
                current.pop();
            }
            Component::Normal(part) => {
                current.push(part);
                let is_link =
                    std::fs::symlink_metadata(&current).is_ok_and(|m| m.file_type().is_symlink());
                if is_link {
                    *links = links.checked_sub(1)?;
                    let target = std::fs::read_link(&current).ok()?;
                    current.pop();
                    current = resolve_from(current, &target, links)?;
                }
            }
        }
    }
    Some(current)
}

/// A Bash command split at the operators that start another command (`;`, `&`, `|`,
/// newlines), leading whitespace removed from each part: what deny rules match (advice;
/// allow rules judge the grammar's parse instead, `shell.rs`).
fn shell_parts(command: &str) -> impl Iterator<Item = &str> + Clone {
    command
        .split([';', '&', '|', '\n', '\r'])
        .map(str::trim_start)
        .filter(|p| !p.trim().is_empty())
}

/// The commands a deny rule must see in a Bash line: split also inside subshells, groups
/// and substitutions (`(`, `)`, `{`, `}`, backticks), each with a leading `!` dropped,
/// quotes and backslashes removed and runs of blanks made one space, as the shell reads
/// the words. Only for deny rules: it can only make more calls match.
fn deny_forms(command: &str) -> impl Iterator<Item = Cow<'_, str>> {
    command
        .split([';', '&', '|', '\n', '\r', '(', ')', '{', '}', '`', '<', '>'])
        .map(|p| p.trim_start_matches(|c: char| c.is_ascii_whitespace() || c == '!'))
        .filter(|p| !p.trim().is_empty())
        .map(|p| {
            let plain = !p.contains(['\'', '"', '\\', '\t']) && !p.contains("  ");
            if plain {
                return Cow::Borrowed(p);
            }
            let mut out = String::with_capacity(p.len());
            for c in p.chars() {
                match c {
                    '\'' | '"' | '\\' => {}
                    c if c.is_ascii_whitespace() => {
                        if !out.is_empty() && !out.ends_with(' ') {
                            out.push(' ');
                        }
                    }
                    c => out.push(c),
                }
            }
            Cow::Owned(out)
        })
}

/// A file's device and inode, links followed; `None` when it cannot be asked (or off Unix).
pub(crate) fn file_id(path: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(path).ok().as_ref().and_then(id_of)
}

/// The identities of a skill's scripts (the files a load listed under `scripts/`) as they
/// are now: a file with one of them is a script by whichever name it is reached (a hard
/// link elsewhere in the folder).
pub(crate) fn script_ids(
    dir: &Path,
    files: &[skills_model::SkillFile],
) -> std::sync::Arc<[(u64, u64)]> {
    files
        .iter()
        .filter(|f| f.path.starts_with("scripts/"))
        .filter_map(|f| file_id(&dir.join(&f.path)))
        .collect()
}

/// [`file_id`] of a file already looked up or opened.
pub(crate) fn id_of(meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        Some((meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

impl CompiledRules {
    /// Whether `path` as written, or as resolved, is under `sub` of the skill folder.
    fn touches(&self, t: &Touched, sub: &str) -> bool {
        t.lexical.starts_with(self.dir.join(sub))
            || match (&t.resolved, &self.canonical_dir) {
                (Some(r), Some(d)) => r.starts_with(d.join(sub)),
                _ => false,
            }
    }

    /// Whether `path` is one of the skill's scripts: under its `scripts/`, or the same file
    /// by another name (a hard link elsewhere).
    fn touches_a_script(&self, t: &Touched) -> bool {
        self.touches(t, "scripts")
            || (!self.script_files.is_empty()
                && file_id(t.resolved.as_deref().unwrap_or(&t.lexical))
                    .is_some_and(|id| self.script_files.contains(&id)))
    }

    /// Whether `path` stays inside the skill folder both as written and as resolved.
    fn contains(&self, t: &Touched) -> bool {
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

/// What decides a call the skills' rules leave open: the host's default decision, and what
/// `allowed-tools` means.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fallback {
    pub(crate) default: DefaultDecision,
    pub(crate) mode: AllowedToolsMode,
}

/// Decides one call against the stack (bottom to top). The fallback's default applies when
/// no skill restricts tools, or (pre-approval) when none lists the call.
pub(crate) fn decide<'a>(
    stack: impl Iterator<Item = &'a CompiledRules> + Clone,
    tool: &str,
    arg: Option<&str>,
    access: PathAccess,
    fallback: Fallback,
) -> Decision {
    let preapprove = fallback.mode == AllowedToolsMode::Preapprove;
    let path_tool = access != PathAccess::None;
    if path_tool && arg.is_none() {
        // A path tool whose path cannot be found in its input cannot be shown to stay
        // inside a confined skill: refused rather than let through unchecked.
        if let Some(rules) = stack.clone().find(|r| r.confined) {
            return Decision::deny(format!(
                "the active skill {:?} confines file access to its own folder ({}), and this {tool} call names no path",
                rules.skill,
                rules.dir.display()
            ))
            .by(rules, Some("security.fileSystemScope: skill-directory".into()));
        }
    }
    if arg.is_none() {
        // A deny rule with a specifier cannot be checked without the argument: fail closed
        // (also when the host declares no primary argument for the tool, so none is found).
        if let Some(rules) = stack.clone().find(|r| r.disallowed.names_tool(tool)) {
            let rule = rules.disallowed_rule(tool);
            return Decision::deny(format!(
                "{tool} is restricted by the disallowed-tools of the active skill {:?}, and this call has no argument to check",
                rules.skill
            ))
            .by(rules, rule);
        }
    }
    let path = match (path_tool, arg) {
        (true, Some(arg)) => Some(touched(arg)),
        _ => None,
    };
    if let (Some(path), Some(arg)) = (&path, arg) {
        for rules in stack.clone() {
            if access == PathAccess::Read && rules.touches_a_script(path) {
                return Decision {
                    script_read: true,
                    ..Decision::deny(format!(
                        "{arg} is a script of the active skill {:?}: run it with skills_run_script instead of reading it",
                        rules.skill
                    ))
                }
                .by(rules, None);
            }
            // The scripts of an active skill run with its layer's trust: the model must not
            // be able to write one and then run it.
            if access == PathAccess::Write && rules.touches_a_script(path) {
                return Decision::deny(format!(
                    "{arg} is a script of the active skill {:?}: its scripts cannot be changed while it is active",
                    rules.skill
                ))
                .by(rules, None);
            }
            // Confined: the path must stay inside as written and as resolved (a link
            // inside the skill that points outside does not count as inside).
            if rules.confined && !rules.contains(path) {
                return Decision::deny(format!(
                    "the active skill {:?} confines file access to its own folder ({})",
                    rules.skill,
                    rules.dir.display()
                ))
                .by(
                    rules,
                    Some("security.fileSystemScope: skill-directory".into()),
                );
            }
        }
    }
    // The forms of the argument the rules see. A path is matched as written, normalised
    // and resolved; a Bash command part by part.
    let lexical = path
        .as_ref()
        .map(|p| p.lexical.to_string_lossy().into_owned());
    let resolved = path
        .as_ref()
        .and_then(|p| p.resolved.as_ref())
        .map(|r| r.to_string_lossy().into_owned());
    let bash = tool.eq_ignore_ascii_case("bash");
    let parts = shell_parts(if bash { arg.unwrap_or("") } else { "" });
    // The grammar's reading of a Bash line, parsed once, only if an allow rule needs it.
    let grammar = std::cell::OnceCell::new();
    let commands = || {
        grammar.get_or_init(|| {
            crate::shell::simple_commands(arg.unwrap_or("")).map(|cmds| {
                cmds.into_iter()
                    .map(|words| (crate::shell::spelling(&words), words))
                    .collect::<Vec<(String, Vec<String>)>>()
            })
        })
    };
    // The first rule of `allowed` that admits a command of the line whole (see
    // `guard`); else the option a matching rule's wildcard would have admitted.
    let admitting = |allowed: &'a ToolRules, (spelled, words): &(String, Vec<String>)| {
        let mut held = None;
        for rule in allowed.rules() {
            if rule.matches(tool, Some(spelled)) {
                match crate::guard::held_back(rule, spelled, words) {
                    None => return Ok(rule),
                    Some(option) => held = held.or(Some(option)),
                }
            }
        }
        Err(held)
    };
    let mut refused = None;
    let mut held: Option<String> = None;
    let mut restricted = false;
    let mut deciding: Option<&CompiledRules> = None;
    for rules in stack {
        let denied = rules.disallowed.any_matches(tool, arg)
            || arg.is_some_and(|a| rules.disallowed.any_matches(tool, Some(a.trim())))
            || [&lexical, &resolved].iter().any(|f| {
                f.as_deref()
                    .is_some_and(|f| rules.disallowed.any_matches(tool, Some(f)))
            })
            || parts
                .clone()
                .any(|p| rules.disallowed.any_matches(tool, Some(p)))
            || (bash
                && !rules.disallowed.is_empty()
                && arg.is_some_and(|a| {
                    deny_forms(a).any(|p| rules.disallowed.any_matches(tool, Some(&p)))
                }));
        if denied {
            let rule = rules.disallowed_rule(tool);
            return Decision::deny(format!(
                "{tool} is in the disallowed-tools of the active skill {:?}",
                rules.skill
            ))
            .by(rules, rule);
        }
        let Some(allowed) = &rules.allowed else {
            continue;
        };
        restricted = true;
        deciding = Some(rules);
        let unrestricted = allowed.any_matches(tool, None);
        let permitted = if unrestricted {
            true
        } else if bash && arg.is_some() {
            // Allowed by proof: the line parses into admitted constructs only, and every
            // simple command of it matches a rule.
            // A word a rule's wildcard admits is held back when it is an option that
            // writes files or runs programs (`guard`).
            match commands() {
                Ok(cmds) => cmds.iter().all(|c| match admitting(allowed, c) {
                    Ok(_) => true,
                    Err(option) => {
                        held = held.take().or(option);
                        false
                    }
                }),
                Err(construct) => {
                    refused = Some(*construct);
                    false
                }
            }
        } else if let Some(lexical) = &lexical {
            // A path must be allowed as normalised (no `..` tricks) and, when it exists,
            // as resolved (no escape through a link), against either spelling of the folder.
            let either = |form: &str| {
                allowed.any_matches(tool, Some(form))
                    || rules
                        .allowed_canonical
                        .as_ref()
                        .is_some_and(|c| c.any_matches(tool, Some(form)))
            };
            either(lexical) && resolved.as_deref().is_none_or(either)
        } else {
            allowed.any_matches(tool, arg)
        };
        if preapprove {
            // Pre-approval: the first skill that lists the call allows it; a skill that
            // does not list it says nothing.
            if permitted {
                deciding = Some(rules);
                break;
            }
            deciding = None;
            continue;
        }
        if !permitted {
            // The call as the reason quotes it: its argument cut, so that what follows
            // (why it was denied) stays within the reason's bound.
            let what = match arg {
                Some(a) => format!("{tool}({})", skills_model::cut_text(a, QUOTED_MAX)),
                None => tool.to_owned(),
            };
            let why = match (refused, &held) {
                (Some(construct), _) => {
                    format!(": {construct} is not admitted under an allow rule")
                }
                (None, Some(option)) => format!(
                    ": {option} writes files or runs programs, and a rule admits it only by naming it"
                ),
                (None, None) => String::new(),
            };
            return Decision::deny(format!(
                "{what} is not in the allowed-tools of the active skill {:?}{why}",
                rules.skill
            ))
            .by(rules, None);
        }
    }
    if preapprove && deciding.is_none() {
        restricted = false;
    }
    if let (true, Some(rules)) = (restricted, deciding) {
        // The rule of the top restricting skill that admits the call (for a compound Bash
        // line, the one its first command matched).
        let first = if bash {
            commands().as_ref().ok().and_then(|cmds| cmds.first())
        } else {
            None
        };
        let rule = rules.allowed.as_ref().and_then(|allowed| {
            allowed
                .first_match(tool, None)
                .or_else(|| first.and_then(|c| admitting(allowed, c).ok()))
                .or_else(|| {
                    lexical
                        .as_deref()
                        .and_then(|l| allowed.first_match(tool, Some(l)))
                })
                .or_else(|| allowed.first_match(tool, arg))
                .or_else(|| {
                    rules.allowed_canonical.as_ref().and_then(|c| {
                        resolved
                            .as_deref()
                            .and_then(|r| c.first_match(tool, Some(r)))
                    })
                })
                .map(ToString::to_string)
        });
        let reason = if preapprove {
            "pre-approved by an active skill's allowed-tools"
        } else {
            "allowed by every active skill's allowed-tools"
        };
        Decision::allow(reason).by(rules, rule)
    } else if restricted {
        Decision::allow("allowed by every active skill's allowed-tools")
    } else if preapprove && fallback.default == DefaultDecision::Allow {
        Decision::allow("no active skill pre-approves it; the host allows by default")
    } else if preapprove {
        Decision::deny(
            "no active skill pre-approves it (allowed-tools), and the host denies by default"
                .to_owned(),
        )
    } else if fallback.default == DefaultDecision::Allow {
        Decision::allow("no active skill restricts tools")
    } else {
        Decision::deny("no active skill allows tools, and the host denies by default".to_owned())
    }
}
