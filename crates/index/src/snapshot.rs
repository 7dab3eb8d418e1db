//! Snapshots: one immutable, internally consistent view of every root, with precedence
//! resolved. Readers hold an `Arc<Snapshot>`; nothing in it ever changes.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use rayon::iter::{IntoParallelRefIterator, ParallelIterator};
use rayon::slice::ParallelSliceMut;
use serde::Serialize;
use skills_model::{Diagnostic, Layer, Rule, Severity, SkillRecord};
use skills_storage::SkillSource;

use crate::search::{SearchIndex, SearchOutcome};
use crate::{Map, Table};

/// A diagnostic and the `SKILL.md` (or folder) it concerns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PathDiagnostic {
    /// The file or folder.
    pub path: PathBuf,
    /// The finding.
    #[serde(flatten)]
    pub diagnostic: Diagnostic,
}

/// The diagnostics of one file as a snapshot holds them: shared with the index's entry for
/// the file (or made by the snapshot's build), and the file named by the record whose path
/// it is, so a publication copies no message and no path ([`Snapshot::each_diagnostic`]).
#[derive(Debug, Clone)]
pub(crate) struct Findings {
    file: FileOf,
    list: Arc<[Diagnostic]>,
}

/// Where [`Findings`] take their file's path from.
#[derive(Debug, Clone)]
enum FileOf {
    /// The record's own path.
    Record(Arc<SkillRecord>),
    /// A file with no record of its own there (unreadable, or a last good record kept).
    Path(Arc<Path>),
}

impl Findings {
    /// `list`, about the file of `record`.
    pub(crate) fn of_record(record: &Arc<SkillRecord>, list: Arc<[Diagnostic]>) -> Findings {
        Findings {
            file: FileOf::Record(Arc::clone(record)),
            list,
        }
    }

    /// `list`, about `file`.
    pub(crate) fn at(file: &Path, list: Arc<[Diagnostic]>) -> Findings {
        Findings {
            file: FileOf::Path(file.into()),
            list,
        }
    }

    fn path(&self) -> &Path {
        match &self.file {
            FileOf::Record(record) => &record.path,
            FileOf::Path(path) => path,
        }
    }
}

/// A skill that lost its bare name to another.
#[derive(Debug, Clone)]
pub struct Shadowed {
    /// The losing skill.
    pub record: Arc<SkillRecord>,
    /// The qualified name of the skill that wins the name. Two skills of one layer share a
    /// qualified name: [`winner_path`](Shadowed::winner_path) tells them apart.
    pub shadowed_by: String,
    /// The winner's `SKILL.md`.
    pub winner_path: PathBuf,
    /// Whether no skill holds the bare name: two or more MCP servers serve it, no other
    /// origin does, and none takes it from another (each is reached by its qualified
    /// name). [`shadowed_by`](Shadowed::shadowed_by) then names a rival, not a winner.
    pub contested: bool,
}

/// Bare name → the index of the record that wins it: a table of indices whose keys are the
/// records' own names, so no name is copied (a `Box<str>` a skill, about 40 bytes of heap
/// and an allocation each, made on one thread). Keyed as [`Map`] is (the standard
/// library's keyed SipHash): names come from skill folders.
#[derive(Debug, Default)]
struct Names(Table<usize>);

impl Names {
    fn with_capacity(capacity: usize) -> Names {
        Names(Table::with_capacity(capacity))
    }

    /// Adds `records[i]`, whose name is not in the table yet.
    fn insert_new(&mut self, records: &[Arc<SkillRecord>], i: usize) {
        let Table { slots, keys } = &mut self.0;
        let hash = keys.hash(records[i].name.as_str());
        slots.insert_unique(hash, i, |&j| keys.hash(records[j].name.as_str()));
    }

    /// The index of the record that wins `name`.
    fn get(&self, records: &[Arc<SkillRecord>], name: &str) -> Option<usize> {
        self.0
            .slots
            .find(self.0.keys.hash(name), |&i| {
                records[i].name.as_str() == name
            })
            .copied()
    }
}

/// One published state of the index.
#[derive(Debug)]
pub struct Snapshot {
    generation: u64,
    /// Every indexed record, winners and losers.
    records: Vec<Arc<SkillRecord>>,
    /// Indices of the winners, sorted by name.
    resolved: Vec<usize>,
    by_name: Names,
    /// The first records of the names no skill holds (MCP servers' rivals: see
    /// [`Shadowed::contested`]), in name order.
    contested: Vec<usize>,
    shadowed: Vec<Shadowed>,
    /// Each file's diagnostics, as the publication gathered them (in no set order).
    findings: Vec<Findings>,
    /// The places of [`findings`](Self::findings) in the byte order of the files' paths,
    /// worked out when first asked for: a publication whose diagnostics nobody reads (most
    /// of a watcher's, every one of a host that never lists them) sorts nothing.
    findings_order: OnceLock<Vec<u32>>,
    /// [`findings`](Self::findings) one by one, made when first asked for
    /// ([`Snapshot::diagnostics`]).
    diagnostics: OnceLock<Vec<PathDiagnostic>>,
    /// Every root's source, with what its records carry (path prefix, layer, plugin).
    pub(crate) sources: Vec<RootPlace>,
    /// Layer precedence, highest first.
    order: [Layer; 4],
    /// The search index, built on first use or by the publication that follows a searched
    /// snapshot (see `search.rs`).
    pub(crate) search: OnceLock<Arc<SearchIndex>>,
    /// What a reader who sees every skill sees of the search index, which holds shadowed
    /// records too: the winners of their names ([`Snapshot::search`]).
    resolved_audience: crate::AudienceMemo,
    /// The index's reading threads, where its search index is built
    /// ([`crate::search::Build`]); held weakly, so the threads end with the index even
    /// while its snapshots live (a build after that runs where it is asked for).
    readers: std::sync::Weak<rayon::ThreadPool>,
    /// Whose needs this machine does not meet, as checked when it was published.
    availability: crate::available::Availability,
}

