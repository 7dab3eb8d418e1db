//! The script runner: one script as a real child process, with argv (never a shell), a
//! cleared environment, a timeout that kills the whole process group, and capped output.
//!
//! # How a run works
//!
//! * The program is the interpreter for the script's extension (see [`interpreter_for`]),
//!   given the script's absolute path and then the arguments; without a known extension the
//!   script itself is executed and must carry an executable bit. Arguments go straight into
//!   argv: no shell ever sees them. The interpreter is looked up on the `PATH` the child
//!   gets (so a `PATH` passed in the request's environment applies to it too).
//! * The environment is cleared except for `PATH`, `HOME` and `LANG` (copied from this
//!   process when set), then the request's pairs are added (and may override those).
//! * stdin is `/dev/null`; stdout and stderr are pipes, each drained by its own thread
//!   into a buffer shared with the caller. A reader keeps at most `output_limit` bytes and
//!   keeps reading (and discarding) past it, so the child never blocks on a full pipe.
//! * On unix the child leads a new process group (`process_group(0)`). A watcher thread
//!   blocks until the child has exited; the caller waits for that with
//!   `recv_timeout(timeout)`, so nothing sleeps or polls. On Linux and Android the watcher
//!   uses `waitid(WEXITED | WNOWAIT)`, which leaves the child unreaped: its PID (and so
//!   the process group ID) cannot be reused before the caller has killed the group and
//!   reaped it. Elsewhere the watcher reaps the child itself.
//! * Whether the child exited or the timeout fired, the whole group gets `SIGKILL` (on a
//!   timeout the child itself too, in case it left the group): background grandchildren
//!   die, and with them the last write ends of the pipes. The readers are then given a
//!   short grace period ([`READER_GRACE`]) to reach end of file; a process that escaped
//!   the group (`setsid`) and still holds a pipe cannot hold up the run beyond that, and
//!   whatever was read so far is returned.
//! * Off unix there are no process groups: the child is polled with `try_wait` and killed
//!   on its own at the timeout; the readers' grace period still bounds the run.

use std::io::{self, Read};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use serde::Serialize;
use thiserror::Error;

/// What to run.
#[derive(Debug, Clone)]
pub struct ScriptRequest<'a> {
    /// The script (absolute path, already checked to be inside the skill's `scripts/`).
    pub script: &'a Path,
    /// Arguments, passed as argv.
    pub args: &'a [String],
    /// Environment variables the call passes (added to `PATH`, `HOME`, `LANG`).
    pub env: &'a [(String, String)],
    /// The names `env` may hold: the host's allow-list and the skill's `security.scriptEnv`.
    /// Any other name is refused, and so is every name an interpreter, the shell or the
    /// loader reads as code, options or a search path, even when listed here.
    pub allowed_env: &'a [String],
    /// The working directory (already checked by the caller).
    pub workdir: &'a Path,
    /// Kill the process group after this long.
    pub timeout: Duration,
    /// Cap on each of stdout and stderr, in bytes.
    pub output_limit: usize,
    /// The supervisor executable ([`crate::supervise`]), when the host has one: the script
    /// then runs under it, and every descendant dies with the script.
    pub supervisor: Option<&'a Path>,
    /// Stops the run when cancelled (Linux: as a timeout does, descendants included).
    pub cancel: Option<&'a crate::Cancellation>,
    /// Secrets the host granted and the skill declared: set in the child's environment
    /// after `env`, and redacted from its output ([`redact`](crate::redact)). A name the
    /// environment filter refuses, a name `env` also sets, and a value shorter than
    /// [`MIN_SECRET_LEN`](crate::MIN_SECRET_LEN) bytes are refused.
    pub secrets: &'a [(String, String)],
}

/// What a run produced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ScriptOutput {
    /// The exit code; `None` when killed by a signal (a timeout included).
    pub exit_code: Option<i32>,
    /// Standard output (lossy UTF-8), at most `output_limit` bytes.
    pub stdout: String,
    /// Standard error (lossy UTF-8), at most `output_limit` bytes.
    pub stderr: String,
    /// Whether stdout or stderr was cut at the limit.
    pub truncated: bool,
    /// Whether the timeout killed it.
    pub timed_out: bool,
    /// Whether the caller cancelled it (the run was stopped, its descendants killed).
    pub cancelled: bool,
    /// Wall-clock duration.
    pub duration_ms: u64,
}

