//! Rule lists indexed by the command name their rules fix, so that a command of a Bash line
//! meets only the rules of its name (and those no name fixes), and the bound on the
//! comparisons one decision makes.

use std::cell::Cell;
use std::collections::HashMap;

use skills_model::{Specifier, ToolRule, ToolRules};

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
    pub(crate) fn build(rules: &ToolRules) -> RuleIndex {
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
    pub(crate) index: &'r RuleIndex,
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
