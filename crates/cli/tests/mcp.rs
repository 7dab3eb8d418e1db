//! `skillctl mcp` over stdio with raw JSON-RPC lines: the handshake, the runtime tools
//! through the protocol layer (failures as tool errors starting with the stable code),
//! resources that never serve scripts, prompts that do not activate, a notification when a
//! skill appears, and the end of input ending the session with its skills deactivated and
//! audited. (The official SDKs are exercised by `cargo xtask mcp-interop`.)

mod common;

use common::{Fixture, Spawned, DEADLINE};
use serde_json::{json, Value};
use std::io::Write as _;

struct Mcp {
    proc: Spawned,
    next: u64,
}

/// The skill `holder`, whose `scripts/hold.sh` writes `started` to the file it is given
/// (a FIFO: the test's read says the script has started) and then runs for ten minutes.
fn holder(f: &Fixture) {
    f.skill("holder", "", "Holds.\n");
    f.file("holder", "scripts/hold.sh", common::HOLD_SCRIPT);
}

/// The names a `prompts/list` answer lists.
fn prompt_names(listed: &Value) -> Vec<&str> {
    listed["result"]["prompts"]
        .as_array()
        .expect("prompts")
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect()
}

impl Mcp {
    fn start(f: &Fixture, args: &[&str]) -> Mcp {
        let root = f.root_arg("personal");
        let mut proc = Spawned::start(
            common::skillctl()
                .args(["mcp", "--no-defaults", &root])
                .args(args)
                .current_dir(f.path()),
        );
        let stdin = proc.stdin.as_mut().expect("stdin");
        writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}})).expect("write");
        let mut mcp = Mcp { proc, next: 1 };
        let init = mcp.reply(0);
        assert!(init["result"]["instructions"]
            .as_str()
            .expect("instructions")
            .contains("<available_skills>"));
        mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        mcp
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.proc.stdin.as_mut().expect("stdin");
        writeln!(stdin, "{message}").expect("write");
        stdin.flush().expect("flush");
    }

    /// The response to `id`; notifications met on the way are returned by `notification`.
    fn reply(&mut self, id: u64) -> Value {
        loop {
            let line = self.proc.lines.recv_timeout(DEADLINE).expect("a line");
            let v: Value = serde_json::from_str(&line).expect("JSON");
            if v["id"] == id {
                return v;
            }
        }
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.reply(id)
    }

    fn tool(&mut self, name: &str, arguments: Value) -> Value {
        self.call("tools/call", json!({"name": name, "arguments": arguments}))["result"].clone()
    }

    fn notification(&mut self, method: &str) {
        loop {
            let line = self
                .proc
                .lines
                .recv_timeout(DEADLINE)
                .expect("a notification");
            let v: Value = serde_json::from_str(&line).expect("JSON");
            if v["method"] == method {
                return;
            }
        }
    }
}

