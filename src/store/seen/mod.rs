//! The seen-set: every URL the crawler has met, as 16-byte records (xxh3-64 of
//! [`crate::url::seen_key`], a day stamp, flags), kept as per-run append-only
//! segments under `state/seen/` and merged in memory on load.
//!
//! # Files
//! * `state/seen/<run-id>.bin`: one run's segment. A 16-byte header (magic
//!   `SCRSEEN\0`, `u32` version, `u32` record size) then fixed 16-byte
//!   little-endian records `u64 hash, u32 day, u32 flags`. A run appends only
//!   what changed since its last [`SeenSet::flush`], so a daily commit adds
//!   bytes in proportion to the URLs that run saw and never rewrites old ones.
//! * `state/seen/compact-<stamp>-<k>.bin`: the same format, written by
//!   [`compact`]: records sorted by hash, one per URL, in chunks of at most
//!   32 MiB over consecutive hash ranges; they replace the files merged.
//! * `state/seen.bin`: the legacy single file (same records, no header), read
//!   if present and folded into the next compaction.
//!
//! A torn last record (a crash mid-write) is ignored on load and cut off before
//! the next append. Records merge with [`Seen::merge`]: the later day wins,
//! `HIT` and `ALIAS` are sticky. The merge is commutative and associative, so
//! the order of files and records never matters and compaction changes nothing.
//!
//! # Memory
//! Loaded records live in one sorted `Vec` (exactly 16 bytes per URL) with a
//! table of where each range of leading hash bits starts (about 0.5 byte per
//! URL), so a lookup is a binary search among a handful of records; this
//! run's changes live in a small hash map on top.
//!
//! # Articles that change and failures for good
//! A stored hit's record carries a 16-bit fingerprint of its text
//! (`flag::TEXT_MASK`). When a listing dates a hit later than its day, the URL
//! is asked again with `If-Modified-Since`; a 304, or a text with the same
//! fingerprint, only moves the record's day, and a changed text is stored as a
//! new record with `updated: true`. A URL that failed for good (404, 410, a
//! redirect loop, too many redirects, a body over the cap, a content type not
//! read) is recorded with flag `FAILED` and its class and not queued again
//! before `retry_failed_after_days`; network failures, 429 and 5xx are never
//! recorded.

mod file;
mod merge;

use crate::url::IdentityHasher;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

use super::StoreError;

pub use file::{CompactReport, compact, segment_files};

/// Flags of a seen record.
pub mod flag {
    /// Stored as an article: never fetched again.
    pub const HIT: u32 = 1;
    /// Fetched, not stored (listing, home, tag page, error): refetched after `revisit_after_days`.
    pub const MISS: u32 = 2;
    /// A `rel=canonical` alias of a stored hit.
    pub const ALIAS: u32 = 4;
    /// With [`MISS`]: an article that was not stored (off the topic, too
    /// short, withheld): it is not a listing, so it is not revisited after
    /// `revisit_after_days` (a listing's word that it changed still brings
    /// it back, like a stored one).
    pub(crate) const ARTICLE: u32 = 32;
    /// Listed by a feed or sitemap (discovered, maybe not fetched yet).
    pub const LISTED: u32 = 8;
    /// Flags that, once set, survive every later record.
    pub(crate) const STICKY: u32 = HIT | ALIAS;
    /// Failed for a reason that will not go away by itself (see
    /// [`super::Failure`]; its code sits in bits 8..16): fetched again only
    /// after `retry_failed_after_days`.
    pub(crate) const FAILED: u32 = 16;
    /// Where a [`super::Failure`] code sits in the flags.
    pub(crate) const FAILURE_SHIFT: u32 = 8;
    pub(crate) const FAILURE_MASK: u32 = 0xff << FAILURE_SHIFT;
    /// A stored hit's 16-bit fingerprint of its text (see
    /// [`super::text_print`]), so an article fetched again because its
    /// listing says it changed is stored again only if its text did.
    pub(crate) const TEXT_SHIFT: u32 = 16;
    pub(crate) const TEXT_MASK: u32 = 0xffff << TEXT_SHIFT;
}

/// A permanent failure, remembered with its class so the URL is not fetched
/// again before `retry_failed_after_days`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Failure {
    /// 404 or 410.
    Gone = 1,
    RedirectLoop = 2,
    TooManyRedirects = 3,
    /// Larger than the body cap.
    TooLarge = 4,
    /// A content type we do not read.
    NotHtml = 5,
    /// `402 Payment Required`: the publisher reserves the page.
    PaymentRequired = 6,
}

