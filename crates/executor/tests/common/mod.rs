//! Shared fixtures for the executor's integration tests: real skills written into temporary
//! directories, an index over them and an executor recording into a [`MemorySink`].
//!
//! Every test crate includes this module, and none uses all of it.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use skills_executor::{
    AuditEvent, AuditKind, AuditSink, Executor, MemorySink, Policy, Session, SessionContext,
};
use skills_index::SkillIndex;
use skills_model::Layer;
use tempfile::TempDir;

/// A temporary skills root.
pub(crate) struct Env {
    tmp: TempDir,
    /// The root the skills are written under.
    pub(crate) root: PathBuf,
    /// The sink every executor built by [`Env::executor`] records into.
    pub(crate) sink: Arc<MemorySink>,
}

impl Env {
    /// An empty root.
    pub(crate) fn new() -> Env {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().join("skills");
        fs::create_dir_all(&root).expect("create root");
        Env {
            tmp,
            root,
            sink: Arc::new(MemorySink::default()),
        }
    }

    /// A folder of the temporary directory outside the root (created).
    pub(crate) fn outside(&self, name: &str) -> PathBuf {
        let dir = self.tmp.path().join(name);
        fs::create_dir_all(&dir).expect("create outside dir");
        dir
    }

    /// Writes `<root>/<name>/SKILL.md` with `name`, a description, the extra frontmatter
    /// lines and the body. Returns the skill folder.
    pub(crate) fn skill(&self, name: &str, frontmatter: &str, body: &str) -> PathBuf {
        let dir = self.root.join(name);
        fs::create_dir_all(&dir).expect("create skill dir");
        let text = format!(
            "---\nname: {name}\ndescription: Test skill {name}, used by the executor's tests.\n{frontmatter}---\n{body}"
        );
        fs::write(dir.join("SKILL.md"), text).expect("write SKILL.md");
        dir
    }

    /// Writes a file of a skill (parents created).
    pub(crate) fn file(&self, skill: &str, rel: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.root.join(skill).join(rel);
        fs::create_dir_all(path.parent().expect("parent")).expect("create parents");
        fs::write(&path, contents).expect("write file");
        path
    }

    /// An index over the root, as the personal layer.
    pub(crate) fn index(&self) -> Arc<SkillIndex> {
        self.index_as(Layer::Personal)
    }

    /// An index over the root, as `layer`.
    pub(crate) fn index_as(&self, layer: Layer) -> Arc<SkillIndex> {
        Arc::new(
            SkillIndex::builder()
                .root(layer, &self.root)
                .build()
                .expect("build index"),
        )
    }

    /// An executor over the personal root with `policy`, recording into [`Env::sink`].
    pub(crate) fn executor(&self, policy: Policy) -> Executor {
        self.executor_as(Layer::Personal, policy)
    }

    /// An executor over the root as `layer`.
    pub(crate) fn executor_as(&self, layer: Layer, policy: Policy) -> Executor {
        let sink: Arc<dyn AuditSink> = self.sink.clone();
        Executor::builder(self.index_as(layer))
            .policy(policy)
            .audit_sink(sink)
            .build()
    }

    /// A session of an executor with the default policy.
    pub(crate) fn session(&self) -> Session {
        self.executor(Policy::default())
            .session(SessionContext::builder().id("test-session").build())
    }

    /// The recorded events of one kind.
    pub(crate) fn events(&self, kind: AuditKind) -> Vec<AuditEvent> {
        self.sink
            .events()
            .into_iter()
            .filter(|e| e.event == kind)
            .collect()
    }
}

/// The names of the active skills, bottom of the stack first.
pub(crate) fn active(session: &Session) -> Vec<String> {
    session
        .active()
        .iter()
        .map(|s| s.record.name.to_string())
        .collect()
}

/// `skills` as owned strings.
pub(crate) fn names(skills: &[&str]) -> Vec<String> {
    skills.iter().map(|s| (*s).to_owned()).collect()
}

/// The names in a receipt's `active_skills`.
pub(crate) fn receipt_names(receipt: &Value) -> Vec<String> {
    receipt["active_skills"]
        .as_array()
        .expect("active_skills is an array")
        .iter()
        .map(|s| s["name"].as_str().expect("name").to_owned())
        .collect()
}

/// Sets the executable bit (unix).
pub(crate) fn make_executable(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mut perms = fs::metadata(path).expect("metadata").permissions();
        perms.set_mode(0o755);
        fs::set_permissions(path, perms).expect("chmod");
    }
}

/// Decides a table of host tool calls (tool, input, whether it must be allowed) and fails
/// with every row that was decided otherwise, each with its reason.
pub(crate) fn assert_decisions(session: &Session, table: &[(&str, serde_json::Value, bool)]) {
    let wrong: Vec<String> = table
        .iter()
        .filter_map(|(tool, input, allowed)| {
            let d = session.check_tool(tool, input);
            (d.allowed != *allowed)
                .then(|| format!("{tool} {input}: allowed {} ({})", d.allowed, d.reason))
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Three plain skills: `alpha`, `beta`, `gamma`.
pub(crate) fn abc() -> Env {
    let env = Env::new();
    for name in ["alpha", "beta", "gamma"] {
        env.skill(name, "", &format!("# {name}\n\nInstructions of {name}.\n"));
    }
    env
}
