//! Scripts and hooks of active skills: which file may run (under `scripts/`, inside the
//! skill, with the bytes pinned at load), where, for how long, and the audit of each run.
//! The process itself is the runner's (`script.rs`), which also filters the environment.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::audit::AuditKind;
use crate::files::{inside, relative_parts};
use crate::stack::{hook_allowed, Activation, Active};
use crate::{ExecError, HookRun, HookStage, ScriptOutput, ScriptRequest, ScriptRun, Session};
use skills_runner::Cancellation;

/// A `skills_run_script` call.
#[derive(Debug, Clone, Default)]
pub struct ScriptCall {
    /// The active skill (default: the most recently loaded).
    pub skill: Option<String>,
    /// The script, relative to the skill folder, under `scripts/`.
    pub path: String,
    /// Arguments, passed as argv.
    pub args: Vec<String>,
    /// Environment variables to add (filtered by the runner).
    pub env: Vec<(String, String)>,
    /// The working folder, relative to the skill folder or an area the host allows.
    pub workdir: Option<String>,
    /// A shorter timeout than the host's.
    pub timeout: Option<Duration>,
    /// Stops the run when cancelled.
    pub cancel: Option<Cancellation>,
}

impl ScriptCall {
    /// A call of the script at `path` of the most recently loaded skill, with no arguments.
    pub fn new(path: impl Into<String>) -> ScriptCall {
        ScriptCall {
            path: path.into(),
            ..ScriptCall::default()
        }
    }
}

/// How a checked script is started.
struct Launch<'a> {
    args: &'a [String],
    env: &'a [(String, String)],
    allowed_env: &'a [String],
    workdir: &'a Path,
    timeout: Option<Duration>,
    cancel: Option<&'a Cancellation>,
}

pub(crate) fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// The largest script pinned at load, in bytes: a larger file under `scripts/` is not
/// read (a hostile folder's sparse terabyte would hold the load for hours) and never runs.
pub(crate) const SCRIPT_LIMIT: u64 = 64 * 1024 * 1024;

/// The most bytes one load reads to pin its skills' scripts, all of them together: a file
/// read under several names (links) counts once. A script beyond it is not read, not
/// pinned ([`ScriptPin::Unread`]), and never runs (a hostile folder of ten thousand links
/// to one file of 63 MiB made each load hash 640 GB).
pub(crate) const SCRIPTS_BUDGET: u64 = 256 * 1024 * 1024;

/// What a load pinned of a file under `scripts/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ScriptPin {
    /// The `sha256:` digest of its bytes at load.
    Digest(String),
    /// Not read: the load's [`SCRIPTS_BUDGET`] was spent. It never runs.
    Unread,
}

/// What is left of a load's [`SCRIPTS_BUDGET`], and the files it read, by identity (device
/// and inode), with what each gave.
#[derive(Debug)]
pub(crate) struct PinBudget {
    left: u64,
    seen: std::collections::HashMap<(u64, u64), Option<String>>,
}

impl PinBudget {
    pub(crate) fn new(bytes: u64) -> PinBudget {
        PinBudget {
            left: bytes,
            seen: std::collections::HashMap::new(),
        }
    }

    /// What to pin of `path`: its digest, [`ScriptPin::Unread`] when the budget left is less
    /// than its size, `None` when it is not a regular file, cannot be read, or is larger
    /// than [`SCRIPT_LIMIT`]. A file read already under another name is not read again.
    pub(crate) fn pin(&mut self, path: &Path) -> Option<ScriptPin> {
        let meta = std::fs::metadata(path).ok()?;
        if !meta.is_file() || meta.len() > SCRIPT_LIMIT {
            return None;
        }
        let id = skills_storage::file_identity(&meta);
        if let Some(seen) = id.and_then(|id| self.seen.get(&id)) {
            return seen.clone().map(ScriptPin::Digest);
        }
        if meta.len() > self.left {
            return Some(ScriptPin::Unread);
        }
        let (digest, read) = skills_storage::digest_regular(path, self.left.min(SCRIPT_LIMIT));
        self.left = self.left.saturating_sub(read);
        if let Some(id) = id {
            self.seen.insert(id, digest.clone());
        }
        digest.map(ScriptPin::Digest)
    }
}

