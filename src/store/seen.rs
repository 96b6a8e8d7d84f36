//! The seen-set: 16-byte records (xxh3-64 of the seen key, day stamp, flags),
//! kept as per-run append-only segments `state/seen/<run-id>.bin` merged on load.
//!
//! OWNER: store work (part of issue 2). Interface; bodies are placeholders.

use std::path::Path;

use super::StoreError;

/// Flags of a seen record.
pub mod flag {
    /// Stored as an article: never fetched again.
    pub const HIT: u32 = 1;
    /// Fetched, not stored (listing, home, tag page, error): refetched after `revisit_after_days`.
    pub const MISS: u32 = 2;
    /// A `rel=canonical` alias of a stored hit.
    pub const ALIAS: u32 = 4;
    /// Listed by a feed or sitemap (discovered, maybe not fetched yet).
    pub const LISTED: u32 = 8;
}

/// What the set knows of one URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    /// Days since 1970-01-01 (UTC) of the last fetch.
    pub day: u32,
    pub flags: u32,
}

/// All URLs ever seen, in memory, plus this run's new records.
#[derive(Debug, Default)]
pub struct SeenSet {}

impl SeenSet {
    /// Load and merge every segment under `state_dir` (later records win; HIT is sticky).
    pub fn load(_state_dir: &Path) -> Result<SeenSet, StoreError> {
        Ok(SeenSet {})
    }

    pub fn get(&self, _hash: u64) -> Option<Seen> {
        None
    }

    /// Record a URL; it is written at the next [`SeenSet::flush`].
    pub fn record(&mut self, _hash: u64, _seen: Seen) {}

    /// Append this run's new records to `state/seen/<run_id>.bin` and sync.
    pub fn flush(&mut self, _state_dir: &Path, _run_id: &str) -> Result<(), StoreError> {
        Ok(())
    }

    pub fn len(&self) -> usize {
        0
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
