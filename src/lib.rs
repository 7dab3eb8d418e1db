//! agent-skills: Agent Skills (`SKILL.md` packages) for long-running agent processes.
//!
//! This facade re-exports each crate of the workspace as a module, in the order data flows:
//! [`model`] (the types), [`parser`] (bytes of one `SKILL.md` to
//! a typed frontmatter and diagnostics), [`storage`] (where skills live:
//! layered roots, discovery, bounded reads, sources), [`remote`] (well-known HTTP
//! indexes as sources: verified, cached, polled), [`index`] (the live
//! index), [`executor`] (sessions, enforcement, scripts, audit, prompts),
//! and the [`protocol`] every transport speaks. The types a host needs most are also here at
//! the top:
//!
//! | need | type |
//! |---|---|
//! | read one `SKILL.md` | [`SkillParser`], [`ParseInput`] |
//! | keep a live index of roots | [`SkillIndex`], [`Layer`] |
//! | follow changes to skills | [`SkillIndex::subscribe`], [`ChangeEvent`], [`ChangeKind`] |
//! | serve sessions to a model | [`Executor`], [`Session`], [`SessionContext`], [`LoadMode`] |
//! | set the host's rules | [`Policy`] |
//! | keep an audit trail | [`AuditSink`], [`JsonlFileSink`] |
//! | speak JSON to any transport | [`protocol`], [`Value`] (tool inputs, as `check_tool` takes them) |
//!
//! A session over an index, with a policy and an audit sink: load a skill, ask before a
//! host tool runs, and read the audit trail.
//!
//! ```
//! use std::sync::Arc;
//! use agent_skills::{executor::MemorySink, Executor, Layer, LoadMode, Policy, SessionContext, SkillIndex};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let skill = dir.path().join("git-helper");
//! std::fs::create_dir_all(&skill).unwrap();
//! std::fs::write(
//!     skill.join("SKILL.md"),
//!     "---\nname: git-helper\ndescription: Use when working with git.\nallowed-tools: Bash(git:*)\n---\nUse git.\n",
//! )
//! .unwrap();
//! let index = Arc::new(SkillIndex::builder().root(Layer::Personal, dir.path()).build().unwrap());
//! let audit = Arc::new(MemorySink::default());
//! let executor = Executor::builder(index)
//!     .policy(Policy::builder().max_active(4).build())
//!     .audit_sink(audit.clone())
//!     .build();
//! let session = executor.session(SessionContext::builder().agent("coder").build());
//! let receipt = session.load(&["git-helper".to_owned()], LoadMode::Replace).unwrap();
//! assert_eq!(receipt.active_skills[0].body.as_deref(), Some("Use git.\n"));
//! let allow = session.check_tool("Bash", &serde_json::json!({"command": "git status"}));
//! let deny = session.check_tool("Bash", &serde_json::json!({"command": "rm -rf /"}));
//! assert!(allow.allowed && !deny.allowed);
//! assert_eq!(allow.rule.as_deref(), Some("Bash(git:*)"));
//! assert_eq!(audit.events().len(), 3); // the activation and two decisions
//! ```
//!
//! Follow a folder of skills as it changes: the index watches its roots and sends a
//! [`ChangeEvent`] to each subscriber for every skill added, changed or removed.
//!
//! ```
//! use std::time::Duration;
//! use agent_skills::{ChangeKind, Layer, SkillIndex};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let index = SkillIndex::builder().root(Layer::Project, dir.path()).watch(true).build().unwrap();
//! let events = index.subscribe();
//! let skill = dir.path().join("pdf-tools");
//! std::fs::create_dir_all(&skill).unwrap();
//! std::fs::write(
//!     skill.join("SKILL.md"),
//!     "---\nname: pdf-tools\ndescription: Fill PDF forms. Use when asked to fill one.\n---\nSteps.\n",
//! )
//! .unwrap();
//! // The watcher re-reads the folder and publishes a new snapshot with the skill in it.
//! let event = events.recv_timeout(Duration::from_secs(30)).expect("an event");
//! assert_eq!((event.event, event.name.as_str()), (ChangeKind::Added, "pdf-tools"));
//! assert!(index.snapshot().get("pdf-tools").is_some());
//! ```
//!
//! The README, below, is compiled as part of the documentation tests.
#![doc = include_str!("../README.md")]

#[doc(inline)]
pub use skills_executor as executor;
#[doc(inline)]
pub use skills_index as index;
#[doc(inline)]
pub use skills_model as model;
#[doc(inline)]
pub use skills_parser as parser;
#[doc(inline)]
pub use skills_protocol as protocol;
#[doc(inline)]
pub use skills_remote as remote;
#[doc(inline)]
pub use skills_storage as storage;

/// The JSON value tool inputs are given as (`Session::check_tool`, `protocol::call`): the
/// `serde_json` version the executor was built with.
pub use skills_executor::Value;
pub use skills_executor::{
    AuditSink, Executor, JsonlFileSink, LoadMode, Policy, Session, SessionContext,
};
pub use skills_index::{ChangeEvent, ChangeKind, SkillIndex};
pub use skills_model::Layer;
pub use skills_parser::{ParseInput, SkillParser};