#[test]
fn the_runtime_tools_resources_and_prompts_over_mcp() {
    let f = Fixture::new();
    f.skill(
        "reporter",
        "argument-hint: the period\n",
        "Write the report.\n",
    );
    f.file("reporter", "references/guide.md", "Guide.\n");
    f.file("reporter", "scripts/run.sh", "echo run\n");
    let audit = f.path().join("audit.jsonl");
    let audit_arg = format!("--audit={}", audit.display());
    let mut mcp = Mcp::start(&f, &[&audit_arg]);

    let tools = mcp.call("tools/list", json!({}));
    let mut names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().expect("name"))
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "skill",
            "skills_list",
            "skills_load",
            "skills_read",
            "skills_run_script",
            "skills_search",
            "skills_unload"
        ]
    );

    let loaded = mcp.tool("skills_load", json!({"names": ["reporter"]}));
    assert_eq!(loaded["isError"], false, "{loaded}");
    assert_eq!(
        loaded["structuredContent"]["active_skills"][0]["name"],
        "reporter"
    );
    let refused = mcp.tool("skills_read", json!({"path": "scripts/run.sh"}));
    assert_eq!(refused["isError"], true);
    assert!(refused["content"][0]["text"]
        .as_str()
        .expect("text")
        .starts_with("SKILL_SCRIPT_NOT_READABLE"));
    let host_only = mcp.call(
        "tools/call",
        json!({"name": "register_plugin", "arguments": {"id": "x", "root": "/"}}),
    );
    assert!(host_only.get("error").is_some(), "{host_only}");

    let read = mcp.call(
        "resources/read",
        json!({"uri": "skill://personal/reporter/references/guide.md"}),
    );
    assert_eq!(read["result"]["contents"][0]["text"], "Guide.\n");
    let script = mcp.call(
        "resources/read",
        json!({"uri": "skill://personal/reporter/scripts/run.sh"}),
    );
    assert!(script.get("error").is_some(), "{script}");

    let prompt = mcp.call(
        "prompts/get",
        json!({"name": "reporter", "arguments": {"arguments": "weekly"}}),
    );
    let text = prompt["result"]["messages"][0]["content"]["text"]
        .as_str()
        .expect("text");
    assert!(
        text.contains("Write the report.") && text.contains("weekly"),
        "{text}"
    );

    f.skill("newcomer", "", "New.\n");
    mcp.notification("notifications/tools/list_changed");

    let (status, _) = mcp.proc.finish();
    assert!(status.success());
    let events: Vec<Value> = std::fs::read_to_string(&audit)
        .expect("audit")
        .lines()
        .map(|l| serde_json::from_str(l).expect("line"))
        .collect();
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().expect("event"))
        .collect();
    assert!(
        kinds.contains(&"skill_activated") && kinds.contains(&"script_read_blocked"),
        "{kinds:?}"
    );
    assert_eq!(kinds.last(), Some(&"skill_deactivated"), "{kinds:?}");
    assert!(
        events.iter().any(|e| e["tool_name"] == "prompts/get"),
        "prompts/get is audited"
    );
    assert!(
        events.iter().any(|e| e["tool_name"] == "resources/read"),
        "resources/read is audited"
    );
}

// Regression (issue 38): `skillctl session` recorded each option loosening the defaults
// as `policy_override`, `skillctl mcp` none. Each MCP session records them as it starts
// (the executor's one home for that record; over HTTP: `crates/mcp/tests/http.rs`).
#[test]
fn the_options_that_loosen_the_policy_are_audited_over_stdio() {
    let f = Fixture::new();
    let audit = f.path().join("audit.jsonl");
    let audit_arg = format!("--audit={}", audit.display());
    let mut mcp = Mcp::start(
        &f,
        &[
            &audit_arg,
            "--trust",
            "project",
            "--allowed-tools-mode",
            "preapprove",
            "--allow-skill-writes",
        ],
    );
    let (status, _) = mcp.proc.finish();
    assert!(status.success());
    let events: Vec<Value> = std::fs::read_to_string(&audit)
        .expect("audit")
        .lines()
        .map(|l| serde_json::from_str(l).expect("line"))
        .collect();
    let options: Vec<&str> = events
        .iter()
        .filter(|e| e["event"] == "policy_override")
        .map(|e| e["option"].as_str().expect("the option"))
        .collect();
    assert_eq!(
        options,
        [
            "--trust project",
            "--allow-skill-writes",
            "--allowed-tools-mode preapprove"
        ],
        "{events:?}"
    );
}

/// Claude Code's invocation fields over MCP: a `disable-model-invocation` skill is not among
/// what the model sees (the `skill` tool's list) but is offered to the user as a prompt; a
/// `user-invocable: false` skill is not offered as a prompt.
#[test]
fn prompts_follow_who_may_invoke_a_skill() {
    let f = Fixture::new();
    f.skill(
        "user-only",
        "disable-model-invocation: true\n",
        "For users.\n",
    );
    f.skill("model-only", "user-invocable: false\n", "For the model.\n");
    f.skill("anyone", "", "For all.\n");
    let mut mcp = Mcp::start(&f, &[]);
    let prompts = mcp.call("prompts/list", json!({}));
    let mut names: Vec<&str> = prompts["result"]["prompts"]
        .as_array()
        .expect("prompts")
        .iter()
        .map(|p| p["name"].as_str().expect("name"))
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["anyone", "user-only"]);
    let tools = mcp.call("tools/list", json!({}));
    let skill_tool = tools["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["name"] == "skill")
        .expect("the skill tool")
        .clone();
    let description = skill_tool["description"].as_str().unwrap();
    assert!(description.contains("model-only") && description.contains("anyone"));
    assert!(!description.contains("user-only"), "{description}");
}

