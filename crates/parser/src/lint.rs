//! Lint rules: advice on how a skill is written. They are warnings (or info) and never make a
//! skill invalid.

use skills_model::{Diagnostic, Frontmatter, Rule, Severity};

/// Lines in a body before `context-budget` warns.
const BUDGET_LINES: usize = 500;
/// Estimated tokens (about four characters each) before `context-budget` warns.
const BUDGET_TOKENS: usize = 5_000;
/// Lines before `progressive-disclosure` asks for `references/`.
const DISCLOSURE_LINES: usize = 200;
/// Lines before `gotchas-present` asks for a Gotchas section.
const GOTCHAS_LINES: usize = 50;

const GENERIC_PHRASES: [&str; 3] = [
    "handle errors appropriately",
    "follow best practices",
    "use proper error handling",
];

const TRIGGERS: [&str; 10] = [
    "use when",
    "use this when",
    "use this skill when",
    "use it when",
    "use for",
    "use this skill for",
    "when the user",
    "when asked",
    "trigger",
    "invoke when",
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
        let lower = description.to_lowercase();
        if !TRIGGERS.iter().any(|t| lower.contains(t)) {
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
    if line_count > DISCLOSURE_LINES && !input.has_references_dir {
        out.push(warn(
            Rule::ProgressiveDisclosure,
            format!("the body is {line_count} lines and the skill has no references/ folder: move detail there and link to it"),
        ));
    }
    if line_count > GOTCHAS_LINES {
        // Headings only count outside fenced code blocks.
        let mut in_fence = false;
        let has_section = lines.iter().any(|l| {
            let l = l.trim_start();
            if l.starts_with("```") || l.starts_with("~~~") {
                in_fence = !in_fence;
                return false;
            }
            !in_fence && l.starts_with('#') && {
                let lower = l.to_lowercase();
                lower.contains("gotcha") || lower.contains("caveat")
            }
        });
        if !has_section {
            out.push(warn(
                Rule::GotchasPresent,
                format!("the body is {line_count} lines with no Gotchas or Caveats section: list the mistakes to avoid"),
            ));
        }
    }
}
