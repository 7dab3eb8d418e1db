//! Regression tests of the live executor under reloads and plugin changes: what a session
//! pinned stays judged as it was pinned (trust, scope, strictness), and what changed on disk
//! since is told.

mod common;

use std::sync::Arc;

use common::{active, names, Env};
use serde_json::json;
use skills_executor::{LoadMode, Policy, ScriptCall, SessionContext};

/// A plugin folder outside the roots with one skill, `tool`, and one executable script
/// `scripts/<script>` running `line`: what the tests register over the wire.
fn wire_plugin(env: &Env, script: &str, line: &str) -> std::path::PathBuf {
    let wire = env.outside("wire-plugin");
    std::fs::create_dir_all(wire.join("tool/scripts")).expect("folders");
    std::fs::write(
        wire.join("tool/SKILL.md"),
        "---\nname: tool\ndescription: A plugin tool from the wire.\n---\nRun it.\n",
    )
    .expect("SKILL.md");
    let path = wire.join("tool/scripts").join(script);
    std::fs::write(&path, format!("#!/bin/sh\n{line}\n")).expect("script");
    common::make_executable(&path);
    wire
}

/// Regression: a skill of a plugin registered over the protocol counted as a host plugin's
/// once its plugin was unregistered (trust was read from the ids registered now), so its
/// script ran through the session's API before any call dropped it (promise 15).
#[test]
fn regression_a_wire_plugin_s_skill_stays_untrusted_once_unregistered() {
    let env = Env::new();
    let wire = wire_plugin(&env, "run.sh", "echo untrusted-code-ran");
    let exec = env.executor(Policy::default());
    let model = exec.session(SessionContext::builder().id("model").build());
    model.register_plugin("acme", &wire).expect("ok");
    model
        .load(&names(&["acme:tool"]), LoadMode::Add)
        .expect("ok");
    let refused = model
        .run_script(&ScriptCall::new("scripts/run.sh"))
        .expect_err("refused");
    assert_eq!(refused.code(), "SKILL_UNTRUSTED", "{refused}");
    exec.unregister_plugin("acme").expect("ok");
    let ran = model.run_script(&ScriptCall::new("scripts/run.sh"));
    assert!(
        ran.is_err(),
        "the unregistered wire plugin's script ran: {:?}; active: {:?}",
        ran.map(|r| r.output.stdout),
        active(&model)
    );
}

/// Regression: a hook a wire plugin's `SKILL.md` gained after the index read it was judged
/// by the indexed version (none), pinned, and run as trusted when the plugin was
/// unregistered and the session dropped the skill. The load judges the version it reads.
#[test]
fn regression_a_hook_gained_since_the_index_read_is_judged_at_load() {
    let env = Env::new();
    let wire = wire_plugin(&env, "post.sh", "touch untrusted-hook-ran");
    let exec = env.executor(Policy::default());
    let host = exec.session(SessionContext::builder().id("host").build());
    let model = exec.session(SessionContext::builder().id("model").build());
    host.register_plugin("acme", &wire).expect("ok");
    // The hostile folder adds its hook after the index read it.
    std::fs::write(
        wire.join("tool/SKILL.md"),
        "---\nname: tool\ndescription: A plugin tool from the wire.\nhooks:\n  post: [scripts/post.sh]\n---\nRun it.\n",
    )
    .expect("ok");
    let loaded = skills_protocol::call(
        &model,
        "skills_load",
        json!({"names": ["acme:tool"], "mode": "add"}),
    );
    let after_load = active(&model);
    assert_eq!(
        loaded
            .as_ref()
            .map_err(skills_executor::ExecError::code)
            .err(),
        Some("SKILL_UNTRUSTED"),
        "{loaded:?}"
    );
    host.unregister_plugin("acme").expect("ok");
    // Any call of the model's session follows the index.
    let _ = skills_protocol::call(&model, "skills_list", json!({}));
    let marker = wire.join("tool/untrusted-hook-ran");
    assert!(
        !marker.exists(),
        "the wire plugin's post hook ran after unregistration (load: {loaded:?}, active after load {after_load:?})"
    );
}

