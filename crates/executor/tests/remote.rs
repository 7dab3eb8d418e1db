//! Skills of a remote origin (a well-known index, an MCP server) as the executor treats
//! them: untrusted until the host trusts their origin, so their scripts never run, the
//! host's code-execution tools are denied while one is active, naming it, and in
//! `preapprove` mode their `allowed-tools` grant nothing. The source here is a folder on
//! disk that says it is remote, as a verified cache of a remote index is.

mod common;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{make_executable, names, Env};
use serde_json::json;
use skills_executor::{
    AllowedToolsMode, AuditKind, AuditSink, Executor, LoadMode, Policy, ScriptCall, Session,
    SessionContext,
};
use skills_index::SkillIndex;
use skills_model::{Layer, RemoteOrigin};
use skills_storage::{
    DiscoveryOptions, FsSource, ReadError, SkillSource, SourceCandidate, SourceNotifier,
};

/// A folder read as a remote source: every record it yields carries `origin`, and the
/// notifier the index gives it is kept for the test to call.
#[derive(Debug)]
struct Remote {
    inner: FsSource,
    origin: RemoteOrigin,
    notifier: Mutex<Option<SourceNotifier>>,
}

impl SkillSource for Remote {
    fn skill_dirs(&self) -> Vec<String> {
        self.inner.skill_dirs()
    }
    fn read(&self, path: &str, limit: u64) -> Result<Vec<u8>, ReadError> {
        self.inner.read(path, limit)
    }
    fn files(&self, skill_dir: &str) -> Vec<(String, u64)> {
        self.inner.files(skill_dir)
    }
    fn is_dir(&self, path: &str) -> bool {
        self.inner.is_dir(path)
    }
    fn fs_root(&self) -> Option<&Path> {
        self.inner.fs_root()
    }
    fn candidates(&self) -> Vec<SourceCandidate> {
        self.inner.candidates()
    }
    fn remote_origin(&self) -> Option<RemoteOrigin> {
        Some(self.origin.clone())
    }
    fn set_notifier(&self, notifier: SourceNotifier) {
        *self.notifier.lock().expect("the lock") = Some(notifier);
    }
}

const ORIGIN: &str = "url:https://skills.example.com";

/// `fetched` (restricting, with a script) in a remote source of the enterprise layer, and
/// `local`, which pre-approves Read, on disk.
fn setup() -> (Env, Arc<Remote>) {
    let env = Env::new();
    env.skill(
        "local",
        "allowed-tools: Read Bash(git status:*)\n",
        "Local.\n",
    );
    let remote_root = env.outside("remote");
    let dir = remote_root.join("fetched");
    std::fs::create_dir_all(dir.join("scripts")).expect("create the remote skill");
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: fetched\ndescription: A skill fetched from a remote index, for tests.\nallowed-tools: Read Bash(git status:*) skills_run_script\n---\nFetched.\n",
    )
    .expect("write SKILL.md");
    let script = dir.join("scripts/hello.sh");
    std::fs::write(&script, "#!/bin/sh\necho hello\n").expect("write the script");
    make_executable(&script);
    let source = Arc::new(Remote {
        inner: FsSource::new(remote_root, DiscoveryOptions::roots()),
        origin: ORIGIN.parse().expect("an origin"),
        notifier: Mutex::new(None),
    });
    (env, source)
}

fn executor(env: &Env, source: &Arc<Remote>, policy: Policy) -> Executor {
    let index = SkillIndex::builder()
        .root(Layer::Personal, &env.root)
        .source(Layer::Enterprise, source.clone())
        .build()
        .expect("build the index");
    let sink: Arc<dyn AuditSink> = env.sink.clone();
    Executor::builder(Arc::new(index))
        .policy(policy)
        .audit_sink(sink)
        .build()
}

fn session(env: &Env, source: &Arc<Remote>, policy: Policy) -> Session {
    executor(env, source, policy).session(SessionContext::builder().id("remote").build())
}

