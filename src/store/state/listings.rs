//! `state/listings/<run-id>.json`: what the crawl knows of every feed,
//! sitemap index and child sitemap it has read, so a daily run asks only
//! for the listings that can have changed.
//!
//! Per listing URL ([`ListingState`]): when it was last read in full (a 200
//! parsed whole, or a 304 against the validators of such a read), the
//! `<lastmod>` its parent index gave it then, the day it was last asked,
//! and how many days to wait before asking again (`every`, learned from
//! whether its reads bring URLs no other listing of the host brought).
//!
//! The rules the engine applies with it (`crawl/engine/listing.rs`):
//! * a child sitemap whose parent's `<lastmod>` is not newer than our last
//!   full read is not requested at all;
//! * a listing is asked again once `every` days have passed since it was
//!   last asked (at once when another listing of its host failed or looks
//!   truncated); `every` is 1 after a read that brought new URLs no other
//!   listing had, and doubles (up to [`MAX_EVERY_DAYS`]) after one that did
//!   not;
//! * under `--min-lastmod auto` a listing's entries are cut off at its own
//!   last full read minus the overlap (never below `crawl.min_lastmod`); one
//!   never read in full gets `crawl.min_lastmod`, so an archive the first
//!   run could not finish is still read from the configured date.
//!
//! Files are written once per run with what that run changed (one URL per
//! line, sorted), never rewritten; loading folds them in run order, the
//! later `day` winning, so runs of several machines merge in git by keeping
//! every file. `scraper compact` folds them into one.
//!
//! The rate in full. A read is *useful* when the listing (or, for an index,
//! its children) brought a fresh URL no other listing of the host had already
//! queued this run (feeds are queued first, so a sitemap repeating the feed's
//! items adds nothing; updates of stored articles do not count). `every` is 1
//! after a useful read (and after the first), doubles after one that was not
//! (2, 4, 7: a week at most), goes to 7 at once when the host's feed brought
//! what it had, and stays as it was on a quiet day (no listing of the host
//! brought anything). `due_day` is `day + every` drawn earlier by a hash of
//! the URL by up to `every - 1` days, so hosts on one rate are spread over the
//! days. Feeds are asked every run (one conditional request); the rate holds
//! sitemaps and HTML listings back: a seed page that is no article (a home or
//! section page) is a listing too, useful when its links add fresh pages.
//! Seeds are served feeds first, then pages, then sitemaps, so the first to
//! bring a URL is credited. A seed or robots.txt `Sitemap:` sitemap not due is
//! held back (`listings_not_due`) and queued at once when another listing of
//! its host fails, is malformed, is read in part or looks truncated (every
//! entry new, or its oldest entry newer than our last read). With `every` 1 a
//! listing is read every run, twice a day included.
//!
//! Children of an index: of those `discover::select_children` picks (undated,
//! dated at or after the floor, the 3 newest by date then name, at most 200),
//! one whose `<lastmod>` is not newer than our last full read is skipped
//! (`listings_unchanged`); an undated one read recently is asked at its rate;
//! a changed one is asked with `If-None-Match` / `If-Modified-Since`. An index
//! that dates every child keeps its validators (a 304 says no child changed);
//! one with an undated child is read in full when asked. Nesting stops at 3
//! levels below a seed or a robots.txt `Sitemap:` line.
//!
//! Upgrading from a version without `state/listings/` reads every listing once
//! from the floor (the seen-set keeps stored pages from being fetched again).

use std::collections::BTreeMap;
use std::path::Path;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::write_atomic;
use crate::store::StoreError;

/// The folder of the per-run files, under `state/`.
pub(crate) const LISTINGS_DIR: &str = "listings";

/// The longest wait between two reads of a listing, in days (the floor of
/// how often every listing is read).
pub(crate) const MAX_EVERY_DAYS: u32 = 7;

/// What the crawl knows of one listing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListingState {
    /// Start of the run that last read it in full: every entry it listed
    /// up to then is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<DateTime<Utc>>,
    /// The `<lastmod>` its parent index gave it at that read (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) parent_lastmod: Option<String>,
    /// Day stamp of the last request (see [`crate::store::seen::day_stamp`]).
    #[serde(default)]
    pub day: u32,
    /// Days to wait after `day` before asking again (1 to [`MAX_EVERY_DAYS`]).
    #[serde(default = "one")]
    pub every: u32,
    /// The day it is due again: `day + every`, drawn earlier by up to
    /// `every - 1` days by a hash of the URL when the rate changes, so the
    /// listings of many hosts that learned the same rate are not all asked
    /// on the same day (and kept in phase while the rate holds).
    #[serde(default)]
    pub(crate) due_day: u32,
    /// Requests answered (200 or 304).
    #[serde(default)]
    pub reads: u32,
    /// Reads that brought URLs no other listing of the host had.
    #[serde(default)]
    pub(crate) useful: u32,
}

fn one() -> u32 {
    1
}

