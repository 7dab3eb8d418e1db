//! MCP's skills extension as `skillctl mcp` serves it, over stdio with raw JSON-RPC lines:
//! the capability at every negotiated version, `skills/list` (paged, complete manifests
//! whose digests and sizes are those of what `resources/read` returns), `skills/get`
//! (`-32602` for a URI naming no served skill), `resources/directory/read`, the skills
//! left out (scripts, repaired frontmatter, files no read serves, hidden ones), and the
//! notifications that tell a client to fetch again. (Clients that are not ours are in
//! `cargo xtask mcp-interop`.)

mod common;

use common::{Fixture, Spawned, DEADLINE};
use serde_json::{json, Value};
use sha2::{Digest as _, Sha256};
use std::io::Write as _;

struct Mcp {
    proc: Spawned,
    next: u64,
    init: Value,
    /// Notifications met while waiting for a response, oldest first.
    seen: std::collections::VecDeque<Value>,
}

impl Mcp {
    fn start(f: &Fixture, layer: &str, version: &str, args: &[&str]) -> Mcp {
        let root = f.root_arg(layer);
        let mut proc = Spawned::start(
            common::skillctl()
                .args(["mcp", "--no-defaults", &root])
                .args(args)
                .current_dir(f.path()),
        );
        let stdin = proc.stdin.as_mut().expect("stdin");
        writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}})).expect("write");
        let mut mcp = Mcp {
            proc,
            next: 1,
            init: Value::Null,
            seen: std::collections::VecDeque::new(),
        };
        mcp.init = mcp.reply(0);
        mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        mcp
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.proc.stdin.as_mut().expect("stdin");
        writeln!(stdin, "{message}").expect("write");
        stdin.flush().expect("flush");
    }

    fn reply(&mut self, id: u64) -> Value {
        loop {
            let line = self.proc.lines.recv_timeout(DEADLINE).expect("a line");
            let v: Value = serde_json::from_str(&line).expect("JSON");
            if v["id"] == id {
                return v;
            }
            if v["method"].is_string() {
                self.seen.push_back(v);
            }
        }
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.reply(id)
    }

    /// The next notification `method`, met already or to come.
    fn notification(&mut self, method: &str) -> Value {
        while let Some(v) = self.seen.pop_front() {
            if v["method"] == method {
                return v;
            }
        }
        loop {
            let line = self
                .proc
                .lines
                .recv_timeout(DEADLINE)
                .expect("a notification");
            let v: Value = serde_json::from_str(&line).expect("JSON");
            if v["method"] == method {
                return v;
            }
        }
    }

    /// Every entry of `skills/list`, page after page.
    fn all_skills(&mut self) -> (Vec<Value>, usize) {
        let mut skills = Vec::new();
        let mut pages = 0;
        let mut params = json!({});
        loop {
            let page = self.call("skills/list", params);
            pages += 1;
            let result = &page["result"];
            assert_eq!(result["ttlMs"], 60_000, "{page}");
            assert_eq!(result["cacheScope"], "private", "{page}");
            skills.extend(result["skills"].as_array().expect("skills").iter().cloned());
            match result["nextCursor"].as_str() {
                Some(c) => params = json!({"cursor": c}),
                None => return (skills, pages),
            }
        }
    }

    fn end(mut self) {
        drop(self.proc.stdin.take());
        let (status, _) = self.proc.finish();
        assert!(status.success());
    }
}

fn digest(bytes: &[u8]) -> String {
    format!("sha256:{:x}", Sha256::digest(bytes))
}

fn names(skills: &[Value]) -> Vec<String> {
    let mut names: Vec<String> = skills
        .iter()
        .map(|s| s["frontmatter"]["name"].as_str().expect("name").to_owned())
        .collect();
    names.sort();
    names
}

