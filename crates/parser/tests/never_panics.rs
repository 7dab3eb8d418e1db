//! Property tests for the parser's robustness promise: whatever bytes it is given, it returns
//! a `ParsedSkill` without panicking, every diagnostic it places is at a 1-based line and
//! column, `body_offset` lies inside the source and `body` can be taken.
//!
//! Three kinds of input: arbitrary bytes, arbitrary strings wrapped in `---` delimiters, and
//! YAML-ish text built from the fragments YAML parsers find hardest (anchors, aliases, tags,
//! flow collections, quotes, tabs, document markers, a BOM, `\r\n`). Each input goes through
//! the default parser, a linting parser and a parser with tiny limits, so the limit paths are
//! exercised too. `PROPTEST_CASES` overrides the number of cases per property.

use proptest::prelude::*;
use proptest::test_runner::Config;
use skills_parser::{ParseInput, ParsedSkill, SkillParser};

/// Cases per property unless `PROPTEST_CASES` says otherwise.
const DEFAULT_CASES: u32 = 2_048;

fn config() -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_CASES);
    Config {
        cases,
        // A failure is turned into a test in `regressions.rs`, not a file next to this one.
        failure_persistence: None,
        ..Config::default()
    }
}

fn parsers() -> [SkillParser; 3] {
    [
        SkillParser::default(),
        SkillParser::builder().lint(true).build(),
        SkillParser::builder()
            .lint(true)
            .frontmatter_limit(256)
            .max_depth(3)
            .max_nodes(24)
            .build(),
    ]
}

/// Parses `source` with every parser and checks the promises that hold for any input.
fn check(source: &[u8]) -> Result<(), TestCaseError> {
    for parser in parsers() {
        for references in [false, true] {
            let input = ParseInput::new(source, "pdf-tools").with_references_dir(references);
            let parsed = parser.parse(&input);
            check_parsed(source, &parsed)?;
        }
    }
    Ok(())
}

fn check_parsed(source: &[u8], parsed: &ParsedSkill) -> Result<(), TestCaseError> {
    for d in &parsed.diagnostics {
        if let Some(line) = d.line {
            prop_assert!(line >= 1, "line 0 in {d:?}");
        }
        if let Some(column) = d.column {
            prop_assert!(column >= 1, "column 0 in {d:?}");
        }
    }
    prop_assert!(
        parsed.body_offset <= source.len(),
        "body_offset {} past the end ({} bytes)",
        parsed.body_offset,
        source.len()
    );
    let body = parsed.body(source);
    prop_assert!(body.len() <= source.len() - parsed.body_offset);
    let _ = parsed.is_valid();
    let _ = parsed.lenient_name();
    Ok(())
}

/// Pieces of YAML (and of SKILL.md) that are easy to get wrong.
const FRAGMENTS: &[&str] = &[
    "name: ",
    "description: ",
    "metadata:",
    "allowed-tools: ",
    "compatibility: ",
    "license: ",
    "tool-binding:",
    "dependencies:",
    "composition:",
    "test-scenarios:",
    "hooks:",
    "scope:",
    "security:",
    "priority: ",
    "tags: ",
    "context: ",
    "tool: ",
    "skillName: ",
    "pdf-tools",
    "Use when asked.",
    "Bash(git *)",
    "x",
    "1.0",
    "0x1F",
    "-7",
    "1e5",
    ".inf",
    "~",
    "null",
    "true",
    "no",
    ": ",
    ":",
    "- ",
    "-",
    "? ",
    "[",
    "]",
    "{",
    "}",
    ", ",
    ",",
    "&a ",
    "&b ",
    "*a",
    "*b",
    "*c",
    "!!str ",
    "!!int ",
    "!!map ",
    "!custom ",
    "!<tag:yaml.org,2002:str> ",
    "%YAML 1.2\n",
    "%TAG ! tag:x,2000:\n",
    "\"",
    "'",
    "\"quoted: text\"",
    "'it''s'",
    "\"\\u00e9\\x41\\n\"",
    "\"\\",
    "|",
    "|-",
    ">",
    ">+2",
    "#",
    " # comment",
    "\n",
    "\n  ",
    "\n    ",
    "\r\n",
    "\r",
    "\t",
    " ",
    "  ",
    "---",
    "---\n",
    "...",
    "...\n",
    "\u{feff}",
    "é",
    "İ",
    "\u{1F600}",
    "\u{0}",
    "\u{85}",
    "\u{2028}",
    "follow best practices",
    "You can use A or B",
    "# Gotchas",
];