/// A root as the snapshot's readers need it: the prefix its skills' paths start with, its
/// layer and plugin, and the source its files are read through.
#[derive(Debug, Clone)]
pub(crate) struct RootPlace {
    pub(crate) base: PathBuf,
    pub(crate) layer: Layer,
    pub(crate) plugin: Option<Arc<str>>,
    pub(crate) source: Arc<dyn SkillSource>,
}

/// Where a skill's files are read: its root's source and the skill folder's path in it.
#[derive(Debug, Clone)]
pub struct SkillPlace {
    /// The source of the skill's root.
    pub source: Arc<dyn SkillSource>,
    /// The skill folder, relative to the source's root (`.` for the root itself).
    pub dir: String,
}

impl SkillPlace {
    /// A path of the source: `path` inside the skill folder.
    pub fn file(&self, path: &str) -> String {
        if self.dir == "." {
            path.to_owned()
        } else {
            format!("{}/{path}", self.dir)
        }
    }
}

/// Whether two records given to [`Snapshot::build`] may be one folder read through two
/// roots (one root's discovery lists each resolved folder once).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Folders {
    /// From one folder on disk, which one discovery lists with each resolved folder once:
    /// no two records share a path, and nothing is looked for.
    Distinct,
    /// From several roots: [`hold_once`] keeps one record per path.
    MayRepeat,
}

/// One folder under several roots is one skill, held by the highest layer: the records of
/// one resolved `SKILL.md` but the best-ranked are removed (no shadow entry: it is the same
/// skill, not a rival). Among roots of one rank, the first given holds it.
fn hold_once(records: &mut Vec<Arc<SkillRecord>>, rank: &dyn Fn(Layer) -> usize) {
    // Keyed by the path's bytes: resolved paths are spelled one way, and hashing a `Path`
    // walks its components (it was half of this function's time).
    let mut holder: Map<&std::ffi::OsStr, usize> = Map::with_capacity(records.len());
    let mut keep = vec![true; records.len()];
    for (i, r) in records.iter().enumerate() {
        match holder.get(r.path.as_os_str()) {
            None => {
                holder.insert(r.path.as_os_str(), i);
            }
            Some(&j) => {
                if rank(r.layer) < rank(records[j].layer) {
                    keep[j] = false;
                    holder.insert(r.path.as_os_str(), i);
                } else {
                    keep[i] = false;
                }
            }
        }
    }
    if keep.iter().all(|k| *k) {
        return;
    }
    let mut keep = keep.into_iter();
    records.retain(|_| keep.next().unwrap_or(true));
}

/// Removes the records whose name a reader could take for a kept one's (by case,
/// separators or confusable letters: [`crate::lookalike`]), with a `name.lookalike`
/// diagnostic each: a lookalike can neither shadow a skill nor be taken for it. A
/// specification name is always kept; the others are judged in precedence order (layer,
/// then `priority`, then path), each against the names kept before it. Two different
/// specification names are never lookalikes, so a catalogue of specification names (as
/// the precedence sort found while it read each name, `names`) costs nothing here.
fn drop_lookalikes(
    records: &mut Vec<Arc<SkillRecord>>,
    findings: &mut Vec<Findings>,
    rank: &dyn Fn(Layer) -> usize,
    names: SpecNames,
) {
    let SpecNames::NotAll(spec) = names else {
        return;
    };
    let any_non_ascii = records.iter().any(|r| !r.name.as_str().is_ascii());
    // Each name's confusable form, made once (on every core) when one is needed.
    let forms: Vec<Option<String>> = if any_non_ascii {
        records
            .par_iter()
            .map(|r| Some(crate::lookalike::confusable_form(r.name.as_str())))
            .collect()
    } else {
        vec![None; records.len()]
    };
    let mut others: Vec<usize> = (0..records.len()).filter(|i| !spec[*i]).collect();
    others.sort_by(|a, b| {
        let key = |r: &SkillRecord| (rank(r.layer), std::cmp::Reverse(r.frontmatter.priority));
        let (ra, rb) = (&records[*a], &records[*b]);
        key(ra).cmp(&key(rb)).then_with(|| ra.path.cmp(&rb.path))
    });
    let mut kept = crate::lookalike::Kept::new(any_non_ascii);
    if any_non_ascii {
        for ((r, form), spec) in records.iter().zip(&forms).zip(&spec) {
            if *spec {
                kept.keep(r.name.as_str(), form.as_deref());
            }
        }
    } else {
        // Every name in ASCII: a specification name is its own ASCII form, so it is found
        // only by another name of that form. Only the specification names the other names
        // take are kept, looked up by name in the records (sorted by name) rather than
        // every name hashed (a tenth of a build's snapshot on the real-world corpus).
        let sorted: &[Arc<SkillRecord>] = records;
        let mut taken: Vec<usize> = others
            .iter()
            .flat_map(|i| {
                let form = crate::lookalike::ascii_form(sorted[*i].name.as_str());
                let first = sorted.partition_point(|r| r.name.as_str() < form.as_ref());
                (first..sorted.len()).take_while(move |j| sorted[*j].name.as_str() == form)
            })
            .filter(|j| spec[*j])
            .collect();
        // In the records' order, as every name was kept before.
        taken.sort_unstable();
        taken.dedup();
        for j in taken {
            kept.keep(records[j].name.as_str(), None);
        }
    }
    let mut lookalike_of: Vec<Option<String>> = vec![None; records.len()];
    for i in others {
        let (name, form) = (records[i].name.as_str(), forms[i].as_deref());
        match kept.lookalike_of(name, form) {
            Some(other) => lookalike_of[i] = Some(other.to_owned()),
            None => kept.keep(name, form),
        }
    }
    drop(kept);
    let mut like = lookalike_of.into_iter();
    records.retain(|r| match like.next().flatten() {
        None => true,
        Some(other) => {
            let found = Diagnostic::new(
                Rule::NameLookalike,
                Severity::Warning,
                format!(
                    "the name {:?} looks like the skill {other:?} (it differs only by case, separators or lookalike letters), so it is not indexed: rename it",
                    r.name.as_str()
                ),
            );
            findings.push(Findings::of_record(r, Arc::from([found])));
            false
        }
    });
}

