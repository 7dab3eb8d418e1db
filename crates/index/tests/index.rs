//! Integration tests of the index without a watcher: precedence across layers, priority and
//! path order, shadowing, qualified names, plugins, strict and lenient reading, `load()`,
//! `reload_now()` and the change events it publishes.

use std::fs;
use std::path::{Path, PathBuf};

use crossbeam_channel::Receiver;
use sha2::{Digest, Sha256};
use skills_index::{ChangeEvent, ChangeKind, IndexError, SkillIndex};
use skills_model::{Diagnostic, Layer, Rule};

/// Writes `<root>/<dir>/SKILL.md` with `name`, a description and `extra` frontmatter lines.
fn write_skill(root: &Path, dir: &str, name: &str, extra: &str) -> PathBuf {
    let folder = root.join(dir);
    fs::create_dir_all(&folder).unwrap();
    let file = folder.join("SKILL.md");
    let text = format!(
        "---\nname: {name}\ndescription: The {dir} skill. Use when testing.\n{extra}---\nBody of {dir}.\n"
    );
    fs::write(&file, text).unwrap();
    file
}

/// Every event already published on `rx`, as (kind, qualified name).
fn drain(rx: &Receiver<ChangeEvent>) -> Vec<(ChangeKind, String)> {
    rx.try_iter().map(|e| (e.event, e.qualified_name)).collect()
}

fn has_rule(index: &SkillIndex, path: &Path, rule: Rule) -> bool {
    index
        .snapshot()
        .diagnostics()
        .iter()
        .any(|d| d.path == path && d.diagnostic.rule == rule)
}

#[test]
fn default_layer_order_and_shadowing() {
    let tmp = tempfile::tempdir().unwrap();
    let dirs = ["enterprise", "personal", "project", "plugin"].map(|d| tmp.path().join(d));
    for d in &dirs {
        write_skill(d, "deploy", "deploy", "");
    }
    // Given out of order on purpose: precedence comes from the layer, not the call order.
    let index = SkillIndex::builder()
        .plugin("acme", &dirs[3])
        .root(Layer::Project, &dirs[2])
        .root(Layer::Personal, &dirs[1])
        .root(Layer::Enterprise, &dirs[0])
        .build()
        .unwrap();
    let snap = index.snapshot();
    assert_eq!(snap.generation(), 1);
    assert_eq!(snap.len(), 1);
    let winner = snap.get("deploy").unwrap();
    assert_eq!(winner.layer, Layer::Enterprise);
    assert_eq!(winner.qualified_name(), "enterprise:deploy");

    // Every loser is listed, shadowed by the enterprise skill.
    let mut shadowed: Vec<(String, String)> = snap
        .shadowed()
        .iter()
        .map(|s| (s.record.qualified_name(), s.shadowed_by.clone()))
        .collect();
    shadowed.sort();
    assert_eq!(
        shadowed,
        [
            ("acme:deploy".to_owned(), "enterprise:deploy".to_owned()),
            ("personal:deploy".to_owned(), "enterprise:deploy".to_owned()),
            ("project:deploy".to_owned(), "enterprise:deploy".to_owned()),
        ]
    );

    // Qualified names reach every skill, losers included.
    for (qualified, layer, dir) in [
        ("enterprise:deploy", Layer::Enterprise, &dirs[0]),
        ("personal:deploy", Layer::Personal, &dirs[1]),
        ("project:deploy", Layer::Project, &dirs[2]),
        ("acme:deploy", Layer::Plugin, &dirs[3]),
    ] {
        let r = snap.get(qualified).unwrap_or_else(|| panic!("{qualified}"));
        assert_eq!(r.layer, layer);
        assert_eq!(r.name.as_str(), "deploy");
        assert_eq!(r.qualified_name(), qualified);
        assert!(r.path.starts_with(dir));
    }
    assert_eq!(
        snap.get("acme:deploy").unwrap().plugin.as_deref(),
        Some("acme")
    );
    assert!(snap.get("other:deploy").is_none());
    assert!(snap.get("project:nope").is_none());
    assert_eq!(snap.records().len(), 4);
}

#[test]
fn configurable_layer_order() {
    let tmp = tempfile::tempdir().unwrap();
    let (personal, project, plugin) = (
        tmp.path().join("personal"),
        tmp.path().join("project"),
        tmp.path().join("plugin"),
    );
    for d in [&personal, &project, &plugin] {
        write_skill(d, "deploy", "deploy", "");
    }
    let index = SkillIndex::builder()
        .root(Layer::Personal, &personal)
        .root(Layer::Project, &project)
        .plugin("acme", &plugin)
        .layer_order([
            Layer::Plugin,
            Layer::Project,
            Layer::Personal,
            Layer::Enterprise,
        ])
        .build()
        .unwrap();
    let snap = index.snapshot();
    assert_eq!(snap.get("deploy").unwrap().qualified_name(), "acme:deploy");
    let mut by: Vec<(String, String)> = snap
        .shadowed()
        .iter()
        .map(|s| (s.record.qualified_name(), s.shadowed_by.clone()))
        .collect();
    by.sort();
    assert_eq!(
        by,
        [
            ("personal:deploy".to_owned(), "acme:deploy".to_owned()),
            ("project:deploy".to_owned(), "acme:deploy".to_owned()),
        ]
    );
}