/// Why a script could not be started.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ScriptError {
    /// No interpreter for the extension, and the file is not executable.
    #[error(
        "{0}: not executable and no interpreter is known for its extension (.py, .sh, .js, .rb)"
    )]
    NotExecutable(String),
    /// The process could not be spawned.
    #[error("cannot start {path}: {source}")]
    Spawn {
        /// The script.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The request passes an environment variable the script may not receive.
    #[error("the environment variable {name:?} cannot be passed to this script: {reason}")]
    Environment {
        /// The variable.
        name: String,
        /// Why.
        reason: &'static str,
    },
}

/// The interpreter for a script, by extension: `.py` python3, `.sh` bash, `.js` node,
/// `.rb` ruby; `None` means the file must be executable itself.
pub fn interpreter_for(script: &Path) -> Option<&'static str> {
    match script.extension().and_then(|e| e.to_str()) {
        Some("py") => Some("python3"),
        Some("sh") => Some("bash"),
        Some("js") => Some("node"),
        Some("rb") => Some("ruby"),
        _ => None,
    }
}

/// Variables copied from this process into the child's otherwise empty environment.
const PASSED_THROUGH: &[&str] = &[
    "PATH",
    "HOME",
    "LANG",
    // Windows programs commonly fail to start without it.
    #[cfg(windows)]
    "SYSTEMROOT",
];

/// How long the pipe readers get, once the process group is dead, to reach end of file.
/// Only a process that left the group while holding a pipe makes this matter.
const READER_GRACE: Duration = Duration::from_millis(500);

/// The size of one read from a pipe.
const CHUNK: usize = 64 * 1024;

/// Runs one script to completion or timeout.
pub fn run_script(request: &ScriptRequest<'_>) -> Result<ScriptOutput, ScriptError> {
    Ready::check(request)?.run()
}

/// A run every check of the request has passed (the environment's names, an interpreter or
/// an executable file, no NUL byte in an argument or a value), not started yet: the
/// executor records `script_started` between the two, so that it follows every check.
#[derive(Debug)]
pub struct Ready<'r, 'a> {
    request: &'r ScriptRequest<'a>,
    script: std::path::PathBuf,
    command: Command,
}

impl<'r, 'a> Ready<'r, 'a> {
    /// Checks `request` and makes its command.
    pub fn check(request: &'r ScriptRequest<'a>) -> Result<Ready<'r, 'a>, ScriptError> {
        // The filter is here, in the runner, so that no caller can skip it: an allow-list,
        // with a floor no allow-list lifts.
        check_env(request)?;
        let script =
            std::path::absolute(request.script).map_err(|e| spawn_error(request.script, e))?;
        let nul = request
            .args
            .iter()
            .chain(request.env.iter().map(|(_, value)| value))
            .chain(request.secrets.iter().map(|(_, value)| value))
            .any(|text| text.contains('\0'));
        if nul {
            return Err(spawn_error(
                &script,
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "an argument or an environment value holds a NUL byte",
                ),
            ));
        }
        let command = command_for(&script, request)?;
        if request.supervisor.is_some() {
            // The supervisor can only say a failed start by an exit code (127, as a shell
            // does), which a script can give too: what makes a start fail is asked here,
            // where it can be said (a run without a supervisor hears it from `exec`).
            startable(&script).map_err(|e| spawn_error(&script, e))?;
        }
        Ok(Ready {
            request,
            script,
            command,
        })
    }

    /// Starts the script and waits for it.
    pub fn run(self) -> Result<ScriptOutput, ScriptError> {
        run_ready(self.request, &self.script, self.command)
    }
}

