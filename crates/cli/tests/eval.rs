//! `skillctl eval triggers`: the example case file over `examples/skills` in both formats,
//! the CI gate failing on a planted regression, cases from a skill's own
//! `test-scenarios`, a scripted fake model given the exact prompt, and bad case files.

mod common;

use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn example_cases() -> String {
    workspace()
        .join("examples/trigger-cases.yaml")
        .display()
        .to_string()
}

fn example_root() -> String {
    format!("project={}", workspace().join("examples/skills").display())
}

fn eval(cases: &str, root: &str, more: &[&str]) -> common::Run {
    let mut command = common::skillctl();
    command.args(["eval", "triggers", cases, "--no-defaults", "--root", root]);
    command.args(more);
    common::run(&mut command)
}

/// Copies the example skills into `dir`, with `edit` applied to changelog-entry's SKILL.md.
fn examples_into(dir: &Path, edit: impl Fn(String) -> String) -> String {
    for skill in ["changelog-entry", "commit-messages"] {
        let from = workspace()
            .join("examples/skills")
            .join(skill)
            .join("SKILL.md");
        let to = dir.join(skill);
        std::fs::create_dir_all(&to).unwrap();
        let text = std::fs::read_to_string(from).unwrap();
        let text = if skill == "changelog-entry" {
            edit(text)
        } else {
            text
        };
        std::fs::write(to.join("SKILL.md"), text).unwrap();
    }
    format!("project={}", dir.display())
}

#[test]
fn the_example_case_file_reports_in_both_formats_and_passes_its_gate() {
    let root = example_root();
    let doc = eval(&example_cases(), &root, &["--format", "json"]).json();
    assert_eq!(doc["cases"], 9);
    assert_eq!(doc["top1"], 0.8889);
    assert_eq!(doc["top5"], 0.8889);
    assert_eq!(doc["no_skill"]["top1"], 1.0);
    let per_skill = doc["per_skill"].as_array().unwrap();
    assert_eq!(per_skill.len(), 2);
    assert_eq!(per_skill[1]["skill"], "commit-messages");
    assert_eq!(per_skill[1]["top1"], 1.0);
    // The one miss says what won and what the request says that the skill does not.
    let misses = doc["misses"].as_array().unwrap();
    assert_eq!(misses.len(), 1, "{doc}");
    assert_eq!(misses[0]["expect"], "changelog-entry");
    assert_eq!(misses[0]["chosen"], "commit-messages");
    assert_eq!(misses[0]["rank"], 2);
    let lacking: Vec<&str> = misses[0]["lacking"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert_eq!(lacking, ["write", "notes", "version"]);
    assert_eq!(doc["unreached"], serde_json::json!([]));
    let text = eval(
        &example_cases(),
        &root,
        &["--min-top1", "0.85", "--min-top5", "0.85"],
    );
    let text = text.ok();
    assert!(
        text.contains("ranking: top-1 8/9 (88.9%), top-5 8/9 (88.9%)"),
        "{text}"
    );
    assert!(
        text.contains("the ranking chose `commit-messages`"),
        "{text}"
    );
    assert!(text.contains("(no skill)"), "{text}");
}

/// The CI gate: a description edited so its cases miss drops the top-1 rate below
/// `--min-top1`, and the command exits 1 saying so.
#[test]
fn the_gate_fails_on_a_planted_regression() {
    let tmp = tempfile::tempdir().unwrap();
    let root = examples_into(tmp.path(), |text| {
        let start = text.find("description:").unwrap();
        let end = text.find("compatibility:").unwrap();
        format!(
            "{}description: Formats tables of numbers as Markdown.\n{}",
            &text[..start],
            &text[end..]
        )
    });
    let run = eval(&example_cases(), &root, &["--min-top1", "0.85"]);
    assert_eq!(run.code, Some(1), "{run:#?}");
    assert!(
        run.stderr
            .contains("the ranking's top1 hit rate 0.667 is below --min-top1 0.85"),
        "{run:#?}"
    );
    assert!(
        run.stdout.contains("expected `changelog-entry`"),
        "{run:#?}"
    );
    // The same copy unedited passes.
    let clean = tempfile::tempdir().unwrap();
    let root = examples_into(clean.path(), |text| text);
    eval(&example_cases(), &root, &["--min-top1", "0.85"]).ok();
}

#[test]
fn a_skills_own_test_scenarios_are_cases_too() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("invoice-tables");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: invoice-tables\ndescription: Builds invoice tables from billing exports. Use when invoices must be tabulated.\ntest-scenarios:\n  - name: routing\n    description: requests for this skill\n    cases:\n      - name: export\n        input: Tabulate the invoices of this billing export\n        assertions: [a table]\n        expectedBehavior: loads invoice-tables\n---\nBody.\n",
    )
    .unwrap();
    let cases = tmp.path().join("cases.yaml");
    std::fs::write(&cases, "cases: []\n").unwrap();
    let root = format!("project={}", tmp.path().display());
    let doc = eval(cases.to_str().unwrap(), &root, &["--format", "json"]).json();
    assert_eq!(doc["cases"], 1);
    assert_eq!(doc["top1"], 1.0);
    let result = &doc["results"][0];
    assert_eq!(result["case"], "invoice-tables: test-scenarios[0].cases[0]");
    assert_eq!(result["name"], "export");
    assert_eq!(result["tags"], serde_json::json!(["test-scenarios"]));
}