// Regression (third attack): a plugin registered for a plugin manager took a bare name
// from the host's plugin by a higher priority.
#[test]
fn a_registered_plugin_ranks_below_every_other_root_of_its_layer() {
    let tmp = tempfile::tempdir().unwrap();
    let (host, manager) = (tmp.path().join("host"), tmp.path().join("manager"));
    let hosts = write_skill(&host, "deploy", "deploy", "priority: -5\n");
    let managers = write_skill(&manager, "deploy", "deploy", "priority: 100\n");
    let index = SkillIndex::builder().plugin("acme", &host).build().unwrap();
    index
        .register_plugin_from("mgr", &manager, skills_storage::RootOrigin::Registered)
        .unwrap();
    let snap = index.snapshot();
    assert_eq!(snap.get("deploy").unwrap().path, hosts);
    assert_eq!(snap.get("mgr:deploy").unwrap().path, managers);
    // Registered as the host's own, priority decides as before.
    index.unregister_plugin("mgr").unwrap();
    index.register_plugin("mgr", &manager).unwrap();
    assert_eq!(index.snapshot().get("deploy").unwrap().path, managers);
}

#[test]
fn priority_breaks_ties_within_a_layer_only() {
    let tmp = tempfile::tempdir().unwrap();
    let (personal, project) = (tmp.path().join("personal"), tmp.path().join("project"));
    // Within the project layer, the higher priority wins although its path sorts later.
    write_skill(&project, "a-deploy", "deploy", "priority: 1\n");
    let high = write_skill(&project, "b-deploy", "deploy", "priority: 5\n");
    // A lower priority in a higher layer still beats both.
    let index_project_only = SkillIndex::builder()
        .root(Layer::Project, &project)
        .build()
        .unwrap();
    let snap = index_project_only.snapshot();
    assert_eq!(snap.get("deploy").unwrap().path, high);
    assert_eq!(snap.shadowed().len(), 1);
    assert_eq!(snap.shadowed()[0].shadowed_by, "project:deploy");
    assert!(snap.shadowed()[0]
        .record
        .path
        .ends_with("a-deploy/SKILL.md"));

    let personal_file = write_skill(&personal, "deploy", "deploy", "priority: -3\n");
    let index = SkillIndex::builder()
        .root(Layer::Project, &project)
        .root(Layer::Personal, &personal)
        .build()
        .unwrap();
    let snap = index.snapshot();
    assert_eq!(snap.get("deploy").unwrap().path, personal_file);
    assert_eq!(snap.shadowed().len(), 2);
    assert!(snap
        .shadowed()
        .iter()
        .all(|s| s.shadowed_by == "personal:deploy"));
}

#[test]
fn path_order_breaks_remaining_ties() {
    let tmp = tempfile::tempdir().unwrap();
    let (first, second) = (tmp.path().join("a-root"), tmp.path().join("b-root"));
    // Same layer, same priority: the lower path wins, within a root and across roots.
    let a = write_skill(&first, "x-deploy", "deploy", "");
    let b = write_skill(&first, "y-deploy", "deploy", "");
    let c = write_skill(&second, "a-deploy", "deploy", "");
    let index = SkillIndex::builder()
        .root(Layer::Project, &first)
        .root(Layer::Project, &second)
        .build()
        .unwrap();
    let snap = index.snapshot();
    assert_eq!(snap.get("deploy").unwrap().path, a);
    let mut losers: Vec<PathBuf> = snap
        .shadowed()
        .iter()
        .map(|s| s.record.path.clone())
        .collect();
    losers.sort();
    let mut expected = vec![b, c];
    expected.sort();
    assert_eq!(losers, expected);
    // Both share a qualified name; it resolves to the same winner as the bare name.
    assert_eq!(
        snap.get("project:deploy").unwrap().path,
        snap.get("deploy").unwrap().path
    );
    // The build is deterministic.
    let again = index.reload_now();
    assert_eq!(
        again.get("deploy").unwrap().path,
        snap.get("deploy").unwrap().path
    );
}

