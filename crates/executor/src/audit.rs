//! Audit events and sinks. Every activation, deactivation, tool decision, file read, script
//! run and hook run becomes an [`AuditEvent`], logged through `tracing` (target
//! `agent_skills::audit`) and recorded by an [`AuditSink`] before the call returns.

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::Path;
use std::time::SystemTime;

use parking_lot::Mutex;
use serde::Serialize;

/// What an audit event records. More kinds may come: a reader accepts a kind it does not
/// know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum AuditKind {
    /// A skill was pushed on a session's stack.
    SkillActivated,
    /// A skill left a session's stack.
    SkillDeactivated,
    /// A model's load (`skills_load`, `skill`) was refused by a rule: an active skill's
    /// `allowed-tools`, a layer's trust, `disable-model-invocation`.
    SkillActivationRefused,
    /// A model's `skills_unload` was refused by a rule: a skill the host pinned.
    SkillDeactivationRefused,
    /// A host tool call was decided (allowed) under at least one active skill.
    ToolExecutionInSkill,
    /// A host tool call was decided with no skill active.
    ToolCheckedWithoutSkill,
    /// A host tool call was denied.
    ToolRestrictionViolated,
    /// A host read of a skill's script was refused.
    ScriptReadBlocked,
    /// `skills_read` served (or refused) a file.
    SkillFileRead,
    /// `skills_run_script` is about to start a script: written before the process starts,
    /// and the script does not start when it cannot be written.
    ScriptStarted,
    /// `skills_run_script` ran (or refused) a script.
    ScriptExecuted,
    /// A `hooks.pre` or `hooks.post` script is about to start (as [`AuditKind::ScriptStarted`]).
    HookStarted,
    /// A `hooks.pre` or `hooks.post` script ran.
    HookExecuted,
    /// A plugin root was registered over the protocol.
    PluginRegistered,
    /// A plugin root was unregistered over the protocol (its active skills were
    /// deactivated first, each with its own event).
    PluginUnregistered,
    /// An authoring or trust option that loosens the defaults is in force for the session.
    PolicyOverride,
    /// `skills_search` answered a query.
    SkillsSearched,
}

/// One audit record. Fields that do not apply are left out of the JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct AuditEvent {
    /// RFC 3339, UTC, milliseconds.
    pub timestamp: String,
    /// What happened.
    pub event: AuditKind,
    /// The session.
    pub session_id: String,
    /// The host's correlation id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub correlation_id: Option<String>,
    /// The agent type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// The task.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// The tenant.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenant_id: Option<String>,
    /// The skill concerned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skill_name: Option<String>,
    /// The tool called (a host tool, or the runtime tool that read or ran a file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// The file read, the script or hook run, the plugin root registered: relative to the
    /// skill folder for skill files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The rule that decided a tool call, as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// The `SKILL.md` digest of the version activated or deactivated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// For an activation that replaces a loaded version: the digest it replaces.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_digest: Option<String>,
    /// For an activation: `model` or `host`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub activated_by: Option<String>,
    /// The plugin registered or unregistered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plugin_id: Option<String>,
    /// For `policy_override`: the option in force.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub option: Option<String>,
    /// The decision, for tool calls.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_allowed: Option<bool>,
    /// The rules in force, for tool calls.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_tools: Option<Vec<String>>,
    /// What went wrong, or why a call was denied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// How long it took.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// For `skills_searched`: the query.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// For `skills_searched`: how many skills matched (before the limit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_count: Option<u64>,
}

