//! Where skills live: layered roots, discovery of skill folders, and bounded reads of
//! regular files.
