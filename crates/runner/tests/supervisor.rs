//! Scripts leave nothing behind: under the supervisor (`skills-supervise`, a child
//! subreaper), descendants that left the script's process group die at its exit and at the
//! timeout, and the host keeps no reader thread or pipe once the run returns. Real
//! processes; the run itself returns only after every descendant is reaped, so nothing here
//! waits or polls.

use std::path::{Path, PathBuf};
use std::time::Duration;

use skills_runner::{run_script, ScriptRequest};

const SUPERVISOR: &str = env!("CARGO_BIN_EXE_skills-supervise");

fn script(dir: &Path, body: &str) -> PathBuf {
    let path = dir.join("escape.sh");
    std::fs::write(&path, body).unwrap();
    path
}

fn request<'a>(script: &'a Path, timeout: Duration) -> ScriptRequest<'a> {
    ScriptRequest {
        script,
        args: &[],
        env: &[],
        allowed_env: &[],
        workdir: script.parent().unwrap(),
        timeout,
        output_limit: 1 << 20,
        supervisor: Some(Path::new(SUPERVISOR)),
        cancel: None,
        secrets: &[],
    }
}

/// Whether `pid` is a live process (a zombie is not). The supervisor reaps every
/// descendant before the run returns, so a dead one has no entry at all.
fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !matches!(stat.rsplit(')').next().map(str::trim_start), Some(s) if s.starts_with('Z'))
    })
}

fn pids(file: &Path) -> Vec<String> {
    std::fs::read_to_string(file)
        .unwrap()
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

/// Tests in this file run one at a time: each counts the process's open descriptors.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// A script that starts a child in a session of its own (`setsid`) and a double-forked
/// grandchild in another process group, writes their PIDs, then `tail`s (or exits).
fn escaping(dir: &Path, then: &str) -> (PathBuf, PathBuf) {
    let file = dir.join("pids");
    let body = format!(
        "setsid sleep 1000 </dev/null &\necho $! >> '{f}'\n( set -m; sleep 1000 </dev/null & echo $! >> '{f}' ) \n{then}\n",
        f = file.display()
    );
    (script(dir, &body), file)
}

// Regression: a child that called `setsid` or `setpgid` survived the script's exit and its
// timeout, and each such run left 2 reader threads and 2 pipes in the host.
#[test]
fn descendants_that_left_the_group_die_when_the_script_exits() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let (script, file) = escaping(dir.path(), "echo done");
    let fds = open_fds();
    let out = run_script(&request(&script, Duration::from_secs(30))).unwrap();
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "done\n");
    let pids = pids(&file);
    assert_eq!(pids.len(), 2, "{pids:?}");
    for pid in &pids {
        assert!(!alive(pid), "{pid} survived the script's exit");
    }
    assert_eq!(open_fds(), fds, "a pipe outlived the run");
}

#[test]
fn descendants_that_left_the_group_die_at_the_timeout() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let (script, file) = escaping(dir.path(), "sleep 1000");
    let fds = open_fds();
    let out = run_script(&request(&script, Duration::from_millis(500))).unwrap();
    assert!(out.timed_out, "{out:?}");
    assert_eq!(out.exit_code, None);
    for pid in pids(&file) {
        assert!(!alive(&pid), "{pid} survived the timeout");
    }
    assert_eq!(open_fds(), fds, "a pipe outlived the run");
}

#[test]
fn the_scripts_status_comes_through_the_supervisor() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let exits = script(dir.path(), "echo out; echo err >&2; exit 3\n");
    let out = run_script(&request(&exits, Duration::from_secs(30))).unwrap();
    assert_eq!(
        (out.exit_code, out.stdout.as_str(), out.stderr.as_str()),
        (Some(3), "out\n", "err\n")
    );
    let killed = script(dir.path(), "kill -9 $$\n");
    let out = run_script(&request(&killed, Duration::from_secs(30))).unwrap();
    assert_eq!(out.exit_code, None, "{out:?}");
    assert!(!out.timed_out);
}

#[test]
fn a_cancelled_run_stops_with_every_descendant() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let (script, file) = escaping(dir.path(), "echo started; sleep 1000");
    let (canceller, cancellation) = skills_runner::cancellation();
    let pid_file = file.clone();
    let mut request = request(&script, Duration::from_secs(60));
    request.cancel = Some(&cancellation);
    let out = std::thread::scope(|scope| {
        let run = scope.spawn(|| run_script(&request).unwrap());
        // Cancelled at once: whatever the script had started by then must be gone.
        canceller.cancel();
        run.join().unwrap()
    });
    assert!(out.cancelled, "{out:?}");
    assert_eq!(out.exit_code, None);
    for pid in std::fs::read_to_string(&pid_file)
        .unwrap_or_default()
        .split_whitespace()
    {
        assert!(!alive(pid), "{pid} survived the cancellation");
    }
}

// Regression: under the supervisor a script whose interpreter is missing (a `#!` naming
// no program, `env` asked for one not on `PATH`) answered as a run that exited 127, which a
// script can do itself; it is refused as a start that failed, naming the interpreter.
#[test]
fn a_missing_interpreter_is_a_failed_start_not_an_exit_code() {
    use std::os::unix::fs::PermissionsExt as _;
    let _one = serial();
    let dir = tempfile::tempdir().unwrap();
    for (line, named) in [
        ("#!/nonexistent/interp\n", "/nonexistent/interp"),
        (
            "#!/usr/bin/env no-such-interpreter-here\n",
            "no-such-interpreter-here",
        ),
    ] {
        let path = dir.path().join("run");
        std::fs::write(&path, format!("{line}echo ran\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        let err = run_script(&request(&path, Duration::from_secs(20)))
            .expect_err("a start that cannot happen");
        assert!(err.to_string().contains(named), "{err}");
    }
}
