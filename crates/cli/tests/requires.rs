//! End to end, what a skill needs and the secrets its scripts get: `skillctl doctor` says
//! why a skill is not offered and what to install; a program put on the `PATH` the binary
//! runs with is offered after the next publication (`reload`); `list --format json` and
//! `show` say why; skillscraft's capability objects are shown; a secrets file others can
//! read is refused at start, and one only its owner can read grants its values.

mod common;

use std::ffi::OsString;
use std::path::Path;

use common::{skillctl, Fixture, Session};
use serde_json::json;

const TOOL: &str = "skills-cli-test-tool-9c1d";

/// A `PATH` of `bin` first, then the system's folders (where `bash` is).
fn path_with(bin: &Path) -> OsString {
    let mut path = OsString::from(bin);
    path.push(":/usr/local/bin:/usr/bin:/bin");
    path
}

fn fixture() -> Fixture {
    let f = Fixture::new();
    f.skill(
        "needs-tool",
        &format!("requires:\n  bins: [{TOOL}]\n  os: [linux, macos, windows]\n"),
        "# Needs the tool\n",
    );
    f.skill("plain", "", "# Plain\n");
    f
}

fn listed(s: &mut Session) -> Vec<String> {
    let listed = s.ok("skills_list", json!({}));
    listed["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn doctor_says_why_and_a_program_put_on_path_is_offered_after_the_next_publication() {
    let f = fixture();
    let bin = f.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let root = f.root_arg("personal");
    let doctor = |f: &Fixture| {
        common::run(
            skillctl()
                .args(["doctor", "--no-defaults", &root])
                .env("PATH", path_with(&bin))
                .current_dir(f.path()),
        )
    };
    let run = doctor(&f);
    assert_eq!(run.code, Some(1), "{run:#?}");
    assert!(run.stdout.contains("personal:needs-tool"), "{run:#?}");
    assert!(
        run.stdout.contains(&format!(
            "program `{TOOL}` is not on PATH: install `{TOOL}` or put its folder on PATH"
        )),
        "{run:#?}"
    );
    let list = common::run(
        skillctl()
            .args(["list", "--no-defaults", &root, "--format", "json"])
            .env("PATH", path_with(&bin)),
    )
    .json();
    let skills = list["skills"].as_array().unwrap();
    assert_eq!(
        skills[0]["unavailable"],
        json!([format!("program `{TOOL}` is not on PATH")])
    );
    assert!(skills[1].get("unavailable").is_none(), "{list}");

    let path = path_with(&bin);
    let mut s = Session::start_with(f.path(), &[root.as_str()], &[("PATH", &path)]);
    assert_eq!(listed(&mut s), ["plain"]);
    let program = bin.join(TOOL);
    std::fs::write(&program, "#!/bin/sh\nexit 0\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    s.ok("reload", json!({}));
    assert_eq!(listed(&mut s), ["needs-tool", "plain"]);
    let (status, _) = s.finish();
    assert!(status.success());
    let run = doctor(&f);
    assert_eq!(run.code, Some(0), "{run:#?}");
    assert!(run.stdout.contains("0 of 2 skills"), "{run:#?}");
}

#[test]
fn show_and_read_properties_show_capability_objects_and_needs() {
    let f = Fixture::new();
    let dir = f.skill(
        "scrafted",
        &format!("security:\n  capabilities:\n    - network\n    - capability: filesystem\n      reason: writes reports\n      optional: true\ntool-binding:\n  dependencies:\n    - tool: docker\n      required: true\nrequires:\n  bins: [{TOOL}]\n"),
        "# Scrafted\n",
    );
    let want = json!(["network", {"capability": "filesystem", "reason": "writes reports", "optional": true}]);
    let props = common::run(skillctl().arg("read-properties").arg(&dir)).json();
    assert_eq!(props["security"]["capabilities"], want, "{props}");
    assert_eq!(props["requires"], json!({"bins": [TOOL]}), "{props}");
    let shown = common::run(skillctl().args(["show", "--format", "json"]).arg(&dir)).json();
    assert_eq!(shown["frontmatter"]["security"]["capabilities"], want);
    assert_eq!(
        shown["requires"],
        json!({"bins": [TOOL], "tools": ["docker"]})
    );
    assert_eq!(
        shown["unavailable"],
        json!([format!("program `{TOOL}` is not on PATH")])
    );
    let human = common::run(skillctl().arg("show").arg(&dir));
    assert!(
        human.ok().contains("\"capability\":\"filesystem\""),
        "{human:#?}"
    );
    assert!(
        human
            .ok()
            .contains(&format!("unavailable: program `{TOOL}` is not on PATH")),
        "{human:#?}"
    );
}

/// A skill whose script prints its secret's length.
fn secret_skill(f: &Fixture) {
    f.skill(
        "deploy",
        "requires:\n  secrets: [DEPLOY_TOKEN]\n",
        "# Deploy\n",
    );
    f.file(
        "deploy",
        "scripts/len.sh",
        "printf 'len=%s val=%s' \"${#DEPLOY_TOKEN}\" \"$DEPLOY_TOKEN\"\n",
    );
}

#[cfg(unix)]
#[test]
fn a_secrets_file_others_can_read_is_refused_at_start() {
    use std::os::unix::fs::PermissionsExt as _;
    let f = Fixture::new();
    secret_skill(&f);
    let file = f.path().join("secrets.env");
    std::fs::write(&file, "# deploy\nDEPLOY_TOKEN=\"value-of-the-token\"\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let root = f.root_arg("personal");
    let run = common::run(
        skillctl()
            .args(["session", "--no-defaults", &root, "--secrets-file"])
            .arg(&file)
            .current_dir(f.path()),
    );
    run.fails(2, "readable only by its owner (chmod 600)");
    assert!(!run.stderr.contains("value-of-the-token"), "{run:#?}");

    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let file_arg = file.display().to_string();
    let mut s = Session::start(f.path(), &[root.as_str(), "--secrets-file", &file_arg]);
    s.ok("skills_load", json!({"names": ["deploy"]}));
    let out = s.ok("skills_run_script", json!({"path": "scripts/len.sh"}));
    assert_eq!(out["stdout"], "len=18 val=[REDACTED:DEPLOY_TOKEN]", "{out}");
    let (status, _) = s.finish();
    assert!(status.success());
}

#[test]
fn a_secret_from_the_environment_is_granted_by_name_and_an_ungranted_one_is_named() {
    let f = Fixture::new();
    secret_skill(&f);
    let root = f.root_arg("personal");
    let value = OsString::from("from-the-environment");
    let mut s = Session::start_with(
        f.path(),
        &[root.as_str(), "--secret", "DEPLOY_TOKEN"],
        &[("DEPLOY_TOKEN", &value)],
    );
    s.ok("skills_load", json!({"names": ["deploy"]}));
    let out = s.ok("skills_run_script", json!({"path": "scripts/len.sh"}));
    assert_eq!(out["stdout"], "len=20 val=[REDACTED:DEPLOY_TOKEN]", "{out}");
    let (status, _) = s.finish();
    assert!(status.success());

    let mut s = Session::start(f.path(), &[root.as_str()]);
    s.ok("skills_load", json!({"names": ["deploy"]}));
    let (code, message) = s.err("skills_run_script", json!({"path": "scripts/len.sh"}));
    assert_eq!(code, "SKILL_SECRET_NOT_GRANTED");
    assert!(message.contains("DEPLOY_TOKEN"), "{message}");
    let (status, _) = s.finish();
    assert!(status.success());

    // A name the environment filter refuses is refused at start.
    let run = common::run(
        skillctl()
            .args(["session", "--no-defaults", &root, "--secret", "LD_PRELOAD"])
            .env("LD_PRELOAD", "")
            .current_dir(f.path()),
    );
    assert_eq!(run.code, Some(2), "{run:#?}");
}
