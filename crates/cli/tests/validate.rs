//! End-to-end tests of `skillctl validate`: the real binary run against skills written into
//! temporary directories.
//!
//! Covered: every kind of PATH (a skill directory, a `SKILL.md` file, a misnamed `skill.md`,
//! a folder searched recursively, and paths that are none of these); the recursion rules
//! (`.git` and `node_modules` skipped, hidden folders entered, skills nested in skills found);
//! symbolic links (loops cut, a skill reached twice counted once, across PATHs too); the exit
//! status (0, 1, 2, clap usage errors included); the exact shape of `--format json` and its
//! summary arithmetic; the rustc-like human output (header, ` --> file:line:col`, the source
//! line with a `^` under the right column, the summary line); and the files that must never
//! be opened or read whole (a FIFO, a `SKILL.md` link to `/dev/zero`, a directory named
//! `SKILL.md`, a 2 MiB file) plus a file that is not UTF-8.
//!
//! Every run has a deadline (the shared harness in `common`): a child that has not finished
//! within it is killed and the test fails, so a hang shows up as a failure, not a stuck test
//! run. Tests marked `// Regression (fixed):` show a defect in the product and fail until it is fixed.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use common::Run;
use serde_json::Value;
/// The reader's limit on `SKILL.md` (1 MiB).
const LIMIT: usize = 1 << 20;

/// Runs `skillctl ARGS` in `cwd` within the harness's deadline.
fn skillctl(cwd: &Path, args: &[&str]) -> Run {
    common::run(common::skillctl().args(args).current_dir(cwd))
}

/// Runs with `--format json`, checks the document's shape, and returns it.
fn skillctl_json(cwd: &Path, args: &[&str]) -> (Option<i32>, Value) {
    let mut all = vec!["validate", "--format", "json"];
    all.extend_from_slice(args);
    let run = skillctl(cwd, &all);
    let doc: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}):\n{}", run.stdout));
    assert_json_shape(&doc);
    (run.code, doc)
}

/// A path as the binary prints it (it prints paths as given, joined with the OS separator).
fn p(path: &str) -> String {
    path.replace('/', std::path::MAIN_SEPARATOR_STR)
}

/// Writes `text` to `root/rel`, creating the folders on the way.
fn write(root: &Path, rel: &str, text: impl AsRef<[u8]>) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().expect("has a parent")).expect("create folders");
    std::fs::write(path, text).expect("write file");
}

/// A valid skill in `root/rel`, named after the last component of `rel`.
fn skill(root: &Path, rel: &str) {
    let name = rel.rsplit('/').next().expect("non-empty");
    write(
        root,
        &format!("{rel}/SKILL.md"),
        format!(
            "---\nname: {name}\ndescription: Sorts the {name} ledger by date and flags gaps. Use when the user asks to tidy {name} records.\n---\n# {name}\n\nOpen the ledger, sort rows by date, list any missing days.\n"
        ),
    );
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

// ---------------------------------------------------------------------------------------------
// JSON helpers

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

fn count(v: &Value) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("not a non-negative integer: {v}"))
}

/// The document is exactly `{"skills":[...],"summary":{...}}`, every skill and diagnostic has
/// exactly the documented keys with the documented types, and the summary adds up.
fn assert_json_shape(doc: &Value) {
    assert_eq!(keys(doc), set(&["skills", "summary"]), "top level: {doc}");
    let skills = doc["skills"].as_array().expect("skills is an array");
    let (mut valid, mut errors, mut warnings) = (0, 0, 0);
    for s in skills {
        assert_eq!(
            keys(s),
            set(&["path", "name", "valid", "diagnostics"]),
            "skill: {s}"
        );
        assert!(s["path"].is_string(), "path is a string: {s}");
        assert!(
            s["name"].is_string() || s["name"].is_null(),
            "name is a string or null: {s}"
        );
        let is_valid = s["valid"].as_bool().expect("valid is a boolean");
        let mut has_error = false;
        for d in s["diagnostics"]
            .as_array()
            .expect("diagnostics is an array")
        {
            assert_eq!(
                keys(d),
                set(&["rule", "severity", "message", "line", "column"]),
                "diagnostic: {d}"
            );
            assert!(
                d["rule"].as_str().is_some_and(|r| !r.is_empty()),
                "rule is a non-empty string: {d}"
            );
            assert!(!d["message"].as_str().expect("message").is_empty());
            match d["severity"].as_str().expect("severity is a string") {
                "error" => {
                    has_error = true;
                    errors += 1;
                }
                "warning" => warnings += 1,
                "info" => {}
                other => panic!("unknown severity {other:?}"),
            }
            // line and column are both placed (1-based integers) or both null.
            match (&d["line"], &d["column"]) {
                (Value::Null, Value::Null) => {}
                (l, c) => assert!(count(l) >= 1 && count(c) >= 1, "1-based place: {d}"),
            }
        }
        assert_eq!(is_valid, !has_error, "valid iff no error: {s}");
        if is_valid {
            valid += 1;
        }
    }
    let summary = &doc["summary"];
    assert_eq!(
        keys(summary),
        set(&["checked", "valid", "invalid", "missing", "errors", "warnings"]),
        "summary: {summary}"
    );
    assert_eq!(count(&summary["checked"]), skills.len() as u64);
    assert_eq!(count(&summary["valid"]), valid);
    assert_eq!(
        count(&summary["valid"]) + count(&summary["invalid"]) + count(&summary["missing"]),
        count(&summary["checked"])
    );
    assert_eq!(count(&summary["errors"]), errors);
    assert_eq!(count(&summary["warnings"]), warnings);
}

