//! Lookalike names: when a reader could take one skill's name for another's, and which of
//! the two keeps it. The one home of that rule (SECURITY.md, promise 21); the snapshot
//! applies it to every catalogue it builds.
//!
//! Two different names are lookalikes when
//! - both are ASCII and they differ only by case and by `_` or a space for `-`
//!   (`Deploy`, `git_helper` against `deploy`, `git-helper`), or
//! - either has a character outside ASCII and they share a confusable form: Unicode
//!   compatibility normalisation (NFKC: fullwidth and mathematical letters, `ℓ`, `ⅼ`),
//!   then the confusables skeleton of Unicode's security mechanisms (UTS #39), folded to
//!   lower case (`dеploy` with a Cyrillic `е`, `𝐝𝐞𝐩𝐥𝐨𝐲`).
//!
//! The skeleton also folds ASCII into ASCII (`rn` and `m`, `0` and `O`), so it never
//! decides between two ASCII names: `modem` and `modern` stay two skills. Characters no
//! reader sees (default-ignorable ones, bidirectional controls) are not folded here: a name
//! holding one is refused outright (`skills_model::SkillName::lenient`).
//!
//! The skeleton lives here, not in `skills-model` with the name type: the model depends on
//! `serde` and `thiserror` alone, and the confusables table is Unicode's data, not ours.

use std::borrow::Cow;

use unicode_normalization::UnicodeNormalization;

use crate::Map;

/// The form an ASCII name shares with the ASCII names a reader could take it for: lower
/// case, `_` and spaces read as `-`.
pub(crate) fn ascii_form(name: &str) -> Cow<'_, str> {
    // A name already in that form (every name the specification admits is) is its own.
    if !name
        .bytes()
        .any(|b| b.is_ascii_uppercase() || b == b'_' || b == b' ')
    {
        return Cow::Borrowed(name);
    }
    Cow::Owned(
        name.chars()
            .map(|c| match c {
                '_' | ' ' => '-',
                c => c.to_ascii_lowercase(),
            })
            .collect(),
    )
}

/// The form any name shares with its lookalikes once a character outside ASCII is
/// involved: NFKC, `_` and white space read as `-`, then the UTS #39 skeleton, lower case,
/// and the skeleton again (a capital's prototype may be a capital: `Ε` Greek, `E`).
pub(crate) fn confusable_form(name: &str) -> String {
    let plain: String = name
        .nfkc()
        .map(|c| {
            if c == '_' || c.is_whitespace() {
                '-'
            } else {
                c
            }
        })
        .collect();
    let lower: String = unicode_security::skeleton(&plain)
        .flat_map(char::to_lowercase)
        .collect();
    unicode_security::skeleton(&lower).collect()
}

/// Whether a reader could take one of two different names for the other.
#[cfg(test)]
fn lookalikes(a: &str, b: &str) -> bool {
    let mut kept = Kept::new(!a.is_ascii() || !b.is_ascii());
    kept.keep(a, None);
    kept.lookalike_of(b, None).is_some()
}

/// The names kept so far, by the forms a later name is compared in.
pub(crate) struct Kept<'a> {
    /// ASCII form → the ASCII name kept with it.
    ascii: Map<Cow<'a, str>, &'a str>,
    /// Confusable form → the names kept with it (two ASCII names may share one). Empty
    /// when every name is ASCII.
    confusable: Map<String, Vec<&'a str>>,
    /// Whether any name of the catalogue is outside ASCII (else no confusable form is made).
    any_non_ascii: bool,
}

impl<'a> Kept<'a> {
    /// An empty set, for a catalogue that has a name outside ASCII or not.
    pub(crate) fn new(any_non_ascii: bool) -> Kept<'a> {
        Kept {
            ascii: Map::new(),
            confusable: Map::new(),
            any_non_ascii,
        }
    }

    /// Keeps `name`, whose confusable form is `form` (made here when `None` and needed).
    pub(crate) fn keep(&mut self, name: &'a str, form: Option<&str>) {
        if name.is_ascii() {
            self.ascii.entry(ascii_form(name)).or_insert(name);
        }
        if self.any_non_ascii {
            let form = form.map_or_else(|| confusable_form(name), str::to_owned);
            let names = self.confusable.entry(form).or_default();
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }

    /// The kept name that `name` (of confusable form `form`, made here when `None` and
    /// needed) is a lookalike of, if any.
    pub(crate) fn lookalike_of(&self, name: &str, form: Option<&str>) -> Option<&'a str> {
        let ascii = name.is_ascii();
        if ascii {
            if let Some(other) = self
                .ascii
                .get(ascii_form(name).as_ref())
                .filter(|o| **o != name)
            {
                return Some(other);
            }
        }
        if !self.any_non_ascii {
            return None;
        }
        let form = form.map_or_else(|| confusable_form(name), str::to_owned);
        // An ASCII name is compared with the non-ASCII names only: between two ASCII
        // names the ASCII rule alone decides.
        self.confusable
            .get(&form)?
            .iter()
            .find(|o| **o != name && !(ascii && o.is_ascii()))
            .copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookalikes_by_unicode_s_confusables_and_ascii_pairs_by_case_and_separators() {
        // (a, b, lookalikes?)
        let cases = [
            ("deploy", "Deploy", true),
            ("git-helper", "git_helper", true),
            ("deploy", "d\u{0435}ploy", true),
            ("deploy", "DΕPLOY", true),
            (
                "deploy",
                "\u{1D41D}\u{1D41E}\u{1D429}\u{1D425}\u{1D428}\u{1D432}",
                true,
            ),
            ("deploy", "dep\u{2113}oy", true),
            ("deploy", "dep\u{217C}oy", true),
            ("deploy", "ｄｅｐｌｏｙ", true),
            ("deploy", "de\u{2010}ploy", false),
            ("de-ploy", "de\u{2010}ploy", true),
            ("modem", "modern", false),
            ("modern", "mod\u{0435}rn", true),
            ("modem", "mod\u{0435}rn", true),
            ("c0de", "cOde", false),
            ("deploy", "deploys", false),
            ("deploy", "déploy", false),
        ];
        for (a, b, want) in cases {
            assert_eq!(lookalikes(a, b), want, "{a:?} {b:?}");
            assert_eq!(lookalikes(b, a), want, "{b:?} {a:?}");
        }
    }
}
