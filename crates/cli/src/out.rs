//! JSON output written as it is serialised: borrowed views of records, and sequences
//! serialised from iterators, so no command builds a `serde_json::Value` tree of its whole
//! answer (at 100,000 skills that tree was most of `list`'s peak memory).
//!
//! Keys are written in alphabetical order, the order a `Value` object keeps, so the output
//! is the same bytes the tree gave.

use std::cell::Cell;
use std::path::Path;

use serde::ser::{Serialize, Serializer};
use skills_index::Shadowed;
use skills_model::{Layer, SkillRecord};

/// A sequence serialised from an iterator, once.
pub(crate) struct Seq<I>(Cell<Option<I>>);

impl<I> Seq<I> {
    pub(crate) fn new(items: I) -> Seq<I> {
        Seq(Cell::new(Some(items)))
    }
}

impl<I> Serialize for Seq<I>
where
    I: Iterator,
    I::Item: Serialize,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0.take() {
            Some(items) => serializer.collect_seq(items),
            None => Err(serde::ser::Error::custom("a sequence serialised twice")),
        }
    }
}

/// A sequence of values each serialised through a `Value` first, for types whose own
/// field order differs from the alphabetical order of the tree output (small and few:
/// diagnostics).
pub(crate) fn sorted_keys<'a, T: Serialize + 'a, I: Iterator<Item = &'a T>>(
    items: I,
) -> Seq<impl Iterator<Item = serde_json::Value> + use<'a, T, I>> {
    Seq::new(items.map(|item| serde_json::to_value(item).unwrap_or(serde_json::Value::Null)))
}

/// A record as `list` and `show` print it.
#[derive(serde::Serialize)]
pub(crate) struct RecordView<'a> {
    description: &'a str,
    layer: Layer,
    name: &'a str,
    path: &'a Path,
    plugin: Option<&'a str>,
    priority: i64,
    qualified_name: String,
    tags: &'a [String],
}

impl<'a> RecordView<'a> {
    pub(crate) fn of(r: &'a SkillRecord) -> RecordView<'a> {
        RecordView {
            description: &r.description,
            layer: r.layer,
            name: r.name.as_str(),
            path: &r.path,
            plugin: r.plugin.as_deref(),
            priority: r.frontmatter.priority,
            qualified_name: r.qualified_name(),
            tags: &r.frontmatter.tags,
        }
    }
}

/// A shadowed record as `list` prints it.
#[derive(serde::Serialize)]
pub(crate) struct ShadowedView<'a> {
    layer: Layer,
    name: &'a str,
    path: &'a Path,
    plugin: Option<&'a str>,
    qualified_name: String,
    shadowed_by: &'a str,
    shadowed_by_path: &'a Path,
}

impl<'a> ShadowedView<'a> {
    pub(crate) fn of(s: &'a Shadowed) -> ShadowedView<'a> {
        let r = &s.record;
        ShadowedView {
            layer: r.layer,
            name: r.name.as_str(),
            path: &r.path,
            plugin: r.plugin.as_deref(),
            qualified_name: r.qualified_name(),
            shadowed_by: &s.shadowed_by,
            shadowed_by_path: &s.winner_path,
        }
    }
}