/// The model-command contract: the command gets, on its standard input, exactly the
/// instructions `skillctl prompt --format instructions` prints for the same roots, a blank
/// line and the request (the fake model compares byte for byte and fails otherwise), and
/// each answer form (a skill tool call as JSON, a bare name, `none`) is scored beside the
/// ranking's hits.
#[cfg(unix)]
#[test]
fn a_fake_model_gets_the_exact_prompt_and_its_answers_are_scored() {
    let tmp = tempfile::tempdir().unwrap();
    let root = example_root();
    let instructions = common::run(common::skillctl().args([
        "prompt",
        "--format",
        "instructions",
        "--no-defaults",
        "--root",
        &root,
    ]));
    let instructions_file = tmp.path().join("instructions.txt");
    std::fs::write(&instructions_file, instructions.ok()).unwrap();
    let cases = tmp.path().join("cases.jsonl");
    std::fs::write(
        &cases,
        concat!(
            "{\"request\": \"Add an entry to the changelog\", \"expect\": \"changelog-entry\"}\n",
            "\n",
            "{\"request\": \"Write a commit message for my staged changes\", \"expect\": \"commit-messages\", \"tags\": [\"git\"]}\n",
            "{\"request\": \"What is the weather in Lisbon?\", \"expect\": null}\n",
        ),
    )
    .unwrap();
    let answers = tmp.path().join("answers.tsv");
    std::fs::write(
        &answers,
        concat!(
            "Add an entry to the changelog\t{\"name\": \"skill\", \"input\": {\"name\": \"changelog-entry\"}}\n",
            "Write a commit message for my staged changes\tchangelog-entry\n",
            "What is the weather in Lisbon?\tnone\n",
        ),
    )
    .unwrap();
    let log = tmp.path().join("prompts.log");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake-model.sh");
    let command = format!("sh '{}'", script.display());
    let mut run = common::skillctl();
    run.env("FAKE_INSTRUCTIONS", &instructions_file)
        .env("FAKE_ANSWERS", &answers)
        .env("FAKE_LOG", &log)
        .args(["eval", "triggers", cases.to_str().unwrap(), "--no-defaults"])
        .args([
            "--root",
            &root,
            "--model-command",
            &command,
            "--format",
            "json",
        ]);
    let doc = common::run(&mut run).json();
    assert_eq!(doc["cases"], 3);
    assert_eq!(doc["top1"], 1.0, "{doc}");
    assert_eq!(doc["model"]["top1"], 0.6667, "{doc}");
    let results = doc["results"].as_array().unwrap();
    let model: Vec<&serde_json::Value> = results.iter().map(|r| &r["model"]).collect();
    assert_eq!(
        model,
        [
            &serde_json::json!("changelog-entry"),
            &serde_json::json!("changelog-entry"),
            &serde_json::Value::Null
        ]
    );
    assert_eq!(results[1]["model_hit"], false);
    assert_eq!(doc["per_skill"][1]["model_top1"], 0.0);
    // Three prompts, each the instructions with <available_skills>, then the request.
    let prompts = std::fs::read_to_string(&log).unwrap();
    assert_eq!(prompts.matches("</available_skills>").count(), 3);
    assert!(prompts.ends_with("\nWhat is the weather in Lisbon?\n"));
    // A model that breaks the contract stops the evaluation, the case named.
    std::fs::write(&instructions_file, "not the instructions\n").unwrap();
    let mut broken = common::skillctl();
    broken
        .env("FAKE_INSTRUCTIONS", &instructions_file)
        .env("FAKE_ANSWERS", &answers)
        .env("FAKE_LOG", &log)
        .args(["eval", "triggers", cases.to_str().unwrap(), "--no-defaults"])
        .args(["--root", &root, "--model-command", &command]);
    common::run(&mut broken).fails(2, "cases.jsonl:1");
}

