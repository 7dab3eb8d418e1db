//! `skillctl search`: the index's search (the ranking `skills_search` serves a model), for
//! people: every resolved skill is searched and counted, `disable-model-invocation` and
//! scoped ones included (people invoke those; a session's search counts only what its model
//! may see, so its scores can differ).

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::{bail, Result};
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

pub(crate) fn run(args: &SearchArgs) -> Result<ExitCode> {
    if !(1..=skills_executor::MAX_SEARCH_LIMIT).contains(&args.limit) {
        bail!(
            "--limit must be between 1 and {}",
            skills_executor::MAX_SEARCH_LIMIT
        );
    }
    let index = args.roots.build_index(false)?;
    let outcome = index.snapshot().search(&args.query, args.limit, |r| {
        args.layer.is_none_or(|l| r.layer == l) && args.tag.as_deref().is_none_or(|t| r.has_tag(t))
    });
    let total = outcome.total;
    let shown = &outcome.hits;
    let mut out = crate::stdout();
    match args.format {
        Format::Json => {
            let results = skills_executor::SearchResults {
                results: shown
                    .iter()
                    .map(skills_executor::SearchResult::from_hit)
                    .collect(),
                total,
            };
            serde_json::to_writer_pretty(&mut out, &results)?;
            writeln!(out)?;
        }
        Format::Human => {
            let width = shown
                .iter()
                .map(|h| crate::out::visible(&h.record.qualified_name()).len())
                .max()
                .unwrap_or(0);
            for h in shown {
                writeln!(
                    out,
                    "{:width$}  {:>6.2}  {}",
                    crate::out::visible(&h.record.qualified_name()),
                    h.score,
                    crate::out::visible(&h.record.description)
                )?;
            }
            let noun = if total == 1 { "match" } else { "matches" };
            writeln!(out, "{total} {noun}, {} shown", shown.len())?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
