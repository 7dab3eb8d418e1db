//! `skillctl search --explain` and `--why NAME`: which words of a query matched which
//! field of each skill listed and what each added to its score; and why a named skill is
//! not listed: no skill of that name, shadowed, left out by a filter, hidden from a
//! session's model (its `scope`, `disable-model-invocation`), no word in common with the
//! query, or outranked (by which skills).

use std::sync::Arc;

use anyhow::Result;
use serde::Serialize;
use skills_executor::{MatchedTerm, SearchResult, Session};
use skills_index::{SearchHit, SearchOutcome, Snapshot};
use skills_model::SkillRecord;

use crate::out::visible;

/// What an explained search works from.
pub(crate) struct Explaining<'a> {
    pub(crate) snap: &'a Snapshot,
    pub(crate) query: &'a str,
    pub(crate) outcome: &'a SearchOutcome,
    pub(crate) keep: &'a dyn Fn(&SkillRecord) -> bool,
    /// A session as the options describe it, for what its model may see.
    pub(crate) session: &'a Session,
    pub(crate) context: String,
    pub(crate) why: Option<&'a str>,
}

/// Why a named skill is (not) listed.
#[derive(Debug, Serialize)]
pub(crate) struct Why {
    skill: String,
    /// Its 1-based place in the list, when listed.
    listed: Option<usize>,
    /// Its place among every skill the query matched, when it matched.
    rank: Option<usize>,
    score: Option<f64>,
    terms: Vec<MatchedTerm>,
    /// The listed skills above it, when it is outranked.
    outranked_by: Vec<String>,
    reasons: Vec<Reason>,
}

#[derive(Debug, Serialize)]
struct Reason {
    /// `not_found`, `shadowed`, `filtered`, `scope`, `disable_model_invocation`,
    /// `no_shared_term`, `outranked`, `below_threshold`.
    rule: &'static str,
    message: String,
}

fn reason(rule: &'static str, message: String) -> Reason {
    Reason { rule, message }
}

fn terms_of(e: &Explaining<'_>, record: &SkillRecord) -> Vec<MatchedTerm> {
    e.snap
        .explain(e.query, record)
        .iter()
        .map(MatchedTerm::from_share)
        .collect()
}

/// The listed results, each with its terms.
pub(crate) fn results(e: &Explaining<'_>) -> Vec<SearchResult> {
    e.outcome
        .hits
        .iter()
        .map(|h| SearchResult {
            terms: Some(terms_of(e, &h.record)),
            ..SearchResult::from_hit(h)
        })
        .collect()
}

/// Why `name` is or is not in the list.
pub(crate) fn why(e: &Explaining<'_>, name: &str) -> Why {
    let mut why = Why {
        skill: name.to_owned(),
        listed: None,
        rank: None,
        score: None,
        terms: Vec::new(),
        outranked_by: Vec::new(),
        reasons: Vec::new(),
    };
    let Some(record) = resolve(e, name, &mut why.reasons) else {
        return why;
    };
    why.skill = record.qualified_name();
    hidden(e, &record, &mut why.reasons);
    if !(e.keep)(&record) {
        why.reasons.push(reason(
            "filtered",
            "--layer or --tag leaves it out of this search".to_owned(),
        ));
        return why;
    }
    why.terms = terms_of(e, &record);
    if why.terms.is_empty() {
        why.reasons.push(no_shared_term(e, &record));
        return why;
    }
    ranked(e, &record, &mut why);
    why
}

/// The skill `name` stands for in the listing; `None` (with the reason) when it is no
/// skill there: not found, or shadowed.
fn resolve(e: &Explaining<'_>, name: &str, reasons: &mut Vec<Reason>) -> Option<Arc<SkillRecord>> {
    let same = |r: &SkillRecord| r.name.as_str() == name || r.qualified_name() == name;
    if let Some(s) = e.snap.shadowed().iter().find(|s| same(&s.record)) {
        let listed_winner = e.snap.skills().any(|r| same(r));
        if !listed_winner || s.record.qualified_name() == name {
            reasons.push(reason(
                "shadowed",
                format!(
                    "`{}` lost its name to `{}` ({}): the winner is the skill searched and offered",
                    visible(&s.record.qualified_name()),
                    visible(&s.shadowed_by),
                    visible(&s.winner_path.display().to_string())
                ),
            ));
            return None;
        }
    }
    if let Some(r) = e.snap.skills().find(|r| same(r)) {
        return Some(Arc::clone(r));
    }
    let names: Vec<&str> = e.snap.skills().map(|r| r.name.as_str()).collect();
    let hint = skills_model::closest_name(name, names.iter().copied())
        .map(|n| format!(" (did you mean {n}?)"))
        .unwrap_or_default();
    reasons.push(reason(
        "not_found",
        format!("no skill of these roots is named `{}`{hint}", visible(name)),
    ));
    None
}

