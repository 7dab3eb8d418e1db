//! Search over a snapshot's skills (`skills_search`): lexical relevance with field weights,
//! English stemming, ties to precedence.
//!
//! Each resolved skill is a document of four fields: its name (split at hyphens and other
//! separators), description, `when_to_use` and tags. Words are lowercased, split at every
//! character that is not a letter or digit, stripped of a few English function words and
//! stemmed (Snowball's English stemmer, so "documentations" finds "documentation"); a word
//! with a digit in it (a number, version or code) is its own term.
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
use serde::Serialize;
use skills_model::{Layer, SkillRecord};

/// A per-word map of the search (see [`WordState`]).
type WordMap<K, V> = std::collections::HashMap<K, V, WordState>;

/// The hash of the search's per-word maps: foldhash, several times faster than SipHash on
/// short words (a build looks up every word of every skill), seeded from the system's
/// random source through the standard library's `RandomState`, so a skill folder cannot
/// pick words that collide. foldhash calls itself only minimally resistant to such
/// attacks; the index's maps with path and name keys use SipHash.
#[derive(Debug, Clone)]
struct WordState(foldhash::fast::SeedableRandomState);

impl Default for WordState {
    fn default() -> WordState {
        use std::hash::BuildHasher;
        static SHARED: std::sync::OnceLock<foldhash::SharedSeed> = std::sync::OnceLock::new();
        let random = || std::hash::RandomState::new().hash_one(0x5eed_u64);
        let shared = SHARED.get_or_init(|| foldhash::SharedSeed::from_u64(random()));
        WordState(foldhash::fast::SeedableRandomState::with_seed(
            random(),
            shared,
        ))
    }
}

impl std::hash::BuildHasher for WordState {
    type Hasher = foldhash::fast::FoldHasher<'static>;

    fn build_hasher(&self) -> Self::Hasher {
        self.0.build_hasher()
    }
}

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
    words(text).filter_map(|w| term(stemmer, &w.to_lowercase()).map(|t| t.into_owned()))
}

/// The term a lowercased word stands for: `None` for a stop word; a word with a digit in it
/// (a number, version or code: "01522", "v2", "mp3") as it is; any other word stemmed.
fn term<'w>(stemmer: &Stemmer, lower: &'w str) -> Option<std::borrow::Cow<'w, str>> {
    if STOP_WORDS.contains(&lower) {
        None
    } else if lower.bytes().any(|b| b.is_ascii_digit()) {
        Some(std::borrow::Cow::Borrowed(lower))
    } else {
        Some(stemmer.stem(lower))
    }
}

/// The words of `text`: runs of letters and digits.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
}

/// Eight bytes of `bytes` from `at`, little-endian, zero-padded past the end (a zero byte
/// is no letter or digit).
fn load8(bytes: &[u8], at: usize) -> u64 {
    match bytes.get(at..at + 8) {
        Some(s) => {
            let mut b = [0u8; 8];
            b.copy_from_slice(s);
            u64::from_le_bytes(b)
        }
        None => {
            let mut b = [0u8; 8];
            let rest = bytes.get(at..).unwrap_or(&[]);
            b[..rest.len()].copy_from_slice(rest);
            u64::from_le_bytes(b)
        }
    }
}

/// Eight ASCII bytes at once (SWAR): the high bit of each byte that is a letter or digit,
/// and the bytes with their letters lowercased. Every byte is below 0x80, so no lane's
/// sum or difference below carries into the next.
fn classify8(x: u64) -> (u64, u64) {
    const L: u64 = 0x0101_0101_0101_0101;
    const H: u64 = 0x8080_8080_8080_8080;
    let folded = x | (0x20 * L);
    let letter = (folded + 0x1f * L) & ((0xfa * L) - folded) & H; // 'a'..='z'
    let digit = (x + 0x50 * L) & ((0xb9 * L) - x) & H; // '0'..='9'
    (letter | digit, x | (letter >> 2))
}

/// How many of the eight bytes `alnum` describes, from the first, are letters or digits.
fn run8(alnum: u64) -> usize {
    ((!alnum & 0x8080_8080_8080_8080).trailing_zeros() / 8) as usize
}

