//! Search over a snapshot's skills (`skills_search`): lexical relevance with field weights,
//! English stemming, ties to precedence.
//!
//! Each resolved skill is a document of four fields: its name (split at hyphens and other
//! separators), description, `when_to_use` and tags. Words are lowercased, split at every
//! character that is not a letter or digit, stripped of a few English function words and
//! stemmed (Snowball's English stemmer, so "documentations" finds "documentation").
//! Ranking is BM25F: per field, a term's count is normalised by the field's length against
//! its average, the fields are weighted ([`FIELD_WEIGHTS`]: name 3, tags 2, description 1,
//! `when_to_use` 1) and summed, and the sum is saturated and multiplied by the term's
//! inverse document frequency. A query's terms add up, so a skill that matches more of them
//! ranks higher; ties go to precedence (layer, then higher `priority`, then name).
//!
//! The index lives with the snapshot. It is built the first time a snapshot is searched
//! (commands that never search never pay for it); from then on every publication builds
//! the next one before the snapshot is swapped in, re-reading only the records that changed
//! (a record's terms are kept per record and reused while the record is the same), so a
//! skill is findable as soon as it is listed and readers never wait.

use std::collections::HashMap;
use std::sync::Arc;

use rust_stemmers::{Algorithm, Stemmer};
use serde::Serialize;
use skills_model::{Layer, SkillRecord};

/// A field a match can come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SearchField {
    /// The skill's name.
    Name,
    /// Its description.
    Description,
    /// Its `when_to_use` (Claude Code).
    WhenToUse,
    /// Its tags.
    Tags,
}

impl SearchField {
    /// Every field, in the order of [`FIELD_WEIGHTS`].
    pub const ALL: [SearchField; 4] = [
        SearchField::Name,
        SearchField::Description,
        SearchField::WhenToUse,
        SearchField::Tags,
    ];
}

/// The weight of a match in each field of [`SearchField::ALL`].
pub const FIELD_WEIGHTS: [f32; 4] = [3.0, 1.0, 1.0, 2.0];

/// BM25's saturation and length normalisation.
const K1: f32 = 1.2;
const B: f32 = 0.75;

/// Words too common to say anything about a skill.
const STOP_WORDS: [&str; 33] = [
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "how", "i", "in", "is",
    "it", "me", "my", "of", "on", "or", "that", "the", "this", "to", "use", "used", "using",
    "want", "what", "when", "with", "you", "your",
];

/// Splits `text` into stemmed terms, with the same rules for documents and queries.
fn terms<'t>(stemmer: &'t Stemmer, text: &'t str) -> impl Iterator<Item = String> + 't {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
        .map(|w| stemmer.stem(&w).into_owned())
}

fn stemmer() -> Stemmer {
    Stemmer::create(Algorithm::English)
}

/// One skill's terms: each distinct term with its count per field, and each field's length
/// in terms. Kept per record and shared between snapshots while the record is unchanged.
#[derive(Debug)]
struct DocTerms {
    terms: Box<[(Box<str>, [u8; 4])]>,
    lens: [u16; 4],
}

impl DocTerms {
    fn of(stemmer: &Stemmer, record: &SkillRecord) -> DocTerms {
        let fm = &record.frontmatter;
        let tags = fm.tags.join(" ");
        let texts: [&str; 4] = [
            record.name.as_str(),
            &record.description,
            fm.when_to_use.as_deref().unwrap_or(""),
            &tags,
        ];
        let mut counts: HashMap<String, [u8; 4]> = HashMap::new();
        let mut lens = [0u16; 4];
        for (f, text) in texts.iter().enumerate() {
            for term in terms(stemmer, text) {
                lens[f] = lens[f].saturating_add(1);
                let c = counts.entry(term).or_default();
                c[f] = c[f].saturating_add(1);
            }
        }
        let mut terms: Vec<(Box<str>, [u8; 4])> = counts
            .into_iter()
            .map(|(t, c)| (t.into_boxed_str(), c))
            .collect();
        terms.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        DocTerms {
            terms: terms.into_boxed_slice(),
            lens,
        }
    }

    /// Heap bytes this document holds.
    fn heap_bytes(&self) -> usize {
        self.terms.len() * std::mem::size_of::<(Box<str>, [u8; 4])>()
            + self.terms.iter().map(|(t, _)| t.len()).sum::<usize>()
    }
}

/// A document of the index: the record and its terms.
#[derive(Debug)]
struct Doc {
    record: Arc<SkillRecord>,
    terms: Arc<DocTerms>,
}

/// One match of a query.
#[derive(Debug, Clone)]
pub struct SearchHit {
    /// The skill.
    pub record: Arc<SkillRecord>,
    /// Its relevance (higher is better; comparable within one query only).
    pub score: f32,
    /// The fields a query term matched, in [`SearchField::ALL`] order.
    pub matched: Vec<SearchField>,
}

/// The search index of one snapshot (see the module documentation).
#[derive(Debug)]
pub struct SearchIndex {
    docs: Vec<Doc>,
    /// Term → (document, count per field).
    postings: HashMap<Box<str>, Vec<(u32, [u8; 4])>>,
    /// Average field lengths.
    avg: [f32; 4],
    /// Layer precedence, highest first, for ties.
    order: [Layer; 4],
}