#[test]
fn a_remote_skill_carries_its_origin_and_an_untrusted_one_runs_no_script() {
    let (env, source) = setup();
    let session = session(&env, &source, Policy::default());
    session
        .load(&names(&["fetched"]), LoadMode::Add)
        .expect("an untrusted remote skill still loads");
    let active = session.active();
    let origin = active[0].record.remote.as_deref().map(ToString::to_string);
    assert_eq!(origin.as_deref(), Some(ORIGIN));
    // The enterprise layer is trusted, but a remote skill is trusted by its origin only.
    let err = session
        .run_script(&ScriptCall::new("scripts/hello.sh"))
        .expect_err("an untrusted origin's script runs");
    assert_eq!(err.code(), "SKILL_UNTRUSTED");
    let message = err.to_string();
    assert!(
        message.contains("untrusted origin url:https://skills.example.com")
            && message.contains("--trust url:https://skills.example.com"),
        "{message}"
    );
}

#[test]
fn a_trusted_origin_runs_its_scripts_and_is_recorded_as_an_override() {
    let (env, source) = setup();
    let policy = Policy::builder()
        .trust_origin(ORIGIN.parse().expect("an origin"))
        .build();
    assert_eq!(policy.overrides(), [format!("--trust {ORIGIN}")]);
    let session = session(&env, &source, policy);
    session.audit_policy_overrides().expect("audited");
    let overrides = env.events(AuditKind::PolicyOverride);
    assert!(
        overrides.iter().any(|e| format!("{e:?}").contains(ORIGIN)),
        "{overrides:?}"
    );
    session
        .load(&names(&["fetched"]), LoadMode::Add)
        .expect("load");
    let run = session
        .run_script(&ScriptCall::new("scripts/hello.sh"))
        .expect("a trusted origin's script runs");
    assert_eq!(run.output.stdout.trim(), "hello");
    let d = session.check_tool("Bash", &json!({"command": "git status"}));
    assert!(d.allowed, "{}", d.reason);
}

#[test]
fn code_execution_tools_are_denied_while_an_untrusted_remote_skill_is_active() {
    let (env, source) = setup();
    let policy = Policy::builder().code_execution_tool("RunPython").build();
    let session = session(&env, &source, policy);
    let git = json!({"command": "git status"});
    assert!(session.check_tool("Bash", &git).allowed, "nothing active");
    session
        .load(&names(&["fetched"]), LoadMode::Add)
        .expect("load");
    for (tool, input) in [("Bash", git.clone()), ("RunPython", json!({"code": "1"}))] {
        let d = session.check_tool(tool, &input);
        assert!(!d.allowed, "{tool} allowed: {}", d.reason);
        assert_eq!(d.skill.as_deref(), Some("fetched"), "{}", d.reason);
        assert_eq!(d.rule.as_deref(), Some("remote.untrusted"), "{}", d.reason);
    }
    // Tools that run no code are judged by the rules as usual.
    let read = session.check_tool("Read", &json!({"file_path": "/etc/hostname"}));
    assert!(read.allowed, "{}", read.reason);
    // A trusted skill beside it does not lift the denial; unloading it does.
    session
        .load(&names(&["local"]), LoadMode::Add)
        .expect("load");
    assert!(!session.check_tool("Bash", &git).allowed);
    session.unload(&names(&["fetched"])).expect("unload");
    assert!(session.check_tool("Bash", &git).allowed);
}

#[test]
fn in_preapprove_mode_an_untrusted_remote_skill_grants_nothing() {
    let (env, source) = setup();
    let policy = Policy::builder()
        .allowed_tools_mode(AllowedToolsMode::Preapprove)
        .default_decision(skills_executor::DefaultDecision::Deny)
        .build();
    let session = session(&env, &source, policy);
    session
        .load(&names(&["fetched"]), LoadMode::Add)
        .expect("load");
    let read = json!({"file_path": "/etc/hostname"});
    let d = session.check_tool("Read", &read);
    assert!(
        !d.allowed,
        "pre-approved by an untrusted origin: {}",
        d.reason
    );
    // A trusted skill's pre-approval still counts.
    session
        .load(&names(&["local"]), LoadMode::Add)
        .expect("load");
    let d = session.check_tool("Read", &read);
    assert!(d.allowed, "{}", d.reason);
    assert_eq!(d.skill.as_deref(), Some("local"));
}

