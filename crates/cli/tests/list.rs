//! End-to-end tests of `skillctl list` and `skillctl show`: the real binary, run in a
//! hermetic environment (HOME, AGENT_SKILLS_HOME and the three AGENT_SKILLS_*_DIR variables
//! point into a temporary folder, and the working directory is a temporary folder holding
//! `.git`, so it is its own project root) against skills written into temporary roots.
//!
//! Covered: the exact shape of `list --format json` (every key and its type, for skills,
//! shadowed skills and diagnostics); the human listing (aligned qualified names, `--shadowed`,
//! the summary line, descriptions cut at 100 characters); precedence between layers
//! (`shadowed_by`); diagnostics with their places for broken skills; `--tag`; `--strict`
//! dropping an invalid but readable skill; `--depth` (2 and 3 find nested skills, 0 and 9
//! are refused); `--root plugin:ID=DIR` (qualified names `ID:name`, `plugin` set); relative
//! roots; malformed `--root` values (exit 2 and a message); the default roots from the
//! environment, `--app` and `--preset` (home and project folders) and the built-in plugin (present without
//! `--no-defaults`, absent with it); `show` in both formats (record, body, files under
//! `scripts/`, `references/` and `assets/` only, and a `sha256:` digest of the whole
//! `SKILL.md`, checked against a SHA-256 computed here); `show` of a shadowed skill by its
//! qualified name; and `show` of an unknown name (exit 1, a "did you mean" on stderr).
//!
//! Every run has a deadline: the child is awaited on a thread and killed (failing the test)
//! if it has not exited in time. Tests named `regression_*` failed before the fix they
//! describe (in `crates/cli/src/roots.rs`).

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::Run;
use serde_json::Value;

/// The built-in skill and where it says it lives.
const BUILTIN: &str = "builtin:skill-creator";
const BUILTIN_PATH: &str = "embedded:builtin/skill-creator/SKILL.md";

/// A hermetic world: a home, a working directory, and the folders the AGENT_SKILLS_*
/// variables name, all inside one temporary folder.
struct World {
    tmp: tempfile::TempDir,
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
            "env/enterprise",
            "env/personal",
            "env/project",
        ] {
            std::fs::create_dir_all(tmp.path().join(dir)).expect("create folder");
        }
        World { tmp }
    }

    /// A path inside the world.
    fn path(&self, rel: &str) -> PathBuf {
        self.tmp.path().join(rel)
    }

    fn home(&self) -> PathBuf {
        self.path("home")
    }

    fn cwd(&self) -> PathBuf {
        self.path("cwd")
    }

    /// `LAYER=<world>/REL`, for `--root`.
    fn root(&self, layer: &str, rel: &str) -> String {
        format!("{layer}={}", self.path(rel).display())
    }

    /// Runs `skillctl ARGS` in the world, with the harness's deadline.
    fn run<S: AsRef<str>>(&self, args: &[S]) -> Run {
        common::run(
            common::skillctl()
                .args(args.iter().map(AsRef::as_ref))
                .current_dir(self.cwd())
                .env("HOME", self.home())
                .env("AGENT_SKILLS_HOME", self.home())
                .env("AGENT_SKILLS_ENTERPRISE_DIR", self.path("env/enterprise"))
                .env("AGENT_SKILLS_PERSONAL_DIR", self.path("env/personal"))
                .env("AGENT_SKILLS_PROJECT_DIR", self.path("env/project")),
        )
    }

    /// Writes `text` to `<world>/rel`, creating the folders on the way; returns the path.
    fn write(&self, rel: &str, text: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().expect("has a parent")).expect("create folders");
        std::fs::write(&path, text).expect("write file");
        path
    }

    /// A skill in `<world>/DIR/SKILL.md`, named `name`, with extra frontmatter lines and a
    /// body; returns the path of its `SKILL.md`.
    fn skill(&self, dir: &str, name: &str, extra: &str, body: &str) -> PathBuf {
        self.write(
            &format!("{dir}/SKILL.md"),
            format!(
                "---\nname: {name}\ndescription: {}\n{extra}---\n{body}",
                desc(name)
            ),
        )
    }
}

/// The description every test skill gets.
fn desc(name: &str) -> String {
    format!("Does the {name} chores. Use when {name} is mentioned.")
}

/// A path as JSON shows it.
fn js(path: &Path) -> Value {
    Value::String(path.to_str().expect("UTF-8 path").to_owned())
}

// ---------------------------------------------------------------------------------------------
// JSON shape

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

fn array(v: &Value) -> &Vec<Value> {
    v.as_array().unwrap_or_else(|| panic!("not an array: {v}"))
}

const LAYERS: [&str; 4] = ["enterprise", "personal", "project", "plugin"];