/// Whether the program that would run `script` can be found: the interpreter its
/// extension names, on `PATH`; else the one its `#!` line names (and the program
/// `/usr/bin/env` is asked for, on `PATH`). A script that names nothing is taken to be
/// a program of its own.
fn startable(script: &Path) -> io::Result<()> {
    let missing = |what: &str| {
        io::Error::new(
            io::ErrorKind::NotFound,
            format!("{what}: no such interpreter"),
        )
    };
    if let Some(interpreter) = interpreter_for(script) {
        return on_path(interpreter)
            .then_some(())
            .ok_or_else(|| missing(interpreter));
    }
    let mut head = [0u8; 256];
    let read = {
        use std::io::Read as _;
        // Without blocking: a FIFO swapped in for the script since its check hung the
        // session here, before any timeout applied.
        skills_storage::open_regular(script)?.0.read(&mut head)?
    };
    let Some(line) = head[..read].strip_prefix(b"#!") else {
        return Ok(());
    };
    let line = line.split(|b| *b == b'\n').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line);
    let mut words = line.split_ascii_whitespace();
    let Some(program) = words.next() else {
        return Ok(());
    };
    if !Path::new(program).is_absolute() {
        return Ok(());
    }
    if !executable_file(Path::new(program)) {
        return Err(missing(program));
    }
    if Path::new(program).file_name() == Some(std::ffi::OsStr::new("env")) {
        if let Some(asked) = words
            .next()
            .filter(|w| !w.starts_with('-') && !w.contains('='))
        {
            if !on_path(asked) {
                return Err(missing(asked));
            }
        }
    }
    Ok(())
}

/// Whether `name` is an executable file in a folder of this process's `PATH` (the child's
/// too: `PATH` is passed through), or, naming a path, is one itself.
fn on_path(name: &str) -> bool {
    on_search_path(name, std::env::var_os("PATH").as_deref())
}

/// [`on_path`] with the search path given: with none, `execvp` and `env` search the C
/// library's default (`/bin:/usr/bin`), so this does too.
fn on_search_path(name: &str, path: Option<&std::ffi::OsStr>) -> bool {
    if name.contains('/') {
        return executable_file(Path::new(name));
    }
    let path = path.unwrap_or_else(|| std::ffi::OsStr::new("/bin:/usr/bin"));
    std::env::split_paths(path).any(|dir| executable_file(&dir.join(name)))
}

/// Whether `path` is a file this process may execute (by its mode bits).
fn executable_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && sys::is_executable(&m))
}

/// Refuses an environment name the script may not receive.
fn check_env(request: &ScriptRequest<'_>) -> Result<(), ScriptError> {
    for (name, _) in request.env {
        let reason = if crate::env::refused(name) {
            Some("names are upper-case letters, digits and underscores, and none known to make the shell, an interpreter, the loader, the C library or a common tool read code, options, flags, a search path or its configuration (names ending in PATH, FLAGS, OPTS, OPTIONS, RC, PROXY, HOME, ... included)")
        } else if !request.allowed_env.iter().any(|a| a == name) {
            Some("only the names the host allows and the skill declares (security.scriptEnv) are passed")
        } else {
            None
        };
        if let Some(reason) = reason {
            return Err(ScriptError::Environment {
                name: name.clone(),
                reason,
            });
        }
    }
    for (name, value) in request.secrets {
        let reason = if crate::env::refused(name) {
            Some("a name the environment filter refuses is never a secret")
        } else if request.env.iter().any(|(n, _)| n == name) {
            Some("a call cannot set the name of a secret")
        } else if value.len() < crate::MIN_SECRET_LEN {
            Some("a secret's value is at least 8 bytes long")
        } else {
            None
        };
        if let Some(reason) = reason {
            return Err(ScriptError::Environment {
                name: name.clone(),
                reason,
            });
        }
    }
    Ok(())
}

