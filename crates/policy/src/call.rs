//! A host tool call as the decision sees it, already resolved by the executor, and the
//! forms of its argument the rules match: a path as written, normalised and resolved; a
//! Bash line part by part, as deny rules see it, and as the grammar reads it.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::path::{Component, Path, PathBuf};

use skills_model::ToolRule;

use crate::index::{Indexed, Work};
use crate::shell::Refusal;
use crate::tool::PathAccess;

/// The path a path tool touches: normalised as written, as the kernel would open it (links
/// resolved), and the identity of the file there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPath {
    /// The path as written, `..` and `.` removed without the file system ([`normalize`]).
    pub lexical: PathBuf,
    /// The path with links resolved; `None` when the links loop (or the working folder is
    /// unknown).
    pub resolved: Option<PathBuf>,
    /// The device and inode of the file there, when a decision needs it and it can be read.
    pub identity: Option<(u64, u64)>,
}

/// One host tool call, resolved.
#[derive(Debug, Clone)]
pub struct Call<'a> {
    /// The tool's name, as the host gave it.
    pub tool: &'a str,
    /// The call's primary argument (a path tool's path), when it has one.
    pub arg: Option<&'a str>,
    /// What the tool does with a path.
    pub access: PathAccess,
    /// For a path tool with an argument, the path it touches.
    pub path: Option<ResolvedPath>,
    /// Whether the tool runs code the host does not judge (`Bash`, and what the host
    /// declares).
    pub class: ToolClass,
}

/// What a host tool is, for the rules that judge tools by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolClass {
    /// A tool that runs code (`Bash`, and what the host declares): denied while a skill of
    /// an untrusted remote origin is active.
    CodeExecution,
    /// Any other tool.
    Other,
}

/// `..` and `.` removed without touching the filesystem.
pub fn normalize(path: &Path) -> PathBuf {
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

/// A simple command of a Bash line: as a rule matches it (its spelling), and its words.
pub(crate) type Command = (String, Vec<String>);

/// Why an allow rule does not admit a Bash line: the construct the grammar refuses, an
/// option a matching rule's wildcard would have admitted (`guard.rs`), or a command no rule
/// admits.
#[derive(Debug, Default)]
pub(crate) struct NotAdmitted {
    pub(crate) refused: Option<Refusal>,
    pub(crate) held: Option<String>,
    pub(crate) command: Option<Unadmitted>,
}

/// A command of a Bash line no rule admits.
#[derive(Debug)]
pub(crate) enum Unadmitted {
    /// A command of the grammar's reading, as spelled (cut to [`COMMAND_QUOTED_MAX`]).
    Command(String),
    /// The name of a command of a line the grammar refuses, which no rule could admit
    /// however the line were written: what to change first.
    Name(String),
}

/// The most of a command a denial names.
const COMMAND_QUOTED_MAX: usize = 256;

/// The forms of a call's argument the rules see. A path is matched as written, normalised
/// and resolved; a Bash command part by part, and (for allow rules) as the grammar reads it,
/// parsed once, only if a rule needs it.
pub(crate) struct Forms<'c> {
    pub(crate) tool: &'c str,
    pub(crate) arg: Option<&'c str>,
    pub(crate) lexical: Option<String>,
    pub(crate) resolved: Option<String>,
    pub(crate) bash: bool,
    grammar: OnceCell<Result<Vec<Command>, Refusal>>,
    /// The comparisons made so far, against their bound.
    pub(crate) work: Work,
}

