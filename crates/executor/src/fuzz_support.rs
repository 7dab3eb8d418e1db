//! Support for the fuzz targets and property tests of enforcement (not part of the API):
//! the grammar's readings of a Bash line, now `skills-policy`'s, under the path the fuzz
//! targets use.

pub use skills_policy::__fuzz::{admitted_commands, bash_fast_path, bash_parse};