/// Starts a checked command and waits for it.
fn run_ready(
    request: &ScriptRequest<'_>,
    script: &Path,
    mut command: Command,
) -> Result<ScriptOutput, ScriptError> {
    let script = script.to_path_buf();
    let started = Instant::now();
    let mut child = crate::spawn::spawn_when_not_busy(&mut command).map_err(|e| {
        match interpreter_for(&script) {
            Some(interpreter) => spawn_error(
                &script,
                io::Error::new(e.kind(), format!("{interpreter}: {e}")),
            ),
            None => spawn_error(&script, e),
        }
    })?;

    let limit = request.output_limit;
    // Kept beyond the cap: enough for a secret that starts before it to be seen whole,
    // and redacted, before the output is cut.
    let kept = limit.saturating_add(crate::redact::slack(request.secrets));
    let stdout = Capture::start(child.stdout.take(), kept, "script-stdout");
    let stderr = Capture::start(child.stderr.take(), kept, "script-stderr");
    let (stdout, stderr) = match (stdout, stderr) {
        (Ok(stdout), Ok(stderr)) => (stdout, stderr),
        (Err(e), _) | (_, Err(e)) => {
            sys::abort(&mut child);
            return Err(spawn_error(&script, e));
        }
    };

    // A supervised run is stopped by closing the supervisor's stdin: it then kills every
    // descendant before it exits.
    let stop = child.stdin.take();
    let supervised = request.supervisor.is_some();
    let waited = sys::wait(child, request.timeout, stop, request.cancel)
        .map_err(|e| spawn_error(&script, e))?;

    let deadline = Instant::now()
        .checked_add(READER_GRACE)
        .unwrap_or_else(Instant::now);
    let (stdout, stdout_cut) = stdout.finish(deadline, limit, request.secrets);
    let (stderr, stderr_cut) = stderr.finish(deadline, limit, request.secrets);

    let mut exit_code = waited.status.and_then(|status| status.code());
    // A child that exited on its own just as the timer fired was not killed by it; a
    // supervisor stopped at the timeout says so with its own code.
    let stopped = exit_code.is_none() || (supervised && exit_code == Some(crate::STOPPED));
    let timed_out = waited.timed_out && stopped;
    let cancelled = waited.cancelled && stopped;
    if timed_out || cancelled {
        exit_code = None;
    }
    Ok(ScriptOutput {
        exit_code,
        stdout,
        stderr,
        truncated: stdout_cut || stderr_cut,
        timed_out,
        cancelled,
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    })
}

