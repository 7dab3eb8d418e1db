//! End-to-end tests of `skillctl watch`: the real binary, run in a hermetic environment
//! (HOME, AGENT_SKILLS_HOME and the three AGENT_SKILLS_*_DIR variables point into a temporary
//! folder, and the working directory is a temporary folder holding `.git`, so it is its own
//! project root), while the tests change skills on disk.
//!
//! Covered: the `ready` line (its exact keys, the generation and the skill count, the
//! built-in skill counted without `--no-defaults`); `added`, `changed` and `removed` lines
//! for a skill that appears, is edited and is deleted, with their exact keys, paths, layers,
//! qualified names and growing generations; `shadowed` and `unshadowed` when a higher layer
//! takes a name and gives it back; plugin roots (`acme:x`); nested skills with `--depth 2`;
//! a default root (from AGENT_SKILLS_PERSONAL_DIR) that does not exist when the watch starts;
//! a clean exit (status 0, nothing on stderr, stdout closed) on SIGINT, on SIGTERM and, with
//! `--exit-on-eof`, when stdin closes; stdin closing without `--exit-on-eof` not stopping
//! the watch; and malformed options failing before any `ready` line.
//!
//! Nothing waits by sleeping: stdout is read line by line on a thread feeding a channel and
//! every line (and the exit) is awaited with a deadline. Files change by renaming finished
//! files and folders into place, so each step is one file-system event and one change
//! line. A watch still running when its harness is dropped (a failing test) is killed.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::RecvTimeoutError;

use common::{Spawned, DEADLINE};
use serde_json::Value;

/// A hermetic world: a home, a working directory, the folders the AGENT_SKILLS_* variables
/// name, and a staging folder where files are finished before they are renamed into a root.
struct World {
    tmp: tempfile::TempDir,
    staged: AtomicU32,
}

impl World {
    fn new() -> World {
        let tmp = tempfile::tempdir().expect("temp dir");
        for dir in [
            "home",
            "cwd",
            // The working directory is a project root of its own, so the project folders
            // (`<project>/.NAME/skills`, the presets') are inside the world too.
            "cwd/.git",
            "stage",
            "env/enterprise",
            "env/personal",
            "env/project",
        ] {
            std::fs::create_dir_all(tmp.path().join(dir)).expect("create folder");
        }
        World {
            tmp,
            staged: AtomicU32::new(0),
        }
    }

    /// A path inside the world.
    fn path(&self, rel: &str) -> PathBuf {
        self.tmp.path().join(rel)
    }

    /// `LAYER=<world>/REL`, for `--root`; creates the folder.
    fn root(&self, layer: &str, rel: &str) -> String {
        std::fs::create_dir_all(self.path(rel)).expect("create root");
        format!("{layer}={}", self.path(rel).display())
    }

    /// A fresh, empty folder in the staging area.
    fn stage(&self) -> PathBuf {
        let n = self.staged.fetch_add(1, Ordering::Relaxed);
        let dir = self.path(&format!("stage/{n}"));
        std::fs::create_dir_all(&dir).expect("create staging folder");
        dir
    }

    /// Puts a finished skill folder `<world>/DIR` (named `name`) in place with one rename;
    /// returns its `SKILL.md`.
    fn add(&self, dir: &str, name: &str, description: &str) -> PathBuf {
        let staged = self.stage().join(name);
        std::fs::create_dir_all(&staged).expect("create staged skill");
        std::fs::write(staged.join("SKILL.md"), skill_text(name, description))
            .expect("write staged skill");
        let target = self.path(dir);
        std::fs::create_dir_all(target.parent().expect("has a parent")).expect("create parent");
        std::fs::rename(&staged, &target).expect("rename skill into place");
        target.join("SKILL.md")
    }

    /// Replaces `file` with new contents with one rename.
    fn replace(&self, file: &Path, contents: &str) {
        let staged = self.stage().join("SKILL.md");
        std::fs::write(&staged, contents).expect("write staged file");
        std::fs::rename(&staged, file).expect("rename file into place");
    }

    /// Starts `skillctl watch ARGS` in the world, stdin piped (and kept open).
    fn watch<S: AsRef<str>>(&self, args: &[S]) -> Watch {
        let proc = Spawned::start(
            common::skillctl()
                .arg("watch")
                .args(args.iter().map(AsRef::as_ref))
                .current_dir(self.path("cwd"))
                .env("HOME", self.path("home"))
                .env("AGENT_SKILLS_HOME", self.path("home"))
                .env("AGENT_SKILLS_ENTERPRISE_DIR", self.path("env/enterprise"))
                .env("AGENT_SKILLS_PERSONAL_DIR", self.path("env/personal"))
                .env("AGENT_SKILLS_PROJECT_DIR", self.path("env/project")),
        );
        Watch {
            proc,
            generation: 0,
        }
    }
}

