//! `SkillName`: the name a skill is found by.

use std::borrow::Borrow;
use std::fmt;

use serde::Serialize;

use crate::ModelError;

/// The longest name the specification allows, in characters.
pub const MAX_NAME_LEN: usize = 64;

/// The longest name the lenient loader accepts, in characters.
const MAX_LENIENT_NAME_LEN: usize = 256;

/// A skill's name.
///
/// Two constructors, for the two readings of a skill:
/// - [`SkillName::new`] accepts exactly the specification's names: 1 to 64 characters, lowercase
///   ASCII letters and digits in groups joined by single hyphens (`^[a-z0-9]+(-[a-z0-9]+)*$`).
/// - [`SkillName::lenient`] accepts what real loaders accept (`PDF-Processing`, `my_skill`), and
///   refuses only what would break lookups: empty text, surrounding whitespace, control
///   characters, `:` (it separates a qualified name's layer), `/` and `\`, and the
///   characters a reader cannot see (Unicode's default-ignorable code points, the
///   bidirectional controls among them), which would make two names that display alike.
///
/// ```
/// use skills_model::SkillName;
/// assert!(SkillName::new("pdf-processing").is_ok());
/// assert!(SkillName::new("PDF-Processing").is_err());
/// let loose = SkillName::lenient("PDF-Processing").unwrap();
/// assert!(!loose.is_spec_valid());
/// ```
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct SkillName(Box<str>);

impl SkillName {
    /// A name that meets the specification.
    pub fn new(name: &str) -> Result<SkillName, ModelError> {
        if let Some(reason) = spec_name_problem(name) {
            return Err(ModelError::InvalidName {
                name: name.to_owned(),
                reason,
            });
        }
        Ok(SkillName(name.into()))
    }

    /// A name a lenient loader can index, even if the specification would refuse it.
    pub fn lenient(name: &str) -> Result<SkillName, ModelError> {
        match lenient_problem(name) {
            Some(reason) => Err(ModelError::InvalidName {
                name: name.to_owned(),
                reason,
            }),
            None => Ok(SkillName(name.into())),
        }
    }

    /// [`SkillName::lenient`] of a name already held, kept without a copy; the name is
    /// given back when a lenient loader cannot index it.
    pub fn lenient_owned(name: Box<str>) -> Result<SkillName, Box<str>> {
        match lenient_problem(&name) {
            Some(_) => Err(name),
            None => Ok(SkillName(name)),
        }
    }

    /// The name as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether the name also meets the specification.
    pub fn is_spec_valid(&self) -> bool {
        spec_name_problem(&self.0).is_none()
    }
}

/// Why `name` is not a specification name, or `None` if it is one.
///
/// Length is checked in characters, so a long non-ASCII name reports its length first.
pub fn spec_name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some("it is empty");
    }
    let bytes = name.as_bytes();
    let Spelling { allowed, doubled } = spelling(bytes);
    // A name of allowed bytes only is ASCII: as many characters as bytes.
    let chars = if allowed {
        bytes.len()
    } else {
        name.chars().count()
    };
    if chars > MAX_NAME_LEN {
        return Some("it is over 64 characters");
    }
    if !allowed {
        return Some("only lowercase ASCII letters, digits and hyphens are allowed");
    }
    if bytes[0] == b'-' || bytes[bytes.len() - 1] == b'-' {
        return Some("it must not start or end with a hyphen");
    }
    if doubled {
        return Some("it must not contain consecutive hyphens");
    }
    None
}

/// What one pass over a name's bytes finds: whether every byte is a lowercase ASCII
/// letter, a digit or a hyphen, and (when they all are) whether two hyphens meet.
struct Spelling {
    allowed: bool,
    doubled: bool,
}

/// [`Spelling`] of `bytes`, eight at a time: each byte's range tested by the carries of
/// two additions (a byte below 0x80 plus `0x80 - low` reaches the high bit exactly when it
/// is at least `low`), the hyphens' flags shifted one byte onto their neighbours'. A name
/// is read a few times a build (parse, precedence sort), and a byte at a time this was
/// about 350 instructions a name.
fn spelling(bytes: &[u8]) -> Spelling {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);
    let within = |v: u64, low: u8, high: u8| {
        v.wrapping_add(ONES * u64::from(0x80 - low))
            & !v.wrapping_add(ONES * u64::from(0x7f - high))
            & HIGHS
    };
    let (mut allowed, mut doubled, mut hyphen_before) = (true, false, false);
    let mut words = bytes.chunks_exact(8);
    let mut word = |v: u64| {
        // A byte at or above 0x80 is not allowed, and would carry into its neighbour.
        let hyphens = within(v, b'-', b'-');
        let fine = within(v, b'a', b'z') | within(v, b'0', b'9') | hyphens;
        allowed &= v & HIGHS == 0 && fine == HIGHS;
        doubled |= hyphens & (hyphens >> 8) != 0 || (hyphen_before && hyphens & 0x80 != 0);
        hyphen_before = hyphens >> 63 != 0;
    };
    for chunk in words.by_ref() {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        word(u64::from_le_bytes(w));
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        // Padded with a letter: allowed, and no hyphen.
        let mut w = [b'a'; 8];
        w[..rest.len()].copy_from_slice(rest);
        word(u64::from_le_bytes(w));
    }
    Spelling { allowed, doubled }
}

