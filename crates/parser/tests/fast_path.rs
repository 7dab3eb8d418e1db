//! Differential tests of the frontmatter fast path: whenever it accepts a text, it must
//! build exactly the tree the full YAML parser builds (values, styles and positions).

use proptest::prelude::*;
use skills_parser::{fast_path_accepts, fast_path_agrees};

/// Lines of the shapes the fast path accepts, and near misses it must decline or agree on.
fn line() -> impl Strategy<Value = String> {
    let key = prop_oneof![
        Just("name".to_owned()),
        Just("description".to_owned()),
        Just("metadata".to_owned()),
        Just("allowed-tools".to_owned()),
        "[a-z_-]{1,8}",
        "[A-Za-z0-9]{1,4}",
    ];
    let value = prop_oneof![
        "[a-zA-Z0-9 .,()*:/#-]{1,30}",
        Just("1.0".to_owned()),
        Just("true".to_owned()),
        Just("null".to_owned()),
        Just("~".to_owned()),
        Just("no".to_owned()),
        Just("0x1F".to_owned()),
        Just("Use when: asked".to_owned()),
        Just("'single, quoted'".to_owned()),
        Just("\"double: quoted\"".to_owned()),
        Just("\"esc\\\"".to_owned()),
        Just("'it''s'".to_owned()),
        Just("a # comment".to_owned()),
        Just("café — ünïcode ✓".to_owned()),
        Just("[a, b]".to_owned()),
        "\\[[a-zA-Z0-9 ,./_-]{0,24}\\]",
        "\\[ ?[a-z0-9.]{1,6}(, ?[A-Za-z0-9_/-]{1,6}){0,3} ?\\]",
        Just("[a, [b]]".to_owned()),
        Just("[]".to_owned()),
        Just("&anchor x".to_owned()),
        Just("".to_owned()),
        Just("x ".to_owned()),
        // Block scalars' headers, those the fast path reads and others.
        Just("|".to_owned()),
        Just("|-".to_owned()),
        Just(">".to_owned()),
        Just(">-".to_owned()),
        Just("|+".to_owned()),
        Just(">2".to_owned()),
        Just("| # c".to_owned()),
    ];
    // 130 spaces: past the 128 characters the YAML crate's scanner buffers.
    let indent = prop_oneof![
        Just(String::new()),
        Just(String::new()),
        Just("  ".to_owned()),
        Just("    ".to_owned()),
        Just(" ".to_owned()),
        Just(" ".repeat(130)),
    ];
    let keyed = (indent.clone(), key, value).prop_map(|(i, k, v)| {
        if v.is_empty() {
            format!("{i}{k}:")
        } else {
            format!("{i}{k}: {v}")
        }
    });
    // Lines with no key: a block scalar's lines, a block sequence's items, near misses.
    let text = prop_oneof![
        "[a-zA-Z0-9 .,()*:/#'\"-]{1,30}",
        Just("- a".to_owned()),
        Just("- Read".to_owned()),
        Just("- Bash(git log:*)".to_owned()),
        Just("- 'quoted'".to_owned()),
        Just("- \"double\"".to_owned()),
        Just("- [a, b]".to_owned()),
        Just("- a: b".to_owned()),
        Just("- |".to_owned()),
        Just("-".to_owned()),
        Just("-  a".to_owned()),
        Just("more text ".to_owned()),
        Just("café ✓".to_owned()),
        Just("".to_owned()),
        // Characters YAML treats as line breaks or marks, in a block's lines and items.
        Just("a\u{85}b".to_owned()),
        Just("- a\u{2028}b".to_owned()),
        Just("\u{feff}c".to_owned()),
        Just("é".repeat(300)),
    ];
    let bare = (indent, text).prop_map(|(i, t)| format!("{i}{t}"));
    prop_oneof![3 => keyed, 2 => bare]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4096, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn fast_path_agrees_with_the_full_parser(lines in prop::collection::vec(line(), 1..12), blank in any::<bool>()) {
        let mut text = lines.join("\n");
        text.push('\n');
        if blank {
            text.insert(0, '\n');
        }
        prop_assert!(fast_path_agrees(&text), "disagreement on {text:?}");
    }
}

/// A line of a mapping nested under a bare top-level key, at `indent`: a `key: value`
/// entry, a bare key, or an item of a bare key's block sequence at `indent` plus a few
/// spaces (near misses included: the key's own indentation, one space, none, an entry
/// where an item belongs).
fn nested_line(indent: usize) -> impl Strategy<Value = String> {
    let pad = " ".repeat(indent);
    let key = prop_oneof![
        Just("mcp".to_owned()),
        Just("bins".to_owned()),
        Just("env".to_owned()),
        "[a-z_-]{1,6}",
    ];
    let value = prop_oneof![
        "[a-zA-Z0-9 .,()*:/#-]{1,20}",
        Just("'q'".to_owned()),
        Just("[a, b]".to_owned()),
        Just("|".to_owned()),
        Just("x ".to_owned()),
    ];
    let item = prop_oneof![
        "[a-zA-Z0-9.,()*:/#-]{1,16}",
        Just("'quoted'".to_owned()),
        Just("[a, b]".to_owned()),
        Just("a: b".to_owned()),
        Just("".to_owned()),
        Just("x ".to_owned()),
    ];
    let deeper = prop_oneof![Just(0usize), Just(1), Just(2), Just(2), Just(4)];
    let entry = (key.clone(), value).prop_map({
        let pad = pad.clone();
        move |(k, v)| format!("{pad}{k}: {v}")
    });
    let bare = key.prop_map({
        let pad = pad.clone();
        move |k| format!("{pad}{k}:")
    });
    let listed = (deeper, item).prop_map(move |(d, i)| {
        let inner = " ".repeat(indent + d);
        if i.is_empty() {
            format!("{inner}-")
        } else {
            format!("{inner}- {i}")
        }
    });
    prop_oneof![2 => entry, 2 => bare, 4 => listed]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4096, failure_persistence: None, ..ProptestConfig::default() })]

    /// Sequences under the bare keys of a nested mapping (as `requires` is written), and
    /// their near misses, build what the full parser builds whenever the fast path takes
    /// them.
    #[test]
    fn nested_sequences_agree_with_the_full_parser(
        indent in prop_oneof![Just(1usize), Just(2), Just(4)],
        lines in prop::collection::vec(nested_line(2), 1..8),
        after in prop_oneof![Just(String::new()), Just("name: x\n".to_owned()), Just("  k: v\n".to_owned())],
    ) {
        let lines: Vec<String> = lines
            .iter()
            .map(|l| l.replacen("  ", &" ".repeat(indent), 1))
            .collect();
        let text = format!("requires:\n{}\n{after}", lines.join("\n"));
        prop_assert!(fast_path_agrees(&text), "disagreement on {text:?}");
    }
}

#[test]
fn the_fixtures_agree_and_common_ones_take_the_fast_path() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut accepted = 0;
    let mut total = 0;
    for entry in std::fs::read_dir(root).unwrap() {
        let Ok(bytes) = std::fs::read(entry.unwrap().path().join("SKILL.md")) else {
            continue;
        };
        let Ok(text) = String::from_utf8(bytes) else {
            continue;
        };
        let Some(bounds) = skills_parser::frontmatter_bounds(text.as_bytes()) else {
            continue;
        };
        let yaml = &text[bounds.yaml];
        total += 1;
        accepted += usize::from(fast_path_accepts(yaml));
        assert!(fast_path_agrees(yaml), "disagreement on {yaml:?}");
    }
    assert!(
        total > 50 && accepted > 20,
        "{accepted} of {total} fixtures took the fast path"
    );
}
