//! `description.overlap`: pairs of skills a model sees together whose descriptions it could
//! not tell apart, judged with the search index's own terms and weights.
//!
//! Each skill is a vector of its search terms ([`search_terms`] over its name, description,
//! `when_to_use` and tags). A term's weight is what a one-word query for it would add to
//! the skill's score, less the length normalisation: `idf · tf / (K1 + tf)`, with `tf` the
//! term's count in each field times the field's weight ([`FIELD_WEIGHTS`]) and `idf` over
//! the skills compared (a word every skill says weighs next to nothing). Two skills
//! overlap when the cosine of their vectors is at least [`OVERLAP_THRESHOLD`]; the finding
//! names the terms both hold, heaviest first, and each one's own terms, which are what a
//! description can lean on to be told apart. The threshold is justified on the real-world
//! corpus in `docs/decisions/0041-description-overlap.md`.

use std::collections::{BTreeMap, HashMap};

use skills_model::SkillRecord;

use crate::search::{search_terms, FIELD_WEIGHTS};

/// The cosine at and above which two skills' weighted terms overlap.
pub const OVERLAP_THRESHOLD: f32 = 0.5;

/// The least part of two skills' dot product a shared term must carry to be named.
const SHARE_FLOOR: f32 = 0.02;

/// How many terms a finding names in each list.
const NAMED_TERMS: usize = 6;

/// BM25's saturation, as the search uses it.
const K1: f32 = 1.2;

/// The fields of one skill the overlap reads.
#[derive(Debug, Clone, Copy)]
pub struct Described<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its description.
    pub description: &'a str,
    /// Its `when_to_use`, if any.
    pub when_to_use: Option<&'a str>,
    /// Its tags.
    pub tags: &'a [String],
}

impl<'a> From<&'a SkillRecord> for Described<'a> {
    fn from(r: &'a SkillRecord) -> Described<'a> {
        Described {
            name: r.name.as_str(),
            description: &r.description,
            when_to_use: r.frontmatter.when_to_use.as_deref(),
            tags: &r.frontmatter.tags,
        }
    }
}

/// Two skills that read alike: indexes into the list given to [`overlaps`].
#[derive(Debug, Clone, PartialEq)]
pub struct Overlap {
    /// The first skill (the lower index).
    pub first: usize,
    /// The second.
    pub second: usize,
    /// The cosine of their weighted terms, 0 to 1.
    pub similarity: f32,
    /// Words both hold (one word for each shared term), heaviest first.
    pub shared: Vec<String>,
    /// The first's words the second lacks, heaviest first.
    pub first_only: Vec<String>,
    /// The second's words the first lacks, heaviest first.
    pub second_only: Vec<String>,
}

/// One skill's weighted terms: term id to weight, and its vector's length.
struct Vector {
    weights: BTreeMap<u32, f32>,
    norm: f32,
}

/// The terms of every skill: ids, a word to show for each, and per skill its weighted
/// counts (before idf).
struct Terms {
    words: Vec<String>,
    counts: Vec<BTreeMap<u32, f32>>,
}

