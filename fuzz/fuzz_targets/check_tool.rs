//! Fuzz target: `check_tool` under an allow rule set. Every Bash line it allows must read,
//! independently of the grammar, as admitted constructs only, each command matching a
//! rule; the grammar's fast path must agree with its parser; and every path a path rule
//! allows must lie, resolved, inside the allowed folder.
#![no_main]

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use serde_json::json;
use skills_executor::__fuzz::{admitted_commands, bash_fast_path, bash_parse};
use skills_executor::{Executor, LoadMode, Session, SessionContext};
use skills_index::SkillIndex;
use skills_model::{Layer, ToolRules};

const BASH_RULES: &str = "Bash(git:*) Bash(head -5) Bash(echo ok:*)";

struct World {
    session: Session,
    allowed: PathBuf,
}

fn world() -> &'static World {
    static WORLD: OnceLock<World> = OnceLock::new();
    WORLD.get_or_init(|| {
        let base = std::env::temp_dir().join(format!("skills-fuzz-{}", std::process::id()));
        let allowed = base.join("allowed");
        std::fs::create_dir_all(allowed.join("sub")).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        let _ = std::os::unix::fs::symlink(base.join("outside"), allowed.join("out"));
        let _ = std::os::unix::fs::symlink(allowed.join("sub"), allowed.join("in"));
        let skill = base.join("skills/fuzzed");
        std::fs::create_dir_all(&skill).unwrap();
        std::fs::write(
            skill.join("SKILL.md"),
            format!(
                "---\nname: fuzzed\ndescription: Fuzzed rules.\nallowed-tools: {BASH_RULES} Read({}/*)\n---\nBody.\n",
                allowed.display()
            ),
        )
        .unwrap();
        let index = SkillIndex::builder().root(Layer::Personal, base.join("skills")).build().unwrap();
        let session = Executor::builder(Arc::new(index)).build().session(SessionContext::default());
        session.load(&["fuzzed".to_owned()], LoadMode::Add).unwrap();
        World {
            session,
            allowed: std::fs::canonicalize(&allowed).unwrap(),
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let w = world();
    if let Some(fast) = bash_fast_path(text) {
        assert_eq!(Ok(fast), bash_parse(text), "fast path disagrees on {text:?}");
    }
    if w.session.check_tool("Bash", &json!({ "command": text })).allowed {
        let rules = ToolRules::parse_lenient(BASH_RULES).0;
        let commands = admitted_commands(text).expect("allowed but not admitted");
        for words in commands {
            assert!(rules.any_matches("Bash", Some(&words.join(" "))), "{text:?}");
        }
    }
    // The same bytes as a path below the allowed folder.
    let path = format!("{}/{}", w.allowed.display(), text);
    if w.session.check_tool("Read", &json!({ "file_path": path })).allowed {
        if let Ok(real) = std::fs::canonicalize(&path) {
            assert!(real.starts_with(&w.allowed), "{path:?} resolves to {}", real.display());
        }
    }
});
