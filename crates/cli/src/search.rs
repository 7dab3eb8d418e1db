//! `skillctl search`: the index's search (the ranking `skills_search` serves a model), for
//! people: every resolved skill is searched and counted, `disable-model-invocation` and
//! scoped ones included (people invoke those; a session's search counts only what its model
//! may see, so its scores can differ). `--explain` says what each word of the query
//! added to each listed skill's score, and `--why NAME` why a skill is not listed
//! (`explain.rs`).

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
  skillctl search --explain \"fill a pdf form\" --why pdf-forms --tenant acme

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
    /// Say which words of the query matched which field of each skill listed, and what
    /// each added to its score.
    #[arg(long)]
    explain: bool,
    /// Say why this skill is not listed: no such skill, shadowed, filtered, hidden from a
    /// session's model (and by which rule), no word in common, or outranked (by which).
    #[arg(long, value_name = "NAME")]
    why: Option<String>,
    /// For --why: the session whose model's view is judged (scope).
    #[command(flatten)]
    context: crate::session::ContextArgs,
}

pub(crate) fn run(args: &SearchArgs) -> Result<ExitCode> {
    if !(1..=skills_executor::MAX_SEARCH_LIMIT).contains(&args.limit) {
        bail!(
            "--limit must be between 1 and {}",
            skills_executor::MAX_SEARCH_LIMIT
        );
    }
    let index = std::sync::Arc::new(args.roots.build_index(false)?);
    let keep = |r: &skills_model::SkillRecord| {
        args.layer.is_none_or(|l| r.layer == l) && args.tag.as_deref().is_none_or(|t| r.has_tag(t))
    };
    let snap = index.snapshot();
    let outcome = snap.search(&args.query, args.limit, keep);
    if args.explain || args.why.is_some() {
        let executor = skills_executor::Executor::builder(std::sync::Arc::clone(&index)).build();
        let session = executor.session(args.context.context());
        let explaining = crate::explain::Explaining {
            snap: &snap,
            query: &args.query,
            outcome: &outcome,
            keep: &keep,
            session: &session,
            context: args.context.describe(),
            why: args.why.as_deref(),
        };
        return explained(args, &explaining);
    }
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

/// `--explain` and `--why`: the list with each skill's terms, then why the named skill is
/// (not) in it.
fn explained(args: &SearchArgs, e: &crate::explain::Explaining<'_>) -> Result<ExitCode> {
    let results = crate::explain::results(e);
    let why = e.why.map(|name| crate::explain::why(e, name));
    let threshold = f64::from(e.snap.offer_threshold());
    let mut out = crate::stdout();
    match args.format {
        Format::Json => {
            let mut doc = serde_json::json!({
                "results": results,
                "total": e.outcome.total,
                "threshold": (threshold * 10_000.0).round() / 10_000.0,
            });
            if let Some(why) = &why {
                doc["why"] = serde_json::to_value(why)?;
            }
            serde_json::to_writer_pretty(&mut out, &doc)?;
            writeln!(out)?;
        }
        Format::Human => {
            for r in &results {
                writeln!(
                    out,
                    "{}  {:.2}  {}",
                    crate::out::visible(&r.qualified_name),
                    r.score,
                    crate::out::visible(&r.description)
                )?;
                let terms = r.terms.as_deref().unwrap_or_default();
                writeln!(out, "    {}", crate::explain::terms_line(terms))?;
            }
            let noun = if e.outcome.total == 1 {
                "match"
            } else {
                "matches"
            };
            writeln!(
                out,
                "{} {noun}, {} shown; a skill is offered from score {threshold:.4}",
                e.outcome.total,
                results.len()
            )?;
            if let Some(why) = &why {
                crate::explain::why_human(&mut out, why)?;
            }
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
