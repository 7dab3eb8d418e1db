//! End-to-end tests of the lint rules as `skillctl validate --lint --format json` reports them:
//! each case is a real skill folder written into a temporary directory (bundled files and
//! `references/` included where the case needs them), and each table row says which lint ids
//! must fire on it and which must stay quiet.
//!
//! Covered: `description-quality` against the trigger phrasings the real-world corpus uses;
//! `progressive-disclosure` quiet when the body links bundled files (relative Markdown links,
//! paths under `references/`, `scripts/`, `assets/`) or the folder has `references/`, and loud
//! for links that leave the folder; `gotchas-present` only on long procedures that warn about
//! nothing, silenced by a caveat section under any of the names people use, a callout or a
//! prohibition, and not by look-alikes in code blocks. Lints never change the strict verdict:
//! every case stays valid and the exit status stays 0.

mod common;

use common::{run, skillctl, Fixture};
use serde_json::Value;

/// One skill folder and what the lints must say about it.
struct Case {
    /// The skill's name and folder.
    name: &'static str,
    description: &'static str,
    body: String,
    /// Extra files of the skill (relative path, contents).
    files: Files,
    /// Lint ids that must fire.
    fires: &'static [&'static str],
    /// Lint ids that must not fire.
    quiet: &'static [&'static str],
}

/// Extra files of a skill: (relative path, contents).
type Files = &'static [(&'static str, &'static str)];

const DESCRIPTION: &str = "description-quality";
const DISCLOSURE: &str = "progressive-disclosure";
const GOTCHAS: &str = "gotchas-present";

/// A description with a trigger, for the cases about the body.
const WITH_TRIGGER: &str = "Reconciles ledger entries. Use when month-end numbers disagree.";

/// `n` lines of a procedure: numbered steps with nothing that warns.
fn steps(n: usize) -> String {
    (1..=n)
        .map(|i| format!("Step {i}: run the command.\n"))
        .collect()
}

/// `n` lines of reference prose: no steps, no code, no links.
fn prose(n: usize) -> String {
    (1..=n)
        .map(|i| format!("Fact {i} about the ledger format.\n"))
        .collect()
}

