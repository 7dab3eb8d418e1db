//! Scripts and hooks of active skills: which file may run (under `scripts/`, inside the
//! skill, with the bytes pinned at load), where, for how long, and the audit of each run.
//! The process itself is the runner's (`script.rs`), which also filters the environment.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::active::{hook_allowed, Activation, Active};
use crate::audit::AuditKind;
use crate::files::{inside, relative_parts};
use crate::pin::{script_digest, ScriptPin, SCRIPTS_BUDGET, SCRIPT_LIMIT};

use crate::state::SessionState;
use crate::{ExecError, HookRun, HookStage, ScriptCall, ScriptOutput, ScriptRequest, ScriptRun};
use skills_runner::Cancellation;

/// How a checked script is started.
struct Launch<'a> {
    args: &'a [String],
    env: &'a [(String, String)],
    allowed_env: &'a [String],
    workdir: &'a Path,
    timeout: Option<Duration>,
    cancel: Option<&'a Cancellation>,
    secrets: &'a [(String, String)],
}

impl SessionState {
    /// The work of [`Session::run_script`](crate::Session::run_script).
    pub(crate) fn run_script(&self, call: &ScriptCall) -> Result<ScriptRun, ExecError> {
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
        e.duration_ms = Some(crate::timing::elapsed_ms(started));
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
        // Trust first: an untrusted remote skill is refused naming its origin and how to
        // trust it, before being told that its scripts have no folder on disk.
        if !self.exec.trusts_active(&a.skill.record, a.origin) {
            return Err(ExecError::untrusted(record));
        }
        self.runnable(record, &call.path)?;
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
        let workdir = self.workdir(&dir, call.workdir.as_deref())?;
        let allowed_env = self.allowed_env(record);
        let secrets = self.secrets_for(record)?;
        if let Some((name, _)) = call
            .env
            .iter()
            .find(|(n, _)| self.exec.policy.secrets.has(n))
        {
            return Err(crate::ScriptError::Environment {
                name: name.clone(),
                reason: "a call cannot set the name of a secret",
            }
            .into());
        }
        self.spawn(
            &script,
            &Launch {
                args: &call.args,
                env: &call.env,
                allowed_env: &allowed_env,
                workdir: &workdir,
                timeout: call.timeout,
                cancel: call.cancel.as_ref(),
                secrets: &secrets,
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

    /// The working folder of a run: the skill folder (its real path `dir`), or the folder
    /// the call names, if it resolves inside it or inside an area the host allows.
    fn workdir(&self, dir: &Path, workdir: Option<&str>) -> Result<PathBuf, ExecError> {
        match workdir {
            None => Ok(dir.to_path_buf()),
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
                let allowed = resolved.starts_with(dir)
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
                Ok(resolved)
            }
        }
    }

    /// The names a run's environment may hold: the host's allow-list, then the skill's
    /// `security.scriptEnv`.
    fn allowed_env(&self, record: &skills_model::SkillRecord) -> Vec<String> {
        self.exec
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
            .collect()
    }

    /// The secrets a run of `record`'s scripts receives: each name it declares
    /// (`requires.secrets`) with the value the host granted. Called only once the skill is
    /// known to be trusted to run scripts; a declared name the host did not grant is an
    /// error naming it, never an empty variable.
    fn secrets_for(
        &self,
        record: &skills_model::SkillRecord,
    ) -> Result<Vec<(String, String)>, ExecError> {
        let Some(declared) = record.frontmatter.requires.as_deref() else {
            return Ok(Vec::new());
        };
        declared
            .secrets
            .iter()
            .map(|name| match self.exec.policy.secrets.get(name) {
                Some(value) => Ok((name.clone(), value.to_owned())),
                None => Err(ExecError::SecretNotGranted {
                    skill: record.name.to_string(),
                    name: name.clone(),
                }),
            })
            .collect()
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
            secrets: launch.secrets,
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
        list.iter()
            .map(|hook| {
                let started = Instant::now();
                let outcome = self.run_hook(a, stage, governing, hook);
                self.hook_ran(a, stage, hook, started, &outcome)
            })
            .collect()
    }

    /// One hook of `a`: refused when the skill runs no commands or is not trusted, or
    /// (a post hook of a skill the model activated) when `governing` does not allow it;
    /// else checked as a script is and run, its start audited first.
    fn run_hook(
        &self,
        a: &Active,
        stage: HookStage,
        governing: &[Active],
        hook: &str,
    ) -> Result<ScriptOutput, ExecError> {
        let record = &a.skill.record;
        let forbidden = record
            .frontmatter
            .security
            .as_ref()
            .and_then(|s| s.executes_commands)
            == Some(false);
        if forbidden {
            // A manifest that says the skill runs no commands covers its hooks too.
            return Err(ExecError::ScriptsForbidden(record.name.to_string()));
        }
        if !self.exec.trusts_active(&a.skill.record, a.origin) {
            return Err(ExecError::untrusted(record));
        }
        if let (HookStage::Post, Activation::Model) = (stage, a.by) {
            hook_allowed(governing, record, hook)?;
        }
        self.runnable(record, hook)?;
        let (script, rel) = self.script_path(&a.rules.dir, hook)?;
        self.check_pinned(a, &script, &rel, hook)?;
        let secrets = self.secrets_for(record)?;
        self.spawn(
            &script,
            &Launch {
                args: &[],
                env: &[],
                allowed_env: &[],
                workdir: &a.rules.dir,
                timeout: None,
                cancel: None,
                secrets: &secrets,
            },
            || {
                let mut e = self.event(AuditKind::HookStarted);
                e.skill_name = Some(record.name.to_string());
                e.path = Some(hook.to_owned());
                self.emit(&e)
            },
        )
    }

    /// Records a hook's run (`hook_executed`) and says what it gave; an audit that fails
    /// is the run's error.
    fn hook_ran(
        &self,
        a: &Active,
        stage: HookStage,
        hook: &str,
        started: Instant,
        outcome: &Result<ScriptOutput, ExecError>,
    ) -> HookRun {
        let mut e = self.event(AuditKind::HookExecuted);
        e.skill_name = Some(a.skill.record.name.to_string());
        e.path = Some(hook.to_owned());
        e.duration_ms = Some(crate::timing::elapsed_ms(started));
        let mut run = HookRun {
            hook: hook.to_owned(),
            stage,
            exit_code: None,
            timed_out: None,
            error: None,
        };
        match outcome {
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
        run
    }
}