/// `layer`, `plugin`, `name` and `qualified_name` of a skill agree with each other, and `path`
/// is an absolute `SKILL.md` (or the built-in's embedded path).
fn assert_identity(s: &Value) {
    let name = s["name"].as_str().expect("name is a string");
    let layer = s["layer"].as_str().expect("layer is a string");
    assert!(LAYERS.contains(&layer), "layer: {s}");
    let qualified = s["qualified_name"]
        .as_str()
        .expect("qualified_name is a string");
    match &s["plugin"] {
        Value::Null => {
            assert_ne!(layer, "plugin", "a plugin skill has a plugin id: {s}");
            assert_eq!(qualified, format!("{layer}:{name}"), "{s}");
        }
        Value::String(id) => {
            assert_eq!(layer, "plugin", "only plugin skills have an id: {s}");
            assert_eq!(qualified, format!("{id}:{name}"), "{s}");
        }
        other => panic!("plugin is a string or null, not {other}: {s}"),
    }
    let path = s["path"].as_str().expect("path is a string");
    assert!(path.ends_with("SKILL.md"), "path names SKILL.md: {s}");
    assert!(
        Path::new(path).is_absolute() || path == BUILTIN_PATH,
        "path is absolute: {s}"
    );
}

/// The document is exactly `{"generation","skills","shadowed","diagnostics"}` and every entry
/// has exactly the documented keys with the documented types.
fn assert_list_shape(doc: &Value) {
    assert_eq!(
        keys(doc),
        set(&["generation", "skills", "shadowed", "diagnostics"]),
        "top level: {doc}"
    );
    let generation = doc["generation"]
        .as_u64()
        .expect("generation is an integer");
    assert!(generation >= 1, "the first snapshot is generation 1: {doc}");
    let skills = array(&doc["skills"]);
    for s in skills {
        assert_eq!(
            keys(s),
            set(&[
                "name",
                "qualified_name",
                "description",
                "layer",
                "plugin",
                "path",
                "priority",
                "tags"
            ]),
            "skill: {s}"
        );
        assert_identity(s);
        assert!(s["description"].is_string(), "description: {s}");
        assert!(s["priority"].is_i64(), "priority is an integer: {s}");
        assert!(
            array(&s["tags"]).iter().all(Value::is_string),
            "tags are strings: {s}"
        );
    }
    let names: Vec<&str> = skills.iter().map(|s| s["name"].as_str().unwrap()).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(names, sorted, "skills are sorted by name, one per name");
    for s in array(&doc["shadowed"]) {
        assert_eq!(
            keys(s),
            set(&[
                "name",
                "qualified_name",
                "layer",
                "plugin",
                "path",
                "shadowed_by",
                "shadowed_by_path"
            ]),
            "shadowed: {s}"
        );
        assert_identity(s);
        let by = s["shadowed_by"].as_str().expect("shadowed_by is a string");
        assert!(
            skills
                .iter()
                .any(|w| w["qualified_name"] == by && w["name"] == s["name"]),
            "shadowed_by names the listed skill that wins the name: {s}"
        );
    }
    for d in array(&doc["diagnostics"]) {
        assert_eq!(
            keys(d),
            set(&["path", "rule", "severity", "message", "line", "column"]),
            "diagnostic: {d}"
        );
        assert!(d["path"].as_str().is_some_and(|p| !p.is_empty()), "{d}");
        assert!(d["rule"].as_str().is_some_and(|r| !r.is_empty()), "{d}");
        assert!(d["message"].as_str().is_some_and(|m| !m.is_empty()), "{d}");
        assert!(
            matches!(d["severity"].as_str(), Some("error" | "warning" | "info")),
            "severity: {d}"
        );
        match (&d["line"], &d["column"]) {
            (Value::Null, Value::Null) => {}
            (l, c) => assert!(
                l.as_u64().is_some_and(|l| l >= 1) && c.as_u64().is_some_and(|c| c >= 1),
                "a place is two 1-based integers: {d}"
            ),
        }
    }
}

/// `skillctl list --format json ARGS`, shape-checked.
fn list_json(w: &World, args: &[String]) -> Value {
    let mut all = vec!["list".to_owned(), "--format".into(), "json".into()];
    all.extend_from_slice(args);
    let doc = w.run(&all).json();
    assert_list_shape(&doc);
    doc
}

/// The qualified names of the listed skills, in order.
fn qualified(doc: &Value) -> Vec<String> {
    array(&doc["skills"])
        .iter()
        .map(|s| s["qualified_name"].as_str().unwrap().to_owned())
        .collect()
}

fn skill<'a>(doc: &'a Value, qualified_name: &str) -> &'a Value {
    array(&doc["skills"])
        .iter()
        .find(|s| s["qualified_name"] == qualified_name)
        .unwrap_or_else(|| panic!("{qualified_name} is not listed: {doc}"))
}