impl Failure {
    const ALL: [Failure; 6] = [
        Failure::Gone,
        Failure::RedirectLoop,
        Failure::TooManyRedirects,
        Failure::TooLarge,
        Failure::NotHtml,
        Failure::PaymentRequired,
    ];

    /// The flags of a record of this failure.
    pub fn flags(self) -> u32 {
        flag::FAILED | ((self as u32) << flag::FAILURE_SHIFT)
    }

    /// The failure a record's flags name, if any.
    pub(crate) fn from_flags(flags: u32) -> Option<Failure> {
        if flags & flag::FAILED == 0 {
            return None;
        }
        let code = ((flags & flag::FAILURE_MASK) >> flag::FAILURE_SHIFT) as u8;
        Failure::ALL.into_iter().find(|f| *f as u8 == code)
    }

    /// The class name used in counters and events.
    pub fn as_str(self) -> &'static str {
        match self {
            Failure::Gone => "gone",
            Failure::RedirectLoop => "redirect_loop",
            Failure::TooManyRedirects => "too_many_redirects",
            Failure::TooLarge => "too_large",
            Failure::NotHtml => "not_html",
            Failure::PaymentRequired => "payment_required",
        }
    }
}

/// What the set knows of one URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Seen {
    /// Days since 1970-01-01 (UTC) of the last fetch.
    pub day: u32,
    pub flags: u32,
}

impl Seen {
    pub fn new(day: u32, flags: u32) -> Seen {
        Seen { day, flags }
    }

    /// Combine two records of one URL: the later day wins with its flags (the
    /// flags of same-day records are united), and sticky flags (`HIT`, `ALIAS`)
    /// are kept whatever their day. Commutative and associative.
    pub fn merge(self, other: Seen) -> Seen {
        let sticky = (self.flags | other.flags) & flag::STICKY;
        let (day, flags) = match self.day.cmp(&other.day) {
            std::cmp::Ordering::Greater => (self.day, self.flags),
            std::cmp::Ordering::Less => (other.day, other.flags),
            std::cmp::Ordering::Equal => (self.day, self.flags | other.flags),
        };
        Seen {
            day,
            flags: flags | sticky,
        }
    }

    /// Stored (or an alias of a stored page): never fetched again.
    pub fn is_stored(&self) -> bool {
        self.flags & flag::STICKY != 0
    }

    /// Should the URL be fetched on `today`? Never for stored pages; pages
    /// fetched without being stored once `revisit_after_days` have passed;
    /// URLs only listed so far, always.
    pub fn due(&self, today: u32, revisit_after_days: u32) -> bool {
        self.due_after(today, revisit_after_days, revisit_after_days)
    }

    /// [`Seen::due`], with permanent failures ([`flag::FAILED`]) fetched
    /// again only once `retry_failed_after_days` have passed.
    pub(crate) fn due_after(
        &self,
        today: u32,
        revisit_after_days: u32,
        retry_failed_after_days: u32,
    ) -> bool {
        if self.is_stored() || self.flags & flag::ARTICLE != 0 {
            false
        } else if self.flags & flag::FAILED != 0 {
            today >= self.day.saturating_add(retry_failed_after_days)
        } else if self.flags & flag::MISS != 0 {
            today >= self.day.saturating_add(revisit_after_days)
        } else {
            true
        }
    }
}

/// A text's 16-bit fingerprint for [`flag::TEXT_MASK`] (never 0: 0 means
/// "not known", as in records written before it existed).
pub(crate) fn text_print(text: &str) -> u32 {
    let h = (xxhash_rust::xxh3::xxh3_64(text.as_bytes()) >> 48) as u32;
    h.max(1)
}

impl Seen {
    /// The text fingerprint of a stored hit (0: unknown).
    pub(crate) fn text_print(&self) -> u32 {
        (self.flags & flag::TEXT_MASK) >> flag::TEXT_SHIFT
    }
}

/// Days since 1970-01-01 of a UTC time (0 before 1970).
pub fn day_stamp(t: DateTime<Utc>) -> u32 {
    u32::try_from(t.timestamp().div_euclid(86_400)).unwrap_or(0)
}

/// One record as stored: 16 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Rec {
    pub hash: u64,
    pub seen: Seen,
}

type HashIndex<V> = HashMap<u64, V, BuildHasherDefault<IdentityHasher>>;