fn skill_text(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description} Use when {name} is mentioned.\n---\n# {name}\n\nSteps.\n")
}

/// A running `skillctl watch`. Dropping it kills the child if it is still running.
struct Watch {
    proc: Spawned,
    generation: u64,
}

fn keys(v: &Value) -> BTreeSet<&str> {
    v.as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .map(String::as_str)
        .collect()
}

fn set<'a>(items: &[&'a str]) -> BTreeSet<&'a str> {
    items.iter().copied().collect()
}

/// A path as JSON shows it.
fn js(path: &Path) -> Value {
    Value::String(path.to_str().expect("UTF-8 path").to_owned())
}

/// What a change line is expected to say.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Change {
    event: &'static str,
    qualified_name: String,
    layer: &'static str,
    path: PathBuf,
}

fn change(event: &'static str, qualified_name: &str, layer: &'static str, path: &Path) -> Change {
    Change {
        event,
        qualified_name: qualified_name.to_owned(),
        layer,
        path: path.to_path_buf(),
    }
}

impl Watch {
    /// The next stdout line, parsed, within the deadline.
    fn next(&self) -> Value {
        match self.proc.lines.recv_timeout(DEADLINE) {
            Ok(line) => serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("line is not JSON ({e}): {line:?}")),
            Err(RecvTimeoutError::Timeout) => panic!("no line within {DEADLINE:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("stdout closed: the watch exited early"),
        }
    }

    /// The `ready` line: exact keys, a generation of at least 1, `skills` of them.
    fn ready(&mut self, skills: u64) -> u64 {
        let line = self.next();
        assert_eq!(
            keys(&line),
            set(&["event", "generation", "skills"]),
            "ready line: {line}"
        );
        assert_eq!(line["event"], "ready", "{line}");
        assert_eq!(line["skills"], skills, "{line}");
        let generation = line["generation"]
            .as_u64()
            .expect("generation is an integer");
        assert!(generation >= 1, "{line}");
        self.generation = generation;
        generation
    }

    /// The next change line, shape-checked; its generation is above the ready line's and
    /// never below the previous line's.
    fn event(&mut self) -> (Change, u64) {
        let line = self.next();
        assert_eq!(
            keys(&line),
            set(&[
                "event",
                "name",
                "qualified_name",
                "layer",
                "path",
                "generation"
            ]),
            "change line: {line}"
        );
        let event = match line["event"].as_str() {
            Some("added") => "added",
            Some("removed") => "removed",
            Some("changed") => "changed",
            Some("shadowed") => "shadowed",
            Some("unshadowed") => "unshadowed",
            other => panic!("unknown event {other:?}: {line}"),
        };
        let layer = match line["layer"].as_str() {
            Some("enterprise") => "enterprise",
            Some("personal") => "personal",
            Some("project") => "project",
            Some("plugin") => "plugin",
            other => panic!("unknown layer {other:?}: {line}"),
        };
        let qualified_name = line["qualified_name"].as_str().expect("qualified_name");
        let name = line["name"].as_str().expect("name is a string");
        assert!(
            qualified_name.ends_with(&format!(":{name}")),
            "qualified_name ends with the name: {line}"
        );
        let path = PathBuf::from(line["path"].as_str().expect("path is a string"));
        assert!(path.is_absolute() && path.ends_with("SKILL.md"), "{line}");
        let generation = line["generation"]
            .as_u64()
            .expect("generation is an integer");
        assert!(
            generation >= self.generation && generation >= 2,
            "generations grow (previous {}): {line}",
            self.generation
        );
        self.generation = generation;
        (change(event, qualified_name, layer, &path), generation)
    }

    /// The next change line is `expected`; returns its generation.
    fn expect(&mut self, expected: &Change) -> u64 {
        let (got, generation) = self.event();
        assert_eq!(&got, expected);
        generation
    }

