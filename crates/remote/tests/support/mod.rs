//! Test support: a static server on loopback and a publisher of well-known indexes.

pub mod serve;