/// Sorts `records` by precedence.
fn sort_by_precedence(
    records: &mut [Arc<SkillRecord>],
    rank: &(impl Fn(Layer) -> usize + Sync),
    registered: &[String],
) -> SpecNames {
    // Grouped by name; inside a group the winner first: layer, then priority (higher
    // first), then path. A qualified name is found by scanning its name's group, so no
    // second map (and no qualified-name strings) is kept.
    // On every core: at 10,000 skills this sort was the largest serial part of a build.
    // Unstable, so without a merge buffer: no two records share a path (one file is one
    // record: `hold_once` across roots, the publication within one), so no two are
    // equal and the order is the stable sort's.
    // A skill of a plugin registered for a plugin manager ranks below every other of
    // its layer: its `priority` cannot take a name from the host's own plugins.
    let lesser = |r: &SkillRecord| {
        !registered.is_empty()
            && r.plugin
                .as_deref()
                .is_some_and(|p| registered.iter().any(|id| id == p))
    };
    // A skill from an MCP server never takes a bare name a skill of another origin holds
    // (MCP's skills extension: no silent shadowing); it is listed as shadowed and reached
    // by its qualified name.
    let whole = |a: &SkillRecord, b: &SkillRecord| {
        (
            a.name.as_str(),
            from_mcp(a),
            rank(a.layer),
            lesser(a),
            std::cmp::Reverse(a.frontmatter.priority),
            a.path.as_os_str(),
        )
            .cmp(&(
                b.name.as_str(),
                from_mcp(b),
                rank(b.layer),
                lesser(b),
                std::cmp::Reverse(b.frontmatter.priority),
                b.path.as_os_str(),
            ))
    };
    // Sorted by the first bytes of each name held beside its place, the rest compared
    // only where those are equal: comparing records themselves reached three allocations a
    // side (record, name, frontmatter), a cache miss each, and cost a build at 10,000
    // skills about 5 ms of its threads. Twenty-eight bytes and a place are 32 bytes a
    // record, held while the snapshot is built (3.2 MB at 100,000 skills, under the peak
    // the bench gates); names often share their first sixteen (`analyze-analyze-01522`).
    // An empty catalogue (the snapshot before the first scan) asks no thread pool: outside
    // the index's reading threads that would start rayon's global one.
    if records.is_empty() {
        return SpecNames::All;
    }
    // While each name's bytes are read for its key, whether it meets the specification
    // (the lookalike pass then reads no name again when all do). On one thread, with the
    // records and names ahead asked for: each is a cache miss or two, written by another
    // thread, and a parallel pass that waited on them took 2.3x as long (2 cores, 1,745 and
    // 10,000 skills; in chunks of 512 with the same hints, 1.4x to 1.7x).
    let mut keyed: Vec<(NameKey, u32)> = Vec::with_capacity(records.len());
    let mut spec: Vec<bool> = Vec::with_capacity(records.len());
    for (i, r) in records.iter().enumerate() {
        warm_names_ahead(records, i);
        keyed.push((
            name_key(r.name.as_str()),
            u32::try_from(i).unwrap_or(u32::MAX),
        ));
        spec.push(r.name.is_spec_valid());
    }
    let held: &[Arc<SkillRecord>] = records;
    keyed.par_sort_unstable_by(|(ka, a), (kb, b)| {
        key_order(ka, kb).then_with(|| whole(&held[*a as usize], &held[*b as usize]))
    });
    let names = if spec.iter().all(|s| *s) {
        SpecNames::All
    } else {
        // In the sorted order, before `permute` uses up the places.
        SpecNames::NotAll(
            keyed
                .iter()
                .map(|(_, i)| spec.get(*i as usize).copied().unwrap_or(false))
                .collect(),
        )
    };
    permute(records, &mut keyed);
    names
}

/// Whether every name of a catalogue meets the specification, as its precedence sort
/// found while it read them.
#[derive(Debug, Clone, PartialEq, Eq)]
enum SpecNames {
    All,
    /// Not every one: whether each does, in the sorted records' order.
    NotAll(Vec<bool>),
}

/// Asks the processor to start loading what reading the name of a record further on
/// touches, in two stages (as the search build does): the record eight places on, and four
/// on, its name's bytes. A hint only.
fn warm_names_ahead(records: &[Arc<SkillRecord>], i: usize) {
    if let Some(record) = records.get(i + 8) {
        crate::warm::warm(&**record);
    }
    if let Some(first) = records
        .get(i + 4)
        .and_then(|r| r.name.as_str().as_bytes().first())
    {
        crate::warm::warm(first);
    }
}

