//! Unpacking an archive (`.tar.gz` or `.zip`), in memory and bounded, before anything is
//! written: every member must be a regular file (or a folder) at a plain relative path.
//! Refused: absolute paths, `..`, symbolic and hard links, devices, FIFOs and sockets, a
//! path given twice, more than [`MAX_ARCHIVE_FILES`] members, more than
//! [`MAX_UNPACKED_BYTES`] unpacked, and an archive without `SKILL.md` at its root. The
//! format is read from the bytes (gzip or zip magic), which the digest has already
//! verified.

use std::collections::BTreeMap;
use std::io::Read;

use skills_model::{RelPath, RelPathError};

use crate::Refusal;

/// The most members (files and folders) an archive may hold.
pub const MAX_ARCHIVE_FILES: usize = 2_000;
/// The most bytes an archive may unpack to, all files together.
pub const MAX_UNPACKED_BYTES: u64 = 64 << 20;

/// A skill's files: relative path → bytes, in path order.
pub type Files = BTreeMap<String, Vec<u8>>;

/// A refused member: its name as the archive gives it, and why.
pub type Refused = (String, Refusal);

/// The bounds an unpacking keeps (the defaults are the constants above).
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// The most members.
    pub files: usize,
    /// The most bytes unpacked.
    pub bytes: u64,
}

impl Default for Bounds {
    fn default() -> Bounds {
        Bounds {
            files: MAX_ARCHIVE_FILES,
            bytes: MAX_UNPACKED_BYTES,
        }
    }
}

/// Unpacks `bytes` (gzip-compressed tar, or zip) into memory under `bounds`.
pub fn unpack(bytes: &[u8], bounds: Bounds) -> Result<Files, Refused> {
    let mut taken = Taken {
        bounds,
        members: 0,
        bytes: 0,
        files: Files::new(),
    };
    if bytes.starts_with(&[0x1f, 0x8b]) {
        unpack_tar_gz(bytes, &mut taken)?;
    } else if bytes.starts_with(b"PK") {
        unpack_zip(bytes, &mut taken)?;
    } else {
        return Err((String::new(), corrupt("neither gzip nor zip")));
    }
    taken.finish()
}

/// What an unpacking has taken so far.
struct Taken {
    bounds: Bounds,
    members: usize,
    bytes: u64,
    files: Files,
}

impl Taken {
    /// Counts one member against the bound.
    fn count(&mut self, name: &str) -> Result<(), Refused> {
        self.members += 1;
        if self.members > self.bounds.files {
            return Err((name.to_owned(), Refusal::TooManyFiles(self.bounds.files)));
        }
        Ok(())
    }

    /// Reads a regular file's bytes, at most what the bound leaves.
    fn file(&mut self, name: &str, declared: u64, reader: &mut dyn Read) -> Result<(), Refused> {
        let path = plain(name)?;
        let left = self.bounds.bytes - self.bytes;
        let too_large = || (name.to_owned(), Refusal::TooLarge(self.bounds.bytes));
        if declared > left {
            return Err(too_large());
        }
        let mut data = Vec::new();
        reader
            .take(left + 1)
            .read_to_end(&mut data)
            .map_err(|e| (name.to_owned(), corrupt(&e.to_string())))?;
        if data.len() as u64 > left {
            return Err(too_large());
        }
        self.bytes += data.len() as u64;
        if self.files.insert(path, data).is_some() {
            return Err((name.to_owned(), Refusal::Duplicate));
        }
        Ok(())
    }

    /// The files, once no file stands where another's folder is and `SKILL.md` is there.
    fn finish(self) -> Result<Files, Refused> {
        for path in self.files.keys() {
            let mut at = 0;
            while let Some(slash) = path[at..].find('/') {
                at += slash;
                if self.files.contains_key(&path[..at]) {
                    return Err((path.clone(), Refusal::Duplicate));
                }
                at += 1;
            }
        }
        if !self.files.contains_key(skills_storage::SKILL_FILE) {
            return Err((skills_storage::SKILL_FILE.to_owned(), Refusal::NoSkillFile));
        }
        Ok(self.files)
    }
}

fn corrupt(why: &str) -> Refusal {
    Refusal::Corrupt(why.to_owned())
}

