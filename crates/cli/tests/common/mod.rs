//! The harness of the `skillctl session` tests: the real binary driven over piped stdin
//! and stdout one JSON line at a time, and skills written into temporary directories.
//! Nothing waits by sleeping: lines are read on a thread and received with a deadline.

#![allow(dead_code, unreachable_pub)]

use std::cell::RefCell;
use std::collections::VecDeque;
use std::io::{BufRead as _, BufReader, Read, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{json, Value};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_skillctl");
/// How long one response (or the exit) may take before the test fails.
pub const DEADLINE: Duration = Duration::from_secs(20);

/// What one run of the binary produced.
#[derive(Debug)]
pub struct Run {
    /// The exit code (`None` when killed by a signal).
    pub code: Option<i32>,
    /// Standard output (lossy UTF-8).
    pub stdout: String,
    /// Standard error (lossy UTF-8).
    pub stderr: String,
}

impl Run {
    /// Asserts exit status 0 and an empty stderr; returns stdout.
    pub fn ok(&self) -> &str {
        assert_eq!(self.code, Some(0), "{self:#?}");
        assert_eq!(self.stderr, "", "{self:#?}");
        &self.stdout
    }

    /// Asserts the exit status `code`, an empty stdout, and `needle` in stderr.
    pub fn fails(&self, code: i32, needle: &str) {
        assert_eq!(self.code, Some(code), "{self:#?}");
        assert_eq!(self.stdout, "", "{self:#?}");
        assert!(
            self.stderr.contains(needle),
            "stderr should contain {needle:?}: {self:#?}"
        );
    }

    /// Asserts exit status 0 and parses stdout as one JSON document.
    pub fn json(&self) -> Value {
        let out = self.ok();
        serde_json::from_str(out)
            .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}):\n{out}"))
    }
}

/// `skillctl` as a command, ready for arguments, a folder and an environment.
pub fn skillctl() -> Command {
    Command::new(BIN)
}

/// Reads a pipe to its end on a thread.
fn drain(mut pipe: impl Read + Send + 'static) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    })
}

/// Waits for `child` with the deadline, killing it (and failing the test) past it. The
/// wait runs on a thread and is received with a timeout: nothing polls or sleeps.
fn wait(mut child: Child, what: &str) -> ExitStatus {
    let pid = child.id();
    let (tx, exited) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    match exited.recv_timeout(DEADLINE) {
        Ok(status) => status.expect("wait for skillctl"),
        Err(_) => {
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            panic!("skillctl {what} did not exit within {DEADLINE:?} (killed)");
        }
    }
}

/// Runs `command` (stdin closed) to its end within the deadline; output is drained on
/// threads so a full pipe never stalls the child.
pub fn run(command: &mut Command) -> Run {
    let what = format!("{:?}", command.get_args().collect::<Vec<_>>());
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn skillctl");
    let stdout = drain(child.stdout.take().expect("stdout piped"));
    let stderr = drain(child.stderr.take().expect("stderr piped"));
    let status = wait(child, &what);
    let text = |h: JoinHandle<Vec<u8>>| {
        String::from_utf8_lossy(&h.join().expect("reader thread")).into_owned()
    };
    Run {
        code: status.code(),
        stdout: text(stdout),
        stderr: text(stderr),
    }
}

/// A long-running `skillctl` with stdin piped: its stdout lines arrive on a channel, its
/// stderr is collected on a thread.
pub struct Spawned {
    pub child: Option<Child>,
    pub stdin: Option<ChildStdin>,
    pub lines: Receiver<String>,
    pub stderr: Option<JoinHandle<String>>,
}

impl Spawned {
    /// Starts `command` with stdin, stdout and stderr piped.
    pub fn start(command: &mut Command) -> Spawned {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn skillctl");
        let stdout = child.stdout.take().expect("stdout piped");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut stderr = child.stderr.take().expect("stderr piped");
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        Spawned {
            stdin: child.stdin.take(),
            child: Some(child),
            lines,
            stderr: Some(stderr),
        }
    }

    /// Closes stdin, waits for the exit within the deadline, and returns the status and
    /// stderr. Lines still unread stay on `lines`.
    pub fn finish(&mut self) -> (ExitStatus, String) {
        drop(self.stdin.take());
        let child = self.child.take().expect("child");
        let status = wait(child, "(long-running)");
        (status, self.stderr_text())
    }
}