/// `sha256:<hex>` of a regular file's bytes; `None` when it is not one, cannot be read, or
/// is larger than [`SCRIPT_LIMIT`] (also when it grows past it while read).
pub(crate) fn script_digest(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > SCRIPT_LIMIT {
        return None;
    }
    skills_storage::digest_regular(path, SCRIPT_LIMIT).0
}

impl Session {
    /// `skills_run_script`: runs a file under an active skill's `scripts/`, if its bytes
    /// are the ones pinned when the skill was loaded.
    pub fn run_script(&self, call: &ScriptCall) -> Result<ScriptRun, ExecError> {
        let started = Instant::now();
        let target = self.target(call.skill.as_deref());
        let result = match &target {
            Ok(a) => self.run_in(a, call),
            Err(e) => Err(ExecError::NotActive(e.to_string())),
        };
        let mut e = self.event(AuditKind::ScriptExecuted);
        e.tool_name = Some("skills_run_script".to_owned());
        e.path = Some(call.path.clone());
        e.skill_name = target
            .as_ref()
            .ok()
            .map(|a| a.skill.record.name.to_string())
            .or(call.skill.clone());
        e.duration_ms = Some(elapsed_ms(started));
        match &result {
            Ok(out) if out.exit_code != Some(0) => {
                e.error = Some(format!(
                    "exit code {:?}, timed out: {}",
                    out.exit_code, out.timed_out
                ));
            }
            Ok(_) => {}
            Err(err) => e.error = Some(err.to_string()),
        }
        self.emit(&e)?;
        let out = result?;
        Ok(ScriptRun {
            path: call.path.clone(),
            output: out,
        })
    }

    fn run_in(&self, a: &Active, call: &ScriptCall) -> Result<ScriptOutput, ExecError> {
        let record = &a.skill.record;
        self.runtime_allowed(
            "skills_run_script",
            &format!("{}:{}", record.name, call.path),
            Some(record),
        )?;
        self.runnable(record, &call.path)?;
        if !self.exec.trusts_active(a) {
            return Err(ExecError::Untrusted {
                skill: record.name.to_string(),
                layer: record.layer.to_string(),
            });
        }
        if record
            .frontmatter
            .security
            .as_ref()
            .and_then(|s| s.executes_commands)
            == Some(false)
        {
            return Err(ExecError::ScriptsForbidden(record.name.to_string()));
        }
        let path = &call.path;
        let (script, rel) = self.script_path(&a.rules.dir, path)?;
        self.check_pinned(a, &script, &rel, path)?;
        let dir = std::fs::canonicalize(&a.rules.dir).map_err(|_| ExecError::InvalidPath {
            path: path.clone(),
            reason: "the skill folder is gone".into(),
        })?;
        let workdir = match call.workdir.as_deref() {
            None => dir.clone(),
            Some(w) => {
                let bad = |reason: &str| ExecError::InvalidPath {
                    path: w.to_owned(),
                    reason: reason.to_owned(),
                };
                let candidate = if Path::new(w).is_absolute() {
                    PathBuf::from(w)
                } else {
                    dir.join(w)
                };
                let resolved =
                    std::fs::canonicalize(&candidate).map_err(|_| bad("no such folder"))?;
                let allowed = resolved.starts_with(&dir)
                    || self
                        .exec
                        .policy
                        .workdirs
                        .iter()
                        .filter_map(|d| std::fs::canonicalize(d).ok())
                        .any(|d| resolved.starts_with(d));
                if !allowed || !resolved.is_dir() {
                    return Err(bad("the working folder must be inside the skill folder or an area the host allows"));
                }
                resolved
            }
        };
        let allowed_env: Vec<String> = self
            .exec
            .policy
            .script_env
            .iter()
            .chain(
                record
                    .frontmatter
                    .security
                    .iter()
                    .flat_map(|s| &s.script_env),
            )
            .cloned()
            .collect();
        self.spawn(
            &script,
            &Launch {
                args: &call.args,
                env: &call.env,
                allowed_env: &allowed_env,
                workdir: &workdir,
                timeout: call.timeout,
                cancel: call.cancel.as_ref(),
            },
            // Recorded once every check passed and before it starts: a script that cannot
            // be audited does not run.
            || {
                let mut e = self.event(AuditKind::ScriptStarted);
                e.tool_name = Some("skills_run_script".to_owned());
                e.path = Some(path.clone());
                e.skill_name = Some(record.name.to_string());
                self.emit(&e)
            },
        )
    }

