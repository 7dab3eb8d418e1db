//! `skillctl search`: the ranking `skills_search` serves a model, for people, over the
//! index's search fixtures.

mod common;

use std::path::Path;

fn fixtures() -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../index/tests/fixtures/search");
    format!("project={}", dir.display())
}

#[test]
fn search_prints_the_best_matches_in_both_formats() {
    let root = fixtures();
    let run = common::run(common::skillctl().args([
        "search",
        "documentations",
        "--no-defaults",
        "--root",
        &root,
        "--format",
        "json",
    ]));
    let doc = run.json();
    assert_eq!(doc["results"][0]["name"], "api-docs");
    assert_eq!(doc["results"][0]["qualified_name"], "project:api-docs");
    assert!(doc["total"].as_u64().unwrap() >= 1);
    let run = common::run(common::skillctl().args([
        "search",
        "plot a graph",
        "--no-defaults",
        "--root",
        &root,
        "--limit",
        "1",
    ]));
    let text = run.ok();
    assert!(text.starts_with("project:spreadsheet-charts"), "{text}");
    assert!(text.contains("shown"), "{text}");
    common::run(common::skillctl().args(["search", "x", "--no-defaults", "--limit", "0"]))
        .fails(2, "--limit");
}

/// `--explain` says which words matched which field of each listed skill and what each
/// added (the parts add up to the score); `--why` says why a skill is not listed: a miss
/// outranked (by which skills), a miss with no word in common, a skill hidden from a
/// session's model (and by which rule), a shadowed skill and a name that is no skill.
#[test]
fn explain_and_why_say_what_matched_and_what_did_not() {
    let root = fixtures();
    let run = |more: &[&str]| {
        let mut command = common::skillctl();
        command.args(["search", "--no-defaults", "--root", &root]);
        command.args(more);
        common::run(&mut command)
    };
    let query = "write a report of the test failures";
    let doc = run(&[
        "--explain",
        query,
        "--limit",
        "1",
        "--why",
        "unit-tests",
        "--format",
        "json",
    ])
    .json();
    let hit = &doc["results"][0];
    assert_eq!(hit["name"], "incident-report");
    let terms = hit["terms"].as_array().unwrap();
    assert!(
        terms
            .iter()
            .any(|t| t["term"] == "report" && t["field"] == "name"),
        "{hit}"
    );
    let sum: f64 = terms
        .iter()
        .map(|t| t["contribution"].as_f64().unwrap())
        .sum();
    assert!(
        (sum - hit["score"].as_f64().unwrap()).abs() < 0.001,
        "{hit}"
    );
    let why = &doc["why"];
    assert_eq!(why["skill"], "project:unit-tests");
    assert_eq!(why["listed"], serde_json::Value::Null);
    assert_eq!(why["rank"], 2);
    assert_eq!(
        why["outranked_by"],
        serde_json::json!(["project:incident-report"])
    );
    assert_eq!(why["reasons"][0]["rule"], "outranked");
    let text = run(&["--explain", "plot a graph", "--why", "api-docs"]);
    let text = text.ok();
    assert!(text.contains("graph when_to_use +"), "{text}");
    assert!(
        text.contains("no_shared_term: no word of the query (plot, graph)"),
        "{text}"
    );
    let text = run(&["--explain", query, "--limit", "3", "--why", "unit-tests"]);
    assert!(text.ok().contains("`project:unit-tests` is listed, at 2"));
}

/// `--why` for a listed skill below the offering threshold, a skill a filter leaves out,
/// and a name that is no skill.
#[test]
fn why_says_below_threshold_filtered_and_not_found() {
    let root = fixtures();
    let run = |more: &[&str]| {
        let mut command = common::skillctl();
        command.args(["search", "--no-defaults", "--root", &root]);
        command.args(more);
        common::run(&mut command)
    };
    let query = "write a report of the test failures";
    // A listed skill below the offering threshold says so; a filter says it left one out.
    let doc = run(&[
        "--explain",
        "plot a graph",
        "--why",
        "spreadsheet-charts",
        "--format",
        "json",
    ])
    .json();
    assert_eq!(doc["why"]["listed"], 1);
    assert_eq!(doc["why"]["reasons"][0]["rule"], "below_threshold", "{doc}");
    let doc = run(&[
        "--explain",
        query,
        "--tag",
        "nothing",
        "--why",
        "unit-tests",
        "--format",
        "json",
    ])
    .json();
    assert_eq!(doc["why"]["reasons"][0]["rule"], "filtered", "{doc}");
    let text = run(&["--explain", query, "--why", "unit-test"]);
    assert!(text.ok().contains(
        "not_found: no skill of these roots is named `unit-test` (did you mean unit-tests?)"
    ));
}

#[test]
fn why_names_the_rule_that_hides_a_skill_from_a_session() {
    let tmp = tempfile::tempdir().unwrap();
    let write = |dir: &std::path::Path, name: &str, extra: &str| {
        let d = dir.join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(
            d.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: Builds invoice tables from billing exports.\n{extra}---\nBody.\n"),
        )
        .unwrap();
    };
    let (project, personal) = (tmp.path().join("project"), tmp.path().join("personal"));
    write(&project, "invoice-tables", "scope:\n  tenants: [globex]\n");
    write(
        &project,
        "invoice-private",
        "disable-model-invocation: true\n",
    );
    write(&project, "invoice-shared", "");
    write(&personal, "invoice-shared", "");
    let roots = [
        format!("project={}", project.display()),
        format!("personal={}", personal.display()),
    ];
    let why = |name: &str| {
        let run = common::run(common::skillctl().args([
            "search",
            "--explain",
            "invoice tables",
            "--no-defaults",
            "--root",
            &roots[0],
            "--root",
            &roots[1],
            "--tenant",
            "acme",
            "--why",
            name,
            "--format",
            "json",
        ]));
        run.json()["why"]["reasons"].clone()
    };
    let scoped = why("invoice-tables");
    assert_eq!(scoped[0]["rule"], "scope", "{scoped}");
    assert_eq!(
        scoped[0]["message"],
        "hidden from a session of tenant acme: its `scope` admits tenant globex"
    );
    assert_eq!(
        why("invoice-private")[0]["rule"],
        "disable_model_invocation"
    );
    let shadowed = why("project:invoice-shared");
    assert_eq!(shadowed[0]["rule"], "shadowed", "{shadowed}");
    assert!(shadowed[0]["message"]
        .as_str()
        .unwrap()
        .contains("personal:invoice-shared"));
}