/// A token file of blanks only would be an empty token, which admits any request that
/// sends `Authorization: Bearer ` with nothing after it: refused before anything listens.
#[test]
fn a_blank_token_file_is_refused_before_anything_listens() {
    let f = Fixture::new();
    let token = f.path().join("token");
    std::fs::write(&token, " \n\t\n").expect("write the token file");
    let out = common::skillctl()
        .args(["mcp", "--no-defaults", &f.root_arg("personal")])
        .args(["--http", "127.0.0.1:0", "--token-file"])
        .arg(&token)
        .output()
        .expect("skillctl runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(!stderr.contains("listening"), "{stderr}");
    assert!(
        stderr.contains("is empty or blank") && stderr.contains("Bearer"),
        "{stderr}"
    );
}

// Regression (issue 38): `skillctl mcp --http 0.0.0.0:PORT` with no `--token-file` started
// silently, and a peer that sent `Host: localhost` got a session. An address beyond
// loopback needs a token or `--allow-unauthenticated-network`, refused before anything
// listens.
#[test]
fn a_network_address_without_a_token_is_refused_before_anything_listens() {
    let f = Fixture::new();
    // Spawned: a server that listens is killed when the test ends, not waited for.
    let mut proc = Spawned::start(
        common::skillctl()
            .args(["mcp", "--no-defaults", &f.root_arg("personal")])
            .args(["--http", "0.0.0.0:0"]),
    );
    let (status, stderr) = proc.finish();
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(!stderr.contains("listening"), "{stderr}");
    assert!(
        stderr.contains("without a bearer token")
            && stderr.contains("--allow-unauthenticated-network"),
        "{stderr}"
    );
}

// Regression (attack review): `prompts/get` read a name as `<layer>.<name>` before it looked
// for a skill listed under it, so the prompt a project skill named `personal.deploy` was
// listed as served `personal:deploy` instead, and two skills could share one prompt name.
#[test]
fn a_prompt_name_stands_for_the_one_skill_listed_under_it() {
    let f = Fixture::new();
    f.skill("deploy", "", "Personal deploy.\n");
    let project = f.path().join("project");
    for (name, body) in [
        ("deploy", "Project deploy."),
        ("personal.deploy", "The dotted one."),
        ("project.deploy", "Another dotted one."),
    ] {
        let dir = project.join(name);
        std::fs::create_dir_all(&dir).expect("a skill folder");
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: {body} Use when testing.\n---\n{body}\n"),
        )
        .expect("a skill");
    }
    let root = format!("project={}", project.display());
    let mut mcp = Mcp::start(&f, &["--root", &root]);
    let listed = mcp.call("prompts/list", json!({}));
    let names = prompt_names(&listed);
    assert!(
        names.contains(&"deploy") && names.contains(&"personal.deploy"),
        "{names:?}"
    );
    // `project.deploy` would name the shadowed `project:deploy` and the skill of that name.
    assert!(!names.contains(&"project.deploy"), "{names:?}");
    let dotted = mcp.call("prompts/get", json!({"name": "personal.deploy"}));
    let text = dotted["result"]["messages"][0]["content"]["text"]
        .as_str()
        .expect("text");
    assert!(text.contains("The dotted one."), "{text}");
    let shared = mcp.call("prompts/get", json!({"name": "project.deploy"}));
    assert!(shared.get("error").is_some(), "{shared}");
    let (status, _) = mcp.proc.finish();
    assert!(status.success());
}