/// A change made in this run.
#[derive(Debug, Clone, Copy)]
struct Slot {
    /// This run's records for the URL, merged.
    seen: Seen,
    /// Waiting for the next flush.
    pending: bool,
}

/// What loading found, for logs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadStats {
    pub files: usize,
    /// Records read, before merging.
    pub records: usize,
    /// Bytes of torn records ignored at file ends.
    pub torn_bytes: u64,
    /// Bytes of the files.
    pub bytes: u64,
}

/// All URLs ever seen, in memory, plus this run's new records.
///
/// Crash ordering for the engine: record a URL as [`flag::HIT`] only after
/// the shard flush that made its article durable, and flush the shard before
/// the seen-set; a crash then loses at most a hit mark (the page is fetched
/// again and deduplicated by URL at build time), never claims an article that
/// is not stored.
#[derive(Debug, Default)]
pub struct SeenSet {
    /// Loaded records, sorted by hash, one per hash.
    base: Vec<Rec>,
    /// Where each range of leading hash bits starts in `base`.
    index: merge::Index,
    /// This run's records.
    delta: HashIndex<Slot>,
    /// Hashes in `delta` waiting for the next flush, in first-change order.
    pending: Vec<u64>,
    /// Entries of `delta` whose hash is not in `base`.
    new_urls: usize,
    stats: LoadStats,
}

impl SeenSet {
    /// Load and merge every segment under `state_dir` (later records win; HIT is sticky).
    pub fn load(state_dir: &Path) -> Result<SeenSet, StoreError> {
        let (base, stats, _) = file::load_all(state_dir)?;
        Ok(SeenSet {
            index: merge::Index::build(&base),
            base,
            stats,
            ..SeenSet::default()
        })
    }

    pub fn get(&self, hash: u64) -> Option<Seen> {
        let old = self.base_get(hash);
        match (old, self.delta.get(&hash)) {
            (Some(a), Some(slot)) => Some(a.merge(slot.seen)),
            (None, Some(slot)) => Some(slot.seen),
            (a, None) => a,
        }
    }

    fn base_get(&self, hash: u64) -> Option<Seen> {
        let (a, b) = self.index.range(hash);
        let bucket = self.base.get(a..b)?;
        bucket
            .binary_search_by_key(&hash, |r| r.hash)
            .ok()
            .map(|i| bucket[i].seen)
    }

    /// Record a URL; it is written at the next [`SeenSet::flush`]. A record
    /// that changes nothing (say, a second `LISTED` on the same day) is dropped.
    pub fn record(&mut self, hash: u64, seen: Seen) {
        let before = self.get(hash);
        if before.map(|b| b.merge(seen)) == before && before.is_some() {
            return;
        }
        let in_base = self.base_get(hash).is_some();
        match self.delta.get_mut(&hash) {
            Some(slot) => {
                slot.seen = slot.seen.merge(seen);
                if !slot.pending {
                    slot.pending = true;
                    self.pending.push(hash);
                }
            }
            None => {
                self.delta.insert(
                    hash,
                    Slot {
                        seen,
                        pending: true,
                    },
                );
                self.pending.push(hash);
                if !in_base {
                    self.new_urls += 1;
                }
            }
        }
    }

    /// Append this run's records changed since the last flush to
    /// `state/seen/<run_id>.bin` and sync. Returns how many were written.
    /// On an error nothing is lost: the same records are tried again next time.
    pub fn flush(&mut self, state_dir: &Path, run_id: &str) -> Result<usize, StoreError> {
        if self.pending.is_empty() {
            return Ok(0);
        }
        let recs: Vec<Rec> = self
            .pending
            .iter()
            .filter_map(|h| {
                self.delta.get(h).map(|s| Rec {
                    hash: *h,
                    seen: s.seen,
                })
            })
            .collect();
        file::append(&segment_path(state_dir, run_id)?, &recs)?;
        for h in self.pending.drain(..) {
            if let Some(slot) = self.delta.get_mut(&h) {
                slot.pending = false;
            }
        }
        Ok(recs.len())
    }

    /// Records waiting for the next flush.
    pub fn unflushed(&self) -> usize {
        self.pending.len()
    }

