//! The lenient loader's repairs on real folders: what Claude Code and Codex load, this
//! index loads too, each repair with a `loader.repair` warning that says what was assumed;
//! the strict validator's verdict does not change.

use skills_index::{validate_paths, SkillIndex};
use skills_model::Layer;
use skills_parser::SkillParser;

/// (folder, SKILL.md text, expected description, line of the repair warning if placed)
const CASES: &[(&str, &str, &str, Option<u32>)] = &[
    (
        "colon-in-description",
        "---\nname: colon-in-description\ndescription: Drafts notes. Use when: the user asks\n---\nBody.\n",
        "Drafts notes. Use when: the user asks",
        Some(3),
    ),
    (
        "colon-in-other-field",
        "---\nname: colon-in-other-field\ndescription: Sorts mail. Use when sorting.\nlicense: MIT: see LICENSE\n---\nBody.\n",
        "Sorts mail. Use when sorting.",
        Some(4),
    ),
    (
        "colon-next-to-block",
        "---\nname: colon-next-to-block\ndescription: |\n  Plans trips: flights, hotels.\n  Use when: travelling.\ncompatibility: Needs: network access\n---\nBody.\n",
        "Plans trips: flights, hotels.\nUse when: travelling.",
        Some(6),
    ),
    (
        "colon-continued",
        "---\nname: colon-continued\ndescription: Reviews code. Use when:\n  a pull request is opened\n---\nBody.\n",
        "Reviews code. Use when: a pull request is opened",
        Some(3),
    ),
    (
        "no-name",
        "---\ndescription: Has no name. Use when testing.\n---\nBody.\n",
        "Has no name. Use when testing.",
        None,
    ),
    (
        "opener-spaces",
        "---  \nname: opener-spaces\ndescription: Opener has spaces. Use when testing.\n---\nBody.\n",
        "Opener has spaces. Use when testing.",
        Some(1),
    ),
    (
        "closer-spaces",
        "---\nname: closer-spaces\ndescription: Closer has a tab. Use when testing.\n---\t\n# Body\n\n---\n\nMore.\n",
        "Closer has a tab. Use when testing.",
        Some(4),
    ),
];

#[test]
fn the_loader_repairs_what_peers_accept_and_the_validator_still_refuses() {
    let tmp = tempfile::tempdir().unwrap();
    for (dir, text, _, _) in CASES {
        let folder = tmp.path().join(dir);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("SKILL.md"), text).unwrap();
    }
    let index = SkillIndex::builder()
        .root(Layer::Project, tmp.path())
        .build()
        .unwrap();
    let snap = index.snapshot();
    for (dir, _, description, line) in CASES {
        let record = snap
            .get(dir)
            .unwrap_or_else(|| panic!("{dir} is not indexed"));
        assert_eq!(record.description.trim_end(), *description, "{dir}");
        // Issue 37: a value holding `: ` that the YAML error already names draws no
        // `loader.repair` warning saying it again; the error marks that repair.
        let repairs: Vec<_> = record
            .diagnostics
            .iter()
            .filter(|d| {
                d.rule.id() == "loader.repair"
                    || (d.rule.id() == "frontmatter.yamlSyntax"
                        && d.message.contains("contains \": \""))
            })
            .collect();
        assert!(!repairs.is_empty(), "{dir}: no loader.repair warning");
        if let Some(line) = line {
            assert!(
                repairs.iter().any(|d| d.line == Some(*line)),
                "{dir}: {repairs:?}"
            );
        }
        // Its instructions load (the body is where the repaired reading puts it).
        let body = index.load(dir).unwrap().body.clone();
        assert!(
            body.starts_with("Body.") || body.starts_with("# Body"),
            "{dir}: {body:?}"
        );
        // The strict verdict is unchanged: still invalid.
        let strict = validate_paths(&[tmp.path().join(dir)], &SkillParser::default());
        assert!(
            strict.reports.iter().all(|r| !r.is_valid()),
            "{dir} became valid"
        );
    }
    // The folder's name stands in for the missing one.
    assert_eq!(snap.get("no-name").unwrap().name.as_str(), "no-name");
}