fn args(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

/// A world with three roots: personal (`deploy`, tagged), project (`deploy` again, shadowed;
/// `build`, tagged; `Bad_Name`, invalid but readable; `broken`, unreadable YAML) and the
/// plugin `acme` (`x`). Returns the world and the `--no-defaults --root ...` arguments.
fn layered() -> (World, Vec<String>) {
    let w = World::new();
    w.skill(
        "per/deploy",
        "deploy",
        "tags: [ops, ci]\npriority: 3\n",
        "Personal steps.\n",
    );
    w.skill("proj/deploy", "deploy", "", "Project steps.\n");
    w.skill("proj/build", "build", "tags: [ci]\n", "Build it.\n");
    w.skill("proj/Bad_Name", "Bad_Name", "", "Readable.\n");
    w.write(
        "proj/broken/SKILL.md",
        "---\nname: broken\ndescription: [unclosed\n---\nBody\n",
    );
    w.skill("plug/x", "x", "", "X marks the spot.\n");
    let roots = vec![
        "--no-defaults".to_owned(),
        "--root".into(),
        w.root("personal", "per"),
        "--root".into(),
        w.root("project", "proj"),
        "--root".into(),
        w.root("plugin:acme", "plug"),
    ];
    (w, roots)
}

// ---------------------------------------------------------------------------------------------
// list --format json

#[test]
fn json_lists_every_key_with_its_type_shadowed_skills_and_diagnostics() {
    let (w, roots) = layered();
    let doc = list_json(&w, &roots);
    assert_eq!(doc["generation"], 1, "{doc}");
    assert_eq!(
        qualified(&doc),
        [
            "project:Bad_Name",
            "project:build",
            "personal:deploy",
            "acme:x"
        ],
        "{doc}"
    );

    let deploy = skill(&doc, "personal:deploy");
    assert_eq!(deploy["name"], "deploy");
    assert_eq!(deploy["description"], desc("deploy"));
    assert_eq!(deploy["layer"], "personal");
    assert_eq!(deploy["plugin"], Value::Null);
    assert_eq!(deploy["path"], js(&w.path("per/deploy/SKILL.md")));
    assert_eq!(deploy["priority"], 3);
    assert_eq!(deploy["tags"], serde_json::json!(["ops", "ci"]));
    let build = skill(&doc, "project:build");
    assert_eq!(build["priority"], 0);
    assert_eq!(build["tags"], serde_json::json!(["ci"]));

    // The project's deploy lost its name to the personal one.
    assert_eq!(
        doc["shadowed"],
        serde_json::json!([{
            "name": "deploy",
            "qualified_name": "project:deploy",
            "layer": "project",
            "plugin": null,
            "path": js(&w.path("proj/deploy/SKILL.md")),
            "shadowed_by": "personal:deploy",
            "shadowed_by_path": js(&w.path("per/deploy/SKILL.md")),
        }])
    );

    // Diagnostics name the file and the place.
    let diags = array(&doc["diagnostics"]);
    let bad = diags
        .iter()
        .find(|d| d["rule"] == "name.format")
        .unwrap_or_else(|| panic!("a name.format diagnostic: {doc}"));
    assert_eq!(bad["path"], js(&w.path("proj/Bad_Name/SKILL.md")));
    assert_eq!(bad["severity"], "error");
    assert_eq!((&bad["line"], &bad["column"]), (&2.into(), &7.into()));
    let yaml = diags
        .iter()
        .find(|d| d["rule"] == "frontmatter.yamlSyntax")
        .unwrap_or_else(|| panic!("a frontmatter.yamlSyntax diagnostic: {doc}"));
    assert_eq!(yaml["path"], js(&w.path("proj/broken/SKILL.md")));
    assert_eq!(yaml["severity"], "error");
    assert!(
        yaml["line"].as_u64().is_some_and(|l| (2..=4).contains(&l)),
        "{yaml}"
    );
    assert!(yaml["column"].as_u64().is_some_and(|c| c >= 1), "{yaml}");
    // The unreadable skill is not listed; nothing else is in error.
    assert!(!qualified(&doc).iter().any(|q| q.ends_with(":broken")));
    let errors: BTreeSet<&str> = diags
        .iter()
        .filter(|d| d["severity"] == "error")
        .map(|d| d["path"].as_str().unwrap())
        .collect();
    assert_eq!(errors.len(), 2, "{doc}");
}

#[test]
fn json_of_an_empty_world_is_empty() {
    let w = World::new();
    let doc = list_json(&w, &args(&["--no-defaults"]));
    assert_eq!(
        doc,
        serde_json::json!({"generation": 1, "skills": [], "shadowed": [], "diagnostics": []})
    );
}

#[test]
fn plugin_roots_give_qualified_names_under_the_plugin_id() {
    let w = World::new();
    w.skill("plug/x", "x", "", "X.\n");
    let doc = list_json(
        &w,
        &[
            "--no-defaults".into(),
            "--root".into(),
            w.root("plugin:acme", "plug"),
        ],
    );
    let x = skill(&doc, "acme:x");
    assert_eq!(x["plugin"], "acme");
    assert_eq!(x["layer"], "plugin");
    assert_eq!(x["path"], js(&w.path("plug/x/SKILL.md")));
    // And `show` finds it by that name.
    let shown = w
        .run(&[
            "show",
            "acme:x",
            "--format",
            "json",
            "--no-defaults",
            "--root",
            &w.root("plugin:acme", "plug"),
        ])
        .json();
    assert_eq!(shown["qualified_name"], "acme:x");
    assert_eq!(shown["body"], "X.\n");
}

#[test]
fn a_relative_root_is_read_from_the_working_directory_and_reported_absolute() {
    let w = World::new();
    w.skill("cwd/skills/rel", "rel", "", "Relative.\n");
    let doc = list_json(&w, &args(&["--no-defaults", "--root", "project=skills"]));
    assert_eq!(qualified(&doc), ["project:rel"]);
    assert_eq!(
        skill(&doc, "project:rel")["path"],
        js(&w.path("cwd/skills/rel/SKILL.md"))
    );
}

// ---------------------------------------------------------------------------------------------
// list, human

#[test]
fn human_lists_aligned_names_and_a_summary_and_shadowed_only_on_request() {
    let (w, roots) = layered();
    let mut all = vec!["list".to_owned()];
    all.extend_from_slice(&roots);
    let d = |name: &str| desc(name);
    let listing = format!(
        "project:Bad_Name  {}\nproject:build     {}\npersonal:deploy   {}\nacme:x            {}\n",
        d("Bad_Name"),
        d("build"),
        d("deploy"),
        d("x"),
    );
    let summary =
        "4 skills (1 shadowed, 2 errors in skill files; `skillctl validate` shows them)\n";
    assert_eq!(w.run(&all).ok(), format!("{listing}{summary}"));

    all.push("--shadowed".into());
    assert_eq!(
        w.run(&all).ok(),
        format!("{listing}project:deploy    (shadowed by personal:deploy)\n{summary}")
    );
}

#[test]
fn human_shortens_descriptions_at_a_word_boundary_with_an_ellipsis() {
    let w = World::new();
    let long = "Long ".repeat(40) + "Use when testing.";
    w.write(
        "per/long/SKILL.md",
        format!("---\nname: long\ndescription: {long}\n---\nBody\n"),
    );
    let out = w.run(&[
        "list",
        "--no-defaults",
        "--root",
        &w.root("personal", "per"),
    ]);
    let first = out.ok().lines().next().expect("a line").to_owned();
    // 100 characters at most, cut after a whole word, with `…` (was: cut mid-word at 100).
    let cut = format!("{}…", "Long ".repeat(19).trim_end());
    assert_eq!(first, format!("personal:long  {cut}"));
    assert!(cut.chars().count() <= 100);
}

// ---------------------------------------------------------------------------------------------
// Filters and discovery options

#[test]
fn tag_keeps_only_skills_with_that_tag_in_both_formats() {
    let (w, roots) = layered();
    let with = |tag: &str| {
        let mut a = roots.clone();
        a.extend(["--tag".to_owned(), tag.to_owned()]);
        a
    };
    let ci = list_json(&w, &with("ci"));
    assert_eq!(qualified(&ci), ["project:build", "personal:deploy"]);
    // The shadowed project deploy has no tags: filtered out too.
    assert_eq!(ci["shadowed"], serde_json::json!([]));
    let ops = list_json(&w, &with("ops"));
    assert_eq!(qualified(&ops), ["personal:deploy"]);
    let none = list_json(&w, &with("no-such-tag"));
    assert_eq!(none["skills"], serde_json::json!([]));

    let mut human = vec!["list".to_owned()];
    human.extend(with("ops"));
    let out = w.run(&human);
    let lines: Vec<&str> = out.ok().lines().collect();
    assert_eq!(lines.len(), 2, "one skill and the summary: {lines:?}");
    assert!(lines[0].starts_with("personal:deploy  "), "{lines:?}");
}

#[test]
fn strict_drops_an_invalid_but_readable_skill_and_keeps_its_diagnostics() {
    let (w, mut roots) = layered();
    let lenient = list_json(&w, &roots);
    assert!(qualified(&lenient).contains(&"project:Bad_Name".to_owned()));
    roots.push("--strict".into());
    let strict = list_json(&w, &roots);
    // Warnings (the `tags` and `priority` extension fields) do not make a skill invalid.
    assert_eq!(
        qualified(&strict),
        ["project:build", "personal:deploy", "acme:x"]
    );
    assert!(
        array(&strict["diagnostics"])
            .iter()
            .any(|d| d["rule"] == "name.format"
                && d["path"] == js(&w.path("proj/Bad_Name/SKILL.md"))),
        "{strict}"
    );
}

#[test]
fn depth_finds_nested_skills_only_as_deep_as_asked() {
    let w = World::new();
    w.skill("root/top", "top", "", "Top.\n");
    w.skill("root/group/nested", "nested", "", "Nested.\n");
    w.skill("root/a/b/deep", "deep", "", "Deep.\n");
    let at = |depth: &str| {
        list_json(
            &w,
            &[
                "--no-defaults".into(),
                "--root".into(),
                w.root("project", "root"),
                "--depth".into(),
                depth.into(),
            ],
        )
    };
    assert_eq!(qualified(&at("1")), ["project:top"]);
    let two = at("2");
    assert_eq!(qualified(&two), ["project:nested", "project:top"]);
    assert_eq!(
        skill(&two, "project:nested")["path"],
        js(&w.path("root/group/nested/SKILL.md"))
    );
    assert_eq!(
        qualified(&at("3")),
        ["project:deep", "project:nested", "project:top"]
    );
    assert_eq!(qualified(&at("6")).len(), 3);
}

#[test]
fn depth_outside_1_to_6_is_an_error() {
    let w = World::new();
    for depth in ["9", "0", "7"] {
        w.run(&["list", "--no-defaults", "--depth", depth])
            .fails(2, "--depth must be between 1 and 6");
    }
    // Not a number at all: a usage error.
    w.run(&["list", "--no-defaults", "--depth", "deep"])
        .fails(2, "--depth");
}

#[test]
fn malformed_root_values_exit_2_with_a_message() {
    let w = World::new();
    let dir = w.path("anywhere").display().to_string();
    for (spec, needle) in [
        ("nope".to_owned(), "expected LAYER=DIR"),
        (format!("galaxy={dir}"), "unknown layer \"galaxy\""),
        (format!("={dir}"), "--root"),
    ] {
        let run = w.run(&["list", "--no-defaults", "--root", &spec]);
        run.fails(2, needle);
        assert!(
            run.stderr.starts_with("skillctl: --root"),
            "the message names the option: {run:#?}"
        );
    }
    // `--root` without a value is a usage error.
    w.run(&["list", "--root"]).fails(2, "--root");
}

// ---------------------------------------------------------------------------------------------
// Default roots

#[test]
fn the_builtin_plugin_is_listed_without_no_defaults_and_absent_with_it() {
    let w = World::new();
    let doc = list_json(&w, &[]);
    assert_eq!(qualified(&doc), [BUILTIN]);
    let b = skill(&doc, BUILTIN);
    assert_eq!(b["name"], "skill-creator");
    assert_eq!(b["layer"], "plugin");
    assert_eq!(b["plugin"], "builtin");
    assert_eq!(b["path"], BUILTIN_PATH);
    assert!(
        b["description"].as_str().unwrap().contains("Use when"),
        "{b}"
    );
    assert_eq!(doc["diagnostics"], serde_json::json!([]));

    let human = w.run(&["list"]);
    let description = b["description"].as_str().unwrap();
    let text = human.ok();
    let first = text.lines().next().unwrap();
    let shown = first.strip_prefix(&format!("{BUILTIN}  ")).unwrap();
    // A shortened description is a prefix of the real one, cut at a word, ending in `…`.
    let kept = shown.strip_suffix('…').unwrap_or(shown);
    assert!(
        description
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .starts_with(kept),
        "{shown}"
    );
    assert!(shown.chars().count() <= 100);
    // Singular when there is one.
    assert!(text.ends_with(
        "\n1 skill (0 shadowed, 0 errors in skill files; `skillctl validate` shows them)\n"
    ));

    let none = list_json(&w, &args(&["--no-defaults"]));
    assert_eq!(none["skills"], serde_json::json!([]));
    w.run(&["show", BUILTIN, "--no-defaults"])
        .fails(1, "no skill named");
}

#[test]
fn default_roots_come_from_the_environment_and_no_defaults_ignores_them() {
    let w = World::new();
    w.skill("env/enterprise/policy", "policy", "", "E.\n");
    w.skill(
        "env/enterprise/shared",
        "shared",
        "",
        "Enterprise shared.\n",
    );
    w.skill("env/personal/shared", "shared", "", "Personal shared.\n");
    w.skill("env/personal/mine", "mine", "", "P.\n");
    w.skill("env/project/ours", "ours", "", "Pr.\n");
    let doc = list_json(&w, &[]);
    assert_eq!(
        qualified(&doc),
        [
            "personal:mine",
            "project:ours",
            "enterprise:policy",
            "enterprise:shared",
            BUILTIN
        ]
    );
    assert_eq!(
        skill(&doc, "project:ours")["path"],
        js(&w.path("env/project/ours/SKILL.md"))
    );
    let shadowed = array(&doc["shadowed"]);
    assert_eq!(shadowed.len(), 1, "{doc}");
    assert_eq!(shadowed[0]["qualified_name"], "personal:shared");
    assert_eq!(shadowed[0]["shadowed_by"], "enterprise:shared");
    assert_eq!(
        shadowed[0]["path"],
        js(&w.path("env/personal/shared/SKILL.md"))
    );

    // Only the given roots, and no built-in skill, with --no-defaults.
    let only = list_json(
        &w,
        &[
            "--no-defaults".into(),
            "--root".into(),
            w.root("project", "env/project"),
        ],
    );
    assert_eq!(qualified(&only), ["project:ours"]);
}

#[test]
fn app_adds_the_home_and_project_dot_name_skills_folders() {
    let w = World::new();
    w.skill("home/.myapp/skills/appskill", "appskill", "", "App.\n");
    w.skill(
        "cwd/.myapp/skills/projskill",
        "projskill",
        "",
        "Project app.\n",
    );
    let without = list_json(&w, &[]);
    assert_eq!(qualified(&without), [BUILTIN]);
    let with = list_json(&w, &args(&["--app", "myapp"]));
    assert_eq!(
        qualified(&with),
        ["personal:appskill", "project:projskill", BUILTIN]
    );
    assert_eq!(
        skill(&with, "personal:appskill")["path"],
        js(&w.path("home/.myapp/skills/appskill/SKILL.md"))
    );
    assert_eq!(
        skill(&with, "project:projskill")["path"],
        js(&w.path("cwd/.myapp/skills/projskill/SKILL.md"))
    );
    // --no-defaults reads only the given roots, --app included.
    let only = list_json(&w, &args(&["--app", "myapp", "--no-defaults"]));
    assert_eq!(only["skills"], serde_json::json!([]));
    // A name that cannot name a folder is refused.
    w.run(&["list", "--app", "../escape"])
        .fails(2, "invalid app name");
}

#[test]
fn preset_adds_the_other_agents_home_and_project_folders() {
    let w = World::new();
    w.skill("home/.claude/skills/claudy", "claudy", "", "C.\n");
    w.skill("home/.codex/skills/codexy", "codexy", "", "X.\n");
    w.skill("cwd/.claude/skills/claudeproj", "claudeproj", "", "CP.\n");
    // The presets' enterprise folders (under /etc) are outside the world: only the personal
    // and project layers are compared.
    let names = |extra: &[&str]| {
        let doc = list_json(&w, &args(extra));
        qualified(&doc)
            .into_iter()
            .filter(|q| q.starts_with("personal:") || q.starts_with("project:"))
            .collect::<Vec<_>>()
    };
    assert!(names(&[]).is_empty());
    assert_eq!(
        names(&["--preset", "claude"]),
        ["project:claudeproj", "personal:claudy"]
    );
    assert_eq!(names(&["--preset", "codex"]), ["personal:codexy"]);
    assert_eq!(
        names(&["--preset", "claude", "--preset", "codex"]),
        ["project:claudeproj", "personal:claudy", "personal:codexy"]
    );
    w.run(&["list", "--preset", "vim"]).fails(2, "--preset vim");
}

// ---------------------------------------------------------------------------------------------
// show

/// A personal `deploy` with files inside and outside the resource folders.
fn with_files() -> (World, Vec<String>, PathBuf) {
    let w = World::new();
    let file = w.skill(
        "per/deploy",
        "deploy",
        "tags: [ops]\n",
        "# Deploy\n\nRun scripts/run.sh.\n",
    );
    w.write("per/deploy/scripts/run.sh", "#!/bin/sh\necho hi\n");
    w.write("per/deploy/scripts/lib/util.py", "x = 1\n");
    w.write("per/deploy/references/guide.md", "# Guide\n");
    w.write("per/deploy/assets/logo.txt", "LOGO");
    w.write("per/deploy/notes/ignored.txt", "not a resource");
    w.write("per/deploy/README.md", "not a resource");
    let roots = vec![
        "--no-defaults".to_owned(),
        "--root".into(),
        w.root("personal", "per"),
    ];
    (w, roots, file)
}

/// The files `with_files` puts under scripts/, references/ and assets/, sorted.
const FILES: [(&str, u64); 4] = [
    ("assets/logo.txt", 4),
    ("references/guide.md", 8),
    ("scripts/lib/util.py", 6),
    ("scripts/run.sh", 18),
];

fn is_digest(s: &str) -> bool {
    s.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

#[test]
fn show_json_gives_the_record_body_files_and_digest() {
    let (w, roots, file) = with_files();
    let mut all = args(&["show", "deploy", "--format", "json"]);
    all.extend_from_slice(&roots);
    let doc = w.run(&all).json();
    for key in [
        "name",
        "qualified_name",
        "description",
        "layer",
        "plugin",
        "path",
        "priority",
        "tags",
        "body",
        "files",
        "digest",
    ] {
        assert!(doc.get(key).is_some(), "show has {key:?}: {doc}");
    }
    assert_eq!(doc["qualified_name"], "personal:deploy");
    assert_eq!(doc["name"], "deploy");
    assert_eq!(doc["description"], desc("deploy"));
    assert_eq!(doc["layer"], "personal");
    assert_eq!(doc["plugin"], Value::Null);
    assert_eq!(doc["path"], js(&file));
    assert_eq!(doc["tags"], serde_json::json!(["ops"]));
    assert_eq!(doc["body"], "# Deploy\n\nRun scripts/run.sh.\n");
    let files: Vec<(String, u64)> = array(&doc["files"])
        .iter()
        .map(|f| {
            assert_eq!(keys(f), set(&["path", "size"]), "file: {f}");
            (
                f["path"].as_str().unwrap().to_owned(),
                f["size"].as_u64().unwrap(),
            )
        })
        .collect();
    let expected: Vec<(String, u64)> = FILES.iter().map(|(p, n)| ((*p).to_owned(), *n)).collect();
    assert_eq!(files, expected);
    let digest = doc["digest"].as_str().expect("digest is a string");
    assert!(is_digest(digest), "{digest}");
    let bytes = std::fs::read(&file).expect("read SKILL.md");
    assert_eq!(
        digest,
        format!("sha256:{}", sha256_hex(&bytes)),
        "the whole file"
    );
}

#[test]
fn show_human_gives_the_record_digest_files_and_body() {
    let (w, roots, file) = with_files();
    let mut all = args(&["show", "deploy"]);
    all.extend_from_slice(&roots);
    let run = w.run(&all);
    let out = run.ok();
    let bytes = std::fs::read(&file).expect("read SKILL.md");
    let mut expected = format!(
        "personal:deploy ({})\n{}\ndigest: sha256:{}\n",
        file.display(),
        desc("deploy"),
        sha256_hex(&bytes)
    );
    for (path, size) in FILES {
        expected.push_str(&format!("file: {path} ({size} bytes)\n"));
    }
    expected.push_str("\n# Deploy\n\nRun scripts/run.sh.\n\n");
    assert_eq!(out, expected);
}

#[test]
fn show_finds_a_shadowed_skill_by_its_qualified_name() {
    let (w, roots) = layered();
    let show = |name: &str| {
        let mut all = args(&["show", name, "--format", "json"]);
        all.extend_from_slice(&roots);
        w.run(&all).json()
    };
    let winner = show("deploy");
    assert_eq!(winner["qualified_name"], "personal:deploy");
    assert_eq!(winner["body"], "Personal steps.\n");
    let loser = show("project:deploy");
    assert_eq!(loser["qualified_name"], "project:deploy");
    assert_eq!(loser["body"], "Project steps.\n");
    assert_eq!(loser["files"], serde_json::json!([]));
    // Different files, different digests.
    assert!(is_digest(loser["digest"].as_str().unwrap()));
    assert_ne!(winner["digest"], loser["digest"]);
}

#[test]
fn show_of_the_builtin_skill_reads_the_embedded_file() {
    let w = World::new();
    let doc = w.run(&["show", BUILTIN, "--format", "json"]).json();
    assert_eq!(doc["path"], BUILTIN_PATH);
    assert_eq!(doc["plugin"], "builtin");
    assert!(
        doc["body"]
            .as_str()
            .unwrap()
            .starts_with("# Writing a skill"),
        "{doc}"
    );
    assert_eq!(doc["files"], serde_json::json!([]));
    let bytes = include_bytes!("../builtin/skill-creator/SKILL.md");
    assert_eq!(doc["digest"], format!("sha256:{}", sha256_hex(bytes)));
}

#[test]
fn show_of_an_unknown_name_exits_1_with_a_suggestion() {
    let (w, roots) = layered();
    let show = |name: &str, format: &str| {
        let mut all = args(&["show", name, "--format", format]);
        all.extend_from_slice(&roots);
        w.run(&all)
    };
    for format in ["human", "json"] {
        let run = show("deplyo", format);
        run.fails(1, "no skill named \"deplyo\"");
        assert!(run.stderr.contains("did you mean \"deploy\"?"), "{run:#?}");
    }
    let run = show("zzzzzzzzzzzz", "human");
    run.fails(1, "no skill named \"zzzzzzzzzzzz\"");
    assert!(!run.stderr.contains("did you mean"), "{run:#?}");
    // A qualified name of a layer that does not have the skill is unknown too.
    show("enterprise:deploy", "human").fails(1, "no skill named \"enterprise:deploy\"");
}

// ---------------------------------------------------------------------------------------------
// Regressions (fixed in crates/cli/src/roots.rs)

/// `--root plugin=DIR` was accepted as a plugin root with no id: its skills had
/// `plugin: null` and qualified names `plugin:NAME`, against the documented syntax
/// (`plugin:ID`).
#[test]
fn regression_a_plugin_root_without_an_id_is_refused() {
    let w = World::new();
    w.skill("plug/x", "x", "", "X.\n");
    w.run(&["list", "--no-defaults", "--root", &w.root("plugin", "plug")])
        .fails(2, "a plugin root needs an id: plugin:ID=DIR");
}

/// Plugin ids given with `--root` were not checked: `plugin:=DIR` gave `:x`, `plugin:a b`
/// gave `a b:x`, and `plugin:project=DIR` gave `project:x`, a qualified name that clashes
/// with the project layer's (one of the two became unreachable by qualified name).
#[test]
fn regression_invalid_plugin_ids_are_refused() {
    let w = World::new();
    w.skill("plug/x", "x", "", "Plugin x.\n");
    w.skill("proj/x", "x", "", "Project x.\n");
    for id in ["", "a b", "a:b", "project", "personal"] {
        let spec = format!("plugin:{id}={}", w.path("plug").display());
        w.run(&[
            "list",
            "--no-defaults",
            "--root",
            &w.root("project", "proj"),
            "--root",
            &spec,
        ])
        .fails(2, &format!("plugin id {id:?}"));
    }
    // Ids the index accepts still work.
    let doc = list_json(
        &w,
        &[
            "--no-defaults".into(),
            "--root".into(),
            w.root("plugin:My_Plugin-1.0", "plug"),
        ],
    );
    assert_eq!(qualified(&doc), ["My_Plugin-1.0:x"]);
}

/// Two `--root plugin:ID=DIR` with the same id (or `plugin:builtin` next to the built-in
/// plugin) were merged into one id: two skills could share one qualified name, and a skill
/// could be listed as shadowed by its own qualified name.
#[test]
fn regression_a_plugin_id_used_twice_is_refused() {
    let w = World::new();
    w.skill("one/x", "x", "", "One.\n");
    w.skill("two/x", "x", "", "Two.\n");
    w.run(&[
        "list",
        "--no-defaults",
        "--root",
        &w.root("plugin:acme", "one"),
        "--root",
        &w.root("plugin:acme", "two"),
    ])
    .fails(2, "plugin id \"acme\" is already used");
    w.run(&["list", "--root", &w.root("plugin:builtin", "one")])
        .fails(2, "plugin id \"builtin\" is already used");
    // Without the defaults, `builtin` is free.
    let doc = list_json(
        &w,
        &[
            "--no-defaults".into(),
            "--root".into(),
            w.root("plugin:builtin", "one"),
        ],
    );
    assert_eq!(qualified(&doc), ["builtin:x"]);
}

/// `--root personal=` (no folder) was accepted and silently read nothing.
#[test]
fn regression_a_root_without_a_folder_is_refused() {
    let w = World::new();
    for spec in ["personal=", "plugin:acme="] {
        w.run(&["list", "--no-defaults", "--root", spec])
            .fails(2, "expected LAYER=DIR");
    }
}

/// A folder given twice to one layer (`--root personal=DIR` where DIR is also the default
/// personal root, or `DIR` and `DIR/`) was read twice: each of its skills was listed as
/// shadowed by itself (`personal:mine (shadowed by personal:mine)`) and each diagnostic
/// appeared twice.
#[test]
fn regression_a_folder_given_twice_to_one_layer_is_read_once() {
    let w = World::new();
    // `tags` is an extension field: one warning.
    w.skill("env/personal/mine", "mine", "tags: [a]\n", "Mine.\n");
    let check = |doc: &Value, expected: &[&str]| {
        assert_eq!(qualified(doc), expected, "{doc}");
        assert_eq!(doc["shadowed"], serde_json::json!([]), "{doc}");
        assert_eq!(array(&doc["diagnostics"]).len(), 1, "{doc}");
    };
    let dir = w.path("env/personal").display().to_string();
    // The default personal root (AGENT_SKILLS_PERSONAL_DIR), given again.
    let doc = list_json(&w, &["--root".into(), format!("personal={dir}")]);
    check(&doc, &["personal:mine", BUILTIN]);
    // One folder, spelled three ways.
    let doc = list_json(
        &w,
        &args(&[
            "--no-defaults",
            "--root",
            &format!("personal={dir}"),
            "--root",
            &format!("personal={dir}/"),
            "--root",
            "personal=../env/personal",
        ]),
    );
    check(&doc, &["personal:mine"]);
    // One folder read by two layers is one skill, held by the higher (issue "Load every
    // skill that Claude Code and Codex load"; it used to be listed as shadowed by itself).
    let doc = list_json(
        &w,
        &args(&[
            "--no-defaults",
            "--root",
            &format!("personal={dir}"),
            "--root",
            &format!("project={dir}"),
        ]),
    );
    assert_eq!(qualified(&doc), ["personal:mine"]);
    assert_eq!(doc["shadowed"], serde_json::json!([]));
}

// ---------------------------------------------------------------------------------------------
// SHA-256, to check digests without a dependency

/// The SHA-256 of `data`, as lowercase hex (FIPS 180-4).
fn sha256_hex(data: &[u8]) -> String {
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];
    let mut h: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
        0x5be0cd19,
    ];
    let bits = u64::try_from(data.len()).expect("fits") * 8;
    let mut msg = data.to_vec();
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&bits.to_be_bytes());
    for block in msg.chunks_exact(64) {
        let mut w = [0u32; 64];
        for (word, bytes) in w.iter_mut().zip(block.chunks_exact(4)) {
            *word = u32::from_be_bytes(bytes.try_into().expect("4 bytes"));
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16]
                .wrapping_add(s0)
                .wrapping_add(w[i - 7])
                .wrapping_add(s1);
        }
        let mut v = h;
        for (k, wi) in K.iter().zip(w) {
            let [a, b, c, d, e, f, g, hh] = v;
            let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
            let ch = (e & f) ^ (!e & g);
            let t1 = hh
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(*k)
                .wrapping_add(wi);
            let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
            let maj = (a & b) ^ (a & c) ^ (b & c);
            let t2 = s0.wrapping_add(maj);
            v = [t1.wrapping_add(t2), a, b, c, d.wrapping_add(t1), e, f, g];
        }
        for (x, y) in h.iter_mut().zip(v) {
            *x = x.wrapping_add(y);
        }
    }
    h.iter().map(|x| format!("{x:08x}")).collect()
}

