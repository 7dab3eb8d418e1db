//! The authoring commands end to end: `new` (every combination of parts validates with no
//! finding at all), `schema` (the shipped file, its limits the validator's), and the
//! reference CLI's verbs (`read-properties DIR`, `prompt DIR...`, `show DIR`).

mod common;

use serde_json::Value;

#[test]
fn a_new_skill_validates_with_no_finding_whatever_its_parts() {
    let tmp = tempfile::tempdir().unwrap();
    let flags = ["--scripts", "--references", "--assets"];
    for mask in 0..8u8 {
        let name = format!("fresh-skill-{mask}");
        let mut cmd = common::skillctl();
        cmd.args(["new", &name, "--path"]).arg(tmp.path());
        for (i, flag) in flags.iter().enumerate() {
            if mask & (1 << i) != 0 {
                cmd.arg(flag);
            }
        }
        let created = common::run(&mut cmd);
        assert!(created.ok().contains("created"), "{created:?}");
        let dir = tmp.path().join(&name);
        for (i, folder) in ["scripts", "references", "assets"].iter().enumerate() {
            assert_eq!(
                dir.join(folder).is_dir(),
                mask & (1 << i) != 0,
                "{name}: {folder}"
            );
        }
        let run = common::run(
            common::skillctl()
                .args(["validate", "--lint", "--format", "json"])
                .arg(&dir),
        );
        let doc = run.json();
        assert_eq!(doc["skills"][0]["valid"], true, "{doc}");
        assert_eq!(
            doc["skills"][0]["diagnostics"],
            serde_json::json!([]),
            "{name}: {doc}"
        );
    }
    // The name is checked first; nothing existing is overwritten.
    let bad = common::run(
        common::skillctl()
            .args(["new", "Bad_Name", "--path"])
            .arg(tmp.path()),
    );
    bad.fails(2, "cannot name a skill");
    assert!(!tmp.path().join("Bad_Name").exists());
    let again = common::run(
        common::skillctl()
            .args(["new", "fresh-skill-0", "--path"])
            .arg(tmp.path()),
    );
    again.fails(2, "already exists");
}

#[test]
fn the_schema_is_the_shipped_file_and_holds_the_validators_limits() {
    let printed = common::run(common::skillctl().arg("schema"))
        .ok()
        .to_owned();
    let shipped = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../schema/skill-frontmatter.schema.json"),
    )
    .unwrap();
    assert_eq!(printed, shipped);
    let schema: Value = serde_json::from_str(&shipped).unwrap();
    let props = &schema["properties"];
    assert_eq!(props["name"]["maxLength"], skills_model::MAX_NAME_LEN);
    assert_eq!(props["description"]["maxLength"], 1024);
    assert_eq!(props["compatibility"]["maxLength"], 500);
    assert_eq!(
        schema["required"],
        serde_json::json!(["name", "description"])
    );
    // Every spec field and every typed extension field is described.
    for field in skills_model::SPEC_FIELDS
        .iter()
        .chain(skills_model::EXTENSION_FIELDS.iter())
    {
        assert!(props.get(field).is_some(), "the schema lacks {field}");
    }
}

#[test]
fn the_reference_clis_verbs_take_skill_folders() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("pdf-forms");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: pdf-forms\ndescription: Fills PDF forms. Use when given a form.\nallowed-tools: Read\nmetadata:\n  author: ada\n---\n# PDF forms\n\nSteps.\n",
    )
    .unwrap();
    let props = common::run(common::skillctl().arg("read-properties").arg(&dir)).json();
    assert_eq!(props["name"], "pdf-forms");
    assert_eq!(
        props["description"],
        "Fills PDF forms. Use when given a form."
    );
    assert_eq!(props["metadata"]["author"], "ada");
    assert!(props.get("allowed-tools").is_some(), "{props}");
    assert!(props.get("priority").is_none(), "{props}");

    let prompt = common::run(
        common::skillctl()
            .args(["prompt", "--no-defaults"])
            .arg(&dir),
    );
    let text = prompt.ok();
    assert!(
        text.starts_with("<available_skills>\n<skill>\n<name>\npdf-forms\n</name>"),
        "{text}"
    );
    let real = std::fs::canonicalize(&dir).unwrap().join("SKILL.md");
    assert!(
        text.contains(&format!("<location>\n{}\n</location>", real.display())),
        "{text}"
    );

    let show = common::run(
        common::skillctl()
            .args(["show", "--no-defaults", "--format", "json"])
            .arg(&dir),
    );
    let doc = show.json();
    assert_eq!(doc["name"], "pdf-forms");
    assert!(doc["body"].as_str().unwrap().starts_with("# PDF forms"));
    // A bare name still means a skill of the roots.
    common::run(common::skillctl().args(["show", "--no-defaults", "pdf-forms"]))
        .fails(1, "pdf-forms");
}