#[test]
fn bad_case_files_are_refused_with_their_place() {
    let tmp = tempfile::tempdir().unwrap();
    let root = example_root();
    let table = [
        (
            "a.yaml",
            "- request: hi\n  expected: changelog-entry\n",
            "a.yaml:1: unknown key `expected`",
        ),
        (
            "b.yaml",
            "- request: hi\n",
            "b.yaml:1: a case needs `expect`",
        ),
        (
            "c.jsonl",
            "{\"request\": \"hi\", \"expect\": \"changelog-entri\"}\n",
            "did you mean changelog-entry?",
        ),
        (
            "d.jsonl",
            "{\"request\": \"hi\", \"expect\": null}\n{oops\n",
            "d.jsonl:2: not a JSON object",
        ),
        ("e.yaml", "cases: [\n", "e.yaml:"),
        (
            "f.yaml",
            "- request: hi\n  expect: null\n  tags: [1, {a: b}]\n",
            "`tags` is a list of strings",
        ),
    ];
    for (name, text, needle) in table {
        let path = tmp.path().join(name);
        std::fs::write(&path, text).unwrap();
        eval(path.to_str().unwrap(), &root, &[]).fails(2, needle);
    }
    eval(&example_cases(), &root, &["--min-top1", "2"]).fails(2, "--min-top1 is a fraction");
    let missing = tmp.path().join("none.yaml");
    eval(missing.to_str().unwrap(), &root, &[]).fails(2, "cannot read");
}

/// The cases run over what a session's model may be offered: a skill another tenant's
/// `scope` keeps is no skill to expect, until the session is that tenant's; a
/// `disable-model-invocation` skill is never one.
#[test]
fn cases_see_what_a_session_of_the_context_sees() {
    let tmp = tempfile::tempdir().unwrap();
    let write = |name: &str, extra: &str| {
        let d = tmp.path().join(name);
        std::fs::create_dir_all(&d).unwrap();
        let text = format!(
            "---\nname: {name}\ndescription: Builds invoice tables from billing exports.\n{extra}---\nBody.\n"
        );
        std::fs::write(d.join("SKILL.md"), text).unwrap();
    };
    write("invoice-tables", "scope:\n  tenants: [acme]\n");
    write("invoice-private", "disable-model-invocation: true\n");
    let cases = tmp.path().join("cases.yaml");
    std::fs::write(
        &cases,
        "- request: tabulate the invoices of this billing export\n  expect: invoice-tables\n",
    )
    .unwrap();
    let root = format!("project={}", tmp.path().display());
    let cases = cases.to_str().unwrap();
    eval(cases, &root, &[]).fails(
        2,
        "which is no skill a session of these roots may be offered",
    );
    let doc = eval(cases, &root, &["--tenant", "acme", "--format", "json"]).json();
    assert_eq!(doc["top1"], 1.0, "{doc}");
    let skills: Vec<&str> = doc["per_skill"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["skill"].as_str().unwrap())
        .collect();
    assert_eq!(skills, ["invoice-tables"]);
    std::fs::write(
        tmp.path().join("private.yaml"),
        "- request: tabulate the invoices\n  expect: invoice-private\n",
    )
    .unwrap();
    let private = tmp.path().join("private.yaml");
    eval(private.to_str().unwrap(), &root, &["--tenant", "acme"]).fails(2, "invoice-private");
}
