//! The decision on one resolved host tool call, against the compiled rules of the active
//! skills (bottom to top): a pipeline of the checks that need no argument, the protections
//! of skill folders, the deny rules, then `allowed-tools` read as a restriction
//! (`restrict`) or as a pre-approval (`preapprove`). Deciding allocates only for the
//! reason of a denial (and the rule it names).

use crate::call::{Call, Forms, NotAdmitted, ToolClass, Unadmitted};
use crate::index::MAX_COMPARISONS;
use crate::rules::CompiledRules;
use crate::tool::PathAccess;
use skills_model::ToolRule;

/// What happens to a host tool call when no active skill restricts tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefaultDecision {
    /// Allow it (the default).
    Allow,
    /// Deny it.
    Deny,
}

/// What an active skill's `allowed-tools` means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AllowedToolsMode {
    /// A restriction (the default, the Agent Skills reading): while a skill that lists
    /// tools is active, a call it does not list is denied.
    Restrict,
    /// Pre-approval (Claude Code's reading: "it does not restrict which tools are
    /// available"): a call some active skill lists is allowed; every other call gets the
    /// host's default decision. `disallowed-tools`, confinement and the protection of skill
    /// folders still deny.
    Preapprove,
}

/// What decides a call the skills' rules leave open: the host's default decision, and what
/// `allowed-tools` means.
#[derive(Debug, Clone, Copy)]
pub struct Fallback {
    /// The host's default decision.
    pub default: DefaultDecision,
    /// What `allowed-tools` means.
    pub mode: AllowedToolsMode,
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

/// The rule a denial under `security.fileSystemScope` names.
const CONFINED_RULE: &str = "security.fileSystemScope: skill-directory";

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
    pub fn bounded(mut self) -> Decision {
        if self.reason.len() > skills_model::MESSAGE_MAX {
            self.reason =
                skills_model::cut_text(&self.reason, skills_model::MESSAGE_MAX).into_owned();
        }
        self
    }

    /// A denial of the executor itself, no skill's rule deciding (a name that is not
    /// plain, a path no system can open, an audit that cannot be written).
    pub fn refused(reason: String) -> Decision {
        Decision::deny(reason)
    }

    fn by(mut self, rules: &CompiledRules, rule: Option<String>) -> Decision {
        self.skill = Some(rules.skill.clone());
        self.rule = rule;
        self
    }
}

/// Decides one resolved call against the stack (bottom to top). The fallback's default
/// applies when no skill restricts tools, or (pre-approval) when none lists the call.
pub fn decide<'a>(
    stack: impl Iterator<Item = &'a CompiledRules> + Clone,
    call: &Call<'_>,
    fallback: Fallback,
) -> Decision {
    decide_counted(stack, call, fallback).0
}

/// [`decide`], with the rule comparisons it made (at most one past [`MAX_COMPARISONS`]:
/// a call that needs more is refused, since what was not compared may deny it).
pub(crate) fn decide_counted<'a>(
    stack: impl Iterator<Item = &'a CompiledRules> + Clone,
    call: &Call<'_>,
    fallback: Fallback,
) -> (Decision, u64) {
    if let Some(denied) = untrusted_origin(stack.clone(), call) {
        return (denied, 0);
    }
    if let Some(denied) = without_argument(stack.clone(), call) {
        return (denied, 0);
    }
    if let Some(denied) = protect(stack.clone(), call) {
        return (denied, 0);
    }
    let forms = Forms::of(call);
    let decision = by_rules(stack, &forms, fallback);
    let work = forms.work.done();
    if forms.work.exhausted() {
        let refused = Decision::deny(format!(
            "judging this {} call against the active skills' rules takes more than {MAX_COMPARISONS} comparisons of a rule with a command or path, the most one decision makes: split the line, or write fewer rules for one command",
            forms.tool
        ));
        return (refused, work);
    }
    (decision, work)
}