/// Regression: `read-properties` read `SKILL.md` with a plain read: a FIFO of that name
/// blocked it for ever (the deadline of `common::run` fails the test), and a link to a
/// device read without end. It refuses both at once, naming the file.
#[cfg(unix)]
#[test]
fn read_properties_refuses_a_fifo_or_a_device_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("fifo-skill");
    std::fs::create_dir_all(&fifo).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(fifo.join("SKILL.md"))
        .status()
        .unwrap();
    assert!(made.success());
    let device = tmp.path().join("device-skill");
    std::fs::create_dir_all(&device).unwrap();
    std::os::unix::fs::symlink("/dev/zero", device.join("SKILL.md")).unwrap();
    for dir in [fifo, device] {
        let run = common::run(common::skillctl().arg("read-properties").arg(&dir));
        assert_eq!(run.code, Some(2), "{run:?}");
        assert!(run.stderr.contains("SKILL.md"), "{run:?}");
    }
}

/// Regression: a frontmatter `read-properties` could not read printed `{}` and exited 1
/// with nothing said: which file, where, and why now go to standard error.
#[test]
fn read_properties_says_where_a_frontmatter_cannot_be_read() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: [(&str, &[u8], &str); 3] = [
        (
            "dupkey",
            b"---\nname: dupkey\ndescription: d. Use when x.\nname: dupkey\n---\n",
            "SKILL.md:4:",
        ),
        (
            "badutf",
            b"---\nname: badutf\ndescription: \xff\n---\n",
            "SKILL.md:3:",
        ),
        ("nofm", b"just text, no frontmatter\n", "SKILL.md"),
    ];
    for (name, text, place) in cases {
        let dir = tmp.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("SKILL.md"), text).unwrap();
        let run = common::run(common::skillctl().arg("read-properties").arg(&dir));
        assert_eq!(run.code, Some(1), "{name}: {run:?}");
        assert!(run.stderr.contains(place), "{name}: {run:?}");
        assert!(run.stderr.contains("error["), "{name}: {run:?}");
    }
}

/// Regression: `show DIR` loaded the skill by its name, so a sibling folder holding the
/// same name (first by precedence) was shown in its place; and a folder the loader does not
/// search (`target`) is refused saying why.
#[test]
fn show_dir_shows_that_folder_s_skill() {
    let tmp = tempfile::tempdir().unwrap();
    let skills = tmp.path().join("skills");
    for (folder, body) in [("a", "BODY OF A"), ("b", "BODY OF B")] {
        let dir = skills.join(folder);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!(
                "---\nname: same\ndescription: Skill {folder}. Use when testing.\n---\n{body}\n"
            ),
        )
        .unwrap();
    }
    for (folder, body) in [("a", "BODY OF A\n"), ("b", "BODY OF B\n")] {
        let doc = common::run(
            common::skillctl()
                .args(["show", "--format", "json"])
                .arg(skills.join(folder)),
        )
        .json();
        assert_eq!(doc["body"], body, "{doc}");
        let path = doc["path"].as_str().unwrap_or_default();
        assert!(path.ends_with(&format!("{folder}/SKILL.md")), "{path}");
    }
    let target = skills.join("target");
    std::fs::create_dir_all(&target).unwrap();
    std::fs::write(
        target.join("SKILL.md"),
        "---\nname: target\ndescription: Build targets. Use when asked.\n---\nBody.\n",
    )
    .unwrap();
    let run = common::run(common::skillctl().arg("show").arg(&target));
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(
        run.stderr
            .contains("does not search folders named `target`"),
        "{run:?}"
    );
}

/// Regression: `new` wrote a name YAML reads as a number, a boolean or null unquoted, so
/// the skill it made failed its own `validate` (`name.type`).
#[test]
fn a_new_skill_validates_whatever_yaml_would_make_of_its_name() {
    let tmp = tempfile::tempdir().unwrap();
    for name in [
        "123", "null", "true", "false", "1e5", "0x1f", "0o17", "1e-5", "3d-tools",
    ] {
        let created = common::run(
            common::skillctl()
                .args(["new", name, "--path"])
                .arg(tmp.path()),
        );
        assert_eq!(created.code, Some(0), "{name}: {created:?}");
        let checked = common::run(
            common::skillctl()
                .args(["validate", "--format", "json"])
                .arg(tmp.path().join(name)),
        );
        let doc = checked.json();
        assert_eq!(doc["skills"][0]["valid"], true, "{name}: {doc}");
        assert_eq!(doc["skills"][0]["name"], name, "{name}: {doc}");
        assert_eq!(checked.code, Some(0), "{name}: {checked:?}");
    }
}

