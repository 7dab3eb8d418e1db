//! Coming from Codex and Claude Code, through `skillctl` on real folders: the Codex preset
//! reads the folders Codex reads (every folder between the repository root and the working
//! folder; the working folder outside a repository) and honours `agents/openai.yaml`, and
//! `session --allowed-tools-mode preapprove` gives Claude Code's meaning, audited.

mod common;

use std::path::{Path, PathBuf};

use common::Run;
use serde_json::{json, Value};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn skill(dir: &Path, name: &str) {
    write(
        &dir.join(name).join("SKILL.md"),
        &format!(
            "---\nname: {name}\ndescription: The {name} skill. Use when testing.\n---\nBody.\n"
        ),
    );
}

/// `skillctl ARGS` in `cwd`, with an empty home and no environment roots.
fn run_in(cwd: &Path, home: &Path, args: &[&str]) -> Run {
    common::run(
        common::skillctl()
            .args(args)
            .current_dir(cwd)
            .env("HOME", home)
            .env("AGENT_SKILLS_HOME", home)
            .env("AGENT_SKILLS_ENTERPRISE_DIR", home.join("no-enterprise"))
            .env_remove("AGENT_SKILLS_PERSONAL_DIR")
            .env_remove("AGENT_SKILLS_PROJECT_DIR"),
    )
}

fn names(doc: &Value) -> Vec<String> {
    let mut names: Vec<String> = doc["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["qualified_name"].as_str().unwrap().to_owned())
        .filter(|n| !n.starts_with("builtin:"))
        .collect();
    names.sort();
    names
}

#[test]
fn the_codex_preset_reads_every_folder_down_to_the_working_one() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let cwd: PathBuf = repo.join("a/b");
    std::fs::create_dir_all(&cwd).unwrap();
    skill(&repo.join(".agents/skills"), "top");
    skill(&repo.join("a/.agents/skills"), "middle");
    skill(&repo.join("a/b/.codex/skills"), "here");
    skill(&repo.join("elsewhere/.codex/skills"), "aside");
    let list = |args: &[&str]| {
        let mut all = vec!["list", "--format", "json"];
        all.extend_from_slice(args);
        names(&run_in(&cwd, &home, &all).json())
    };
    assert_eq!(
        list(&["--preset", "codex"]),
        ["project:here", "project:middle", "project:top"]
    );
    // Without the preset, the repository root's .agents/skills only.
    assert_eq!(list(&[]), ["project:top"]);

    // Outside a repository, Codex reads the working folder.
    let loose = tmp.path().join("loose");
    skill(&loose.join(".agents/skills"), "loose");
    let run = run_in(
        &loose,
        &home,
        &["list", "--format", "json", "--preset", "codex"],
    );
    assert_eq!(names(&run.json()), ["project:loose"]);
    let run = run_in(&loose, &home, &["list", "--format", "json"]);
    assert!(names(&run.json()).is_empty());
}

#[test]
fn the_codex_preset_keeps_implicit_invocation_off_out_of_the_prompt() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let skills = repo.join(".codex/skills");
    skill(&skills, "explicit-only");
    skill(&skills, "everyday");
    write(
        &skills.join("explicit-only/agents/openai.yaml"),
        "policy:\n  allow_implicit_invocation: false\n",
    );
    let prompt = run_in(&repo, &home, &["prompt", "--preset", "codex"]);
    let text = prompt.ok();
    assert!(text.contains("everyday"), "{text}");
    assert!(!text.contains("explicit-only"), "{text}");
}

#[test]
fn preapprove_mode_is_claude_codes_meaning_and_is_audited() {
    let f = common::Fixture::new();
    f.skill(
        "git-helper",
        "allowed-tools: Bash(git status:*)\n",
        "Git.\n",
    );
    let audit = f.path().join("audit.jsonl");
    let audit_arg = audit.display().to_string();
    let mut session = f.session(&[
        "--allowed-tools-mode",
        "preapprove",
        "--default-decision",
        "deny",
        "--audit",
        &audit_arg,
    ]);
    session.ok("skills_load", json!({"names": ["git-helper"]}));
    assert!(session.bash("git status"));
    assert!(!session.bash("rm -rf /"));
    let (status, _) = session.finish();
    assert!(status.success());
    let log = std::fs::read_to_string(&audit).unwrap();
    let overrides: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["event"] == "policy_override")
        .collect();
    assert!(
        overrides
            .iter()
            .any(|e| e.to_string().contains("--allowed-tools-mode preapprove")),
        "{log}"
    );
}