impl AuditEvent {
    /// This event with every text field cut to [`MESSAGE_MAX`](skills_model::MESSAGE_MAX)
    /// bytes: a field may echo a model's input (a name of a megabyte, escaped), and the
    /// trail records what was asked, not all of it. Borrowed when no field is longer.
    pub(crate) fn bounded(&self) -> std::borrow::Cow<'_, AuditEvent> {
        use skills_model::{cut_text, MESSAGE_MAX};
        // Every text field, by reference (`&` or `&mut`): one list for the test and the cut.
        macro_rules! texts {
            ($event:ident, $($by:tt)+) => {
                [
                    $($by)+ $event.correlation_id,
                    $($by)+ $event.agent_id,
                    $($by)+ $event.task_id,
                    $($by)+ $event.tenant_id,
                    $($by)+ $event.skill_name,
                    $($by)+ $event.tool_name,
                    $($by)+ $event.path,
                    $($by)+ $event.rule,
                    $($by)+ $event.plugin_id,
                    $($by)+ $event.option,
                    $($by)+ $event.error,
                    $($by)+ $event.query,
                ]
            };
        }
        let long = |f: &Option<String>| f.as_ref().is_some_and(|s| s.len() > MESSAGE_MAX);
        if !texts!(self, &).into_iter().any(long) {
            return std::borrow::Cow::Borrowed(self);
        }
        let mut e = self.clone();
        for text in texts!(e, &mut).into_iter().flatten() {
            if text.len() > MESSAGE_MAX {
                *text = cut_text(text, MESSAGE_MAX).into_owned();
            }
        }
        std::borrow::Cow::Owned(e)
    }

    pub(crate) fn now(event: AuditKind, session_id: &str) -> AuditEvent {
        AuditEvent {
            timestamp: humantime::format_rfc3339_millis(SystemTime::now()).to_string(),
            event,
            session_id: session_id.to_owned(),
            correlation_id: None,
            agent_id: None,
            task_id: None,
            tenant_id: None,
            skill_name: None,
            tool_name: None,
            path: None,
            rule: None,
            digest: None,
            previous_digest: None,
            activated_by: None,
            plugin_id: None,
            option: None,
            tool_allowed: None,
            allowed_tools: None,
            error: None,
            duration_ms: None,
            query: None,
            result_count: None,
        }
    }
}

/// Where audit events go. `record` must have made the event durable (as the sink defines
/// it) when it returns `Ok`; an `Err` makes the call that needed the event fail closed.
pub trait AuditSink: Send + Sync + std::fmt::Debug {
    /// Records one event.
    fn record(&self, event: &AuditEvent) -> std::io::Result<()>;

    /// Records one event already serialised as JSON (no newline): a sink that writes JSON
    /// takes these bytes instead of serialising the event a second time. The default
    /// records the event.
    fn record_json(&self, event: &AuditEvent, json: &str) -> std::io::Result<()> {
        let _ = json;
        self.record(event)
    }

    /// Records several events, each already serialised as JSON (no newline), in order. A
    /// sink that writes JSON lines writes them at once (one write, one check of the file,
    /// one `fsync`), and on an error records none of them. The default records them one by
    /// one, and stops at the first error (the ones before it stay recorded).
    fn record_batch(&self, events: &[(AuditEvent, String)]) -> std::io::Result<()> {
        for (event, json) in events {
            self.record_json(event, json)?;
        }
        Ok(())
    }

    /// Whether the sink throws every event away: when it does and no `tracing` subscriber
    /// takes audit events, sessions do not build them at all. The default is `false`.
    fn discards(&self) -> bool {
        false
    }
}

/// Discards events (they still go to `tracing`).
#[derive(Debug, Default, Clone, Copy)]
pub struct NullSink;

impl AuditSink for NullSink {
    fn record(&self, _: &AuditEvent) -> std::io::Result<()> {
        Ok(())
    }

    fn discards(&self) -> bool {
        true
    }
}

/// Keeps events in memory, for tests and hosts that ship them elsewhere.
#[derive(Debug, Default)]
pub struct MemorySink {
    events: Mutex<Vec<AuditEvent>>,
}

impl MemorySink {
    /// A copy of every event recorded so far.
    pub fn events(&self) -> Vec<AuditEvent> {
        self.events.lock().clone()
    }
}

impl AuditSink for MemorySink {
    fn record(&self, event: &AuditEvent) -> std::io::Result<()> {
        self.events.lock().push(event.clone());
        Ok(())
    }
}