/// The deny rules, then `allowed-tools` in the fallback's mode.
fn by_rules<'a>(
    stack: impl Iterator<Item = &'a CompiledRules> + Clone,
    forms: &Forms<'_>,
    fallback: Fallback,
) -> Decision {
    // A skill's deny rules are read before its allow rules, so the skills below the first
    // that denies are the only ones whose `allowed-tools` can decide first.
    let denier = stack
        .clone()
        .enumerate()
        .find(|(_, r)| forms.denied_by(r.disallowed_indexed()));
    let below = stack.take(denier.map_or(usize::MAX, |(i, _)| i));
    let denial = |rules: &CompiledRules| {
        Decision::deny(format!(
            "{} is in the disallowed-tools of the active skill {:?}",
            forms.tool, rules.skill
        ))
        .by(rules, rules.disallowed_rule(forms.tool))
    };
    match fallback.mode {
        AllowedToolsMode::Restrict => match (restrict(below, forms), denier) {
            (Err(denied), _) => denied,
            (Ok(_), Some((_, rules))) => denial(rules),
            (Ok(Some(admitted)), None) => {
                Decision::allow("allowed by every active skill's allowed-tools")
                    .by(admitted.0, admitting_rule(admitted, forms))
            }
            (Ok(None), None) if fallback.default == DefaultDecision::Allow => {
                Decision::allow("no active skill restricts tools")
            }
            (Ok(None), None) => Decision::deny(
                "no active skill allows tools, and the host denies by default".to_owned(),
            ),
        },
        AllowedToolsMode::Preapprove => match (preapprove(below, forms), denier) {
            (Some(admitted), _) => {
                Decision::allow("pre-approved by an active skill's allowed-tools")
                    .by(admitted.0, admitting_rule(admitted, forms))
            }
            (None, Some((_, rules))) => denial(rules),
            (None, None) if fallback.default == DefaultDecision::Allow => {
                Decision::allow("no active skill pre-approves it; the host allows by default")
            }
            (None, None) => Decision::deny(
                "no active skill pre-approves it (allowed-tools), and the host denies by default"
                    .to_owned(),
            ),
        },
    }
}

/// The rule id of a denial under a skill of an untrusted remote origin.
const UNTRUSTED_RULE: &str = "remote.untrusted";

/// A code-execution tool's call while a skill of an untrusted remote origin is active:
/// denied, naming the skill and its origin, whatever any skill allows.
fn untrusted_origin<'a>(
    mut stack: impl Iterator<Item = &'a CompiledRules>,
    call: &Call<'_>,
) -> Option<Decision> {
    if call.class != ToolClass::CodeExecution {
        return None;
    }
    let rules = stack.find(|r| r.untrusted_origin.is_some())?;
    let origin = rules.untrusted_origin.as_deref().unwrap_or_default();
    Some(
        Decision::deny(format!(
            "{} runs code, and the active skill {:?} comes from {origin}, which the host does not trust (trust it with --trust {origin})",
            call.tool, rules.skill
        ))
        .by(rules, Some(UNTRUSTED_RULE.to_owned())),
    )
}

/// A call without an argument: refused by a confined skill for a path tool (it cannot be
/// shown to stay inside), and by a skill whose deny rules name the tool (a specifier cannot
/// be checked without the argument: fail closed, also when the host declares no primary
/// argument for the tool, so none is found).
fn without_argument<'a>(
    mut stack: impl Iterator<Item = &'a CompiledRules> + Clone,
    call: &Call<'_>,
) -> Option<Decision> {
    if call.arg.is_some() {
        return None;
    }
    let tool = call.tool;
    if call.access != PathAccess::None {
        if let Some(rules) = stack.clone().find(|r| r.confined) {
            return Some(
                Decision::deny(format!(
                    "the active skill {:?} confines file access to its own folder ({}), and this {tool} call names no path",
                    rules.skill,
                    rules.dir.display()
                ))
                .by(rules, Some(CONFINED_RULE.into())),
            );
        }
    }
    let rules = stack.find(|r| r.disallowed.names_tool(tool))?;
    Some(
        Decision::deny(format!(
            "{tool} is restricted by the disallowed-tools of the active skill {:?}, and this call has no argument to check",
            rules.skill
        ))
        .by(rules, rules.disallowed_rule(tool)),
    )
}

/// The protections of the active skills' folders, whatever their rules say: their scripts
/// are neither read (they run with `skills_run_script`) nor written (they run with the
/// layer's trust), and a confined skill's path tools stay inside its folder.
fn protect<'a>(
    stack: impl Iterator<Item = &'a CompiledRules>,
    call: &Call<'_>,
) -> Option<Decision> {
    let (Some(path), Some(arg)) = (&call.path, call.arg) else {
        return None;
    };
    for rules in stack {
        if call.access == PathAccess::Read && rules.touches_a_script(path) {
            return Some(
                Decision {
                    script_read: true,
                    ..Decision::deny(format!(
                        "{arg} is a script of the active skill {:?}: run it with skills_run_script instead of reading it",
                        rules.skill
                    ))
                }
                .by(rules, None),
            );
        }
        // The scripts of an active skill run with its layer's trust: the model must not
        // be able to write one and then run it.
        if call.access == PathAccess::Write && rules.touches_a_script(path) {
            return Some(
                Decision::deny(format!(
                    "{arg} is a script of the active skill {:?}: its scripts cannot be changed while it is active",
                    rules.skill
                ))
                .by(rules, None),
            );
        }
        // Confined: the path must stay inside as written and as resolved (a link inside
        // the skill that points outside does not count as inside).
        if rules.confined && !rules.contains(path) {
            return Some(
                Decision::deny(format!(
                    "the active skill {:?} confines file access to its own folder ({})",
                    rules.skill,
                    rules.dir.display()
                ))
                .by(rules, Some(CONFINED_RULE.into())),
            );
        }
    }
    None
}

