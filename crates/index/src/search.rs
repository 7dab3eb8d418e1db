//! Search over a snapshot's skills (`skills_search`): lexical relevance with field weights,
//! English stemming, ties to precedence.
//!
//! Each record (shadowed ones too, for readers to whom a name's winner is hidden) is a
//! document of four fields: its name (split at hyphens and other
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
//! the next one before the snapshot is swapped in, so a skill is findable as soon as it is
//! listed and readers never wait. The next one shares the previous one's postings (parts)
//! and reads only the records that are new: a record that left is marked removed, and a
//! query passes over it; once removed documents would be more than a quarter of all, or
//! the parts pile up ([`MAX_ADDED_PARTS`]), the next index is built afresh. Scores never
//! depend on how an index came to be: document counts, frequencies and average lengths
//! are over the live documents only
//! (`an_index_that_followed_changes_scores_as_a_fresh_one`).
//!
//! Nor do they depend on skills the caller may not see. A search for an [`Audience`]
//! counts only the documents that audience sees: a skill of another tenant that holds a
//! query's word changes neither the score nor the order of what a session is shown, so a
//! score says nothing of what is hidden
//! (`a_hidden_skill_moves_no_score_of_a_search`). What an audience sees is worked out
//! once per index and kept ([`AudienceMemo`]); when it sees everything, the index's own
//! statistics serve.

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

/// Eight bytes of `bytes` from `at`, little-endian (zero past the end: [`each_word`]
/// reads a copy followed by [`PAD`] zero bytes, so no read is cut short).
#[cfg(any(test, not(target_arch = "x86_64")))]
fn load8(bytes: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    if let Some(s) = bytes.get(at..at + 8) {
        b.copy_from_slice(s);
    }
    u64::from_le_bytes(b)
}

/// Zero bytes after a text's copy in [`each_word`]: a 64-byte block from any place before
/// its end, and 16 bytes from any word's start in that block.
const PAD: usize = 64 + 16;

/// The first `len` bytes of a little-endian `u128`, for `len` up to 16.
const KEEP: [u128; 17] = {
    let mut keep = [0u128; 17];
    let mut len = 1;
    while len <= 16 {
        keep[len] = u128::MAX >> (128 - 8 * len);
        len += 1;
    }
    keep
};

/// One in each byte of a `u64`, and each byte's high bit, for the SWAR tests below.
const LANES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The high bit of each of eight ASCII bytes (SWAR) that is a digit ('0'..='9'). Every
/// byte is below 0x80, so no lane's sum or difference carries into the next, and a zero
/// byte is no digit.
fn digits8(x: u64) -> u64 {
    (x + 0x50 * LANES) & ((0xb9 * LANES) - x) & HIGHS
}

/// Which of eight ASCII bytes (SWAR, as [`digits8`]) are letters or digits: bit `i` for
/// byte `i`; the high bits are gathered into one byte by a multiplication (each lands on
/// its own bit). Where there is no SSE2, and in the tests that hold [`alnum16`] to it.
#[cfg(any(test, not(target_arch = "x86_64")))]
fn alnum8(x: u64) -> u64 {
    let folded = x | (0x20 * LANES);
    let letter = (folded + 0x1f * LANES) & ((0xfa * LANES) - folded) & HIGHS; // 'a'..='z'
    let high = letter | digits8(x);
    (high >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56
}

/// Which of the 64 bytes of `bytes` from `at` are letters or digits: bit `i` for byte
/// `at + i` (none past the end). The bytes must be ASCII.
#[inline(always)]
fn alnum64(bytes: &[u8], at: usize) -> u64 {
    #[cfg(target_arch = "x86_64")]
    let m = (0..4).fold(0, |m, k| m | alnum16(bytes, at + 16 * k) << (16 * k));
    #[cfg(not(target_arch = "x86_64"))]
    let m = (0..8).fold(0, |m, k| m | alnum8(load8(bytes, at + 8 * k)) << (8 * k));
    m
}

/// [`alnum8`] for sixteen bytes at once (SSE2, part of every x86-64 processor): about a
/// fifth of the instructions of two [`alnum8`]s, and the scan's mask was a fifth of a
/// search build's. The bytes are ASCII, so signed comparisons order them as unsigned.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn alnum16(bytes: &[u8], at: usize) -> u64 {
    use safe_arch::{
        bitand_m128i, bitor_m128i, cmp_gt_mask_i8_m128i, cmp_lt_mask_i8_m128i,
        load_unaligned_m128i, move_mask_i8_m128i, set_splat_i8_m128i,
    };
    let Some(chunk) = bytes
        .get(at..at + 16)
        .and_then(|s| <&[u8; 16]>::try_from(s).ok())
    else {
        return 0;
    };
    let x = load_unaligned_m128i(chunk);
    let within = |x, low: i8, high: i8| {
        bitand_m128i(
            cmp_gt_mask_i8_m128i(x, set_splat_i8_m128i(low - 1)),
            cmp_lt_mask_i8_m128i(x, set_splat_i8_m128i(high + 1)),
        )
    };
    let digit = within(x, 0x30, 0x39); // '0'..='9'
    let letter = within(bitor_m128i(x, set_splat_i8_m128i(0x20)), 0x61, 0x7a); // 'a'..='z'
    u64::try_from(move_mask_i8_m128i(bitor_m128i(digit, letter))).unwrap_or(0)
}

/// A word of a text, found by [`each_word`].
#[derive(Clone, Copy)]
struct Word<'t> {
    text: &'t str,
    at: usize,
    len: usize,
    /// The word [`pack`]ed.
    packed: Option<u128>,
}

impl<'t> Word<'t> {
    /// The word's text (sliced only when asked for: most words are looked up packed).
    fn as_str(&self) -> &'t str {
        self.text
            .get(self.at..self.at + self.len)
            .unwrap_or_default()
    }
}