/// Reads every file of an entry's manifest and checks its size and digest against the
/// bytes `resources/read` returns.
fn check_manifest(mcp: &mut Mcp, entry: &Value) -> usize {
    let files = entry["resources"].as_array().expect("a manifest");
    assert_eq!(files[0]["uri"], entry["uri"], "SKILL.md is listed: {entry}");
    for file in files {
        let read = mcp.call("resources/read", json!({"uri": file["uri"]}));
        let contents = &read["result"]["contents"][0];
        let bytes = match contents["text"].as_str() {
            Some(text) => text.as_bytes().to_vec(),
            None => {
                use base64::Engine as _;
                base64::engine::general_purpose::STANDARD
                    .decode(contents["blob"].as_str().expect("blob"))
                    .expect("base64")
            }
        };
        assert_eq!(file["size"], bytes.len(), "{file}");
        assert_eq!(file["digest"], digest(&bytes), "{file}");
    }
    files.len()
}

#[test]
fn the_extension_is_declared_at_every_negotiated_version() {
    let f = Fixture::new();
    f.skill("notes", "", "Notes.\n");
    for version in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let mcp = Mcp::start(&f, "personal", version, &[]);
        let result = &mcp.init["result"];
        assert_eq!(result["protocolVersion"], version);
        let caps = &result["capabilities"];
        assert_eq!(
            caps["extensions"]["io.modelcontextprotocol/skills"],
            json!({"directoryRead": true}),
            "{version}: {caps}"
        );
        assert!(caps["resources"].is_object());
        assert!(caps["completions"].is_object());
        assert!(caps["logging"].is_object());
        mcp.end();
    }
}

#[test]
fn entries_are_complete_manifests_of_what_reads_return() {
    let f = Fixture::new();
    f.skill(
        "notes",
        "license: MIT\nversion: 1.0\nmetadata:\n  release: '2'\nallowed-tools: Read\n",
        "Notes.\n",
    );
    f.file("notes", "references/guide.md", "Guide.\n");
    f.file("notes", "references/deep/more.md", "More.\n");
    f.file("notes", "assets/logo.bin", [0u8, 159, 146, 150]);
    let mut mcp = Mcp::start(&f, "personal", "2025-11-25", &[]);
    let (skills, _) = mcp.all_skills();
    assert_eq!(skills.len(), 1);
    let entry = &skills[0];
    assert_eq!(entry["uri"], "skill://personal/notes/SKILL.md");
    assert_eq!(
        entry["frontmatter"],
        json!({"name": "notes", "description": "The notes skill of the session tests; use it when they ask.",
               "license": "MIT", "version": 1.0, "metadata": {"release": "2"}, "allowed-tools": "Read"}),
        "the YAML 1.2 core-schema value, not the loader's source text"
    );
    assert_eq!(check_manifest(&mut mcp, entry), 4);
    let got = mcp.call(
        "skills/get",
        json!({"uri": "skill://personal/notes/SKILL.md"}),
    );
    assert_eq!(got["result"]["skill"], *entry, "{got}");
    assert_eq!(got["result"]["ttlMs"], 60_000);
    assert_eq!(got["result"]["cacheScope"], "private");
    for uri in [
        "skill://personal/other/SKILL.md",
        "skill://project/notes/SKILL.md",
        "skill://personal/notes/references/guide.md",
        "https://example.com/notes/SKILL.md",
    ] {
        let got = mcp.call("skills/get", json!({"uri": uri}));
        assert_eq!(got["error"]["code"], -32602, "{uri}: {got}");
    }
    mcp.end();
}

