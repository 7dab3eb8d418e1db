//! What discovery saw of a skill file before it is read: the vocabulary discovery (which
//! looks) and reads (which may spare the file a question) share, below both.

/// What discovery saw of a candidate's skill file before it is read: a reader may spare
/// the file a question discovery has answered ([`SkillSource::read_prefix_seen`]).
///
/// [`SkillSource::read_prefix_seen`]: crate::SkillSource::read_prefix_seen
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum FileSeen {
    /// Not asked about (taken to be there), or seen as something a read must ask about
    /// itself (a link, whose target discovery did not look at).
    #[default]
    Unasked,
    /// A regular file and no link, as `lstat` saw it: a read may open it without asking
    /// again, provided the open follows no link, so that only this same kind of file (or
    /// one put in its place, which the read's `fstat` still checks) is opened.
    Regular,
}