/// `allowed-tools` as a restriction: every skill that lists tools must list the call. The
/// denial of the first that does not; else the top skill that lists tools (none when no
/// skill restricts).
fn restrict<'a>(
    stack: impl Iterator<Item = &'a CompiledRules>,
    forms: &Forms<'_>,
) -> Result<Option<Admitted<'a>>, Decision> {
    let mut deciding = None;
    for rules in stack {
        let Some(allowed) = rules.allowed_indexed() else {
            continue;
        };
        match forms.permitted(allowed, rules.canonical_indexed()) {
            Ok(rule) => deciding = Some((rules, rule)),
            Err(why) => return Err(not_allowed(rules, forms, &why)),
        }
    }
    Ok(deciding)
}

/// The skill whose `allowed-tools` decided, and the rule that admitted the call when the
/// check met it on the way.
type Admitted<'a> = (&'a CompiledRules, Option<&'a ToolRule>);

/// `allowed-tools` as a pre-approval: the first skill that lists the call allows it; a
/// skill that does not list it says nothing.
fn preapprove<'a>(
    stack: impl Iterator<Item = &'a CompiledRules>,
    forms: &Forms<'_>,
) -> Option<Admitted<'a>> {
    // A skill of an untrusted remote origin pre-approves nothing.
    stack
        .filter(|rules| rules.untrusted_origin.is_none())
        .find_map(|rules| {
            let allowed = rules.allowed_indexed()?;
            let rule = forms.permitted(allowed, rules.canonical_indexed()).ok()?;
            Some((rules, rule))
        })
}

/// The denial of a call `rules` does not list, quoting the call (its argument cut, so that
/// what follows, why it was denied, stays within the reason's bound).
fn not_allowed(rules: &CompiledRules, forms: &Forms<'_>, why: &NotAdmitted) -> Decision {
    use std::fmt::Write as _;
    // One string, written in order (writing to a `String` cannot fail).
    let mut reason = String::with_capacity(160);
    reason.push_str(forms.tool);
    if let Some(a) = forms.arg {
        reason.push('(');
        reason.push_str(&skills_model::cut_text(a, QUOTED_MAX));
        reason.push(')');
    }
    let _ = write!(
        reason,
        " is not in the allowed-tools of the active skill {:?}",
        rules.skill
    );
    let _ = match (why.refused, &why.held, &why.command) {
        // A command no rule could admit is what to change first, whatever else the line
        // holds (`git status && rm -rf ~` names `rm`, not the tilde).
        (_, _, Some(Unadmitted::Name(name))) => {
            write!(
                reason,
                ": none of its rules admits a command named {name:?}"
            )
        }
        (Some(construct), _, _) => {
            write!(reason, ": {construct} is not admitted under an allow rule")
        }
        (None, Some(option), _) => write!(
            reason,
            ": {option} writes files or runs programs, and a rule admits it only by naming it"
        ),
        (None, None, Some(Unadmitted::Command(command))) => {
            write!(reason, ": none of its rules admits the command {command:?}")
        }
        (None, None, None) => Ok(()),
    };
    Decision::deny(reason).by(rules, None)
}