/// Unicode's `Default_Ignorable_Code_Point` property (DerivedCoreProperties.txt, Unicode
/// 16.0): characters a reader does not see, such as zero-width spaces and joiners, the
/// bidirectional controls (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069),
/// variation selectors, tag characters and the Hangul fillers.
const DEFAULT_IGNORABLE: [(char, char); 17] = [
    ('\u{00AD}', '\u{00AD}'),
    ('\u{034F}', '\u{034F}'),
    ('\u{061C}', '\u{061C}'),
    ('\u{115F}', '\u{1160}'),
    ('\u{17B4}', '\u{17B5}'),
    ('\u{180B}', '\u{180F}'),
    ('\u{200B}', '\u{200F}'),
    ('\u{202A}', '\u{202E}'),
    ('\u{2060}', '\u{206F}'),
    ('\u{3164}', '\u{3164}'),
    ('\u{FE00}', '\u{FE0F}'),
    ('\u{FEFF}', '\u{FEFF}'),
    ('\u{FFA0}', '\u{FFA0}'),
    ('\u{FFF0}', '\u{FFF8}'),
    ('\u{1BCA0}', '\u{1BCA3}'),
    ('\u{1D173}', '\u{1D17A}'),
    ('\u{E0000}', '\u{E0FFF}'),
];

/// Whether `c` is a character a reader does not see (Unicode's `Default_Ignorable_Code_Point`,
/// the bidi controls among them): a name holding one is refused, so no two names display
/// alike by it.
///
/// ```
/// use skills_model::is_default_ignorable;
/// assert!(is_default_ignorable('\u{200B}')); // zero-width space
/// assert!(is_default_ignorable('\u{202E}')); // right-to-left override
/// assert!(is_default_ignorable('\u{FE0F}')); // variation selector 16
/// assert!(is_default_ignorable('\u{E0064}')); // tag letter d
/// assert!(is_default_ignorable('\u{3164}')); // Hangul filler
/// assert!(!is_default_ignorable('-'));
/// ```
pub fn is_default_ignorable(c: char) -> bool {
    DEFAULT_IGNORABLE
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                std::cmp::Ordering::Less
            } else if lo > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// The closest of `names` to `wanted` by edit distance, when it is close enough to suggest
/// ("did you mean ...?"): within a third of `wanted`'s length, and at least 2 edits. A name
/// longer than [`SUGGESTED_MAX`] characters neither gets a suggestion nor is one, and a
/// name whose length alone puts it out of reach is passed over unmeasured, so the work is
/// bounded whatever the lengths (an edit distance costs the product of its two lengths:
/// a 100 KB name against 200 skills took a minute).
///
/// ```
/// assert_eq!(skills_model::closest_name("pdf-tool", ["pdf-tools", "docx"].into_iter()).as_deref(), Some("pdf-tools"));
/// assert_eq!(skills_model::closest_name("zzz", ["pdf-tools"].into_iter()), None);
/// assert_eq!(skills_model::closest_name(&"pdf-tools".repeat(1000), ["pdf-tools"].into_iter()), None);
/// ```
pub fn closest_name<'a>(wanted: &str, names: impl Iterator<Item = &'a str>) -> Option<String> {
    let length = wanted.chars().count();
    if length > SUGGESTED_MAX {
        return None;
    }
    let limit = (length / 3).max(2);
    names
        // The distance is at least the difference of the lengths.
        .filter(|n| {
            let l = n.chars().count();
            l <= SUGGESTED_MAX && l.abs_diff(length) <= limit
        })
        .map(|n| (edit_distance(wanted, n), n))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, n)| n.to_owned())
}

/// The longest name, in characters, that [`closest_name`] suggests or finds a suggestion
/// for: twice the specification's longest name.
pub const SUGGESTED_MAX: usize = 2 * MAX_NAME_LEN;

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

impl fmt::Debug for SkillName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for SkillName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for SkillName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for SkillName {
    fn borrow(&self) -> &str {
        &self.0
    }
}

/// Why a lenient loader cannot index the skill under `name`, or `None` when it can: the one
/// home of [`SkillName::lenient`]'s rule.
fn lenient_problem(name: &str) -> Option<&'static str> {
    if name.is_ascii() {
        ascii_lenient_problem(name.as_bytes())
    } else {
        lenient_problem_in_chars(name)
    }
}

/// [`lenient_problem`] of an ASCII name, its bytes read once: a character is a byte, the
/// white space `trim` removes is six bytes, and the control characters are the bytes below
/// 0x20 and 0x7f. Every name a loader reads is asked this; by characters it was most of the
/// cost of taking a name from its frontmatter.
fn ascii_lenient_problem(bytes: &[u8]) -> Option<&'static str> {
    let space = |b: &u8| matches!(b, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ');
    let (Some(first), Some(last)) = (bytes.first(), bytes.last()) else {
        return Some("it is empty");
    };
    if bytes.len() > MAX_LENIENT_NAME_LEN {
        Some("it is over 256 characters")
    } else if space(first) || space(last) {
        Some("it has surrounding whitespace")
    } else if bytes.iter().fold(false, |found, &b| {
        // No early exit, so it compiles to vector code (a name holds none of these).
        found | (b < 0x20) | (b == 0x7f) | (b == b':') | (b == b'/') | (b == b'\\')
    }) {
        Some("it holds a control character, ':', '/' or '\\'")
    } else {
        None
    }
}