/// [`words`], each with its [`pack`]ed form; eight bytes at a time when `text` is ASCII
/// (the common case, and several times faster), lowercasing and packing in the same pass.
fn each_word(text: &str, mut f: impl FnMut(&str, Option<u128>)) {
    if !text.is_ascii() {
        words(text).for_each(|w| f(w, pack(w)));
        return;
    }
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let (alnum, lower0) = classify8(load8(bytes, i));
        if alnum == 0 {
            i += 8;
            continue;
        }
        let skip = (alnum.trailing_zeros() / 8) as usize;
        let (lower0, len0) = if skip == 0 {
            (lower0, run8(alnum))
        } else {
            i += skip;
            let (alnum, lower) = classify8(load8(bytes, i));
            (lower, run8(alnum))
        };
        let mask = |len: usize| u64::MAX.checked_shr(64 - 8 * len as u32).unwrap_or(0);
        let (len, packed) = if len0 < 8 {
            (len0, Some(u128::from(lower0 & mask(len0))))
        } else {
            let (alnum1, lower1) = classify8(load8(bytes, i + 8));
            let len1 = run8(alnum1);
            if len1 < 8 {
                let high = u128::from(lower1 & mask(len1)) << 64;
                (8 + len1, Some(high | u128::from(lower0)))
            } else {
                let mut end = i + 16;
                while bytes.get(end).is_some_and(u8::is_ascii_alphanumeric) {
                    end += 1;
                }
                let packed = (end == i + 16).then(|| u128::from(lower1) << 64 | u128::from(lower0));
                (end - i, packed)
            }
        };
        f(&text[i..i + len], packed);
        i += len;
    }
}

/// An ASCII word of at most 16 bytes, lowercased, as one number (its bytes, little-endian,
/// zero-padded: no word holds a zero byte, so two words never pack alike).
fn pack(word: &str) -> Option<u128> {
    let bytes = word.as_bytes();
    if bytes.len() > 16 || !word.is_ascii() {
        return None;
    }
    let mut buf = [0u8; 16];
    buf[..bytes.len()].copy_from_slice(bytes);
    buf.make_ascii_lowercase();
    Some(u128::from_le_bytes(buf))
}

fn stemmer() -> Stemmer {
    Stemmer::create(Algorithm::English)
}

/// (document, count per field) of one stem in one part, documents in order.
type List = Vec<(u32, [u8; 4])>;

/// The postings of one build chunk's documents: its stems by id, and each id's list. A
/// query looks its terms up in every part, in order, so no list is ever merged or copied.
#[derive(Debug)]
struct Part {
    ids: WordMap<Box<str>, u32>,
    lists: Vec<List>,
}

impl Part {
    /// This part's list for `stem`, if any of its documents holds it.
    fn list(&self, stem: &str) -> Option<&List> {
        self.ids
            .get(stem)
            .and_then(|id| self.lists.get(*id as usize))
    }
}

/// What one builder chunk keeps between documents: the stemmer, each word seen with the
/// id of its stem (`None` for a stop word), each stem once with its id, this chunk's
/// postings by stem id (no string is hashed per posting), and scratch space.
struct Tokenizer {
    stemmer: Stemmer,
    seen: WordMap<Box<str>, Option<u32>>,
    /// [`seen`](Self::seen) for words that [`pack`] into a `u128`.
    short: WordMap<u128, Option<u32>>,
    /// Stem → id, so two words with one stem ("skill", "skills") are one term.
    ids: WordMap<Box<str>, u32>,
    /// Every stem's text, one after another, and each stem's span in it, by id.
    stem_text: String,
    stems: Vec<(u32, u32)>,
    /// Per stem id: (document, count per field), documents in order.
    postings: Vec<List>,
    lower: String,
    /// This document's distinct stems with their counts, in first-seen order.
    scratch: Vec<(u32, [u8; 4])>,
    /// Per stem id: the document that last saw it (`doc_no`), and its place in `scratch`.
    seen_in: Vec<(u32, u32)>,
    doc_no: u32,
    /// The encoding of the document being written.
    bytes: Vec<u8>,
}

impl Tokenizer {
    fn new() -> Tokenizer {
        Tokenizer {
            stemmer: stemmer(),
            seen: WordMap::default(),
            short: WordMap::default(),
            ids: WordMap::default(),
            stem_text: String::new(),
            stems: Vec::new(),
            postings: Vec::new(),
            lower: String::new(),
            scratch: Vec::new(),
            seen_in: Vec::new(),
            doc_no: 0,
            bytes: Vec::new(),
        }
    }

    /// The id of `stem`, given one if it is new.
    fn id_of_stem(&mut self, stem: &str) -> u32 {
        if let Some(id) = self.ids.get(stem) {
            return *id;
        }
        let id = u32::try_from(self.stems.len()).unwrap_or(u32::MAX);
        let start = u32::try_from(self.stem_text.len()).unwrap_or(u32::MAX);
        self.stem_text.push_str(stem);
        self.stems
            .push((start, u32::try_from(stem.len()).unwrap_or(u32::MAX)));
        self.ids.insert(stem.into(), id);
        self.postings.push(Vec::new());
        id
    }