/// [`words`], each with its [`pack`]ed form. An ASCII text (the common case, several
/// times faster) is read from a copy padded with zero bytes (`padded`), 64 bytes at a
/// time: a bit for each byte that is a letter or digit, a word's edges where that bit
/// changes, and each short word packed from one load at its start (a letter or digit
/// lowercases by setting its 0x20 bit). Any other text goes word by word.
fn each_word<'t>(text: &'t str, padded: &mut Vec<u8>, mut f: impl FnMut(Word<'t>)) {
    if !text.is_ascii() {
        for w in words(text) {
            f(Word {
                text: w,
                at: 0,
                len: w.len(),
                packed: pack(w),
            });
        }
        return;
    }
    padded.clear();
    padded.extend_from_slice(text.as_bytes());
    padded.resize(text.len() + PAD, 0);
    let bytes = padded.as_slice();
    // Where a word running on from the last block began; whether that block's last byte
    // was a letter or digit.
    let mut open = None;
    let mut before = 0u64;
    let mut at = 0;
    while at < text.len() {
        let m = alnum64(bytes, at);
        let after = m << 1 | before;
        // Bits where a word starts, and where the byte after one is: they alternate, so
        // the n-th end after the first start is the n-th start's.
        let mut starts = m & !after;
        let mut ends = !m & after;
        before = m >> 63;
        if let Some(start) = open {
            if ends == 0 {
                at += 64;
                continue;
            }
            word_at(text, bytes, start..at + next_bit(&mut ends), &mut f);
            open = None;
        }
        while starts != 0 {
            let start = at + next_bit(&mut starts);
            if ends == 0 {
                open = Some(start);
                break;
            }
            word_at(text, bytes, start..at + next_bit(&mut ends), &mut f);
        }
        at += 64;
    }
    if let Some(start) = open {
        word_at(text, bytes, start..text.len(), &mut f);
    }
}

/// The place of the lowest bit set in `bits` (not 0), taken out of it.
#[inline(always)]
fn next_bit(bits: &mut u64) -> usize {
    let place = bits.trailing_zeros() as usize;
    *bits &= *bits - 1;
    place
}

/// Gives `f` the word of `text` at `at`, packed from `bytes` (its padded copy).
#[inline(always)]
fn word_at<'t>(
    text: &'t str,
    bytes: &[u8],
    at: std::ops::Range<usize>,
    f: &mut impl FnMut(Word<'t>),
) {
    let len = at.end - at.start;
    let sixteen = bytes
        .get(at.start..at.start + 16)
        .and_then(|s| <[u8; 16]>::try_from(s).ok());
    let packed = KEEP.get(len).zip(sixteen).map(|(keep, x)| {
        (u128::from_le_bytes(x) | 0x2020_2020_2020_2020_2020_2020_2020_2020) & keep
    });
    f(Word {
        text,
        at: at.start,
        len,
        packed,
    });
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

/// Whether a [`pack`]ed word holds a digit (eight bytes at a time, [`digits8`]).
fn has_digit(key: u128) -> bool {
    [key as u64, (key >> 64) as u64]
        .iter()
        .any(|&x| digits8(x) != 0)
}

/// The stem id a stop word is read as: a chunk's first id, given to no stem, so that a stop
/// word goes the way every word goes (through [`Tokenizer::seen_in`], with no branch whose
/// outcome no processor can guess) and its list stays empty.
const STOP: u32 = 0;

/// Slots of [`Tokenizer::recent`].
const RECENT: usize = 1024;

/// The slot of a packed word in [`Tokenizer::recent`]: its bytes folded and multiplied
/// (Fibonacci hashing), the top bits.
fn recent_slot(key: u128) -> usize {
    let folded = (key as u64) ^ ((key >> 64) as u64).rotate_left(29);
    (folded.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - RECENT.trailing_zeros())) as usize
}

fn stemmer() -> Stemmer {
    Stemmer::create(Algorithm::English)
}

/// Stems with their ids: those of at most 16 ASCII bytes (nearly all) [`pack`]ed, so
/// giving a stem an id allocates nothing and a lookup hashes one number; any other by text.
#[derive(Debug, Default)]
struct Stems {
    short: WordMap<u128, u32>,
    long: WordMap<Box<str>, u32>,
}

impl Stems {
    fn get(&self, stem: &str) -> Option<u32> {
        match pack(stem) {
            Some(key) => self.short.get(&key),
            None => self.long.get(stem),
        }
        .copied()
    }

    /// Heap bytes: each table's slots (with hashbrown's control byte) and the long stems.
    fn heap_bytes(&self) -> usize {
        self.short.capacity() * (std::mem::size_of::<(u128, u32)>() + 1)
            + self.long.capacity() * (std::mem::size_of::<(Box<str>, u32)>() + 1)
            + self.long.keys().map(|t| t.len()).sum::<usize>()
    }
}

/// (document, count per field) of one stem in one part, documents in order. Most stems are
/// in one or two documents (a name's number, a rare word): their lists are held in place,
/// in the 24 bytes a `Vec` takes for its pointer, capacity and length, and allocate
/// nothing.
type List = smallvec::SmallVec<[(u32, [u8; 4]); 2]>;

#[cfg(target_pointer_width = "64")]
const _: () = assert!(
    std::mem::size_of::<List>() == 24,
    "a list is as large as a Vec"
);

/// The postings of one build chunk's documents: its stems by id, and each id's list. A
/// query looks its terms up in every part, in order, so no list is ever merged or copied.
#[derive(Debug)]
struct Part {
    ids: Stems,
    lists: Vec<List>,
}

impl Part {
    /// This part's list for `stem`, if any of its documents holds it.
    fn list(&self, stem: &str) -> Option<&List> {
        self.ids
            .get(stem)
            .and_then(|id| self.lists.get(id as usize))
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
    /// The last packed word seen in each of [`RECENT`] slots (0 for none: no word packs to
    /// 0), and in [`recent_ids`](Self::recent_ids) its stem id: most words are common ones,
    /// found here without hashing. Any other word goes to `short`, so no choice of words
    /// makes this slower than the map alone. Keys and ids apart, so both fit the
    /// processor's first-level cache (one array of `(u128, Option<u32>)` filled it).
    recent: Box<[u128; RECENT]>,
    /// The stem id of each slot's word, [`STOP`] for a stop word.
    recent_ids: Box<[u32; RECENT]>,
    /// Stem → id, so two words with one stem ("skill", "skills") are one term.
    ids: Stems,
    /// Per stem id: (document, count per field), documents in order.
    postings: Vec<List>,
    lower: String,
    /// A copy of the text being read, padded for [`each_word`].
    padded: Vec<u8>,
    /// This document's distinct stems, in first-seen order.
    scratch: Vec<u32>,
    /// Per stem id: the document that last saw it (`doc_no`), and its count per field
    /// there: one place per word to look, with no list of this document's stems between.
    /// As long as [`postings`](Self::postings): every id has its place.
    seen_in: Vec<(u32, [u8; 4])>,
    doc_no: u32,
}

impl Tokenizer {
    fn new() -> Tokenizer {
        Tokenizer {
            stemmer: stemmer(),
            seen: WordMap::default(),
            short: WordMap::default(),
            recent: Box::new([0; RECENT]),
            recent_ids: Box::new([STOP; RECENT]),
            ids: Stems::default(),
            postings: vec![List::new()],
            lower: String::new(),
            padded: Vec::new(),
            scratch: Vec::new(),
            seen_in: vec![(0, [0; 4])],
            doc_no: 0,
        }
    }