impl ListingState {
    /// May the listing be asked on day `today`? One read every day (the
    /// rate of a listing that pays, or one not judged yet) means every run.
    pub fn due(&self, today: u32) -> bool {
        self.every <= 1 || today >= self.due_day
    }

    /// Has it changed since our last full read, as its parent says? A
    /// child whose parent gave no `<lastmod>`, or one never read in full,
    /// may have.
    pub(crate) fn unchanged_since_read(&self, parent_lastmod: Option<DateTime<Utc>>) -> bool {
        matches!((self.read, parent_lastmod), (Some(read), Some(lm)) if lm <= read)
    }

    /// A request was answered on `today`: `full` says the listing was read
    /// in full (at the run that started `started_at`), `read` what it
    /// brought. A first read teaches nothing about the rate: it is asked
    /// again the next day; nor does a quiet day (no listing of the host
    /// brought anything new), which keeps the rate as it was.
    pub fn answered(
        &mut self,
        url: &str,
        today: u32,
        started_at: DateTime<Utc>,
        full: bool,
        read: Read,
        parent_lastmod: Option<String>,
    ) {
        let first = self.reads == 0;
        let before = self.every;
        self.reads += 1;
        self.day = today;
        if read == Read::Useful {
            self.useful += 1;
        }
        self.every = match read {
            _ if first => 1,
            Read::Useful => 1,
            Read::Quiet => self.every.max(1),
            Read::Redundant => (self.every.max(1) * 2).min(MAX_EVERY_DAYS),
            Read::Covered => MAX_EVERY_DAYS,
        };
        // Drawn earlier by a hash of the URL when the rate changes, so that
        // many hosts on one rate are spread over the days; kept in phase
        // while the rate holds.
        let stagger = if first || self.every != before {
            (xxhash_rust::xxh3::xxh3_64(url.as_bytes()) % u64::from(self.every)) as u32
        } else {
            0
        };
        self.due_day = today + self.every - stagger;
        if full {
            self.read = Some(started_at);
            if parent_lastmod.is_some() {
                self.parent_lastmod = parent_lastmod;
            }
        }
    }
}

/// What one read of a listing brought.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read {
    /// URLs no other listing of the host had.
    Useful,
    /// Nothing another listing of the host did not bring first.
    Redundant,
    /// Nothing the host's feed (read every run) did not bring first: the
    /// weekly floor at once, since the feed keeps watch (and a feed that
    /// fails or looks truncated wakes the others).
    Covered,
    /// Nothing, and no other listing of the host brought anything either.
    Quiet,
}

/// Every listing's state, and what this run changed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Listings {
    map: BTreeMap<String, ListingState>,
    changed: BTreeMap<String, ListingState>,
}

impl Listings {
    /// Read every `state/listings/*.json` in run order; of two states of one
    /// URL the later `day` wins (on a tie, the later file). Missing: empty.
    pub fn load(state_dir: &Path) -> Result<Listings, StoreError> {
        let mut out = Listings::default();
        for path in super::run_files::json_files(&state_dir.join(LISTINGS_DIR))? {
            let map: Option<BTreeMap<String, ListingState>> = super::read_json(
                &path,
                "a listings map",
                "delete it: the listings are then read again once",
            )?;
            for (url, s) in map.unwrap_or_default() {
                match out.map.get(&url) {
                    Some(old) if old.day > s.day => {}
                    _ => {
                        out.map.insert(url, s);
                    }
                }
            }
        }
        Ok(out)
    }

    pub fn get(&self, url: &str) -> Option<&ListingState> {
        self.map.get(url)
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Change one listing's state (kept for this run's file).
    pub fn update(&mut self, url: &str, f: impl FnOnce(&mut ListingState)) {
        let s = self.map.entry(url.to_string()).or_default();
        f(s);
        self.changed.insert(url.to_string(), s.clone());
    }

    /// Write what this run changed to `state/listings/<run-id>.json`
    /// (nothing when it changed nothing).
    pub fn save(&self, state_dir: &Path, run_id: &str) -> Result<(), StoreError> {
        if self.changed.is_empty() {
            return Ok(());
        }
        let dir = state_dir.join(LISTINGS_DIR);
        std::fs::create_dir_all(&dir).map_err(|e| StoreError::io(&dir, e))?;
        write_atomic(
            &dir.join(format!("{run_id}.json")),
            super::validators::render(&self.changed).as_bytes(),
        )
    }
}

