//! Tests of the script runner against real child processes: argv without a shell, the
//! cleared environment, the working directory, interpreters and executable files, the
//! timeout that kills the whole process group, capped output and pipes held open by
//! grandchildren.
#![cfg(unix)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use skills_runner::{run_script, ScriptError, ScriptOutput, ScriptRequest};

const MIB: usize = 1024 * 1024;

/// Writes `body` to `dir/name` with the given permission bits.
fn write_script(dir: &Path, name: &str, body: &str, mode: u32) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, body).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
    path
}

/// A request with the given script and arguments, no extra environment, the script's
/// directory as working directory, a 20 s timeout and a 1 MiB output limit.
fn request<'a>(script: &'a Path, args: &'a [String]) -> ScriptRequest<'a> {
    ScriptRequest {
        script,
        args,
        env: &[],
        allowed_env: &[],
        workdir: script.parent().unwrap(),
        timeout: Duration::from_secs(20),
        output_limit: MIB,
        supervisor: None,
        cancel: None,
        secrets: &[],
    }
}

fn run(request: &ScriptRequest<'_>) -> ScriptOutput {
    match run_script(request) {
        Ok(output) => output,
        Err(e) => panic!("run_script failed: {e}"),
    }
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

/// Whether `pid` is a live process: `kill -0` succeeds and (on Linux, where an unreaped
/// zombie still answers `kill -0`, e.g. under a PID 1 that does not reap) it is no zombie.
fn alive(pid: &str) -> bool {
    let signalled = Command::new("kill")
        .args(["-0", pid])
        .stderr(std::process::Stdio::null())
        .status()
        .map(|status| status.success())
        .unwrap_or(false);
    if !signalled {
        return false;
    }
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesised command name.
        Ok(stat) => {
            !matches!(stat.rsplit(')').next().map(str::trim_start), Some(s) if s.starts_with('Z'))
        }
        Err(_) => !Path::new("/proc/self").exists(),
    }
}

/// Asserts that `pid` is gone within a few seconds (reaping by init may lag).
fn assert_dies(pid: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(pid) {
        assert!(Instant::now() < deadline, "process {pid} survived the run");
        thread::yield_now();
    }
}

/// Reads a PID a script wrote to `path`.
fn read_pid(path: &Path) -> String {
    let pid =
        fs::read_to_string(path).unwrap_or_else(|e| panic!("no PID file {}: {e}", path.display()));
    let pid = pid.trim().to_owned();
    assert!(
        !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()),
        "bad PID {pid:?}"
    );
    pid
}

#[test]
fn sh_script_receives_argv_verbatim() {
    let dir = tempfile::tempdir().unwrap();
    let script = write_script(
        dir.path(),
        "args.sh",
        "for a in \"$@\"; do printf '[%s]\\n' \"$a\"; done\n",
        0o644,
    );
    let args = strings(&[
        "plain",
        "with space",
        "  padded  ",
        "$HOME",
        "`id`",
        "$(touch pwned)",
        "a;b|c&d",
        "*",
        "'single' \"double\"",
        "",
        "> redirected",
        "line\nbreak",
        "ünïcødé",
    ]);
    let output = run(&request(&script, &args));
    let expected: String = args.iter().map(|a| format!("[{a}]\n")).collect();
    assert_eq!(output.stdout, expected);
    assert_eq!(output.stderr, "");
    assert_eq!(output.exit_code, Some(0));
    assert!(!output.timed_out && !output.truncated);
    assert!(!dir.path().join("pwned").exists());
    assert!(!dir.path().join("redirected").exists());
}

#[test]
fn exit_code_and_stderr_are_propagated() {
    let dir = tempfile::tempdir().unwrap();
    let script = write_script(
        dir.path(),
        "fail.sh",
        "echo out\necho oops >&2\nexit 7\n",
        0o644,
    );
    let output = run(&request(&script, &[]));
    assert_eq!(output.exit_code, Some(7));
    assert_eq!(output.stdout, "out\n");
    assert_eq!(output.stderr, "oops\n");
    assert!(!output.timed_out);
}

