//! Fuzz target: `SkillParser::parse` on arbitrary bytes, with and without lint rules. The
//! parser promises never to panic or hang, to place every diagnostic at a 1-based line and
//! column, and to keep `body_offset` inside the source; any panic here is a bug.
//!
//! Run from the repository root:
//! `cargo +nightly fuzz run parse_skill fuzz/seeds/parse_skill -- -max_len=70000 -timeout=5`

#![no_main]

use libfuzzer_sys::fuzz_target;
use skills_parser::{ParseInput, ParsedSkill, SkillParser};

fn check(source: &[u8], parsed: &ParsedSkill) {
    for d in &parsed.diagnostics {
        assert!(d.line.is_none_or(|l| l >= 1), "line 0: {d:?}");
        assert!(d.column.is_none_or(|c| c >= 1), "column 0: {d:?}");
    }
    assert!(
        parsed.body_offset <= source.len(),
        "body_offset past the end"
    );
    let _ = parsed.body(source);
    let _ = parsed.is_valid();
    let _ = parsed.lenient_name();
}

fuzz_target!(|source: &[u8]| {
    let input = ParseInput::new(source, "pdf-tools");
    let plain = SkillParser::default().parse(&input);
    check(source, &plain);
    let linted = SkillParser::builder()
        .lint(true)
        .build()
        .parse(&input.with_references_dir(true));
    check(source, &linted);
    // Lint rules only add warnings: the frontmatter and the body do not change.
    assert_eq!(plain.frontmatter, linted.frontmatter);
    assert_eq!(plain.body_offset, linted.body_offset);
});