impl Spawned {
    /// Sends `signal` (`TERM`, `INT`) with stdin left open, waits for the exit within the
    /// deadline, and returns the status and stderr.
    pub fn signal_and_finish(&mut self, signal: &str) -> (ExitStatus, String) {
        let child = self.child.take().expect("child");
        let sent = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(child.id().to_string())
            .status()
            .expect("kill");
        assert!(sent.success());
        let status = wait(child, "(signalled)");
        drop(self.stdin.take());
        (status, self.stderr_text())
    }

    /// The whole of stderr, once the child has exited.
    fn stderr_text(&mut self) -> String {
        self.stderr
            .take()
            .expect("stderr")
            .join()
            .expect("stderr reader")
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// `skillctl` run as a user without privileges: when the tests run as root, as `nobody`
/// through `setpriv`, from a copy in `tmp` (which must be open to all) that user may run.
#[cfg(unix)]
#[allow(dead_code)] // Not every test file that shares this module uses it.
pub fn unprivileged(tmp: &Path) -> Command {
    use std::os::unix::fs::PermissionsExt as _;
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"));
    if !root {
        return skillctl();
    }
    let bin = tmp.join("skillctl");
    std::fs::copy(env!("CARGO_BIN_EXE_skillctl"), &bin).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut cmd = Command::new("setpriv");
    cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(bin);
    cmd
}

/// Asserts that the audit file at `path` holds each of `events` (the first of its kind), in
/// that order; returns the `event` of each line. `what` names the case in a failure.
#[allow(dead_code)] // Not every test file that shares this module uses it.
pub fn assert_in_audit(path: &std::path::Path, events: &[&str], what: &str) -> Vec<String> {
    let kinds: Vec<String> = std::fs::read_to_string(path)
        .expect("audit")
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).expect("line")["event"]
                .as_str()
                .expect("event")
                .to_owned()
        })
        .collect();
    let places: Vec<Option<usize>> = events
        .iter()
        .map(|e| kinds.iter().position(|k| k == e))
        .collect();
    assert!(
        places.iter().all(Option::is_some) && places.windows(2).all(|w| w[0] < w[1]),
        "{what}: {events:?} in that order in {kinds:?}"
    );
    kinds
}

/// A script that writes `started` to the file it is given (a FIFO made by [`fifo`]: the
/// test's read says the script has started) and then runs for ten minutes.
#[allow(dead_code)] // Not every test file that shares this module uses it.
pub const HOLD_SCRIPT: &str = "echo started > \"$1\"\nexec sleep 600\n";

/// A FIFO made at `name` in the fixture's folder: a script that writes to it blocks until
/// the test reads, so a read says the script has started.
#[allow(dead_code)] // Not every test file that shares this module uses it.
pub fn fifo(f: &Fixture, name: &str) -> PathBuf {
    let fifo = f.path().join(name);
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    fifo
}

/// A running `skillctl session`.
pub struct Session {
    proc: Spawned,
    next_id: u64,
    events: RefCell<VecDeque<Value>>,
}

impl Session {
    /// Starts `skillctl session --no-defaults ARGS` in `cwd`.
    pub fn start(cwd: &Path, args: &[&str]) -> Session {
        Session::start_env(cwd, args, &[])
    }

    /// [`Session::start`] with environment variables set.
    pub fn start_env(cwd: &Path, args: &[&str], env: &[(&str, &Path)]) -> Session {
        let mut command = skillctl();
        command
            .arg("session")
            .arg("--no-defaults")
            .args(args)
            .current_dir(cwd);
        for (name, value) in env {
            command.env(name, value);
        }
        let proc = Spawned::start(&mut command);
        Session {
            proc,
            next_id: 1,
            events: RefCell::new(VecDeque::new()),
        }
    }