#[test]
fn register_and_unregister_plugins() {
    let tmp = tempfile::tempdir().unwrap();
    let (project, plugin) = (tmp.path().join("project"), tmp.path().join("plugin"));
    write_skill(&project, "deploy", "deploy", "");
    write_skill(&plugin, "deploy", "deploy", "");
    write_skill(&plugin, "lint", "lint", "");
    let index = SkillIndex::builder()
        .root(Layer::Project, &project)
        .build()
        .unwrap();
    let rx = index.subscribe();
    let g0 = index.snapshot().generation();

    let snap = index.register_plugin("acme", &plugin).unwrap();
    assert!(snap.generation() > g0);
    assert_eq!(
        snap.get("acme:lint").unwrap().plugin.as_deref(),
        Some("acme")
    );
    assert_eq!(snap.get("lint").unwrap().qualified_name(), "acme:lint");
    assert_eq!(
        snap.get("deploy").unwrap().qualified_name(),
        "project:deploy"
    );
    assert_eq!(snap.shadowed()[0].record.qualified_name(), "acme:deploy");
    let mut events = drain(&rx);
    events.sort_by(|a, b| a.1.cmp(&b.1));
    assert_eq!(
        events,
        [
            (ChangeKind::Added, "acme:deploy".to_owned()),
            (ChangeKind::Added, "acme:lint".to_owned()),
        ]
    );
    assert!(index
        .roots()
        .iter()
        .any(|r| r.plugin.as_deref() == Some("acme")));

    // A second registration under the same id is refused and publishes nothing.
    let g1 = index.snapshot().generation();
    let err = index.register_plugin("acme", tmp.path()).unwrap_err();
    assert!(matches!(err, IndexError::Plugin { .. }), "{err:?}");
    assert_eq!(err.code(), "SKILL_PLUGIN_INVALID");
    assert!(err.to_string().contains("already registered"), "{err}");
    for bad in ["", "has space", "a/b", "project", "x:y"] {
        assert!(index.register_plugin(bad, &plugin).is_err(), "{bad:?}");
    }
    assert_eq!(index.snapshot().generation(), g1);
    assert!(drain(&rx).is_empty());

    let snap = index.unregister_plugin("acme").unwrap();
    assert!(snap.generation() > g1);
    assert!(snap.get("lint").is_none());
    assert!(snap.get("acme:deploy").is_none());
    assert!(snap.shadowed().is_empty());
    let mut events = drain(&rx);
    events.sort_by(|a, b| a.1.cmp(&b.1));
    assert_eq!(
        events,
        [
            (ChangeKind::Removed, "acme:deploy".to_owned()),
            (ChangeKind::Removed, "acme:lint".to_owned()),
        ]
    );
    let err = index.unregister_plugin("acme").unwrap_err();
    assert_eq!(err.code(), "SKILL_PLUGIN_INVALID");
    // Once gone, the id can be registered again.
    assert!(index.register_plugin("acme", &plugin).is_ok());
}

#[test]
fn lenient_indexes_invalid_skills_and_strict_does_not() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("project");
    write_skill(&root, "good", "good", "");
    // Readable, but the name breaks the specification's format (and its folder's name).
    let bad = write_skill(&root, "Bad_Skill", "Bad_Skill", "");

    let lenient = SkillIndex::builder()
        .root(Layer::Project, &root)
        .build()
        .unwrap();
    let snap = lenient.snapshot();
    assert_eq!(snap.len(), 2);
    let record = snap.get("Bad_Skill").expect("indexed leniently");
    assert!(!record.is_valid());
    assert!(record
        .diagnostics
        .iter()
        .any(|d| d.rule == Rule::NameFormat));
    assert!(has_rule(&lenient, &bad, Rule::NameFormat));
    assert!(snap.get("good").unwrap().is_valid());

    let strict = SkillIndex::builder()
        .root(Layer::Project, &root)
        .strict(true)
        .build()
        .unwrap();
    let snap = strict.snapshot();
    assert_eq!(snap.len(), 1);
    assert!(snap.get("Bad_Skill").is_none());
    assert!(snap.get("good").is_some());
    // The reason stays visible.
    assert!(has_rule(&strict, &bad, Rule::NameFormat));
    let err = strict.load("Bad_Skill").unwrap_err();
    assert_eq!(err.code(), "SKILL_NOT_FOUND");
}

#[test]
fn unreadable_metadata_is_not_indexed_even_leniently() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("project");
    let folder = root.join("broken");
    fs::create_dir_all(&folder).unwrap();
    let file = folder.join("SKILL.md");
    fs::write(&file, "---\nname: broken\ndescription: [unclosed\n").unwrap();
    let no_description = write_skill(&root, "nodesc", "nodesc", "");
    fs::write(&no_description, "---\nname: nodesc\n---\nBody\n").unwrap();
    let index = SkillIndex::builder()
        .root(Layer::Project, &root)
        .build()
        .unwrap();
    let snap = index.snapshot();
    assert!(snap.is_empty());
    assert!(has_rule(&index, &file, Rule::FrontmatterUnclosed));
    assert!(has_rule(&index, &no_description, Rule::DescriptionRequired));
}

