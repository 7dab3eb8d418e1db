//! The diagnostics that name the real mistake, end to end through `skillctl validate`: each
//! placed (rustc-style `file:line:column` in text, `line`/`column` in JSON) on the line to
//! fix, with the fix in the message.

mod common;

/// (case, SKILL.md text, rule, line, column, words of the fix the message must hold)
const CASES: &[(&str, &str, &str, u32, u32, &str)] = &[
    (
        "swallowed-body",
        "---\nname: swallowed-body\ndescription: Forgot to close. Use when testing.\n\n# Usage\n\nRun: the tests\n\n---\n\nMore body.\n",
        "frontmatter.swallowedBody",
        5,
        1,
        "add a line `---` before line 5",
    ),
    (
        "indented-key",
        "---\nname: indented-key\n  description: Indented. Use when testing.\n---\nBody.\n",
        "frontmatter.yamlSyntax",
        // Issue 37: the caret is on the key to move (it was at column 1).
        3,
        3,
        "remove the indentation before `description`",
    ),
    // Issue 37: a nested field indented past its sibling is aligned with it, not moved to
    // the first column (which would take it out of `metadata`).
    (
        "over-indented-nested",
        "---\nname: over-indented-nested\ndescription: Over. Use when testing.\nmetadata:\n  author: me\n    version: \"1.0\"\n---\nBody.\n",
        "frontmatter.yamlSyntax",
        6,
        5,
        "align `version` with `author` (2 spaces",
    ),
    // Issue 37: one space short of its sibling was the parser's "did not find expected key".
    (
        "under-indented-nested",
        "---\nname: under-indented-nested\ndescription: Under. Use when testing.\nmetadata:\n  author: me\n version: \"1.0\"\n---\nBody.\n",
        "frontmatter.yamlSyntax",
        6,
        2,
        "align `version` with `author` (2 spaces) to keep it in `metadata`",
    ),
    // Issue 37: a missing closing line is placed where it belongs, not at line 1.
    (
        "unclosed-after-last-field",
        "---\nname: unclosed-after-last-field\ndescription: Unclosed. Use when testing.\nmetadata:\n  author: me\n\n# Unclosed\n\nSome body text.\n",
        "frontmatter.unclosed",
        6,
        1,
        "add a line `---` after the last field (after line 5)",
    ),
    (
        "tab-indent",
        "---\nname: tab-indent\ndescription: Tabbed. Use when testing.\nmetadata:\n\towner: x\n---\nBody.\n",
        "frontmatter.yamlSyntax",
        5,
        1,
        "replace the tab with spaces",
    ),
    (
        "near-miss-closer",
        "---\nname: near-miss-closer\ndescription: Near miss. Use when testing.\n--- \n# Body\n",
        "frontmatter.unclosed",
        4,
        4,
        "must be exactly `---`",
    ),
    (
        "near-miss-then-rule",
        "---\nname: near-miss-then-rule\ndescription: Near miss. Use when testing.\n---  \n# Body\n\n---\n\nMore.\n",
        "frontmatter.yamlSyntax",
        4,
        4,
        "must be exactly `---`",
    ),
];

#[test]
fn each_diagnostic_is_placed_on_the_line_to_fix_with_the_fix() {
    let tmp = tempfile::tempdir().unwrap();
    let mut wrong = Vec::new();
    for (case, text, rule, line, column, fix) in CASES {
        let dir = tmp.path().join(case);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("SKILL.md"), text).unwrap();
        let run = common::run(
            common::skillctl()
                .args(["validate", "--format", "json"])
                .arg(&dir),
        );
        assert_eq!(run.code, Some(1), "{case}: {run:?}");
        let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        let found = doc["skills"][0]["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["rule"] == *rule && d["severity"] == "error")
            .cloned();
        match found {
            Some(d)
                if d["line"] == *line
                    && d["column"] == *column
                    && d["message"].as_str().unwrap_or("").contains(fix) => {}
            other => wrong.push(format!(
                "{case}: expected {rule} at {line}:{column} with {fix:?}, got {other:?}"
            )),
        }
        // The text form shows the same place.
        let text_run = common::run(common::skillctl().arg("validate").arg(&dir));
        let place = format!("SKILL.md:{line}:{column}");
        if !text_run.stdout.contains(&place) && !text_run.stderr.contains(&place) {
            wrong.push(format!("{case}: text output lacks {place}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
