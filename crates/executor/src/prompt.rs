//! Prompt rendering: `<available_skills>` in the agentskills.io form, the skill-tool
//! description, `<active_skills>`, and the per-turn instructions, under a character budget.
//!
//! # `<available_skills>`
//!
//! [`available_skills`] prints exactly what the reference tool (`agentskills to-prompt`, from
//! the `skills-ref` package) prints for the same skills in the same order: one tag or value
//! per line, no indentation, skills in the order given (never sorted), and a final newline
//! (the reference joins its lines with `\n` and the CLI's `echo` adds one):
//!
//! ```text
//! <available_skills>
//! <skill>
//! <name>
//! pdf-tools
//! </name>
//! <description>
//! Fill PDF forms &amp; extract text.
//! </description>
//! <location>
//! /skills/pdf-tools/SKILL.md
//! </location>
//! </skill>
//! </available_skills>
//! ```
//!
//! With no skills it is `<available_skills>\n</available_skills>\n`. The name and the
//! description are stripped of surrounding whitespace the way Python's `str.strip()` does
//! (Unicode white space plus U+001C..U+001F) and escaped as Python's
//! `html.escape(quote=True)` does: `&` `<` `>` `"` `'` become `&amp;` `&lt;` `&gt;` `&quot;`
//! `&#x27;`. The location is the path of `SKILL.md`, printed as it is: the reference does
//! not escape it, so neither does this module.
//!
//! Every function here returns text that ends with exactly one newline (or the empty string,
//! for [`active_skills`] with nothing active); composite texts join their parts with one
//! blank line.
//!
//! # `<skill_content>`
//!
//! [`skill_content`] wraps one loaded skill the way the agentskills.io client implementation
//! guide shows a dedicated activation tool returning it: the body, the skill's folder, and a
//! `<skill_resources>` list of its files (named, never read):
//!
//! ```text
//! <skill_content name="pdf-tools">
//! # PDF tools
//! ...
//!
//! Skill directory: /skills/pdf-tools
//! Relative paths in this skill are relative to the skill directory.
//!
//! <skill_resources>
//!   <file>scripts/extract.py</file>
//! </skill_resources>
//! </skill_content>
//! ```
//!
//! The model reads the body as its author wrote it: it is not XML-escaped (a command such
//! as `make 2>&1` stays copyable). What could end or forge the wrapper is neutralised
//! instead: in the body and the folder, a `<` that opens a `skill_content` or
//! `skill_resources` tag (`</skill_content>`, `<skill_resources ...>`, any letter case)
//! becomes `&lt;`; in a file's path, so does a `<` opening a `file` tag, and `&`, `<`, `>`
//! of the path's own are not otherwise touched. So the text holds exactly one
//! `</skill_content>`, its last line, and one `<skill_resources>` block, which a host can
//! find when it compacts a conversation. The name is escaped as an attribute (`&` `<` `>`
//! `"` `'`). At most [`MAX_LISTED_RESOURCES`] files are listed; past that a line inside the
//! block says how many more there are and that the listing is incomplete. A skill with no
//! files has no `<skill_resources>` block.
//!
//! # The budget
//!
//! [`skill_tool_description`] and [`instructions`] take a budget in characters (Unicode
//! scalar values) for their available-skills part: the `<available_skills>` block plus, when
//! skills are left out, a closing line after it. When the full block is over budget:
//!
//! 1. Descriptions are shortened first: every description longer than a common maximum `M`
//!    is cut to its first `M - 1` characters (trailing white space removed) followed by `…`,
//!    with `M` the largest value that fits. Descriptions are never cut below
//!    `MIN_DESCRIPTION_CHARS` (50).
//! 2. If all skills do not fit even so, skills are left out by precedence: the list is
//!    ranked by layer (enterprise, personal, project, plugin), then higher `priority`, ties
//!    in the given order, and the renderer keeps the longest prefix of that ranking that
//!    fits (descriptions cut to `MIN_DESCRIPTION_CHARS` (50) at most, closing line
//!    included), then again picks the largest `M` for it. The kept skills are rendered in
//!    the given order. The closing line, outside the XML block, says how many skills were
//!    left out and how to find them: `(3 more skills not shown: the prompt budget is 2000
//!    characters; find them with skills_search)`.
//! 3. If not even an empty block and the closing line fit, the part is the closing line
//!    alone.
//!
//! The result depends only on the input: the same skills and budget give the same text.