    /// Refuses a script whose bytes differ from those pinned at load (or that did not
    /// exist then).
    fn check_pinned(
        &self,
        a: &Active,
        script: &Path,
        rel: &str,
        shown: &str,
    ) -> Result<(), ExecError> {
        let pinned = a.scripts.iter().find(|(p, _)| p == rel).map(|(_, d)| d);
        let meta = std::fs::metadata(script).ok();
        if meta.as_ref().is_some_and(|m| !m.is_file()) {
            // Never pinned, and loading again would not change that: say what it is.
            return Err(ExecError::InvalidPath {
                path: shown.to_owned(),
                reason: "it is not a regular file (a FIFO, a device or a folder never runs)".into(),
            });
        }
        let size = meta.map_or(0, |m| m.len());
        if size > SCRIPT_LIMIT {
            return Err(ExecError::FileTooLarge {
                path: shown.to_owned(),
                size,
                limit: SCRIPT_LIMIT,
            });
        }
        let pinned = match pinned {
            Some(ScriptPin::Unread) => {
                return Err(ExecError::ScriptNotPinned {
                    skill: a.skill.record.name.to_string(),
                    path: shown.to_owned(),
                    limit: SCRIPTS_BUDGET,
                })
            }
            Some(ScriptPin::Digest(d)) => Some(d),
            None => None,
        };
        let now = script_digest(script);
        if pinned.is_none() || pinned != now.as_ref() {
            return Err(ExecError::ScriptChanged {
                skill: a.skill.record.name.to_string(),
                path: shown.to_owned(),
            });
        }
        Ok(())
    }

    /// The canonical path of a script under the skill's `scripts/`, and its path relative
    /// to the skill as the load listed it.
    /// Refuses a run of a skill whose source is not on disk: there is no file to start.
    fn runnable(&self, record: &skills_model::SkillRecord, path: &str) -> Result<(), ExecError> {
        match self.exec.index.snapshot().place_off_disk(record) {
            Some(_) => Err(ExecError::NotOnDisk {
                skill: record.name.to_string(),
                path: path.to_owned(),
            }),
            None => Ok(()),
        }
    }

    fn script_path(&self, dir: &Path, path: &str) -> Result<(PathBuf, String), ExecError> {
        let rel = relative_parts(path).map_err(|reason| ExecError::InvalidPath {
            path: path.to_owned(),
            reason,
        })?;
        let parts = rel.parts();
        if parts.len() < 2 || parts[0] != "scripts" {
            return Err(ExecError::InvalidPath {
                path: path.to_owned(),
                reason: "only files under the skill's scripts/ folder can be run".into(),
            });
        }
        let script = inside(dir, &parts, path)?;
        // An empty path would contain everything: a `scripts/` that cannot be resolved
        // (gone since the script was) refuses the run.
        let scripts = std::fs::canonicalize(dir.join("scripts")).ok();
        if !scripts.is_some_and(|s| script.starts_with(s)) {
            return Err(ExecError::InvalidPath {
                path: path.to_owned(),
                reason: "it resolves outside the skill's scripts/ folder".into(),
            });
        }
        Ok((script, parts.join("/")))
    }

    /// Checks the run (`script::Ready`), calls `started` (which records the start; an
    /// error there and the script does not start), then runs it.
    fn spawn(
        &self,
        script: &Path,
        launch: &Launch<'_>,
        started: impl FnOnce() -> Result<(), ExecError>,
    ) -> Result<ScriptOutput, ExecError> {
        let policy = &self.exec.policy;
        let request = ScriptRequest {
            script,
            args: launch.args,
            env: launch.env,
            allowed_env: launch.allowed_env,
            workdir: launch.workdir,
            // The call may shorten the host's timeout, never lengthen it.
            timeout: launch
                .timeout
                .map_or(policy.script_timeout, |t| t.min(policy.script_timeout)),
            output_limit: policy.output_limit,
            supervisor: policy.supervisor.as_deref(),
            cancel: launch.cancel,
        };
        // A call cancelled before its script starts (a session ending on a signal) starts
        // none: the runner would start it and stop it at once.
        if launch.cancel.is_some_and(Cancellation::is_cancelled) {
            return Err(crate::ScriptError::Spawn {
                path: script.display().to_string(),
                source: std::io::Error::new(
                    std::io::ErrorKind::Interrupted,
                    "the call was cancelled before the script started",
                ),
            }
            .into());
        }
        let ready = skills_runner::Ready::check(&request)?;
        started()?;
        Ok(ready.run()?)
    }

