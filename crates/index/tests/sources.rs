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

#[test]
fn a_qualified_name_not_found_suggests_a_qualified_name() {
    let source = skills_storage::MemorySource::from_files([(
        "deploy/SKILL.md",
        "---\nname: deploy\ndescription: Deploys. Use when deploying.\n---\nSteps.\n".as_bytes(),
    )]);
    let index = SkillIndex::builder()
        .plugin_source("acme", Arc::new(source))
        .build()
        .unwrap();
    let err = index.load("acme:deplyo").unwrap_err();
    assert!(
        err.to_string().contains("did you mean \"acme:deploy\""),
        "{err}"
    );
}

/// The one listing rule: the same skill lists the same files on disk and in memory (hidden
/// entries and `node_modules` left out, every depth of the resource folders).
#[test]
fn a_skill_lists_the_same_files_on_disk_and_in_memory() {
    const FILES: [(&str, &str); 6] = [
        (
            "tidy/SKILL.md",
            "---\nname: tidy\ndescription: Tidies. Use when tidying.\n---\nBody.\n",
        ),
        ("tidy/references/deep/a/b/c/d/e/f/g/h/i/note.md", "deep\n"),
        ("tidy/references/.draft.md", "hidden\n"),
        ("tidy/assets/node_modules/x.js", "dep\n"),
        ("tidy/scripts/run.sh", "echo\n"),
        ("tidy/notes.md", "outside the resource folders\n"),
    ];
    let tmp = tempfile::tempdir().unwrap();
    for (path, text) in FILES {
        let full = tmp.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
    }
    let on_disk = SkillIndex::builder()
        .root(Layer::Project, tmp.path())
        .build()
        .unwrap();
    let in_memory = SkillIndex::builder()
        .plugin_source("mem", Arc::new(MemorySource::from_files(FILES)))
        .build()
        .unwrap();
    let listed = |index: &SkillIndex| -> Vec<String> {
        let skill = index.load("tidy").unwrap();
        skill.files.iter().map(|f| f.path.clone()).collect()
    };
    let expected = [
        "references/deep/a/b/c/d/e/f/g/h/i/note.md",
        "scripts/run.sh",
    ];
    assert_eq!(listed(&on_disk), expected);
    assert_eq!(listed(&in_memory), expected);
}

#[cfg(unix)]
#[test]
fn a_resource_folder_that_is_a_link_is_not_listed() {
    let tmp = tempfile::tempdir().unwrap();
    let skill = tmp.path().join("root/linky");
    std::fs::create_dir_all(skill.join("references")).unwrap();
    std::fs::write(skill.join("references/own.md"), "mine\n").unwrap();
    std::fs::create_dir_all(tmp.path().join("outside")).unwrap();
    std::fs::write(tmp.path().join("outside/secret.txt"), "not yours\n").unwrap();
    std::os::unix::fs::symlink(tmp.path().join("outside"), skill.join("assets")).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: linky\ndescription: Links. Use when testing.\n---\nBody.\n",
    )
    .unwrap();
    let index = SkillIndex::builder()
        .root(Layer::Project, tmp.path().join("root"))
        .build()
        .unwrap();
    let files: Vec<String> = index
        .load("linky")
        .unwrap()
        .files
        .iter()
        .map(|f| f.path.clone())
        .collect();
    assert_eq!(files, ["references/own.md"]);
}