// Regression (attack review): a client that closed stdin while a script ran got its skill
// deactivated with the script still running, and the process could exit before the run
// was recorded. The session's end now stops the script and records its run first.
#[test]
fn a_script_running_when_the_client_goes_is_stopped_and_recorded_before_deactivation() {
    let f = Fixture::new();
    holder(&f);
    let fifo = common::fifo(&f, "started");
    let audit = f.path().join("audit.jsonl");
    let audit_arg = format!("--audit={}", audit.display());
    let mut mcp = Mcp::start(&f, &[&audit_arg]);
    let loaded = mcp.tool("skills_load", json!({"names": ["holder"]}));
    assert_eq!(loaded["isError"], false, "{loaded}");
    mcp.send(&json!({"jsonrpc": "2.0", "id": 99, "method": "tools/call", "params": {"name": "skills_run_script", "arguments": {"path": "scripts/hold.sh", "args": [fifo]}}}));
    // The script has started once it has written to the FIFO.
    let said = std::fs::read_to_string(&fifo).expect("the script writes");
    assert_eq!(said, "started\n");
    let (status, _) = mcp.proc.finish();
    assert!(status.success());
    common::assert_in_audit(
        &audit,
        &["script_started", "script_executed", "skill_deactivated"],
        "",
    );
}

// Regression (attack): the session's end ran wherever rmcp dropped the server, and the
// process gave the runtime 5 s before it exited: a post hook that ran longer was killed
// unrecorded (no `hook_executed`), on SIGTERM and at the end of input while a script ran.
// The transport now waits for the end before it returns. The hook runs longer than those
// 5 s: the process must wait for it.
#[test]
fn the_end_of_a_session_waits_for_its_post_hooks_and_their_records() {
    for ending in ["SIGTERM", "end of input while a script runs"] {
        let f = Fixture::new();
        let dir = f.skill("hooky", "hooks:\n  post: [scripts/post.sh]\n", "Hooks.\n");
        f.file(
            "hooky",
            "scripts/post.sh",
            "sleep 6\necho done > post.out\n",
        );
        f.file("hooky", "scripts/hold.sh", common::HOLD_SCRIPT);
        let audit = f.path().join("audit.jsonl");
        let audit_arg = format!("--audit={}", audit.display());
        let mut mcp = Mcp::start(&f, &[&audit_arg, "--trust=personal"]);
        let loaded = mcp.tool("skills_load", json!({"names": ["hooky"]}));
        assert_eq!(loaded["isError"], false, "{loaded}");
        let (status, stderr) = if ending == "SIGTERM" {
            mcp.proc.signal_and_finish("TERM")
        } else {
            let fifo = common::fifo(&f, "started");
            mcp.send(&json!({"jsonrpc": "2.0", "id": 99, "method": "tools/call", "params": {"name": "skills_run_script", "arguments": {"path": "scripts/hold.sh", "args": [fifo]}}}));
            let said = std::fs::read_to_string(&fifo).expect("the script writes");
            assert_eq!(said, "started\n");
            mcp.proc.finish()
        };
        assert!(status.success(), "{ending}: {status:?} {stderr}");
        let kinds = common::assert_in_audit(
            &audit,
            &["skill_deactivated", "hook_started", "hook_executed"],
            ending,
        );
        let out = std::fs::read_to_string(dir.join("post.out"));
        assert_eq!(out.ok().as_deref(), Some("done\n"), "{ending}: {kinds:?}");
    }
}

// Regression (attack): one session ran scripts at once without bound: 700 pipelined
// `skills_run_script` calls made 513 processes and 2,058 threads, and a `skills_list` of
// the session waited 8.6 s for a blocking thread. Past the most running at once, a call
// that may run a program is answered at once with `MCP_BUSY`; the others still run.
#[test]
fn a_session_runs_a_bounded_number_of_programs_at_once() {
    let most = skills_mcp::MAX_PROGRAM_CALLS;
    let f = Fixture::new();
    holder(&f);
    let mut mcp = Mcp::start(&f, &[]);
    let loaded = mcp.tool("skills_load", json!({"names": ["holder"]}));
    assert_eq!(loaded["isError"], false, "{loaded}");
    let fifos: Vec<std::path::PathBuf> = (0..most)
        .map(|i| common::fifo(&f, &format!("started{i}")))
        .collect();
    for (i, fifo) in fifos.iter().enumerate() {
        mcp.send(&json!({"jsonrpc": "2.0", "id": 1000 + i, "method": "tools/call", "params": {"name": "skills_run_script", "arguments": {"path": "scripts/hold.sh", "args": [fifo]}}}));
    }
    // Each script has started once it has written to its FIFO.
    for fifo in &fifos {
        assert_eq!(
            std::fs::read_to_string(fifo).expect("a script writes"),
            "started\n"
        );
    }
    let file = f.path().join("one-more");
    let refused = mcp.tool(
        "skills_run_script",
        json!({"path": "scripts/hold.sh", "args": [file]}),
    );
    assert_eq!(refused["isError"], true, "{refused}");
    let text = refused["content"][0]["text"].as_str().expect("text");
    assert!(
        text.starts_with(&format!("MCP_BUSY: {most} calls")),
        "{text}"
    );
    assert!(!file.exists(), "the script past the bound ran");
    let listed = mcp.tool("skills_list", json!({}));
    assert_eq!(listed["isError"], false, "{listed}");
    let (status, _) = mcp.proc.finish();
    assert!(status.success());
}