use std::borrow::Cow;

use skills_model::{Layer, Skill, SkillRecord};

/// Descriptions are never shortened below this many characters (`…` included) to meet a
/// budget; past that, skills are left out instead.
const MIN_DESCRIPTION_CHARS: usize = 50;

/// The mark that ends a shortened description.
const ELLIPSIS: char = '…';

/// The opening paragraph of the skill tool's description (see [`skill_tool_description`]).
const SKILL_TOOL_INTRO: &str = "\
Load a skill by name and return its full instructions. A skill is a folder of instructions, \
scripts and resources for one kind of task; below, each available skill has a name and a \
description of when to use it. When a task matches a skill's description, call this tool \
with the skill's name before doing anything else for the task: a skill must be loaded \
before you follow it or use any of its files or scripts. Use only the names listed below, \
and do not load a skill that is already loaded.
";

/// A sentence added to `SKILL_TOOL_INTRO` when the skills' locations are shown.
const SKILL_TOOL_LOCATION_NOTE: &str = "\
Each skill's <location> is the path of its SKILL.md; the folder that holds it is the \
skill's base path.
";

/// The base block of [`instructions`]: how to use skills, for any model.
const BASE_INSTRUCTIONS: &str = "\
# Skills

Skills are folders of instructions, scripts and resources that extend what you can do. \
The skills you can use are listed in <available_skills>, each with a name, a description of \
when to use it, and the location of its SKILL.md.

- When a task matches a skill's description, load that skill with the skill-loading tool \
before doing anything else for the task. Never follow a skill's instructions, read its \
files or run its scripts before it is loaded.
- Loaded skills appear in <active_skills>, each with its full instructions; follow them.
- Relative paths in a skill's instructions resolve against that skill's base_path (its \
folder), not against the current working directory.
- To run a script of a skill, use the run-script tool with the script's path. Do not read \
a script to find out what it does or to run it yourself; read a skill's other files only \
when its instructions point to them.
";

/// `<available_skills>` exactly as the reference tool (`agentskills to-prompt`) prints it
/// for the same skills in the same order.
pub fn available_skills(skills: &[&SkillRecord]) -> String {
    render_unbudgeted(skills, true)
}

/// `<available_skills>` within `budget` characters (see the module documentation); with
/// no budget, exactly [`available_skills`].
pub fn available_skills_within(skills: &[&SkillRecord], budget: Option<usize>) -> String {
    available_within(skills, true, budget)
}

/// The whole block, written straight out: the common case, with no budget bookkeeping.
fn render_unbudgeted(skills: &[&SkillRecord], include_location: bool) -> String {
    let size: usize = skills
        .iter()
        .map(|r| r.name.as_str().len() + r.description.len() + r.path.as_os_str().len() + 96)
        .sum();
    let mut out = String::with_capacity(BLOCK_CHARS + size);
    out.push_str("<available_skills>\n");
    for r in skills {
        out.push_str("<skill>\n<name>\n");
        escape_into(&mut out, py_strip(r.name.as_str()), true);
        out.push_str("\n</name>\n<description>\n");
        escape_into(&mut out, py_strip(&r.listed_description()), true);
        out.push_str("\n</description>\n");
        if include_location {
            out.push_str("<location>\n");
            out.push_str(&r.path.to_string_lossy());
            out.push_str("\n</location>\n");
        }
        out.push_str("</skill>\n");
    }
    out.push_str("</available_skills>\n");
    out
}

/// The description of the single-skill `skill` tool: what it does, then the available
/// skills (with `<location>` only when `include_location`), within `budget` characters.
pub fn skill_tool_description(
    skills: &[&SkillRecord],
    include_location: bool,
    budget: Option<usize>,
) -> String {
    let mut out = String::from(SKILL_TOOL_INTRO);
    if include_location {
        out.push_str(SKILL_TOOL_LOCATION_NOTE);
    }
    out.push('\n');
    out.push_str(&available_within(skills, include_location, budget));
    out
}

