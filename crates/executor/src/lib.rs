//! The executor: sessions with a stack of active skills, enforcement of their
//! `allowed-tools`, the runtime tools a model calls, the script runner and the audit trail.
//!
//! This crate is a placeholder for now: issue 4 fills it. It exists so the workspace has its
//! final shape and dependencies point one way from the start.