#[test]
fn frontmatter_name_wins_over_folder_name() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("project");
    let file = write_skill(&root, "folder-name", "other-name", "");
    let index = SkillIndex::builder()
        .root(Layer::Project, &root)
        .build()
        .unwrap();
    let snap = index.snapshot();
    assert!(snap.get("folder-name").is_none());
    let r = snap.get("other-name").unwrap();
    assert_eq!(r.path, file);
    assert_eq!(r.qualified_name(), "project:other-name");
    assert!(r
        .diagnostics
        .iter()
        .any(|d| d.rule == Rule::NameMatchesDirectory));
    assert!(has_rule(&index, &file, Rule::NameMatchesDirectory));
    // Loading goes by the indexed name and reads the folder's files.
    assert_eq!(
        index.load("other-name").unwrap().body,
        "Body of folder-name.\n"
    );
}

#[test]
fn load_of_an_unknown_name_suggests_the_closest() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("project");
    write_skill(&root, "deploy", "deploy", "");
    write_skill(&root, "pdf-tools", "pdf-tools", "");
    let index = SkillIndex::builder()
        .root(Layer::Project, &root)
        .build()
        .unwrap();

    let err = index.load("deplyo").unwrap_err();
    assert_eq!(err.code(), "SKILL_NOT_FOUND");
    match &err {
        IndexError::NotFound { name, suggestion } => {
            assert_eq!(name, "deplyo");
            assert_eq!(suggestion.as_deref(), Some("deploy"));
        }
        other => panic!("unexpected error {other:?}"),
    }
    assert!(err.to_string().contains("did you mean \"deploy\""), "{err}");

    let err = index.load("pdf-tool").unwrap_err();
    assert!(
        err.to_string().contains("did you mean \"pdf-tools\""),
        "{err}"
    );

    let err = index.load("something-else-entirely").unwrap_err();
    assert!(
        matches!(
            err,
            IndexError::NotFound {
                suggestion: None,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(!err.to_string().contains("did you mean"), "{err}");
    assert!(index.load("personal:deploy").is_err());
}

#[test]
fn load_lists_resource_files_and_digests_the_skill_file() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("project");
    let file = write_skill(&root, "pdf-tools", "pdf-tools", "");
    let dir = file.parent().unwrap();
    for (rel, content) in [
        ("scripts/fill.py", "print('hi')\n"),
        ("references/forms.md", "# Forms\n"),
        ("references/deep/er/notes.md", "n"),
        ("assets/logo.svg", "<svg/>"),
        ("other/ignored.txt", "not listed"),
        ("README.md", "not listed either"),
    ] {
        let path = dir.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, content).unwrap();
    }
    fs::create_dir_all(dir.join("assets/empty")).unwrap();
    let index = SkillIndex::builder()
        .root(Layer::Project, &root)
        .build()
        .unwrap();

    let skill = index.load("pdf-tools").unwrap();
    assert_eq!(skill.body, "Body of pdf-tools.\n");
    assert_eq!(skill.record.name.as_str(), "pdf-tools");
    let files: Vec<(&str, u64)> = skill
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.size))
        .collect();
    assert_eq!(
        files,
        [
            ("assets/logo.svg", 6),
            ("references/deep/er/notes.md", 1),
            ("references/forms.md", 8),
            ("scripts/fill.py", 12),
        ]
    );
    let hex = skill
        .digest
        .strip_prefix("sha256:")
        .expect("sha256: prefix");
    assert_eq!(hex.len(), 64);
    assert!(hex
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
    let expected = format!("sha256:{:x}", Sha256::digest(fs::read(&file).unwrap()));
    assert_eq!(skill.digest, expected);

    // The qualified name loads the same skill.
    let again = index.load("project:pdf-tools").unwrap();
    assert_eq!(*skill, *again);

    // Every load reads the files again, with or without a new generation.
    fs::write(dir.join("scripts/other.sh"), "echo\n").unwrap();
    fs::write(&file, fs::read_to_string(&file).unwrap() + "More.\n").unwrap();
    let unpublished = index.load("pdf-tools").unwrap();
    assert_eq!(unpublished.body, "Body of pdf-tools.\nMore.\n");
    index.reload_now();
    let fresh = index.load("pdf-tools").unwrap();
    assert_eq!(fresh.body, "Body of pdf-tools.\nMore.\n");
    assert_ne!(fresh.digest, skill.digest);
    assert!(fresh.files.iter().any(|f| f.path == "scripts/other.sh"));
}

