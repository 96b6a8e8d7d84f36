//! The listings book: what the run knows and learns of the feeds, sitemaps
//! and HTML listings it reads, and of the validators of every URL it asks
//! conditionally. It owns the listing states (`state/listings/`) and the
//! validators (`state/validators/`) as loaded, what this run learned of each
//! listing ([`ListingObs`]), which listings it read, and the listings held
//! back by their rate (and the hosts whose held-back listings were woken).
//!
//! Its rules: a listing not due by its rate is held back unless another
//! listing of its host failed or looks truncated (then the host is woken,
//! once); at the end of the run a child's fresh URLs count for its index and
//! up the chain, and each listing answered gets its read judged
//! ([`Book::settle`]).

use std::collections::{HashMap, HashSet};
use std::path::Path;

use chrono::{DateTime, Utc};

use crate::frontier::Entry;
use crate::store::StoreError;
use crate::store::state::{self, ListingState, Listings, Validator, Validators};
use crate::url;

/// What this run learned of one listing.
#[derive(Debug, Clone, Default)]
pub(crate) struct ListingObs {
    /// It was asked and answered (200 or 304).
    pub answered: bool,
    /// Read in full (a whole 200, or a 304 after a full read).
    pub full: bool,
    /// Fresh URLs it (or its children) brought that no other listing had.
    pub fresh: u32,
    /// It is a feed.
    pub feed: bool,
    /// Stored articles it (or its children) said changed: a read that
    /// brings updates pays too, so a sitemap that announces them stays daily.
    pub updates: u32,
    /// The index that listed it, and the `<lastmod>` it gave.
    pub parent: Option<String>,
    pub(crate) parent_lastmod: Option<String>,
}

pub(super) struct Book {
    /// What is known of every feed and sitemap (`state/listings/`).
    listings: Listings,
    /// ETag / Last-Modified per URL (`state/validators/`).
    validators: Validators,
    /// What this run learned of each listing it queued or asked, by URL.
    obs: HashMap<String, ListingObs>,
    /// Feeds and sitemaps answered in this run (seen hashes), 304s included.
    read: HashSet<u64>,
    /// Listings not due today by their learned rate, per host: queued at
    /// once if another listing of the host fails or looks truncated.
    deferred: HashMap<String, Vec<Entry>>,
    /// Hosts whose held-back listings were woken (read today whatever their rate).
    woken: HashSet<String>,
}

impl Book {
    pub(super) fn new(listings: Listings, validators: Validators) -> Book {
        Book {
            listings,
            validators,
            obs: HashMap::new(),
            read: HashSet::new(),
            deferred: HashMap::new(),
            woken: HashSet::new(),
        }
    }

    /// The validators kept for a URL.
    pub(super) fn validator(&self, url: &str) -> Option<&Validator> {
        self.validators.get(url)
    }

    /// Keep a URL's validators for its next request.
    pub(super) fn keep_validator(&mut self, url: &str, v: Validator) {
        self.validators.set(url, v);
    }

    /// What is known of a listing from earlier runs.
    pub(super) fn state(&self, url: &str) -> Option<&ListingState> {
        self.listings.get(url)
    }

    /// A listing answered (a 200 read in full when `full`, or a 304 after
    /// such a read): what this run learns of it.
    pub(super) fn answered(&mut self, url: &str, full: bool) -> &mut ListingObs {
        let obs = self.obs.entry(url.to_string()).or_default();
        obs.answered = true;
        obs.full = full;
        obs
    }

    /// A child sitemap queued from the index `parent`, which dated it `lastmod`.
    pub(super) fn listed_child(&mut self, url: &str, parent: &str, lastmod: Option<String>) {
        self.obs.insert(
            url.to_string(),
            ListingObs {
                parent: Some(parent.to_string()),
                parent_lastmod: lastmod,
                ..ListingObs::default()
            },
        );
    }

    /// Did this run queue or ask the listing already?
    pub(super) fn known(&self, url: &str) -> bool {
        self.obs.contains_key(url)
    }

    /// A feed or sitemap (seen hash) was answered in this run.
    pub(super) fn mark_read(&mut self, hash: u64) {
        self.read.insert(hash);
    }

    /// The feeds and sitemaps answered in this run (seen hashes).
    pub(super) fn read(&self) -> &HashSet<u64> {
        &self.read
    }

    /// Were the held-back listings of `host` woken?
    pub(super) fn is_woken(&self, host: &str) -> bool {
        self.woken.contains(host)
    }

    /// Wake `host`: its held-back listings, the first time (`None` after).
    pub(super) fn wake(&mut self, host: &str) -> Option<Vec<Entry>> {
        if !self.woken.insert(host.to_string()) {
            return None;
        }
        Some(self.deferred.remove(host).unwrap_or_default())
    }