/// Regression: a wire plugin's skill stayed active after the host registered a plugin of its
/// own under the same id, and then ran its script under the host's trust.
#[test]
fn regression_a_wire_plugin_s_skill_stays_untrusted_when_the_host_reuses_its_id() {
    let env = Env::new();
    let wire = wire_plugin(&env, "run.sh", "echo untrusted-code-ran");
    let host_root = env.outside("host-plugin");
    let exec = env.executor(Policy::default());
    let host = exec.session(SessionContext::builder().id("host").build());
    let model = exec.session(SessionContext::builder().id("model").build());
    host.register_plugin("acme", &wire).expect("ok");
    skills_protocol::call(
        &model,
        "skills_load",
        json!({"names": ["acme:tool"], "mode": "add"}),
    )
    .expect("ok");
    let refused = skills_protocol::call(
        &model,
        "skills_run_script",
        json!({"skill": "tool", "path": "scripts/run.sh"}),
    )
    .expect_err("refused");
    assert_eq!(refused.code(), "SKILL_UNTRUSTED", "{refused}");
    // The wire plugin goes; the host installs its own plugin under that id.
    host.unregister_plugin("acme").expect("ok");
    exec.register_plugin("acme", &host_root, skills_executor::PluginOrigin::Host)
        .expect("ok");
    let ran = skills_protocol::call(
        &model,
        "skills_run_script",
        json!({"skill": "tool", "path": "scripts/run.sh"}),
    );
    assert!(
        ran.is_err(),
        "the untrusted folder's script ran: {ran:?}; active: {:?}",
        active(&model)
    );
}

/// Regression: the index kept a loaded skill for the rest of its snapshot's generation, so
/// once one session had loaded a public skill, a version rewritten for another tenant was
/// judged by the kept public one: this session read the other tenant's `SKILL.md` and
/// references, and loaded it (promise 40).
#[test]
fn regression_a_rescoped_skill_is_judged_as_it_reads_after_another_session_loaded_it() {
    let env = Env::new();
    env.skill("deploy", "", "Public deploy.\n");
    let exec = env.executor(Policy::default());
    let tenant =
        |id: &str, t: &str| exec.session(SessionContext::builder().id(id).tenant(t).build());
    let globex = tenant("globex-1", "globex");
    globex
        .load(&names(&["deploy"]), LoadMode::Add)
        .expect("public skill loads");
    env.skill(
        "deploy",
        "scope:\n  tenants:\n    - globex\n",
        "Globex's own deploy.\n",
    );
    env.file("deploy", "references/notes.md", "Globex's notes.\n");
    let acme = tenant("acme-1", "acme");
    for path in ["SKILL.md", "references/notes.md"] {
        let read = acme.read_unloaded("deploy", path, "resources/read");
        assert_eq!(
            read.map(|c| c.content).map_err(|e| e.code()),
            Err("SKILL_NOT_FOUND"),
            "{path}"
        );
    }
    let loaded = acme.load(&names(&["deploy"]), LoadMode::Add);
    assert_eq!(
        loaded.map(|_| ()).map_err(|e| e.code()),
        Err("SKILL_NOT_FOUND")
    );
    assert!(active(&acme).is_empty());
}

/// Regression: a strict index kept the last good version of a skill whose edit fails the
/// specification, yet a load read and pinned the failing version, with the rules it
/// widened (`allowed-tools: Bash` over `Read`).
#[test]
fn regression_a_strict_index_loads_no_version_it_refused_to_index() {
    let env = Env::new();
    env.skill("deploy", "allowed-tools: Read\n", "Deploy v1.\n");
    let index = Arc::new(
        skills_index::SkillIndex::builder()
            .root(skills_model::Layer::Personal, &env.root)
            .strict(true)
            .build()
            .expect("index"),
    );
    let exec = skills_executor::Executor::builder(index)
        .policy(Policy::default())
        .build();
    let session = exec.session(SessionContext::builder().id("s").build());
    let long = "x".repeat(1100);
    std::fs::write(
        env.root.join("deploy/SKILL.md"),
        format!("---\nname: deploy\ndescription: {long}\nallowed-tools: Bash\n---\nDeploy v2.\n"),
    )
    .expect("rewritten");
    session.reload();
    assert!(
        exec.index().snapshot().get("deploy").is_some(),
        "last good kept"
    );
    let loaded = session.load(&names(&["deploy"]), LoadMode::Add);
    assert!(loaded.is_err(), "loaded: {:?}", active(&session));
    assert!(active(&session).is_empty());
}

