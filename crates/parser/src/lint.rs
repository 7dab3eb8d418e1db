//! Lint rules: advice on how a skill is written. They are warnings (or info) and never make a
//! skill invalid.

use std::borrow::Cow;

use skills_model::{Diagnostic, Frontmatter, Rule, Severity};

/// Lines in a body before `context-budget` warns.
const BUDGET_LINES: usize = 500;
/// Estimated tokens (about four characters each) before `context-budget` warns.
const BUDGET_TOKENS: usize = 5_000;
/// Lines before `progressive-disclosure` asks for `references/` (unless the body already links
/// bundled files: see [`links_bundled_files`]).
const DISCLOSURE_LINES: usize = 200;
/// Lines before `gotchas-present` asks for a Gotchas section (only of a procedure that warns
/// about nothing: see [`needs_gotchas`]).
const GOTCHAS_LINES: usize = 50;

const GENERIC_PHRASES: [&str; 3] = [
    "handle errors appropriately",
    "follow best practices",
    "use proper error handling",
];

/// Whole-word phrases that say when to use a skill. Picked from the real-world corpus
/// (`cargo xtask lint-rates --list description-quality`): the ways its authors actually say it.
const TRIGGER_PHRASES: [&[&str]; 18] = [
    &["when", "the", "user"],
    &["when", "a", "user"],
    &["when", "users"],
    &["when", "user"],
    &["when", "asked"],
    &["whenever"],
    &["when", "you", "need"],
    &["when", "you", "want"],
    &["when", "you", "ask"],
    &["when", "you", "are"],
    &["when", "you're"],
    &["if", "you", "need"],
    &["when", "to", "use"],
    &["for", "tasks", "involving"],
    &["should", "be", "used"],
    &["must", "be", "used"],
    &["can", "be", "used", "when"],
    &["use", "this", "skill", "to"],
];

/// Verbs that open a trigger clause: "Use when", "You MUST use this before", "Activate this
/// skill when", "Load this skill first when", "Applies when", "Invoke when".
const TRIGGER_VERBS: [&str; 6] = ["use", "activate", "load", "invoke", "apply", "applies"];
/// Words allowed between the verb and its condition ("use this skill immediately after").
const TRIGGER_FILLERS: [&str; 9] = [
    "this",
    "that",
    "it",
    "skill",
    "the",
    "immediately",
    "only",
    "first",
    "proactively",
];
/// The condition that makes a verb a trigger: "use when", "use before", "use for" ...
const TRIGGER_CONDITIONS: [&str; 8] = [
    "when", "whenever", "before", "after", "if", "for", "once", "while",
];

const MENU_OPENERS: [&str; 6] = [
    "you can use",
    "you could use",
    "you may use",
    "choose between",
    "choose one of",
    "pick one of",
];

/// The facts lint rules need beyond the text.
pub(crate) struct LintInput<'a> {
    pub(crate) frontmatter: &'a Frontmatter,
    pub(crate) body: &'a str,
    /// The 1-based file line the body starts on.
    pub(crate) body_line: u32,
    pub(crate) has_references_dir: bool,
}

pub(crate) fn lint(input: &LintInput<'_>, out: &mut Vec<Diagnostic>) {
    let lines: Vec<&str> = input.body.lines().collect();
    let line_count = lines.len();
    let tokens = input.body.chars().count() / 4;
    let warn = |rule, message: String| Diagnostic::new(rule, Severity::Warning, message);
    let at_line = |i: usize| {
        input
            .body_line
            .saturating_add(u32::try_from(i).unwrap_or(u32::MAX))
    };

    if line_count > BUDGET_LINES || tokens > BUDGET_TOKENS {
        out.push(warn(
            Rule::ContextBudget,
            format!(
                "the body is {line_count} lines (about {tokens} tokens); keep it under {BUDGET_LINES} lines and {BUDGET_TOKENS} tokens by moving detail into references/"
            ),
        ));
    }
    if let Some(description) = &input.frontmatter.description {
        if !says_when(description) {
            out.push(warn(
                Rule::DescriptionQuality,
                "the description says what the skill does but not when to use it: add a \"Use when ...\" clause".into(),
            ));
        }
    }
    for (i, line) in lines.iter().enumerate() {
        // The phrases are ASCII: ASCII lowercasing keeps byte offsets, so columns stay
        // right after characters whose full lowercase is longer (`İ`).
        let lower = line.to_ascii_lowercase();
        if let Some(phrase) = GENERIC_PHRASES.iter().find(|p| lower.contains(*p)) {
            let column = lower
                .find(phrase)
                .map_or(1, |b| line[..b].chars().count() + 1);
            out.push(
                warn(
                    Rule::NoGenericInstructions,
                    format!("\"{phrase}\" tells a model nothing it does not already do: say what to do instead"),
                )
                .at(at_line(i), u32::try_from(column).unwrap_or(1)),
            );
        }
        if MENU_OPENERS.iter().any(|m| lower.contains(m)) && lower.matches(" or ").count() >= 1 {
            out.push(
                Diagnostic::new(
                    Rule::DefaultsOverMenus,
                    Severity::Info,
                    "this offers a menu of options: name one default and say when to use another",
                )
                .at(at_line(i), 1),
            );
        }
    }
    if line_count > DISCLOSURE_LINES && !input.has_references_dir && !links_bundled_files(&lines) {
        out.push(warn(
            Rule::ProgressiveDisclosure,
            format!("the body is {line_count} lines and the skill has no references/ folder: move detail there and link to it"),
        ));
    }
    if line_count > GOTCHAS_LINES && needs_gotchas(&lines) {
        out.push(warn(
            Rule::GotchasPresent,
            format!("the body is {line_count} lines with no Gotchas or Caveats section: list the mistakes to avoid"),
        ));
    }
}

