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

use std::sync::Arc;

use rayon::prelude::*;
use rust_stemmers::{Algorithm, Stemmer};
use rustc_hash::FxHashMap;
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
    /// Its name on the wire: `name`, `description`, `when_to_use`, `tags`.
    pub fn as_str(self) -> &'static str {
        match self {
            SearchField::Name => "name",
            SearchField::Description => "description",
            SearchField::WhenToUse => "when_to_use",
            SearchField::Tags => "tags",
        }
    }

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
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "how", "i", "in", "is", "it",
    "me", "my", "of", "on", "or", "that", "the", "this", "to", "use", "used", "using", "want",
    "what", "when", "with", "you", "your",
];

/// Splits `text` into stemmed terms, with the same rules for documents and queries.
fn terms<'t>(stemmer: &'t Stemmer, text: &'t str) -> impl Iterator<Item = String> + 't {
    words(text)
        .map(str::to_lowercase)
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
        .map(|w| stemmer.stem(&w).into_owned())
}

/// The words of `text`: runs of letters and digits.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
}

/// [`words`], by bytes when `text` is ASCII (the common case, and several times faster).
fn each_word(text: &str, mut f: impl FnMut(&str)) {
    if !text.is_ascii() {
        words(text).for_each(f);
        return;
    }
    let bytes = text.as_bytes();
    let mut start = None;
    for (i, b) in bytes.iter().enumerate() {
        match (b.is_ascii_alphanumeric(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                f(&text[s..i]);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        f(&text[s..]);
    }
}

fn stemmer() -> Stemmer {
    Stemmer::create(Algorithm::English)
}

/// What one builder thread keeps between documents: the stemmer, each word seen with the
/// id of its stem (`None` for a stop word), the stems, and a scratch list.
struct Tokenizer {
    stemmer: Stemmer,
    seen: FxHashMap<Box<str>, Option<u32>>,
    stems: Vec<Box<str>>,
    lower: String,
    /// This document's distinct stems with their counts, in first-seen order.
    scratch: Vec<(u32, [u8; 4])>,
    /// Per stem id: the document that last saw it (`doc_no`), and its place in `scratch`.
    seen_in: Vec<(u32, u32)>,
    doc_no: u32,
}

impl Tokenizer {
    fn new() -> Tokenizer {
        Tokenizer {
            stemmer: stemmer(),
            seen: FxHashMap::default(),
            stems: Vec::new(),
            lower: String::new(),
            scratch: Vec::new(),
            seen_in: Vec::new(),
            doc_no: 0,
        }
    }

    /// The id of `word`'s stem, or `None` for a stop word; each word is stemmed once.
    fn stem_id(&mut self, word: &str) -> Option<u32> {
        // Most words are already lowercase ASCII: look them up as they are.
        if word
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        {
            if let Some(id) = self.seen.get(word) {
                return *id;
            }
        }
        self.lower.clear();
        if word.is_ascii() {
            self.lower.push_str(word);
            self.lower.make_ascii_lowercase();
        } else {
            self.lower.push_str(&word.to_lowercase());
        }
        if let Some(id) = self.seen.get(self.lower.as_str()) {
            return *id;
        }
        let id = if STOP_WORDS.contains(&self.lower.as_str()) {
            None
        } else {
            let stem = self.stemmer.stem(&self.lower).into_owned().into_boxed_str();
            let id = u32::try_from(self.stems.len()).unwrap_or(u32::MAX);
            self.stems.push(stem);
            Some(id)
        };
        self.seen.insert(self.lower.as_str().into(), id);
        id
    }

    /// A record's terms.
    fn doc(&mut self, record: &SkillRecord) -> DocTerms {
        let fm = &record.frontmatter;
        let texts: [&str; 3] = [
            record.name.as_str(),
            &record.description,
            fm.when_to_use.as_deref().unwrap_or(""),
        ];
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        self.doc_no = self.doc_no.wrapping_add(1);
        let doc_no = self.doc_no;
        let mut lens = [0u16; 4];
        let fields = texts
            .iter()
            .enumerate()
            .map(|(f, t)| (f, *t))
            .chain(fm.tags.iter().map(|t| (3, t.as_str())));
        for (f, text) in fields {
            each_word(text, |word| {
                let Some(id) = self.stem_id(word) else {
                    return;
                };
                lens[f] = lens[f].saturating_add(1);
                let i = id as usize;
                if self.seen_in.len() <= i {
                    self.seen_in.resize(i + 1, (0, 0));
                }
                // Distinct stems without sorting: each stem's slot in this document.
                let (last, slot) = &mut self.seen_in[i];
                if *last != doc_no {
                    *last = doc_no;
                    *slot = u32::try_from(scratch.len()).unwrap_or(u32::MAX);
                    scratch.push((id, [0; 4]));
                }
                let c = &mut scratch[*slot as usize].1[f];
                *c = c.saturating_add(1);
            });
        }
        // Exact capacities: the boxes below then take the buffers without reallocating.
        let bytes = scratch
            .iter()
            .map(|(id, _)| self.stems[*id as usize].len())
            .sum();
        let mut text = String::with_capacity(bytes);
        let mut table: Vec<(u32, u16, [u8; 4])> = Vec::with_capacity(scratch.len());
        for (id, counts) in &scratch {
            let stem = &self.stems[*id as usize];
            let start = u32::try_from(text.len()).unwrap_or(u32::MAX);
            text.push_str(stem);
            table.push((
                start,
                u16::try_from(stem.len()).unwrap_or(u16::MAX),
                *counts,
            ));
        }
        self.scratch = scratch;
        DocTerms {
            text: text.into_boxed_str(),
            table: table.into_boxed_slice(),
            lens,
        }
    }
}

/// One skill's terms: each distinct stem (one string holds them all, in no particular
/// order) with its count per field, and each field's length in terms. Kept per record and shared between snapshots
/// while the record is unchanged.
#[derive(Debug)]
struct DocTerms {
    text: Box<str>,
    /// (start in `text`, length, count per field).
    table: Box<[(u32, u16, [u8; 4])]>,
    lens: [u16; 4],
}

impl DocTerms {
    fn terms(&self) -> impl Iterator<Item = (&str, [u8; 4])> {
        self.table.iter().map(|(start, len, counts)| {
            let start = *start as usize;
            (&self.text[start..start + *len as usize], *counts)
        })
    }

    /// Heap bytes this document holds.
    fn heap_bytes(&self) -> usize {
        self.text.len() + self.table.len() * std::mem::size_of::<(u32, u16, [u8; 4])>()
    }
}

/// Term → (document, count per field), documents in order.
type Postings = FxHashMap<Box<str>, Vec<(u32, [u8; 4])>>;

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
    postings: Postings,
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
        // Keyed by the record's address: the same `Arc` is the same record.
        let reuse: FxHashMap<usize, &Arc<DocTerms>> = previous
            .map(|p| {
                p.docs
                    .iter()
                    .map(|d| (Arc::as_ptr(&d.record) as usize, &d.terms))
                    .collect()
            })
            .unwrap_or_default();
        let records: Vec<&Arc<SkillRecord>> = records.collect();
        // A few large chunks, one tokenizer each: its stem cache pays off across a chunk.
        let chunk = records
            .len()
            .div_ceil(rayon::current_num_threads() * 4)
            .max(64);
        // Each chunk tokenizes its records (one tokenizer: its stem cache pays off across
        // the chunk) and gathers its own postings; the partial postings are merged after.
        let parts: Vec<(Vec<Doc>, Postings, [f32; 4])> = records
            .par_chunks(chunk)
            .enumerate()
            .map(|(c, records)| {
                let mut tokenizer = Tokenizer::new();
                let mut postings = Postings::default();
                let mut total = [0f32; 4];
                let base = c * chunk;
                let docs: Vec<Doc> = records
                    .iter()
                    .enumerate()
                    .map(|(i, r)| {
                        let terms = reuse
                            .get(&(Arc::as_ptr(*r) as usize))
                            .map_or_else(|| Arc::new(tokenizer.doc(r)), |t| Arc::clone(t));
                        let doc = u32::try_from(base + i).unwrap_or(u32::MAX);
                        for (f, len) in terms.lens.iter().enumerate() {
                            total[f] += f32::from(*len);
                        }
                        for (term, counts) in terms.terms() {
                            match postings.get_mut(term) {
                                Some(list) => list.push((doc, counts)),
                                None => {
                                    postings.insert(term.into(), vec![(doc, counts)]);
                                }
                            }
                        }
                        Doc {
                            record: Arc::clone(r),
                            terms,
                        }
                    })
                    .collect();
                (docs, postings, total)
            })
            .collect();
        let mut docs = Vec::with_capacity(records.len());
        let mut postings = Postings::default();
        let mut total = [0f32; 4];
        // In chunk order, so every list stays sorted by document.
        for (part_docs, part, part_total) in parts {
            docs.extend(part_docs);
            for f in 0..4 {
                total[f] += part_total[f];
            }
            if postings.is_empty() {
                postings = part;
                continue;
            }
            for (term, list) in part {
                match postings.get_mut(&term) {
                    Some(all) => all.extend(list),
                    None => {
                        postings.insert(term, list);
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

    /// The skills `keep` admits that match `query`: the best `limit` of them, best first
    /// (ties by precedence), and how many matched in all. Nothing matches a query with no
    /// searchable word.
    pub fn search(
        &self,
        query: &str,
        limit: usize,
        keep: impl Fn(&SkillRecord) -> bool,
    ) -> SearchOutcome {
        let stemmer = stemmer();
        let mut words: Vec<String> = terms(&stemmer, query).collect();
        words.sort_unstable();
        words.dedup();
        let n = self.docs.len() as f32;
        // Dense per-document accumulators, and the documents touched, in first-touch order.
        let mut scores = vec![0f32; self.docs.len()];
        let mut fields = vec![0u8; self.docs.len()];
        let mut touched: Vec<u32> = Vec::new();
        for word in &words {
            let Some(list) = self.postings.get(word.as_str()) else {
                continue;
            };
            let df = list.len() as f32;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for (doc, counts) in list {
                let d = *doc as usize;
                let lens = &self.docs[d].terms.lens;
                let mut tf = 0.0;
                let mut mask = 0u8;
                for f in 0..4 {
                    if counts[f] == 0 {
                        continue;
                    }
                    mask |= 1 << f;
                    let norm = 1.0 - B + B * f32::from(lens[f]) / self.avg[f];
                    tf += FIELD_WEIGHTS[f] * f32::from(counts[f]) / norm;
                }
                if fields[d] == 0 {
                    touched.push(*doc);
                }
                scores[d] += idf * tf / (K1 + tf);
                fields[d] |= mask;
            }
        }
        let mut found: Vec<u32> = touched
            .into_iter()
            .filter(|d| keep(&self.docs[*d as usize].record))
            .collect();
        let total = found.len();
        let rank = |l: Layer| self.order.iter().position(|o| *o == l).unwrap_or(4);
        let order = |a: &u32, b: &u32| {
            let (ra, rb) = (
                &self.docs[*a as usize].record,
                &self.docs[*b as usize].record,
            );
            scores[*b as usize]
                .total_cmp(&scores[*a as usize])
                .then_with(|| rank(ra.layer).cmp(&rank(rb.layer)))
                .then_with(|| rb.frontmatter.priority.cmp(&ra.frontmatter.priority))
                .then_with(|| ra.name.as_str().cmp(rb.name.as_str()))
        };
        if found.len() > limit && limit > 0 {
            found.select_nth_unstable_by(limit - 1, order);
        }
        found.truncate(limit);
        found.sort_by(order);
        let hits = found
            .into_iter()
            .map(|d| SearchHit {
                record: Arc::clone(&self.docs[d as usize].record),
                score: scores[d as usize],
                matched: SearchField::ALL
                    .iter()
                    .enumerate()
                    .filter(|(f, _)| fields[d as usize] & (1 << f) != 0)
                    .map(|(_, field)| *field)
                    .collect(),
            })
            .collect();
        SearchOutcome { hits, total }
    }
}

/// The answer to a query: the best matches and how many matched in all.
#[derive(Debug, Clone)]
pub struct SearchOutcome {
    /// The best matches, best first, at most the limit asked for.
    pub hits: Vec<SearchHit>,
    /// How many skills matched (that the filter kept), before the limit.
    pub total: usize,
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