/// Regression: a load planned its dependencies from the indexed version and pinned the
/// version it read, so a `SKILL.md` rewritten (before a reload) to need a restricting
/// dependency was activated without it, and `Bash` stayed allowed.
#[test]
fn regression_a_load_activates_no_version_whose_dependencies_changed_since_indexed() {
    let env = Env::new();
    env.skill("guard", "allowed-tools: Read\n", "Only read.\n");
    env.skill("deploy", "", "Deploy v1.\n");
    let session = env.session();
    env.skill(
        "deploy",
        "composition:\n  dependencies:\n    - skillName: guard\n",
        "Deploy v2: needs guard.\n",
    );
    let loaded = session.load(&names(&["deploy"]), LoadMode::Add);
    assert_eq!(
        loaded.map(|_| ()).map_err(|e| e.code()),
        Err("SKILL_CHANGED"),
        "active: {:?}",
        active(&session)
    );
    assert!(active(&session).is_empty());
    // Once the index has the edit, the load plans from it.
    session.reload();
    session
        .load(&names(&["deploy"]), LoadMode::Add)
        .expect("loads after the reload");
    assert_eq!(active(&session), ["guard", "deploy"]);
    let bash = session.check_tool("Bash", &json!({ "command": "rm -rf /" }));
    assert!(!bash.allowed);
}

/// The events a session is sent for what `rx` received.
fn drain_events(
    session: &skills_executor::Session,
    rx: &crossbeam_channel::Receiver<Arc<[skills_index::ChangeEvent]>>,
) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    while let Ok(batch) = rx.try_recv() {
        for e in skills_protocol::events(session, &batch) {
            out.push(serde_json::to_value(&e).expect("an event serialises"));
        }
    }
    out
}

/// Regression: after these edits of an active skill and a host's reload (a rescan of every
/// root), the session was never told its skill was outdated: an edit of the body alone
/// moves no record (a record holds no body), so no batch reached the session; and one that
/// no longer parses leaves the index's record as it was (its last good version), which
/// `outdated` took for an unchanged file.
#[test]
fn regression_an_edit_then_a_reload_tells_the_session_its_skill_is_outdated() {
    let edits = [
        (
            "the body alone",
            "---\nname: deploy\ndescription: Test skill deploy, used by the executor's tests.\nallowed-tools: Read\n---\nDeploy v2.\n",
        ),
        (
            "no longer parsing",
            "---\nname: deploy\ndescription: [unclosed\nallowed-tools: Bash\n---\nDeploy v2.\n",
        ),
    ];
    for (edit, text) in edits {
        let env = Env::new();
        env.skill("deploy", "allowed-tools: Read\n", "Deploy v1.\n");
        let session = env.session();
        session
            .load(&names(&["deploy"]), LoadMode::Add)
            .expect("loads");
        let rx = session.executor().index().subscribe_batches();
        std::fs::write(env.root.join("deploy/SKILL.md"), text).expect("rewritten");
        session.reload();
        let events = drain_events(&session, &rx);
        assert!(
            events
                .iter()
                .any(|e| e["event"] == "active_skill_outdated" && e["skill"] == "personal:deploy"),
            "{edit}: {events:?}"
        );
        let outdated: Vec<String> = session.outdated().into_iter().map(|o| o.skill).collect();
        assert_eq!(outdated, ["personal:deploy"], "{edit}");
    }
}

/// A session of tenant `acme` on `exec`.
fn acme_session(exec: &skills_executor::Executor) -> skills_executor::Session {
    exec.session(
        SessionContext::builder()
            .id("acme-1")
            .tenant("acme")
            .build(),
    )
}

/// Regression: a resource read of a skill not loaded judged its scope on one read of
/// `SKILL.md` and served another: a rewrite in between (here, back and forth, another
/// tenant's scope and text) was served to this session (promise 40). Attempts are
/// counted, not timed; without the fix the first few hundred leak.
#[test]
fn regression_a_resource_read_serves_only_the_version_it_judged() {
    let env = Env::new();
    let dir = env.skill("deploy", "", "Public deploy.\n");
    let exec = env.executor(Policy::default());
    let acme = acme_session(&exec);
    let public = std::fs::read_to_string(dir.join("SKILL.md")).expect("public");
    let leaked = served_while_flipping(dir, public, || {
        acme.read_unloaded("deploy", "SKILL.md", "resources/read")
    });
    assert_eq!(leaked, None, "acme was served globex's version");
}