/// Appends one JSON object per line to a regular file, written whole and flushed
/// (optionally fsync'ed) before `record` returns.
///
/// A line is never half-written: each event is one write of a whole line, and a write that
/// fails part-way (a full disk) is rolled back to the last line boundary, so the next event
/// starts a line of its own. A file that does not end in a newline when opened (a crash
/// mid-write) is cut back to its last whole line. Only regular files are accepted (a FIFO
/// with no reader, a device, a directory are refused at once, without blocking). A file
/// unlinked or replaced while the session runs is noticed before the next write, which
/// then fails: the call fails closed. Several processes may write one audit file (one
/// `skillctl session` a conversation): on unix each append, with the length it may roll
/// back to and the rollback itself, and the repair at open, hold an exclusive `flock` on
/// the file, so one process's rollback never cuts off a line another wrote meanwhile.
#[derive(Debug)]
pub struct JsonlFileSink {
    path: std::path::PathBuf,
    file: Mutex<File>,
    fsync: bool,
}

/// What a line is appended to: a file, or a test double that fails part-way.
trait Journal {
    /// The current length (on unix, the sink reads it with the `fstat` that checks the file).
    #[cfg(any(test, not(unix)))]
    fn len(&mut self) -> std::io::Result<u64>;
    /// Writes all of `line` at the end.
    fn append(&mut self, line: &[u8]) -> std::io::Result<()>;
    /// Cuts the journal back to `len` bytes.
    fn truncate(&mut self, len: u64) -> std::io::Result<()>;
}

impl Journal for File {
    #[cfg(any(test, not(unix)))]
    fn len(&mut self) -> std::io::Result<u64> {
        Ok(self.metadata()?.len())
    }
    fn append(&mut self, line: &[u8]) -> std::io::Result<()> {
        self.write_all(line)?;
        self.flush()
    }
    fn truncate(&mut self, len: u64) -> std::io::Result<()> {
        self.set_len(len)
    }
}

/// Appends `line` whole, or leaves the journal as it was: a failed write is rolled back to
/// the length before it.
fn append_whole(journal: &mut impl Journal, line: &[u8], before: u64) -> std::io::Result<()> {
    if let Err(e) = journal.append(line) {
        if let Err(undo) = journal.truncate(before) {
            tracing::error!(error = %undo, "the audit file could not be cut back after a failed write");
        }
        return Err(e);
    }
    Ok(())
}

impl JsonlFileSink {
    /// Opens (creating it if needed) `path` for appending. Refuses anything but a regular
    /// file, without blocking on a FIFO, and cuts a torn last line back to the last whole
    /// one.
    pub fn open(path: &Path) -> std::io::Result<JsonlFileSink> {
        let mut options = OpenOptions::new();
        options.create(true).append(true).read(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt as _;
            // Non-blocking: opening a FIFO with no reader fails (ENXIO) instead of hanging.
            options.custom_flags(nonblocking_flag());
            // Made for its owner alone: whoever may open the file may also lock it, and so
            // hold up the sessions that write it (for `AUDIT_LOCK_WAIT` at most).
            options.mode(0o600);
        }
        let mut file = options.open(path)?;
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{} is not a regular file", path.display()),
            ));
        }
        {
            let held = Exclusive::take(&mut file, path)?;
            // Read again under the lock: another writer may have appended since.
            repair(&held, held.metadata()?.len())?;
        }
        Ok(JsonlFileSink {
            path: path.to_path_buf(),
            file: Mutex::new(file),
            fsync: false,
        })
    }

    /// The same sink, calling `fsync` after every line.
    #[must_use]
    pub fn with_fsync(mut self, yes: bool) -> JsonlFileSink {
        self.fsync = yes;
        self
    }

    /// Fails when the open file is no longer the one at the path (unlinked or replaced).
    /// Checks that the path still names the open file, and returns the file's length (read
    /// by the same `fstat`, so the append can be rolled back to it).
    fn still_the_file(&self, file: &mut File) -> std::io::Result<u64> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt as _;
            let open = file.metadata()?;
            let gone = || {
                std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    format!(
                        "the audit file {} was removed or replaced",
                        self.path.display()
                    ),
                )
            };
            if open.nlink() == 0 {
                return Err(gone());
            }
            let named = std::fs::metadata(&self.path).map_err(|_| gone())?;
            if (named.dev(), named.ino()) != (open.dev(), open.ino()) {
                return Err(gone());
            }
            Ok(open.len())
        }
        #[cfg(not(unix))]
        file.len()
    }
}

