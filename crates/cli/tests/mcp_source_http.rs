//! Skills taken from an MCP server over streamable HTTP (`--mcp-server LABEL=http://...`,
//! `--mcp-token-file LABEL=FILE`, `register_plugin` with a URL): the server is our own
//! `skillctl mcp --http` on loopback, which serves the skills extension and can require a
//! bearer token. Listing, loading and verified reads; a change on the server republished;
//! a token required and sent, never shown; the token file's rule; `http://` only on
//! loopback; a URL over the wire taken and a command not; the server gone and back.

mod common;

use common::Fixture;
use serde_json::{json, Value};
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

const TOKEN: &str = "tok-3f9a1c77e2";

/// `skillctl mcp --http` serving `dir` as the personal layer on loopback.
struct HttpServer {
    child: Child,
    addr: String,
}

impl HttpServer {
    /// Starts it at `addr` (`127.0.0.1:0` for any port) and waits for its listening line.
    fn start(dir: &Path, addr: &str, token: Option<&Path>) -> HttpServer {
        let mut command = common::skillctl();
        command
            .args(["mcp", "--no-defaults"])
            .arg(format!("--root=personal={}", dir.display()))
            .args(["--http", addr]);
        if let Some(token) = token {
            command.arg("--token-file").arg(token);
        }
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn skillctl mcp --http");
        let mut stderr = BufReader::new(child.stderr.take().expect("stderr piped"));
        let mut line = String::new();
        stderr.read_line(&mut line).expect("the listening line");
        let addr = serde_json::from_str::<Value>(&line)
            .ok()
            .and_then(|v| v["listening"].as_str().map(str::to_owned))
            .unwrap_or_else(|| panic!("no listening line: {line:?}"));
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        HttpServer { child, addr }
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Stops it and waits until it has exited.
    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A folder serving the skill `notes` (a reference file besides), and the folder.
fn served(f: &Fixture) -> PathBuf {
    let dir = f.path().join("served");
    std::fs::create_dir_all(dir.join("notes/references")).unwrap();
    write_notes(&dir, "Served notes", "Notes body.\n");
    std::fs::write(dir.join("notes/references/guide.md"), "The guide.\n").unwrap();
    dir
}

fn write_notes(dir: &Path, description: &str, body: &str) {
    std::fs::write(
        dir.join("notes/SKILL.md"),
        format!("---\nname: notes\ndescription: {description}; use them when asked.\n---\n{body}"),
    )
    .unwrap();
}

/// A token file with `mode`.
fn token_file(f: &Fixture, mode: u32) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let path = f.path().join(format!("token-{mode:o}"));
    std::fs::write(&path, format!("{TOKEN}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    path
}

#[test]
fn skills_are_taken_from_a_server_over_http_with_its_token_which_is_never_shown() {
    let f = Fixture::new();
    let dir = served(&f);
    let token = token_file(&f, 0o600);
    let server = HttpServer::start(&dir, "127.0.0.1:0", Some(&token));
    let audit = f.path().join("audit.jsonl");
    let mut s = common::Session::start(
        f.path(),
        &[
            "--no-watch",
            "--events",
            &format!("--mcp-server=up={}", server.url()),
            &format!("--mcp-token-file=up={}", token.display()),
            &format!("--audit={}", audit.display()),
        ],
    );
    let listed = s.ok("skills_list", json!({}));
    assert_eq!(
        listed["skills"][0]["qualified_name"], "up:notes",
        "{listed}"
    );
    assert_eq!(listed["skills"][0]["origin"], "mcp:up", "{listed}");
    let receipt = s.ok("skills_load", json!({"names": ["up:notes"]}));
    assert_eq!(
        receipt["active_skills"][0]["body"], "Notes body.\n",
        "{receipt}"
    );
    assert_eq!(
        receipt["active_skills"][0]["location"], "mcp:up/personal/notes/SKILL.md",
        "{receipt}"
    );
    let read = s.ok("skills_read", json!({"path": "references/guide.md"}));
    assert_eq!(read["content"], "The guide.\n", "{read}");
    // A change on the server reaches the index through resources/list_changed.
    write_notes(
        &dir,
        "Served notes, revised",
        "Notes body, second version.\n",
    );
    let changed = s.event("skills_changed");
    assert!(
        changed["changed"].to_string().contains("up:notes"),
        "{changed}"
    );
    let again = s.ok(
        "skills_load",
        json!({"names": ["up:notes"], "mode": "replace"}),
    );
    assert_eq!(
        again["active_skills"][0]["body"], "Notes body, second version.\n",
        "{again}"
    );
    let (_, stderr) = s.finish();
    let audited = std::fs::read_to_string(&audit).unwrap();
    for (what, text) in [("stderr", &stderr), ("audit", &audited)] {
        assert!(!text.contains(TOKEN), "the token is in the {what}: {text}");
    }
}

#[test]
fn a_server_that_needs_a_token_is_refused_without_it_at_start() {
    let f = Fixture::new();
    let dir = served(&f);
    let token = token_file(&f, 0o600);
    let server = HttpServer::start(&dir, "127.0.0.1:0", Some(&token));
    let run = common::run(common::skillctl().args([
        "session",
        "--no-defaults",
        "--no-watch",
        &format!("--mcp-server=up={}", server.url()),
    ]));
    run.fails(2, "401 Unauthorized");
}

#[test]
fn bad_http_server_options_are_refused_at_start_with_their_place() {
    let f = Fixture::new();
    let open = token_file(&f, 0o640);
    let private = token_file(&f, 0o600);
    let open_name = open.display().to_string();
    let cases: [(Vec<String>, Vec<&str>); 4] = [
        (
            vec![
                "--mcp-server=up=https://127.0.0.1:1/mcp".into(),
                format!("--mcp-token-file=up={open_name}"),
            ],
            vec!["readable only by its owner", &open_name],
        ),
        (
            vec!["--mcp-server=up=http://skills.example.com/mcp".into()],
            vec!["http:// is accepted only on a loopback address"],
        ),
        (
            vec![
                "--mcp-server=up=python3 server.py".into(),
                format!("--mcp-token-file=up={}", private.display()),
            ],
            vec!["a token is for a server over HTTP"],
        ),
        (
            vec!["--mcp-server=up=https://user:pw@127.0.0.1:1/mcp".into()],
            vec!["credentials in the URL are refused"],
        ),
    ];
    for (args, needles) in cases {
        let run = common::run(
            common::skillctl()
                .args(["session", "--no-defaults", "--no-watch"])
                .args(&args),
        );
        for needle in needles {
            run.fails(2, needle);
        }
    }
}

#[test]
fn over_the_wire_a_server_url_is_taken_and_a_command_is_not() {
    let f = Fixture::new();
    let dir = served(&f);
    let server = HttpServer::start(&dir, "127.0.0.1:0", None);
    let token = token_file(&f, 0o600);
    let guarded = HttpServer::start(&dir, "127.0.0.1:0", Some(&token));
    let mut s = common::Session::start(
        f.path(),
        &[
            "--no-watch",
            &format!("--mcp-server=sec={}", guarded.url()),
            &format!("--mcp-token-file=sec={}", token.display()),
        ],
    );
    let url = server.url();
    let registered = s.ok("register_plugin", json!({"id": "wire", "server": url}));
    assert_eq!(registered["root"], format!("mcp:{url}"), "{registered}");
    assert_eq!(registered["skills"], 1, "{registered}");
    let receipt = s.ok("skills_load", json!({"names": ["wire:notes"]}));
    assert_eq!(
        receipt["active_skills"][0]["body"], "Notes body.\n",
        "{receipt}"
    );
    // Labelled by its URL: untrusted unless the host trusts `mcp:URL`.
    assert_eq!(
        receipt["active_skills"][0]["origin"],
        format!("mcp:{url}"),
        "{receipt}"
    );
    let decided = s.ok(
        "check_tool",
        json!({"tool": "Bash", "input": {"command": "ls"}}),
    );
    assert_eq!(decided["rule"], "remote.untrusted", "{decided}");
    for (server, code, needle) in [
        (
            "python3 server.py",
            "SKILL_BAD_INPUT",
            "a peer never starts a program",
        ),
        (
            "http://skills.example.com/mcp",
            "SKILL_REMOTE_ROOT_FAILED",
            "only on a loopback address",
        ),
        // The token goes only to the server declared with it, not to a URL a peer names.
        (
            guarded.url().as_str(),
            "SKILL_REMOTE_ROOT_FAILED",
            "401 Unauthorized",
        ),
        // A URL of the right shape: taken, and the server not reached.
        (
            "https://127.0.0.1:1/mcp",
            "SKILL_REMOTE_ROOT_FAILED",
            "Connection refused",
        ),
    ] {
        let (got, message) = s.err("register_plugin", json!({"id": "p", "server": server}));
        assert_eq!(got, code, "{server}: {message}");
        assert!(message.contains(needle), "{server}: {message}");
    }
    s.finish();
    // Trusted only by its URL, spelt as its origin.
    let trust = format!("--trust=mcp:{url}");
    let mut trusted = common::Session::start(f.path(), &["--no-watch", &trust]);
    trusted.ok("register_plugin", json!({"id": "wire", "server": url}));
    trusted.ok("skills_load", json!({"names": ["wire:notes"]}));
    let decided = trusted.ok(
        "check_tool",
        json!({"tool": "Bash", "input": {"command": "ls"}}),
    );
    assert_ne!(decided["rule"], "remote.untrusted", "{decided}");
    trusted.finish();
}

#[test]
fn a_server_over_http_that_goes_away_keeps_its_skills_and_reads_fail_until_it_returns() {
    let f = Fixture::new();
    let dir = served(&f);
    let mut server = HttpServer::start(&dir, "127.0.0.1:0", None);
    let addr = server.addr.clone();
    let mut s = common::Session::start(
        f.path(),
        &["--no-watch", &format!("--mcp-server=up={}", server.url())],
    );
    s.ok("skills_load", json!({"names": ["up:notes"]}));
    server.stop();
    let (_, message) = s.err("skills_read", json!({"path": "references/guide.md"}));
    assert!(
        message.contains("the MCP server up is not answering"),
        "{message}"
    );
    let listed = s.ok("skills_list", json!({}));
    assert!(listed.to_string().contains("up:notes"), "{listed}");
    let _back = HttpServer::start(&dir, &addr, None);
    let read = s.ok("skills_read", json!({"path": "references/guide.md"}));
    assert_eq!(read["content"], "The guide.\n", "{read}");
    s.finish();
}