    /// A stem's text.
    fn stem(&self, id: u32) -> &str {
        let (start, len) = self.stems[id as usize];
        &self.stem_text[start as usize..(start + len) as usize]
    }

    /// The id of `word`'s stem, or `None` for a stop word; each word is stemmed once.
    fn stem_id(&mut self, word: &str, packed: Option<u128>) -> Option<u32> {
        // Short ASCII words (nearly all of them) are looked up by value: lowercased and
        // packed into a `u128`, so a lookup neither copies nor follows a pointer.
        if let Some(key) = packed {
            if let Some(id) = self.short.get(&key) {
                return *id;
            }
        } else if word
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        {
            if let Some(id) = self.seen.get(word) {
                return *id;
            }
        }
        let mut lower = std::mem::take(&mut self.lower);
        lower.clear();
        if word.is_ascii() {
            lower.push_str(word);
            lower.make_ascii_lowercase();
        } else {
            lower.push_str(&word.to_lowercase());
        }
        let known = match packed {
            Some(_) => None,
            None => self.seen.get(lower.as_str()).copied(),
        };
        let id = match known {
            Some(id) => id,
            None => {
                let id = term(&self.stemmer, &lower).map(|stem| self.id_of_stem(&stem));
                match packed {
                    Some(key) => {
                        self.short.insert(key, id);
                    }
                    None => {
                        self.seen.insert(lower.as_str().into(), id);
                    }
                }
                id
            }
        };
        self.lower = lower;
        id
    }

    /// This chunk's postings; its caches and scratch space go.
    fn into_part(self) -> Part {
        Part {
            ids: self.ids,
            lists: self.postings,
        }
    }

    /// Adds `doc`'s postings under this chunk's stem ids.
    fn post(&mut self, doc: u32, terms: &DocTerms) {
        for (term, counts) in terms.terms() {
            let id = self.id_of_stem(term) as usize;
            self.postings[id].push((doc, counts));
        }
    }