#[test]
fn a_source_that_says_it_changed_is_read_again_and_published() {
    let (env, source) = setup();
    let executor = executor(&env, &source, Policy::default());
    let index = executor.index();
    let events = index.subscribe_batches();
    let skill = env.outside("remote").join("fetched/SKILL.md");
    std::fs::write(
        &skill,
        "---\nname: fetched\ndescription: A new version of the fetched skill.\n---\nNew.\n",
    )
    .expect("write the new version");
    let notifier = source
        .notifier
        .lock()
        .expect("the lock")
        .clone()
        .expect("the index gave the source a notifier");
    notifier.changed();
    // A hang guard, not a time limit on the work: the publication comes from another thread.
    let batch = events
        .recv_timeout(Duration::from_secs(120))
        .expect("a publication after the source's change");
    let changed: Vec<String> = batch
        .iter()
        .map(|e| format!("{e:?}"))
        .filter(|e| e.contains("fetched"))
        .collect();
    assert!(!changed.is_empty(), "{batch:?}");
    let record = index
        .snapshot()
        .get("fetched")
        .expect("still indexed")
        .clone();
    assert_eq!(record.description, "A new version of the fetched skill.");
    assert!(record.path.starts_with(env.outside("remote")));
}

/// A remote source with no folder on disk (as an MCP server is), whose files a test can
/// replace, keeping the notifier the index gives it.
#[derive(Debug)]
struct Held {
    files: Mutex<skills_storage::MemorySource>,
    notifier: Mutex<Option<SourceNotifier>>,
}

impl Held {
    fn new(body: &str) -> Arc<Held> {
        Arc::new(Held {
            files: Mutex::new(Held::files(body)),
            notifier: Mutex::new(None),
        })
    }

    fn files(body: &str) -> skills_storage::MemorySource {
        skills_storage::MemorySource::from_files([(
            "served/SKILL.md",
            format!(
                "---\nname: served\ndescription: A skill a server holds, for tests.\n---\n{body}"
            ),
        )])
    }

    fn replace(&self, body: &str) {
        *self.files.lock().expect("the lock") = Held::files(body);
    }

    fn notify(&self) {
        let notifier = self.notifier.lock().expect("the lock").clone();
        notifier
            .expect("the index gave the source a notifier")
            .changed();
    }
}

impl SkillSource for Held {
    fn skill_dirs(&self) -> Vec<String> {
        self.files.lock().expect("the lock").skill_dirs()
    }
    fn read(&self, path: &str, limit: u64) -> Result<Vec<u8>, ReadError> {
        self.files.lock().expect("the lock").read(path, limit)
    }
    fn files(&self, skill_dir: &str) -> Vec<(String, u64)> {
        self.files.lock().expect("the lock").files(skill_dir)
    }
    fn is_dir(&self, path: &str) -> bool {
        self.files.lock().expect("the lock").is_dir(path)
    }
    fn remote_origin(&self) -> Option<RemoteOrigin> {
        Some(RemoteOrigin::mcp("held"))
    }
    fn location(&self) -> Option<String> {
        Some("mcp:held".to_owned())
    }
    fn set_notifier(&self, notifier: SourceNotifier) {
        *self.notifier.lock().expect("the lock") = Some(notifier);
    }
}

// Regression: an active skill of a source not on disk was judged outdated at the first
// publication after its load (its digest was read from a path on disk it does not have),
// and a new version of its body alone was never told as such.
#[test]
fn an_active_skill_off_disk_is_outdated_when_its_source_serves_a_new_version_only() {
    let source = Held::new("Version one.\n");
    let index = SkillIndex::builder()
        .source(Layer::Personal, source.clone())
        .build()
        .expect("build the index");
    let executor = Executor::builder(Arc::new(index)).build();
    let session = executor.session(SessionContext::builder().id("held").build());
    session
        .load(&names(&["served"]), LoadMode::Add)
        .expect("load");
    let batches = executor.index().subscribe_batches();
    let wait = || {
        // A hang guard, not a time limit on the work.
        batches
            .recv_timeout(Duration::from_secs(120))
            .expect("a publication after the source's change")
    };
    // Told of a change that changed nothing: nothing is outdated.
    source.notify();
    wait();
    assert_eq!(session.newly_outdated(), Vec::new());
    // A new body alone: the active skill is outdated, with the version the source serves.
    source.replace("Version two.\n");
    source.notify();
    wait();
    let outdated = session.newly_outdated();
    assert_eq!(outdated.len(), 1, "{outdated:?}");
    assert!(outdated[0].current.is_some(), "{outdated:?}");
    assert_ne!(outdated[0].current, Some(outdated[0].pinned.clone()));
}