/// Fold every per-run listings file into one, `listings/<name>.json`, and
/// remove the others (for `scraper compact`). Returns the files folded.
pub fn compact(state_dir: &Path, name: &str) -> Result<usize, StoreError> {
    let dir = state_dir.join(LISTINGS_DIR);
    let none = state_dir.join("listings.json");
    super::run_files::fold(&dir, &none, name, || {
        let all = Listings::load(state_dir)?;
        Ok(super::validators::render(&all.map).into_bytes())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn the_rate_follows_usefulness_with_a_weekly_floor() {
        let t = at("2026-11-01T06:30:00Z");
        let mut s = ListingState::default();
        assert!(s.due(100), "never asked: due");
        s.answered("u", 100, t, true, Read::Redundant, None);
        assert_eq!(s.every, 1, "a first read teaches nothing");
        assert!(s.due(100) && s.due(101), "daily: every run");
        let mut waits = vec![];
        let mut day = 101;
        for _ in 0..5 {
            assert!(s.due(day), "day {day}");
            s.answered("u", day, t, true, Read::Redundant, None);
            waits.push(s.every);
            assert!(s.due_day > day && s.due_day <= day + s.every, "{s:?}");
            assert!(!s.due(s.due_day - 1), "not before its day");
            day = s.due_day;
        }
        assert_eq!(waits, [2, 4, 7, 7, 7], "doubling up to a week");
        // Once at the weekly floor, a whole week between reads.
        s.answered("u", day, t, true, Read::Redundant, None);
        assert_eq!(s.due_day, day + 7);
        // Listings of many hosts on the same rate are spread over the days.
        let due: std::collections::BTreeSet<u32> = (0..40)
            .map(|i| {
                let mut l = ListingState {
                    every: 4,
                    reads: 3,
                    ..ListingState::default()
                };
                l.answered(
                    &format!("http://h{i}.test/sitemap.xml"),
                    200,
                    t,
                    true,
                    Read::Redundant,
                    None,
                );
                l.due_day
            })
            .collect();
        assert!(due.len() >= 4, "{due:?}");
        s.answered("u", day, t, true, Read::Useful, None);
        assert_eq!(s.every, 1, "a useful read makes it daily again");
        assert_eq!((s.reads, s.useful), (8, 1));
    }

    #[test]
    fn unchanged_only_when_the_parent_says_so_after_a_full_read() {
        let mut s = ListingState::default();
        let read = at("2026-11-02T06:30:00Z");
        assert!(!s.unchanged_since_read(Some(at("2026-01-01T00:00:00Z"))));
        s.answered("u", 1, read, false, Read::Redundant, None);
        assert!(
            !s.unchanged_since_read(Some(at("2026-01-01T00:00:00Z"))),
            "read in part only"
        );
        s.answered(
            "u",
            2,
            read,
            true,
            Read::Redundant,
            Some("2026-11-01".into()),
        );
        assert!(s.unchanged_since_read(Some(at("2026-11-01T00:00:00Z"))));
        assert!(s.unchanged_since_read(Some(read)));
        assert!(!s.unchanged_since_read(Some(at("2026-11-02T07:00:00Z"))));
        assert!(
            !s.unchanged_since_read(None),
            "no lastmod: may have changed"
        );
    }

    #[test]
    fn per_run_files_merge_later_day_wins_and_compact() {
        let dir = tempfile::tempdir().unwrap();
        let st = dir.path();
        let t = at("2026-11-02T06:30:00Z");
        let mut one = Listings::load(st).unwrap();
        let mut two = Listings::load(st).unwrap();
        one.update("http://a.test/feed", |s| {
            s.answered("a", 5, t, true, Read::Useful, None)
        });
        two.update("http://a.test/feed", |s| {
            s.answered("a", 6, t, true, Read::Redundant, None)
        });
        two.update("http://b.test/s.xml", |s| {
            s.answered("a", 6, t, false, Read::Redundant, None)
        });
        two.save(st, "20261102T063000Z-bbbb").unwrap();
        one.save(st, "20261102T063000Z-aaaa").unwrap();
        Listings::default()
            .save(st, "20261103T063000Z-cccc")
            .unwrap();
        let back = Listings::load(st).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(
            back.get("http://a.test/feed").unwrap().day,
            6,
            "later day wins"
        );
        assert!(back.get("http://b.test/s.xml").unwrap().read.is_none());
        assert_eq!(compact(st, "20261104T000000Z-compact").unwrap(), 2);
        assert_eq!(Listings::load(st).unwrap().map, back.map);
        std::fs::write(st.join("listings/20261105T000000Z-x.json"), "[").unwrap();
        assert!(
            Listings::load(st).is_err(),
            "a broken file is an error naming it"
        );
    }

    #[test]
    fn a_quiet_day_keeps_the_rate_a_redundant_read_doubles_it() {
        let t = chrono::Utc::now();
        let mut s = ListingState::default();
        s.answered("u", 10, t, true, Read::Useful, None);
        s.answered("u", 11, t, true, Read::Quiet, None);
        assert_eq!(
            s.every, 1,
            "a host's only listing on a quiet day stays daily"
        );
        s.answered("u", 12, t, true, Read::Redundant, None);
        assert_eq!(s.every, 2);
        s.answered("u", 14, t, true, Read::Quiet, None);
        assert_eq!(s.every, 2);
        s.answered("u", 16, t, true, Read::Covered, None);
        assert_eq!(s.every, MAX_EVERY_DAYS);
    }
}