/// `<active_skills>` with each active skill's body, in stack order.
///
/// Each skill is `<skill name="..." base_path="...">`, its body, `</skill>`, one per line.
/// Attribute values are escaped like the reference escapes names (`&` `<` `>` `"` `'`); the
/// body is XML text, so `&`, `<` and `>` become `&amp;`, `&lt;` and `&gt;` (quotes stay as
/// they are): an XML reader gets the body back unchanged, and nothing in it can close the
/// `<skill>` element early. Blank lines before the body and white space after it are
/// dropped. The empty string when nothing is active.
pub fn active_skills(active: &[&Skill]) -> String {
    if active.is_empty() {
        return String::new();
    }
    let mut out = String::from("<active_skills>\n");
    for skill in active {
        let record = &skill.record;
        out.push_str("<skill name=\"");
        out.push_str(&escape(py_strip(record.name.as_str()), true));
        out.push_str("\" base_path=\"");
        out.push_str(&escape(&record.dir().to_string_lossy(), true));
        out.push_str("\">\n");
        let body = trim_body(&skill.body);
        if !body.is_empty() {
            out.push_str(&escape(body, false));
            out.push('\n');
        }
        out.push_str("</skill>\n");
    }
    out.push_str("</active_skills>\n");
    out
}

/// At most this many files are listed in a `<skill_resources>` block.
pub const MAX_LISTED_RESOURCES: usize = 100;

/// The tags [`skill_content`] writes around a body: a `<` that opens one inside a body or a
/// folder is neutralised.
const WRAPPER_TAGS: &[&str] = &["skill_content", "skill_resources"];

/// The tags that a file's path must not open: the wrapper's and `file`.
const RESOURCE_TAGS: &[&str] = &["skill_content", "skill_resources", "file"];

/// One loaded skill wrapped as `<skill_content>` (see the module documentation): what a
/// load receipt carries for the model and what the `skill` tool returns.
pub fn skill_content(skill: &Skill) -> String {
    let record = &skill.record;
    let body = trim_body(&skill.body);
    let mut out =
        String::with_capacity(body.len() + 256 + 40 * skill.files.len().min(MAX_LISTED_RESOURCES));
    out.push_str("<skill_content name=\"");
    escape_into(&mut out, py_strip(record.name.as_str()), true);
    out.push_str("\">\n");
    if !body.is_empty() {
        neutralise_into(&mut out, body, WRAPPER_TAGS);
        out.push_str("\n\n");
    }
    out.push_str("Skill directory: ");
    neutralise_into(&mut out, &record.dir().to_string_lossy(), WRAPPER_TAGS);
    out.push_str("\nRelative paths in this skill are relative to the skill directory.\n");
    if !skill.files.is_empty() {
        out.push_str("\n<skill_resources>\n");
        for file in skill.files.iter().take(MAX_LISTED_RESOURCES) {
            out.push_str("  <file>");
            neutralise_into(&mut out, &file.path, RESOURCE_TAGS);
            out.push_str("</file>\n");
        }
        let left_out = skill.files.len().saturating_sub(MAX_LISTED_RESOURCES);
        if left_out > 0 {
            let files = if left_out == 1 { "file" } else { "files" };
            out.push_str(&format!(
                "  ({left_out} more {files} not listed: this listing is incomplete)\n"
            ));
        }
        out.push_str("</skill_resources>\n");
    }
    out.push_str("</skill_content>\n");
    out
}

/// `s` written into `out` with every `<` that opens (or closes) one of `tags` turned into
/// `&lt;`: `<tag` or `</tag`, in any letter case, followed by `>`, `/`, white space or the
/// end. Nothing else is changed.
fn neutralise_into(out: &mut String, s: &str, tags: &[&str]) {
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, _) in s.match_indices('<') {
        let rest = &bytes[i + 1..];
        let rest = rest.strip_prefix(b"/").unwrap_or(rest);
        let opens = tags.iter().any(|tag| {
            rest.len() >= tag.len()
                && rest[..tag.len()].eq_ignore_ascii_case(tag.as_bytes())
                && rest
                    .get(tag.len())
                    .is_none_or(|b| matches!(b, b'>' | b'/') || b.is_ascii_whitespace())
        });
        if opens {
            out.push_str(&s[start..i]);
            out.push_str("&lt;");
            start = i + 1;
        }
    }
    out.push_str(&s[start..]);
}