#[test]
fn sha256_helper_matches_the_standard_vectors() {
    assert_eq!(
        sha256_hex(b"abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert_eq!(
        sha256_hex(b""),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    assert_eq!(
        sha256_hex(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
    );
    assert_eq!(
        sha256_hex(&[b'a'; 1000]),
        "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3"
    );
}

/// Regression: what a skill folder wrote reached the terminal as it was: a description
/// holding `ESC [2J` (clear the screen), an OSC title and a carriage return (write over what
/// came before) was printed raw by `list`, `show`, `search` and `validate`'s human output.
#[test]
fn human_output_shows_a_skill_s_control_characters_escaped() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("evil");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: evil\ndescription: \"Safe text.\\x1b[2J\\x1b]0;pwned\\x07 Use when x.\\rOVERWRITTEN\"\nmetadata: 5\n---\nBody \u{1b}[31mred\n",
    )
    .unwrap();
    // A raw escape on a line `validate` shows.
    let raw = tmp.path().join("raw");
    std::fs::create_dir_all(&raw).unwrap();
    std::fs::write(
        raw.join("SKILL.md"),
        "---\nname: raw\ndescription: Raw. Use when x.\nmetadata: \u{1b}[2J\n---\nBody.\n",
    )
    .unwrap();
    let root = format!("project={}", tmp.path().display());
    let runs = [
        common::run(common::skillctl().args(["list", "--no-defaults", "--root", &root])),
        common::run(common::skillctl().args(["show", "--no-defaults", "--root", &root, "evil"])),
        common::run(common::skillctl().args(["search", "--no-defaults", "--root", &root, "safe"])),
        common::run(common::skillctl().arg("validate").arg(&raw)),
    ];
    for run in runs {
        let controls: Vec<char> = run
            .stdout
            .chars()
            .filter(|c| c.is_control() && *c != '\n' && *c != '\t')
            .collect();
        assert!(controls.is_empty(), "{controls:?} in {run:?}");
        assert!(run.stdout.contains("\\u{1b}"), "{run:?}");
    }
}