    /// Distinct URLs known.
    pub fn len(&self) -> usize {
        self.base.len() + self.new_urls
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every URL known with its merged record: loaded ones in hash order,
    /// then this run's new ones in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, Seen)> + '_ {
        let old = self.base.iter().map(|r| match self.delta.get(&r.hash) {
            Some(slot) => (r.hash, r.seen.merge(slot.seen)),
            None => (r.hash, r.seen),
        });
        let new = self
            .delta
            .iter()
            .filter(|(h, _)| self.base_get(**h).is_none())
            .map(|(h, slot)| (*h, slot.seen));
        old.chain(new)
    }

    /// What [`SeenSet::load`] read.
    pub fn load_stats(&self) -> &LoadStats {
        &self.stats
    }

    /// Approximate heap bytes held (loaded records plus this run's map).
    pub fn heap_bytes(&self) -> usize {
        let slot = std::mem::size_of::<(u64, Slot)>() + 1;
        self.base.capacity() * std::mem::size_of::<Rec>()
            + self.index.heap_bytes()
            + self.delta.capacity() * slot
            + self.pending.capacity() * 8
    }
}

/// The segment file of a run: `state/seen/<run_id>.bin`.
pub fn segment_path(state_dir: &Path, run_id: &str) -> Result<PathBuf, StoreError> {
    let ok = !run_id.is_empty()
        && !run_id.starts_with('.')
        && !run_id.starts_with(file::COMPACT_PREFIX)
        && run_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !ok {
        return Err(StoreError::Corrupt {
            path: state_dir.join(file::SEEN_DIR),
            message: format!("`{run_id}` is not a usable run id for a seen segment"),
        });
    }
    Ok(state_dir.join(file::SEEN_DIR).join(format!("{run_id}.bin")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(day: u32, flags: u32) -> Seen {
        Seen::new(day, flags)
    }

    #[test]
    fn merge_rule() {
        use flag::*;
        let table = [
            (s(1, MISS), s(2, LISTED), s(2, LISTED)),
            (s(1, HIT), s(5, MISS), s(5, MISS | HIT)),
            (s(3, LISTED), s(3, MISS), s(3, LISTED | MISS)),
            (s(9, MISS), s(2, ALIAS), s(9, MISS | ALIAS)),
        ];
        for (a, b, want) in table {
            assert_eq!(a.merge(b), want, "{a:?} + {b:?}");
            assert_eq!(b.merge(a), want, "commutes: {a:?} + {b:?}");
        }
    }

    #[test]
    fn due_rule() {
        assert!(!s(1, flag::HIT).due(100, 7));
        assert!(!s(1, flag::ALIAS | flag::MISS).due(100, 7));
        assert!(!s(10, flag::MISS).due(16, 7));
        assert!(s(10, flag::MISS).due(17, 7));
        // An article not stored is no listing: not revisited.
        assert!(!s(10, flag::MISS | flag::ARTICLE).due(100, 7));
        assert!(s(10, flag::LISTED).due(10, 7));
        let gone = s(10, Failure::Gone.flags());
        assert!(!gone.due_after(30, 7, 30));
        assert!(gone.due_after(40, 7, 30));
        assert!(s(10, flag::MISS).due_after(17, 7, 30));
        for f in Failure::ALL {
            assert_eq!(Failure::from_flags(f.flags()), Some(f));
        }
        assert_eq!(Failure::from_flags(flag::MISS), None);
        // A later success (a page fetched and kept as a miss) clears the failure.
        let later = gone.merge(s(50, flag::MISS));
        assert_eq!(Failure::from_flags(later.flags), None);
    }

    #[test]
    fn day_stamp_counts_utc_days() {
        let t = DateTime::parse_from_rfc3339("1970-01-02T23:59:59Z").unwrap();
        assert_eq!(day_stamp(t.with_timezone(&Utc)), 1);
        let t = DateTime::parse_from_rfc3339("2026-11-29T00:00:00Z").unwrap();
        assert_eq!(day_stamp(t.with_timezone(&Utc)), 20_786);
    }

    #[test]
    fn record_get_and_len() {
        let mut set = SeenSet::default();
        assert!(set.is_empty());
        set.record(7, s(3, flag::LISTED));
        set.record(7, s(3, flag::LISTED));
        assert_eq!(set.unflushed(), 1);
        set.record(7, s(4, flag::HIT));
        set.record(9, s(4, flag::MISS));
        assert_eq!(set.get(7), Some(s(4, flag::HIT)));
        assert_eq!(set.get(8), None);
        assert_eq!(set.len(), 2);
        assert_eq!(set.unflushed(), 2);
    }
}