    /// Reads a record's terms and adds its postings.
    fn doc(&mut self, doc: u32, record: &SkillRecord) -> DocTerms {
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
            each_word(text, |word, packed| {
                let Some(id) = self.stem_id(word, packed) else {
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
        let mut bytes = std::mem::take(&mut self.bytes);
        bytes.clear();
        for len in lens {
            bytes.extend_from_slice(&len.to_le_bytes());
        }
        for (id, counts) in &scratch {
            self.postings[*id as usize].push((doc, *counts));
            let stem = self.stem(*id).as_bytes();
            // A stem longer than 64 KiB is no word anyone searches for.
            let Ok(len) = u16::try_from(stem.len()) else {
                continue;
            };
            bytes.extend_from_slice(counts);
            bytes.extend_from_slice(&len.to_le_bytes());
            bytes.extend_from_slice(stem);
        }
        self.scratch = scratch;
        // One allocation per document: the encoding, copied once into its `Arc`.
        let terms = DocTerms {
            bytes: Arc::from(bytes.as_slice()),
        };
        self.bytes = bytes;
        terms
    }
}

/// One skill's terms, kept per record and shared between snapshots while the record is
/// unchanged, in one allocation: each field's length in terms (4 × u16), then per distinct
/// stem its count per field (4 × u8), its length (u16) and its bytes. All little-endian.
#[derive(Debug, Clone)]
struct DocTerms {
    bytes: Arc<[u8]>,
}

impl DocTerms {
    /// Each field's length in terms.
    fn lens(&self) -> [u16; 4] {
        let b = &self.bytes;
        std::array::from_fn(|f| u16::from_le_bytes([b[2 * f], b[2 * f + 1]]))
    }

    /// Each distinct stem with its count per field.
    fn terms(&self) -> impl Iterator<Item = (&str, [u8; 4])> {
        let b = &self.bytes;
        let mut at = 8;
        std::iter::from_fn(move || {
            let head = b.get(at..at + 6)?;
            let counts = [head[0], head[1], head[2], head[3]];
            let len = usize::from(u16::from_le_bytes([head[4], head[5]]));
            let text = b.get(at + 6..at + 6 + len)?;
            at += 6 + len;
            // Written from a `str` above: never fails.
            Some((std::str::from_utf8(text).unwrap_or(""), counts))
        })
    }

    /// Heap bytes this document holds (with the `Arc`'s two counts).
    fn heap_bytes(&self) -> usize {
        self.bytes.len() + 2 * std::mem::size_of::<usize>()
    }
}

/// A document of the index: the record, its terms and its field lengths.
#[derive(Debug)]
struct Doc {
    record: Arc<SkillRecord>,
    terms: DocTerms,
    lens: [u16; 4],
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
    /// Per build chunk, in document order: term → (document, count per field).
    parts: Vec<Part>,
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
        let reuse: WordMap<usize, &DocTerms> = previous
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
            .div_ceil(rayon::current_num_threads() * 2)
            .max(256);
        // Each chunk tokenizes its records and keeps postings by its own stem ids: the
        // chunks' postings are the index's parts, never merged.
        let parts: Vec<(Vec<Doc>, Tokenizer, [f32; 4])> = records
            .par_chunks(chunk)
            .enumerate()
            .map(|(c, records)| {
                let mut tokenizer = Tokenizer::new();
                let mut total = [0f32; 4];
                let base = c * chunk;
                let docs: Vec<Doc> = records
                    .iter()
                    .enumerate()
                    .map(|(i, r)| {
                        let doc = u32::try_from(base + i).unwrap_or(u32::MAX);
                        let terms = match reuse.get(&(Arc::as_ptr(*r) as usize)) {
                            Some(terms) => {
                                tokenizer.post(doc, terms);
                                (*terms).clone()
                            }
                            None => tokenizer.doc(doc, r),
                        };
                        let lens = terms.lens();
                        for (f, len) in lens.iter().enumerate() {
                            total[f] += f32::from(*len);
                        }
                        Doc {
                            record: Arc::clone(r),
                            terms,
                            lens,
                        }
                    })
                    .collect();
                (docs, tokenizer, total)
            })
            .collect();
        let mut docs = Vec::with_capacity(records.len());
        let mut parts_out = Vec::with_capacity(parts.len());
        let mut total = [0f32; 4];
        // In chunk order, so documents keep their numbers.
        for (part_docs, tokenizer, part_total) in parts {
            docs.extend(part_docs);
            for f in 0..4 {
                total[f] += part_total[f];
            }
            parts_out.push(tokenizer.into_part());
        }
        let n = docs.len().max(1) as f32;
        SearchIndex {
            avg: total.map(|t| (t / n).max(1.0)),
            docs,
            parts: parts_out,
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
                .map(|d| d.terms.heap_bytes())
                .sum::<usize>();
        let postings = self
            .parts
            .iter()
            .map(|p| {
                p.ids.capacity() * (std::mem::size_of::<(Box<str>, u32)>() + 1)
                    + p.ids.keys().map(|t| t.len()).sum::<usize>()
                    + p.lists.capacity() * std::mem::size_of::<List>()
                    + p.lists
                        .iter()
                        .map(|l| l.capacity() * std::mem::size_of::<(u32, [u8; 4])>())
                        .sum::<usize>()
            })
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
            let lists: Vec<&List> = self.parts.iter().filter_map(|p| p.list(word)).collect();
            let df = lists.iter().map(|l| l.len()).sum::<usize>() as f32;
            if lists.is_empty() {
                continue;
            }
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for (doc, counts) in lists.into_iter().flatten() {
                let d = *doc as usize;
                let lens = &self.docs[d].lens;
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

    #[test]
    fn words_with_digits_are_their_own_terms() {
        let s = stemmer();
        let t: Vec<String> = terms(&s, "MP3s, v2 and 01522 reports").collect();
        assert_eq!(t, ["mp3s", "v2", "01522", "report"]);
    }

    #[test]
    fn packed_words_differ_when_the_words_do() {
        assert_eq!(pack("Report"), pack("report"));
        assert_ne!(pack("report"), pack("reports"));
        assert_ne!(pack("a1"), pack("a10"));
        assert_eq!(pack("seventeen-letters"), None);
        assert_eq!(pack("ümlaut"), None);
    }

    proptest::proptest! {
        /// The eight-bytes-at-a-time scan finds the words `words` finds, packed as `pack`
        /// packs them (`None` past 16 bytes).
        #[test]
        fn each_word_is_words_packed(text in "[ -~]{0,80}|[a-zA-Z0-9 ,.-]{0,80}") {
            let mut got = Vec::new();
            each_word(&text, |w, p| got.push((w.to_owned(), p)));
            let want: Vec<(String, Option<u128>)> =
                words(&text).map(|w| (w.to_owned(), pack(w))).collect();
            proptest::prop_assert_eq!(got, want);
        }
    }
}