#[cfg(unix)]
fn nonblocking_flag() -> i32 {
    // The flag's bit pattern fits an i32 on every unix.
    i32::try_from(rustix::fs::OFlags::NONBLOCK.bits()).unwrap_or(0)
}

/// How long an append waits for another process's lock on the audit file before the call
/// is refused: a process that holds it for ever holds up no append longer than this (the
/// appends of one process wait in turn, each this long at most).
pub(crate) const AUDIT_LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// The longest single pause between two tries for the lock.
#[cfg(unix)]
const LOCK_PAUSE: std::time::Duration = std::time::Duration::from_millis(32);

/// An exclusive `flock` on an audit file, released when dropped: other processes appending
/// to the same file wait for it, for [`AUDIT_LOCK_WAIT`] at most (elsewhere than on unix,
/// and on a file system without `flock`, nothing: one process a file). The file is used
/// through it while it is held.
struct Exclusive<'a> {
    file: &'a mut File,
    held: bool,
}

impl<'a> Exclusive<'a> {
    /// Tries for the lock without blocking, again after pauses doubling from 1 ms (at most
    /// [`LOCK_PAUSE`]), for [`AUDIT_LOCK_WAIT`] in all. Only this thread ever asks for the
    /// lock through this descriptor: a waiter of its own, left blocked after a wait gave
    /// up, took the lock later through the same open file and let it go under a later
    /// append that believed it held it.
    fn take(file: &'a mut File, path: &Path) -> std::io::Result<Exclusive<'a>> {
        #[cfg(unix)]
        {
            use rustix::fs::{flock, FlockOperation};
            use rustix::io::Errno;
            let started = std::time::Instant::now();
            let mut pause = std::time::Duration::from_millis(1);
            let held = loop {
                match flock(&*file, FlockOperation::NonBlockingLockExclusive) {
                    Ok(()) => break true,
                    Err(Errno::INTR) => {}
                    Err(Errno::WOULDBLOCK) => {
                        if started.elapsed() >= AUDIT_LOCK_WAIT {
                            return Err(std::io::Error::new(
                                std::io::ErrorKind::WouldBlock,
                                format!(
                                    "another process has held the audit file {} locked for {} s",
                                    path.display(),
                                    AUDIT_LOCK_WAIT.as_secs()
                                ),
                            ));
                        }
                        std::thread::sleep(pause);
                        pause = (pause * 2).min(LOCK_PAUSE);
                    }
                    // A file system without `flock` (some network and FUSE ones): as before
                    // there was a lock, one process a file.
                    Err(Errno::NOLCK | Errno::OPNOTSUPP) => break false,
                    Err(e) => return Err(e.into()),
                }
            };
            Ok(Exclusive { file, held })
        }
        #[cfg(not(unix))]
        {
            let _ = path;
            Ok(Exclusive { file, held: false })
        }
    }
}

impl std::ops::Deref for Exclusive<'_> {
    type Target = File;
    fn deref(&self) -> &File {
        self.file
    }
}

impl std::ops::DerefMut for Exclusive<'_> {
    fn deref_mut(&mut self) -> &mut File {
        self.file
    }
}

impl Drop for Exclusive<'_> {
    fn drop(&mut self) {
        #[cfg(unix)]
        if !self.held {
            return;
        }
        #[cfg(unix)]
        if let Err(e) = rustix::fs::flock(&*self.file, rustix::fs::FlockOperation::Unlock) {
            tracing::error!(error = %e, "the audit file's lock could not be released");
        }
    }
}

