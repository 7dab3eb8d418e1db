//! Skills reached through links, and one folder under several roots, as Claude Code and
//! Codex users lay them out: every visible link is followed (into a hidden folder,
//! `node_modules`, deeper than the depth), a skill is counted once, paths are reported
//! resolved, and a shadowed entry names its winner without ambiguity.
#![cfg(unix)]

use std::path::Path;

use skills_index::SkillIndex;
use skills_model::Layer;

fn skill(dir: &Path, name: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!(
            "---\nname: {name}\ndescription: The {name} skill. Use when testing.\n---\nBody.\n"
        ),
    )
    .unwrap();
}

fn link(target: &Path, at: &Path) {
    std::os::unix::fs::symlink(target, at).unwrap();
}

#[test]
fn visible_links_are_followed_wherever_they_point() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("skills");
    // (where the skill is stored, the visible link's name)
    let cases = [
        (".store/search", "search"),
        ("node_modules/pkg/lint", "lint"),
        ("vendor/a/b/c/d/deep", "deep"),
    ];
    for (stored, name) in cases {
        skill(&root.join(stored), name);
        link(&root.join(stored), &root.join(name));
    }
    let outside = tmp.path().join("elsewhere/far");
    skill(&outside, "far");
    link(&outside, &root.join("far"));
    let index = SkillIndex::builder()
        .root(Layer::Project, &root)
        .build()
        .unwrap();
    let snap = index.snapshot();
    let real = std::fs::canonicalize(tmp.path()).unwrap();
    for (stored, name) in cases {
        let record = snap
            .get(name)
            .unwrap_or_else(|| panic!("{name} not indexed"));
        assert_eq!(
            record.path,
            real.join("skills").join(stored).join("SKILL.md")
        );
    }
    assert_eq!(
        snap.get("far").unwrap().path,
        real.join("elsewhere/far/SKILL.md")
    );
    assert_eq!(snap.len(), 4);
    assert!(snap.shadowed().is_empty());
    // Loaded through the resolved folder too.
    assert_eq!(index.load("search").unwrap().body, "Body.\n");
}

#[test]
fn a_skill_reached_twice_is_one_skill_and_loops_end() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("skills");
    skill(&root.join("deploy"), "deploy");
    link(&root.join("deploy"), &root.join("deploy-alias"));
    link(&root, &root.join("deploy/loop"));
    link(tmp.path(), &root.join("up"));
    let index = SkillIndex::builder()
        .root(Layer::Project, &root)
        .depth(6)
        .build()
        .unwrap();
    let snap = index.snapshot();
    assert_eq!(snap.len(), 1);
    assert!(snap.shadowed().is_empty());
}

#[test]
fn a_root_behind_a_link_reports_resolved_paths() {
    let tmp = tempfile::tempdir().unwrap();
    let real_root = tmp.path().join("real");
    skill(&real_root.join("deploy"), "deploy");
    link(&real_root, &tmp.path().join("alias"));
    let index = SkillIndex::builder()
        .root(Layer::Project, tmp.path().join("alias"))
        .build()
        .unwrap();
    let expected = std::fs::canonicalize(&real_root)
        .unwrap()
        .join("deploy/SKILL.md");
    assert_eq!(index.snapshot().get("deploy").unwrap().path, expected);
}

#[test]
fn one_folder_under_two_layers_is_one_skill_of_the_higher() {
    let tmp = tempfile::tempdir().unwrap();
    skill(&tmp.path().join("deploy"), "deploy");
    let index = SkillIndex::builder()
        .root(Layer::Project, tmp.path())
        .root(Layer::Personal, tmp.path())
        .plugin("acme", tmp.path())
        .build()
        .unwrap();
    let snap = index.snapshot();
    assert_eq!(snap.len(), 1);
    assert_eq!(snap.get("deploy").unwrap().layer, Layer::Personal);
    assert!(snap.shadowed().is_empty());
    assert!(snap.get("acme:deploy").is_none());
}

#[test]
fn a_shadowed_entry_names_its_winner_by_path() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    skill(&a.join("deploy"), "deploy");
    skill(&b.join("deploy"), "deploy");
    let index = SkillIndex::builder()
        .root(Layer::Project, &a)
        .root(Layer::Project, &b)
        .build()
        .unwrap();
    let snap = index.snapshot();
    let shadowed = &snap.shadowed()[0];
    assert_eq!(shadowed.shadowed_by, shadowed.record.qualified_name());
    let winner = snap.get("deploy").unwrap();
    assert_eq!(shadowed.winner_path, winner.path);
    assert_ne!(shadowed.winner_path, shadowed.record.path);
}

/// A review found one file held twice in one root: a link's folder became unreadable, so
/// its last good record stayed, while a new link read the same file live; the snapshot
/// held the skill twice at one path, one shadowing the other in no fixed order. One file
/// is one record: the live one.
#[test]
fn regression_a_last_good_record_yields_to_the_same_file_read_live() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("skills");
    let out = tmp.path().join("out");
    std::fs::create_dir_all(&root).unwrap();
    skill(&out.join("x"), "x");
    // A folder whose `SKILL.md` cannot be read (a directory).
    std::fs::create_dir_all(out.join("y/SKILL.md")).unwrap();
    let (a, c) = (root.join("x"), root.join("c"));
    link(&out.join("x"), &a);
    let index = SkillIndex::builder()
        .root(Layer::Project, &root)
        .build()
        .unwrap();
    assert_eq!(index.snapshot().len(), 1);
    std::fs::remove_file(&a).unwrap();
    link(&out.join("y"), &a);
    link(&out.join("x"), &c);
    index.apply_changed_paths(&[a, c]);
    let snap = index.snapshot();
    assert_eq!(snap.len(), 1);
    assert!(snap.shadowed().is_empty(), "{:?}", snap.shadowed());
    let kept = snap.get("x").unwrap();
    assert_eq!(
        kept.path,
        std::fs::canonicalize(out.join("x/SKILL.md")).unwrap()
    );
    // A full rescan, which gathers its records from what it read (the last good record
    // read again as kept), holds the one record too.
    let snap = index.reload_now();
    assert_eq!(snap.len(), 1);
    assert!(snap.shadowed().is_empty(), "{:?}", snap.shadowed());
}

/// Regression (found merging issue 38's background watch setup): a root rescanned because
/// its own path was created or renamed counted every skill in it as changed, so a skill
/// that reads the same drew a `changed` event; `skillctl watch` then reported a root that
/// appeared while its watches were being set up as `added` and then `changed`. Such a
/// rescan reports a skill only if it reads differently; a change no skill folder names (a
/// nested layout's) still counts every skill of the root as changed.
#[test]
fn regression_a_root_s_own_event_reports_no_change_for_skills_that_read_the_same() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("skills");
    skill(&root.join("mine"), "mine");
    let index = SkillIndex::builder()
        .root(Layer::Personal, &root)
        .build()
        .unwrap();
    let events = index.subscribe();
    index.apply_changed_paths(std::slice::from_ref(&root));
    let changed: Vec<_> = events
        .try_iter()
        .filter(|e| e.event == skills_index::ChangeKind::Changed)
        .collect();
    assert!(changed.is_empty(), "{changed:?}");
    // An edit of the skill is still a change.
    std::fs::write(
        root.join("mine/SKILL.md"),
        "---\nname: mine\ndescription: Edited.\n---\nBody.\n",
    )
    .unwrap();
    index.apply_changed_paths(std::slice::from_ref(&root));
    assert!(events
        .try_iter()
        .any(|e| e.event == skills_index::ChangeKind::Changed));
}
