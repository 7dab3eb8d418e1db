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
///   characters, `:` (it separates a qualified name's layer), `/` and `\`.
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
        let reason = if name.is_empty() {
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
        } else {
            None
        };
        match reason {
            Some(reason) => Err(ModelError::InvalidName {
                name: name.to_owned(),
                reason,
            }),
            None => Ok(SkillName(name.into())),
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
    let allowed = bytes
        .iter()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-');
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
    if bytes.windows(2).any(|pair| pair == b"--") {
        return Some("it must not contain consecutive hyphens");
    }
    None
}

/// The form two names share when a reader could take one for the other: lower case,
/// `_` and spaces read as `-`, invisible characters (zero-width spaces and joiners, soft
/// hyphens, byte-order marks) dropped, fullwidth ASCII made ASCII, and the Cyrillic and
/// Greek letters that look like Latin ones made Latin. Two different names with the same
/// skeleton are lookalikes.
///
/// ```
/// use skills_model::name_skeleton;
/// assert_eq!(name_skeleton("Deploy"), name_skeleton("deploy"));
/// assert_eq!(name_skeleton("d\u{0435}ploy"), "deploy"); // Cyrillic е
/// assert_eq!(name_skeleton("de\u{200B}ploy"), "deploy"); // zero-width space
/// assert_ne!(name_skeleton("deploy"), name_skeleton("deploys"));
/// ```
pub fn name_skeleton(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        let c = match c {
            '\u{00AD}' | '\u{200B}'..='\u{200F}' | '\u{2060}'..='\u{2064}' | '\u{FEFF}' => continue,
            '_' | ' ' | '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
            '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFF01 + 0x21).unwrap_or(c),
            _ => c,
        };
        for lower in c.to_lowercase() {
            out.push(match lower {
                'а' | 'α' => 'a',
                'в' | 'β' => 'b',
                'с' | 'ϲ' => 'c',
                'ԁ' => 'd',
                'е' | 'ε' => 'e',
                'һ' => 'h',
                'і' | 'ι' | 'ӏ' => 'i',
                'ј' => 'j',
                'к' | 'κ' => 'k',
                'м' => 'm',
                'п' | 'η' => 'n',
                'о' | 'ο' | 'σ' => 'o',
                'р' | 'ρ' => 'p',
                'ԛ' => 'q',
                'ѕ' => 's',
                'т' | 'τ' => 't',
                'υ' | 'ս' => 'u',
                'ν' | 'ѵ' => 'v',
                'ԝ' | 'ω' => 'w',
                'х' | 'χ' => 'x',
                'у' | 'γ' => 'y',
                'ᴢ' => 'z',
                other => other,
            });
        }
    }
    out
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

    #[test]
    fn lenient_names_refuse_only_what_breaks_lookups() {
        assert!(SkillName::lenient("PDF Processing").is_ok());
        assert!(SkillName::lenient("技能").is_ok());
        for bad in ["", " x", "x ", "a:b", "a/b", "a\\b", "a\nb"] {
            assert!(SkillName::lenient(bad).is_err(), "{bad:?}");
        }
    }
}