/// The words of `text`, lowercased: runs of letters, digits and apostrophes (a curly one read
/// as straight), so "You MUST use this before" is `you must use this before`. A word that
/// is already so (ASCII lowercase letters, digits and straight apostrophes: most of them)
/// is borrowed, not copied twice: a copy of every word was about a third of a lint run.
fn words(text: &str) -> Vec<Cow<'_, str>> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '\u{2019}'))
        .filter(|w| !w.is_empty())
        .map(|w| {
            if w.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'\'')
            {
                Cow::Borrowed(w)
            } else {
                Cow::Owned(w.replace('\u{2019}', "'").to_lowercase())
            }
        })
        .collect()
}

/// Whether a description says when to use the skill, not only what it does.
fn says_when(description: &str) -> bool {
    let words = words(description);
    let at = |i: usize| words.get(i).map_or("", |w| w.as_ref());
    // "When ..." opening the description, "Triggers: ...", "triggered by ...".
    if at(0) == "when" || words.iter().any(|w| w.starts_with("trigger")) {
        return true;
    }
    (0..words.len()).any(|i| {
        if TRIGGER_PHRASES
            .iter()
            .any(|phrase| phrase.iter().enumerate().all(|(k, w)| at(i + k) == *w))
        {
            return true;
        }
        // "when analyzing ...", "when building new UI": a when-clause of what the user does.
        if at(i) == "when" && at(i + 1).len() > 4 && at(i + 1).ends_with("ing") {
            return true;
        }
        if !TRIGGER_VERBS.contains(&at(i)) {
            return false;
        }
        let mut j = i + 1;
        while j < i + 4 && TRIGGER_FILLERS.contains(&at(j)) {
            j += 1;
        }
        TRIGGER_CONDITIONS.contains(&at(j))
    })
}

/// Folders of a skill that hold the files its body points to.
const BUNDLED_DIRS: [&str; 5] = [
    "references/",
    "reference/",
    "scripts/",
    "assets/",
    "templates/",
];

/// Whether the body already points to files bundled with the skill: a relative Markdown link
/// (`[forms](forms.md)`, `[guide](./reference/guide.md)`), or a path under `references/`,
/// `scripts/`, `assets/`, `templates/` written anywhere (in backticks, a heading, a command).
/// Links that leave the folder (`http://`, `/abs`, `../other`) and anchors do not count.
fn links_bundled_files(lines: &[&str]) -> bool {
    lines.iter().any(|line| {
        let mut rest = *line;
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            let target = rest
                .split(|c: char| c == ')' || c.is_whitespace())
                .next()
                .unwrap_or("")
                .trim_start_matches('<')
                .trim_end_matches('>');
            if is_bundled_link(target) {
                return true;
            }
        }
        line.split(|c: char| {
            c.is_whitespace()
                || matches!(
                    c,
                    '`' | '\''
                        | '"'
                        | '('
                        | ')'
                        | '['
                        | ']'
                        | '*'
                        | ','
                        | ';'
                        | '<'
                        | '>'
                        | '|'
                        | '='
                )
        })
        .any(|token| {
            let token = token.strip_prefix("./").unwrap_or(token);
            BUNDLED_DIRS
                .iter()
                .any(|dir| token.len() > dir.len() && token.starts_with(dir))
        })
    })
}

/// Whether a Markdown link target is a file inside the skill's folder.
fn is_bundled_link(target: &str) -> bool {
    let path = target.split(['#', '?']).next().unwrap_or("");
    let path = path.strip_prefix("./").unwrap_or(path);
    if path.is_empty()
        || path.starts_with('/')
        || path.starts_with("..")
        || !path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/'))
    {
        return false;
    }
    // A file name with an extension ("forms.md"), or a path under a bundled folder.
    let file = path.rsplit('/').next().unwrap_or("");
    let has_extension = file.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty() && !ext.is_empty() && ext.chars().all(|c| c.is_ascii_alphanumeric())
    });
    has_extension || BUNDLED_DIRS.iter().any(|dir| path.starts_with(dir))
}