impl<'c> Forms<'c> {
    pub(crate) fn of(call: &'c Call<'c>) -> Forms<'c> {
        let path = call.path.as_ref();
        Forms {
            tool: call.tool,
            arg: call.arg,
            lexical: path.map(|p| p.lexical.to_string_lossy().into_owned()),
            resolved: path
                .and_then(|p| p.resolved.as_ref())
                .map(|r| r.to_string_lossy().into_owned()),
            bash: call.tool.eq_ignore_ascii_case("bash"),
            grammar: OnceCell::new(),
            work: Work::default(),
        }
    }

    /// The grammar's reading of the Bash line: its simple commands, or the construct it
    /// refuses.
    pub(crate) fn commands(&self) -> &Result<Vec<Command>, Refusal> {
        self.grammar.get_or_init(|| {
            crate::shell::simple_commands(self.arg.unwrap_or("")).map(|cmds| {
                cmds.into_iter()
                    .map(|words| (crate::shell::spelling(&words), words))
                    .collect()
            })
        })
    }

    /// Whether a deny rule of `disallowed` matches any form of the argument.
    pub(crate) fn denied_by(&self, disallowed: Indexed<'_>) -> bool {
        let (tool, arg, work) = (self.tool, self.arg, &self.work);
        let parts = shell_parts(if self.bash { arg.unwrap_or("") } else { "" });
        disallowed.any_matches(tool, arg, work)
            || arg.is_some_and(|a| disallowed.any_matches(tool, Some(a.trim()), work))
            || [&self.lexical, &self.resolved].iter().any(|f| {
                f.as_deref()
                    .is_some_and(|f| disallowed.any_matches(tool, Some(f), work))
            })
            || parts
                .clone()
                .any(|p| disallowed.any_matches(tool, Some(p), work))
            || (self.bash
                && !disallowed.rules.is_empty()
                && arg.is_some_and(|a| {
                    deny_forms(a).any(|p| disallowed.any_matches(tool, Some(&p), work))
                }))
    }

    /// The first rule of `allowed` that admits a command of the line whole (see `guard`);
    /// else the option a matching rule's wildcard would have admitted.
    pub(crate) fn admitting<'r>(
        &self,
        allowed: Indexed<'r>,
        (spelled, words): &Command,
    ) -> Result<&'r ToolRule, Option<String>> {
        let mut held = None;
        for rule in allowed.candidates(Some(spelled), &self.work) {
            if rule.matches(self.tool, Some(spelled)) {
                match crate::guard::held_back(rule, spelled, words) {
                    None => return Ok(rule),
                    Some(option) => held = held.or(Some(option)),
                }
            }
        }
        Err(held)
    }

    /// Whether `allowed` (and, for a resolved path, its canonical spelling) admits the
    /// call; if not, why, for a Bash line.
    pub(crate) fn permitted(
        &self,
        allowed: Indexed<'_>,
        canonical: Option<Indexed<'_>>,
    ) -> Result<(), NotAdmitted> {
        let (tool, work) = (self.tool, &self.work);
        if allowed.any_matches(tool, None, work) {
            return Ok(());
        }
        if self.bash && self.arg.is_some() {
            return self.bash_permitted(allowed);
        }
        let admitted = if let Some(lexical) = &self.lexical {
            // A path must be allowed as normalised (no `..` tricks) and, when it exists,
            // as resolved (no escape through a link), against either spelling of the folder.
            let either = |form: &str| {
                allowed.any_matches(tool, Some(form), work)
                    || canonical.is_some_and(|c| c.any_matches(tool, Some(form), work))
            };
            either(lexical) && self.resolved.as_deref().is_none_or(either)
        } else {
            allowed.any_matches(tool, self.arg, work)
        };
        if admitted {
            Ok(())
        } else {
            Err(NotAdmitted::default())
        }
    }

    /// Allowed by proof: the line parses into admitted constructs only, and every simple
    /// command of it matches a rule. A word a rule's wildcard admits is held back when it
    /// is an option that writes files or runs programs (`guard`). A denial names the first
    /// command no rule admits; for a line the grammar refuses, a command whose name no rule
    /// could admit comes before the construct.
    fn bash_permitted(&self, allowed: Indexed<'_>) -> Result<(), NotAdmitted> {
        match self.commands() {
            Ok(cmds) => {
                let Some((cmd, held)) = cmds
                    .iter()
                    .find_map(|c| self.admitting(allowed, c).err().map(|held| (c, held)))
                else {
                    return Ok(());
                };
                // A line of one command is quoted whole already.
                let command = (held.is_none() && cmds.len() > 1).then(|| {
                    Unadmitted::Command(
                        skills_model::cut_text(&cmd.0, COMMAND_QUOTED_MAX).into_owned(),
                    )
                });
                Err(NotAdmitted {
                    held,
                    command,
                    ..NotAdmitted::default()
                })
            }
            Err(construct) => {
                let line = self.arg.unwrap_or("");
                let names = construct
                    .inside_a_word()
                    .then(|| crate::shell::command_names(line));
                let name = names
                    .into_iter()
                    .flatten()
                    .find(|name| !allowed.may_admit_name(self.tool, name, &self.work));
                Err(NotAdmitted {
                    refused: Some(*construct),
                    command: name.map(|n| Unadmitted::Name(n.to_owned())),
                    ..NotAdmitted::default()
                })
            }
        }
    }
}