#[test]
fn environment_is_cleared() {
    // Only this test touches this variable; std serialises its own environment access.
    std::env::set_var("SKILLS_SCRIPT_TEST_SECRET", "leaked");
    assert!(
        std::env::var_os("PATH").is_some(),
        "the test needs PATH set"
    );

    let dir = tempfile::tempdir().unwrap();
    let script = write_script(
        dir.path(),
        "env.sh",
        "printf 'secret=%s\\n' \"${SKILLS_SCRIPT_TEST_SECRET-unset}\"\n\
         printf 'path=%s\\n' \"${PATH-unset}\"\n\
         printf 'given=%s\\n' \"${GIVEN-unset}\"\n\
         printf 'lang=%s\\n' \"${LANG-unset}\"\n\
         env | cut -d= -f1 | sort\n",
        0o644,
    );
    let env = vec![
        ("GIVEN".to_owned(), "a value with spaces".to_owned()),
        ("LANG".to_owned(), "C.TEST".to_owned()),
    ];
    let allowed = vec!["GIVEN".to_owned(), "LANG".to_owned()];
    let mut req = request(&script, &[]);
    req.env = &env;
    req.allowed_env = &allowed;
    let output = run(&req);
    assert_eq!(output.exit_code, Some(0), "stderr: {}", output.stderr);

    let mut lines = output.stdout.lines();
    assert_eq!(lines.next(), Some("secret=unset"));
    assert_eq!(
        lines.next(),
        Some(format!("path={}", std::env::var("PATH").unwrap()).as_str())
    );
    assert_eq!(lines.next(), Some("given=a value with spaces"));
    assert_eq!(lines.next(), Some("lang=C.TEST"));
    // Whatever `env` sees besides what bash itself exports is one of the allowed names.
    for name in lines {
        assert!(
            ["PATH", "HOME", "LANG", "GIVEN", "PWD", "SHLVL", "_", "OLDPWD"].contains(&name),
            "unexpected variable {name} in {}",
            output.stdout
        );
    }
}

#[test]
fn workdir_is_respected() {
    let scripts = tempfile::tempdir().unwrap();
    let workdir = tempfile::tempdir().unwrap();
    let script = write_script(
        scripts.path(),
        "pwd.sh",
        "pwd -P\necho made > made.txt\n",
        0o644,
    );
    let mut req = request(&script, &[]);
    req.workdir = workdir.path();
    let output = run(&req);
    assert_eq!(output.exit_code, Some(0), "stderr: {}", output.stderr);
    let expected = workdir.path().canonicalize().unwrap();
    assert_eq!(output.stdout.trim_end(), expected.to_str().unwrap());
    assert_eq!(
        fs::read_to_string(workdir.path().join("made.txt")).unwrap(),
        "made\n"
    );
    assert!(!scripts.path().join("made.txt").exists());
}

#[test]
fn python_script_runs_with_python3() {
    let dir = tempfile::tempdir().unwrap();
    let script = write_script(
        dir.path(),
        "hello.py",
        "import sys\nprint(repr(sys.argv[1:]))\nsys.exit(3)\n",
        0o644,
    );
    let args = strings(&["a b", "$x", "--flag"]);
    let output = run(&request(&script, &args));
    assert_eq!(
        output.stdout, "['a b', '$x', '--flag']\n",
        "stderr: {}",
        output.stderr
    );
    assert_eq!(output.exit_code, Some(3));
}

#[test]
fn executable_without_extension_runs_directly() {
    let dir = tempfile::tempdir().unwrap();
    let script = write_script(
        dir.path(),
        "tool",
        "#!/bin/sh\necho \"direct $# $1\"\n",
        0o755,
    );
    let args = strings(&["one arg"]);
    let output = run(&request(&script, &args));
    assert_eq!(
        output.stdout, "direct 1 one arg\n",
        "stderr: {}",
        output.stderr
    );
    assert_eq!(output.exit_code, Some(0));
}

/// A `tracing` subscriber that, at the runner's first "busy" event, says so on `busy` and
/// then waits on `go`: the test closes the file between the two, so the retry after the
/// event finds it closed whatever the machine's load.
struct AtFirstBusy {
    busy: std::sync::Mutex<Option<(mpsc::Sender<()>, mpsc::Receiver<()>)>>,
}