    /// Writes raw bytes (a line or several) to the session.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.proc.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write to skillctl");
        stdin.flush().expect("flush to skillctl");
    }

    /// The next line, parsed.
    fn next_line(&self) -> Value {
        match self.proc.lines.recv_timeout(DEADLINE) {
            Ok(line) => serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("line is not JSON ({e}): {line:?}")),
            Err(RecvTimeoutError::Timeout) => panic!("no line within {DEADLINE:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("the session ended early"),
        }
    }

    /// The next line as it came (event lines included).
    pub fn recv_raw(&self) -> String {
        self.proc
            .lines
            .recv_timeout(DEADLINE)
            .expect("a line within the deadline")
    }

    /// The next response line, parsed; event lines (no `id`, an `event`) met on the way
    /// are kept for [`Session::event`].
    pub fn recv(&self) -> Value {
        loop {
            let line = self.next_line();
            if line.get("id").is_none() && line.get("event").is_some() {
                self.events.borrow_mut().push_back(line);
                continue;
            }
            return line;
        }
    }

    /// The next event line named `name` (others before it are dropped), waiting for it
    /// with the deadline.
    pub fn event(&self, name: &str) -> Value {
        loop {
            let next = self.events.borrow_mut().pop_front();
            let line = match next {
                Some(line) => line,
                None => self.next_line(),
            };
            assert!(
                line.get("id").is_none(),
                "a response while waiting for {name}: {line}"
            );
            if line["event"] == name {
                return line;
            }
        }
    }

    /// Sends one request and returns its response (checking the id came back).
    pub fn call(&mut self, tool: &str, input: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let request = json!({"id": id, "tool": tool, "input": input});
        self.send_raw(format!("{request}\n").as_bytes());
        let response = self.recv();
        assert_eq!(response["id"], id, "{response}");
        response
    }

    /// A call that must succeed: its output.
    pub fn ok(&mut self, tool: &str, input: Value) -> Value {
        let response = self.call(tool, input);
        assert_eq!(response["ok"], true, "{response}");
        response["output"].clone()
    }

    /// A call that must fail: its error code and message.
    pub fn err(&mut self, tool: &str, input: Value) -> (String, String) {
        let response = self.call(tool, input);
        assert_eq!(response["ok"], false, "{response}");
        let error = &response["error"];
        (
            error["code"].as_str().expect("code").to_owned(),
            error["message"].as_str().expect("message").to_owned(),
        )
    }

    /// `check_tool` for a Bash command: whether it is allowed.
    pub fn bash(&mut self, command: &str) -> bool {
        let out = self.ok(
            "check_tool",
            json!({"tool": "Bash", "input": {"command": command}}),
        );
        assert!(out["reason"].is_string(), "{out}");
        match out["decision"].as_str() {
            Some("allow") => true,
            Some("deny") => false,
            other => panic!("decision {other:?}"),
        }
    }

    /// Sends `signal` (`TERM`, `INT`) with stdin left open and waits for the exit.
    #[allow(dead_code)] // Not every test file that shares this module uses it.
    pub fn signal_and_finish(mut self, signal: &str) -> (ExitStatus, String) {
        self.proc.signal_and_finish(signal)
    }

    /// Closes stdin and waits for the exit (and end of stdout), with a deadline.
    pub fn finish(mut self) -> (ExitStatus, String) {
        drop(self.proc.stdin.take());
        loop {
            match self.proc.lines.recv_timeout(DEADLINE) {
                Err(RecvTimeoutError::Disconnected) => break,
                // Event lines may still come while the session ends.
                Ok(line) if line.starts_with("{\"event\"") => {}
                Ok(line) => panic!("unexpected output after end of input: {line}"),
                Err(RecvTimeoutError::Timeout) => panic!("stdout still open after {DEADLINE:?}"),
            }
        }
        self.proc.finish()
    }
}

/// A temporary folder with `skills/` (the root) and room around it.
pub struct Fixture {
    tmp: tempfile::TempDir,
}

impl Fixture {
    pub fn new() -> Fixture {
        let tmp = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(tmp.path().join("skills")).expect("root");
        Fixture { tmp }
    }

    pub fn path(&self) -> &Path {
        self.tmp.path()
    }

    pub fn root(&self) -> PathBuf {
        self.tmp.path().join("skills")
    }

    /// `--root LAYER=<root>`.
    pub fn root_arg(&self, layer: &str) -> String {
        format!("--root={layer}={}", self.root().display())
    }

    /// Writes a skill with the extra frontmatter lines and a body.
    pub fn skill(&self, name: &str, frontmatter: &str, body: &str) -> PathBuf {
        let dir = self.root().join(name);
        std::fs::create_dir_all(&dir).expect("skill dir");
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: The {name} skill of the session tests; use it when they ask.\n{frontmatter}---\n{body}"),
        )
        .expect("SKILL.md");
        dir
    }

    /// Writes a file of a skill.
    pub fn file(&self, skill: &str, rel: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.root().join(skill).join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("parents");
        std::fs::write(&path, contents).expect("file");
        path
    }

    /// A session over the root as the personal layer, with more arguments.
    pub fn session(&self, args: &[&str]) -> Session {
        let root = self.root_arg("personal");
        let mut all = vec![root.as_str()];
        all.extend_from_slice(args);
        Session::start(self.path(), &all)
    }
}
