//! Skills taken from an MCP server that serves the skills extension (`--mcp-server
//! LABEL=COMMAND`): files fetched when read and verified against the entry (size, digest,
//! and a `SKILL.md`'s frontmatter), only files the entry lists, an untrusted server's
//! scripts and the host's code-execution tools refused, a local skill's bare name kept,
//! and a server that goes away and comes back. The server is `fixtures/ext_server.py`, a
//! minimal stdio server that can serve bytes other than its entries describe.

mod common;

use common::Fixture;
use serde_json::{json, Value};
use sha2::{Digest as _, Sha256};
use std::path::{Path, PathBuf};

const SKILL_MD: &str =
    "---\nname: remote-notes\ndescription: Remote notes; use them when asked.\n---\nRemote body.\n";

fn digest(bytes: &str) -> String {
    format!("sha256:{:x}", Sha256::digest(bytes.as_bytes()))
}

/// One served skill: its entry describes `files` (path, bytes); `served` overrides the
/// bytes a read returns for some of them.
fn served(
    name: &str,
    frontmatter: Value,
    files: &[(&str, &str)],
    served: &[(&str, &str)],
) -> Value {
    let uri = |p: &str| format!("skill://remote/{name}/{p}");
    let resources: Vec<Value> = files
        .iter()
        .map(|(p, b)| json!({"uri": uri(p), "digest": digest(b), "size": b.len()}))
        .collect();
    let mut bytes = serde_json::Map::new();
    for (p, b) in files {
        bytes.insert(uri(p), json!(b));
    }
    for (p, b) in served {
        bytes.insert(uri(p), json!(b));
    }
    json!({"entry": {"uri": uri("SKILL.md"), "frontmatter": frontmatter, "resources": resources},
           "files": bytes})
}

fn notes_frontmatter() -> Value {
    json!({"name": "remote-notes", "description": "Remote notes; use them when asked."})
}

struct Server {
    skills: PathBuf,
    gone: PathBuf,
}

impl Server {
    fn new(f: &Fixture, skills: &[Value]) -> Server {
        let server = Server {
            skills: f.path().join("served.json"),
            gone: f.path().join("gone"),
        };
        server.serve(skills);
        server
    }

    fn serve(&self, skills: &[Value]) {
        std::fs::write(&self.skills, json!({"skills": skills}).to_string()).unwrap();
    }

    fn arg(&self) -> String {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ext_server.py");
        format!(
            "up=python3 {} --skills {} --gone {}",
            script.display(),
            self.skills.display(),
            self.gone.display()
        )
    }
}

#[test]
fn files_are_verified_against_the_entry_when_read() {
    let f = Fixture::new();
    let files = [
        ("SKILL.md", SKILL_MD),
        ("references/guide.md", "The guide.\n"),
        ("references/same.md", "abcd\n"),
    ];
    let server = Server::new(
        &f,
        &[served(
            "remote-notes",
            notes_frontmatter(),
            &files,
            &[
                ("references/guide.md", "A longer, tampered guide.\n"),
                ("references/same.md", "abce\n"),
            ],
        )],
    );
    let arg = server.arg();
    let mut s = f.session(&["--no-watch", "--mcp-server", &arg]);
    let receipt = s.ok("skills_load", json!({"names": ["up:remote-notes"]}));
    assert_eq!(
        receipt["active_skills"][0]["body"], "Remote body.\n",
        "{receipt}"
    );
    // Tagged with its origin where it enters the model's context.
    assert_eq!(
        receipt["active_skills"][0]["location"], "mcp:up/remote/remote-notes/SKILL.md",
        "{receipt}"
    );
    let (code, size) = s.err("skills_read", json!({"path": "references/guide.md"}));
    assert_eq!(code, "SKILL_PATH_INVALID");
    assert!(
        size.contains("failed verification") && size.contains("bytes, the manifest says 11"),
        "{size}"
    );
    let (_, digest) = s.err("skills_read", json!({"path": "references/same.md"}));
    assert!(
        digest.contains("failed verification") && digest.contains("has digest"),
        "{digest}"
    );
    let (_, unlisted) = s.err("skills_read", json!({"path": "references/other.md"}));
    assert!(unlisted.contains("does not list it"), "{unlisted}");
    s.finish();
}

