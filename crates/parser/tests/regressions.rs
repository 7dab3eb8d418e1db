//! Regression tests for bugs found while fuzzing and property-testing the parser (see
//! `never_panics.rs` and `fuzz/`): one test per bug, its input inlined.

use skills_model::Rule;
use skills_parser::{ParseInput, SkillParser};

/// Alias expansion was bounded in nodes but not in bytes. An alias to a long scalar is one
/// node yet a full copy of its text (`yaml::parse` clones the anchored node), so this 53 KB
/// file, under every limit (about 10,000 nodes), built a tree holding some 450 MB of text and,
/// with `mid` and `many` read as unknown fields, copied it all again: about 900 MB resident
/// and a skill reported valid. Wrapping the aliases in nested anchors (`&c1 [&c2 [... *b]]`)
/// clones the expansion once per anchor, which ran out of memory. Aliases now count the bytes
/// of scalar text they copy against a budget.
#[test]
fn alias_expansion_is_bounded_in_bytes() {
    let source = [
        b"---\nname: pdf-tools\ndescription: Use when asked.\nbig: &a \"".as_slice(),
        &b"x".repeat(50_000),
        b"\"\nmid: &b [",
        &b"*a, ".repeat(1_000),
        b"*a]\nmany: [",
        &b"*b, ".repeat(8),
        b"*b]\n---\n",
    ]
    .concat();
    let parsed = SkillParser::default().parse(&ParseInput::new(&source, "pdf-tools"));
    let rules: Vec<Rule> = parsed.diagnostics.iter().map(|d| d.rule).collect();
    assert_eq!(rules, [Rule::FrontmatterTooLarge]);
    let d = &parsed.diagnostics[0];
    assert!(d.message.contains("bytes"), "{}", d.message);
    // Line 5 is `mid`; the first alias past the budget is the 21st `*a`.
    assert_eq!((d.line, d.column), (Some(5), Some(90)));
    assert!(parsed.frontmatter.extra.is_empty());
}

/// The frontmatter fast path returned its tree without the parser's limits: with
/// `max_depth(2)`, `tags: [a]` under `metadata:` (three levels) passed when the fast path
/// read it and was refused when the full parser did (a comment line sends it there). The
/// fast path's tree is now held to the same limits.
#[test]
fn regression_the_fast_path_keeps_the_parsers_limits() {
    let parser = SkillParser::builder().max_depth(2).build();
    let rules = |text: &str| -> Vec<Rule> {
        let parsed = parser.parse(&ParseInput::new(text.as_bytes(), "x"));
        parsed.diagnostics.iter().map(|d| d.rule).collect()
    };
    let fast = "---\nname: x\ndescription: d\nmetadata:\n  tags: [a]\n---\nbody\n";
    let full = "---\n# c\nname: x\ndescription: d\nmetadata:\n  tags: [a]\n---\nbody\n";
    assert!(skills_parser::fast_path_accepts(
        "name: x\ndescription: d\nmetadata:\n  tags: [a]\n"
    ));
    assert!(rules(full).contains(&Rule::FrontmatterTooLarge));
    assert_eq!(rules(fast), rules(full));
}