impl SearchIndex {
    /// Indexes `records`, reusing the terms of every record `previous` already holds (the
    /// same `Arc`).
    pub(crate) fn build<'r>(
        records: impl Iterator<Item = &'r Arc<SkillRecord>>,
        previous: Option<&SearchIndex>,
        order: [Layer; 4],
    ) -> SearchIndex {
        let reuse: HashMap<*const SkillRecord, &Arc<DocTerms>> = previous
            .map(|p| {
                p.docs
                    .iter()
                    .map(|d| (Arc::as_ptr(&d.record), &d.terms))
                    .collect()
            })
            .unwrap_or_default();
        let stemmer = stemmer();
        let docs: Vec<Doc> = records
            .map(|r| Doc {
                record: Arc::clone(r),
                terms: reuse.get(&Arc::as_ptr(r)).map_or_else(
                    || Arc::new(DocTerms::of(&stemmer, r)),
                    |t| Arc::clone(t),
                ),
            })
            .collect();
        let mut postings: HashMap<Box<str>, Vec<(u32, [u8; 4])>> = HashMap::new();
        let mut total = [0f32; 4];
        for (i, doc) in docs.iter().enumerate() {
            let i = u32::try_from(i).unwrap_or(u32::MAX);
            for (f, len) in doc.terms.lens.iter().enumerate() {
                total[f] += f32::from(*len);
            }
            for (term, counts) in doc.terms.terms.iter() {
                match postings.get_mut(term) {
                    Some(list) => list.push((i, *counts)),
                    None => {
                        postings.insert(term.clone(), vec![(i, *counts)]);
                    }
                }
            }
        }
        let n = docs.len().max(1) as f32;
        SearchIndex {
            avg: total.map(|t| (t / n).max(1.0)),
            docs,
            postings,
            order,
        }
    }

    /// How many skills it holds.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// Whether it holds no skill.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// Heap bytes held beyond the records themselves: terms, postings, the table.
    pub fn heap_bytes(&self) -> usize {
        let docs = self.docs.capacity() * std::mem::size_of::<Doc>()
            + self
                .docs
                .iter()
                .map(|d| d.terms.heap_bytes() + std::mem::size_of::<DocTerms>())
                .sum::<usize>();
        let postings = self.postings.capacity()
            * (std::mem::size_of::<(Box<str>, Vec<(u32, [u8; 4])>)>() + 1)
            + self
                .postings
                .iter()
                .map(|(t, l)| t.len() + l.capacity() * std::mem::size_of::<(u32, [u8; 4])>())
                .sum::<usize>();
        docs + postings
    }

    /// The skills `keep` admits that match `query`, best first (ties by precedence). Empty
    /// when the query has no searchable word.
    pub fn search(&self, query: &str, keep: impl Fn(&SkillRecord) -> bool) -> Vec<SearchHit> {
        let stemmer = stemmer();
        let mut words: Vec<String> = terms(&stemmer, query).collect();
        words.sort_unstable();
        words.dedup();
        let n = self.docs.len() as f32;
        let mut scores: HashMap<u32, (f32, u8)> = HashMap::new();
        for word in &words {
            let Some(list) = self.postings.get(word.as_str()) else {
                continue;
            };
            let df = list.len() as f32;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for (doc, counts) in list {
                let lens = &self.docs[*doc as usize].terms.lens;
                let mut tf = 0.0;
                let mut fields = 0u8;
                for f in 0..4 {
                    if counts[f] == 0 {
                        continue;
                    }
                    fields |= 1 << f;
                    let norm = 1.0 - B + B * f32::from(lens[f]) / self.avg[f];
                    tf += FIELD_WEIGHTS[f] * f32::from(counts[f]) / norm;
                }
                let entry = scores.entry(*doc).or_default();
                entry.0 += idf * tf / (K1 + tf);
                entry.1 |= fields;
            }
        }
        let rank = |l: Layer| self.order.iter().position(|o| *o == l).unwrap_or(4);
        let mut hits: Vec<SearchHit> = scores
            .into_iter()
            .map(|(doc, (score, fields))| (&self.docs[doc as usize].record, score, fields))
            .filter(|(r, _, _)| keep(r))
            .map(|(r, score, fields)| SearchHit {
                record: Arc::clone(r),
                score,
                matched: SearchField::ALL
                    .iter()
                    .enumerate()
                    .filter(|(f, _)| fields & (1 << f) != 0)
                    .map(|(_, field)| *field)
                    .collect(),
            })
            .collect();
        hits.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| rank(a.record.layer).cmp(&rank(b.record.layer)))
                .then_with(|| b.record.frontmatter.priority.cmp(&a.record.frontmatter.priority))
                .then_with(|| a.record.name.as_str().cmp(b.record.name.as_str()))
        });
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inflections_share_a_stem_and_function_words_drop() {
        let s = stemmer();
        let t: Vec<String> = terms(&s, "Documentations for the PDF-forms").collect();
        let u: Vec<String> = terms(&s, "documentation pdf form").collect();
        assert_eq!(t, u);
    }
}
