//! `skillctl search`: the index's search (the ranking `skills_search` serves a model), for
//! people: every resolved skill is searched, `disable-model-invocation` ones included
//! (people invoke those).

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::{bail, Result};
use serde_json::json;
use skills_index::SearchField;
use skills_model::Layer;

use crate::roots::RootArgs;
use crate::validate::Format;

/// Find skills by what a task is about.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  skillctl search \"fill a pdf form\"
  skillctl search deploy --layer project --limit 3 --format json

Exit status: 0 searched (also with no match), 2 usage error")]
pub(crate) struct SearchArgs {
    /// The words to look for, such as "fill a pdf form".
    query: String,
    #[command(flatten)]
    roots: RootArgs,
    /// At most this many results (1 to 50).
    #[arg(long, default_value_t = 10)]
    limit: usize,
    /// Only skills of this layer.
    #[arg(long)]
    layer: Option<Layer>,
    /// Only skills with this tag.
    #[arg(long)]
    tag: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
}

fn field(f: SearchField) -> &'static str {
    match f {
        SearchField::Name => "name",
        SearchField::Description => "description",
        SearchField::WhenToUse => "when_to_use",
        SearchField::Tags => "tags",
    }
}

pub(crate) fn run(args: &SearchArgs) -> Result<ExitCode> {
    if !(1..=skills_executor::MAX_SEARCH_LIMIT).contains(&args.limit) {
        bail!(
            "--limit must be between 1 and {}",
            skills_executor::MAX_SEARCH_LIMIT
        );
    }
    let index = args.roots.build_index(false)?;
    let outcome = index.snapshot().search(&args.query, args.limit, |r| {
        args.layer.is_none_or(|l| r.layer == l)
            && args
                .tag
                .as_deref()
                .is_none_or(|t| r.frontmatter.tags.iter().any(|x| x.eq_ignore_ascii_case(t)))
    });
    let total = outcome.total;
    let shown = &outcome.hits;
    let mut out = crate::stdout();
    match args.format {
        Format::Json => {
            let results: Vec<_> = shown
                .iter()
                .map(|h| {
                    json!({
                        "name": h.record.name,
                        "qualified_name": h.record.qualified_name(),
                        "description": h.record.listed_description(),
                        "layer": h.record.layer,
                        "score": (f64::from(h.score) * 10_000.0).round() / 10_000.0,
                        "matched": h.matched.iter().map(|f| field(*f)).collect::<Vec<_>>(),
                    })
                })
                .collect();
            serde_json::to_writer_pretty(&mut out, &json!({"results": results, "total": total}))?;
            writeln!(out)?;
        }
        Format::Human => {
            let width = shown
                .iter()
                .map(|h| h.record.qualified_name().len())
                .max()
                .unwrap_or(0);
            for h in shown {
                writeln!(
                    out,
                    "{:width$}  {:>6.2}  {}",
                    h.record.qualified_name(),
                    h.score,
                    h.record.description
                )?;
            }
            let noun = if total == 1 { "match" } else { "matches" };
            writeln!(out, "{total} {noun}, {} shown", shown.len())?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
