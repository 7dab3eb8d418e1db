//! The tool policy of agent-skills, with no I/O: the rules of an active skill compiled
//! once at activation, the Bash grammar that allow rules judge and its guard of options
//! that write files or run programs, and the decision on one host tool call that the
//! executor has already resolved (its path as the kernel would open it, and that file's
//! identity).
//!
//! The executor reads the file system (it resolves paths, reads identities, canonicalises
//! skill folders) and hands this crate the facts; everything here is a pure function of
//! them, which is what lets the decision tests be tables.

#[doc(hidden)]
#[path = "fuzz_support.rs"]
pub mod __fuzz;
mod call;
mod decide;
mod guard;
mod index;
mod rules;
mod shell;
mod tool;

pub use call::{normalize, Call, ResolvedPath, ToolClass};
pub use decide::{decide, AllowedToolsMode, Decision, DefaultDecision, Fallback};
pub use index::MAX_COMPARISONS;
pub use rules::{CompiledRules, FolderFacts};
pub use tool::{
    is_plain_tool_name, not_plain, shown_tool, tool_key, PathAccess, PATH_TOOLS, TOOL_NAME_MAX,
};
