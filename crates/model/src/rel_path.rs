//! `RelPath`: a path relative to a skill folder or a source's root, checked once. The one
//! rule for such paths: not absolute, no `..`, no NUL, no backslash, each part a plain
//! name; `.` and empty parts are dropped, and the path is kept `/`-separated.

use std::borrow::Cow;
use std::path::{Component, Path};

use thiserror::Error;

/// Why a path is not a [`RelPath`]. The messages are for a model to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum RelPathError {
    /// Nothing at all.
    #[error("the path is empty")]
    Empty,
    /// A NUL byte.
    #[error("the path holds a NUL byte")]
    Nul,
    /// Starts at a root (`/`, `\`).
    #[error("absolute paths are refused: give a path relative to the skill folder")]
    Absolute,
    /// A part the platform reads as more than a plain name (a Windows drive).
    #[error("absolute paths are refused")]
    NotPlain,
    /// A `..` part.
    #[error("`..` is refused: paths stay inside the skill folder")]
    Parent,
    /// A backslash: a separator on one platform, a name's character on another.
    #[error("a backslash is refused: separate folders with `/`")]
    Backslash,
    /// Only `.` and empty parts: no file named.
    #[error("the path names no file")]
    NoFile,
}

impl RelPathError {
    /// A stable code for programs.
    pub fn code(&self) -> &'static str {
        match self {
            RelPathError::Empty => "PATH_EMPTY",
            RelPathError::Nul => "PATH_NUL",
            RelPathError::Absolute | RelPathError::NotPlain => "PATH_ABSOLUTE",
            RelPathError::Parent => "PATH_PARENT",
            RelPathError::Backslash => "PATH_BACKSLASH",
            RelPathError::NoFile => "PATH_NO_FILE",
        }
    }
}

/// A checked relative path in canonical form: plain-name parts joined by `/`, no leading
/// or trailing `/`; `""` is the root itself ([`RelPath::folder`] only). Borrows the text it
/// was checked from when that was canonical already.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RelPath<'a> {
    path: Cow<'a, str>,
}