/// The command for a script: interpreter or the file itself, argv, environment, working
/// directory, stdio and (on unix) a process group of its own.
fn command_for(script: &Path, request: &ScriptRequest<'_>) -> Result<Command, ScriptError> {
    let metadata = std::fs::metadata(script).map_err(|e| spawn_error(script, e))?;
    let mut argv: Vec<&std::ffi::OsStr> = match interpreter_for(script) {
        Some(interpreter) => vec![interpreter.as_ref(), script.as_os_str()],
        None if sys::is_executable(&metadata) => vec![script.as_os_str()],
        None => return Err(ScriptError::NotExecutable(script.display().to_string())),
    };
    argv.extend(request.args.iter().map(std::ffi::OsStr::new));
    let mut command = match request.supervisor {
        Some(supervisor) => {
            let mut command = Command::new(supervisor);
            command.arg(crate::SUPERVISE_ARG).args(&argv);
            command
        }
        None => {
            let mut command = Command::new(argv[0]);
            command.args(&argv[1..]);
            command
        }
    };

    command.env_clear();
    for &name in PASSED_THROUGH {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
    for (name, value) in request.env {
        command.env(name, value);
    }
    for (name, value) in request.secrets {
        command.env(name, value);
    }

    command
        .current_dir(request.workdir)
        // The supervisor's stdin is how the runner stops it; the script's is /dev/null.
        .stdin(if request.supervisor.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    sys::configure(&mut command);
    Ok(command)
}

fn spawn_error(script: &Path, source: io::Error) -> ScriptError {
    ScriptError::Spawn {
        path: script.display().to_string(),
        source,
    }
}

/// How the wait for the child ended.
#[derive(Debug)]
struct Waited {
    /// The child's status, when it could be collected.
    status: Option<ExitStatus>,
    /// Whether the timeout fired before the child exited.
    timed_out: bool,
    /// Whether the caller cancelled the run before the child exited.
    cancelled: bool,
}

/// What a pipe reader has collected so far.
#[derive(Debug, Default)]
struct Captured {
    /// At most the limit's worth of bytes.
    data: Vec<u8>,
    /// Whether bytes past the limit were discarded.
    truncated: bool,
    /// Set when the caller has taken `data`: anything read later is discarded.
    taken: bool,
}

/// One pipe drained by its own thread.
#[derive(Debug)]
struct Capture {
    shared: Arc<Mutex<Captured>>,
    /// Disconnected once the reader thread is done (end of file or a read error) and has
    /// closed its end of the pipe.
    done: Receiver<()>,
    thread: Option<thread::JoinHandle<()>>,
}

impl Capture {
    /// Starts a thread that reads `pipe` to its end, keeping at most `limit` bytes.
    fn start<R: Read + Send + 'static>(
        pipe: Option<R>,
        limit: usize,
        name: &str,
    ) -> io::Result<Self> {
        let shared = Arc::new(Mutex::new(Captured::default()));
        let (done_tx, done) = mpsc::channel::<()>();
        let mut handle = None;
        if let Some(mut pipe) = pipe {
            let buffer = Arc::clone(&shared);
            handle = Some(
                thread::Builder::new()
                    .name(name.to_owned())
                    .spawn(move || {
                        let mut chunk = vec![0_u8; CHUNK];
                        loop {
                            match pipe.read(&mut chunk) {
                                Ok(0) => break,
                                Ok(n) => {
                                    let mut captured = buffer.lock();
                                    if captured.taken {
                                        continue;
                                    }
                                    let keep = n.min(limit.saturating_sub(captured.data.len()));
                                    captured.data.extend_from_slice(&chunk[..keep]);
                                    if keep < n {
                                        captured.truncated = true;
                                    }
                                }
                                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                                Err(_) => break,
                            }
                        }
                        // The pipe closes before the caller hears the reader is done.
                        drop(pipe);
                        drop(done_tx);
                    })?,
            );
        }
        Ok(Self {
            shared,
            done,
            thread: handle,
        })
    }

    /// Waits for the reader until `deadline` at the latest, then takes what it has read,
    /// as text of at most `limit` bytes, and whether anything was cut. A reader that is done
    /// is joined: no thread or pipe outlives the run.
    fn finish(
        mut self,
        deadline: Instant,
        limit: usize,
        secrets: &[(String, String)],
    ) -> (String, bool) {
        // `Disconnected` means the reader is done; `Timeout` that something outside the
        // script's reach still holds the pipe: take what there is.
        let done = self
            .done
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .is_err_and(|e| e == mpsc::RecvTimeoutError::Disconnected);
        if done {
            if let Some(t) = self.thread.take() {
                let _ = t.join();
            }
        }
        let (data, truncated) = {
            let mut captured = self.shared.lock();
            captured.taken = true;
            (std::mem::take(&mut captured.data), captured.truncated)
        };
        let (data, cut) = crate::redact::redact(data, limit, secrets);
        into_text(data, truncated || cut, limit)
    }
}

/// Lossy UTF-8 of at most `limit` bytes. When the bytes were cut at the limit, a character
/// cut in half at the end is dropped rather than turned into U+FFFD; if replacement
/// characters still make the text longer than the limit, it is cut at a character boundary.
fn into_text(mut data: Vec<u8>, mut truncated: bool, limit: usize) -> (String, bool) {
    if truncated {
        trim_incomplete_char(&mut data);
    }
    let mut text = match String::from_utf8(data) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    };
    if text.len() > limit {
        let mut end = limit;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        truncated = true;
    }
    (text, truncated)
}

/// Drops a UTF-8 sequence left incomplete at the end of `data`.
fn trim_incomplete_char(data: &mut Vec<u8>) {
    let len = data.len();
    // An incomplete sequence is at most 3 bytes long: its lead byte is among the last 3.
    for back in 1..=len.min(3) {
        let byte = data[len - back];
        if byte & 0xC0 == 0x80 {
            continue; // a continuation byte: look further back for the lead
        }
        let needed = match byte {
            0xF0..=0xF7 => 4,
            0xE0..=0xEF => 3,
            0xC0..=0xDF => 2,
            _ => 1,
        };
        if needed > back {
            data.truncate(len - back);
        }
        return;
    }
}

#[cfg(unix)]
mod sys {
    //! Process groups, `SIGKILL` through rustix, and a watcher thread for the exit.

    use std::fs::Metadata;
    use std::io;
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    use std::process::{Child, ChildStdin, Command};
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    use std::sync::mpsc::{self, RecvTimeoutError};
    use std::thread;
    use std::time::Duration;

    use rustix::io::Errno;

