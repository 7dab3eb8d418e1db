//! `skillctl`: the command-line front of agent-skills.
fn main() {}