#[test]
fn a_skill_md_whose_frontmatter_differs_from_the_entry_is_not_loaded() {
    let f = Fixture::new();
    let mut frontmatter = notes_frontmatter();
    frontmatter["license"] = json!("MIT");
    let server = Server::new(
        &f,
        &[served(
            "remote-notes",
            frontmatter,
            &[("SKILL.md", SKILL_MD)],
            &[],
        )],
    );
    let arg = server.arg();
    let mut s = f.session(&["--no-watch", "--mcp-server", &arg]);
    let (code, message) = s.err("skills_load", json!({"names": ["up:remote-notes"]}));
    assert!(
        message.contains("its frontmatter differs from the entry's"),
        "{code}: {message}"
    );
    s.finish();
}

#[test]
fn a_local_skill_keeps_its_bare_name_and_the_server_s_is_reached_by_its_label() {
    let f = Fixture::new();
    f.skill("remote-notes", "", "Local body.\n");
    let server = Server::new(
        &f,
        &[served(
            "remote-notes",
            notes_frontmatter(),
            &[("SKILL.md", SKILL_MD)],
            &[],
        )],
    );
    let arg = server.arg();
    let mut s = f.session(&["--no-watch", "--mcp-server", &arg]);
    let local = s.ok("skills_load", json!({"names": ["remote-notes"]}));
    assert_eq!(
        local["active_skills"][0]["body"], "Local body.\n",
        "{local}"
    );
    let remote = s.ok(
        "skills_load",
        json!({"names": ["up:remote-notes"], "mode": "replace"}),
    );
    assert_eq!(
        remote["active_skills"][0]["body"], "Remote body.\n",
        "{remote}"
    );
    assert_eq!(
        remote["active_skills"][0]["qualified_name"],
        "up:remote-notes"
    );
    s.finish();
}

#[test]
fn an_untrusted_server_s_scripts_and_code_execution_calls_are_refused() {
    let f = Fixture::new();
    let files = [("SKILL.md", SKILL_MD), ("scripts/run.sh", "echo ran\n")];
    let server = Server::new(
        &f,
        &[served("remote-notes", notes_frontmatter(), &files, &[])],
    );
    let arg = server.arg();
    let mut s = f.session(&["--no-watch", "--mcp-server", &arg]);
    s.ok("skills_load", json!({"names": ["up:remote-notes"]}));
    // A script from a server is never started: it is not on disk (and, untrusted, it
    // would be refused as SKILL_UNTRUSTED besides).
    let (code, message) = s.err("skills_run_script", json!({"path": "scripts/run.sh"}));
    assert!(
        ["SKILL_SCRIPT_NOT_ON_DISK", "SKILL_UNTRUSTED"].contains(&code.as_str()),
        "{code}: {message}"
    );
    let decided = s.ok(
        "check_tool",
        json!({"tool": "Bash", "input": {"command": "ls"}}),
    );
    assert_eq!(decided["decision"], "deny", "{decided}");
    assert_eq!(decided["rule"], "remote.untrusted", "{decided}");
    s.finish();
}

#[test]
fn a_server_that_goes_away_keeps_its_skills_listed_and_reads_fail_until_it_returns() {
    let f = Fixture::new();
    let files = [
        ("SKILL.md", SKILL_MD),
        ("references/guide.md", "The guide.\n"),
    ];
    let server = Server::new(
        &f,
        &[served("remote-notes", notes_frontmatter(), &files, &[])],
    );
    let arg = server.arg();
    let mut s = f.session(&["--no-watch", "--mcp-server", &arg]);
    s.ok("skills_load", json!({"names": ["up:remote-notes"]}));
    std::fs::write(&server.gone, "").unwrap();
    let (_, message) = s.err("skills_read", json!({"path": "references/guide.md"}));
    assert!(
        message.contains("the MCP server up is not answering"),
        "{message}"
    );
    let listed = s.ok("skills_list", json!({}));
    assert!(listed.to_string().contains("remote-notes"), "{listed}");
    std::fs::remove_file(&server.gone).unwrap();
    let read = s.ok("skills_read", json!({"path": "references/guide.md"}));
    assert_eq!(read["content"], "The guide.\n", "{read}");
    s.finish();
}