    /// How long a supervisor asked to stop gets to kill its descendants before it is killed.
    const STOP_GRACE: Duration = Duration::from_secs(5);
    use rustix::process::{kill_process, kill_process_group, Pid, Signal};

    use super::Waited;

    /// Puts the child in a new process group of its own (its PID is the group ID).
    pub(super) fn configure(command: &mut Command) {
        command.process_group(0);
    }

    /// A regular file with at least one executable bit.
    pub(super) fn is_executable(metadata: &Metadata) -> bool {
        metadata.is_file() && metadata.permissions().mode() & 0o111 != 0
    }

    /// Kills the child and its group and reaps the child.
    pub(super) fn abort(child: &mut Child) {
        let pid = Pid::from_child(child);
        kill(pid, true);
        let _ = child.wait();
    }

    /// `SIGKILL` to the process group led by `pid` and, with `child_too`, to `pid` itself
    /// (which may have left the group). "No such process" is the expected outcome when
    /// the group is already empty.
    fn kill(pid: Pid, child_too: bool) {
        if child_too {
            if let Err(e) = kill_process(pid, Signal::KILL) {
                if e != Errno::SRCH {
                    tracing::warn!(pid = pid.as_raw_nonzero().get(), error = %e, "cannot kill the script");
                }
            }
        }
        if let Err(e) = kill_process_group(pid, Signal::KILL) {
            if e != Errno::SRCH {
                tracing::warn!(pgid = pid.as_raw_nonzero().get(), error = %e, "cannot kill the script's process group");
            }
        }
    }

    /// Waits for the child to exit, for `timeout` at most; then kills the whole process
    /// group (and on a timeout the child itself) and reaps the child.
    ///
    /// The watcher thread only observes the exit (`waitid` with `WNOWAIT`): the child stays
    /// unreaped, so its PID, which is the group ID, cannot be reused by an unrelated process
    /// before the group has been killed.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub(super) fn wait(
        mut child: Child,
        timeout: Duration,
        stop: Option<ChildStdin>,
        cancel: Option<&crate::Cancellation>,
    ) -> io::Result<Waited> {
        use rustix::process::{waitid, WaitId, WaitIdOptions};

        let pid = Pid::from_child(&child);
        let (exited_tx, exited) = crossbeam_channel::bounded::<()>(1);
        let watcher = thread::Builder::new()
            .name("script-wait".to_owned())
            .spawn(move || loop {
                match waitid(
                    WaitId::Pid(pid),
                    WaitIdOptions::EXITED | WaitIdOptions::NOWAIT,
                ) {
                    Ok(_) => {
                        let _ = exited_tx.send(());
                        break;
                    }
                    Err(e) if e == Errno::INTR => {}
                    // Cannot happen for an unreaped child of ours; dropping the sender makes
                    // the caller kill the child rather than wait for ever.
                    Err(_) => break,
                }
            });
        if let Err(e) = watcher {
            abort(&mut child);
            return Err(e);
        }

        // A timeout too long to add to now (a host's `Duration::MAX`, "no timeout") has no
        // deadline: it panicked here once the script had started.
        let timer = std::time::Instant::now()
            .checked_add(timeout)
            .map_or_else(crossbeam_channel::never, crossbeam_channel::at);
        let never = crossbeam_channel::never();
        let mut cancel_rx = cancel.map_or(never.clone(), crate::Cancellation::receiver);
        // Exited, timed out, or cancelled (a cancellation handle dropped unused is not a
        // cancellation: it stops being listened to).
        let (mut exited_now, timed_out, cancelled) = loop {
            crossbeam_channel::select! {
                recv(exited) -> r => break (r.is_ok(), false, false),
                recv(cancel_rx) -> r => match r {
                    Ok(()) => break (false, false, true),
                    Err(_) => cancel_rx = never.clone(),
                },
                recv(timer) -> _ => break (false, true, false),
            }
        };
        // A supervisor is asked to stop (its stdin closed): it kills every descendant, the
        // ones that left the group included, before it exits. Killing it outright would
        // hand them to init.
        drop(stop);
        if timed_out || cancelled {
            exited_now = exited.recv_timeout(STOP_GRACE).is_ok();
        }
        kill(pid, !exited_now);
        let status = child.wait().ok();
        Ok(Waited {
            status,
            timed_out,
            cancelled,
        })
    }

    /// Waits for the child to exit, for `timeout` at most; then kills the whole process
    /// group (and on a timeout the child itself) and collects the child's status.
    ///
    /// Here the watcher thread reaps the child itself (`waitid` with `WNOWAIT` is not
    /// reliable everywhere), so there is a tiny window in which the group ID could be
    /// reused; PIDs are not recycled that fast in practice.
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    pub(super) fn wait(
        mut child: Child,
        timeout: Duration,
        stop: Option<ChildStdin>,
        _cancel: Option<&crate::Cancellation>,
    ) -> io::Result<Waited> {
        let pid = Pid::from_child(&child);
        let (status_tx, status) = mpsc::channel();
        let watcher = thread::Builder::new()
            .name("script-wait".to_owned())
            .spawn(move || {
                let _ = status_tx.send(child.wait());
            });
        if let Err(e) = watcher {
            // The child went down with the thread's closure, unreaped: kill it anyway.
            kill(pid, true);
            return Err(e);
        }

        match status.recv_timeout(timeout) {
            Ok(result) => {
                kill(pid, false);
                Ok(Waited {
                    status: result.ok(),
                    timed_out: false,
                    cancelled: false,
                })
            }
            Err(RecvTimeoutError::Timeout) => {
                // A supervisor stops when its stdin closes; give it the grace, then kill.
                drop(stop);
                let result = status.recv_timeout(STOP_GRACE).ok();
                kill(pid, true);
                Ok(Waited {
                    status: result.and_then(Result::ok),
                    timed_out: true,
                    cancelled: false,
                })
            }
            Err(RecvTimeoutError::Disconnected) => {
                kill(pid, true);
                Ok(Waited {
                    status: None,
                    timed_out: false,
                    cancelled: false,
                })
            }
        }
    }
}