/// The `path` of every skill, in output order.
fn paths(doc: &Value) -> Vec<String> {
    doc["skills"]
        .as_array()
        .expect("skills")
        .iter()
        .map(|s| s["path"].as_str().expect("path").to_owned())
        .collect()
}

/// The rule ids of one skill's diagnostics, in order.
fn rules(skill: &Value) -> Vec<&str> {
    skill["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|d| d["rule"].as_str().expect("rule"))
        .collect()
}

/// The one skill reported, and its single diagnostic.
fn only_diagnostic(doc: &Value) -> (&Value, &Value) {
    let skills = doc["skills"].as_array().expect("skills");
    assert_eq!(skills.len(), 1, "one skill: {doc}");
    let diags = skills[0]["diagnostics"].as_array().expect("diagnostics");
    assert_eq!(diags.len(), 1, "one diagnostic: {doc}");
    (&skills[0], &diags[0])
}

fn summary(doc: &Value) -> [u64; 5] {
    let s = &doc["summary"];
    ["checked", "valid", "invalid", "errors", "warnings"].map(|k| count(&s[k]))
}

// ---------------------------------------------------------------------------------------------
// Human-output helpers

/// Checks one rustc-style block in `out`: the header, ` --> file:line:col`, an empty gutter
/// line, `line | source`, and a marker line with `^` under `column` (columns count
/// characters; the padding is spaces, or tabs where the source has tabs).
fn assert_block(out: &str, header: &str, file: &str, line: usize, column: usize, source: &str) {
    let lines: Vec<&str> = out.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with(header))
        .unwrap_or_else(|| panic!("no line starting {header:?} in:\n{out}"));
    let block = lines
        .get(at..at + 6)
        .unwrap_or_else(|| panic!("block after {header:?} too short in:\n{out}"));
    let arrow = block[1];
    assert!(
        arrow.starts_with(' ') && arrow.trim_start() == format!("--> {file}:{line}:{column}"),
        "arrow line {arrow:?} in:\n{out}"
    );
    let width = line.to_string().len();
    let gutter = " ".repeat(width);
    assert_eq!(block[2], format!("{gutter} |"), "gutter line in:\n{out}");
    assert_eq!(
        block[3],
        format!("{line} | {source}"),
        "source line in:\n{out}"
    );
    let marker = block[4]
        .strip_prefix(&format!("{gutter} | "))
        .unwrap_or_else(|| panic!("marker line {:?} in:\n{out}", block[4]));
    let (pad, caret) = marker.split_at(marker.len() - 1);
    assert_eq!(caret, "^", "marker ends with ^: {marker:?}");
    assert_eq!(pad.chars().count(), column - 1, "marker column in:\n{out}");
    for (p, s) in pad.chars().zip(source.chars()) {
        assert_eq!(p, if s == '\t' { '\t' } else { ' ' }, "padding in:\n{out}");
    }
    assert_eq!(block[5], "", "a blank line ends the block in:\n{out}");
}

/// The last line of human output.
fn summary_line(out: &str) -> &str {
    assert!(out.ends_with('\n'), "output ends with a newline: {out:?}");
    out.lines().last().expect("some output")
}

// ---------------------------------------------------------------------------------------------
// Path kinds

