//! Data-driven parser tests: every folder under `tests/fixtures/` is one case.
//!
//! A case folder holds:
//! - `SKILL.md`: the bytes given to the parser;
//! - `dir` (optional): the skill folder's name to pass (default: the case folder's name);
//! - `options` (optional): whitespace-separated words, `lint` (run the lint rules) and
//!   `references` (the skill folder has `references/`);
//! - `expected.txt`: the summary the parse must render to (validity, the lenient name, where
//!   the body starts, every diagnostic as `severity rule line:col message`, and every
//!   frontmatter field that is not at its default).
//!
//! Run with `UPDATE_EXPECT=1` to (re)write every `expected.txt` from the current parser; a
//! mismatch otherwise fails the test with the name of each differing case and a line diff.
//! Cases named `bug-*` record a parser bug as it stands today: their snapshot is the current
//! (wrong) output, kept so that fixing the bug shows up as a reviewed snapshot change.

use std::fmt::{Debug, Write as _};
use std::fs;
use std::path::{Path, PathBuf};

use skills_model::{Frontmatter, RawValue, ToolRules};
use skills_parser::{ParseInput, ParsedSkill, SkillParser};

#[test]
fn fixtures() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let update = std::env::var("UPDATE_EXPECT").is_ok_and(|v| v == "1");
    let mut cases: Vec<PathBuf> = fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", root.display()))
        .map(|entry| entry.expect("a readable fixtures entry").path())
        .filter(|path| path.is_dir())
        .collect();
    cases.sort();
    assert!(!cases.is_empty(), "no cases in {}", root.display());

    let mut failures = Vec::new();
    for case in &cases {
        let name = case
            .file_name()
            .and_then(|n| n.to_str())
            .expect("a UTF-8 case name");
        let actual = run_case(case, name);
        let expected_path = case.join("expected.txt");
        let expected = fs::read_to_string(&expected_path).ok();
        if expected.as_deref() == Some(actual.as_str()) {
            continue;
        }
        if update {
            fs::write(&expected_path, &actual)
                .unwrap_or_else(|e| panic!("case `{name}`: cannot write expected.txt: {e}"));
            continue;
        }
        let diff = match &expected {
            Some(expected) => line_diff(expected, &actual),
            None => format!("(no expected.txt)\n{actual}"),
        };
        failures.push(format!(
            "--- case `{name}` ({})\n{diff}",
            expected_path.display()
        ));
    }
    assert!(
        failures.is_empty(),
        "{} of {} fixture cases differ from their expected.txt \
         (rerun with UPDATE_EXPECT=1 to accept the new output):\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// Parses one case and renders its summary.
fn run_case(case: &Path, name: &str) -> String {
    let source = fs::read(case.join("SKILL.md"))
        .unwrap_or_else(|e| panic!("case `{name}`: cannot read SKILL.md: {e}"));
    let dir_name = match fs::read_to_string(case.join("dir")) {
        Ok(text) => text.trim_end_matches(['\n', '\r']).to_owned(),
        Err(_) => name.to_owned(),
    };
    let (mut lint, mut references) = (false, false);
    for word in fs::read_to_string(case.join("options"))
        .unwrap_or_default()
        .split_whitespace()
    {
        match word {
            "lint" => lint = true,
            "references" => references = true,
            other => panic!("case `{name}`: unknown option `{other}` (expected lint, references)"),
        }
    }
    let parser = SkillParser::builder().lint(lint).build();
    let input = ParseInput::new(&source, &dir_name).with_references_dir(references);
    let parsed = parser.parse(&input);
    // Taken out of the frontmatter, the lenient name is the one read in place; when there
    // is none, the frontmatter is left as it was.
    let mut taken = parsed.clone();
    let taken_name = taken.take_lenient_name();
    assert_eq!(taken_name, parsed.lenient_name(), "case `{name}`");
    if taken_name.is_none() {
        assert_eq!(
            taken, parsed,
            "case `{name}`: no name taken, nothing changed"
        );
    }
    render(&source, &parsed)
}

fn render(source: &[u8], parsed: &ParsedSkill) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "valid: {}", parsed.is_valid());
    let _ = writeln!(
        out,
        "lenient name: {:?}",
        parsed.lenient_name().as_ref().map(|n| n.as_str())
    );
    let body = parsed.body(source);
    if parsed.body_offset >= source.len() {
        let _ = writeln!(out, "body: none (offset {})", parsed.body_offset);
    } else {
        let line = 1 + source[..parsed.body_offset]
            .iter()
            .filter(|b| **b == b'\n')
            .count();
        let _ = writeln!(
            out,
            "body: offset {}, line {line}, {} lines, starts {}",
            parsed.body_offset,
            body.lines().count(),
            short(body)
        );
    }
    let _ = writeln!(out, "diagnostics:");
    for d in &parsed.diagnostics {
        let place = match (d.line, d.column) {
            (Some(line), Some(column)) => format!("{line}:{column}"),
            _ => "-:-".to_owned(),
        };
        let _ = writeln!(out, "  {} {} {place} {}", d.severity, d.rule, d.message);
    }
    let _ = writeln!(out, "frontmatter:");
    render_frontmatter(&mut out, &parsed.frontmatter);
    out
}