/// A member's name as a plain relative path (`./a/b` is `a/b`), or why not.
fn plain(name: &str) -> Result<String, Refused> {
    let refused = |reason| (name.to_owned(), reason);
    if name.starts_with('/') || name.starts_with('\\') || name.get(1..2) == Some(":") {
        return Err(refused(Refusal::Absolute));
    }
    match RelPath::file(name) {
        Ok(path) => Ok(path.as_str().to_owned()),
        Err(RelPathError::Absolute | RelPathError::NotPlain) => Err(refused(Refusal::Absolute)),
        Err(RelPathError::Parent) => Err(refused(Refusal::Parent)),
        Err(_) => Err(refused(Refusal::NotPlain)),
    }
}

/// A folder member: the archive's root (`./`), or a plain relative path.
fn folder(name: &str) -> Result<(), Refused> {
    let trimmed = name.trim_end_matches('/');
    if name.starts_with(['/', '\\']) {
        return Err((name.to_owned(), Refusal::Absolute));
    }
    if trimmed.is_empty() || trimmed == "." {
        return Ok(());
    }
    plain(trimmed)
        .map(drop)
        .map_err(|(_, why)| (name.to_owned(), why))
}

fn unpack_tar_gz(bytes: &[u8], taken: &mut Taken) -> Result<(), Refused> {
    use tar::EntryType;
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(bytes));
    let entries = archive
        .entries()
        .map_err(|e| (String::new(), corrupt(&e.to_string())))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| (String::new(), corrupt(&e.to_string())))?;
        let raw = entry.path_bytes();
        let name = std::str::from_utf8(&raw)
            .map_err(|_| {
                (
                    String::from_utf8_lossy(&raw).into_owned(),
                    Refusal::NotPlain,
                )
            })?
            .to_owned();
        taken.count(&name)?;
        let refused = |reason| Err((name.clone(), reason));
        match entry.header().entry_type() {
            EntryType::Regular | EntryType::Continuous => {
                let size = entry.size();
                taken.file(&name, size, &mut entry)?;
            }
            EntryType::Directory => folder(&name)?,
            EntryType::XGlobalHeader => {}
            EntryType::Symlink => return refused(Refusal::Symlink),
            EntryType::Link => return refused(Refusal::HardLink),
            EntryType::Char => return refused(Refusal::Special("a character device")),
            EntryType::Block => return refused(Refusal::Special("a block device")),
            EntryType::Fifo => return refused(Refusal::Special("a FIFO")),
            _ => return refused(Refusal::Special("a member of an unknown kind")),
        }
    }
    Ok(())
}

/// The member a refusal of the whole central directory names.
const DIRECTORY: &str = "(central directory)";

/// The number of entries a zip's end-of-central-directory record declares, when it has one
/// (not a zip64 one, whose count is elsewhere).
fn declared_entries(bytes: &[u8]) -> Option<usize> {
    let tail = bytes.len().saturating_sub(22 + usize::from(u16::MAX));
    let at = (tail..bytes.len().saturating_sub(21))
        .rev()
        .find(|&i| bytes[i..].starts_with(b"PK\x05\x06"))?;
    let count = u16::from_le_bytes([bytes[at + 10], bytes[at + 11]]);
    (count != u16::MAX).then_some(usize::from(count))
}

/// The file type bits of a Unix mode.
const S_IFMT: u32 = 0o170_000;

fn unpack_zip(bytes: &[u8], taken: &mut Taken) -> Result<(), Refused> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .map_err(|e| (String::new(), corrupt(&e.to_string())))?;
    if zip.len() > taken.bounds.files {
        return Err((String::new(), Refusal::TooManyFiles(taken.bounds.files)));
    }
    // The reader keeps one member of a name given twice: count the directory's own.
    if declared_entries(bytes).is_some_and(|n| n != zip.len()) {
        return Err((DIRECTORY.to_owned(), Refusal::Duplicate));
    }
    for i in 0..zip.len() {
        let mut member = zip
            .by_index(i)
            .map_err(|e| (format!("#{i}"), corrupt(&e.to_string())))?;
        let name = member.name().to_owned();
        taken.count(&name)?;
        let refused = |reason| Err((name.clone(), reason));
        match member.unix_mode().map(|m| m & S_IFMT) {
            Some(0o120_000) => return refused(Refusal::Symlink),
            Some(0o020_000) => return refused(Refusal::Special("a character device")),
            Some(0o060_000) => return refused(Refusal::Special("a block device")),
            Some(0o010_000) => return refused(Refusal::Special("a FIFO")),
            Some(0o140_000) => return refused(Refusal::Special("a socket")),
            _ => {}
        }
        if member.is_dir() {
            folder(&name)?;
            continue;
        }
        let size = member.size();
        taken.file(&name, size, &mut member)?;
    }
    Ok(())
}
