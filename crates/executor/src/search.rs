//! `skills_search`: the session's view of the index's search (what the model may see:
//! scope and `disable-model-invocation` applied), the optional layer and tag filters, the
//! limit, and one `skills_searched` audit event per query.

use std::cell::OnceCell;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

use skills_index::{Audience, SearchHit, Snapshot, TermShare};
use skills_model::SkillRecord;

use crate::audit::AuditKind;
use crate::state::SessionState;
use crate::{ExecError, MatchedTerm, SearchResult, SearchResults};

/// The most results one query returns.
pub const MAX_SEARCH_LIMIT: usize = 50;
/// Results returned when the query names no limit.
pub const DEFAULT_SEARCH_LIMIT: usize = 10;

/// A `skills_search` query.
#[derive(Debug, Clone, Default)]
pub struct SearchQuery {
    /// The words to look for.
    pub query: String,
    /// At most this many results (default 10, at most 50).
    pub limit: Option<usize>,
    /// Only skills of this layer (`enterprise`, `personal`, `project`, `plugin`).
    pub layer: Option<String>,
    /// Only skills with this tag (compared without case).
    pub tag: Option<String>,
    /// Whether each result says which query terms matched which field, and what each
    /// added to its score (`explain`; results the model is shown, nothing else).
    pub explain: bool,
}

impl SearchResult {
    /// One hit as `skills_search` answers it: the description as listings show it, the
    /// score to four decimals, the matched fields by name.
    pub fn from_hit(hit: &SearchHit) -> SearchResult {
        let r = &hit.record;
        SearchResult {
            name: r.name.to_string(),
            qualified_name: r.qualified_name(),
            description: r.listed_description().into_owned(),
            layer: r.layer.to_string(),
            score: (f64::from(hit.score) * 10_000.0).round() / 10_000.0,
            matched: hit.matched.iter().map(|f| f.as_str().to_owned()).collect(),
            terms: None,
        }
    }
}

impl MatchedTerm {
    /// One term's share, as `skills_search` with `explain` answers it (the contribution to
    /// four decimals).
    pub fn from_share(share: &TermShare) -> MatchedTerm {
        MatchedTerm {
            term: share.term.clone(),
            field: share.field.as_str().to_owned(),
            contribution: (f64::from(share.contribution) * 10_000.0).round() / 10_000.0,
        }
    }
}

/// Records by address: the records of the names more than one skill holds, and of those the
/// ones a session sees, each set asked of every document once per index.
type Holding = HashSet<*const SkillRecord, std::hash::BuildHasherDefault<AddressHasher>>;

/// The hash of a record's address: the address itself, its low bits (always zero, by the
/// record's alignment) dropped and spread by a multiplication. Addresses are the
/// allocator's, not chosen by a skill folder, so nothing keyed by them can be made to
/// collide; SipHash cost more than the rest of the pass.
#[derive(Default)]
struct AddressHasher(u64);