/// Puts `records` in the order `keyed` gives (each entry the place of the record that
/// belongs at its position), in place, a cycle at a time; `keyed` is used up.
fn permute<T>(records: &mut [T], keyed: &mut [(NameKey, u32)]) {
    const DONE: u32 = u32::MAX;
    for start in 0..keyed.len() {
        let mut at = start;
        loop {
            let from = std::mem::replace(&mut keyed[at].1, DONE);
            if from == DONE || from as usize == start {
                break;
            }
            records.swap(at, from as usize);
            at = from as usize;
        }
    }
}

/// The places of `findings` in the byte order of their files' paths, stably (a file's own
/// findings keep theirs): the parallel load finishes folders in any order, and listings
/// must not change from run to run. Each path's bytes are held beside its place, so a
/// comparison reads them directly, not through the finding's record.
fn path_order(findings: &[Findings]) -> Vec<u32> {
    let mut keyed: Vec<(&[u8], u32)> = findings
        .iter()
        .enumerate()
        .map(|(i, f)| {
            (
                f.path().as_os_str().as_encoded_bytes(),
                u32::try_from(i).unwrap_or(u32::MAX),
            )
        })
        .collect();
    keyed.sort_unstable();
    keyed.into_iter().map(|(_, i)| i).collect()
}

/// The first 28 bytes of a name, zero-padded: ordered as the names are.
type NameKey = [u8; 28];

/// Two keys' byte order, as three big-endian numbers compared in turn: the same order as
/// comparing the bytes, in a few instructions where comparing the bytes calls `memcmp` (the
/// sort of 10,000 names took 7.7 million instructions with it, 6.0 million with this).
fn key_order(a: &NameKey, b: &NameKey) -> std::cmp::Ordering {
    let parts = |k: &NameKey| {
        let mut high = [0u8; 16];
        let mut mid = [0u8; 8];
        let mut low = [0u8; 4];
        high.copy_from_slice(&k[..16]);
        mid.copy_from_slice(&k[16..24]);
        low.copy_from_slice(&k[24..]);
        (
            u128::from_be_bytes(high),
            u64::from_be_bytes(mid),
            u32::from_be_bytes(low),
        )
    };
    parts(a).cmp(&parts(b))
}

/// The [`NameKey`] of `name`: where two keys differ their names differ the same way (a
/// name that is a prefix of another is padded with zeros, below any byte of a name but a
/// zero); equal keys say nothing.
fn name_key(name: &str) -> NameKey {
    let mut key = [0u8; 28];
    let n = name.len().min(key.len());
    key[..n].copy_from_slice(&name.as_bytes()[..n]);
    key
}

/// Whether a record comes from an MCP server.
fn from_mcp(r: &SkillRecord) -> bool {
    r.remote
        .as_ref()
        .is_some_and(|o| o.kind() == skills_model::RemoteKind::Mcp)
}

/// Whether no record of one name's group (sorted by precedence) takes the bare name: its
/// first is an MCP server's (so no other origin serves the name: those sort first) and
/// another server serves it too. Which server ranks first is the host's placement, not a
/// claim either server can prove, so neither takes the name from the other.
fn is_contested(group: &[Arc<SkillRecord>]) -> bool {
    group
        .first()
        .is_some_and(|first| from_mcp(first) && group[1..].iter().any(|r| r.remote != first.remote))
}

/// The sorted records' name lookup, winners (by place), the names no skill holds
/// ([`is_contested`]) and the shadowed, each with the winner of its name (or, for a
/// contested name, a rival of another server).
fn group_by_name(records: &[Arc<SkillRecord>]) -> (Names, Vec<usize>, Vec<usize>, Vec<Shadowed>) {
    let mut by_name = Names::with_capacity(records.len());
    let mut resolved = Vec::new();
    let mut contested = Vec::new();
    let mut shadowed = Vec::new();
    let mut start = 0;
    while start < records.len() {
        warm_names_ahead(records, start);
        let name = &records[start].name;
        let end = start
            + records[start..]
                .iter()
                .take_while(|r| &r.name == name)
                .count();
        let group = &records[start..end];
        by_name.insert_new(records, start);
        if is_contested(group) {
            contested.push(start);
            for record in group {
                let Some(rival) = group.iter().find(|r| r.remote != record.remote) else {
                    continue;
                };
                shadowed.push(Shadowed {
                    record: Arc::clone(record),
                    shadowed_by: rival.qualified_name(),
                    winner_path: rival.path.clone(),
                    contested: true,
                });
            }
        } else {
            resolved.push(start);
            for record in &group[1..] {
                shadowed.push(Shadowed {
                    record: Arc::clone(record),
                    shadowed_by: group[0].qualified_name(),
                    winner_path: group[0].path.clone(),
                    contested: false,
                });
            }
        }
        start = end;
    }
    (by_name, resolved, contested, shadowed)
}

impl Snapshot {
    /// Resolves precedence over `records`. `order` ranks layers (index 0 wins).
    pub(crate) fn build(
        generation: u64,
        mut records: Vec<Arc<SkillRecord>>,
        mut findings: Vec<Findings>,
        order: &[Layer; 4],
        folders: Folders,
        registered: &[String],
    ) -> Snapshot {
        let rank = |layer: Layer| {
            order
                .iter()
                .position(|l| *l == layer)
                .unwrap_or(order.len())
        };
        if folders == Folders::MayRepeat {
            hold_once(&mut records, &rank);
        }
        let names = sort_by_precedence(&mut records, &rank, registered);
        // After the sort, which has just read every name: the lookalike pass reads each once
        // more, and before the sort that was a cache miss or two per record. Removing
        // records keeps the others' order.
        drop_lookalikes(&mut records, &mut findings, &rank, names);
        let (by_name, resolved, contested, shadowed) = group_by_name(&records);
        Snapshot {
            generation,
            records,
            resolved,
            by_name,
            contested,
            shadowed,
            findings,
            findings_order: OnceLock::new(),
            diagnostics: OnceLock::new(),
            sources: Vec::new(),
            order: *order,
            search: OnceLock::new(),
            resolved_audience: crate::AudienceMemo::default(),
            readers: std::sync::Weak::new(),
            availability: crate::available::Availability::default(),
        }
    }