    /// The next `expected.len()` change lines are `expected`, in any order, all of one
    /// generation (one published snapshot).
    fn expect_together(&mut self, expected: &[Change]) -> u64 {
        let mut got = Vec::new();
        let mut generations = BTreeSet::new();
        for _ in expected {
            let (c, g) = self.event();
            got.push(c);
            generations.insert(g);
        }
        got.sort();
        let mut want = expected.to_vec();
        want.sort();
        assert_eq!(got, want);
        assert_eq!(generations.len(), 1, "one snapshot: {generations:?}");
        generations.into_iter().next().expect("one generation")
    }

    /// Sends a signal (`INT`, `TERM`) with `kill`.
    fn signal(&self, name: &str) {
        let pid = self.proc.child.as_ref().expect("running").id();
        let status = Command::new("kill")
            .arg(format!("-{name}"))
            .arg(pid.to_string())
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -{name} {pid}: {status}");
    }

    /// Closes the child's stdin.
    fn close_stdin(&mut self) {
        drop(self.proc.stdin.take().expect("stdin open"));
    }

    /// Waits (with deadlines) for stdout to close with no further line, then for the exit;
    /// returns the status and stderr.
    fn finish(mut self) -> (ExitStatus, String) {
        match self.proc.lines.recv_timeout(DEADLINE) {
            Err(RecvTimeoutError::Disconnected) => {}
            Ok(line) => panic!("unexpected line before the exit: {line}"),
            Err(RecvTimeoutError::Timeout) => panic!("still running after {DEADLINE:?}"),
        }
        self.proc.finish()
    }

    /// Like [`finish`](Self::finish), and the exit was clean: status 0, nothing on stderr.
    fn finish_cleanly(self) {
        let (status, stderr) = self.finish();
        assert_eq!(status.code(), Some(0), "{status}; stderr: {stderr}");
        assert_eq!(stderr, "");
    }
}

/// `--no-defaults --root project=<world>/proj`.
fn project_only(w: &World) -> Vec<String> {
    vec![
        "--no-defaults".into(),
        "--root".into(),
        w.root("project", "proj"),
    ]
}

// ---------------------------------------------------------------------------------------------
// Events

#[test]
fn ready_then_added_changed_removed_then_sigint_exits_0() {
    let w = World::new();
    w.add("proj/keep", "keep", "Stays.");
    let mut watch = w.watch(&project_only(&w));
    let ready = watch.ready(1);

    let file = w.add("proj/fresh", "fresh", "Brand new.");
    let added = watch.expect(&change("added", "project:fresh", "project", &file));
    assert!(added > ready, "added in a later snapshot than ready");

    w.replace(&file, &skill_text("fresh", "Edited."));
    let changed = watch.expect(&change("changed", "project:fresh", "project", &file));
    assert!(changed > added);

    std::fs::remove_dir_all(w.path("proj/fresh")).expect("delete skill");
    let removed = watch.expect(&change("removed", "project:fresh", "project", &file));
    assert!(removed > changed);

    watch.signal("INT");
    watch.finish_cleanly();
}

#[test]
fn change_lines_carry_every_key_with_the_skill_values() {
    let w = World::new();
    let mut watch = w.watch(&project_only(&w));
    watch.ready(0);
    w.add("proj/shape", "shape", "Shaped.");
    let line = watch.next();
    assert_eq!(
        line,
        serde_json::json!({
            "event": "added",
            "name": "shape",
            "qualified_name": "project:shape",
            "layer": "project",
            "path": js(&w.path("proj/shape/SKILL.md")),
            "generation": line["generation"].as_u64().filter(|g| *g >= 2).expect("generation"),
        })
    );
    watch.signal("TERM");
    watch.finish_cleanly();
}

#[test]
fn a_higher_layer_shadows_a_name_and_gives_it_back() {
    let w = World::new();
    let project = w.add("proj/deploy", "deploy", "Project deploy.");
    let args = vec![
        "--no-defaults".to_owned(),
        "--root".into(),
        w.root("personal", "per"),
        "--root".into(),
        w.root("project", "proj"),
    ];
    let mut watch = w.watch(&args);
    watch.ready(1);

    let personal = w.add("per/deploy", "deploy", "Personal deploy.");
    watch.expect_together(&[
        change("added", "personal:deploy", "personal", &personal),
        change("shadowed", "project:deploy", "project", &project),
    ]);

    std::fs::remove_dir_all(w.path("per/deploy")).expect("delete skill");
    watch.expect_together(&[
        change("removed", "personal:deploy", "personal", &personal),
        change("unshadowed", "project:deploy", "project", &project),
    ]);

    watch.signal("INT");
    watch.finish_cleanly();
}