// Regression (attack review): resources/list wrote file names raw into URIs (`#` began a
// fragment for a client that parses them), and the encoded form named nothing.
#[test]
fn a_resource_uri_is_percent_encoded_and_reads_back() {
    let f = Fixture::new();
    f.skill("notes", "", "Notes.\n");
    f.file("notes", "references/my notes #1.md", "Hash.\n");
    let mut mcp = Mcp::start(&f, &[]);
    let listed = mcp.call("resources/list", json!({}));
    let uris: Vec<&str> = listed["result"]["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .filter_map(|r| r["uri"].as_str())
        .collect();
    let uri = "skill://personal/notes/references/my%20notes%20%231.md";
    assert!(uris.contains(&uri), "{uris:?}");
    let read = mcp.call("resources/read", json!({"uri": uri}));
    assert_eq!(read["result"]["contents"][0]["text"], "Hash.\n", "{read}");
    let (status, _) = mcp.proc.finish();
    assert!(status.success());
}

// Regression (attack): resources/list offered every file under references/ and assets/,
// reads of which were then refused: a link into scripts/, a link out of the folder, a
// file over the read limit. Only what a read serves is listed, and each one listed reads.
#[test]
fn resources_list_offers_only_what_a_read_serves() {
    let f = Fixture::new();
    let dir = f.skill("notes", "", "Notes.\n");
    f.file("notes", "references/ok.md", "Fine.\n");
    f.file("notes", "scripts/run.sh", "echo run\n");
    f.file("notes", "references/big.txt", "x".repeat(200_001));
    std::fs::write(f.path().join("outside.txt"), "Outside.\n").unwrap();
    std::os::unix::fs::symlink("../scripts/run.sh", dir.join("references/run.md")).unwrap();
    std::fs::create_dir_all(dir.join("assets")).unwrap();
    // Regression (review): links that come back inside the folder, but by an absolute
    // path or through `..` above it, which the read (beneath the folder) refuses.
    std::os::unix::fs::symlink(dir.join("references/ok.md"), dir.join("references/abs.md"))
        .unwrap();
    std::os::unix::fs::symlink("../../notes/references/ok.md", dir.join("assets/climb.md"))
        .unwrap();
    std::os::unix::fs::symlink("ok.md", dir.join("references/rel.md")).unwrap();
    std::os::unix::fs::symlink(f.path().join("outside.txt"), dir.join("assets/out.txt")).unwrap();
    let mut mcp = Mcp::start(&f, &[]);
    let listed = mcp.call("resources/list", json!({}));
    let uris: Vec<String> = listed["result"]["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .filter_map(|r| r["uri"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(
        uris,
        [
            "skill://personal/notes/SKILL.md",
            "skill://personal/notes/references/ok.md",
            "skill://personal/notes/references/rel.md"
        ],
        "{listed}"
    );
    for uri in &uris {
        let read = mcp.call("resources/read", json!({"uri": uri}));
        assert!(read["result"]["contents"][0]["text"].is_string(), "{read}");
    }
    let (status, _) = mcp.proc.finish();
    assert!(status.success());
}

// Regression (second review): resources/list answered every file of every skill at once,
// opening each one: 20 skills of 10,000 files made a 17 MB answer. It is paged by skill
// (about 1,000 resources a page, a skill never split) with a cursor.
#[test]
fn resources_list_is_paged_by_skill() {
    let f = Fixture::new();
    for (name, files) in [("alpha", 600), ("beta", 600), ("gamma", 1)] {
        f.skill(name, "", "Body.\n");
        for i in 0..files {
            f.file(name, &format!("references/r{i:04}.md"), "x\n");
        }
    }
    let mut mcp = Mcp::start(&f, &[]);
    let uris = |page: &serde_json::Value| -> Vec<String> {
        page["result"]["resources"]
            .as_array()
            .expect("resources")
            .iter()
            .filter_map(|r| r["uri"].as_str().map(str::to_owned))
            .collect()
    };
    let first = mcp.call("resources/list", json!({}));
    let cursor = first["result"]["nextCursor"]
        .as_str()
        .expect("a cursor")
        .to_owned();
    let one = uris(&first);
    assert_eq!(one.len(), 1202, "{}", one.len());
    assert!(one.iter().all(|u| !u.contains("/gamma/")));
    let second = mcp.call("resources/list", json!({"cursor": cursor}));
    assert!(second["result"].get("nextCursor").is_none(), "{second}");
    assert_eq!(
        uris(&second),
        [
            "skill://personal/gamma/SKILL.md",
            "skill://personal/gamma/references/r0000.md"
        ]
    );
    let bad = mcp.call("resources/list", json!({"cursor": "x"}));
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    let (status, _) = mcp.proc.finish();
    assert!(status.success());
}

// Regression (attack): another tenant's skill of a higher layer took a prompt's name: this
// session's `deploy` was listed as `project.deploy`, which told it a hidden `deploy` ranks
// above its own. A skill it may not see takes no name from one it may.
#[test]
fn a_hidden_skill_takes_no_prompt_name_from_a_visible_one() {
    let f = Fixture::new();
    let acme = f.skill("acme-deploy", "", "");
    std::fs::write(
        acme.join("SKILL.md"),
        "---\nname: deploy\ndescription: Acme's deploy. Use when testing.\nscope:\n  tenants:\n    - acme\n---\nAcme's.\n",
    )
    .expect("a skill");
    let dir = f.path().join("project/deploy");
    std::fs::create_dir_all(&dir).expect("a skill folder");
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: deploy\ndescription: Project deploy. Use when testing.\n---\nProject deploy.\n",
    )
    .expect("a skill");
    let root = format!("project={}", f.path().join("project").display());
    let mut mcp = Mcp::start(&f, &["--root", &root, "--tenant", "globex"]);
    let listed = mcp.call("prompts/list", json!({}));
    let names = prompt_names(&listed);
    assert_eq!(names, ["deploy"], "{listed}");
    let got = mcp.call("prompts/get", json!({"name": "deploy"}));
    let text = got["result"]["messages"][0]["content"]["text"]
        .as_str()
        .expect("text");
    assert!(text.contains("Project deploy."), "{text}");
    let (status, _) = mcp.proc.finish();
    assert!(status.success());
}

// Regression (review): two skills of one layer share a qualified name; the one that does
// not hold the name is listed as `<layer>.<name>`, and its prompt served the other one's
// instructions (looked up again by the shared qualified name).
#[test]
fn a_prompt_of_a_shadowed_skill_of_the_same_layer_serves_that_skill() {
    let f = Fixture::new();
    for (folder, extra, body) in [
        ("deploy-a", "", "The first."),
        ("deploy-b", "priority: 5\n", "The second."),
    ] {
        let dir = f.skill(folder, "", "");
        std::fs::write(
            dir.join("SKILL.md"),
            format!(
                "---\nname: deploy\ndescription: {body} Use when testing.\n{extra}---\n{body}\n"
            ),
        )
        .expect("a skill");
    }
    let mut mcp = Mcp::start(&f, &[]);
    for (prompt, body) in [("deploy", "The second."), ("personal.deploy", "The first.")] {
        let got = mcp.call("prompts/get", json!({"name": prompt}));
        let text = got["result"]["messages"][0]["content"]["text"]
            .as_str()
            .expect("text");
        assert!(text.contains(body), "{prompt}: {text}");
    }
    let (status, _) = mcp.proc.finish();
    assert!(status.success());
}
