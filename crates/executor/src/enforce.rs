//! Tool-rule enforcement: the rules of an active skill, compiled once at activation, and the
//! decision for one host tool call. Deciding allocates only for the reason of a denial.

use std::path::{Component, Path, PathBuf};

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
    /// `security.fileSystemScope: skill-directory`: path tools stay inside the skill.
    pub(crate) confined: bool,
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
            canonical_dir: std::fs::canonicalize(&dir).ok(),
            confined: fm
                .security
                .as_ref()
                .and_then(|s| s.file_system_scope.as_deref())
                .is_some_and(|s| s == "skill-directory"),
            dir,
        }
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
}

impl Decision {
    fn allow(reason: &str) -> Decision {
        Decision {
            allowed: true,
            reason: reason.to_owned(),
            script_read: false,
        }
    }

    fn deny(reason: String) -> Decision {
        Decision {
            allowed: false,
            reason,
            script_read: false,
        }
    }
}

/// Tools whose primary argument is a path.
fn is_path_tool(tool: &str) -> bool {
    ["read", "write", "edit"]
        .iter()
        .any(|t| tool.eq_ignore_ascii_case(t))
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
struct Touched {
    lexical: PathBuf,
    resolved: Option<PathBuf>,
}

fn touched(arg: &str) -> Touched {
    let lexical = normalize(Path::new(arg));
    let mut resolved = None;
    for ancestor in lexical.ancestors() {
        if let Ok(base) = std::fs::canonicalize(ancestor) {
            let rest = lexical.strip_prefix(ancestor).unwrap_or(Path::new(""));
            resolved = Some(if rest.as_os_str().is_empty() {
                base
            } else {
                base.join(rest)
            });
            break;
        }
    }
    Touched { lexical, resolved }
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

    /// Whether `path` stays inside the skill folder both as written and as resolved.
    fn contains(&self, t: &Touched) -> bool {
        let canonical = self.canonical_dir.as_deref().unwrap_or(&self.dir);
        let lexical_inside = t.lexical.starts_with(&self.dir) || t.lexical.starts_with(canonical);
        let resolved_inside = t.resolved.as_ref().is_none_or(|r| r.starts_with(canonical));
        lexical_inside && resolved_inside
    }
}

/// Decides one call against the stack (bottom to top). `default_allow` applies when no
/// skill restricts tools.
pub(crate) fn decide<'a>(
    stack: impl Iterator<Item = &'a CompiledRules> + Clone,
    tool: &str,
    arg: Option<&str>,
    default_allow: bool,
) -> Decision {
    if is_path_tool(tool) && arg.is_none() {
        // A path tool whose path cannot be found in its input cannot be shown to stay
        // inside a confined skill: refused rather than let through unchecked.
        if let Some(rules) = stack.clone().find(|r| r.confined) {
            return Decision::deny(format!(
                "the active skill {:?} confines file access to its own folder ({}), and this {tool} call names no path",
                rules.skill,
                rules.dir.display()
            ));
        }
    }
    if let (true, Some(arg)) = (is_path_tool(tool), arg) {
        let path = touched(arg);
        for rules in stack.clone() {
            if tool.eq_ignore_ascii_case("read") && rules.touches(&path, "scripts") {
                return Decision {
                    allowed: false,
                    reason: format!(
                        "{arg} is a script of the active skill {:?}: run it with skills_run_script instead of reading it",
                        rules.skill
                    ),
                    script_read: true,
                };
            }
            // Confined: the path must stay inside as written and as resolved (a link
            // inside the skill that points outside does not count as inside).
            if rules.confined && !rules.contains(&path) {
                return Decision::deny(format!(
                    "the active skill {:?} confines file access to its own folder ({})",
                    rules.skill,
                    rules.dir.display()
                ));
            }
        }
    }
    let mut restricted = false;
    for rules in stack {
        if rules.disallowed.any_matches(tool, arg) {
            return Decision::deny(format!(
                "{tool} is in the disallowed-tools of the active skill {:?}",
                rules.skill
            ));
        }
        if let Some(allowed) = &rules.allowed {
            restricted = true;
            if !allowed.any_matches(tool, arg) {
                let what = match arg {
                    Some(a) => format!("{tool}({a})"),
                    None => tool.to_owned(),
                };
                return Decision::deny(format!(
                    "{what} is not in the allowed-tools of the active skill {:?}",
                    rules.skill
                ));
            }
        }
    }
    if restricted {
        Decision::allow("allowed by every active skill's allowed-tools")
    } else if default_allow {
        Decision::allow("no active skill restricts tools")
    } else {
        Decision::deny("no active skill allows tools, and the host denies by default".to_owned())
    }
}