    /// The id of `stem`, given one if it is new.
    fn id_of_stem(&mut self, stem: &str) -> u32 {
        if let Some(key) = pack(stem) {
            return self.id_of_packed_stem(key);
        }
        if let Some(id) = self.ids.long.get(stem) {
            return *id;
        }
        let id = self.next_id();
        self.ids.long.insert(stem.into(), id);
        id
    }

    /// The id of the stem [`pack`]ed as `key`, given one if it is new.
    fn id_of_packed_stem(&mut self, key: u128) -> u32 {
        if let Some(id) = self.ids.short.get(&key) {
            return *id;
        }
        let id = self.next_id();
        self.ids.short.insert(key, id);
        id
    }

    /// A new stem's id, with its place in the postings and in `seen_in`.
    fn next_id(&mut self) -> u32 {
        let id = u32::try_from(self.postings.len()).unwrap_or(u32::MAX);
        self.postings.push(List::new());
        self.seen_in.push((0, [0; 4]));
        id
    }

    /// Keeps `key`'s stem id in its [`recent`](Self::recent) slot.
    fn remember(&mut self, slot: usize, key: u128, id: Option<u32>) {
        self.recent[slot] = key;
        self.recent_ids[slot] = id.unwrap_or(STOP);
    }

    /// The id of `word`'s stem, or [`STOP`] for a stop word; each word is stemmed once.
    #[inline(always)]
    fn stem_id(&mut self, word: Word<'_>) -> u32 {
        // Short ASCII words (nearly all of them) are looked up by value: lowercased and
        // packed into a `u128`, so a lookup neither copies nor follows a pointer.
        if let Some(key) = word.packed {
            let slot = recent_slot(key);
            if self.recent[slot] == key {
                return self.recent_ids[slot];
            }
        }
        self.stem_id_slow(word.as_str(), word.packed)
            .unwrap_or(STOP)
    }

    /// [`stem_id`](Self::stem_id) for a word not in [`recent`](Self::recent): kept out of
    /// line, so the scan's loop holds only the common path.
    #[cold]
    #[inline(never)]
    fn stem_id_slow(&mut self, word: &str, packed: Option<u128>) -> Option<u32> {
        // A word with a digit is its own stem, lowercased ([`term`]), and no stop word:
        // one lookup by its packed form. Such words are most of those met once (a name's
        // number, a version), which this path sees.
        if let Some(key) = packed.filter(|key| has_digit(*key)) {
            let id = self.id_of_packed_stem(key);
            self.remember(recent_slot(key), key, Some(id));
            return Some(id);
        }
        if let Some(key) = packed {
            let slot = recent_slot(key);
            if let Some(id) = self.short.get(&key).copied() {
                self.remember(slot, key, id);
                return id;
            }
        }
        if packed.is_none()
            && word
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
                        self.remember(recent_slot(key), key, id);
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

    /// Reads a record's terms and adds its postings; returns each field's length in terms.
    fn doc(&mut self, doc: u32, record: &SkillRecord) -> [u16; 4] {
        let fm = &record.frontmatter;
        let when_to_use = fm.when_to_use.as_deref().unwrap_or("");
        let mut scratch = std::mem::take(&mut self.scratch);
        // A place for each word there can be (one for every two bytes, at most), so the
        // loop over words never grows it.
        let most = [record.name.as_str(), &record.description, when_to_use]
            .into_iter()
            .chain(fm.tags.iter().map(String::as_str))
            .map(|t| t.len() / 2 + 1)
            .sum::<usize>();
        if scratch.len() < most {
            scratch.resize(most, 0);
        }
        self.doc_no = self.doc_no.wrapping_add(1);
        let mut reading = Reading {
            scratch,
            distinct: 0,
            doc_no: self.doc_no,
        };
        let mut lens = [
            self.field::<0>(record.name.as_str(), &mut reading),
            self.field::<1>(&record.description, &mut reading),
            self.field::<2>(when_to_use, &mut reading),
            0,
        ];
        for tag in &fm.tags {
            lens[3] = lens[3].saturating_add(self.field::<3>(tag, &mut reading));
        }
        let Reading {
            scratch, distinct, ..
        } = reading;
        for id in scratch.iter().take(distinct).filter(|id| **id != STOP) {
            let counts = self.seen_in[*id as usize].1;
            self.postings[*id as usize].push((doc, counts));
        }
        self.scratch = scratch;
        lens
    }

    /// Reads `text` as field `F` of [`SearchField::ALL`] into `reading`; returns its
    /// length in terms. One function a field, so that the field is a constant in the loop.
    fn field<const F: usize>(&mut self, text: &str, reading: &mut Reading) -> u16 {
        let mut padded = std::mem::take(&mut self.padded);
        let mut len = 0usize;
        each_word(text, &mut padded, |word| {
            let id = self.stem_id(word);
            len += usize::from(id != STOP);
            // Distinct stems without sorting: a stem first seen in this document starts its
            // counts afresh. Without a branch (whether a stem is new to a document follows
            // no pattern a processor can guess): the id is written past the last distinct
            // one either way, and kept only when new.
            if let (Some((last, counts)), Some(slot)) = (
                self.seen_in.get_mut(id as usize),
                reading.scratch.get_mut(reading.distinct),
            ) {
                let fresh = *last != reading.doc_no;
                *last = reading.doc_no;
                // Counted in a register and stored once: a byte read back from the four
                // just stored waited on the store (a fifth of the build in a profile).
                let kept = u32::from_le_bytes(*counts);
                let kept = std::hint::select_unpredictable(fresh, 0, kept);
                let full = (kept >> (8 * F)) & 0xff == 0xff;
                *counts = (kept + (u32::from(!full) << (8 * F))).to_le_bytes();
                *slot = id;
                reading.distinct += usize::from(fresh);
            }
        });
        self.padded = padded;
        u16::try_from(len).unwrap_or(u16::MAX)
    }
}

/// One document's reading by [`Tokenizer::doc`]: its distinct stems (`scratch`, the first
/// `distinct`, with room for one per word) and its number.
struct Reading {
    scratch: Vec<u32>,
    distinct: usize,
    doc_no: u32,
}

/// A document of the index: its record while the record is in the index's snapshot
/// (`None` once it left: the document is removed, its postings stay until the next fresh
/// build), and its field lengths in terms.
#[derive(Debug)]
struct Doc {
    record: Option<Arc<SkillRecord>>,
    lens: [u16; 4],
    /// [`SkillRecord::unrestricted`] of its record, asked once at its reading: an audience
    /// that sees such records without asking reads no record of them.
    unrestricted: bool,
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

/// Who a search is for: which skills it may count and return. Its statistics (how many
/// documents, how long their fields are on average, how many hold each term) are over
/// those skills only (see the module documentation).
///
/// ```
/// use skills_index::Audience;
/// let everyone = Audience::everyone();
/// let memo = skills_index::AudienceMemo::default();
/// let ops_only = |r: &skills_model::SkillRecord| r.name.as_str().starts_with("ops-");
/// let ops = Audience::seeing(&ops_only).remembered_in(&memo);
/// # let _ = (everyone, ops);
/// ```
#[derive(Clone, Copy)]
pub struct Audience<'a> {
    /// `None`: it sees every skill.
    sees: Option<&'a (dyn Fn(&SkillRecord) -> bool + 'a)>,
    memo: Option<&'a AudienceMemo>,
    /// When set, it sees every unrestricted record without asking `sees`, but those this
    /// names (see [`Audience::seeing_unrestricted_but`]).
    ask_anyway: Option<&'a (dyn Fn(&SkillRecord) -> bool + 'a)>,
}