/// The rule of the deciding skill that admits the call (for a compound Bash line, the one
/// its first command matched).
fn admitting_rule((rules, known): Admitted<'_>, forms: &Forms<'_>) -> Option<String> {
    if let Some(rule) = known {
        return Some(rule.text());
    }
    let (tool, work) = (forms.tool, &forms.work);
    let first = if forms.bash {
        forms.commands().as_ref().ok().and_then(|cmds| cmds.first())
    } else {
        None
    };
    let allowed = rules.allowed_indexed()?;
    allowed
        .first_match(tool, None, work)
        .or_else(|| first.and_then(|c| forms.admitting(allowed, c).ok()))
        .or_else(|| {
            forms
                .lexical
                .as_deref()
                .and_then(|l| allowed.first_match(tool, Some(l), work))
        })
        .or_else(|| allowed.first_match(tool, forms.arg, work))
        .or_else(|| {
            rules.canonical_indexed().and_then(|c| {
                forms
                    .resolved
                    .as_deref()
                    .and_then(|r| c.first_match(tool, Some(r), work))
            })
        })
        .map(ToolRule::text)
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use skills_model::{Diagnostic, Frontmatter, Layer, Skill, SkillName, SkillRecord, ToolRules};

    use super::*;
    use crate::rules::FolderFacts;
    use crate::PathAccess;

    /// A skill `many` whose `allowed-tools` and `disallowed-tools` are these, compiled
    /// (made by hand: a frontmatter of so many rules is over the parser's size cap).
    fn compiled(allowed: &str, disallowed: &str) -> CompiledRules {
        let mut frontmatter = Frontmatter::default();
        frontmatter.allowed_tools = Some(ToolRules::parse_lenient(allowed).0);
        frontmatter.disallowed_tools = Some(ToolRules::parse_lenient(disallowed).0);
        let record = SkillRecord {
            name: SkillName::lenient("many").expect("a name"),
            description: "Many rules.".to_owned(),
            layer: Layer::Personal,
            plugin: None,
            path: Path::new("/skills/many/SKILL.md").to_path_buf(),
            frontmatter: Arc::new(frontmatter),
            body_offset: 0,
            diagnostics: Arc::from(Vec::<Diagnostic>::new()),
            remote: None,
        };
        let skill = Skill {
            record: Arc::new(record),
            body: "Body.\n".to_owned(),
            files: Vec::new(),
            digest: "sha256:0".to_owned(),
        };
        CompiledRules::compile(&skill, FolderFacts::default())
    }

    /// `Bash` on `line` against `rules`, with the comparisons made.
    fn bash(rules: &CompiledRules, line: &str) -> (Decision, u64) {
        let call = Call {
            tool: "Bash",
            arg: Some(line),
            access: PathAccess::None,
            path: None,
            class: ToolClass::CodeExecution,
        };
        let fallback = Fallback {
            default: DefaultDecision::Allow,
            mode: AllowedToolsMode::Restrict,
        };
        decide_counted(std::iter::once(rules), &call, fallback)
    }

    /// A rule list of `n` rules `Bash(<word><i>:*)`.
    fn rules_of(word: &str, n: usize) -> String {
        (0..n).map(|i| format!("Bash({word}{i}:*) ")).collect()
    }

    // Regression (issue 38): every command of a Bash line was compared with every rule, so
    // 4,300 `Bash(...)` rules and a line of megabytes took one `check_tool` 26 s, the
    // session answering nothing meanwhile. Rules are indexed by the command name they fix:
    // a command is compared with the rules of its name (and those no name fixes).
    #[test]
    fn regression_a_line_is_compared_with_the_rules_of_its_commands_names() {
        let rules = compiled(&rules_of("cmd", 4_300), &rules_of("bad", 4_300));
        let commands = 100_000;
        let line: Vec<String> = (0..commands)
            .map(|i| format!("cmd{} x", i % 4_300))
            .collect();
        let (decision, work) = bash(&rules, &line.join(" && "));
        assert!(decision.allowed, "{}", decision.reason);
        // One comparison per command, and a few for the rule the decision names.
        assert!(
            work <= commands as u64 + 10,
            "{work} comparisons for {commands} commands"
        );
        let (decision, work) = bash(&rules, &format!("{} && bad7 x", line.join(" && ")));
        assert!(!decision.allowed);
        assert!(
            decision.reason.contains("disallowed-tools"),
            "{}",
            decision.reason
        );
        assert!(work <= commands as u64 + 10, "{work} comparisons");
    }

    // Regression (issue 38): what the index cannot narrow (thousands of rules for one
    // command name, a line of thousands of such commands) is bounded: past
    // `MAX_COMPARISONS` the call is refused (what was not compared may deny it), saying so.
    #[test]
    fn regression_a_decision_makes_a_bounded_number_of_comparisons() {
        let rules = compiled(&rules_of("git sub", 4_300), "");
        let line = vec!["git sub4299"; 1_000].join(" && ");
        let (decision, work) = bash(&rules, &line);
        assert!(!decision.allowed, "allowed after {work} comparisons");
        assert!(
            decision.reason.contains("comparisons"),
            "{}",
            decision.reason
        );
        assert_eq!(work, MAX_COMPARISONS + 1);
        // Below the bound the same rules decide as ever.
        let (decision, work) = bash(&rules, "git sub4299 && git sub1");
        assert!(decision.allowed, "{}", decision.reason);
        assert!(work < 10_000, "{work}");
    }
}