    /// With what a check of the records it was built from found of their needs (only what
    /// names its own records is kept).
    pub(crate) fn with_availability(
        mut self,
        mut availability: crate::available::Availability,
    ) -> Snapshot {
        availability.keep_only(&self.records);
        self.availability = availability;
        self
    }

    /// What `record` (one of this snapshot's) needs and this machine lacks, as checked when
    /// the snapshot was published: programs on `PATH`, variables, the system. Empty when
    /// it lacks nothing. For the host and operator only: a session keeps such a skill from
    /// the model, and never says why.
    pub fn unmet(&self, record: &SkillRecord) -> Vec<skills_model::Unmet> {
        self.availability.of(record)
    }

    /// Whether `record` (one of this snapshot's) lacks something here: [`Snapshot::unmet`]
    /// is not empty. Allocates nothing.
    pub fn lacks(&self, record: &SkillRecord) -> bool {
        self.availability.lacks(record)
    }

    /// The `PATH` this snapshot's programs were looked for on.
    pub fn checked_path(&self) -> Option<&std::ffi::OsStr> {
        self.availability.path.as_deref()
    }

    /// The search index of this snapshot's records (shadowed ones too: see
    /// [`Snapshot::search`] and [`Snapshot::search_for`]), built on first use (and kept up
    /// to date by every later publication once built).
    pub fn search_index(&self) -> Arc<SearchIndex> {
        Arc::clone(
            self.search
                .get_or_init(|| Arc::new(self.build_search(None))),
        )
    }

    /// Whether this snapshot's search index is built (commands that never search never
    /// build one).
    pub fn search_index_built(&self) -> bool {
        self.search.get().is_some()
    }

    /// The best `limit` resolved skills `keep` admits that match `query`, and how many
    /// matched (see [`SearchIndex::search`]), scored over the resolved skills.
    pub fn search(
        &self,
        query: &str,
        limit: usize,
        keep: impl Fn(&SkillRecord) -> bool,
    ) -> SearchOutcome {
        let index = self.search_index();
        if self.shadowed.is_empty() {
            return index.search(query, limit, keep);
        }
        let wins = |r: &SkillRecord| self.wins(r);
        let audience = crate::Audience::seeing(&wins).remembered_in(&self.resolved_audience);
        index.search_for(&audience, query, limit, keep)
    }

    /// The best `limit` skills `audience` sees and `keep` admits that match `query`,
    /// scored over what `audience` sees (see [`SearchIndex::search_for`]). The search
    /// index holds every record, shadowed ones too: an audience that is to find skills by
    /// the names they hold sees one record a name ([`Snapshot::get_for`]).
    pub fn search_for(
        &self,
        audience: &crate::Audience<'_>,
        query: &str,
        limit: usize,
        keep: impl Fn(&SkillRecord) -> bool,
    ) -> SearchOutcome {
        self.search_index().search_for(audience, query, limit, keep)
    }

    /// Each query term's share of `record`'s score in [`Snapshot::search`] (see
    /// [`SearchIndex::explain_for`]).
    pub fn explain(&self, query: &str, record: &SkillRecord) -> Vec<crate::TermShare> {
        let index = self.search_index();
        if self.shadowed.is_empty() {
            return index.explain_for(&crate::Audience::everyone(), query, record);
        }
        let wins = |r: &SkillRecord| self.wins(r);
        let audience = crate::Audience::seeing(&wins).remembered_in(&self.resolved_audience);
        index.explain_for(&audience, query, record)
    }

    /// Each query term's share of `record`'s score in [`Snapshot::search_for`].
    pub fn explain_for(
        &self,
        audience: &crate::Audience<'_>,
        query: &str,
        record: &SkillRecord,
    ) -> Vec<crate::TermShare> {
        self.search_index().explain_for(audience, query, record)
    }

    /// The least score at which [`Snapshot::search`] offers a skill (see
    /// [`SearchIndex::offer_threshold`]).
    pub fn offer_threshold(&self) -> f32 {
        let index = self.search_index();
        if self.shadowed.is_empty() {
            return index.offer_threshold(&crate::Audience::everyone());
        }
        let wins = |r: &SkillRecord| self.wins(r);
        let audience = crate::Audience::seeing(&wins).remembered_in(&self.resolved_audience);
        index.offer_threshold(&audience)
    }

    /// The least score [`Snapshot::search_for`] offers a skill at, for `audience` (see
    /// [`SearchIndex::offer_threshold`]).
    pub fn offer_threshold_for(&self, audience: &crate::Audience<'_>) -> f32 {
        self.search_index().offer_threshold(audience)
    }

    /// Builds this snapshot's search index from `previous`'s, re-reading only the records
    /// that changed, when `previous` has one.
    pub(crate) fn follow_search(&self, previous: &Snapshot) {
        if let Some(prev) = previous.search.get() {
            let built = self.build_search(Some(prev));
            let _ = self.search.set(Arc::new(built));
        }
    }

    pub(crate) fn with_sources(mut self, sources: Vec<RootPlace>) -> Snapshot {
        self.sources = sources;
        self
    }