#[cfg(not(unix))]
mod sys {
    //! Fallback without process groups: only the child itself is killed at the timeout,
    //! and its exit is polled.

    use std::fs::Metadata;
    use std::io;
    use std::process::{Child, Command};
    use std::thread;
    use std::time::{Duration, Instant};

    use super::Waited;

    /// How often the child is polled.
    const POLL: Duration = Duration::from_millis(10);

    /// Nothing to configure without process groups.
    pub(super) fn configure(_command: &mut Command) {}

    /// Without executable bits, any regular file is left to the OS to run (or refuse).
    pub(super) fn is_executable(metadata: &Metadata) -> bool {
        metadata.is_file()
    }

    /// Kills and reaps the child.
    pub(super) fn abort(child: &mut Child) {
        let _ = child.kill();
        let _ = child.wait();
    }

    /// Polls the child until it exits or `timeout` has passed, then kills it.
    pub(super) fn wait(
        mut child: Child,
        timeout: Duration,
        _stop: Option<std::process::ChildStdin>,
        _cancel: Option<&crate::Cancellation>,
    ) -> io::Result<Waited> {
        let deadline = Instant::now().checked_add(timeout);
        loop {
            match child.try_wait() {
                Ok(Some(status)) => {
                    return Ok(Waited {
                        status: Some(status),
                        timed_out: false,
                        cancelled: false,
                    })
                }
                Ok(None) => {}
                Err(e) => {
                    abort(&mut child);
                    return Err(e);
                }
            }
            if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                let _ = child.kill();
                let status = child.wait().ok();
                return Ok(Waited {
                    status,
                    timed_out: true,
                    cancelled: false,
                });
            }
            thread::sleep(POLL);
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    // Regression (review): the interpreter check opened the script blocking, so a FIFO
    // swapped in for it after its check hung the session before any timeout applied.
    #[test]
    fn the_interpreter_check_never_blocks_on_a_fifo() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("run");
        let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        assert!(startable(&fifo).is_err());
    }

    // Regression (review): with no `PATH`, every interpreter was missing, where `execvp`
    // and `env` search the C library's default path and the script ran.
    #[test]
    fn with_no_path_the_default_search_path_is_searched() {
        assert!(on_search_path("sh", None));
        assert!(!on_search_path("sh", Some(std::ffi::OsStr::new(""))));
    }
}
