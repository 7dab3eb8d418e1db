//! Roots backed by a `SkillSource` that is not the filesystem (in-memory, embedded): their
//! skills are indexed, resolved and loaded through the source.

use std::sync::Arc;

use skills_index::SkillIndex;
use skills_model::Layer;
use skills_storage::{EmbeddedSource, MemorySource};

#[test]
fn memory_source_skills_are_indexed_and_loaded() {
    let source = MemorySource::from_files([
        (
            "hello/SKILL.md",
            "---\nname: hello\ndescription: Says hello. Use when greeted.\n---\nSay hello.\n"
                .as_bytes(),
        ),
        ("hello/references/tone.md", b"Warm.\n".as_slice()),
        ("broken/SKILL.md", b"no frontmatter\n".as_slice()),
    ]);
    let index = SkillIndex::builder()
        .plugin_source("mem", Arc::new(source))
        .build()
        .unwrap();
    let snap = index.snapshot();
    let record = snap.get("mem:hello").unwrap();
    assert_eq!(record.layer, Layer::Plugin);
    assert_eq!(record.path.to_str(), Some("embedded:mem/hello/SKILL.md"));
    assert!(snap.get("broken").is_none());
    assert!(snap
        .diagnostics()
        .iter()
        .any(|d| d.diagnostic.rule.id() == "frontmatter.missing"));
    let skill = index.load("hello").unwrap();
    assert_eq!(skill.body, "Say hello.\n");
    assert_eq!(
        skill
            .files
            .iter()
            .map(|f| f.path.as_str())
            .collect::<Vec<_>>(),
        ["references/tone.md"]
    );
    assert!(skill.digest.starts_with("sha256:"));
}

#[test]
fn a_folder_root_shadows_an_embedded_plugin() {
    static FILES: &[(&str, &[u8])] = &[(
        "deploy/SKILL.md",
        b"---\nname: deploy\ndescription: Built-in deploy. Use when deploying.\n---\nBuilt in.\n",
    )];
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("deploy")).unwrap();
    std::fs::write(
        tmp.path().join("deploy/SKILL.md"),
        "---\nname: deploy\ndescription: Project deploy. Use when deploying.\n---\nOurs.\n",
    )
    .unwrap();
    let index = SkillIndex::builder()
        .plugin_source("builtin", Arc::new(EmbeddedSource::new(FILES)))
        .root(Layer::Project, tmp.path())
        .watch(true)
        .build()
        .unwrap();
    let snap = index.snapshot();
    assert_eq!(snap.get("deploy").unwrap().layer, Layer::Project);
    assert_eq!(snap.shadowed()[0].shadowed_by, "project:deploy");
    assert_eq!(index.load("builtin:deploy").unwrap().body, "Built in.\n");
}