/// Writes every field that differs from its default, one per line (structured ones pretty).
fn render_frontmatter(out: &mut String, fm: &Frontmatter) {
    let default = Frontmatter::default();
    macro_rules! text {
        ($($field:ident),*) => {$(
            if let Some(value) = &fm.$field {
                let _ = writeln!(out, "  {}: {}", stringify!($field), short(value));
            }
        )*};
    }
    macro_rules! compact {
        ($($field:ident),*) => {$(
            if fm.$field != default.$field {
                let _ = writeln!(out, "  {}: {:?}", stringify!($field), fm.$field);
            }
        )*};
    }
    macro_rules! pretty {
        ($($field:ident),*) => {$(
            if fm.$field != default.$field {
                field_pretty(out, stringify!($field), &fm.$field);
            }
        )*};
    }
    text!(name, description, license, compatibility);
    compact!(metadata);
    for (field, rules) in [
        ("allowed_tools", &fm.allowed_tools),
        ("disallowed_tools", &fm.disallowed_tools),
    ] {
        if let Some(rules) = rules {
            let _ = writeln!(out, "  {field}: {}", tool_rules(rules));
        }
    }
    text!(model, agent);
    if let Some(hint) = fm.argument_hint() {
        let _ = writeln!(out, "  argument_hint: {}", short(hint));
    }
    text!(when_to_use);
    compact!(
        context,
        priority,
        tags,
        user_invocable,
        disable_model_invocation
    );
    pretty!(
        hooks,
        scope,
        security,
        tool_binding,
        composition,
        test_scenarios
    );
    for (key, value) in &fm.extra {
        let _ = writeln!(out, "  extra {key:?}: {}", raw(value));
    }
}

/// A raw value on one line: scalars quoted, `~` for null, `[...]` and `{...}` for collections.
fn raw(value: &RawValue) -> String {
    match value {
        RawValue::Null => "~".to_owned(),
        RawValue::Scalar(text) => short(text),
        RawValue::Seq(items) => {
            let items: Vec<String> = items.iter().map(raw).collect();
            format!("[{}]", items.join(", "))
        }
        RawValue::Map(entries) => {
            let entries: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{k:?}: {}", raw(v)))
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
    }
}

fn field_pretty(out: &mut String, field: &str, value: &dyn Debug) {
    let _ = writeln!(out, "  {field}:");
    for line in format!("{value:#?}").lines() {
        let _ = writeln!(out, "    {line}");
    }
}

fn tool_rules(rules: &ToolRules) -> String {
    let items: Vec<String> = rules.rules().iter().map(ToString::to_string).collect();
    format!("[{}]", items.join(", "))
}

/// A string in debug form, shortened past 100 characters (with its length in characters).
fn short(text: &str) -> String {
    let chars = text.chars().count();
    if chars <= 100 {
        format!("{text:?}")
    } else {
        let head: String = text.chars().take(60).collect();
        format!("{head:?}... ({chars} chars)")
    }
}

/// A minimal line diff (longest common subsequence): ` ` kept, `-` expected, `+` actual.
fn line_diff(expected: &str, actual: &str) -> String {
    let a: Vec<&str> = expected.lines().collect();
    let b: Vec<&str> = actual.lines().collect();
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut out = String::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            let _ = writeln!(out, "  {}", a[i]);
            i += 1;
            j += 1;
        } else if i < a.len() && (j == b.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
            let _ = writeln!(out, "- {}", a[i]);
            i += 1;
        } else {
            let _ = writeln!(out, "+ {}", b[j]);
            j += 1;
        }
    }
    if !expected.ends_with('\n') && !expected.is_empty() {
        out.push_str("(expected.txt has no final newline)\n");
    }
    out
}