/// The top-level instructions for the next model call: the base block, then
/// `<available_skills>` (within `budget` characters when given), then `<active_skills>`.
///
/// The parts are the base block (`BASE_INSTRUCTIONS`), the available-skills part (the form of
/// [`available_skills`], shortened as the module documentation describes when over budget)
/// and, when a skill is active, [`active_skills`], separated by one blank line.
pub fn instructions(
    available: &[&SkillRecord],
    active: &[&Skill],
    budget: Option<usize>,
) -> String {
    let mut out = String::from(BASE_INSTRUCTIONS);
    out.push('\n');
    out.push_str(&available_within(available, true, budget));
    let active = active_skills(active);
    if !active.is_empty() {
        out.push('\n');
        out.push_str(&active);
    }
    out
}

/// One skill of `<available_skills>`, ready to render and measure.
struct Item {
    /// The escaped name.
    name: String,
    /// The stripped, unescaped description.
    description: String,
    /// Its length in characters.
    description_len: usize,
    /// `escaped[k]`: the escaped length of the description's first `k` characters.
    escaped: Vec<usize>,
    /// `kept[k]`: the length of the first `k` characters once trailing white space is cut.
    kept: Vec<usize>,
    /// The location line, when shown.
    location: Option<String>,
}

impl Item {
    fn new(record: &SkillRecord, include_location: bool) -> Item {
        let description = py_strip(&record.listed_description()).to_owned();
        let mut escaped = vec![0];
        let mut kept = vec![0];
        for (k, c) in description.chars().enumerate() {
            escaped.push(escaped[k] + escaped_len(c));
            kept.push(if c.is_whitespace() { kept[k] } else { k + 1 });
        }
        Item {
            name: escape(py_strip(record.name.as_str()), true).into_owned(),
            description_len: escaped.len() - 1,
            description,
            escaped,
            kept,
            location: include_location.then(|| record.path.to_string_lossy().into_owned()),
        }
    }

    /// The escaped description, cut to `max` characters when given.
    fn description(&self, max: Option<usize>) -> String {
        match max {
            Some(max) if self.description_len > max => {
                let keep = self.kept[max.saturating_sub(1)];
                let mut cut: String = self.description.chars().take(keep).collect();
                cut.push(ELLIPSIS);
                escape(&cut, true).into_owned()
            }
            _ => escape(&self.description, true).into_owned(),
        }
    }

    /// The length in characters of `Item::description` for the same `max`.
    fn description_chars(&self, max: Option<usize>) -> usize {
        match max {
            Some(max) if self.description_len > max => {
                self.escaped[self.kept[max.saturating_sub(1)]] + 1
            }
            _ => self.escaped[self.description_len],
        }
    }

    /// The length in characters of this skill's lines, descriptions cut to `max`.
    fn chars(&self, max: Option<usize>) -> usize {
        let mut n = SKILL_LINES_CHARS + self.name.chars().count() + self.description_chars(max);
        if let Some(location) = &self.location {
            n += LOCATION_LINES_CHARS + location.chars().count();
        }
        n
    }

    fn render(&self, max: Option<usize>, out: &mut String) {
        out.push_str("<skill>\n<name>\n");
        out.push_str(&self.name);
        out.push_str("\n</name>\n<description>\n");
        out.push_str(&self.description(max));
        out.push_str("\n</description>\n");
        if let Some(location) = &self.location {
            out.push_str("<location>\n");
            out.push_str(location);
            out.push_str("\n</location>\n");
        }
        out.push_str("</skill>\n");
    }
}

/// Characters of `<available_skills>\n</available_skills>\n`.
const BLOCK_CHARS: usize = "<available_skills>\n</available_skills>\n".len();
/// Characters of a skill's lines, name and description and location lines aside.
const SKILL_LINES_CHARS: usize =
    "<skill>\n<name>\n\n</name>\n<description>\n\n</description>\n</skill>\n".len();
/// Characters of the location lines, the location aside.
const LOCATION_LINES_CHARS: usize = "<location>\n\n</location>\n".len();

/// The block with every item, descriptions cut to `max` characters when given.
fn render_block(items: &[Item], max: Option<usize>) -> String {
    let mut out = String::from("<available_skills>\n");
    for item in items {
        item.render(max, &mut out);
    }
    out.push_str("</available_skills>\n");
    out
}

/// The line that says how many skills the budget left out, with its newline.
fn closing_line(left_out: usize, budget: usize) -> String {
    let skills = if left_out == 1 { "skill" } else { "skills" };
    format!(
        "({left_out} more {skills} not shown: the prompt budget is {budget} characters; find them with skills_search)\n"
    )
}