#[test]
fn reload_now_picks_up_changes_without_a_watcher() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("project");
    let file = write_skill(&root, "deploy", "deploy", "");
    let index = SkillIndex::builder()
        .root(Layer::Project, &root)
        .build()
        .unwrap();
    let rx = index.subscribe();
    assert_eq!(index.snapshot().len(), 1);

    write_skill(&root, "lint", "lint", "");
    fs::write(
        &file,
        "---\nname: deploy\ndescription: Deploys, now better. Use when shipping.\n---\nNew.\n",
    )
    .unwrap();
    // Nothing watches: the snapshot has not moved.
    assert!(index.snapshot().get("lint").is_none());
    let g = index.snapshot().generation();
    let snap = index.reload_now();
    assert_eq!(snap.generation(), g + 1);
    assert!(snap.get("lint").is_some());
    assert!(snap
        .get("deploy")
        .unwrap()
        .description
        .contains("now better"));
    let mut events = drain(&rx);
    events.sort_by(|a, b| a.1.cmp(&b.1));
    assert_eq!(
        events,
        [
            (ChangeKind::Changed, "project:deploy".to_owned()),
            (ChangeKind::Added, "project:lint".to_owned()),
        ]
    );

    // A reload that finds nothing new publishes a generation but no events.
    let snap = index.reload_now();
    assert_eq!(snap.generation(), g + 2);
    assert!(drain(&rx).is_empty());

    fs::remove_dir_all(root.join("lint")).unwrap();
    let snap = index.reload_now();
    assert!(snap.get("lint").is_none());
    assert_eq!(
        drain(&rx),
        [(ChangeKind::Removed, "project:lint".to_owned())]
    );

    // A root that disappears empties; one that appears is read.
    fs::remove_dir_all(&root).unwrap();
    assert!(index.reload_now().is_empty());
    write_skill(&root, "deploy", "deploy", "");
    assert_eq!(index.reload_now().len(), 1);
}

/// A publication's events name what changed and nothing else, whether the other skills
/// kept their places in the snapshot (compared by place) or moved (a skill added before
/// them, one removed between them), through reloads and through the watcher's refresh of
/// changed folders.
#[test]
fn events_name_what_changed_whether_the_others_kept_their_places_or_moved() {
    use ChangeKind::{Added, Changed, Removed};
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("project");
    for name in ["b", "c", "d", "e", "f"] {
        write_skill(&root, name, name, "");
    }
    let index = SkillIndex::builder()
        .root(Layer::Project, &root)
        .build()
        .unwrap();
    let rx = index.subscribe();
    let edit = |name: &str| write_skill(&root, name, name, "license: MIT\n");
    let remove = |name: &str| fs::remove_dir_all(root.join(name)).unwrap();
    // (what is done, whether the watcher's refresh of those folders publishes it, events)
    type Step<'a> = (
        &'a dyn Fn(),
        Option<&'a [&'a str]>,
        &'a [(ChangeKind, &'a str)],
    );
    let steps: [Step<'_>; 6] = [
        (&|| drop(edit("d")), Some(&["d"]), &[(Changed, "d")]),
        (&|| drop(edit("a")), Some(&["a"]), &[(Added, "a")]),
        (&|| remove("c"), Some(&["c"]), &[(Removed, "c")]),
        (
            &|| {
                edit("z");
                edit("b");
            },
            None,
            &[(Added, "z"), (Changed, "b")],
        ),
        (
            &|| {
                remove("a");
                edit("f");
            },
            Some(&["a", "f"]),
            &[(Removed, "a"), (Changed, "f")],
        ),
        (&|| {}, None, &[]),
    ];
    for (i, (act, refreshed, expected)) in steps.into_iter().enumerate() {
        act();
        match refreshed {
            Some(dirs) => {
                let paths: Vec<PathBuf> =
                    dirs.iter().map(|d| root.join(d).join("SKILL.md")).collect();
                index.apply_changed_paths(&paths);
            }
            None => drop(index.reload_now()),
        }
        let mut got = drain(&rx);
        got.sort_by(|a, b| a.1.cmp(&b.1));
        let mut want: Vec<(ChangeKind, String)> = expected
            .iter()
            .map(|(k, n)| (*k, format!("project:{n}")))
            .collect();
        want.sort_by(|a, b| a.1.cmp(&b.1));
        assert_eq!(got, want, "step {i}");
    }
}

#[test]
fn shadowed_and_unshadowed_events() {
    let tmp = tempfile::tempdir().unwrap();
    let (personal, project) = (tmp.path().join("personal"), tmp.path().join("project"));
    write_skill(&project, "deploy", "deploy", "");
    fs::create_dir_all(&personal).unwrap();
    let index = SkillIndex::builder()
        .root(Layer::Personal, &personal)
        .root(Layer::Project, &project)
        .build()
        .unwrap();
    let rx = index.subscribe();

    write_skill(&personal, "deploy", "deploy", "");
    let snap = index.reload_now();
    assert_eq!(snap.get("deploy").unwrap().layer, Layer::Personal);
    let events: Vec<ChangeEvent> = rx.try_iter().collect();
    let mut kinds: Vec<(ChangeKind, String)> = events
        .iter()
        .map(|e| (e.event, e.qualified_name.clone()))
        .collect();
    kinds.sort_by(|a, b| a.1.cmp(&b.1));
    assert_eq!(
        kinds,
        [
            (ChangeKind::Added, "personal:deploy".to_owned()),
            (ChangeKind::Shadowed, "project:deploy".to_owned()),
        ]
    );
    assert!(events.iter().all(|e| e.generation == snap.generation()));
    assert!(events.iter().all(|e| e.name == "deploy"));
    assert_eq!(snap.shadowed()[0].shadowed_by, "personal:deploy");

    fs::remove_dir_all(personal.join("deploy")).unwrap();
    let snap = index.reload_now();
    assert_eq!(snap.get("deploy").unwrap().layer, Layer::Project);
    assert!(snap.shadowed().is_empty());
    let mut kinds = drain(&rx);
    kinds.sort_by(|a, b| a.1.cmp(&b.1));
    assert_eq!(
        kinds,
        [
            (ChangeKind::Removed, "personal:deploy".to_owned()),
            (ChangeKind::Unshadowed, "project:deploy".to_owned()),
        ]
    );
}

