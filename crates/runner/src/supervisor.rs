//! The script supervisor: a small process between the host and a script that outlives
//! nothing it started. On Linux it makes itself a child subreaper, so every descendant that
//! leaves the script's process group (`setsid`, `setpgid`, a double fork) is reparented to
//! it rather than to init; when the script exits, or when the host closes the supervisor's
//! stdin (the timeout, or the host itself gone), it kills every descendant it still has,
//! reaps them, and exits with the script's status (a script killed by a signal makes the
//! supervisor die of the same signal). With every descendant dead, the last write ends of
//! the script's pipes close, so the host's reader threads end with the script.
//!
//! The supervisor is a mode of an executable the host names
//! (`PolicyBuilder::script_supervisor` of the executor): `skillctl` serves it from its own binary,
//! called with [`SUPERVISE_ARG`] first, and a host embedding the library calls
//! [`supervise`] when its `main` sees that argument (this crate also builds a
//! `skills-supervise` binary that does just that). The supervisor is never the host
//! process itself, which may serve many sessions: a subreaper host would collect every
//! orphan of every script for ever.
//!
//! Elsewhere than Linux there is no subreaper: the supervisor still kills the script's
//! process group and its direct children, but a descendant that left the group escapes.
//! Without a supervisor configured, scripts run as before: their process group is killed
//! at exit and at the timeout, and a descendant that left the group escapes.

use std::ffi::OsString;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;

/// The first argument that asks an executable to act as the supervisor.
pub const SUPERVISE_ARG: &str = "__skills-supervise";

/// The exit code of a supervisor stopped by its host (stdin closed) before the script ended.
pub const STOPPED: i32 = 125;

/// Runs the supervisor for `args` (what follows [`SUPERVISE_ARG`]: the program, then its
/// arguments) and returns the exit code to leave with, after every descendant is dead. A
/// script killed by a signal makes this process die of the same signal first.
pub fn supervise(args: &[OsString]) -> i32 {
    let Some((program, rest)) = args.split_first() else {
        return STOPPED;
    };
    become_subreaper();
    let child =
        crate::spawn::spawn_when_not_busy(Command::new(program).args(rest).stdin(Stdio::null()));
    let mut child = match child {
        Ok(c) => c,
        // The host reports a failed start from the exit code: 127, as a shell would.
        Err(_) => return 127,
    };
    enum Ended {
        Exited(Option<ExitStatus>),
        Stopped,
    }
    let (tx, ended) = mpsc::channel();
    let exit_tx = tx.clone();
    let waiter = std::thread::spawn(move || {
        let _ = exit_tx.send(Ended::Exited(child.wait().ok()));
    });
    // The host closes our stdin to stop the script (or dies, which closes it too).
    std::thread::spawn(move || {
        let mut sink = [0u8; 64];
        let mut stdin = std::io::stdin();
        while matches!(std::io::Read::read(&mut stdin, &mut sink), Ok(n) if n > 0) {}
        let _ = tx.send(Ended::Stopped);
    });
    let outcome = ended.recv().unwrap_or(Ended::Stopped);
    kill_descendants();
    let _ = waiter.join();
    match outcome {
        Ended::Exited(Some(status)) => exit_code(status),
        Ended::Exited(None) | Ended::Stopped => STOPPED,
    }
}

#[cfg(target_os = "linux")]
fn become_subreaper() {
    if let Err(e) = rustix::process::set_child_subreaper(Some(rustix::process::getpid())) {
        tracing::warn!(error = %e, "cannot become a child subreaper");
    }
}

#[cfg(not(target_os = "linux"))]
fn become_subreaper() {}

/// The code to leave with: the script's, or (killed by a signal) the same death.
fn exit_code(status: ExitStatus) -> i32 {
    if let Some(code) = status.code() {
        return code;
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt as _;
        if let Some(signal) = status.signal() {
            if let Some(sig) = rustix::process::Signal::from_named_raw(signal) {
                let _ = rustix::process::kill_process(rustix::process::getpid(), sig);
            }
            return 128 + signal;
        }
    }
    STOPPED
}

/// Kills every process this one is the parent of, again and again as orphans are
/// reparented to it, and reaps them, until it has no child left. It only ever blocks on a
/// process it has just killed (which dies at once), never on one a grandchild left behind.
#[cfg(unix)]
fn kill_descendants() {
    use rustix::process::{kill_process, waitpid, Pid, Signal, WaitOptions};
    let me = rustix::process::getpid().as_raw_nonzero().get();
    loop {
        let children: Vec<Pid> = children_of(me)
            .into_iter()
            .filter_map(Pid::from_raw)
            .collect();
        if children.is_empty() {
            return;
        }
        for pid in &children {
            let _ = kill_process(*pid, Signal::KILL);
        }
        for pid in &children {
            // Reaped here, or already by the thread that waits for the script (then this
            // fails at once): either way, it is gone.
            let _ = waitpid(Some(*pid), WaitOptions::empty());
        }
    }
}

#[cfg(not(unix))]
fn kill_descendants() {}

/// The processes whose parent is `parent`, from `/proc` (empty where there is none).
#[cfg(unix)]
fn children_of(parent: i32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| {
                    // `pid (comm) state ppid ...`: comm may hold spaces and parentheses.
                    let after = &stat[stat.rfind(')')? + 1..];
                    after.split_whitespace().nth(1)?.parse::<i32>().ok()
                })
                == Some(parent)
        })
        .collect()
}