/// The available-skills part within `budget` characters (see the module documentation).
fn available_within(
    skills: &[&SkillRecord],
    include_location: bool,
    budget: Option<usize>,
) -> String {
    let whole = render_unbudgeted(skills, include_location);
    let Some(budget) = budget else {
        return whole;
    };
    if whole.chars().count() <= budget {
        return whole;
    }
    // Which skills are kept when not all fit: by precedence (layer, then higher
    // `priority`), ties in the given order; the kept ones are rendered in the given order.
    let mut order: Vec<usize> = (0..skills.len()).collect();
    order.sort_by_key(|&i| {
        let r = skills[i];
        let rank = Layer::ALL.iter().position(|l| *l == r.layer);
        (rank, std::cmp::Reverse(r.frontmatter.priority))
    });
    let items: Vec<Item> = order
        .iter()
        .map(|&i| Item::new(skills[i], include_location))
        .collect();
    let block_chars = |n: usize, max: Option<usize>| -> usize {
        BLOCK_CHARS + items[..n].iter().map(|i| i.chars(max)).sum::<usize>()
    };
    if items.is_empty() || block_chars(items.len(), None) <= budget {
        return render_block(&items, None);
    }
    // The most skills that fit with descriptions at their shortest: prefix sums of each
    // skill's shortest length.
    let floor = Some(MIN_DESCRIPTION_CHARS);
    let mut prefix = Vec::with_capacity(items.len() + 1);
    prefix.push(BLOCK_CHARS);
    for item in &items {
        prefix.push(prefix[prefix.len() - 1] + item.chars(floor));
    }
    let total = items.len();
    let closing = |n: usize| {
        if n == total {
            String::new()
        } else {
            closing_line(total - n, budget)
        }
    };
    let Some(n) = (0..=total)
        .rev()
        .find(|&n| prefix[n] + closing(n).chars().count() <= budget)
    else {
        return closing_line(total, budget);
    };
    // The largest common maximum that fits for these `n` skills.
    let room = budget - closing(n).chars().count();
    let longest = items[..n]
        .iter()
        .map(|i| i.description_len)
        .max()
        .unwrap_or(0);
    let (mut lo, mut hi) = (MIN_DESCRIPTION_CHARS, longest.max(MIN_DESCRIPTION_CHARS));
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if block_chars(n, Some(mid)) <= room {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let mut kept: Vec<(usize, Item)> = order.into_iter().zip(items).take(n).collect();
    kept.sort_by_key(|(i, _)| *i);
    let kept: Vec<Item> = kept.into_iter().map(|(_, item)| item).collect();
    let mut out = render_block(&kept, Some(lo));
    out.push_str(&closing(n));
    out
}

/// Python's `str.strip()`: Unicode white space plus the separators U+001C..U+001F.
fn py_strip(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
}

/// The length of `c` once escaped (with quotes).
fn escaped_len(c: char) -> usize {
    match c {
        '&' => 5,
        '<' | '>' => 4,
        '"' => 6,
        '\'' => 6,
        _ => 1,
    }
}

/// Python's `html.escape(s, quote)` written straight into `out`: `&`, `<`, `>`, and with
/// `quote` also `"` and `'`. One pass over the bytes, copying the runs between special
/// characters (all ASCII, so runs split on character boundaries).
fn escape_into(out: &mut String, s: &str, quote: bool) {
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        let entity = match b {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' if quote => "&quot;",
            b'\'' if quote => "&#x27;",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        out.push_str(entity);
        start = i + 1;
    }
    out.push_str(&s[start..]);
}

/// [`escape_into`] as a value, borrowing `s` when nothing needs escaping.
fn escape(s: &str, quote: bool) -> Cow<'_, str> {
    let special = |b: &u8| matches!(b, b'&' | b'<' | b'>') || (quote && matches!(b, b'"' | b'\''));
    if !s.bytes().any(|b| special(&b)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    escape_into(&mut out, s, quote);
    Cow::Owned(out)
}

/// The body without its leading blank lines and trailing white space.
fn trim_body(body: &str) -> &str {
    let body = body.trim_end();
    let first = body.len() - body.trim_start().len();
    let start = body[..first].rfind('\n').map_or(0, |i| i + 1);
    &body[start..]
}