    /// Hold a listing of `host` back. Returns false when it was held already.
    pub(super) fn hold(&mut self, host: &str, entry: &Entry) -> bool {
        let held = self.deferred.entry(host.to_string()).or_default();
        if held.iter().any(|e| e.url == entry.url) {
            return false;
        }
        held.push(entry.clone());
        true
    }

    /// What this run learned of each listing it asked goes into its state: a
    /// child's fresh URLs count for its index too (and up the chain, at most
    /// `max_depth` levels), so an index whose children brought nothing new
    /// is asked less often.
    pub(super) fn settle(&mut self, day: u32, started_at: DateTime<Utc>, max_depth: u32) {
        let obs = std::mem::take(&mut self.obs);
        let mut credit: HashMap<&str, u32> = HashMap::new();
        for o in obs.values().filter(|o| o.fresh + o.updates > 0) {
            let mut parent = o.parent.as_deref();
            // Indexes nest at most `max_depth` deep; the bound also ends a loop.
            for _ in 0..max_depth + 1 {
                let Some(p) = parent else { break };
                *credit.entry(p).or_default() += o.fresh + o.updates;
                parent = obs.get(p).and_then(|x| x.parent.as_deref());
            }
        }
        // Hosts some listing of which brought fresh URLs: on the others it was
        // a quiet day, which says nothing about how often to read them.
        let hosts_where = |f: &dyn Fn(&ListingObs) -> bool| -> HashSet<String> {
            obs.iter()
                .filter(|(_, o)| f(o))
                .filter_map(|(u, _)| url::parse(u).map(|u| url::host_key(&u)))
                .collect()
        };
        let busy = hosts_where(&|o| o.fresh > 0);
        // Hosts whose feed brought fresh URLs: the others listings repeated.
        let fed = hosts_where(&|o| o.feed && o.fresh > 0);
        let host_in = |u: &str, set: &HashSet<String>| {
            url::parse(u).is_some_and(|u| set.contains(&url::host_key(&u)))
        };
        for (url, o) in obs.iter().filter(|(_, o)| o.answered) {
            let read = if o.fresh + o.updates + credit.get(url.as_str()).copied().unwrap_or(0) > 0 {
                state::Read::Useful
            } else if host_in(url, &fed) {
                state::Read::Covered
            } else if host_in(url, &busy) {
                state::Read::Redundant
            } else {
                state::Read::Quiet
            };
            let lastmod = o.parent_lastmod.clone();
            self.listings.update(url, |s| {
                s.answered(url, day, started_at, o.full, read, lastmod)
            });
        }
    }

    /// Save the validators, then the listing states (`state/`).
    pub(super) fn save(&mut self, state_dir: &Path, run_id: &str) -> Result<(), StoreError> {
        self.validators.save(state_dir, run_id)?;
        self.listings.save(state_dir, run_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontier::{Kind, Origin};

    fn book() -> Book {
        Book::new(Listings::default(), Validators::default())
    }

    #[test]
    fn a_host_is_woken_once_and_gets_the_listings_held_back() {
        let mut b = book();
        let e = Entry::new(
            "https://a.test/s.xml".to_string(),
            Kind::Sitemap,
            Origin::Seed,
            0,
        );
        assert!(b.hold("a.test", &e));
        assert!(!b.hold("a.test", &e), "held twice");
        assert!(!b.is_woken("a.test"));
        let held = b.wake("a.test").expect("the first wake");
        assert_eq!(held.len(), 1);
        assert!(b.is_woken("a.test"));
        assert!(b.wake("a.test").is_none(), "woken twice");
    }

    #[test]
    fn an_index_is_credited_with_its_childs_fresh_urls() {
        let mut b = book();
        let started: DateTime<Utc> = "2026-12-01T06:00:00Z".parse().unwrap();
        let (index, child) = ("https://a.test/index.xml", "https://a.test/c.xml");
        let quiet = "https://b.test/s.xml";
        b.answered(index, true);
        b.listed_child(child, index, None);
        b.answered(child, true).fresh = 2;
        b.answered(quiet, true);
        b.settle(20_000, started, 3);
        let useful = |u: &str| b.state(u).map(|s| (s.useful, s.reads));
        assert_eq!(useful(child), Some((1, 1)));
        assert_eq!(
            useful(index),
            Some((1, 1)),
            "the index brought its child's URLs"
        );
        assert_eq!(useful(quiet), Some((0, 1)));
        assert_eq!(
            b.state(index).and_then(|s| s.read),
            Some(started),
            "read in full"
        );
    }
}