    /// This snapshot with the index's reading threads, where it builds its search index.
    pub(crate) fn with_readers(mut self, readers: &crate::pool::Readers) -> Snapshot {
        self.readers = readers.as_ref().map(Arc::downgrade).unwrap_or_default();
        self
    }

    /// Builds a search index on the reading threads, while the index lives.
    fn build_search(&self, previous: Option<&SearchIndex>) -> SearchIndex {
        let readers = self.readers.upgrade();
        let on = crate::search::Build::on(readers.as_deref());
        // Every record, shadowed ones too: a reader to whom a name's winner is hidden finds
        // the record that name stands for to it (`search_for`).
        SearchIndex::build(self.records.iter(), previous, self.order, on)
    }

    /// Where a record's files are read: for a source not on disk, that source (the deepest
    /// root of the record's layer and plugin that holds its folder) and the folder's path
    /// there; on disk, the skill folder itself. `None` for a record of no root of this
    /// snapshot.
    pub fn place_of(&self, record: &SkillRecord) -> Option<SkillPlace> {
        if let Some(place) = self.place_off_disk(record) {
            return Some(place);
        }
        // On disk, the skill folder is read as a source of its own: it may lie outside its
        // root (reached through a link), and its path is already resolved.
        self.sources
            .iter()
            .filter(|r| r.layer == record.layer && r.plugin == record.plugin)
            .any(|r| r.source.fs_root().is_some())
            .then(|| SkillPlace {
                source: Arc::new(skills_storage::FsSource::new(
                    record.dir().to_path_buf(),
                    skills_storage::DiscoveryOptions::validate(),
                )),
                dir: ".".to_owned(),
            })
    }

    /// [`place_of`](Snapshot::place_of) for a skill of a source that is not on disk (an
    /// embedded or in-memory plugin), `None` for any other: what the executor asks on every
    /// read and run, without building a source for a skill on disk.
    pub fn place_off_disk(&self, record: &SkillRecord) -> Option<SkillPlace> {
        let dir = record.dir();
        let root = self
            .sources
            .iter()
            .filter(|r| r.layer == record.layer && r.plugin == record.plugin)
            .filter(|r| r.source.fs_root().is_none() && dir.starts_with(&r.base))
            .max_by_key(|r| r.base.components().count())?;
        let rel = dir.strip_prefix(&root.base).ok()?;
        let mut parts = Vec::new();
        for part in rel.components() {
            match part {
                std::path::Component::Normal(name) => parts.push(name.to_str()?),
                std::path::Component::CurDir => {}
                _ => return None,
            }
        }
        Some(SkillPlace {
            source: Arc::clone(&root.source),
            dir: if parts.is_empty() {
                ".".to_owned()
            } else {
                parts.join("/")
            },
        })
    }

    /// An empty snapshot of generation 0.
    pub(crate) fn empty() -> Snapshot {
        Snapshot::build(
            0,
            Vec::new(),
            Vec::new(),
            &Layer::ALL,
            Folders::Distinct,
            &[],
        )
    }