/// One fragment, sometimes repeated many times (for depth, width and alias limits).
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => prop::sample::select(FRAGMENTS).prop_map(str::to_owned),
        1 => (prop::sample::select(FRAGMENTS), 2..80usize).prop_map(|(f, n)| f.repeat(n)),
        1 => "[a-z0-9 -]{1,12}",
    ]
}

fn yamlish() -> impl Strategy<Value = String> {
    prop::collection::vec(piece(), 0..48).prop_map(|pieces| pieces.concat())
}

/// A whole file: usually delimited so the YAML parser sees the text, sometimes not.
fn yamlish_file() -> impl Strategy<Value = Vec<u8>> {
    let prefix = prop_oneof![
        6 => Just("---\n"),
        1 => Just("---\r\n"),
        1 => Just("\u{feff}---\n"),
        1 => Just(""),
    ];
    let closing = prop_oneof![
        6 => Just("\n---\n"),
        1 => Just("\r\n---\r\n"),
        1 => Just("\n---"),
        1 => Just(""),
    ];
    (prefix, yamlish(), closing, yamlish())
        .prop_map(|(p, yaml, c, body)| format!("{p}{yaml}{c}{body}").into_bytes())
}

/// Arbitrary bytes, sometimes behind a real opening line so they reach the YAML parser.
fn bytes() -> impl Strategy<Value = Vec<u8>> {
    let raw = prop::collection::vec(any::<u8>(), 0..512);
    prop_oneof![
        raw.clone(),
        (raw.clone(), raw).prop_map(|(yaml, body)| {
            let mut source = b"---\n".to_vec();
            source.extend_from_slice(&yaml);
            source.extend_from_slice(b"\n---\n");
            source.extend_from_slice(&body);
            source
        }),
    ]
}

/// Arbitrary text: any characters, or characters YAML gives meaning to.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "(?s).{0,200}",
        "[a-z:\\-\\[\\]{}&*!|>'\"#,?%@`\\\\ \t\r\n]{0,200}",
    ]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn arbitrary_bytes_never_panic(source in bytes()) {
        check(&source)?;
    }

    #[test]
    fn arbitrary_frontmatter_never_panics(s in text()) {
        check(format!("---\n{s}\n---\nbody").as_bytes())?;
    }

    #[test]
    fn yamlish_frontmatter_never_panics(source in yamlish_file()) {
        check(&source)?;
    }
}

#[test]
fn edge_cases_never_panic() {
    let big_frontmatter = format!("---\n{}---\n", "a: b\n".repeat(20_000));
    let deep = format!(
        "---\na: {}{}\n---\n",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    let long_line = format!("---\nname: {}\n---\n", "x".repeat(100_000));
    let cases: &[&[u8]] = &[
        b"",
        b"\xEF\xBB\xBF",
        b"\xEF\xBB",
        b"---",
        b"---\n",
        b"---\r\n---\r\n",
        b"---\n---",
        b"\xEF\xBB\xBF---\n---\n\xFF",
        b"---\n\xFF\n---\n",
        b"---\n\n---\nbody\n",
        b"---\n...\n---\n",
        b"---\n---\n---\n",
        b"---\n- a\n---\n",
        b"---\n\"unterminated\n---\n",
        b"---\n\ta: b\n---\n",
        big_frontmatter.as_bytes(),
        deep.as_bytes(),
        long_line.as_bytes(),
    ];
    for source in cases {
        check(source).unwrap();
    }
}