#[test]
fn a_dropped_subscriber_does_not_block_others() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("project");
    fs::create_dir_all(&root).unwrap();
    let index = SkillIndex::builder()
        .root(Layer::Project, &root)
        .build()
        .unwrap();
    let gone = index.subscribe();
    let rx = index.subscribe();
    drop(gone);
    write_skill(&root, "deploy", "deploy", "");
    index.reload_now();
    assert_eq!(
        drain(&rx),
        [(ChangeKind::Added, "project:deploy".to_owned())]
    );
}

#[test]
fn a_plugin_over_the_same_folder_as_a_root() {
    // One folder under several roots is one skill, held by the highest layer: a plugin
    // registered over a project root's folder adds no skill and sends no event. (Before,
    // it was a second skill, shadowed by itself.)
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("shared");
    write_skill(&root, "deploy", "deploy", "");
    let index = SkillIndex::builder()
        .root(Layer::Project, &root)
        .build()
        .unwrap();
    let rx = index.subscribe();
    let snap = index.register_plugin("acme", &root).unwrap();
    assert_eq!(
        snap.get("deploy").unwrap().qualified_name(),
        "project:deploy"
    );
    assert!(snap.get("acme:deploy").is_none());
    assert!(snap.shadowed().is_empty());
    assert!(drain(&rx).is_empty());
    index.unregister_plugin("acme").unwrap();
    assert!(drain(&rx).is_empty());
    assert_eq!(
        index.snapshot().get("deploy").unwrap().qualified_name(),
        "project:deploy"
    );
}

#[test]
fn load_of_a_skill_kept_at_its_last_good_version() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("project");
    let file = write_skill(&root, "deploy", "deploy", "");
    let index = SkillIndex::builder()
        .root(Layer::Project, &root)
        .build()
        .unwrap();
    let good = index.load("deploy").unwrap();
    assert_eq!(good.body, "Body of deploy.\n");

    fs::write(
        &file,
        "---\nname: deploy\ndescription: [never closed\nSteps.\n",
    )
    .unwrap();
    let snap = index.reload_now();
    // The metadata of the last good version stays indexed, with a diagnostic saying so.
    assert_eq!(
        snap.get("deploy").unwrap().description,
        good.record.description
    );
    assert!(has_rule(&index, &file, Rule::FrontmatterUnclosed));
    // Regression: loading used to re-read the broken file and serve its empty body under
    // the last good record. It now fails with a load error until the file is fixed.
    let err = index.load("deploy").unwrap_err();
    assert_eq!(err.code(), "SKILL_LOAD_FAILED");
    assert!(err.to_string().contains("no longer parses"), "{err}");
}

/// (layer, folder, name) of each skill, the qualified names that must be indexed, and the
/// rule each other skill is reported under.
type LookalikeCase = (
    Vec<(Layer, &'static str, &'static str)>,
    Vec<&'static str>,
    Rule,
);

// Regression: names that differ from a visible skill's only by case or by confusable
// letters (Cyrillic `у`, a zero-width space) loaded from the project layer; and (issue 38)
// the lookalikes a hand-written table missed, now judged by Unicode's confusables after
// NFKC, and the invisible characters now refused in any name (a zero-width space was a
// lookalike before: it is refused outright now, `name.format` saying why strictly).
#[test]
fn lookalike_names_are_not_indexed() {
    let deploy_and = |name: &'static str, rule: Rule| -> LookalikeCase {
        let skills = vec![
            (Layer::Personal, "deploy", "deploy"),
            (Layer::Project, "d", name),
        ];
        (skills, vec!["personal:deploy"], rule)
    };
    let confusable = [
        "Deploy",
        "dеploy",                                                 // Cyrillic е
        "\u{1D41D}\u{1D41E}\u{1D429}\u{1D425}\u{1D428}\u{1D432}", // mathematical bold
        "dep\u{2113}oy",                                          // script small l
        "dep\u{217C}oy",                                          // small roman fifty
        "ｄｅｐｌｏｙ",                                           // fullwidth
    ];
    let invisible = [
        "de\u{200B}ploy",  // zero-width space
        "deploy\u{FE0F}",  // variation selector
        "deploy\u{E0064}", // tag character
        "deploy\u{3164}",  // Hangul filler
        "\u{202E}yolped",  // right-to-left override: displays as "deploy"
    ];
    let mut cases: Vec<LookalikeCase> = Vec::new();
    cases.extend(confusable.map(|n| deploy_and(n, Rule::NameLookalike)));
    cases.extend(invisible.map(|n| deploy_and(n, Rule::NameFormat)));
    cases.extend(more_lookalike_cases());
    for (skills, expected, rule) in cases {
        check_lookalike_case(&skills, &expected, rule);
    }
}