fn read_terms(skills: &[Described<'_>]) -> Terms {
    let mut ids: HashMap<String, u32> = HashMap::new();
    let mut words = Vec::new();
    let mut counts = Vec::with_capacity(skills.len());
    for s in skills {
        let mut tf: BTreeMap<u32, f32> = BTreeMap::new();
        let fields = [
            (0, s.name),
            (1, s.description),
            (2, s.when_to_use.unwrap_or("")),
        ]
        .into_iter()
        .chain(s.tags.iter().map(|t| (3, t.as_str())));
        for (f, text) in fields {
            for (word, term) in search_terms(text) {
                let next = u32::try_from(words.len()).unwrap_or(u32::MAX);
                let id = *ids.entry(term).or_insert_with(|| {
                    words.push(word.to_lowercase());
                    next
                });
                *tf.entry(id).or_default() += FIELD_WEIGHTS[f];
            }
        }
        counts.push(tf);
    }
    Terms { words, counts }
}

/// Every skill's weighted vector, with idf over `counts`.
fn vectors(counts: &[BTreeMap<u32, f32>]) -> Vec<Vector> {
    let mut df: HashMap<u32, usize> = HashMap::new();
    for c in counts {
        for id in c.keys() {
            *df.entry(*id).or_default() += 1;
        }
    }
    let n = counts.len() as f32;
    counts
        .iter()
        .map(|c| {
            let weights: BTreeMap<u32, f32> = c
                .iter()
                .map(|(id, tf)| {
                    let df = df.get(id).copied().unwrap_or(1) as f32;
                    let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                    (*id, idf * tf / (K1 + tf))
                })
                .collect();
            let norm = weights.values().map(|w| w * w).sum::<f32>().sqrt();
            Vector { weights, norm }
        })
        .collect()
}

/// The cosine of every pair of `skills` that shares a term, as (first, second, cosine),
/// first < second, in order.
pub fn similarities(skills: &[Described<'_>]) -> Vec<(usize, usize, f32)> {
    let terms = read_terms(skills);
    let vectors = vectors(&terms.counts);
    pairs(&vectors)
        .into_iter()
        .map(|((a, b), dot)| (a, b, cosine(&vectors, a, b, dot)))
        .collect()
}

fn cosine(vectors: &[Vector], a: usize, b: usize, dot: f32) -> f32 {
    let norms = vectors[a].norm * vectors[b].norm;
    if norms > 0.0 {
        (dot / norms).min(1.0)
    } else {
        0.0
    }
}

/// The dot product of every pair of vectors that shares a term, through a list of the
/// skills holding each term (most pairs share none).
fn pairs(vectors: &[Vector]) -> BTreeMap<(usize, usize), f32> {
    let mut holders: BTreeMap<u32, Vec<(usize, f32)>> = BTreeMap::new();
    for (s, v) in vectors.iter().enumerate() {
        for (id, w) in &v.weights {
            holders.entry(*id).or_default().push((s, *w));
        }
    }
    let mut dots: BTreeMap<(usize, usize), f32> = BTreeMap::new();
    for list in holders.values() {
        for (i, (a, wa)) in list.iter().enumerate() {
            for (b, wb) in &list[i + 1..] {
                *dots.entry((*a, *b)).or_default() += wa * wb;
            }
        }
    }
    dots
}

/// The pairs of `skills` whose weighted terms overlap ([`OVERLAP_THRESHOLD`]), in order.
/// `skills` are the ones a model sees together: the weights are over them.
pub fn overlaps(skills: &[Described<'_>]) -> Vec<Overlap> {
    let terms = read_terms(skills);
    let vectors = vectors(&terms.counts);
    pairs(&vectors)
        .into_iter()
        .filter_map(|((a, b), dot)| {
            let similarity = cosine(&vectors, a, b, dot);
            (similarity >= OVERLAP_THRESHOLD).then(|| Overlap {
                first: a,
                second: b,
                similarity,
                shared: heaviest(&terms, &vectors[a], |id| {
                    // Only the terms that carry the likeness: a word nearly every skill
                    // says adds next to nothing and would only hide the ones that do.
                    let wb = vectors[b].weights.get(&id).copied()?;
                    let wa = vectors[a].weights.get(&id).copied()?;
                    (wa * wb >= SHARE_FLOOR * dot).then_some(wb)
                }),
                first_only: heaviest(&terms, &vectors[a], |id| {
                    (!vectors[b].weights.contains_key(&id)).then_some(1.0)
                }),
                second_only: heaviest(&terms, &vectors[b], |id| {
                    (!vectors[a].weights.contains_key(&id)).then_some(1.0)
                }),
            })
        })
        .collect()
}

/// The words of `v`'s terms `other` gives a factor for, heaviest first (weight times the
/// factor), at most [`NAMED_TERMS`].
fn heaviest(terms: &Terms, v: &Vector, other: impl Fn(u32) -> Option<f32>) -> Vec<String> {
    let mut kept: Vec<(f32, u32)> = v
        .weights
        .iter()
        .filter_map(|(id, w)| other(*id).map(|f| (w * f, *id)))
        .collect();
    kept.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
    kept.iter()
        .take(NAMED_TERMS)
        .map(|(_, id)| terms.words[*id as usize].clone())
        .collect()
}

/// The `description.overlap` finding for a pair named `first` and `second` (in the
/// order of `o`): what the two share, and what to make distinct.
pub fn overlap_message(o: &Overlap, first: &str, second: &str) -> String {
    let list = |words: &[String]| {
        if words.is_empty() {
            "nothing the other does not".to_owned()
        } else {
            words.join(", ")
        }
    };
    format!(
        "`{first}` and `{second}` read alike to a model (similarity {:.2} of their search terms; {:.2} fires): both say {}; make each description say what sets it apart and when to choose it over the other (only `{first}` says {}; only `{second}` says {})",
        o.similarity,
        OVERLAP_THRESHOLD,
        o.shared.join(", "),
        list(&o.first_only),
        list(&o.second_only),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill<'a>(name: &'a str, description: &'a str) -> Described<'a> {
        Described {
            name,
            description,
            when_to_use: None,
            tags: &[],
        }
    }

    #[test]
    fn alike_descriptions_overlap_and_distinct_ones_do_not() {
        let skills = [
            skill(
                "pdf-forms",
                "Fills in PDF forms and reads their fields. Use when a PDF form must be filled.",
            ),
            skill(
                "pdf-form",
                "Fills PDF forms: reads and fills in their fields. Use when a PDF form is given.",
            ),
            skill(
                "release-notes",
                "Writes release notes from merged pull requests. Use before a release.",
            ),
            skill(
                "commit-messages",
                "Writes commit messages that explain why. Use before committing.",
            ),
        ];
        let found = overlaps(&skills);
        assert_eq!(found.len(), 1, "{found:?}");
        let o = &found[0];
        assert_eq!((o.first, o.second), (0, 1));
        assert!(o.shared.iter().any(|w| w == "pdf"), "{o:?}");
        assert!(o.similarity >= OVERLAP_THRESHOLD && o.similarity <= 1.0);
        let all = similarities(&skills);
        assert!(all.iter().all(|(a, b, c)| a < b && (0.0..=1.0).contains(c)));
    }
}