impl<'a> RelPath<'a> {
    /// A path naming a file (or folder) below the root: at least one part.
    pub fn file(path: &'a str) -> Result<RelPath<'a>, RelPathError> {
        if path.is_empty() {
            return Err(RelPathError::Empty);
        }
        let rel = RelPath::folder(path)?;
        if rel.path.is_empty() {
            return Err(RelPathError::NoFile);
        }
        Ok(rel)
    }

    /// A path of a folder, the root (`""`, `.`) included.
    pub fn folder(path: &'a str) -> Result<RelPath<'a>, RelPathError> {
        // NUL and backslash looked for in one pass with no early exit, which compiles to
        // vector code (a path is short, and most hold neither); refused in this order.
        let (nul, backslash) = path
            .bytes()
            .fold((false, false), |(n, b), c| (n | (c == 0), b | (c == b'\\')));
        if nul {
            return Err(RelPathError::Nul);
        }
        if path.starts_with(['/', '\\']) || Path::new(path).is_absolute() {
            return Err(RelPathError::Absolute);
        }
        if backslash {
            return Err(RelPathError::Backslash);
        }
        // Every part a name: the loop below would keep the path as it is (most paths).
        if cfg!(unix) && names_only(path.as_bytes()) {
            return Ok(RelPath {
                path: Cow::Borrowed(path),
            });
        }
        let mut out: Option<String> = None;
        let mut end = 0;
        for part in path.split('/') {
            let start = end;
            end = start + part.len() + 1;
            if part.is_empty() || part == "." {
                // The first part left out: from here on the canonical form is a copy.
                out.get_or_insert_with(|| path[..start.saturating_sub(1)].to_owned());
                continue;
            }
            if part == ".." {
                return Err(RelPathError::Parent);
            }
            // On Unix a part with no `/`, not `.` or `..`, is always a plain name; elsewhere
            // the platform may read one as more (a Windows drive, `C:`).
            if !cfg!(unix) {
                let mut components = Path::new(part).components();
                if !matches!(
                    (components.next(), components.next()),
                    (Some(Component::Normal(_)), None)
                ) {
                    return Err(RelPathError::NotPlain);
                }
            }
            if let Some(out) = &mut out {
                if !out.is_empty() {
                    out.push('/');
                }
                out.push_str(part);
            }
        }
        Ok(RelPath {
            path: out.map_or(Cow::Borrowed(path), Cow::Owned),
        })
    }

    /// The path, `/`-separated (`""` for the root).
    pub fn as_str(&self) -> &str {
        &self.path
    }

    /// Its parts, in order (none for the root).
    pub fn parts(&self) -> Vec<&str> {
        self.path.split('/').filter(|p| !p.is_empty()).collect()
    }

    /// The canonical text, borrowed where it could be.
    pub fn into_cow(self) -> Cow<'a, str> {
        self.path
    }
}

/// Whether every `/`-separated part of `bytes` is a name: not empty, not `.` and not `..`.
/// Such bytes are already the path their parts join to: nothing to drop or resolve. Looked
/// for as a doubled separator and as dots (vector searches), each dot then judged where it
/// is: splitting every path searched for each separator in turn, a few hundred
/// instructions a path, and an index asks this of every skill's folder and file.
///
/// ```
/// assert!(skills_model::names_only(b"owner/repo/skills/pdf"));
/// assert!(!skills_model::names_only(b"a//b"));
/// assert!(!skills_model::names_only(b"./a"));
/// assert!(!skills_model::names_only(b"a/.."));
/// assert!(!skills_model::names_only(b""));
/// ```
pub fn names_only(bytes: &[u8]) -> bool {
    static DOUBLE: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"//"));
    let (Some(first), Some(last)) = (bytes.first(), bytes.last()) else {
        return false;
    };
    if *first == b'/' || *last == b'/' || DOUBLE.find(bytes).is_some() {
        return false;
    }
    // No part is empty. A part is `.` or `..` only where a dot starts one and the part
    // ends one or two dots on: each dot (a path holds few) is looked at where it is.
    memchr::memchr_iter(b'.', bytes).all(|i| {
        let starts_part = i == 0 || bytes.get(i - 1) == Some(&b'/');
        let after = bytes.get(i + 1..).unwrap_or_default();
        !starts_part || !matches!(after, [] | [b'/', ..] | [b'.'] | [b'.', b'/', ..])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_rule_for_relative_paths() {
        let ok = |p: &str| RelPath::file(p).map(|r| r.as_str().to_owned());
        assert_eq!(ok("references/a.md").as_deref(), Ok("references/a.md"));
        assert_eq!(ok("./references//a.md/").as_deref(), Ok("references/a.md"));
        assert_eq!(ok(""), Err(RelPathError::Empty));
        assert_eq!(ok("."), Err(RelPathError::NoFile));
        assert_eq!(ok("a\0b"), Err(RelPathError::Nul));
        assert_eq!(ok("/etc/passwd"), Err(RelPathError::Absolute));
        assert_eq!(ok("\\etc"), Err(RelPathError::Absolute));
        assert_eq!(ok("references/../../x"), Err(RelPathError::Parent));
        assert_eq!(ok("references\\a.md"), Err(RelPathError::Backslash));
        // Which refusal comes first when a path breaks several rules.
        assert_eq!(ok("/a\0b"), Err(RelPathError::Nul));
        assert_eq!(ok("a\\b\0"), Err(RelPathError::Nul));
        assert_eq!(ok("/a\\b"), Err(RelPathError::Absolute));
        assert_eq!(ok("a\\b/../c"), Err(RelPathError::Backslash));
        // Parts that only look like `.` or `..` are plain names.
        assert_eq!(ok("a/.../..b/b..").as_deref(), Ok("a/.../..b/b.."));
        assert_eq!(ok("a/b/.."), Err(RelPathError::Parent));
        assert_eq!(RelPath::folder(".").map(|r| r.parts().len()), Ok(0));
        assert!(matches!(
            RelPath::folder("a/b").map(RelPath::into_cow),
            Ok(Cow::Borrowed("a/b"))
        ));
    }

    /// Every path of up to four bytes from `a`, `.` and `/`: `names_only` is the split
    /// into parts, each a name.
    #[test]
    fn names_only_is_every_part_a_name() {
        let mut paths = vec![String::new()];
        let mut all = vec![String::new()];
        for _ in 0..4 {
            paths = paths
                .iter()
                .flat_map(|p| ["a", ".", "/"].map(|c| format!("{p}{c}")))
                .collect();
            all.extend(paths.iter().cloned());
        }
        for path in &all {
            let by_parts = path
                .split('/')
                .all(|part| !part.is_empty() && part != "." && part != "..");
            assert_eq!(super::names_only(path.as_bytes()), by_parts, "{path:?}");
        }
    }
}