/// The cases of separators, layers and ASCII pairs.
fn more_lookalike_cases() -> Vec<LookalikeCase> {
    let l = Rule::NameLookalike;
    vec![
        (
            vec![
                (Layer::Project, "git", "git_helper"),
                (Layer::Personal, "git-helper", "git-helper"),
            ],
            vec!["personal:git-helper"],
            l,
        ),
        // Two names outside the specification: the higher layer's stays.
        (
            vec![
                (Layer::Personal, "a", "My_Tool"),
                (Layer::Project, "b", "my_tool"),
            ],
            vec!["personal:My_Tool"],
            l,
        ),
        (
            vec![
                (Layer::Personal, "a", "My_Tοol"),
                (Layer::Project, "b", "my_tool"),
            ], // Greek ο
            vec!["personal:My_Tοol"],
            l,
        ),
        // Different skeletons are different skills.
        (
            vec![
                (Layer::Personal, "deploy", "deploy"),
                (Layer::Project, "e", "Deployer"),
            ],
            vec!["personal:deploy", "project:Deployer"],
            l,
        ),
        // ASCII names keep the ASCII rule: the confusables' `rn`/`m` and `0`/`O` do not
        // fold two of them into one.
        (
            vec![
                (Layer::Personal, "modem", "modem"),
                (Layer::Project, "modern", "modern"),
                (Layer::Project, "c0de", "C0de"),
                (Layer::Project, "code", "COde"),
            ],
            vec![
                "personal:modem",
                "project:modern",
                "project:C0de",
                "project:COde",
            ],
            l,
        ),
        // But a name outside ASCII is a lookalike of either.
        (
            vec![
                (Layer::Personal, "modem", "modem"),
                (Layer::Personal, "modern", "modern"),
                (Layer::Project, "m", "mod\u{0435}rn"),
            ],
            vec!["personal:modem", "personal:modern"],
            l,
        ),
    ]
}

/// Regression: the lookalike pass ordered names outside the specification by their
/// priority negated, which overflowed for the least `i64` (a panic in a debug build, and
/// that skill judged first in a release one). The higher priority stays.
#[test]
fn a_lookalike_of_the_least_priority_gives_way() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("project");
    let least = write_skill(&root, "a", "My_Tool", "priority: -9223372036854775808\n");
    write_skill(&root, "b", "my_tool", "");
    let index = SkillIndex::builder()
        .root(Layer::Project, &root)
        .build()
        .unwrap();
    let names: Vec<String> = index
        .snapshot()
        .records()
        .iter()
        .map(|r| r.qualified_name())
        .collect();
    assert_eq!(names, ["project:my_tool"]);
    assert!(has_rule(&index, &least, Rule::NameLookalike));
}

/// Indexes `skills` and checks that `expected` alone are indexed, each other skill
/// reported under `rule`.
fn check_lookalike_case(skills: &[(Layer, &str, &str)], expected: &[&str], rule: Rule) {
    let tmp = tempfile::tempdir().unwrap();
    let mut builder = SkillIndex::builder();
    for layer in [Layer::Personal, Layer::Project] {
        builder = builder.root(layer, tmp.path().join(layer.as_str()));
    }
    let mut lookalikes = Vec::new();
    for (layer, dir, name) in skills {
        let path = write_skill(&tmp.path().join(layer.as_str()), dir, name, "");
        if !expected.iter().any(|e| *e == format!("{layer}:{name}")) {
            lookalikes.push(path);
        }
    }
    let index = builder.build().unwrap();
    let snapshot = index.snapshot();
    let mut got: Vec<String> = snapshot
        .records()
        .iter()
        .map(|r| r.qualified_name())
        .collect();
    got.sort();
    let mut want: Vec<String> = expected.iter().map(|s| (*s).to_owned()).collect();
    want.sort();
    assert_eq!(got, want, "{skills:?}");
    for path in lookalikes {
        assert!(has_rule(&index, &path, rule), "{}", path.display());
    }
}

#[test]
fn a_root_that_does_not_exist_is_visible() {
    let tmp = tempfile::tempdir().unwrap();
    let here = tmp.path().join("here");
    std::fs::create_dir_all(&here).unwrap();
    let index = SkillIndex::builder()
        .root(Layer::Project, &here)
        .root(Layer::Personal, tmp.path().join("not-yet"))
        .build()
        .unwrap();
    let missing: Vec<_> = index
        .missing_roots()
        .iter()
        .map(|r| r.path().unwrap().to_path_buf())
        .collect();
    assert_eq!(missing, [tmp.path().join("not-yet")]);
    std::fs::create_dir_all(tmp.path().join("not-yet")).unwrap();
    assert!(index.missing_roots().is_empty());
}