/// Writes every case, runs `skillctl validate --lint --format json` once over them all, and
/// reports every row that came out otherwise.
fn assert_lints(cases: &[Case]) {
    let fx = Fixture::new();
    for case in cases {
        fx.file(
            case.name,
            "SKILL.md",
            format!(
                "---\nname: {}\ndescription: {}\n---\n{}",
                case.name, case.description, case.body
            ),
        );
        for (rel, contents) in case.files {
            fx.file(case.name, rel, contents);
        }
    }
    let doc = run(skillctl()
        .args(["validate", "--lint", "--format", "json"])
        .arg(fx.root()))
    .json();
    let skills = doc["skills"].as_array().expect("skills");
    assert_eq!(skills.len(), cases.len(), "{doc}");
    let mut failures = Vec::new();
    for case in cases {
        let Some(skill) = skills.iter().find(|s| s["name"] == case.name) else {
            failures.push(format!("{}: not reported", case.name));
            continue;
        };
        if skill["valid"] != Value::Bool(true) {
            failures.push(format!("{}: invalid: {}", case.name, skill["diagnostics"]));
        }
        let got: Vec<&str> = skill["diagnostics"]
            .as_array()
            .map(|ds| ds.iter().filter_map(|d| d["rule"].as_str()).collect())
            .unwrap_or_default();
        for id in case.fires {
            if !got.contains(id) {
                failures.push(format!("{}: {id} should fire; got {got:?}", case.name));
            }
        }
        for id in case.quiet {
            if got.contains(id) {
                failures.push(format!("{}: {id} should be quiet; got {got:?}", case.name));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn description_quality_knows_the_trigger_phrasings_in_use() {
    let rows: [(&str, &str, bool); 21] = [
        // (skill, description, fires)
        ("no-trigger", "Helps with PDFs.", true),
        (
            "what-only",
            "Automate Ably tasks via an MCP server. Always search tools first.",
            true,
        ),
        (
            "use-across",
            "Messenger patterns. Use across WPF and WinUI.",
            true,
        ),
        (
            "after-without-verb",
            "Shuffles JSON objects after validating their schema.",
            true,
        ),
        (
            "use-when",
            "Fills PDF forms. Use when the user asks for a form.",
            false,
        ),
        (
            "must-use-before",
            "You MUST use this before any creative work.",
            false,
        ),
        (
            "use-after",
            "Exports a model. Use after a checkpoint passes promotion.",
            false,
        ),
        (
            "use-immediately-after",
            "Finds variants. Use immediately after a bug turns up.",
            false,
        ),
        (
            "use-skill-before",
            "Checks deployments. Use this skill before any deployment.",
            false,
        ),
        (
            "should-be-used",
            "Guide for skills. This skill should be used when users want a new skill.",
            false,
        ),
        (
            "activate-when",
            "Checks Bicep files. Activate when users mention Azure.",
            false,
        ),
        (
            "use-whenever",
            "Finds papers. Use whenever a citation is needed.",
            false,
        ),
        (
            "when-you-need",
            "Formats citations when you need to cite a paper.",
            false,
        ),
        (
            "load-first-when",
            "Power Automate. Load this skill first when connecting an agent.",
            false,
        ),
        (
            "tasks-involving",
            "Toolkit for tasks involving spreadsheets.",
            false,
        ),
        (
            "when-working-with",
            "Clinical prediction models for EHR data when working with FHIR.",
            false,
        ),
        (
            "when-gerund",
            "Guidance for visual design when building new UI.",
            false,
        ),
        (
            "opens-with-when",
            "When user is asking which role to assign.",
            false,
        ),
        (
            "invoke-when",
            "Reconciles ledgers. INVOKE WHEN numbers drift.",
            false,
        ),
        (
            "applies-when",
            "GIF maker. This skill applies when users request a GIF.",
            false,
        ),
        ("triggers", "Reviews SQL, triggered by a slow query.", false),
    ];
    let cases: Vec<Case> = rows
        .iter()
        .map(|&(name, description, fires)| Case {
            name,
            description,
            body: "Read the notes.\n".into(),
            files: &[],
            fires: if fires { &[DESCRIPTION] } else { &[] },
            quiet: if fires { &[] } else { &[DESCRIPTION] },
        })
        .collect();
    assert_lints(&cases);
}

#[test]
fn progressive_disclosure_is_quiet_when_the_body_links_bundled_files() {
    let rows: [(&str, usize, &str, Files, bool); 13] = [
        // (skill, lines of prose, an extra line, files, fires)
        ("long-no-links", 201, "", &[], true),
        ("exactly-200", 200, "", &[], false),
        (
            "md-link",
            201,
            "See [forms](forms.md) for the fields.\n",
            &[("forms.md", "# Forms\n")],
            false,
        ),
        (
            "md-link-dot-slash",
            201,
            "Read [the guide](./reference/guide.md) first.\n",
            &[("reference/guide.md", "# Guide\n")],
            false,
        ),
        (
            "backtick-script",
            201,
            "Run `scripts/fill.py` on the form.\n",
            &[],
            false,
        ),
        (
            "plain-reference",
            201,
            "- missing key: see references/api.md\n",
            &[],
            false,
        ),
        ("heading-asset", 201, "### assets/logo.png\n", &[], false),
        (
            "references-folder",
            201,
            "",
            &[("references/api.md", "# API\n")],
            false,
        ),
        (
            "http-link",
            201,
            "See [docs](https://example.com/guide.md).\n",
            &[],
            true,
        ),
        (
            "sibling-skill",
            201,
            "See [other](../other/SKILL.md).\n",
            &[],
            true,
        ),
        ("anchor", 201, "See [usage](#usage) below.\n", &[], true),
        (
            "folder-alone",
            201,
            "Helpers live in `scripts/`.\n",
            &[],
            true,
        ),
        (
            "nested-elsewhere",
            201,
            "Run `python src/scripts/run.py`.\n",
            &[],
            true,
        ),
    ];
    let cases: Vec<Case> = rows
        .iter()
        .map(|&(name, lines, extra, files, fires)| Case {
            name,
            description: WITH_TRIGGER,
            // The extra line replaces one line of prose: the body keeps its length.
            body: if extra.is_empty() {
                prose(lines)
            } else {
                format!("{extra}{}", prose(lines - 1))
            },
            files,
            fires: if fires { &[DISCLOSURE] } else { &[] },
            quiet: if fires { &[] } else { &[DISCLOSURE] },
        })
        .collect();
    assert_lints(&cases);
}

#[test]
fn gotchas_present_asks_only_procedures_that_warn_about_nothing() {
    let fence = "```bash\nmake deploy\n```\n";
    let fenced_lookalikes =
        "```bash\n# Troubleshooting\n# never: a shell comment\nmake deploy\n```\n";
    let rows: [(&str, String, bool); 19] = [
        // (skill, body, fires)
        ("steps-51", steps(51), true),
        ("steps-50", steps(50), false),
        ("facts-51", prose(51), false),
        ("prose-and-code", format!("{}{fence}", prose(49)), true),
        ("gotchas", format!("## Gotchas\n{}", steps(51)), false),
        ("caveats", format!("## Caveats\n{}", steps(51)), false),
        (
            "known-pitfalls",
            format!(
                "{}## Known Pitfalls\n- Ids are case-sensitive.\n",
                steps(51)
            ),
            false,
        ),
        (
            "common-mistakes",
            format!("{}## Common Mistakes\n- Skipping step 2.\n", steps(51)),
            false,
        ),
        (
            "red-flags",
            format!("{}## Red Flags - STOP\n- Tests pass at once.\n", steps(51)),
            false,
        ),
        (
            "troubleshooting",
            format!("{}## Troubleshooting\n- Timeout: retry.\n", steps(51)),
            false,
        ),
        (
            "when-not-to-use",
            format!("## When NOT to Use\n- Read-only data.\n{}", steps(51)),
            false,
        ),
        (
            "donts",
            format!("{}## Don'ts\n- Force-push.\n", steps(51)),
            false,
        ),
        (
            "github-callout",
            format!("{}> [!WARNING]\n> It overwrites the file.\n", steps(51)),
            false,
        ),
        (
            "bold-callout",
            format!("**Important:** back up first.\n{}", steps(51)),
            false,
        ),
        (
            "never",
            format!("{}Never run this on production.\n", steps(51)),
            false,
        ),
        (
            "do-not",
            format!("{}Do not skip step 3.\n", steps(51)),
            false,
        ),
        (
            "avoid",
            format!("{}Avoid running two exports at once.\n", steps(51)),
            false,
        ),
        (
            "lookalikes-in-code",
            format!("{fenced_lookalikes}{}", steps(51)),
            true,
        ),
        (
            "whenever-is-not-never",
            format!("{}Run it whenever the ledger changes.\n", steps(51)),
            true,
        ),
    ];
    let cases: Vec<Case> = rows
        .into_iter()
        .map(|(name, body, fires)| Case {
            name,
            description: WITH_TRIGGER,
            body,
            files: &[],
            fires: if fires { &[GOTCHAS] } else { &[] },
            quiet: if fires { &[] } else { &[GOTCHAS] },
        })
        .collect();
    assert_lints(&cases);
}

/// Each `description.overlap` finding of a `validate --format json` document: the skill's
/// name and the message.
fn overlap_findings(doc: &Value) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for skill in doc["skills"].as_array().unwrap() {
        for d in skill["diagnostics"].as_array().unwrap() {
            if d["rule"] == "description.overlap" {
                let name = skill["name"].as_str().unwrap().to_owned();
                found.push((name, d["message"].as_str().unwrap().to_owned()));
            }
        }
    }
    found
}

/// `description.overlap` fires on a pair a model could not tell apart, in `validate --lint`
/// over the skills given together and in `list --lint` over a session's catalogue, naming
/// both and the words they share; it stays quiet on distinct skills, on a skill no model is
/// offered, and on a pair of skills no one session sees both of (their scopes never meet).
#[test]
fn description_overlap_names_the_pair_and_the_shared_words() {
    let tmp = tempfile::tempdir().unwrap();
    let write = |name: &str, description: &str, extra: &str| {
        let d = tmp.path().join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(
            d.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: {description}\n{extra}---\nBody.\n"),
        )
        .unwrap();
    };
    let forms = "Fills in PDF forms and reads their fields. Use when a PDF form must be filled.";
    let form = "Fills PDF forms, reads and fills in their fields. Use when a PDF form is given.";
    write("pdf-forms", forms, "");
    write("pdf-form", form, "");
    write(
        "release-notes",
        "Writes release notes from merged pull requests. Use before a release.",
        "",
    );
    write(
        "commit-messages",
        "Writes commit messages that explain why. Use before committing.",
        "",
    );
    let doc = run(skillctl()
        .args(["validate", "--lint", "--format", "json"])
        .arg(tmp.path()))
    .json();
    let fired = overlap_findings(&doc);
    let names: Vec<&str> = fired.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["pdf-form", "pdf-forms"], "{fired:?}");
    assert!(
        fired[0]
            .1
            .starts_with("`pdf-form` and `pdf-forms` read alike to a model"),
        "{}",
        fired[0].1
    );
    assert!(fired[0].1.contains("both say pdf, form"), "{}", fired[0].1);
    assert!(fired[0]
        .1
        .contains("make each description say what sets it apart"));
    let root = format!("project={}", tmp.path().display());
    let list = |root: &str| {
        run(skillctl().args([
            "list",
            "--lint",
            "--no-defaults",
            "--root",
            root,
            "--format",
            "json",
        ]))
        .json()["lint"]
            .clone()
    };
    let lint = list(&root);
    assert_eq!(lint.as_array().unwrap().len(), 1, "{lint}");
    assert_eq!(
        lint[0]["skills"],
        serde_json::json!(["project:pdf-form", "project:pdf-forms"])
    );
    // Never seen together: one is the user's alone, or their tenants never meet.
    write("pdf-form", form, "disable-model-invocation: true\n");
    assert_eq!(list(&root), serde_json::json!([]));
    write("pdf-form", form, "scope:\n  tenants: [acme]\n");
    write("pdf-forms", forms, "scope:\n  tenants: [globex]\n");
    assert_eq!(list(&root), serde_json::json!([]));
    write("pdf-forms", forms, "scope:\n  tenants: [globex, acme]\n");
    assert_eq!(list(&root).as_array().unwrap().len(), 1);
}