impl std::fmt::Debug for Audience<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Audience")
            .field("everyone", &self.sees.is_none())
            .field("remembered", &self.memo.is_some())
            .field("unrestricted_seen", &self.ask_anyway.is_some())
            .finish()
    }
}

impl<'a> Audience<'a> {
    /// An audience that sees every skill of the index.
    pub fn everyone() -> Audience<'static> {
        Audience {
            sees: None,
            memo: None,
            ask_anyway: None,
        }
    }

    /// An audience that sees the skills `sees` admits. `sees` must give the same answer
    /// for a record each time it is asked (it is asked once per index when remembered).
    pub fn seeing(sees: &'a (dyn Fn(&SkillRecord) -> bool + 'a)) -> Audience<'a> {
        Audience {
            sees: Some(sees),
            memo: None,
            ask_anyway: None,
        }
    }

    /// What it sees of an index is kept in `memo`, and worked out again only for another
    /// index. One memo serves one audience: given to another, it answers for the first.
    /// An audience that sees everything neither reads nor writes one.
    #[must_use]
    pub fn remembered_in(self, memo: &'a AudienceMemo) -> Audience<'a> {
        Audience {
            memo: Some(memo),
            ..self
        }
    }

    /// It sees every unrestricted record ([`SkillRecord::unrestricted`]) without its `sees`
    /// being asked, except those `ask_anyway` names, which `sees` is asked of as of any
    /// other. For an audience whose `sees` admits every unrestricted record it is not told
    /// of: `ask_anyway` should tell a record by its address, without reading it (the point
    /// is that the records of unrestricted skills, scattered in memory, are not read).
    #[must_use]
    pub fn seeing_unrestricted_but(
        self,
        ask_anyway: &'a (dyn Fn(&SkillRecord) -> bool + 'a),
    ) -> Audience<'a> {
        Audience {
            ask_anyway: Some(ask_anyway),
            ..self
        }
    }
}

/// Where an [`Audience`] keeps what it sees of the index it last searched.
#[derive(Debug, Default)]
pub struct AudienceMemo(std::sync::Mutex<Option<Arc<Seen>>>);

impl AudienceMemo {
    /// Forgets what it holds: the audience now sees other skills (a session whose host
    /// changed the tools it offers).
    pub fn forget(&self) {
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
    }
}

/// What an audience sees of one index: which documents (`None`: every live one), how
/// many, and their average field lengths.
#[derive(Debug)]
struct Seen {
    /// The index it was worked out for ([`SearchIndex::id`]).
    index: u64,
    /// Bit `d` set when the audience sees document `d`; `None` when it sees every live one.
    docs: Option<Vec<u64>>,
    live: usize,
    avg: [f32; 4],
}

impl Seen {
    fn has(&self, d: usize) -> bool {
        self.docs
            .as_ref()
            .is_none_or(|bits| bits.get(d / 64).is_some_and(|w| w & (1 << (d % 64)) != 0))
    }
}

/// Each search index's own number, for an [`AudienceMemo`] to know whether it holds
/// what an audience sees of it.
static NEXT_INDEX: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// The search index of one snapshot (see the module documentation).
#[derive(Debug)]
pub struct SearchIndex {
    /// This index's own number ([`NEXT_INDEX`]).
    id: u64,
    /// By document number; removed documents included.
    docs: Vec<Doc>,
    /// How many documents are live (not removed).
    live: usize,
    /// Per build chunk, in document order: term → (document, count per field). Shared
    /// with the indexes that followed this one.
    parts: Vec<Arc<Part>>,
    /// How many parts the fresh build this index descends from made.
    fresh_parts: usize,
    /// Average field lengths.
    avg: [f32; 4],
    /// Layer precedence, highest first, for ties.
    order: [Layer; 4],
}