/// Regression: the snapshot's diagnostics came in the order the parallel load finished
/// folders, so `skillctl list --format json` printed them differently from run to run.
#[test]
fn regression_diagnostics_come_in_path_order() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("project");
    // Enough folders that several load threads take part, each with an error and a warning.
    for i in (0..200).rev() {
        write_skill(
            &root,
            &format!("Bad_{i:03}"),
            &format!("Bad_{i:03}"),
            "x: 1\n",
        );
    }
    let index = SkillIndex::builder()
        .root(Layer::Project, &root)
        .build()
        .unwrap();
    let snap = index.snapshot();
    let paths: Vec<&Path> = snap
        .diagnostics()
        .iter()
        .map(|d| d.path.as_path())
        .collect();
    assert!(paths.len() >= 400, "{} diagnostics", paths.len());
    assert!(paths.windows(2).all(|w| w[0] <= w[1]), "{paths:?}");
    // Read in place, they are the same diagnostics in the same order.
    let in_place: Vec<(&Path, &Diagnostic)> = snap.each_diagnostic().collect();
    let listed: Vec<(&Path, &Diagnostic)> = snap
        .diagnostics()
        .iter()
        .map(|d| (d.path.as_path(), &d.diagnostic))
        .collect();
    assert_eq!(in_place, listed);
}

/// Discovery no longer asks each folder of a root for `SKILL.md` (the reads open it): a
/// folder without one is still no skill and no error, and a misnamed `skill.md` is still
/// found and reported.
#[test]
fn folders_without_a_skill_file_are_no_skills_and_no_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("project");
    write_skill(&root, "good", "good", "");
    fs::create_dir_all(root.join("empty")).unwrap();
    fs::create_dir_all(root.join("notes")).unwrap();
    fs::write(root.join("notes/README.md"), "notes\n").unwrap();
    let misnamed = write_skill(&root, "lower", "lower", "");
    fs::rename(&misnamed, root.join("lower/skill.md")).unwrap();
    let index = SkillIndex::builder()
        .root(Layer::Project, &root)
        .build()
        .unwrap();
    let snap = index.snapshot();
    let names: Vec<&str> = snap.skills().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["good", "lower"]);
    let rules: Vec<(String, Rule)> = snap
        .diagnostics()
        .iter()
        .map(|d| (d.path.display().to_string(), d.diagnostic.rule))
        .collect();
    assert!(
        rules.iter().all(|(_, r)| *r != Rule::FileMissing),
        "{rules:?}"
    );
    assert!(rules
        .iter()
        .any(|(p, r)| p.ends_with("skill.md") && *r == Rule::FileName));
}

/// Regression: a strict index indexed a skill whose file is misnamed (`skill.md`), which the
/// strict validator fails (`file.name`): it judged the parse alone, not the file's own
/// diagnostics. The skill is now refused, its reason listed; a lenient index keeps it.
#[test]
fn a_strict_index_refuses_a_misnamed_skill_file() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("project");
    write_skill(&root, "good", "good", "");
    let misnamed = write_skill(&root, "lower", "lower", "");
    let renamed = root.join("lower/skill.md");
    fs::rename(&misnamed, &renamed).unwrap();
    let build = |strict| {
        SkillIndex::builder()
            .root(Layer::Project, &root)
            .strict(strict)
            .build()
            .unwrap()
    };
    let strict = build(true);
    let names: Vec<String> = strict
        .snapshot()
        .skills()
        .map(|r| r.name.to_string())
        .collect();
    assert_eq!(names, ["good"]);
    assert!(has_rule(&strict, &renamed, Rule::FileName));
    let lenient = build(false);
    let snap = lenient.snapshot();
    let kept = snap.get("lower").expect("indexed leniently");
    assert!(kept.diagnostics.iter().any(|d| d.rule == Rule::FileName));
}

/// Regression: a strict index refused to load a skill it indexed through a link
/// (`root/deploy -> store/v2`): the load read the resolved folder, whose name (`v2`) is not
/// the skill's, where the index had judged the link's own name.
#[cfg(unix)]
#[test]
fn a_strict_index_loads_a_linked_skill_it_indexed() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store/v2");
    fs::create_dir_all(&store).unwrap();
    fs::write(
        store.join("SKILL.md"),
        "---\nname: deploy\ndescription: Deploys. Use when deploying.\n---\nBody.\n",
    )
    .unwrap();
    let root = tmp.path().join("root");
    fs::create_dir_all(&root).unwrap();
    std::os::unix::fs::symlink(&store, root.join("deploy")).unwrap();
    let index = SkillIndex::builder()
        .root(Layer::Personal, &root)
        .strict(true)
        .build()
        .unwrap();
    assert_eq!(index.snapshot().len(), 1, "indexed");
    let loaded = index.load("deploy").expect("loads");
    assert_eq!(loaded.body, "Body.\n");
}