/// Whether a session of these options would hide `record` from its model, and by which
/// rule (people's search lists it all the same).
fn hidden(e: &Explaining<'_>, record: &SkillRecord, reasons: &mut Vec<Reason>) {
    if !e.session.can_see(record) {
        let scope = record.frontmatter.scope.as_deref();
        let message = match scope {
            Some(s) if s.unreadable => {
                "its `scope` could not be read, so no session sees it".to_owned()
            }
            Some(s) => format!(
                "hidden from a session of {}: its `scope` admits {}",
                e.context,
                scope_text(s)
            ),
            None => "hidden from this session".to_owned(),
        };
        reasons.push(reason("scope", message));
    }
    if !record.model_invocable() {
        reasons.push(reason(
            "disable_model_invocation",
            "never offered to a model (`disable-model-invocation: true`, or Codex's `allow_implicit_invocation: false`); people's search lists it".to_owned(),
        ));
    }
}

fn scope_text(s: &skills_model::Scope) -> String {
    let mut parts = Vec::new();
    for (what, list) in [
        ("agent", &s.agents),
        ("tenant", &s.tenants),
        ("environment", &s.environments),
    ] {
        if !list.is_empty() {
            parts.push(format!("{what} {}", visible(&list.join(" or "))));
        }
    }
    parts.join(", ")
}

fn no_shared_term(e: &Explaining<'_>, record: &SkillRecord) -> Reason {
    let query: Vec<String> = skills_index::search_terms(e.query)
        .into_iter()
        .map(|(w, _)| w.to_lowercase())
        .collect();
    let own = format!(
        "{} {} {} {}",
        record.name,
        record.description,
        record.frontmatter.when_to_use.as_deref().unwrap_or(""),
        record.frontmatter.tags.join(" ")
    );
    let mut its: Vec<String> = Vec::new();
    for (w, _) in skills_index::search_terms(&own) {
        let w = w.to_lowercase();
        if !its.contains(&w) && its.len() < 12 {
            its.push(w);
        }
    }
    reason(
        "no_shared_term",
        format!(
            "no word of the query ({}) is in its name, description, when_to_use or tags (its words: {})",
            visible(&query.join(", ")),
            visible(&its.join(", "))
        ),
    )
}

/// Where `record` ranks: listed, or outranked by the listed skills; and whether it is
/// below the offering threshold.
fn ranked(e: &Explaining<'_>, record: &Arc<SkillRecord>, why: &mut Why) {
    let is = |h: &SearchHit| Arc::ptr_eq(&h.record, record);
    let all = e.snap.search(e.query, usize::MAX, e.keep);
    let place = all.hits.iter().position(is);
    why.rank = place.map(|p| p + 1);
    let score = place.map(|p| all.hits[p].score);
    why.score = score.map(|s| (f64::from(s) * 10_000.0).round() / 10_000.0);
    why.listed = e.outcome.hits.iter().position(is).map(|p| p + 1);
    let threshold = e.snap.offer_threshold();
    if score.is_some_and(|s| s < threshold) {
        why.reasons.push(reason(
            "below_threshold",
            format!(
                "its score {:.4} is below the offering threshold {threshold:.4}: what it shares with the query are words other skills hold too, or one word in a long text",
                score.unwrap_or_default()
            ),
        ));
    }
    if why.listed.is_some() {
        return;
    }
    why.outranked_by = e
        .outcome
        .hits
        .iter()
        .map(|h| h.record.qualified_name())
        .collect();
    why.reasons.push(reason(
        "outranked",
        format!(
            "it matched but ranks {} of {}, below the skills listed: {}",
            why.rank.unwrap_or(0),
            all.total,
            e.outcome
                .hits
                .iter()
                .map(|h| format!("{} ({:.2})", visible(&h.record.qualified_name()), h.score))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    ));
}

/// The human form of a term list: `term field +contribution`, by field.
pub(crate) fn terms_line(terms: &[MatchedTerm]) -> String {
    terms
        .iter()
        .map(|t| format!("{} {} +{:.2}", visible(&t.term), t.field, t.contribution))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `--why` for people.
pub(crate) fn why_human(out: &mut impl std::io::Write, why: &Why) -> Result<()> {
    match (why.listed, why.rank) {
        (Some(place), _) => writeln!(out, "\n`{}` is listed, at {place}", visible(&why.skill))?,
        _ => writeln!(out, "\nwhy `{}` is not listed:", visible(&why.skill))?,
    }
    if !why.terms.is_empty() {
        writeln!(
            out,
            "  score {:.4}: {}",
            why.score.unwrap_or_default(),
            terms_line(&why.terms)
        )?;
    }
    for r in &why.reasons {
        writeln!(out, "  - {}: {}", r.rule, r.message)?;
    }
    Ok(())
}