/// Regression: a `new` whose later write failed left `SKILL.md` and empty folders behind,
/// which a second `new` then refused as an existing skill. Here the script's whole path is
/// too long for the system where `SKILL.md`'s is not.
#[cfg(unix)]
#[test]
fn a_new_that_fails_leaves_nothing_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap().join("p");
    std::fs::create_dir_all(&base).unwrap();
    let mut long = base.as_os_str().to_owned();
    while long.len() + "/abc/scripts/example.sh".len() < 4096 {
        long.push("/.");
    }
    assert!(long.len() + "/abc/SKILL.md".len() < 4096);
    let run = common::run(
        common::skillctl()
            .args(["new", "abc", "--scripts", "--path"])
            .arg(&long),
    );
    // Written through a handle on the folder it made, the long path no longer fails; were
    // it to, nothing may be left (the unit test `a_new_folder_that_fails_removes_what_it_made`
    // holds the cleanup).
    if run.code == Some(0) {
        assert!(base.join("abc/scripts/example.sh").is_file(), "{run:?}");
    } else {
        assert!(
            std::fs::symlink_metadata(base.join("abc")).is_err(),
            "a half-written skill was left: {run:?}"
        );
    }
}

/// `new` never writes through a link planted where its folder goes.
#[cfg(unix)]
#[test]
fn a_new_skill_is_not_written_through_a_link() {
    let tmp = tempfile::tempdir().unwrap();
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, tmp.path().join("planted")).unwrap();
    let run = common::run(
        common::skillctl()
            .args(["new", "planted", "--path"])
            .arg(tmp.path()),
    );
    assert_eq!(run.code, Some(2), "{run:?}");
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
}

/// Regression: the errors `read-properties` writes to standard error quoted a frontmatter's
/// keys as written, terminal escapes included (SECURITY.md promise 43).
#[test]
fn read_properties_errors_escape_control_characters() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("esc");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: esc\ndescription: A skill. Use when testing.\nmetadata:\n  \"\\e]0;pwned\\a\\e[2J\": [1]\n---\nbody\n",
    )
    .unwrap();
    let run = common::run(common::skillctl().arg("read-properties").arg(&dir));
    assert!(run.stderr.contains("metadata"), "{run:?}");
    assert!(run.stderr.contains("\\u{1b}]0;pwned"), "{run:?}");
    assert!(
        !run.stderr.contains('\u{1b}') && !run.stderr.contains('\u{7}'),
        "{:?}",
        run.stderr
    );
}

/// Regression (second review): `new` held its parent folder by a handle that needed the
/// right to list it, so a drop folder one may write and enter but not read (mode 0733)
/// refused it where `mkdir` succeeds. Run as an unprivileged user where this runs as root
/// (root lists any folder), with `setpriv`.
#[cfg(target_os = "linux")]
#[test]
fn a_new_skill_is_made_in_a_folder_one_may_write_but_not_list() {
    use std::os::unix::fs::PermissionsExt as _;
    let tmp = tempfile::tempdir().unwrap();
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let drop = tmp.path().join("drop");
    std::fs::create_dir(&drop).unwrap();
    std::fs::set_permissions(&drop, std::fs::Permissions::from_mode(0o733)).unwrap();
    let mut cmd = common::unprivileged(tmp.path());
    cmd.args(["new", "fresh", "--scripts", "--path"]).arg(&drop);
    let run = common::run(&mut cmd);
    assert_eq!(run.code, Some(0), "{run:?}");
    std::fs::set_permissions(&drop, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(drop.join("fresh/scripts/example.sh").is_file());
}

/// Regression (issue 37): `read-properties` and `show --format json` printed extension
/// fields in Rust's spellings and shapes: skillscraft's `security` as `executes_commands`
/// (authors write `executesCommands`), `argument-hint` inside a `claude-code` object, and a
/// field kept as written as a list of `[key, value]` pairs. Each field now comes out under
/// the key the file has, mappings as objects, unset fields left out, as the reference
/// prints the frontmatter.
#[test]
fn properties_come_out_under_the_keys_their_author_wrote() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("as-written");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: as-written\ndescription: Kept as written. Use when testing.\nargument-hint: \"[file]\"\nsecurity:\n  executesCommands: false\n  fileSystemScope: skill-directory\ncomposition:\n  dependencies:\n    - skillName: base\n  executionOrder: [base, as-written]\ntest-scenarios:\n  - name: one\n    custom: {a: b}\nx-owner:\n  team: docs\n  contacts: [ada]\n---\nBody.\n",
    )
    .unwrap();
    let props = common::run(common::skillctl().arg("read-properties").arg(&dir)).json();
    let show = common::run(
        common::skillctl()
            .args(["show", "--no-defaults", "--format", "json"])
            .arg(&dir),
    )
    .json();
    let want = serde_json::json!({
        "name": "as-written",
        "description": "Kept as written. Use when testing.",
        "argument-hint": "[file]",
        "security": {"executesCommands": false, "fileSystemScope": "skill-directory"},
        "composition": {
            "dependencies": [{"skillName": "base", "optional": false}],
            "executionOrder": ["base", "as-written"]
        },
        "test-scenarios": [{"name": "one", "custom": {"a": "b"}}],
        "x-owner": {"team": "docs", "contacts": ["ada"]}
    });
    assert_eq!(props, want);
    // `show` keeps the name and the description on the record; the rest is the same.
    let mut shown = show["frontmatter"].clone();
    for key in ["name", "description"] {
        shown[key] = want[key].clone();
    }
    assert_eq!(shown, want);
}