#[test]
fn plugin_root_events_use_the_plugin_id() {
    let w = World::new();
    let args = vec![
        "--no-defaults".to_owned(),
        "--root".into(),
        w.root("plugin:acme", "plug"),
    ];
    let mut watch = w.watch(&args);
    watch.ready(0);
    let file = w.add("plug/x", "x", "Plugin x.");
    watch.expect(&change("added", "acme:x", "plugin", &file));
    watch.signal("TERM");
    watch.finish_cleanly();
}

#[test]
fn depth_2_reports_nested_skills() {
    let w = World::new();
    let mut args = project_only(&w);
    args.extend(["--depth".to_owned(), "2".to_owned()]);
    std::fs::create_dir_all(w.path("proj/group")).expect("create group");
    let mut watch = w.watch(&args);
    watch.ready(0);
    let file = w.add("proj/group/nested", "nested", "Nested.");
    watch.expect(&change("added", "project:nested", "project", &file));
    w.replace(&file, &skill_text("nested", "Nested, edited."));
    watch.expect(&change("changed", "project:nested", "project", &file));
    watch.signal("INT");
    watch.finish_cleanly();
}

#[test]
fn defaults_count_the_builtin_skill_and_watch_a_root_that_appears_later() {
    let w = World::new();
    std::fs::remove_dir(w.path("env/personal")).expect("remove the personal root");
    let mut watch = w.watch::<&str>(&[]);
    // The built-in skill-creator is the only skill.
    watch.ready(1);

    // The personal root (AGENT_SKILLS_PERSONAL_DIR) appears, with a skill in it.
    let staged = w.stage().join("personal");
    std::fs::create_dir_all(staged.join("mine")).expect("create staged root");
    std::fs::write(staged.join("mine/SKILL.md"), skill_text("mine", "Mine.")).expect("write");
    std::fs::rename(&staged, w.path("env/personal")).expect("rename root into place");
    let file = w.path("env/personal/mine/SKILL.md");
    watch.expect(&change("added", "personal:mine", "personal", &file));

    // And it is watched from then on.
    let other = w.add("env/personal/other", "other", "Other.");
    watch.expect(&change("added", "personal:other", "personal", &other));

    watch.signal("TERM");
    watch.finish_cleanly();
}

// ---------------------------------------------------------------------------------------------
// Exits

#[test]
fn sigint_exits_0() {
    let w = World::new();
    let mut watch = w.watch(&project_only(&w));
    watch.ready(0);
    watch.signal("INT");
    watch.finish_cleanly();
}

#[test]
fn sigterm_exits_0() {
    let w = World::new();
    w.add("proj/one", "one", "One.");
    let mut watch = w.watch(&project_only(&w));
    watch.ready(1);
    watch.signal("TERM");
    watch.finish_cleanly();
}

#[test]
fn exit_on_eof_exits_0_when_stdin_closes() {
    let w = World::new();
    let mut args = project_only(&w);
    args.push("--exit-on-eof".into());
    let mut watch = w.watch(&args);
    watch.ready(0);
    watch.close_stdin();
    watch.finish_cleanly();
}

#[test]
fn exit_on_eof_with_stdin_already_closed_still_prints_ready() {
    let w = World::new();
    let mut args = project_only(&w);
    args.push("--exit-on-eof".into());
    let mut watch = w.watch(&args);
    watch.close_stdin();
    watch.ready(0);
    watch.finish_cleanly();
}

#[test]
fn without_exit_on_eof_closing_stdin_does_not_stop_the_watch() {
    let w = World::new();
    let mut watch = w.watch(&project_only(&w));
    watch.ready(0);
    watch.close_stdin();
    // Still watching: a new skill is reported after stdin closed.
    let file = w.add("proj/later", "later", "Later.");
    watch.expect(&change("added", "project:later", "project", &file));
    watch.signal("TERM");
    watch.finish_cleanly();
}

#[test]
fn malformed_options_fail_before_ready() {
    let w = World::new();
    for (args, needle) in [
        (
            vec!["--root".to_owned(), "nope".to_owned()],
            "expected LAYER=DIR",
        ),
        (
            vec!["--root".to_owned(), "galaxy=/x".to_owned()],
            "unknown layer",
        ),
        (
            vec!["--depth".to_owned(), "9".to_owned()],
            "--depth must be between 1 and 6",
        ),
    ] {
        let watch = w.watch(&args);
        let (status, stderr) = watch.finish();
        assert_eq!(status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
}