impl tracing::Subscriber for AtFirstBusy {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        struct Message(String);
        impl tracing::field::Visit for Message {
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                if field.name() == "message" {
                    self.0 = format!("{value:?}");
                }
            }
        }
        let mut message = Message(String::new());
        event.record(&mut message);
        if !message.0.contains("busy being written") {
            return;
        }
        let first = self.busy.lock().unwrap().take();
        if let Some((busy, go)) = first {
            busy.send(()).unwrap();
            go.recv().unwrap();
        }
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// CI failed once with "Text file busy": a test wrote its script while another test's
/// thread forked, and the forked child held the file open for writing until it exec'd, so
/// the script could not start at that moment. A start of a program busy being written is
/// made again once the file is closed; here the file is held open for writing until the
/// runner has met it busy.
#[test]
fn regression_a_script_busy_being_written_starts_once_it_is_closed() {
    let dir = tempfile::tempdir().unwrap();
    let script = write_script(dir.path(), "tool", "#!/bin/sh\necho started\n", 0o755);
    let writer = fs::OpenOptions::new().write(true).open(&script).unwrap();
    let (busy_tx, busy) = mpsc::channel();
    let (go, go_rx) = mpsc::channel();
    let args = Vec::new();
    thread::scope(|s| {
        let runner = s.spawn(|| {
            let subscriber = AtFirstBusy {
                busy: std::sync::Mutex::new(Some((busy_tx, go_rx))),
            };
            let _default = tracing::subscriber::set_default(subscriber);
            run_script(&request(&script, &args))
        });
        // The runner found the file busy (a start that was not refused would end the
        // thread and drop the sender: this fails then instead of waiting).
        busy.recv().expect("the start was refused as busy");
        drop(writer);
        go.send(()).unwrap();
        let output = runner
            .join()
            .unwrap()
            .expect("the script starts once closed");
        assert_eq!(output.stdout, "started\n", "stderr: {}", output.stderr);
    });
}

#[test]
fn non_executable_unknown_extension_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["data.txt", "tool"] {
        let script = write_script(dir.path(), name, "#!/bin/sh\necho should not run\n", 0o644);
        match run_script(&request(&script, &[])) {
            Err(ScriptError::NotExecutable(path)) => assert!(path.ends_with(name), "{path}"),
            other => panic!("{name}: expected NotExecutable, got {other:?}"),
        }
    }
}

#[test]
fn missing_script_is_a_spawn_error() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["absent.sh", "absent"] {
        let script = dir.path().join(name);
        match run_script(&request(&script, &[])) {
            Err(ScriptError::Spawn { path, .. }) => assert!(path.ends_with(name), "{path}"),
            other => panic!("{name}: expected Spawn, got {other:?}"),
        }
    }
}

#[test]
fn timeout_kills_the_whole_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("child.pid");
    let script = write_script(
        dir.path(),
        "slow.sh",
        "sleep 60 &\necho $! > \"$1\"\necho started\nsleep 30\necho never\n",
        0o644,
    );
    let args = vec![pid_file.to_str().unwrap().to_owned()];
    let mut req = request(&script, &args);
    // Long enough for bash to start and write the PID on a loaded machine; the kill ends it.
    req.timeout = Duration::from_secs(2);

    let output = run(&req);

    assert!(output.timed_out);
    assert_eq!(output.exit_code, None);
    assert_eq!(output.stdout, "started\n");
    assert_dies(&read_pid(&pid_file));
}

#[test]
fn flood_of_stdout_is_capped() {
    let dir = tempfile::tempdir().unwrap();
    let script = write_script(
        dir.path(),
        "flood.sh",
        "yes | head -c 50000000\necho done >&2\n",
        0o644,
    );
    let mut req = request(&script, &[]);
    req.timeout = Duration::from_secs(60);

    let output = run(&req);

    assert!(output.truncated);
    assert!(!output.timed_out);
    assert_eq!(output.exit_code, Some(0));
    assert_eq!(output.stdout.len(), MIB);
    assert!(output.stdout.starts_with("y\ny\n"));
    assert_eq!(output.stderr, "done\n");
}

