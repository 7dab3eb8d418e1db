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
