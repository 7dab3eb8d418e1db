//! The live skill index: built in parallel from the layered roots of `skills-storage`,
//! published as immutable snapshots that readers take without a lock, and reloaded when
//! files change.
//!
//! This crate is a placeholder for now: issue 3 fills it. It exists so the workspace has its
//! final shape and dependencies point one way from the start.
