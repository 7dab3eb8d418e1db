//! Unpacking refuses every member kind that could leave the skill folder or exhaust the
//! disk, in both formats (zip has no hard links; every other kind is refused in both), and
//! keeps a well-formed archive's files exactly.

use std::io::Write as _;

use skills_remote::{unpack, Bounds, Refusal};

/// A member of a test archive.
#[derive(Clone, Copy)]
enum Member<'a> {
    File(&'a str, &'a [u8]),
    Dir(&'a str),
    Symlink(&'a str, &'a str),
    HardLink(&'a str, &'a str),
    /// A special file: a tar entry type, or a Unix file-type mode for zip.
    Special(&'a str, tar::EntryType, u32),
}

const SKILL: Member<'static> = Member::File("SKILL.md", b"---\nname: s\ndescription: S.\n---\n");

/// Writes an archive of members.
type Make = fn(&[Member<'_>]) -> Vec<u8>;

/// A `.tar.gz` of `members`, names written byte for byte (no builder checks).
fn tar_gz(members: &[Member<'_>]) -> Vec<u8> {
    let mut out = tar::Builder::new(Vec::new());
    for member in members {
        let mut header = tar::Header::new_gnu();
        let (name, kind, data, link): (&str, tar::EntryType, &[u8], &str) = match *member {
            Member::File(n, d) => (n, tar::EntryType::Regular, d, ""),
            Member::Dir(n) => (n, tar::EntryType::Directory, b"", ""),
            Member::Symlink(n, t) => (n, tar::EntryType::Symlink, b"", t),
            Member::HardLink(n, t) => (n, tar::EntryType::Link, b"", t),
            Member::Special(n, k, _) => (n, k, b"", ""),
        };
        let gnu = header.as_gnu_mut().unwrap();
        gnu.name[..name.len()].copy_from_slice(name.as_bytes());
        gnu.linkname[..link.len()].copy_from_slice(link.as_bytes());
        header.set_entry_type(kind);
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        out.append(&header, data).unwrap();
    }
    let tar = out.into_inner().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&tar).unwrap();
    gz.finish().unwrap()
}

/// A `.zip` of `members`; a special file's mode is patched into its central directory
/// entry, as a hostile archiver would write it.
fn zip(members: &[Member<'_>]) -> Vec<u8> {
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default();
    let (mut specials, mut renames, mut written) = (Vec::new(), Vec::new(), Vec::new());
    for member in members {
        match *member {
            // The writer refuses a name twice: the second is written under a stand-in of
            // its length, renamed in the bytes below.
            Member::File(n, d) if written.contains(&n) => {
                let stand_in = "~".repeat(n.len());
                out.start_file(stand_in.as_str(), options).unwrap();
                out.write_all(d).unwrap();
                renames.push((stand_in, n));
            }
            Member::File(n, d) => {
                out.start_file(n, options).unwrap();
                out.write_all(d).unwrap();
                written.push(n);
            }
            Member::Dir(n) => out.add_directory(n, options).unwrap(),
            Member::Symlink(n, t) => out.add_symlink(n, t, options).unwrap(),
            Member::HardLink(..) => unreachable!("zip has no hard links"),
            Member::Special(n, _, mode) => {
                out.start_file(n, options).unwrap();
                specials.push((n, mode));
            }
        }
    }
    let mut bytes = out.finish().unwrap().into_inner();
    for (name, mode) in specials {
        patch_mode(&mut bytes, name, mode);
    }
    for (stand_in, name) in renames {
        for header in [&b"PK\x03\x04"[..], b"PK\x01\x02"] {
            let skip = if header[2] == 3 { 30 } else { 46 };
            let at = (0..bytes.len() - skip)
                .find(|&i| {
                    bytes[i..].starts_with(header)
                        && bytes[i + skip..].starts_with(stand_in.as_bytes())
                })
                .unwrap()
                + skip;
            bytes[at..at + name.len()].copy_from_slice(name.as_bytes());
        }
    }
    bytes
}

/// Sets the Unix mode of `name`'s central directory entry.
fn patch_mode(bytes: &mut [u8], name: &str, mode: u32) {
    let at = (0..bytes.len() - 46)
        .find(|&i| {
            bytes[i..i + 4] == *b"PK\x01\x02" && bytes[i + 46..].starts_with(name.as_bytes())
        })
        .unwrap();
    bytes[at + 5] = 3; // made by: Unix
    bytes[at + 38..at + 42].copy_from_slice(&((mode | 0o644) << 16).to_le_bytes());
}

/// Each case: what the archive holds, the member refused, and why.
fn refusals() -> Vec<(&'static str, Vec<Member<'static>>, &'static str, Refusal)> {
    vec![
        (
            "absolute",
            vec![SKILL, Member::File("/etc/cron.d/x", b"x")],
            "/etc/cron.d/x",
            Refusal::Absolute,
        ),
        (
            "dot-dot",
            vec![SKILL, Member::File("scripts/../../x", b"x")],
            "scripts/../../x",
            Refusal::Parent,
        ),
        (
            "dot-dot folder",
            vec![SKILL, Member::Dir("../up/")],
            "../up/",
            Refusal::Parent,
        ),
        (
            "symlink",
            vec![SKILL, Member::Symlink("link", "/etc/passwd")],
            "link",
            Refusal::Symlink,
        ),
        (
            "symlink inside",
            vec![SKILL, Member::Symlink("alias.md", "SKILL.md")],
            "alias.md",
            Refusal::Symlink,
        ),
        (
            "hard link",
            vec![SKILL, Member::HardLink("hard", "/etc/passwd")],
            "hard",
            Refusal::HardLink,
        ),
        (
            "character device",
            vec![
                SKILL,
                Member::Special("tty", tar::EntryType::Char, 0o020_000),
            ],
            "tty",
            Refusal::Special("a character device"),
        ),
        (
            "block device",
            vec![
                SKILL,
                Member::Special("sda", tar::EntryType::Block, 0o060_000),
            ],
            "sda",
            Refusal::Special("a block device"),
        ),
        (
            "fifo",
            vec![
                SKILL,
                Member::Special("pipe", tar::EntryType::Fifo, 0o010_000),
            ],
            "pipe",
            Refusal::Special("a FIFO"),
        ),
        (
            "duplicate",
            vec![SKILL, Member::File("a", b"1"), Member::File("a", b"2")],
            "a",
            Refusal::Duplicate,
        ),
        (
            "file under a file",
            vec![SKILL, Member::File("a", b"1"), Member::File("a/b", b"2")],
            "a/b",
            Refusal::Duplicate,
        ),
        (
            "no SKILL.md",
            vec![Member::File("README.md", b"x")],
            "SKILL.md",
            Refusal::NoSkillFile,
        ),
        (
            "SKILL.md not at the root",
            vec![Member::File("s/SKILL.md", b"x")],
            "SKILL.md",
            Refusal::NoSkillFile,
        ),
    ]
}

#[test]
fn every_refused_member_kind_is_refused_in_tar_gz_and_zip() {
    for (what, members, member, why) in refusals() {
        let formats: &[(&str, Make)] = if what == "hard link" {
            &[("tar.gz", tar_gz)]
        } else {
            &[("tar.gz", tar_gz), ("zip", zip)]
        };
        for (format, make) in formats {
            let got = unpack(&make(&members), Bounds::default());
            // The zip reader keeps one member of a name given twice: the count of the
            // central directory's entries gives it away.
            let member = match (*format, what) {
                ("zip", "duplicate") => "(central directory)",
                _ => member,
            };
            let expected = (member.to_owned(), why.clone());
            assert_eq!(got.map(|f| f.len()), Err(expected), "{what} in {format}");
        }
    }
}

#[test]
fn too_many_files_and_too_many_bytes_are_refused_in_both_formats() {
    let small = Bounds {
        files: 3,
        bytes: 1_000,
    };
    let many = [
        SKILL,
        Member::File("a", b"1"),
        Member::File("b", b"2"),
        Member::File("c", b"3"),
    ];
    let big = vec![b'x'; 2_000];
    let large = [SKILL, Member::File("big.bin", &big)];
    for (format, make) in [("tar.gz", tar_gz as Make), ("zip", zip)] {
        let (_, why) = unpack(&make(&many), small).unwrap_err();
        assert_eq!(why, Refusal::TooManyFiles(3), "{format}");
        let (member, why) = unpack(&make(&large), small).unwrap_err();
        assert_eq!(
            (member.as_str(), why),
            ("big.bin", Refusal::TooLarge(1_000)),
            "{format}"
        );
    }
}

/// A member that compresses a thousandfold (a decompression bomb) is held to the bound by
/// the bytes it unpacks to.
#[test]
fn the_bound_counts_unpacked_bytes_not_declared_sizes() {
    let zeros = vec![0u8; 1 << 20];
    let bytes = tar_gz(&[SKILL, Member::File("zeros", &zeros)]);
    assert!(bytes.len() < 4_096, "compresses well: {}", bytes.len());
    let (member, why) = unpack(
        &bytes,
        Bounds {
            files: 10,
            bytes: 100_000,
        },
    )
    .unwrap_err();
    assert_eq!(
        (member.as_str(), why),
        ("zeros", Refusal::TooLarge(100_000))
    );
}

#[test]
fn a_well_formed_archive_unpacks_to_its_files() {
    let members = [
        Member::Dir("./"),
        SKILL,
        Member::Dir("scripts/"),
        Member::File("./scripts/run.sh", b"echo hi\n"),
        Member::File("references/REF.md", b"ref"),
    ];
    for (format, make) in [("tar.gz", tar_gz as Make), ("zip", zip)] {
        let files = unpack(&make(&members), Bounds::default()).unwrap();
        let names: Vec<&str> = files.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            ["SKILL.md", "references/REF.md", "scripts/run.sh"],
            "{format}"
        );
        assert_eq!(files["scripts/run.sh"], b"echo hi\n");
    }
    let (_, why) = unpack(b"not an archive", Bounds::default()).unwrap_err();
    assert!(matches!(why, Refusal::Corrupt(_)));
}
