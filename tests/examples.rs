//! The examples hold: the skills shipped in `examples/skills` validate cleanly through the
//! facade, and `examples/host.rs` runs its task to the end.

use std::path::Path;

use agent_skills::index::{check_candidate, DEFAULT_SKILL_FILE_LIMIT};
use agent_skills::storage::{discover, DiscoveryOptions};
use agent_skills::SkillParser;

#[test]
fn example_skills_are_valid() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/skills");
    let found = discover(&root, &DiscoveryOptions::roots());
    assert!(found.problems.is_empty());
    let parser = SkillParser::builder().lint(true).build();
    let names: Vec<String> = found
        .candidates
        .iter()
        .map(|c| {
            let report = check_candidate(c, &parser, DEFAULT_SKILL_FILE_LIMIT);
            assert!(
                report.is_valid(),
                "{}: {:?}",
                c.dir.display(),
                report.diagnostics
            );
            report.name().unwrap().to_owned()
        })
        .collect();
    assert_eq!(names, ["changelog-entry", "commit-messages"]);
}

/// The host example, compiled into this test as a module, so `cargo test` runs it.
#[path = "../examples/host.rs"]
mod host;

#[test]
fn the_host_example_runs_its_task_to_the_end() {
    host::main().expect("examples/host.rs");
}