#[test]
fn a_change_reaches_every_root_over_the_same_folder() {
    // Regression (review): the watcher's refresh updated only the first root with a path,
    // so a skill deleted from a folder that is both a personal and a project root stayed
    // indexed as project:x.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("foo");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("SKILL.md");
    std::fs::write(
        &file,
        "---\nname: foo\ndescription: Old. Use when testing.\n---\nOld.\n",
    )
    .unwrap();
    let index = SkillIndex::builder()
        .root(Layer::Personal, tmp.path())
        .root(Layer::Project, tmp.path())
        .build()
        .unwrap();
    std::fs::write(
        &file,
        "---\nname: foo\ndescription: New. Use when testing.\n---\nNew.\n",
    )
    .unwrap();
    index.apply_changed_paths(std::slice::from_ref(&file));
    let snap = index.snapshot();
    assert!(snap
        .get("personal:foo")
        .unwrap()
        .description
        .starts_with("New"));
    // One folder under two roots is one skill, held by the higher layer.
    assert!(snap.get("project:foo").is_none());
    assert!(snap.shadowed().is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
    index.apply_changed_paths(std::slice::from_ref(&file));
    assert!(index.snapshot().get("foo").is_none());
}

#[test]
fn plugin_ids_given_to_the_builder_are_checked() {
    // Regression (review): only register_plugin checked ids; `enterprise` or an id with
    // `:` given to the builder broke qualified names.
    let source = || Arc::new(MemorySource::from_files(Vec::<(String, Vec<u8>)>::new()));
    for id in ["enterprise", "a:b", "", "has space"] {
        let err = SkillIndex::builder()
            .plugin_source(id, source())
            .build()
            .unwrap_err();
        assert_eq!(err.code(), "SKILL_PLUGIN_INVALID", "{id:?}");
    }
    let err = SkillIndex::builder()
        .plugin_source("dup", source())
        .plugin_source("dup", source())
        .build()
        .unwrap_err();
    assert_eq!(err.code(), "SKILL_PLUGIN_INVALID");
}

#[test]
fn a_skill_appearing_above_a_nested_one_hides_it_as_a_full_scan_would() {
    // Regression (review): with nested layouts, a SKILL.md created in a parent of a nested
    // skill re-read only the parent, and the nested skill stayed indexed.
    let tmp = tempfile::tempdir().unwrap();
    let nested = tmp.path().join("group/inner");
    std::fs::create_dir_all(&nested).unwrap();
    std::fs::write(
        nested.join("SKILL.md"),
        "---\nname: inner\ndescription: Inner. Use when testing.\n---\nIn.\n",
    )
    .unwrap();
    let index = SkillIndex::builder()
        .root(Layer::Project, tmp.path())
        .depth(2)
        .build()
        .unwrap();
    assert!(index.snapshot().get("inner").is_some());
    let parent = tmp.path().join("group/SKILL.md");
    std::fs::write(
        &parent,
        "---\nname: group\ndescription: Group. Use when testing.\n---\nGroup.\n",
    )
    .unwrap();
    index.apply_changed_paths(std::slice::from_ref(&parent));
    let snap = index.snapshot();
    assert!(snap.get("group").is_some());
    assert_eq!(
        snap.get("inner").is_some(),
        index.reload_now().get("inner").is_some()
    );
}

/// A source in memory that a scan reads otherwise than a folder's ([`Twist`]).
#[derive(Debug)]
struct Twisted(MemorySource, Twist);

/// How a [`Twisted`] source differs from the memory it reads.
#[derive(Debug, Clone, Copy)]
enum Twist {
    /// It names one folder twice: two relative folders whose resolved path is the same, as
    /// a source resolving links on its own may report.
    OneFolderTwice,
    /// It gives the scan each of its skills to read where it finds it, as a folder
    /// source's walk does, rather than listing them for the reads after the walk.
    ReadWhereFound,
    /// The same, each twice (a folder source never does: its walk reaches each folder
    /// once).
    ReadWhereFoundTwice,
}

impl skills_storage::SkillSource for Twisted {
    fn skill_dirs(&self) -> Vec<String> {
        self.0.skill_dirs()
    }
    fn read(&self, path: &str, limit: u64) -> Result<Vec<u8>, skills_storage::ReadError> {
        self.0.read(path, limit)
    }
    fn files(&self, dir: &str) -> Vec<(String, u64)> {
        self.0.files(dir)
    }
    fn is_dir(&self, path: &str) -> bool {
        self.0.is_dir(path)
    }
    fn candidates(&self) -> Vec<skills_storage::SourceCandidate> {
        let Twist::OneFolderTwice = self.1 else {
            return self.0.candidates();
        };
        ["a", "b"]
            .into_iter()
            .map(|dir| skills_storage::SourceCandidate {
                dir: dir.into(),
                file: "SKILL.md".into(),
                misnamed: false,
                resolved: Some("/srv/skills/one".into()),
            })
            .collect()
    }
    fn expected_candidates_reading(
        &self,
        read: &skills_storage::ReadCandidate<'_>,
    ) -> skills_storage::CandidateList {
        let left: Vec<skills_storage::SourceCandidate> = self
            .candidates()
            .into_iter()
            .filter(|c| match self.1 {
                Twist::OneFolderTwice => true,
                Twist::ReadWhereFound => !read(c),
                Twist::ReadWhereFoundTwice => {
                    let first = read(c);
                    !(read(c) && first)
                }
            })
            .collect();
        left.into()
    }
}

/// A publication from a single root skipped the pass that keeps one record per folder,
/// on the grounds that one discovery lists each folder once; a plugin's source need not,
/// and its one folder became two records, one shadowed by itself. Only a folder on disk
/// now skips it.
#[test]
fn regression_a_single_plugin_source_naming_one_folder_twice_is_one_skill() {
    let text = "---\nname: one\ndescription: One. Use when testing.\n---\n";
    let source = MemorySource::from_files([("a/SKILL.md", text), ("b/SKILL.md", text)]);
    let index = SkillIndex::builder()
        .plugin_source("p", Arc::new(Twisted(source, Twist::OneFolderTwice)))
        .build()
        .unwrap();
    let snap = index.snapshot();
    assert_eq!(snap.records().len(), 1);
    assert!(snap.shadowed().is_empty());
}

/// A full rescan gathers its records from what it read, and makes each root's map of
/// folders beside the snapshot's build: a folder read twice is one entry in the map, so
/// one record and its diagnostics once, at the first build and at a rescan.
#[test]
fn a_folder_read_twice_in_one_scan_is_one_entry() {
    let text = "---\nname: a\ndescription: A. Use when testing.\nodd-field: 1\n---\n";
    let source = MemorySource::from_files([("a/SKILL.md", text)]);
    let index = SkillIndex::builder()
        .source(
            Layer::Project,
            Arc::new(Twisted(source, Twist::ReadWhereFoundTwice)),
        )
        .build()
        .unwrap();
    for snap in [index.snapshot(), index.reload_now()] {
        assert_eq!(snap.records().len(), 1);
        assert!(snap.shadowed().is_empty());
        let rules: Vec<&str> = snap.each_diagnostic().map(|(_, d)| d.rule.id()).collect();
        assert_eq!(rules, ["frontmatter.unknownField"], "{rules:?}");
    }
}

/// What a snapshot says, to compare two: its skills and shadowed skills by qualified name
/// and path, and its diagnostics by path and rule.
fn said(snap: &skills_index::Snapshot) -> Vec<String> {
    let skills = snap
        .skills()
        .map(|r| format!("skill {} {}", r.qualified_name(), r.path.display()));
    let shadowed = snap.shadowed().iter().map(|s| {
        format!(
            "shadowed {} by {}",
            s.record.qualified_name(),
            s.shadowed_by
        )
    });
    let diagnostics = snap
        .each_diagnostic()
        .map(|(path, d)| format!("diagnostic {} {}", path.display(), d.rule.id()));
    skills.chain(shadowed).chain(diagnostics).collect()
}

/// A full rescan holds what its walks read out of the roots' maps while its snapshot is
/// built, up to 16,384 entries over all its roots, and puts any more in their maps first:
/// the snapshot is the same either way, at its build and at a rescan, and the same as
/// from sources whose skills are all read after the walk.
#[test]
fn a_rescan_s_snapshot_is_the_same_however_its_maps_are_made() {
    let files = |n: usize, prefix: &str| -> Vec<(String, String)> {
        (0..n)
            .map(|i| {
                let odd = if i % 7 == 0 { "odd-field: 1\n" } else { "" };
                (
                    format!("{prefix}{i:05}/SKILL.md"),
                    format!("---\nname: {prefix}{i:05}\ndescription: Skill {i}. Use when testing.\n{odd}---\n"),
                )
            })
            .collect()
    };
    // Small roots (all held beside the build); a first root past the bound (into its map
    // at once) and a second that fits under it; and two roots each under the bound whose
    // sum is past it. A name in two layers is shadowed either way.
    for (first, second) in [(3, 2), (16_400, 5), (9_000, 9_000)] {
        let (a, b) = (files(first, "s"), files(second, "s"));
        let index = |read_as_found: bool| {
            let source = |files: &[(String, String)]| -> Arc<dyn skills_storage::SkillSource> {
                let memory = MemorySource::from_files(files.iter().cloned());
                if read_as_found {
                    Arc::new(Twisted(memory, Twist::ReadWhereFound))
                } else {
                    Arc::new(memory)
                }
            };
            SkillIndex::builder()
                .source(Layer::Project, source(&a))
                .source(Layer::Personal, source(&b))
                .build()
                .unwrap()
        };
        let (found, listed) = (index(true), index(false));
        let want = said(&listed.snapshot());
        assert_eq!(said(&found.snapshot()), want, "{first} and {second} skills");
        assert_eq!(
            said(&found.reload_now()),
            want,
            "{first} and {second} skills, rescanned"
        );
    }
}