#[test]
fn over_the_wire_a_server_is_only_a_label_the_host_declared() {
    let f = Fixture::new();
    let server = Server::new(
        &f,
        &[served(
            "remote-notes",
            notes_frontmatter(),
            &[("SKILL.md", SKILL_MD)],
            &[],
        )],
    );
    let arg = server.arg();
    let placed = "--root=personal=mcp:up".to_owned();
    let mut s = f.session(&["--no-watch", "--mcp-server", &arg, &placed]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ext_server.py");
    let command = format!(
        "python3 {} --skills {}",
        script.display(),
        server.skills.display()
    );
    for (input, needle) in [
        (
            json!({"id": "p", "server": command}),
            "a peer never starts a program",
        ),
        (
            json!({"id": "p", "server": "python3"}),
            "a peer never starts a program",
        ),
        (
            json!({"id": "p", "server": "http://skills.example.com/mcp"}),
            "only on a loopback address",
        ),
        (json!({"id": "p", "server": "up", "root": "/tmp"}), "one of"),
    ] {
        let (code, message) = s.err("register_plugin", input.clone());
        assert!(message.contains(needle), "{input}: {code}: {message}");
    }
    let registered = s.ok("register_plugin", json!({"id": "again", "server": "up"}));
    assert_eq!(registered["root"], "mcp:up", "{registered}");
    // Its skills are the placed server's, held once (one file is one record).
    assert_eq!(registered["skills"], 0, "{registered}");
    s.finish();
}

#[test]
fn a_server_placed_above_a_local_skill_still_takes_not_its_bare_name() {
    let f = Fixture::new();
    f.skill("remote-notes", "", "Local body.\n");
    let server = Server::new(
        &f,
        &[served(
            "remote-notes",
            notes_frontmatter(),
            &[("SKILL.md", SKILL_MD)],
            &[],
        )],
    );
    let arg = server.arg();
    let local = f.root_arg("project");
    let mut s = common::Session::start(
        f.path(),
        &[
            "--no-watch",
            "--mcp-server",
            &arg,
            "--root=personal=mcp:up",
            &local,
        ],
    );
    let bare = s.ok("skills_load", json!({"names": ["remote-notes"]}));
    assert_eq!(bare["active_skills"][0]["body"], "Local body.\n", "{bare}");
    let remote = s.ok(
        "skills_load",
        json!({"names": ["personal:remote-notes"], "mode": "replace"}),
    );
    assert_eq!(
        remote["active_skills"][0]["body"], "Remote body.\n",
        "{remote}"
    );
    s.finish();
    // The listing marks the collision: the server's skill is shadowed by the local one.
    let listed = common::run(common::skillctl().args([
        "list",
        "--no-defaults",
        "--format",
        "json",
        "--mcp-server",
        &arg,
        "--root=personal=mcp:up",
        &local,
    ]));
    let json = listed.json();
    assert_eq!(
        json["shadowed"][0]["qualified_name"], "personal:remote-notes",
        "{json}"
    );
}

/// An active skill reads only the files of the entry held at its load, as they were: the
/// server's new entry (listed again when it came back) adds a file and changes another;
/// neither is served until the skill is loaded again.
#[test]
fn an_active_skill_reads_only_the_entry_held_at_its_load() {
    let f = Fixture::new();
    let before = [
        ("SKILL.md", SKILL_MD),
        ("references/guide.md", "The guide.\n"),
    ];
    let server = Server::new(
        &f,
        &[served("remote-notes", notes_frontmatter(), &before, &[])],
    );
    let arg = server.arg();
    let mut s = f.session(&["--no-watch", "--mcp-server", &arg]);
    s.ok("skills_load", json!({"names": ["up:remote-notes"]}));
    let read = s.ok("skills_read", json!({"path": "references/guide.md"}));
    assert_eq!(read["content"], "The guide.\n", "{read}");
    // The server goes away and comes back with a new entry: its source lists it again.
    let after = [
        ("SKILL.md", SKILL_MD),
        ("references/guide.md", "The new guide.\n"),
        ("references/added.md", "Added.\n"),
    ];
    server.serve(&[served("remote-notes", notes_frontmatter(), &after, &[])]);
    std::fs::write(&server.gone, "").unwrap();
    s.err("skills_read", json!({"path": "references/guide.md"}));
    std::fs::remove_file(&server.gone).unwrap();
    let (code, changed) = s.err("skills_read", json!({"path": "references/guide.md"}));
    assert_eq!(code, "SKILL_CHANGED", "{changed}");
    assert!(
        changed.contains("changed since the skill was loaded")
            && changed.contains("load the skill again"),
        "{changed}"
    );
    let (code, added) = s.err("skills_read", json!({"path": "references/added.md"}));
    assert_eq!(code, "SKILL_PATH_INVALID", "{added}");
    assert!(
        added.contains("the entry held since the skill was loaded does not list it"),
        "{added}"
    );
    // Loaded again, the skill holds the new entry: both read.
    s.ok("skills_load", json!({"names": ["up:remote-notes"]}));
    let read = s.ok("skills_read", json!({"path": "references/guide.md"}));
    assert_eq!(read["content"], "The new guide.\n", "{read}");
    let read = s.ok("skills_read", json!({"path": "references/added.md"}));
    assert_eq!(read["content"], "Added.\n", "{read}");
    s.finish();
}

/// Two servers serving one name no other origin holds: neither takes the bare name (which
/// ranks first is the host's placement, not a claim either can prove); each is reached by
/// its label; the bare name says which to choose; the listing marks both.
#[test]
fn two_servers_serving_one_name_leave_the_bare_name_to_neither() {
    let f = Fixture::new();
    let up = Server::new(
        &f,
        &[served(
            "remote-notes",
            notes_frontmatter(),
            &[("SKILL.md", SKILL_MD)],
            &[],
        )],
    );
    let other_md = SKILL_MD.replace("Remote body.", "Other body.");
    let other = Server {
        skills: f.path().join("other.json"),
        gone: f.path().join("other-gone"),
    };
    other.serve(&[served(
        "remote-notes",
        notes_frontmatter(),
        &[("SKILL.md", &other_md)],
        &[],
    )]);
    let (up_arg, other_arg) = (up.arg(), other.arg().replacen("up=", "other=", 1));
    let args = [
        "--no-watch",
        "--mcp-server",
        &up_arg,
        "--mcp-server",
        &other_arg,
    ];
    let mut s = f.session(&args);
    let (code, message) = s.err("skills_load", json!({"names": ["remote-notes"]}));
    assert_eq!(code, "SKILL_NOT_FOUND", "{message}");
    assert!(
        message.contains("no skill holds the bare name")
            && message.contains("other:remote-notes")
            && message.contains("up:remote-notes"),
        "{message}"
    );
    for (name, body) in [
        ("up:remote-notes", "Remote body.\n"),
        ("other:remote-notes", "Other body.\n"),
    ] {
        let loaded = s.ok("skills_load", json!({"names": [name], "mode": "replace"}));
        assert_eq!(loaded["active_skills"][0]["body"], body, "{loaded}");
    }
    s.finish();
    let listed = common::run(
        common::skillctl().args(
            ["list", "--no-defaults", "--format", "json"]
                .into_iter()
                .chain(args.into_iter().skip(1)),
        ),
    );
    let json = listed.json();
    assert!(
        !json["skills"].to_string().contains("remote-notes"),
        "{json}"
    );
    let shadowed = json["shadowed"].as_array().expect("shadowed");
    let marked: Vec<(&str, &str)> = shadowed
        .iter()
        .filter(|s| s["contested"] == true)
        .map(|s| {
            (
                s["qualified_name"].as_str().unwrap(),
                s["shadowed_by"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        marked,
        [
            ("other:remote-notes", "up:remote-notes"),
            ("up:remote-notes", "other:remote-notes")
        ],
        "{json}"
    );
}