/// Heading words that name a section of caveats, as the corpus names them: "Gotchas",
/// "Caveats", "Known Pitfalls", "Common Mistakes", "Anti-patterns", "Red Flags", "Common
/// Rationalizations", "Troubleshooting", "Limitations", "Warnings", "Don'ts", "What Not to
/// Do", "When NOT to Use", "Edge Cases", "Error Handling", "Important Notes", "When Stuck".
const CAVEAT_HEADINGS: [&str; 25] = [
    "gotcha",
    "caveat",
    "pitfall",
    "mistake",
    "anti-pattern",
    "antipattern",
    "red flag",
    "rationalization",
    "troubleshoot",
    "common issue",
    "common problem",
    "common error",
    "common failure",
    "known issue",
    "limitation",
    "warning",
    "caution",
    "don't",
    "don'ts",
    "do not",
    "not to ",
    "avoid",
    "edge case",
    "error handling",
    "important",
];

/// Callouts that mark a caveat in running text: `**Warning**`, `> [!CAUTION]`, `⚠`.
const CAVEAT_CALLOUTS: [&str; 8] = [
    "**warning",
    "**important",
    "**caution",
    "**note",
    "[!warning]",
    "[!caution]",
    "[!important]",
    "\u{26a0}",
];

/// Whether a line warns: a callout, or a prohibition ("never", "do not", "don't", "avoid").
fn warns(lower: &str) -> bool {
    if CAVEAT_CALLOUTS.iter().any(|c| lower.contains(c)) {
        return true;
    }
    let words = words(lower);
    words.iter().enumerate().any(|(i, w)| {
        w == "never"
            || w == "don't"
            || w.starts_with("avoid")
            || (w == "do" && words.get(i + 1).is_some_and(|n| n == "not"))
    })
}

/// Whether `gotchas-present` should ask for a list of mistakes to avoid. Measured over the
/// real-world corpus (`cargo xtask lint-rates`), "over 50 lines without a heading holding
/// `gotcha` or `caveat`" fired on 1,631 of 1,745 skills (93%): 830 Composio skills have a
/// "Known Pitfalls" section, superpowers has "Common Mistakes" and "Red Flags", many have
/// "Troubleshooting". A warning on nine skills in ten is noise. The rule now fires only on a
/// long body that is a procedure (a fenced code block, or three numbered steps: something a
/// model runs, where mistakes cost) and that warns about nothing: no caveat section under any
/// of the names the corpus uses ([`CAVEAT_HEADINGS`]), no callout and no prohibition in its
/// text ([`warns`]). Reference pages, personas and checklists of facts are quiet.
fn needs_gotchas(lines: &[&str]) -> bool {
    let mut in_fence = false;
    let (mut fences, mut steps) = (0, 0);
    for line in lines {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
            fences += usize::from(in_fence);
            continue;
        }
        // Headings and text only count outside fenced code blocks.
        if in_fence {
            continue;
        }
        let lower = trimmed.to_lowercase().replace('\u{2019}', "'");
        if lower.starts_with('#') && CAVEAT_HEADINGS.iter().any(|h| lower.contains(h)) {
            return false;
        }
        if warns(&lower) {
            return false;
        }
        steps += usize::from(is_step(&lower));
    }
    fences > 0 || steps >= 3
}

/// A numbered step: "1. ...", "2) ...", "Step 3: ...".
fn is_step(lower: &str) -> bool {
    let digits = lower.chars().take_while(char::is_ascii_digit).count();
    if digits > 0 {
        return matches!(lower[digits..].chars().next(), Some('.' | ')'))
            && lower[digits + 1..].starts_with(' ');
    }
    lower
        .strip_prefix("step ")
        .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    /// Words come lowercased with straight apostrophes, whether borrowed (already so) or
    /// copied: ASCII, capitals, curly apostrophes, digits, a Kelvin sign (lowercased to an
    /// ASCII `k`) and a dotted capital I (lowercased to two characters).
    #[test]
    fn words_are_lowercased_with_straight_apostrophes() {
        for (text, want) in [
            (
                "You MUST use this before",
                &["you", "must", "use", "this", "before"][..],
            ),
            ("don\u{2019}t Don't don't", &["don't", "don't", "don't"]),
            ("abc123, x'y -- 42", &["abc123", "x'y", "42"]),
            (
                "\u{212a}elvin \u{130}stanbul",
                &["kelvin", "i\u{307}stanbul"],
            ),
            ("  ", &[]),
        ] {
            let got = super::words(text);
            assert_eq!(got, want, "{text:?}");
        }
    }
}