/// [`lenient_problem`] read by characters.
fn lenient_problem_in_chars(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("it is empty")
    } else if name.chars().count() > MAX_LENIENT_NAME_LEN {
        Some("it is over 256 characters")
    } else if name.trim() != name {
        Some("it has surrounding whitespace")
    } else if name
        .chars()
        .any(|c| c.is_control() || matches!(c, ':' | '/' | '\\'))
    {
        Some("it holds a control character, ':', '/' or '\\'")
    } else if !name.is_ascii() && name.chars().any(is_default_ignorable) {
        Some("it holds an invisible or bidirectional control character (a zero-width or joining character, a variation selector, a tag character, a filler, a direction override)")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_names_at_their_boundaries() {
        for ok in [
            "a",
            "1password",
            "pdf-processing",
            "a1-b2-c3",
            &"a".repeat(64),
        ] {
            assert!(SkillName::new(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "-pdf",
            "pdf-",
            "pdf--processing",
            "PDF",
            "my_skill",
            "my skill",
            "café",
            "技能",
            "ｐｄｆ",
            &"a".repeat(65),
        ] {
            assert!(SkillName::new(bad).is_err(), "{bad}");
        }
    }

    /// Every name of up to five characters from a few that matter gets the reason the rules
    /// read one by one give, in their order.
    #[test]
    fn spec_name_problem_gives_the_first_rule_broken() {
        fn by_rules(name: &str) -> Option<&'static str> {
            let bytes = name.as_bytes();
            if bytes.is_empty() {
                return Some("it is empty");
            }
            if name.chars().count() > MAX_NAME_LEN {
                return Some("it is over 64 characters");
            }
            if !bytes
                .iter()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
            {
                return Some("only lowercase ASCII letters, digits and hyphens are allowed");
            }
            if bytes[0] == b'-' || bytes[bytes.len() - 1] == b'-' {
                return Some("it must not start or end with a hyphen");
            }
            if bytes.windows(2).any(|pair| pair == b"--") {
                return Some("it must not contain consecutive hyphens");
            }
            None
        }
        let alphabet = ["a", "1", "-", "A", "_", "é"];
        let mut names = vec![String::new()];
        let mut all = vec![String::new()];
        for _ in 0..5 {
            names = names
                .iter()
                .flat_map(|n| alphabet.iter().map(move |c| format!("{n}{c}")))
                .collect();
            all.extend(names.iter().cloned());
        }
        all.extend([
            "a".repeat(64),
            "a".repeat(65),
            format!("{}--", "a".repeat(63)),
        ]);
        all.push(format!("-{}", "é".repeat(64)));
        // Across the eight-byte words the bytes are read in: each byte next to an allowed
        // range's ends, and a pair of hyphens, at every place of names up to three words.
        for len in 1..=24 {
            for at in 0..len {
                for b in [
                    "`", "a", "z", "{", "/", "0", "9", ":", ",", "-", ".", "\u{7f}", "é",
                ] {
                    let mut name = "a".repeat(len);
                    name.replace_range(at..=at, b);
                    all.push(name.clone());
                    if at + 1 < len {
                        name.replace_range(at + b.len()..at + b.len() + 1, "-");
                        all.push(name);
                    }
                }
            }
        }
        for name in &all {
            assert_eq!(spec_name_problem(name), by_rules(name), "{name:?}");
        }
    }

    /// Each ASCII byte at the start, in the middle and at the end of a name, and names at
    /// the length limit: the byte reading gives what the reading by characters gives.
    #[test]
    fn ascii_names_are_judged_as_by_their_characters() {
        let mut names = vec![String::new(), "a".repeat(256), "a".repeat(257)];
        for b in 0u8..0x80 {
            let c = char::from(b);
            names.extend([
                format!("{c}"),
                format!("{c}ab"),
                format!("a{c}b"),
                format!("ab{c}"),
            ]);
        }
        for name in &names {
            assert_eq!(
                ascii_lenient_problem(name.as_bytes()),
                lenient_problem_in_chars(name),
                "{name:?}"
            );
        }
    }

    #[test]
    fn lenient_names_refuse_only_what_breaks_lookups() {
        assert!(SkillName::lenient("PDF Processing").is_ok());
        assert!(SkillName::lenient("技能").is_ok());
        for bad in [
            "",
            " x",
            "x ",
            "a:b",
            "a/b",
            "a\\b",
            "a\nb",
            "de\u{200B}ploy",
            "deploy\u{FE0F}",
            "deploy\u{E0064}",
            "deploy\u{3164}",
            "\u{202E}yolped",
        ] {
            assert!(SkillName::lenient(bad).is_err(), "{bad:?}");
        }
    }
}