#[test]
fn flood_of_stderr_from_python_is_capped() {
    let dir = tempfile::tempdir().unwrap();
    let script = write_script(
        dir.path(),
        "flood.py",
        "import sys\nline = 'x' * 1023 + '\\n'\nfor _ in range(20 * 1024):\n    sys.stderr.write(line)\nprint('ok')\n",
        0o644,
    );
    let mut req = request(&script, &[]);
    req.timeout = Duration::from_secs(60);
    let output = run(&req);
    assert!(output.truncated);
    assert_eq!(output.exit_code, Some(0));
    assert_eq!(output.stdout, "ok\n");
    assert_eq!(output.stderr.len(), MIB);
}

#[test]
fn output_is_lossy_utf8_cut_at_a_character_boundary() {
    let dir = tempfile::tempdir().unwrap();
    let script = write_script(
        dir.path(),
        "bytes.sh",
        "printf 'a\\377b'\nprintf '\\303\\251\\303\\251\\303\\251' >&2\n",
        0o644,
    );
    let mut req = request(&script, &[]);
    req.output_limit = 5;
    let output = run(&req);
    // Not cut: the invalid byte becomes U+FFFD (3 bytes), 5 bytes in all.
    assert_eq!(output.stdout, "a\u{FFFD}b");
    // Cut at 5 bytes, in the middle of the third `é`: the half character is dropped.
    assert_eq!(output.stderr, "éé");
    assert!(output.truncated);
}

#[test]
fn grandchild_holding_stdout_does_not_block_the_run() {
    // No wall-clock bound: the grandchild would hold the pipe for 1,000 s, so a run that
    // waited for it would not return; that it returns, with the grandchild dead, is the test.
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("bg.pid");
    let script = write_script(
        dir.path(),
        "bg.sh",
        "sleep 1000 &\necho $! > \"$1\"\necho done\n",
        0o644,
    );
    let args = vec![pid_file.to_str().unwrap().to_owned()];

    let output = run(&request(&script, &args));

    assert_eq!(output.exit_code, Some(0));
    assert!(!output.timed_out);
    assert_eq!(output.stdout, "done\n");
    assert_dies(&read_pid(&pid_file));
}

#[test]
fn python_subprocess_inheriting_stdout_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("sub.pid");
    let script = write_script(
        dir.path(),
        "spawn.py",
        "import subprocess, sys\n\
         child = subprocess.Popen(['sleep', '1000'])\n\
         open(sys.argv[1], 'w').write(str(child.pid))\n\
         print('spawned', flush=True)\n",
        0o644,
    );
    let args = vec![pid_file.to_str().unwrap().to_owned()];

    let output = run(&request(&script, &args));

    assert_eq!(output.exit_code, Some(0), "stderr: {}", output.stderr);
    assert_eq!(output.stdout, "spawned\n");
    assert_dies(&read_pid(&pid_file));
}

#[test]
fn grandchild_escaping_the_group_cannot_hold_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("escaped.pid");
    // `setsid` puts the sleeper in a session (and group) of its own, out of reach of the
    // group kill, while it keeps the stdout pipe open.
    let script = write_script(
        dir.path(),
        "escape.sh",
        "setsid sleep 1000 &\necho $! > \"$1\"\necho done\n",
        0o644,
    );
    let args = vec![pid_file.to_str().unwrap().to_owned()];

    let output = run(&request(&script, &args));

    let pid = read_pid(&pid_file);
    let _ = Command::new("kill").args(["-9", &pid]).status();

    assert_eq!(output.exit_code, Some(0));
    assert!(!output.timed_out);
    assert_eq!(output.stdout, "done\n");
}

// Regression: a timeout too long to add to the clock (a host's `Duration::MAX` for "no
// timeout") panicked after the script had started, and left it running unsupervised.
#[test]
fn a_timeout_too_long_for_the_clock_means_no_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let script = write_script(dir.path(), "hi.sh", "#!/bin/sh\necho hi\n", 0o755);
    let mut req = request(&script, &[]);
    req.timeout = Duration::MAX;
    let out = run(&req);
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    assert!(!out.timed_out, "{out:?}");
    assert_eq!(out.stdout, "hi\n");
}