    /// The generation: it grows by one with every published change.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The resolved skills (one per bare name), sorted by name.
    pub fn skills(&self) -> impl ExactSizeIterator<Item = &Arc<SkillRecord>> + '_ {
        self.resolved.iter().map(|i| &self.records[*i])
    }

    /// How many names resolve.
    pub fn len(&self) -> usize {
        self.resolved.len()
    }

    /// Whether no skill is indexed.
    pub fn is_empty(&self) -> bool {
        self.resolved.is_empty()
    }

    /// Looks up a bare name (`deploy`) or a qualified one (`project:deploy`,
    /// `<plugin-id>:deploy`). Allocates nothing.
    pub fn get(&self, name: &str) -> Option<&Arc<SkillRecord>> {
        self.index_of(name).map(|i| &self.records[i])
    }

    /// What `name` stands for to a reader who sees only the records `sees` admits (a
    /// session, whose scope hides some skills): the first by precedence of the records
    /// of that bare name, or of that name in that layer or plugin, that it sees. A record
    /// it may not see takes no name from one it may: another tenant's skill of a higher
    /// layer leaves this reader its own. Allocates nothing.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # for (folder, extra) in [("a", "priority: 9\nscope:\n  tenants: [acme]\n"), ("b", "")] {
    /// #     let d = dir.path().join(folder);
    /// #     std::fs::create_dir_all(&d).unwrap();
    /// #     std::fs::write(d.join("SKILL.md"), format!("---\nname: deploy\ndescription: Deploys.\n{extra}---\n")).unwrap();
    /// # }
    /// let index = skills_index::SkillIndex::builder()
    ///     .root(skills_model::Layer::Project, dir.path())
    ///     .build()
    ///     .unwrap();
    /// let snapshot = index.snapshot();
    /// let unscoped = |r: &skills_model::SkillRecord| r.frontmatter.scope.is_none();
    /// // The scoped skill wins the name; a reader who cannot see it gets the other one.
    /// assert!(snapshot.get("deploy").unwrap().path.ends_with("a/SKILL.md"));
    /// let theirs = snapshot.get_for("project:deploy", &unscoped).unwrap();
    /// assert!(theirs.path.ends_with("b/SKILL.md"));
    /// ```
    pub fn get_for(
        &self,
        name: &str,
        sees: &dyn Fn(&SkillRecord) -> bool,
    ) -> Option<&Arc<SkillRecord>> {
        self.candidates(name).find(|(_, r)| sees(r)).map(|(_, r)| r)
    }

    /// The resolved skills of a reader who sees only the records `sees` admits, in name
    /// order: for each name, the first record by precedence it sees (see
    /// [`Snapshot::get_for`]).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # for (folder, name, extra) in [("a", "deploy", "priority: 9\nscope:\n  tenants: [acme]\n"), ("b", "deploy", ""), ("c", "review", "")] {
    /// #     let d = dir.path().join(folder);
    /// #     std::fs::create_dir_all(&d).unwrap();
    /// #     std::fs::write(d.join("SKILL.md"), format!("---\nname: {name}\ndescription: Does it.\n{extra}---\n")).unwrap();
    /// # }
    /// let index = skills_index::SkillIndex::builder()
    ///     .root(skills_model::Layer::Project, dir.path())
    ///     .build()
    ///     .unwrap();
    /// let snapshot = index.snapshot();
    /// let unscoped = |r: &skills_model::SkillRecord| r.frontmatter.scope.is_none();
    /// let theirs: Vec<_> = snapshot.skills_for(&unscoped).map(|r| r.dir().to_path_buf()).collect();
    /// assert_eq!(theirs, [dir.path().join("b"), dir.path().join("c")]);
    /// ```
    pub fn skills_for<'s>(
        &'s self,
        sees: &'s dyn Fn(&SkillRecord) -> bool,
    ) -> impl Iterator<Item = &'s Arc<SkillRecord>> + 's {
        let mut last: Option<&'s str> = None;
        self.records.iter().filter(move |r| {
            if last == Some(r.name.as_str()) || !sees(r) || self.is_contested(r.name.as_str()) {
                return false;
            }
            last = Some(r.name.as_str());
            true
        })
    }

    /// The records `name` may stand for, best first, with their places: those of its bare
    /// name, or of that name in that layer or plugin.
    fn candidates<'s, 'n>(
        &'s self,
        name: &'n str,
    ) -> impl Iterator<Item = (usize, &'s Arc<SkillRecord>)> + use<'s, 'n> {
        let (prefix, bare) = match name.split_once(':') {
            Some((prefix, bare)) => (Some(prefix), bare),
            None => (None, name),
        };
        // A bare name no skill holds stands for none of its records.
        let held = prefix.is_some() || !self.is_contested(bare);
        self.group(bare)
            .filter(move |_| held)
            .filter(move |(_, r)| {
                prefix.is_none_or(|prefix| match &r.plugin {
                    Some(id) => &**id == prefix,
                    None => r.layer.as_str() == prefix,
                })
            })
    }

    /// Every record of the bare name `bare`, best first, with its place.
    fn group<'s, 'n>(
        &'s self,
        bare: &'n str,
    ) -> impl Iterator<Item = (usize, &'s Arc<SkillRecord>)> + use<'s, 'n> {
        let start = self.by_name.get(&self.records, bare);
        start.into_iter().flat_map(move |start| {
            self.records[start..]
                .iter()
                .take_while(move |r| r.name.as_str() == bare)
                .enumerate()
                .map(move |(offset, r)| (start + offset, r))
        })
    }

    pub(crate) fn index_of(&self, name: &str) -> Option<usize> {
        self.candidates(name).next().map(|(i, _)| i)
    }

    /// The place of `record` (the same `SKILL.md` through the same layer and plugin) in
    /// this snapshot.
    pub(crate) fn place_of_record(&self, record: &SkillRecord) -> Option<usize> {
        // The record itself, by address, as a session that resolved it here holds it (a
        // pass over the name's group comparing addresses only: comparing paths for every
        // record of a large group, once per record, was quadratic); else the same skill
        // read into another snapshot.
        self.group(record.name.as_str())
            .find(|(_, r)| std::ptr::eq(&***r, record))
            .or_else(|| {
                self.group(record.name.as_str())
                    .find(|(_, r)| same_skill(r, record))
            })
            .map(|(i, _)| i)
    }

    /// The skills that lost their bare name, with who shadows each.
    pub fn shadowed(&self) -> &[Shadowed] {
        &self.shadowed
    }

    /// Every diagnostic of every skill folder, with its path: [`each_diagnostic`]'s, each
    /// copied once into a list on the first call.
    ///
    /// [`each_diagnostic`]: Self::each_diagnostic
    pub fn diagnostics(&self) -> &[PathDiagnostic] {
        self.diagnostics.get_or_init(|| {
            self.each_diagnostic()
                .map(|(path, diagnostic)| PathDiagnostic {
                    path: path.to_path_buf(),
                    diagnostic: diagnostic.clone(),
                })
                .collect()
        })
    }

    /// Every diagnostic of every skill folder with the file it concerns, as the snapshot
    /// holds them (nothing copied): in the byte order of the files' paths, a file's own in
    /// the order they were found.
    pub fn each_diagnostic(&self) -> impl Iterator<Item = (&Path, &Diagnostic)> + '_ {
        let order = self
            .findings_order
            .get_or_init(|| path_order(&self.findings));
        let in_order = order.iter().filter_map(|i| self.findings.get(*i as usize));
        in_order.flat_map(|found| {
            let path = found.path();
            found.list.iter().map(move |d| (path, d))
        })
    }

    /// Every record, winners and shadowed ones.
    pub fn records(&self) -> &[Arc<SkillRecord>] {
        &self.records
    }

    /// Whether the record (by path, layer and plugin) wins its name.
    pub(crate) fn wins(&self, record: &SkillRecord) -> bool {
        self.by_name
            .get(&self.records, record.name.as_str())
            .filter(|i| self.contested.binary_search(i).is_err())
            .is_some_and(|i| same_skill(&self.records[i], record))
    }

    /// Whether no skill holds the bare name `name`: MCP servers serve it, no other origin
    /// does, and none takes it from another ([`Shadowed::contested`]).
    fn is_contested(&self, name: &str) -> bool {
        !self.contested.is_empty()
            && self
                .contested
                .binary_search_by(|&i| self.records[i].name.as_str().cmp(name))
                .is_ok()
    }

    /// The qualified names a bare name no skill holds may be given as (its servers'
    /// skills that `sees` admits), best first; empty for any other name. What a reader who
    /// asked for the bare name is told to choose from.
    pub fn contested_choices(
        &self,
        name: &str,
        sees: &dyn Fn(&SkillRecord) -> bool,
    ) -> Vec<String> {
        if !self.is_contested(name) {
            return Vec::new();
        }
        self.group(name)
            .filter(|(_, r)| sees(r))
            .map(|(_, r)| r.qualified_name())
            .collect()
    }
}