impl SearchIndex {
    /// Indexes `records`: afresh, or by following `previous` (see the module
    /// documentation).
    pub(crate) fn build<'r>(
        records: impl Iterator<Item = &'r Arc<SkillRecord>>,
        previous: Option<&SearchIndex>,
        order: [Layer; 4],
        build: Build<'_>,
    ) -> SearchIndex {
        let records: Vec<&Arc<SkillRecord>> = records.collect();
        if let Some(next) = previous.and_then(|p| p.follow(&records, build)) {
            return next;
        }
        let (docs, parts) = tokenize(&records, 0, build);
        let fresh_parts = parts.len();
        SearchIndex::new(docs, parts, fresh_parts, order)
    }

    /// The index of `records` that shares this one's postings and reads only the records
    /// it does not hold; `None` when a fresh build is due (see [`MAX_ADDED_PARTS`]).
    fn follow(&self, records: &[&Arc<SkillRecord>], build: Build<'_>) -> Option<SearchIndex> {
        // Keyed by the record's address: the same `Arc` is the same record.
        let held: WordMap<usize, usize> = self
            .docs
            .iter()
            .enumerate()
            .filter_map(|(d, doc)| Some((Arc::as_ptr(doc.record.as_ref()?) as usize, d)))
            .collect();
        let mut docs: Vec<Doc> = self
            .docs
            .iter()
            .map(|d| Doc {
                record: None,
                lens: d.lens,
                unrestricted: d.unrestricted,
            })
            .collect();
        let mut new = Vec::new();
        for r in records {
            match held.get(&(Arc::as_ptr(r) as usize)) {
                Some(d) => docs[*d].record = Some(Arc::clone(r)),
                None => new.push(*r),
            }
        }
        let all = docs.len() + new.len();
        let removed = all - records.len();
        if removed * 4 > all
            || self.parts.len() + chunks(new.len(), build.threads)
                > self.fresh_parts + MAX_ADDED_PARTS
        {
            return None;
        }
        let (added, added_parts) = tokenize(&new, docs.len(), build);
        docs.extend(added);
        let mut parts = self.parts.clone();
        parts.extend(added_parts);
        Some(SearchIndex::new(docs, parts, self.fresh_parts, self.order))
    }

    fn new(
        docs: Vec<Doc>,
        parts: Vec<Arc<Part>>,
        fresh_parts: usize,
        order: [Layer; 4],
    ) -> SearchIndex {
        // Whole numbers, summed exactly, so the averages do not depend on document order.
        let mut total = [0u64; 4];
        let mut live = 0;
        for doc in docs.iter().filter(|d| d.record.is_some()) {
            live += 1;
            for (t, len) in total.iter_mut().zip(doc.lens) {
                *t += u64::from(len);
            }
        }
        SearchIndex {
            id: NEXT_INDEX.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            avg: averages(total, live),
            docs,
            live,
            parts,
            fresh_parts,
            order,
        }
    }

    /// What `audience` sees of this index: from its memo when the memo holds this index's,
    /// else worked out (one pass over the documents) and kept there.
    fn seen(&self, audience: &Audience<'_>) -> Arc<Seen> {
        let everything = || {
            Arc::new(Seen {
                index: self.id,
                docs: None,
                live: self.live,
                avg: self.avg,
            })
        };
        let Some(sees) = audience.sees else {
            return everything();
        };
        let memo = audience
            .memo
            .map(|m| m.0.lock().unwrap_or_else(|e| e.into_inner()));
        if let Some(seen) = memo.as_ref().and_then(|m| m.as_ref()) {
            if seen.index == self.id {
                return Arc::clone(seen);
            }
        }
        let mut bits = vec![0u64; self.docs.len().div_ceil(64)];
        let mut total = [0u64; 4];
        let mut live = 0;
        let asked = |doc: &Doc, record: &SkillRecord| {
            !doc.unrestricted || audience.ask_anyway.is_none_or(|ask| ask(record))
        };
        for (d, doc) in self.docs.iter().enumerate() {
            let Some(record) = doc.record.as_deref() else {
                continue;
            };
            let seen = if asked(doc, record) {
                warm_audience_ahead(&self.docs, d);
                sees(record)
            } else {
                true
            };
            if seen {
                bits[d / 64] |= 1 << (d % 64);
                live += 1;
                for (t, len) in total.iter_mut().zip(doc.lens) {
                    *t += u64::from(len);
                }
            }
        }
        // Seeing every live document is seeing the index as it is.
        let seen = if live == self.live {
            everything()
        } else {
            Arc::new(Seen {
                index: self.id,
                docs: Some(bits),
                live,
                avg: averages(total, live),
            })
        };
        if let Some(mut memo) = memo {
            *memo = Some(Arc::clone(&seen));
        }
        seen
    }

    /// How many records it holds (a snapshot's shadowed records included).
    pub fn len(&self) -> usize {
        self.live
    }

    /// Whether it holds no skill.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Heap bytes held beyond the records themselves: documents, terms, postings (parts
    /// shared with an earlier index counted here too).
    pub fn heap_bytes(&self) -> usize {
        let docs = self.docs.capacity() * std::mem::size_of::<Doc>()
            + self.parts.capacity() * std::mem::size_of::<Arc<Part>>();
        let postings = self
            .parts
            .iter()
            .map(|p| {
                p.ids.heap_bytes()
                    + p.lists.capacity() * std::mem::size_of::<List>()
                    + p.lists
                        .iter()
                        .filter(|l| l.spilled())
                        .map(|l| l.capacity() * std::mem::size_of::<(u32, [u8; 4])>())
                        .sum::<usize>()
            })
            .sum::<usize>();
        docs + postings
    }

    /// The skills `keep` admits that match `query`: the best `limit` of them, best first
    /// (ties by precedence), and how many matched in all. Nothing matches a query with no
    /// searchable word. For a search on behalf of someone who may not see every skill,
    /// [`SearchIndex::search_for`].
    pub fn search(
        &self,
        query: &str,
        limit: usize,
        keep: impl Fn(&SkillRecord) -> bool,
    ) -> SearchOutcome {
        self.search_for(&Audience::everyone(), query, limit, keep)
    }

    /// The skills `audience` sees and `keep` admits that match `query`, as
    /// [`SearchIndex::search`] finds them, scored with statistics over what `audience`
    /// sees only.
    pub fn search_for(
        &self,
        audience: &Audience<'_>,
        query: &str,
        limit: usize,
        keep: impl Fn(&SkillRecord) -> bool,
    ) -> SearchOutcome {
        let words = query_words(query);
        if words.is_empty() {
            return SearchOutcome {
                hits: Vec::new(),
                total: 0,
            };
        }
        let seen = self.seen(audience);
        let mut scoring = Scoring {
            scores: vec![0f32; self.docs.len()],
            fields: vec![0u8; self.docs.len()],
            touched: Vec::new(),
        };
        for word in &words {
            self.score_word(word, &seen, &mut scoring);
        }
        self.best(scoring, limit, keep)
    }

    /// Adds one query word's BM25F share to the score of every document `seen` holds that
    /// has it.
    fn score_word<'s>(&'s self, word: &str, seen: &Seen, scoring: &mut Scoring<'s>) {
        let avg = seen.avg;
        let (df, lists) = self.frequency(word, seen);
        if df == 0 {
            return;
        }
        let postings = || lists.iter().copied().flatten();
        let idf = idf(seen.live, df);
        for (doc, counts) in postings() {
            let d = *doc as usize;
            let Doc {
                record: Some(record),
                lens,
                ..
            } = &self.docs[d]
            else {
                continue;
            };
            if !seen.has(d) {
                continue;
            }
            let mut tf = 0.0;
            let mut mask = 0u8;
            for f in 0..4 {
                if counts[f] == 0 {
                    continue;
                }
                mask |= 1 << f;
                let norm = 1.0 - B + B * f32::from(lens[f]) / avg[f];
                tf += FIELD_WEIGHTS[f] * f32::from(counts[f]) / norm;
            }
            if scoring.fields[d] == 0 {
                scoring.touched.push((*doc, record));
            }
            scoring.scores[d] += idf * tf / (K1 + tf);
            scoring.fields[d] |= mask;
        }
    }

    /// How many documents `seen` holds that have `word` (its document frequency), and
    /// its lists in every part.
    fn frequency<'s>(&'s self, word: &str, seen: &Seen) -> (usize, Vec<&'s List>) {
        let removed = self.docs.len() != self.live;
        let lists: Vec<&List> = self.parts.iter().filter_map(|p| p.list(word)).collect();
        let postings = || lists.iter().copied().flatten();
        let df = if seen.docs.is_some() {
            postings().filter(|(d, _)| seen.has(*d as usize)).count()
        } else if removed {
            postings()
                .filter(|(d, _)| self.docs[*d as usize].record.is_some())
                .count()
        } else {
            lists.iter().map(|l| l.len()).sum::<usize>()
        };
        (df, lists)
    }

    /// Each query term's share of `record`'s score for `query`, as [`SearchIndex::search_for`]
    /// adds it up for `audience`, one share per field the term matched: a term's part of
    /// the score, split between its fields by their weighted, length-normalised counts.
    /// Terms in query order (sorted stems); empty when `audience` does not see `record`,
    /// the index does not hold it, or it shares no term with the query.
    pub fn explain_for(
        &self,
        audience: &Audience<'_>,
        query: &str,
        record: &SkillRecord,
    ) -> Vec<TermShare> {
        let seen = self.seen(audience);
        let held = self.docs.iter().position(|doc| {
            doc.record
                .as_deref()
                .is_some_and(|r| std::ptr::eq(r, record))
        });
        let Some(d) = held.filter(|d| seen.has(*d)) else {
            return Vec::new();
        };
        let lens = self.docs[d].lens;
        let mut shares = Vec::new();
        for word in query_words(query) {
            let (df, lists) = self.frequency(&word, &seen);
            let counts = lists
                .iter()
                .copied()
                .flatten()
                .find(|(doc, _)| *doc as usize == d)
                .map(|(_, counts)| *counts);
            let Some(counts) = counts.filter(|_| df > 0) else {
                continue;
            };
            let mut per_field = [0f32; 4];
            for f in 0..4 {
                if counts[f] > 0 {
                    let norm = 1.0 - B + B * f32::from(lens[f]) / seen.avg[f];
                    per_field[f] = FIELD_WEIGHTS[f] * f32::from(counts[f]) / norm;
                }
            }
            let tf: f32 = per_field.iter().sum();
            let part = idf(seen.live, df) * tf / (K1 + tf);
            for (f, field_tf) in per_field.iter().enumerate().filter(|(_, t)| **t > 0.0) {
                shares.push(TermShare {
                    term: word.clone(),
                    field: SearchField::ALL[f],
                    contribution: part * field_tf / tf,
                });
            }
        }
        shares
    }

    /// The least score at which the ranking offers a skill for a request, for `audience`:
    /// what one term that a single skill of those `audience` sees holds adds to that
    /// skill's score when it occurs once in a field of weight 1 (the description) of
    /// average length, `idf(1) / (K1 + 1)`. A skill below it matched only words many
    /// skills share, or one rare word in a long text: no evidence enough to offer it.
    /// It grows with the catalogue as a rare term's weight does (0.32 at 2 skills, 1.91 at
    /// 100, 2.95 at 1,000), so it means the same at every size. See `docs/trigger-evals.md`.
    pub fn offer_threshold(&self, audience: &Audience<'_>) -> f32 {
        let seen = self.seen(audience);
        idf(seen.live, 1) / (K1 + 1.0)
    }

    /// The best `limit` of the scored documents `keep` admits, best first (ties by
    /// precedence), and how many it admits in all.
    fn best(
        &self,
        scoring: Scoring<'_>,
        limit: usize,
        keep: impl Fn(&SkillRecord) -> bool,
    ) -> SearchOutcome {
        let Scoring {
            scores,
            fields,
            touched,
        } = scoring;
        let mut found: Vec<(u32, &Arc<SkillRecord>)> =
            touched.into_iter().filter(|(_, r)| keep(r)).collect();
        let total = found.len();
        let rank = |l: Layer| self.order.iter().position(|o| *o == l).unwrap_or(4);
        let order = |(a, ra): &(u32, &Arc<SkillRecord>), (b, rb): &(u32, &Arc<SkillRecord>)| {
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
            .map(|(d, record)| SearchHit {
                record: Arc::clone(record),
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

/// BM25's inverse document frequency of a term `df` of `n` documents hold.
fn idf(n: usize, df: usize) -> f32 {
    let (n, df) = (n as f32, df as f32);
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// The search terms of `text` as the index reads a skill's fields and a query: each word
/// with the term it stands for (lowercased, stemmed; a word with a digit as it is), stop
/// words left out, in text order.
pub fn search_terms(text: &str) -> Vec<(String, String)> {
    let stemmer = stemmer();
    words(text)
        .filter_map(|w| {
            let lower = w.to_lowercase();
            let t = term(&stemmer, &lower)?.into_owned();
            Some((w.to_owned(), t))
        })
        .collect()
}

/// One query term's share of a skill's score in one field ([`SearchIndex::explain_for`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TermShare {
    /// The query's term (the word's stem, as the index holds it).
    pub term: String,
    /// The field it matched.
    pub field: SearchField,
    /// What it added to the score.
    pub contribution: f32,
}

/// A query's searchable words (stemmed), sorted, each once.
fn query_words(query: &str) -> Vec<String> {
    let stemmer = stemmer();
    let mut words: Vec<String> = terms(&stemmer, query).collect();
    words.sort_unstable();
    words.dedup();
    words
}

/// A query's scores while it is worked out: dense per-document accumulators (the score,
/// and the fields matched as bits), and the documents touched, in first-touch order.
struct Scoring<'s> {
    scores: Vec<f32>,
    fields: Vec<u8>,
    touched: Vec<(u32, &'s Arc<SkillRecord>)>,
}

/// Average field lengths of `live` documents whose lengths sum to `total`: whole numbers,
/// summed exactly, so they do not depend on document order; at least 1.
fn averages(total: [u64; 4], live: usize) -> [f32; 4] {
    let n = live.max(1) as f64;
    total.map(|t| ((t as f64 / n) as f32).max(1.0))
}

/// How many parts the indexes that follow a fresh build may add to its own before the next
/// is built afresh: each query looks its terms up once per part. Counted from the fresh
/// build's parts, which are as many as twice the threads (a fixed cap on all parts made a
/// large index on a machine of many threads rebuild afresh on every change:
/// `regression_a_fresh_build_of_many_parts_is_still_followed`).
const MAX_ADDED_PARTS: usize = 32;

/// Where a search index is built: how many threads' worth of chunks it is cut into, and
/// the pool it runs on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Build<'p> {
    /// Twice as many chunks as this (one a core, by [`Build::on`]).
    pub(crate) threads: usize,
    /// The index's reading threads (`None`: where the build is asked for). The caller
    /// of a build holds a lock while it waits (the writer's, when a publication follows
    /// the search index; the snapshot's `OnceLock` on a first search), so a build never
    /// runs on a host's rayon pool, whose worker would run the host's other queued jobs
    /// while it waits (`pool.rs`). On those threads because they are the ones just busy
    /// with the index build: at 10,000 skills, alternated `gates` runs, a build on rayon's
    /// global pool right after took up to 70% longer, beside the reading threads still
    /// spinning, and plain threads started for each build 4% longer.
    pub(crate) on: Option<&'p rayon::ThreadPool>,
}

impl<'p> Build<'p> {
    /// On `pool`, cut for this machine's cores.
    pub(crate) fn on(pool: Option<&'p rayon::ThreadPool>) -> Build<'p> {
        Build {
            threads: crate::pool::cores(),
            on: pool,
        }
    }
}

/// How many records one tokenizer reads: a few large chunks, so its stem cache pays off.
fn chunk_size(records: usize, threads: usize) -> usize {
    records.div_ceil(threads.max(1) * 2).max(256)
}

/// How many parts [`tokenize`] makes of `records` records.
fn chunks(records: usize, threads: usize) -> usize {
    records.div_ceil(chunk_size(records, threads))
}

/// The documents of `records`, numbered from `base`, and their postings: one part per
/// chunk (twice as many chunks as `threads`), each chunk read by its own tokenizer, in
/// parallel on the index's reading threads `on` (see [`Build`]).
fn tokenize(
    records: &[&Arc<SkillRecord>],
    base: usize,
    Build { threads, on }: Build<'_>,
) -> (Vec<Doc>, Vec<Arc<Part>>) {
    let chunk = chunk_size(records.len(), threads);
    let read_chunk = |(c, records): (usize, &[&Arc<SkillRecord>])| {
        let mut tokenizer = Tokenizer::new();
        let first = base + c * chunk;
        let docs: Vec<Doc> = records
            .iter()
            .enumerate()
            .map(|(i, r)| {
                warm_ahead(records, i);
                let doc = u32::try_from(first + i).unwrap_or(u32::MAX);
                Doc {
                    lens: tokenizer.doc(doc, r),
                    record: Some(Arc::clone(r)),
                    unrestricted: r.unrestricted(),
                }
            })
            .collect();
        (docs, tokenizer.into_part())
    };
    let read: Vec<(Vec<Doc>, Part)> = crate::pool::run(on, || {
        records
            .par_chunks(chunk)
            .enumerate()
            .map(read_chunk)
            .collect()
    });
    let mut docs = Vec::with_capacity(records.len());
    let mut parts = Vec::with_capacity(read.len());
    // In chunk order, so documents keep their numbers.
    for (chunk_docs, part) in read {
        docs.extend(chunk_docs);
        parts.push(Arc::new(part));
    }
    (docs, parts)
}

/// The answer to a query: the best matches and how many matched in all.
#[derive(Debug, Clone)]
pub struct SearchOutcome {
    /// The best matches, best first, at most the limit asked for.
    pub hits: Vec<SearchHit>,
    /// How many skills matched (that the filter kept), before the limit.
    pub total: usize,
}

/// Asks the processor to start loading what an audience's question about a record touches,
/// in stages ahead of the pass over the documents (as [`warm_ahead`] does for the build):
/// sixteen places on, the record's address of its frontmatter; eight on, the lines of the
/// frontmatter's `scope` (its needs lie beside it) and `disable-model-invocation`. Only while
/// records are being asked about. A hint only: it changes no answer.
fn warm_audience_ahead(docs: &[Doc], d: usize) {
    use crate::warm::warm;
    if let Some(record) = docs.get(d + 16).and_then(|doc| doc.record.as_deref()) {
        warm(&record.frontmatter);
    }
    if let Some(record) = docs.get(d + 8).and_then(|doc| doc.record.as_deref()) {
        let fm = &*record.frontmatter;
        warm(&fm.scope);
        warm(&fm.disable_model_invocation);
    }
}

/// Asks the processor to start loading what reading a record will touch, in stages ahead
/// of the tokenizer: the record eight places on; four places on, its frontmatter and the
/// lines of its description and name (their addresses are on the record, loaded by then);
/// two places on, the `when_to_use` text and the list of tags (their addresses are on the
/// frontmatter). Records lie wherever the reading threads allocated them; in a profile the
/// first touch of each was about a tenth of a build, and with this the build measured
/// about a tenth faster (search build over index build, alternated runs; the stages and
/// longer reach another 2%). A hint only: it changes no result.
fn warm_ahead(records: &[&Arc<SkillRecord>], i: usize) {
    use crate::warm::warm;
    if let Some(record) = records.get(i + 8) {
        warm(&***record);
    }
    if let Some(record) = records.get(i + 4) {
        let fm = &*record.frontmatter;
        warm(fm);
        // What says whether the record is unrestricted, beyond the first line.
        warm(&fm.scope);
        warm(&fm.disable_model_invocation);
        for text in [
            record.description.as_bytes(),
            record.name.as_str().as_bytes(),
        ] {
            for line in text.chunks(64).take(16).filter_map(<[u8]>::first) {
                warm(line);
            }
        }
    }
    if let Some(record) = records.get(i + 2) {
        let fm = &*record.frontmatter;
        if let Some(first) = fm.when_to_use.as_deref().and_then(|t| t.as_bytes().first()) {
            warm(first);
        }
        if let Some(tag) = fm.tags.first() {
            warm(tag);
        }
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

    fn record(i: usize, description: &str) -> Arc<SkillRecord> {
        Arc::new(SkillRecord {
            name: skills_model::SkillName::lenient(&format!("skill-{i}")).expect("a name"),
            description: description.to_owned(),
            layer: Layer::Project,
            plugin: None,
            path: std::path::PathBuf::from(format!("/skills/skill-{i}/SKILL.md")),
            frontmatter: Arc::new(skills_model::Frontmatter::default()),
            body_offset: 0,
            diagnostics: Arc::from(Vec::new()),
            remote: None,
        })
    }

    /// A stop word is read as the id no stem is given ([`STOP`]): it counts in no field's
    /// length, holds no posting, and a stem seen again in a document is counted, not
    /// listed twice.
    #[test]
    fn stop_words_count_nowhere_and_stems_are_listed_once() {
        let mut tokenizer = Tokenizer::new();
        let lens = tokenizer.doc(
            0,
            &record(1, "The charts and the charts of a Chart, the end."),
        );
        // "skill", "1"; "charts" three times and "end".
        assert_eq!(lens, [2, 4, 0, 0]);
        let part = tokenizer.into_part();
        assert!(part.lists.first().is_some_and(|l| l.is_empty()));
        let chart = part.list("chart").expect("listed");
        assert_eq!(chart.as_slice(), &[(0, [0, 3, 0, 0])]);
        assert!(part.list("the").is_none());
    }

    /// A packed word holds a digit wherever it is, and a word of letters none.
    #[test]
    fn digits_are_found_in_either_half_of_a_packed_word() {
        for (word, digit) in [
            ("v2", true),
            ("00000", true),
            ("abcdefghijklmno9", true),
            ("9bcdefghijklmnop", true),
            ("abcdefgh", false),
            ("abcdefghijklmnop", false),
            ("z", false),
        ] {
            assert_eq!(has_digit(pack(word).expect("packs")), digit, "{word}");
        }
    }

    /// A count per field stops at 255 and leaves the other fields' counts as they are.
    #[test]
    fn counts_stop_at_the_most_a_byte_holds() {
        let mut tokenizer = Tokenizer::new();
        let lens = tokenizer.doc(0, &record(1, &"chart ".repeat(300)));
        assert_eq!(lens, [2, 300, 0, 0]);
        let part = tokenizer.into_part();
        let chart = part.list("chart").expect("listed");
        assert_eq!(chart.as_slice(), &[(0, [0, 255, 0, 0])]);
        assert_eq!(
            part.list("skill").expect("listed").as_slice(),
            &[(0, [1, 0, 0, 0])]
        );
    }

    /// Regression: the limit on parts was on all of them, and a fresh build makes up to
    /// twice as many as the threads: with 17 or more threads and 8,193 or more skills,
    /// every publication rebuilt the whole index instead of following.
    #[test]
    fn regression_a_fresh_build_of_many_parts_is_still_followed() {
        let order = [
            Layer::Enterprise,
            Layer::Personal,
            Layer::Project,
            Layer::Plugin,
        ];
        let mut records: Vec<Arc<SkillRecord>> =
            (0..8_500).map(|i| record(i, "Charts reports.")).collect();
        // As on a machine of 24 cores.
        let build = Build {
            threads: 24,
            on: None,
        };
        let first = SearchIndex::build(records.iter(), None, order, build);
        assert!(first.parts.len() > 32, "{} parts", first.parts.len());
        records[0] = record(0, "Deploys releases.");
        let next = SearchIndex::build(records.iter(), Some(&first), order, build);
        assert_eq!(next.parts.len(), first.parts.len() + 1, "followed");
        assert_eq!(next.docs.len(), first.docs.len() + 1);
        assert_eq!(next.search("deploy", 5, |_| true).total, 1);
    }

    proptest::proptest! {
        /// Sixteen bytes at once mark the bytes eight at a time mark.
        #[cfg(target_arch = "x86_64")]
        #[test]
        fn sixteen_bytes_are_marked_as_eight_and_eight(bytes in proptest::array::uniform16(0u8..0x80)) {
            let twice = alnum8(load8(&bytes, 0)) | alnum8(load8(&bytes, 8)) << 8;
            proptest::prop_assert_eq!(alnum16(&bytes, 0), twice);
        }

        /// The scan finds the words `words` finds, packed as `pack` packs them (`None`
        /// past 16 bytes), also where the text stops being ASCII anywhere: at, inside or
        /// just after a word, a letter or not.
        #[test]
        fn each_word_is_words_packed(
            text in "[ -~]{0,200}|[a-zA-Z0-9 ,.-]{0,300}|([a-zA-Z0-9]{0,40}[ .]{1,3}){0,8}\
                |([a-zA-Z0-9]{0,20}[ .éßΩ€日😀]{1,2}){0,10}|\\PC{0,80}"
        ) {
            let mut got = Vec::new();
            each_word(&text, &mut Vec::new(), |w| got.push((w.as_str().to_owned(), w.packed)));
            let want: Vec<(String, Option<u128>)> =
                words(&text).map(|w| (w.to_owned(), pack(w))).collect();
            proptest::prop_assert_eq!(got, want);
        }
    }
}