#[test]
fn directories_of_a_served_skill_are_read() {
    let f = Fixture::new();
    f.skill("notes", "", "Notes.\n");
    f.file("notes", "references/guide.md", "Guide.\n");
    f.file("notes", "references/deep/more.md", "More.\n");
    let mut mcp = Mcp::start(&f, "personal", "2025-11-25", &[]);
    let children = |v: &Value| -> Vec<(String, String)> {
        v["result"]["resources"]
            .as_array()
            .expect("resources")
            .iter()
            .map(|r| {
                (
                    r["uri"].as_str().unwrap().to_owned(),
                    r["mimeType"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    let root = mcp.call(
        "resources/directory/read",
        json!({"uri": "skill://personal/notes"}),
    );
    assert_eq!(
        children(&root),
        [
            (
                "skill://personal/notes/SKILL.md".into(),
                "text/markdown".into()
            ),
            (
                "skill://personal/notes/references".into(),
                "inode/directory".into()
            ),
        ]
    );
    let refs = mcp.call(
        "resources/directory/read",
        json!({"uri": "skill://personal/notes/references"}),
    );
    assert_eq!(
        children(&refs),
        [
            (
                "skill://personal/notes/references/deep".into(),
                "inode/directory".into()
            ),
            (
                "skill://personal/notes/references/guide.md".into(),
                "text/markdown".into()
            ),
        ]
    );
    for uri in [
        "skill://personal/notes/SKILL.md",
        "skill://personal/notes/assets",
        "skill://personal/notes/",
        "skill://personal/nothing",
    ] {
        let read = mcp.call("resources/directory/read", json!({"uri": uri}));
        assert_eq!(read["error"]["code"], -32602, "{uri}: {read}");
    }
    mcp.end();
}

#[test]
fn skills_that_cannot_be_served_whole_or_are_hidden_are_left_out() {
    let f = Fixture::new();
    f.skill("plain", "", "Plain.\n");
    f.skill("scripted", "", "Runs.\n");
    f.file("scripted", "scripts/run.sh", "echo run\n");
    f.skill("repaired", "", "Repaired.\n");
    std::fs::write(
        f.root().join("repaired/SKILL.md"),
        "---\nname: repaired\ndescription: Fixes: things the loader repairs\n---\nBody.\n",
    )
    .unwrap();
    f.skill("manual", "disable-model-invocation: true\n", "Manual.\n");
    f.skill("elsewhere", "scope:\n  agents: [other]\n", "Elsewhere.\n");
    f.skill("big", "", "Big.\n");
    for i in 0..512 {
        f.file("big", &format!("references/r{i:03}.md"), "x\n");
    }
    let mut mcp = Mcp::start(&f, "personal", "2025-11-25", &["--agent", "me"]);
    let (skills, _) = mcp.all_skills();
    assert_eq!(names(&skills), ["plain"]);
    for name in ["scripted", "repaired", "manual", "elsewhere", "big"] {
        let uri = format!("skill://personal/{name}/SKILL.md");
        let got = mcp.call("skills/get", json!({"uri": uri}));
        assert_eq!(got["error"]["code"], -32602, "{name}: {got}");
    }
    mcp.end();
}

#[test]
fn serve_scripts_serves_a_trusted_layer_s_skills_whole() {
    let f = Fixture::new();
    f.skill("scripted", "", "Runs.\n");
    f.file("scripted", "scripts/run.sh", "echo run\n");
    let mut mcp = Mcp::start(&f, "personal", "2025-11-25", &["--serve-scripts"]);
    let (skills, _) = mcp.all_skills();
    assert_eq!(names(&skills), ["scripted"]);
    assert_eq!(check_manifest(&mut mcp, &skills[0]), 2);
    mcp.end();
    // The project layer is not trusted to run scripts: its skills with scripts stay out.
    let mut mcp = Mcp::start(&f, "project", "2025-11-25", &["--serve-scripts"]);
    let (skills, _) = mcp.all_skills();
    assert!(skills.is_empty(), "{skills:?}");
    let read = mcp.call(
        "resources/read",
        json!({"uri": "skill://project/scripted/scripts/run.sh"}),
    );
    assert!(read["error"].is_object(), "{read}");
    mcp.end();
}

#[test]
fn skills_list_is_paged_and_never_splits_an_entry() {
    let f = Fixture::new();
    for i in 0..120 {
        let name = format!("s{i:03}");
        f.skill(&name, "", "Body.\n");
        f.file(&name, "references/a.md", "a\n");
    }
    let mut mcp = Mcp::start(&f, "personal", "2025-11-25", &[]);
    let (skills, pages) = mcp.all_skills();
    assert_eq!(pages, 3);
    assert_eq!(skills.len(), 120);
    assert!(skills
        .iter()
        .all(|s| s["resources"].as_array().map(Vec::len) == Some(2)));
    let bad = mcp.call("skills/list", json!({"cursor": "zz"}));
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    mcp.end();
}

#[test]
fn a_change_is_announced_and_the_entry_fetched_again_shows_it() {
    let f = Fixture::new();
    f.skill("notes", "", "Notes.\n");
    let guide = f.file("notes", "references/guide.md", "One.\n");
    let mut mcp = Mcp::start(&f, "personal", "2025-11-25", &[]);
    let uri = "skill://personal/notes/SKILL.md";
    let before = mcp.call("skills/get", json!({"uri": uri}));
    std::fs::write(
        f.root().join("notes/SKILL.md"),
        "---\nname: notes\ndescription: Edited notes; use them when asked.\n---\nEdited.\n",
    )
    .unwrap();
    std::fs::write(&guide, "Two, longer.\n").unwrap();
    mcp.seen.clear();
    mcp.notification("notifications/resources/list_changed");
    let after = mcp.call("skills/get", json!({"uri": uri}));
    assert_ne!(before["result"]["skill"], after["result"]["skill"]);
    assert_eq!(
        after["result"]["skill"]["frontmatter"]["description"],
        "Edited notes; use them when asked."
    );
    let entry = after["result"]["skill"].clone();
    check_manifest(&mut mcp, &entry);
    mcp.end();
}

#[test]
fn completion_offers_what_the_session_may_see() {
    let f = Fixture::new();
    f.skill("notes", "", "Notes.\n");
    f.file("notes", "references/guide.md", "Guide.\n");
    f.file("notes", "scripts/run.sh", "echo run\n");
    f.skill("norse", "", "Norse.\n");
    f.skill("elsewhere", "scope:\n  agents: [other]\n", "Elsewhere.\n");
    let mut mcp = Mcp::start(&f, "personal", "2025-11-25", &["--agent", "me"]);
    let template = json!({"type": "ref/resource", "uri": "skill://{layer}/{name}/{+path}"});
    let complete = |mcp: &mut Mcp, reference: &Value, name: &str, value: &str, context: Value| {
        mcp.call(
            "completion/complete",
            json!({"ref": reference, "argument": {"name": name, "value": value}, "context": {"arguments": context}}),
        )
    };
    let values = |v: &Value| v["result"]["completion"]["values"].clone();
    let layer = complete(&mut mcp, &template, "layer", "", json!({}));
    assert_eq!(values(&layer), json!(["personal"]), "{layer}");
    let names = complete(
        &mut mcp,
        &template,
        "name",
        "no",
        json!({"layer": "personal"}),
    );
    assert_eq!(values(&names), json!(["norse", "notes"]), "{names}");
    assert_eq!(names["result"]["completion"]["total"], 2);
    let hidden = complete(&mut mcp, &template, "name", "else", json!({}));
    assert_eq!(
        values(&hidden),
        json!([]),
        "a skill the session may not see: {hidden}"
    );
    let paths = complete(
        &mut mcp,
        &template,
        "path",
        "",
        json!({"layer": "personal", "name": "notes"}),
    );
    assert_eq!(
        values(&paths),
        json!(["SKILL.md", "references/guide.md"]),
        "{paths}"
    );
    let prompt = json!({"type": "ref/prompt", "name": "notes"});
    let free = complete(&mut mcp, &prompt, "arguments", "x", json!({}));
    assert_eq!(values(&free), json!([]), "{free}");
    for (reference, argument) in [
        (
            json!({"type": "ref/prompt", "name": "missing"}),
            "arguments",
        ),
        (
            json!({"type": "ref/resource", "uri": "file:///{path}"}),
            "path",
        ),
        (template.clone(), "other"),
    ] {
        let refused = complete(&mut mcp, &reference, argument, "", json!({}));
        assert_eq!(
            refused["error"]["code"], -32602,
            "{reference} {argument}: {refused}"
        );
    }
    mcp.end();
}

#[test]
fn the_library_s_logs_reach_a_client_at_the_level_it_set() {
    let f = Fixture::new();
    f.skill("scripted", "", "Runs.\n");
    f.file("scripted", "scripts/run.sh", "echo run\n");
    let mut mcp = Mcp::start(&f, "personal", "2025-11-25", &[]);
    let set = mcp.call("logging/setLevel", json!({"level": "warning"}));
    assert_eq!(set["result"], json!({}), "{set}");
    mcp.call("skills/list", json!({}));
    let message = mcp.notification("notifications/message");
    let params = &message["params"];
    assert_eq!(params["level"], "warning", "{message}");
    assert_eq!(params["logger"], "skills_mcp::extension", "{message}");
    assert!(
        params["data"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("not served")),
        "{message}"
    );
    assert!(params["data"]["fields"]["reason"]
        .as_str()
        .is_some_and(|r| r.contains("scripts/run.sh")));
    mcp.end();
}

/// Files beside `SKILL.md`, `references/` and `assets/` (a `LICENSE.txt`, `templates/`)
/// are served by the one listing rule, through every surface alike: the entry's manifest,
/// `resources/read`, `resources/directory/read`, `resources/list`. A dot-file or a
/// dot-folder's file is never served, nor does it keep the skill out.
#[test]
fn other_files_are_served_by_the_listing_rule_and_dot_files_never() {
    let f = Fixture::new();
    f.skill("licensed", "", "Licensed.\n");
    f.file("licensed", "LICENSE.txt", "MIT\n");
    f.file("licensed", "templates/form.md", "A form.\n");
    f.file("licensed", ".env", "TOKEN=secret\n");
    f.file("licensed", ".git/config", "[core]\n");
    f.file("licensed", "templates/.draft.md", "Draft.\n");
    let mut mcp = Mcp::start(&f, "personal", "2025-11-25", &[]);
    let (skills, _) = mcp.all_skills();
    assert_eq!(names(&skills), ["licensed"]);
    let uris: Vec<&str> = skills[0]["resources"]
        .as_array()
        .expect("a manifest")
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    let base = "skill://personal/licensed";
    assert_eq!(
        uris,
        [
            format!("{base}/SKILL.md"),
            format!("{base}/LICENSE.txt"),
            format!("{base}/templates/form.md"),
        ]
    );
    assert_eq!(check_manifest(&mut mcp, &skills[0]), 3);
    for hidden in [".env", ".git/config", "templates/.draft.md"] {
        let read = mcp.call("resources/read", json!({"uri": format!("{base}/{hidden}")}));
        assert!(read["error"].is_object(), "{hidden}: {read}");
    }
    let root = mcp.call("resources/directory/read", json!({"uri": base}));
    let children: Vec<&str> = root["result"]["resources"]
        .as_array()
        .expect("children")
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        children,
        [
            format!("{base}/LICENSE.txt"),
            format!("{base}/SKILL.md"),
            format!("{base}/templates"),
        ]
    );
    let listed = mcp.call("resources/list", json!({}));
    let offered = listed["result"]["resources"].to_string();
    assert!(
        offered.contains(&format!("{base}/LICENSE.txt")),
        "{offered}"
    );
    assert!(
        !offered.contains(".env") && !offered.contains(".git"),
        "{offered}"
    );
    mcp.end();
}