/// Cuts a file that does not end in a newline back to its last whole line.
fn repair(file: &File, len: u64) -> std::io::Result<()> {
    use std::io::{Read as _, Seek as _, SeekFrom};
    if len == 0 {
        return Ok(());
    }
    let mut reader = file;
    let window = len.min(1 << 16);
    reader.seek(SeekFrom::Start(len - window))?;
    let mut tail = Vec::new();
    reader.take(window).read_to_end(&mut tail)?;
    if tail.last() == Some(&b'\n') {
        return Ok(());
    }
    let keep = match tail.iter().rposition(|b| *b == b'\n') {
        Some(i) => len - window + i as u64 + 1,
        // No newline in the last 64 KiB: the torn line is longer than any event; find the
        // boundary by reading the whole file.
        None => {
            reader.seek(SeekFrom::Start(0))?;
            let mut all = Vec::new();
            reader.read_to_end(&mut all)?;
            all.iter()
                .rposition(|b| *b == b'\n')
                .map_or(0, |i| i as u64 + 1)
        }
    };
    tracing::warn!(
        dropped = len - keep,
        "the audit file ended in a torn line; cut back to the last whole line"
    );
    file.set_len(keep)
}

impl AuditSink for JsonlFileSink {
    fn record(&self, event: &AuditEvent) -> std::io::Result<()> {
        let json = serde_json::to_string(event)?;
        self.record_json(event, &json)
    }

    fn record_json(&self, _: &AuditEvent, json: &str) -> std::io::Result<()> {
        let mut line = Vec::with_capacity(json.len() + 1);
        line.extend_from_slice(json.as_bytes());
        line.push(b'\n');
        self.append(&line)
    }

    fn record_batch(&self, events: &[(AuditEvent, String)]) -> std::io::Result<()> {
        let mut lines = Vec::with_capacity(events.iter().map(|(_, j)| j.len() + 1).sum());
        for (_, json) in events {
            lines.extend_from_slice(json.as_bytes());
            lines.push(b'\n');
        }
        self.append(&lines)
    }
}

impl JsonlFileSink {
    /// Appends whole lines in one write on the O_APPEND file after checking the file is
    /// still the one at the path, rolled back if the write fails; then `fsync` if asked.
    fn append(&self, lines: &[u8]) -> std::io::Result<()> {
        if lines.is_empty() {
            return Ok(());
        }
        let mut file = self.file.lock();
        let mut held = Exclusive::take(&mut file, &self.path)?;
        let before = self.still_the_file(&mut held)?;
        append_whole(&mut *held, lines, before)?;
        if self.fsync {
            held.sync_data()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A journal whose disk fills after `room` more bytes.
    struct Full {
        bytes: Vec<u8>,
        room: usize,
    }

    impl Journal for Full {
        fn len(&mut self) -> std::io::Result<u64> {
            Ok(self.bytes.len() as u64)
        }
        fn append(&mut self, line: &[u8]) -> std::io::Result<()> {
            let fits = line.len().min(self.room);
            self.bytes.extend_from_slice(&line[..fits]);
            self.room -= fits;
            if fits < line.len() {
                return Err(std::io::Error::other("no space left on device"));
            }
            Ok(())
        }
        fn truncate(&mut self, len: u64) -> std::io::Result<()> {
            self.bytes
                .truncate(usize::try_from(len).unwrap_or(usize::MAX));
            Ok(())
        }
    }

    // Regression: on a full disk a partial line stayed, and the next event, appended once
    // there was room again, was glued to it.
    #[test]
    fn a_short_write_is_rolled_back_to_the_last_line() {
        let mut journal = Full {
            bytes: b"{\"a\":1}\n".to_vec(),
            room: 5,
        };
        let before = journal.len().unwrap();
        assert!(append_whole(&mut journal, b"{\"b\":2}\n", before).is_err());
        assert_eq!(journal.bytes, b"{\"a\":1}\n");
        journal.room = 100;
        let before = journal.len().unwrap();
        append_whole(&mut journal, b"{\"c\":3}\n", before).unwrap();
        assert_eq!(journal.bytes, b"{\"a\":1}\n{\"c\":3}\n");
    }
}
