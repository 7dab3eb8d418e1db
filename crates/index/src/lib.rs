//! The live skill index: built in parallel from the layered roots of `skills-storage`,
//! published as immutable snapshots that readers take without a lock, and reloaded when
//! files change.
//!
//! For now it holds the step every later part builds on: checking one skill directory on
//! disk ([`check_candidate`]), which reads `SKILL.md` with a bound, parses it and adds the
//! diagnostics only the filesystem can give (a misnamed or unreadable file).
//!
//! ```
//! use skills_index::{check_candidate, DEFAULT_SKILL_FILE_LIMIT};
//! use skills_parser::SkillParser;
//! use skills_storage::{discover, DiscoveryOptions};
//!
//! let root = tempfile::tempdir().unwrap();
//! std::fs::create_dir(root.path().join("pdf-tools")).unwrap();
//! std::fs::write(
//!     root.path().join("pdf-tools/SKILL.md"),
//!     "---\nname: pdf-tools\ndescription: Fill PDF forms. Use when asked.\n---\nBody\n",
//! )
//! .unwrap();
//! let found = discover(root.path(), &DiscoveryOptions::roots());
//! let report = check_candidate(&found.candidates[0], &SkillParser::default(), DEFAULT_SKILL_FILE_LIMIT);
//! assert!(report.is_valid());
//! assert_eq!(report.name(), Some("pdf-tools"));
//! ```

mod check;

pub use check::{check_candidate, dir_name, SkillReport, DEFAULT_SKILL_FILE_LIMIT};