#[test]
fn a_valid_skill_directory_passes_with_status_zero() {
    let tmp = tempdir();
    skill(tmp.path(), "ledger");
    let run = skillctl(tmp.path(), &["validate", "ledger"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        run.stdout,
        "ok: 1 valid, 0 invalid (0 errors, 0 warnings)\n"
    );
    assert_eq!(run.stderr, "");

    let (code, doc) = skillctl_json(tmp.path(), &["ledger"]);
    assert_eq!(code, Some(0));
    assert_eq!(paths(&doc), [p("ledger")]);
    assert_eq!(doc["skills"][0]["name"], "ledger");
    assert_eq!(doc["skills"][0]["valid"], true);
    assert_eq!(summary(&doc), [1, 1, 0, 0, 0]);
}

#[test]
fn a_skill_md_file_is_checked_as_its_directory() {
    let tmp = tempdir();
    skill(tmp.path(), "ledger");
    let (code, doc) = skillctl_json(tmp.path(), &["ledger/SKILL.md"]);
    assert_eq!(code, Some(0), "{doc}");
    assert_eq!(paths(&doc), [p("ledger")]);
    assert_eq!(doc["skills"][0]["name"], "ledger");

    // From inside the skill: a bare `SKILL.md` and `.` both work, and the directory name the
    // `name` is compared with is resolved from the real folder.
    let inside = tmp.path().join("ledger");
    let (code, doc) = skillctl_json(&inside, &["SKILL.md"]);
    assert_eq!(code, Some(0), "{doc}");
    assert_eq!(paths(&doc), ["."]);
    let (code, doc) = skillctl_json(&inside, &["."]);
    assert_eq!(code, Some(0), "{doc}");
    assert_eq!(paths(&doc), ["."]);
}

#[test]
fn a_misnamed_skill_file_is_found_and_reported() {
    let tmp = tempdir();
    write(
        tmp.path(),
        "almanac/skill.md",
        "---\nname: almanac\ndescription: Looks up tide tables. Use when asked about tides.\n---\n",
    );
    // As a directory, and as the file itself.
    for path in ["almanac", "almanac/skill.md"] {
        let (code, doc) = skillctl_json(tmp.path(), &[path]);
        assert_eq!(code, Some(1), "{path}: {doc}");
        let (s, d) = only_diagnostic(&doc);
        assert_eq!(s["path"], p("almanac"));
        assert_eq!(d["rule"], "file.name");
        assert_eq!(d["severity"], "error");
        assert!(d["message"].as_str().unwrap().contains("SKILL.md"), "{d}");
        // The misnamed file is still parsed.
        assert_eq!(s["name"], "almanac");
    }
    // Found by the recursive search too.
    let (code, doc) = skillctl_json(tmp.path(), &["."]);
    assert_eq!(code, Some(1));
    assert_eq!(paths(&doc), [p("./almanac")]);
    assert_eq!(rules(&doc["skills"][0]), ["file.name"]);
}

#[test]
fn paths_that_hold_no_skill_get_file_missing() {
    let tmp = tempdir();
    write(tmp.path(), "README.md", "# not a skill\n");
    write(tmp.path(), "empty/notes.txt", "nothing here\n");
    for path in ["README.md", "empty"] {
        let (code, doc) = skillctl_json(tmp.path(), &[path]);
        assert_eq!(code, Some(1), "{path} exists, so 1 not 2: {doc}");
        let (s, d) = only_diagnostic(&doc);
        assert_eq!(s["path"], p(path));
        assert_eq!(s["name"], Value::Null);
        assert_eq!(s["valid"], false);
        assert_eq!(d["rule"], "file.missing");
        assert_eq!(d["severity"], "error");
        assert_eq!((&d["line"], &d["column"]), (&Value::Null, &Value::Null));
        assert_eq!(summary(&doc), [1, 0, 1, 1, 0]);
    }
}

#[test]
fn a_path_that_does_not_exist_exits_two() {
    let tmp = tempdir();
    skill(tmp.path(), "ledger");
    let (code, doc) = skillctl_json(tmp.path(), &["ledger", "no-such-place"]);
    assert_eq!(code, Some(2), "{doc}");
    // The other PATHs are still checked and reported.
    assert_eq!(paths(&doc), [p("ledger"), p("no-such-place")]);
    assert_eq!(doc["skills"][0]["valid"], true);
    assert_eq!(rules(&doc["skills"][1]), ["file.missing"]);
    assert!(doc["skills"][1]["diagnostics"][0]["message"]
        .as_str()
        .unwrap()
        .contains("no-such-place"));

    let run = skillctl(tmp.path(), &["validate", "no-such-place"]);
    assert_eq!(run.code, Some(2));
    assert!(
        run.stdout.starts_with("error[file.missing]: "),
        "{}",
        run.stdout
    );
    // A path that does not exist is not an invalid skill (issue: "validate /missing counts
    // the path as 1 invalid").
    assert_eq!(
        summary_line(&run.stdout),
        "failed: 0 valid, 0 invalid, 1 path not found (1 error, 0 warnings)"
    );
}

// ---------------------------------------------------------------------------------------------
// Recursive search

#[test]
fn a_folder_is_searched_recursively() {
    let tmp = tempdir();
    let root = tmp.path();
    skill(root, "repo/atlas");
    skill(root, "repo/atlas/compass"); // nested inside a skill
    skill(root, "repo/.agents/skills/beacon"); // inside hidden folders
    skill(root, "repo/.hidden-tool"); // a hidden folder that is itself a skill
    skill(root, "repo/deep/a/b/c/d/e/f/cinder"); // far down
    skill(root, "repo/.git/hooks/gitskill"); // .git is skipped
    skill(root, "repo/node_modules/pkg/npmskill"); // node_modules is skipped
    skill(root, "repo/tools/node_modules/npmskill2"); // at any depth
    write(root, "repo/docs/README.md", "# docs\n");

    let (code, doc) = skillctl_json(root, &["repo"]);
    // `.hidden-tool` is named `.hidden-tool`, which is not a valid name, so that skill fails;
    // everything else is valid.
    assert_eq!(code, Some(1), "{doc}");
    assert_eq!(
        paths(&doc),
        [
            p("repo/.agents/skills/beacon"),
            p("repo/.hidden-tool"),
            p("repo/atlas"),
            p("repo/atlas/compass"),
            p("repo/deep/a/b/c/d/e/f/cinder"),
        ]
    );
    let names: Vec<&Value> = doc["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["name"])
        .collect();
    assert_eq!(
        names,
        ["beacon", ".hidden-tool", "atlas", "compass", "cinder"]
    );
    assert_eq!(rules(&doc["skills"][1]), ["name.format"]);
    assert_eq!(summary(&doc), [5, 4, 1, 1, 0]);

    // The root itself may be a skill, and is reported along with the skills inside it.
    let (code, doc) = skillctl_json(root, &["repo/atlas"]);
    assert_eq!(code, Some(0), "{doc}");
    assert_eq!(paths(&doc), [p("repo/atlas"), p("repo/atlas/compass")]);
}

#[test]
fn skipped_folders_are_entered_when_given_explicitly() {
    let tmp = tempdir();
    skill(tmp.path(), "node_modules/npmskill");
    let (code, doc) = skillctl_json(tmp.path(), &["node_modules"]);
    assert_eq!(code, Some(0), "{doc}");
    assert_eq!(paths(&doc), [p("node_modules/npmskill")]);
}

#[test]
fn a_skill_given_twice_is_counted_once() {
    let tmp = tempdir();
    skill(tmp.path(), "repo/atlas");
    let (code, doc) = skillctl_json(
        tmp.path(),
        &["repo/atlas", "repo", "repo/atlas/SKILL.md", "./repo/atlas/"],
    );
    assert_eq!(code, Some(0), "{doc}");
    assert_eq!(paths(&doc), [p("repo/atlas")]);
    assert_eq!(summary(&doc)[0], 1);
}

// ---------------------------------------------------------------------------------------------
// Symbolic links

#[cfg(unix)]
fn symlink(target: &str, link: &Path) {
    std::os::unix::fs::symlink(target, link).expect("create symlink");
}

#[cfg(unix)]
#[test]
fn symlink_loops_end_and_every_skill_is_counted_once() {
    let tmp = tempdir();
    let root = tmp.path();
    skill(root, "repo/atlas");
    skill(root, "repo/atlas/compass");
    symlink("..", &root.join("repo/atlas/up")); // back to the root
    symlink(".", &root.join("repo/self")); // to itself
    symlink("atlas", &root.join("repo/atlas-again")); // a duplicate inside the root
    symlink("../ring-b", &root.join("repo/ring-a")); // into a loop outside the root
    skill(root, "ring-b/beacon");
    skill(root, "ring-c/cinder");
    symlink("../ring-c", &root.join("ring-b/to-c"));
    symlink("../ring-b", &root.join("ring-c/to-b"));

    let (code, doc) = skillctl_json(root, &["repo"]);
    assert_eq!(code, Some(0), "{doc}");
    assert_eq!(
        paths(&doc),
        [
            p("repo/atlas"),
            p("repo/atlas/compass"),
            p("repo/ring-a/beacon"),
            p("repo/ring-a/to-c/cinder"),
        ]
    );
}

#[cfg(unix)]
#[test]
fn a_symlinked_skill_given_with_its_target_is_counted_once() {
    let tmp = tempdir();
    let root = tmp.path();
    skill(root, "store/atlas");
    std::fs::create_dir(root.join("installed")).unwrap();
    symlink("../store/atlas", &root.join("installed/atlas"));

    // The link and the folder it points to, as two PATHs, in both orders, and via the
    // recursive search of both parents.
    for (args, first) in [
        (["installed/atlas", "store/atlas"], "installed/atlas"),
        (["store/atlas", "installed/atlas"], "store/atlas"),
        (["installed", "store"], "installed/atlas"),
        (["store", "installed"], "store/atlas"),
    ] {
        let (code, doc) = skillctl_json(root, &args);
        assert_eq!(code, Some(0), "{args:?}: {doc}");
        assert_eq!(paths(&doc), [p(first)], "{args:?}");
        assert_eq!(summary(&doc), [1, 1, 0, 0, 0], "{args:?}");
    }
}

// Regression (fixed): when one skill is reached both through a symlink with another name and through its
// real folder, which copy is kept (and so the verdict and the exit status) depends on the order
// of the PATHs. Input: `store/atlas/` (a valid skill named `atlas`) and a link
// `installed/favourite -> ../store/atlas`. Observed: `skillctl validate store/atlas
// installed/favourite` exits 0 ("ok: 1 valid"), while `skillctl validate installed/favourite
// store/atlas` exits 1 with `name.matchesDirectory` ("`name` \"atlas\" does not match the
// directory name \"favourite\""): the duplicate is dropped by its canonical path in
// crates/cli/src/validate.rs, but `dir_name` in crates/index/src/check.rs compares `name` with
// the link's own name. Expected: the same report whatever the order of the PATHs (for example,
// the name checked against the folder the link resolves to, or the copy kept chosen
// independently of order).
#[cfg(unix)]
#[test]
fn the_verdict_on_a_symlinked_duplicate_does_not_depend_on_path_order() {
    let tmp = tempdir();
    let root = tmp.path();
    skill(root, "store/atlas");
    std::fs::create_dir(root.join("installed")).unwrap();
    symlink("../store/atlas", &root.join("installed/favourite"));
    let (code_a, doc_a) = skillctl_json(root, &["store/atlas", "installed/favourite"]);
    let (code_b, doc_b) = skillctl_json(root, &["installed/favourite", "store/atlas"]);
    assert_eq!(summary(&doc_a)[0], 1, "counted once: {doc_a}");
    assert_eq!(summary(&doc_b)[0], 1, "counted once: {doc_b}");
    assert_eq!(code_a, Some(0), "{doc_a}");
    assert_eq!(
        (code_b, summary(&doc_b)),
        (code_a, summary(&doc_a)),
        "the same skills in another order: {doc_b}"
    );
}

#[cfg(unix)]
#[test]
fn a_symlink_to_a_folder_of_skills_is_followed() {
    let tmp = tempdir();
    let root = tmp.path();
    skill(root, "shared/atlas");
    skill(root, "shared/beacon");
    std::fs::create_dir(root.join("repo")).unwrap();
    // The link to the whole folder sorts before the link to one skill in it, so the folder is
    // entered first and the second link is a duplicate.
    symlink("../shared", &root.join("repo/all"));
    symlink("../shared/beacon", &root.join("repo/beacon"));
    let (code, doc) = skillctl_json(root, &["repo"]);
    assert_eq!(code, Some(0), "{doc}");
    assert_eq!(paths(&doc), [p("repo/all/atlas"), p("repo/all/beacon")]);
}

// Regression (fixed): whether a skill behind a symlink is found depends on the links' names. Input:
// `repo/beacon -> ../shared/beacon` and `repo/zz-all -> ../shared`, where `shared/` holds the
// skills `atlas` and `beacon`; run `skillctl validate --format json repo`. Observed: only
// `repo/beacon` is reported; `shared/atlas` (reachable as `repo/zz-all/atlas`) is silently
// missed, because `follow_link` in crates/storage/src/discover.rs skips a link whose target
// *contains* a region already entered (`r.starts_with(&target)`), not only one inside it.
// Expected: both skills, each once (as the previous test gets when the links sort the other
// way round).
#[cfg(unix)]
#[test]
fn a_symlink_to_a_folder_holding_an_entered_link_target_is_still_searched() {
    let tmp = tempdir();
    let root = tmp.path();
    skill(root, "shared/atlas");
    skill(root, "shared/beacon");
    std::fs::create_dir(root.join("repo")).unwrap();
    symlink("../shared/beacon", &root.join("repo/beacon"));
    symlink("../shared", &root.join("repo/zz-all"));
    let (code, doc) = skillctl_json(root, &["repo"]);
    assert_eq!(code, Some(0), "{doc}");
    let names: BTreeSet<&str> = doc["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(
        names,
        set(&["atlas", "beacon"]),
        "every skill reachable through the links: {doc}"
    );
    assert_eq!(summary(&doc)[0], 2, "{doc}");
}

// ---------------------------------------------------------------------------------------------
// Exit status

#[test]
fn warnings_alone_keep_status_zero() {
    let tmp = tempdir();
    // No "use when" clause: a `description-quality` lint warning, not an error.
    write(
        tmp.path(),
        "ferry/SKILL.md",
        "---\nname: ferry\ndescription: Prints the ferry timetable.\n---\nCheck the harbour board.\n",
    );
    let run = skillctl(tmp.path(), &["validate", "--lint", "ferry"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout.starts_with("warning[description-quality]: "),
        "{}",
        run.stdout
    );
    assert_eq!(
        summary_line(&run.stdout),
        "ok: 1 valid, 0 invalid (0 errors, 1 warning)"
    );

    let (code, doc) = skillctl_json(tmp.path(), &["--lint", "ferry"]);
    assert_eq!(code, Some(0));
    let (s, d) = only_diagnostic(&doc);
    assert_eq!(s["valid"], true);
    assert_eq!(d["severity"], "warning");
    assert_eq!(summary(&doc), [1, 1, 0, 0, 1]);

    // Without --lint there is no warning at all.
    let run = skillctl(tmp.path(), &["validate", "ferry"]);
    assert_eq!(run.code, Some(0));
    assert_eq!(
        run.stdout,
        "ok: 1 valid, 0 invalid (0 errors, 0 warnings)\n"
    );
}

#[test]
fn one_invalid_skill_makes_status_one() {
    let tmp = tempdir();
    skill(tmp.path(), "atlas");
    write(
        tmp.path(),
        "beacon/SKILL.md",
        "---\nname: beacon\n---\nNo description.\n",
    );
    let run = skillctl(tmp.path(), &["validate", "atlas", "beacon"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(run.stdout.starts_with("error[description.required]: "));
    assert_eq!(
        summary_line(&run.stdout),
        "failed: 1 valid, 1 invalid (1 error, 0 warnings)"
    );
}

#[test]
fn usage_errors_exit_two_with_nothing_on_stdout() {
    let tmp = tempdir();
    skill(tmp.path(), "atlas");
    for args in [
        &["validate"][..],
        &["validate", "--format", "xml", "atlas"],
        &["validate", "--format"],
        &["validate", "--no-such-flag", "atlas"],
        &["no-such-command"],
        &[],
    ] {
        let run = skillctl(tmp.path(), args);
        assert_eq!(run.code, Some(2), "{args:?}: {run:?}");
        assert_eq!(run.stdout, "", "{args:?}");
        assert!(!run.stderr.is_empty(), "{args:?}");
    }
    // No subcommand at all prints the help, to stderr.
    let run = skillctl(tmp.path(), &[]);
    assert!(run.stderr.contains("Usage:"), "{}", run.stderr);
    let run = skillctl(tmp.path(), &["validate", "--no-such-flag", "atlas"]);
    assert!(run.stderr.contains("--no-such-flag"), "{}", run.stderr);
    let run = skillctl(tmp.path(), &["validate"]);
    assert!(run.stderr.contains("<PATHS>"), "{}", run.stderr);
    let run = skillctl(tmp.path(), &["validate", "--format", "xml", "atlas"]);
    assert!(run.stderr.contains("xml"), "{}", run.stderr);

    // Help is not an error.
    let run = skillctl(tmp.path(), &["validate", "--help"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stdout.contains("--format"));
}

// ---------------------------------------------------------------------------------------------
// Output formats

#[test]
fn json_output_has_the_documented_shape() {
    let tmp = tempdir();
    skill(tmp.path(), "atlas");
    write(
        tmp.path(),
        "Bad_Skill/SKILL.md",
        "---\nname: Bad_Skill\ndescription: Renames photos by date.\nmetadata:\n  version: 2\n---\n",
    );
    let (code, doc) = skillctl_json(tmp.path(), &["--lint", "atlas", "Bad_Skill", "gone"]);
    assert_eq!(code, Some(2), "a missing PATH wins: {doc}");
    let skills = doc["skills"].as_array().unwrap();
    assert_eq!(paths(&doc), [p("atlas"), p("Bad_Skill"), p("gone")]);

    assert_eq!(skills[0]["name"], "atlas");
    assert_eq!(skills[0]["valid"], true);
    assert_eq!(skills[0]["diagnostics"], serde_json::json!([]));

    let bad = &skills[1];
    assert_eq!(bad["name"], "Bad_Skill");
    assert_eq!(bad["valid"], false);
    assert_eq!(
        rules(bad),
        ["name.format", "metadata.valueType", "description-quality"]
    );
    let d = &bad["diagnostics"];
    assert_eq!((&d[0]["line"], &d[0]["column"]), (&2.into(), &7.into()));
    assert_eq!((&d[1]["line"], &d[1]["column"]), (&5.into(), &12.into()));
    assert_eq!(d[2]["severity"], "warning");
    assert_eq!(
        (&d[2]["line"], &d[2]["column"]),
        (&Value::Null, &Value::Null)
    );

    assert_eq!(skills[2]["name"], Value::Null);
    assert_eq!(skills[2]["valid"], false);
    assert_eq!(rules(&skills[2]), ["file.missing"]);

    // The missing path is counted as missing, not invalid.
    assert_eq!(summary(&doc), [3, 1, 1, 3, 1]);
    assert_eq!(doc["summary"]["missing"], 1);
}

#[test]
fn human_output_points_at_the_offending_line_and_column() {
    let tmp = tempdir();
    write(
        tmp.path(),
        "Bad_Skill/SKILL.md",
        "---\nname: Bad_Skill\ndescription: Renames photos by date. Use when asked to sort photos.\n---\n",
    );
    let run = skillctl(tmp.path(), &["validate", "Bad_Skill"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let out = &run.stdout;
    assert!(
        out.starts_with("error[name.format]: `name` \"Bad_Skill\""),
        "{out}"
    );
    assert_block(
        out,
        "error[name.format]: ",
        &p("Bad_Skill/SKILL.md"),
        2,
        7,
        "name: Bad_Skill",
    );
    assert_eq!(
        summary_line(out),
        "failed: 0 valid, 1 invalid (1 error, 0 warnings)"
    );
    assert_eq!(run.stderr, "");
}

#[test]
fn human_marker_counts_characters_and_widens_the_gutter() {
    let tmp = tempdir();
    // A multi-byte key before the value, and the offending value on line 12.
    write(
        tmp.path(),
        "gazette/SKILL.md",
        "---\nname: gazette\ndescription: Summarises the gazette. Use when asked for the news.\nmetadata:\n  ключ: 1.5\n  a: \"x\"\n  b: \"x\"\n  c: \"x\"\n  d: \"x\"\n  e: \"x\"\n  f: \"x\"\n  late: 7\n---\n",
    );
    let run = skillctl(tmp.path(), &["validate", "gazette"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let file = p("gazette/SKILL.md");
    assert_block(
        &run.stdout,
        "error[metadata.valueType]: `metadata.ключ`",
        &file,
        5,
        9,
        "  ключ: 1.5",
    );
    assert_block(
        &run.stdout,
        "error[metadata.valueType]: `metadata.late`",
        &file,
        12,
        9,
        "  late: 7",
    );
    assert_eq!(
        summary_line(&run.stdout),
        "failed: 0 valid, 1 invalid (2 errors, 0 warnings)"
    );
}

#[test]
fn human_output_for_a_diagnostic_without_a_place() {
    let tmp = tempdir();
    write(
        tmp.path(),
        "ferry/SKILL.md",
        "---\nname: ferry\ndescription: Prints the ferry timetable.\n---\n",
    );
    let run = skillctl(tmp.path(), &["validate", "--lint", "ferry"]);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert!(lines[0].starts_with("warning[description-quality]: "));
    assert_eq!(
        lines[1].trim_start(),
        format!("--> {}", p("ferry/SKILL.md"))
    );
    assert_eq!(lines[2], "");
    assert_eq!(lines[3], "ok: 1 valid, 0 invalid (0 errors, 1 warning)");
    assert_eq!(lines.len(), 4, "{}", run.stdout);
}

#[test]
fn human_summary_counts_across_skills_and_pluralises() {
    let tmp = tempdir();
    skill(tmp.path(), "atlas");
    skill(tmp.path(), "beacon");
    let run = skillctl(tmp.path(), &["validate", "."]);
    assert_eq!(run.code, Some(0));
    assert_eq!(
        run.stdout,
        "ok: 2 valid, 0 invalid (0 errors, 0 warnings)\n"
    );
    write(tmp.path(), "cinder/SKILL.md", "no frontmatter here\n");
    let run = skillctl(tmp.path(), &["validate", "."]);
    assert_eq!(run.code, Some(1));
    assert!(run.stdout.starts_with("error[frontmatter.missing]: "));
    assert_eq!(
        summary_line(&run.stdout),
        "failed: 2 valid, 1 invalid (1 error, 0 warnings)"
    );
}

// ---------------------------------------------------------------------------------------------
// Files that must not be opened or read whole

/// Checks that `path` (relative to `cwd`) gives one skill with one `rule` error, status 1.
fn assert_single_error(cwd: &Path, path: &str, rule: &str) -> Value {
    let (code, doc) = skillctl_json(cwd, &[path]);
    assert_eq!(code, Some(1), "{path}: {doc}");
    let (s, d) = only_diagnostic(&doc);
    assert_eq!(s["valid"], false, "{path}");
    assert_eq!(d["rule"], rule, "{path}: {doc}");
    assert_eq!(d["severity"], "error");
    d.clone()
}

#[cfg(unix)]
#[test]
fn a_fifo_named_skill_md_is_refused_without_hanging() {
    let tmp = tempdir();
    std::fs::create_dir(tmp.path().join("pipe")).unwrap();
    let status = Command::new("mkfifo")
        .arg(tmp.path().join("pipe/SKILL.md"))
        .status()
        .expect("run mkfifo");
    assert!(status.success(), "mkfifo failed");
    for path in ["pipe", "pipe/SKILL.md", "."] {
        let d = assert_single_error(tmp.path(), path, "file.notRegular");
        assert!(d["message"].as_str().unwrap().contains("FIFO"), "{d}");
    }
    let run = skillctl(tmp.path(), &["validate", "pipe"]);
    assert_eq!(run.code, Some(1));
    assert!(run.stdout.starts_with("error[file.notRegular]: "));
}

#[cfg(unix)]
#[test]
fn a_skill_md_linked_to_dev_zero_is_refused_without_hanging() {
    let tmp = tempdir();
    std::fs::create_dir(tmp.path().join("zero")).unwrap();
    symlink("/dev/zero", &tmp.path().join("zero/SKILL.md"));
    for path in ["zero", "zero/SKILL.md", "."] {
        let d = assert_single_error(tmp.path(), path, "file.notRegular");
        assert!(d["message"].as_str().unwrap().contains("device"), "{d}");
    }
}

#[cfg(unix)]
#[test]
fn a_skill_md_link_to_itself_is_unreadable_not_a_hang() {
    let tmp = tempdir();
    std::fs::create_dir(tmp.path().join("knot")).unwrap();
    symlink("SKILL.md", &tmp.path().join("knot/SKILL.md"));
    assert_single_error(tmp.path(), "knot", "file.unreadable");
}

#[test]
fn a_directory_named_skill_md_is_refused() {
    let tmp = tempdir();
    std::fs::create_dir_all(tmp.path().join("odd/SKILL.md")).unwrap();
    for path in ["odd", "."] {
        let d = assert_single_error(tmp.path(), path, "file.notRegular");
        assert!(d["message"].as_str().unwrap().contains("directory"), "{d}");
    }
    // Given directly it is a folder to search, and holds no skill.
    let (code, doc) = skillctl_json(tmp.path(), &["odd/SKILL.md"]);
    assert_eq!(code, Some(1), "{doc}");
    let (s, _) = only_diagnostic(&doc);
    assert_eq!(s["valid"], false);
}

#[test]
fn a_file_over_one_mebibyte_is_too_large() {
    let tmp = tempdir();
    let head =
        "---\nname: tome\ndescription: Reads a long tome. Use when asked about the tome.\n---\n";
    let mut text = head.as_bytes().to_vec();
    text.resize(2 * LIMIT, b'z');
    write(tmp.path(), "tome/SKILL.md", &text);
    let d = assert_single_error(tmp.path(), "tome", "file.tooLarge");
    assert!(
        d["message"].as_str().unwrap().contains(&LIMIT.to_string()),
        "{d}"
    );
    let run = skillctl(tmp.path(), &["validate", "tome"]);
    assert!(run.stdout.starts_with("error[file.tooLarge]: "));
    // The file is not echoed anywhere.
    assert!(
        run.stdout.len() < 1000,
        "{} bytes of output",
        run.stdout.len()
    );

    // Exactly at the limit is fine.
    text.truncate(LIMIT - 1);
    text.push(b'\n');
    write(tmp.path(), "tome/SKILL.md", &text);
    let (code, doc) = skillctl_json(tmp.path(), &["tome"]);
    assert_eq!(code, Some(0), "{}", doc["skills"][0]["diagnostics"]);
}

// Regression (fixed): the `file.tooLarge` message misstates the file's size. Input: a 2 MiB (2097152-byte)
// SKILL.md; run `skillctl validate DIR`. Observed: "cannot read DIR/SKILL.md: the file is
// 1048577 bytes, over the limit of 1048576 bytes" (`read_bounded` in
// crates/storage/src/read.rs reports the length of the bounded read, limit + 1, as the size,
// discarding the fstat size `read_prefix` returns). Expected: the real size, 2097152 bytes
// (or wording that does not claim an exact size, such as "over the limit").
#[test]
fn the_too_large_message_gives_the_real_size() {
    let tmp = tempdir();
    write(tmp.path(), "tome/SKILL.md", vec![b'z'; 2 * LIMIT]);
    let d = assert_single_error(tmp.path(), "tome", "file.tooLarge");
    let message = d["message"].as_str().unwrap();
    assert!(
        !message.contains(&(LIMIT + 1).to_string()),
        "a 2 MiB file is not {} bytes: {message}",
        LIMIT + 1
    );
}

#[test]
fn invalid_utf8_is_reported_with_its_byte_offset() {
    let tmp = tempdir();
    // "---\n" (4) + "name: quay\n" (11) + "description: Quai de l" (22) = byte 37 is bad.
    let mut text = b"---\nname: quay\ndescription: Quai de l".to_vec();
    assert_eq!(text.len(), 37);
    text.extend_from_slice(b"\xE9gende. Use when asked.\n---\n");
    write(tmp.path(), "quay/SKILL.md", &text);
    let d = assert_single_error(tmp.path(), "quay", "file.encoding");
    assert!(d["message"].as_str().unwrap().contains("offset 37"), "{d}");
    assert_eq!((&d["line"], &d["column"]), (&3.into(), &23.into()));

    let run = skillctl(tmp.path(), &["validate", "quay"]);
    assert_eq!(run.code, Some(1));
    assert_block(
        &run.stdout,
        "error[file.encoding]: ",
        &p("quay/SKILL.md"),
        3,
        23,
        "description: Quai de l\u{FFFD}gende. Use when asked.",
    );

    // With a byte-order mark the offset still counts from the start of the file.
    let mut with_bom = b"\xEF\xBB\xBF".to_vec();
    with_bom.extend_from_slice(&text);
    write(tmp.path(), "quay/SKILL.md", &with_bom);
    let d = assert_single_error(tmp.path(), "quay", "file.encoding");
    assert!(d["message"].as_str().unwrap().contains("offset 40"), "{d}");
    assert_eq!((&d["line"], &d["column"]), (&3.into(), &23.into()));
}

/// Regression: a carriage return alone in a frontmatter is a line break to YAML, whose
/// places count it, but the rendered source line was found by `\n` alone: the line shown
/// under a later finding was the one before it.
#[test]
fn a_lone_carriage_return_shifts_no_line_shown() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cr");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        b"---\nname: cr\ndescription: Fine. Use when ok.\rmetadata: 5\n---\nbody\n",
    )
    .unwrap();
    let run = common::run(common::skillctl().arg("validate").arg(&dir));
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(run.stdout.contains("SKILL.md:4:11"), "{}", run.stdout);
    assert!(run.stdout.contains("4 | metadata: 5"), "{}", run.stdout);
}