    /// Runs `hooks.pre` (activation) or `hooks.post` (deactivation) when the skill's layer
    /// is trusted; each run is audited first-hand: a hook whose start cannot be audited
    /// does not run. Hooks lie under the skill's `scripts/` and run as pinned. A post hook
    /// of a skill the model activated runs only if every skill of `governing` (those the
    /// host pinned on the stack `a` leaves) allows it ([`hook_allowed`]): a restriction
    /// the host pinned after `a` loaded governs what runs at its end.
    pub(crate) fn run_hooks(
        &self,
        a: &Active,
        stage: HookStage,
        governing: &[Active],
    ) -> Vec<HookRun> {
        let Some(hooks) = a.skill.record.frontmatter.hooks.as_deref() else {
            return Vec::new();
        };
        let list = match stage {
            HookStage::Pre => &hooks.pre,
            HookStage::Post => &hooks.post,
        };
        let mut results = Vec::new();
        for hook in list {
            let started = Instant::now();
            let record = &a.skill.record;
            let forbidden = record
                .frontmatter
                .security
                .as_ref()
                .and_then(|s| s.executes_commands)
                == Some(false);
            let outcome = if forbidden {
                // A manifest that says the skill runs no commands covers its hooks too.
                Err(ExecError::ScriptsForbidden(record.name.to_string()))
            } else if !self.exec.trusts_active(a) {
                Err(ExecError::Untrusted {
                    skill: record.name.to_string(),
                    layer: record.layer.to_string(),
                })
            } else {
                let judged = match (stage, a.by) {
                    (HookStage::Post, Activation::Model) => hook_allowed(governing, record, hook),
                    _ => Ok(()),
                };
                judged
                    .and_then(|()| self.runnable(record, hook))
                    .and_then(|()| self.script_path(&a.rules.dir, hook))
                    .and_then(|(script, rel)| {
                        self.check_pinned(a, &script, &rel, hook)?;
                        Ok(script)
                    })
                    .and_then(|script| {
                        self.spawn(
                            &script,
                            &Launch {
                                args: &[],
                                env: &[],
                                allowed_env: &[],
                                workdir: &a.rules.dir,
                                timeout: None,
                                cancel: None,
                            },
                            || {
                                let mut e = self.event(AuditKind::HookStarted);
                                e.skill_name = Some(record.name.to_string());
                                e.path = Some(hook.clone());
                                self.emit(&e)
                            },
                        )
                    })
            };
            let mut e = self.event(AuditKind::HookExecuted);
            e.skill_name = Some(a.skill.record.name.to_string());
            e.path = Some(hook.clone());
            e.duration_ms = Some(elapsed_ms(started));
            let mut run = HookRun {
                hook: hook.clone(),
                stage,
                exit_code: None,
                timed_out: None,
                error: None,
            };
            match &outcome {
                Ok(out) => {
                    if out.exit_code != Some(0) {
                        e.error = Some(format!(
                            "exit code {:?}, timed out: {}",
                            out.exit_code, out.timed_out
                        ));
                    }
                    run.exit_code = out.exit_code;
                    run.timed_out = Some(out.timed_out);
                }
                Err(err) => {
                    e.error = Some(err.to_string());
                    run.error = Some(err.to_string());
                }
            }
            if let Err(err) = self.emit(&e) {
                tracing::warn!(error = %err, "hook audit failed");
                run.error = Some(err.to_string());
            }
            results.push(run);
        }
        results
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    // Regression (review): a FIFO renamed onto a script between the check and the open
    // blocked the open, and the load, for good.
    #[test]
    fn a_fifo_in_place_of_a_script_is_not_opened_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("run.sh");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        assert_eq!(skills_storage::digest_regular(&fifo, SCRIPT_LIMIT).0, None);
        assert_eq!(script_digest(&fifo), None);
        let file = dir.path().join("ok.sh");
        std::fs::write(&file, "echo ok\n").unwrap();
        assert!(skills_storage::digest_regular(&file, SCRIPT_LIMIT)
            .0
            .is_some_and(|d| d.starts_with("sha256:")));
    }
}