impl std::hash::Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(*b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_usize(&mut self, address: usize) {
        self.0 = ((address as u64) >> 3).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

impl SessionState {
    /// The work of [`Session::search`](crate::Session::search).
    pub(crate) fn search(&self, q: &SearchQuery) -> Result<SearchResults, ExecError> {
        let started = Instant::now();
        let limit = q.limit.unwrap_or(DEFAULT_SEARCH_LIMIT);
        if limit == 0 || limit > MAX_SEARCH_LIMIT {
            return Err(ExecError::BadInput(format!(
                "limit must be between 1 and {MAX_SEARCH_LIMIT}"
            )));
        }
        let layer = match q.layer.as_deref() {
            Some(l) => Some(l.parse::<skills_model::Layer>().map_err(|_| {
                ExecError::BadInput(format!(
                    "unknown layer {l:?}: enterprise, personal, project or plugin"
                ))
            })?),
            None => None,
        };
        let explain = q.explain;
        let (outcome, terms) = self.with_audience(|snapshot, audience| {
            let mut outcome = snapshot.search_for(audience, &q.query, limit, |r| {
                layer.is_none_or(|l| r.layer == l) && q.tag.as_deref().is_none_or(|t| r.has_tag(t))
            });
            // What the model may see is asked again of every listed result, so that no name
            // the model is given rests on the audience's memo alone. The total and the scores
            // rest on the memo, worked out for this session and this index: a search that
            // runs while the host changes the tools it offers may count by the tools before
            // the change. (Asking again of every match cost a fifth of a search.)
            let listed = outcome.hits.len();
            outcome.hits.retain(|h| self.offers_model(&h.record));
            outcome.total -= listed - outcome.hits.len();
            // Only the results listed are explained, each by its own matches.
            let terms: Vec<Option<Vec<MatchedTerm>>> = outcome
                .hits
                .iter()
                .map(|h| {
                    explain.then(|| {
                        snapshot
                            .explain_for(audience, &q.query, &h.record)
                            .iter()
                            .map(MatchedTerm::from_share)
                            .collect()
                    })
                })
                .collect();
            (outcome, terms)
        });
        let total = outcome.total;
        let results = outcome
            .hits
            .iter()
            .zip(terms)
            .map(|(h, terms)| SearchResult {
                terms,
                ..SearchResult::from_hit(h)
            })
            .collect();
        let mut e = self.event(AuditKind::SkillsSearched);
        e.tool_name = Some("skills_search".to_owned());
        e.query = Some(q.query.clone());
        e.result_count = Some(total as u64);
        e.duration_ms = Some(crate::timing::elapsed_ms(started));
        self.emit(&e)?;
        Ok(SearchResults { results, total })
    }

    /// The least score at which this session's search offers its model a skill (see
    /// [`skills_index::SearchIndex::offer_threshold`]), over what the model may see.
    pub(crate) fn offer_threshold(&self) -> f32 {
        self.with_audience(|snapshot, audience| snapshot.offer_threshold_for(audience))
    }

    /// `f` with the current snapshot and the audience of this session's model: the
    /// skills it may be offered, of each name the record the name stands for to it.
    fn with_audience<R>(&self, f: impl FnOnce(&Snapshot, &Audience<'_>) -> R) -> R {
        // Scored over what the model may see: a hidden skill moves no score. The search
        // index holds every record, shadowed ones too; this session sees, of each name, the
        // record the name stands for to it (one it may not see takes no name from one it
        // may: `Snapshot::get_for`).
        let snapshot = self.exec.index.snapshot();
        let can_see = |r: &SkillRecord| self.can_see(r);
        // A name only one record holds stands for that record, to a reader who may see it
        // (a contested name, which stands for none, is held by two records or more). Only
        // the names more than one record holds are resolved for this session: the records
        // of those names, and of each the record it stands for to this session when its
        // model may be offered it, worked out the first time they are asked for (when the
        // memo misses, once per index). A set of every record seen, made so, was about a
        // third of a fresh session's first search at 10,000 skills.
        let shared: OnceCell<(Holding, Holding)> = OnceCell::new();
        let resolved = || {
            shared.get_or_init(|| {
                let mut members = Holding::default();
                let mut holding = Holding::default();
                for shadowed in snapshot.shadowed() {
                    members.insert(Arc::as_ptr(&shadowed.record));
                    let name = shadowed.record.name.as_str();
                    if let Some(winner) = snapshot.get_for(name, &|_| true) {
                        members.insert(Arc::as_ptr(winner));
                    }
                    if let Some(theirs) = snapshot
                        .get_for(name, &can_see)
                        .filter(|r| r.model_invocable())
                    {
                        holding.insert(Arc::as_ptr(theirs));
                    }
                }
                (members, holding)
            })
        };
        let sees = |r: &SkillRecord| {
            let (members, holding) = resolved();
            let address = std::ptr::from_ref(r);
            if members.contains(&address) {
                holding.contains(&address)
            } else {
                self.offers_model(r)
            }
        };
        // An unrestricted skill is offered to every session's model
        // (`an_unrestricted_skill_is_offered_to_every_session`): of those, only the records
        // of names more than one record holds are asked about, told by their address. The
        // others' records are not read: at 10,000 skills that pass, record by record, was
        // most of what a session's first search cost beyond a search.
        let contested = |r: &SkillRecord| resolved().0.contains(&std::ptr::from_ref(r));
        let audience = Audience::seeing(&sees)
            .seeing_unrestricted_but(&contested)
            .remembered_in(&self.audience);
        f(&snapshot, &audience)
    }
}