/// A skill `deploy` with `references/readme.md`, a link to `../SKILL.md` (inside the
/// folder, so served), and its public text.
fn skill_md_aliased(env: &Env) -> (std::path::PathBuf, String) {
    let dir = env.skill("deploy", "", "Public deploy.\n");
    std::fs::create_dir_all(dir.join("references")).expect("references");
    std::os::unix::fs::symlink("../SKILL.md", dir.join("references/readme.md")).expect("link");
    let public = std::fs::read_to_string(dir.join("SKILL.md")).expect("public");
    (dir, public)
}

/// What `read` served of another tenant's version of `dir/SKILL.md` while a thread flipped
/// the file (by rename) between `public` and that version: the first such content within
/// 5,000 reads, or `None`. Attempts are counted, not timed.
fn served_while_flipping(
    dir: std::path::PathBuf,
    public: String,
    mut read: impl FnMut() -> Result<skills_executor::FileContent, skills_executor::ExecError>,
) -> Option<String> {
    use std::sync::atomic::{AtomicBool, Ordering};
    const HIDDEN: &str = "---\nname: deploy\ndescription: Test skill deploy, used by the executor's tests.\nscope:\n  tenants:\n    - globex\n---\nGLOBEX-SECRET\n";
    let stop = Arc::new(AtomicBool::new(false));
    let flipper = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let tmp = dir.join("SKILL.md.tmp");
            let mut flip = false;
            while !stop.load(Ordering::Relaxed) {
                let text = if flip { HIDDEN } else { public.as_str() };
                std::fs::write(&tmp, text).expect("written");
                std::fs::rename(&tmp, dir.join("SKILL.md")).expect("renamed");
                flip = !flip;
            }
        })
    };
    let leaked = (0..5_000)
        .filter_map(|_| read().ok())
        .find(|c| c.content.contains("GLOBEX-SECRET"))
        .map(|c| c.content);
    stop.store(true, Ordering::Relaxed);
    flipper.join().expect("flipper");
    leaked
}

/// Regression (second review): `SKILL.md` reached by another name (a link under
/// `references/`) was served unchecked: by a resource read of a skill not loaded (the
/// digest check went by the name `SKILL.md`), and by `skills_read` of an active skill (the
/// name was asked about before the open). What was opened decides now. Attempts are
/// counted, not timed.
#[test]
fn regression_skill_md_by_another_name_is_served_only_as_judged_or_loaded() {
    for loaded in [false, true] {
        let env = Env::new();
        let (dir, public) = skill_md_aliased(&env);
        let exec = env.executor(Policy::default());
        let acme = acme_session(&exec);
        if loaded {
            acme.load(&names(&["deploy"]), LoadMode::Add)
                .expect("loaded");
        }
        let leaked = served_while_flipping(dir, public, || {
            if loaded {
                acme.read(Some("deploy"), "references/readme.md")
            } else {
                acme.read_unloaded("deploy", "references/readme.md", "resources/read")
            }
        });
        assert_eq!(leaked, None, "loaded: {loaded}");
    }
}

// Regression (issue 38): `register_plugin` with a root that does not exist answered `ok`
// with no hint, where the CLI's `--root` warns. The answer now says so in `warnings`; a
// root that exists draws none.
#[test]
fn regression_a_plugin_root_that_does_not_exist_is_named_in_the_answer() {
    let env = Env::new();
    let exec = env.executor(Policy::default());
    let host = exec.session(SessionContext::builder().id("host").build());
    let missing = env.outside("plugins").join("typo");
    let answer = host.register_plugin("typo", &missing).expect("ok");
    assert_eq!(answer.skills, 0);
    assert_eq!(answer.warnings.len(), 1, "{:?}", answer.warnings);
    assert!(
        answer.warnings[0].contains("does not exist")
            && answer.warnings[0].contains(&missing.display().to_string()),
        "{:?}",
        answer.warnings
    );
    let wire = wire_plugin(&env, "run.sh", "echo ok");
    let answer = host.register_plugin("acme", &wire).expect("ok");
    assert!(answer.warnings.is_empty(), "{:?}", answer.warnings);
    // On the wire: a `warnings` field, absent when empty.
    let line = serde_json::to_value(&answer).expect("JSON");
    assert!(line.get("warnings").is_none(), "{line}");
}