/// Whether two records are one skill, perhaps read into different snapshots: the same
/// `SKILL.md` through the same layer and plugin (one folder reached through two roots is
/// two skills).
fn same_skill(a: &SkillRecord, b: &SkillRecord) -> bool {
    a.path == b.path && a.layer == b.layer && a.plugin == b.plugin
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use skills_model::{Diagnostic, Layer, Rule, Severity};

    use super::Findings;
    use crate::SkillIndex;

    /// Findings are put in their paths' byte order, stably: paths sharing long prefixes,
    /// differing past the first eight bytes after them or within them, one a prefix of
    /// another, and one path twice (its two findings keep their order).
    #[test]
    fn findings_are_sorted_by_path_stably() {
        let paths = [
            "/r/owner/repo/skills/b/SKILL.md",
            "/r/owner/repo/skills/a/SKILL.md",
            "/r/owner/repo/skills/a-longer-name-than-eight/SKILL.md",
            "/r/owner/repo/skills/a-longer-name-than-nine/SKILL.md",
            "/r/owner/repo/skills/a",
            "/r/owner/repo/skills/b/SKILL.md",
            "/r/other/SKILL.md",
            "/r/owner/repo/skills/a-longer-name-than-eight/SKILL.md",
            // Differing in their first byte after the shared prefix and in their eighth.
            "/r/ba-aaaaa/SKILL.md",
            "/r/ab-zzzzz/SKILL.md",
        ];
        let findings: Vec<Findings> = paths
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let note = Diagnostic::new(Rule::FileUnreadable, Severity::Info, i.to_string());
                Findings::at(Path::new(p), Arc::from([note]))
            })
            .collect();
        let mut expected: Vec<(String, String)> = findings
            .iter()
            .map(|f| (f.path().display().to_string(), f.list[0].message.clone()))
            .collect();
        expected.sort_by(|a, b| a.0.cmp(&b.0));
        let got: Vec<(String, String)> = super::path_order(&findings)
            .iter()
            .map(|i| &findings[*i as usize])
            .map(|f| (f.path().display().to_string(), f.list[0].message.clone()))
            .collect();
        assert_eq!(got, expected);
    }

    /// A snapshot holds the index's reading threads weakly: they end with the index, not
    /// with the last snapshot a host keeps (a review found a whole idle pool kept per
    /// snapshot of an index long gone). A search after that is still answered.
    #[test]
    fn regression_a_snapshot_does_not_keep_the_reading_threads() {
        let tmp = tempfile::tempdir().expect("a temporary folder");
        let skill = tmp.path().join("deploy");
        std::fs::create_dir_all(&skill).expect("a folder");
        std::fs::write(
            skill.join("SKILL.md"),
            "---\nname: deploy\ndescription: Deploys releases.\n---\nSteps.\n",
        )
        .expect("a skill file");
        let index = SkillIndex::builder()
            .root(Layer::Project, tmp.path())
            .build()
            .expect("an index");
        let snapshot = index.snapshot();
        assert!(
            snapshot.readers.upgrade().is_some(),
            "while the index lives"
        );
        drop(index);
        assert!(snapshot.readers.upgrade().is_none(), "gone with the index");
        assert_eq!(snapshot.search("deploy", 5, |_| true).total, 1);
    }

    proptest::proptest! {
        /// Records put in the order their places are sorted to are the sorted records, as
        /// a sort of the records themselves gives them.
        #[test]
        fn records_are_put_in_the_order_their_places_are_sorted_to(
            mut items in proptest::collection::vec(0u16..50, 0..200)
        ) {
            let mut keyed: Vec<([u8; 28], u32)> = (0u32..).zip(&items).map(|(i, _)| ([0; 28], i)).collect();
            keyed.sort_by_key(|(_, i)| (items[*i as usize], *i));
            let mut want = items.clone();
            want.sort();
            super::permute(&mut items, &mut keyed);
            proptest::prop_assert_eq!(items, want);
        }

        /// Where two names' keys differ, the names are ordered as their keys are: the sort
        /// by key then by record is the sort by record (names sharing their first bytes,
        /// prefixes of each other, zero bytes and letters past ASCII among them).
        #[test]
        fn names_are_ordered_as_their_keys(
            a in "[a-c-]{0,40}|[a-z0-9\\x00-]{0,36}|\\PC{0,40}",
            b in "[a-c-]{0,40}|[a-z0-9\\x00-]{0,36}|\\PC{0,40}",
        ) {
            let (ka, kb) = (super::name_key(&a), super::name_key(&b));
            proptest::prop_assert_eq!(super::key_order(&ka, &kb), ka.cmp(&kb));
            if ka != kb {
                proptest::prop_assert_eq!(super::key_order(&ka, &kb), a.cmp(&b));
            }
        }
    }
}
