//! What the engine does with robots.txt answers and with feeds and sitemaps:
//! Crawl-delay and `Sitemap:` lines, consent snapshots, listed URLs queued
//! under the `--min-lastmod` cut-off.

use chrono::Utc;

use super::{Engine, MAX_SITEMAP_DEPTH};
use crate::crawl::worker::{Job, Meta};
use crate::discover::{self, Listed, Listing, Parsed};
use crate::frontier::{Entry, Kind, Origin};
use crate::record::event::{self, Event, ListingWarning};
use crate::store::state::Validator;
use crate::url;

/// A listing that dates more than this share of its stored entries as
/// changed since we stored them (and more than [`MIN_UPDATES_TRUSTED`]) is
/// taken to stamp its generation time, not changes.
const MAX_UPDATE_SHARE: f64 = 0.2;
/// Updates a listing may claim before [`MAX_UPDATE_SHARE`] is applied.
const MIN_UPDATES_TRUSTED: usize = 5;

impl Engine {
    /// Robots.txt arrived for a host: its Crawl-delay and Sitemap lines.
    pub(super) fn take_robots(&mut self, host: &str, robots: &crate::net::Robots) {
        if let Some(delay) = robots.crawl_delay {
            let c = &self.facts.config().crawl;
            let gap =
                crate::net::polite::crawl_delay_gap(delay, c.min_host_gap.0, c.max_crawl_delay.0);
            self.work.set_gap(host, gap);
        }
        self.ledger.emit(Event::Robots(event::RobotsRead {
            host: host.to_string(),
            outcome: robots.outcome.clone(),
            crawl_delay_ms: robots.crawl_delay.map(|d| d.as_millis() as u64),
            sitemaps: robots.sitemaps.len(),
        }));
        if robots.content_usage.malformed > 0 {
            tracing::info!(%host, lines = robots.content_usage.malformed, "robots.txt: malformed Content-Usage lines ignored");
            self.ledger
                .host(host)
                .bad_content_usage(robots.content_usage.malformed);
        }
        let signals: Vec<String> = robots
            .content_signals
            .iter()
            .map(|c| crate::consent::Signal::ContentSignal(c.clone()).to_string())
            .collect();
        self.ledger
            .robots_snapshot(crate::store::consent::RobotsSnapshot {
                host,
                outcome: &robots.outcome,
                hash: robots.hash,
                content_signal: &signals,
                body: &robots.body,
            });
        match &robots.outcome {
            crate::record::RobotsOutcome::Parsed(status)
            | crate::record::RobotsOutcome::AllowAll(status) => {
                self.ledger.robots_answered(host, *status)
            }
            crate::record::RobotsOutcome::DisallowAll(why) => {
                // Unreachable today: the host's queue is kept for the next run
                // and its cut-off stays where it was.
                let error = robots.error.as_ref().map(crate::net::FetchError::class);
                self.ledger.robots_down(host, why, error);
                let reason = event::RestReason::Robots(why.clone());
                let kept = self.rest_host(host, Some(reason));
                tracing::info!(%host, %why, kept, "robots.txt unreachable: host not crawled this run; its queue is kept for the next");
                return;
            }
        }
        for sm in robots.sitemaps.clone() {
            if self.ctx.redirect_in_scope(&sm) || url::host_key(&sm) == host {
                let entry = Entry::new(sm.to_string(), Kind::Sitemap, Origin::Seed, 0);
                self.work.add_seed(&entry);
                if !self.defer_listing(&sm, &entry) {
                    self.enqueue(&sm, entry);
                }
            }
        }
    }

    pub(super) fn listing(&mut self, job: &Job, meta: &Meta, parsed: Parsed) {
        let full = parsed.cut == 0 && parsed.partial.is_none();
        if !full {
            let reason = parsed.partial.as_ref().map(|e| e.to_string());
            tracing::warn!(url = %job.url, cut = parsed.cut, ?reason, "listing read only in part");
            self.ledger.host(&job.host).bad_listing();
            if parsed.cut > 0 {
                self.ledger
                    .capped(&job.host, &job.url, crate::record::ParseCap::ListingEntries);
            }
            self.ledger.emit(Event::Warning(event::Warning {
                url: job.url.to_string(),
                what: ListingWarning::ReadInPart {
                    cut: parsed.cut,
                    reason,
                },
            }));
        }
        // This listing's own cut-off: its last full read (see `Cutoff::for_listing`).
        let key = job.url.as_str().to_string();
        let previous = self.book.state(&key).and_then(|s| s.read);
        let cutoff = self.facts.cutoff().for_listing(previous);
        let is_feed = matches!(parsed.listing, Listing::Feed(_));
        let (pages, children): (Vec<Listed>, Vec<(Listed, bool)>) = match parsed.listing {
            Listing::Feed(entries) => (entries, vec![]),
            Listing::Sitemap { urls, sitemaps } => {
                if sitemaps.iter().any(|c| c.lastmod.is_none()) {
                    // An index with undated children is read in full when it
                    // is read: they can change while it does not (how often:
                    // its listing state). One that dates every child keeps its
                    // validators: a 304 says no child changed.
                    self.book
                        .keep_validator(job.url.as_str(), Validator::default());
                }
                (urls, self.children(job, sitemaps))
            }
        };
        let total = pages.len() + children.len();
        let read = self.queue_pages(job, meta, pages, cutoff);
        let queued = read.queued + self.queue_children(&key, job, children);
        let (too_old, fresh, oldest) = (read.too_old, read.fresh, read.oldest);
        // A feed whose every entry is new, or whose oldest entry is newer than
        // our last read, may have dropped items we never saw: read the host's
        // other listings today.
        // One that lists entries older than its cut-off reaches back past our
        // last read and dropped nothing (a host quiet yesterday has only
        // today's items in the overlap, all new).
        let listed = total.saturating_sub(too_old);
        let truncated = too_old == 0
            && previous.is_some_and(|p| {
                (listed >= 2 && fresh as usize == listed) || oldest.is_some_and(|o| o > p)
            });
        let obs = self.book.answered(&key, full);
        obs.fresh += fresh;
        obs.feed = is_feed;
        obs.updates += read.updates;
        if truncated || !full {
            self.wake_listings(&job.host, "a listing looks truncated");
        }
        tracing::debug!(url = %job.url, total, queued, too_old, fresh, truncated, "listing read");
        self.ledger.emit(Event::Discovery(event::Discovery {
            url: job.url.to_string(),
            entries: total,
            queued,
            too_old,
        }));
    }

    /// Queue a listing's pages (those at or after its `cutoff`, in scope, new
    /// or changed since stored), and say what they were.
    fn queue_pages(
        &mut self,
        job: &Job,
        meta: &Meta,
        pages: Vec<Listed>,
        cutoff: Option<chrono::DateTime<Utc>>,
    ) -> PagesRead {
        let fresh_since = self.facts.fresh_since(&job.host);
        let mut read = PagesRead::default();
        let (mut stored, mut updates) = (0usize, Vec::new());
        for item in pages {
            let lastmod = item.lastmod.map(|lm| lm.with_timezone(&Utc));
            if let (Some(cut), Some(lm)) = (cutoff, lastmod)
                && lm < cut
            {
                read.too_old += 1;
                continue;
            }
            if let Some(lm) = lastmod {
                read.oldest = Some(read.oldest.map_or(lm, |o| o.min(lm)));
            }
            if item.url == meta.url || item.url == job.url || !self.in_scope(&item.url, true) {
                continue;
            }
            let backlog = lastmod.is_some_and(|lm| lm < fresh_since);
            let mut entry = self.listed_entry(job, &item, Kind::Page);
            entry.backlog = backlog;
            match self.changed_since_stored(&item) {
                Some(true) => {
                    stored += 1;
                    entry.update = true;
                    updates.push((item.url, entry));
                    continue;
                }
                Some(false) => stored += 1,
                None => {}
            }
            // A new URL counts for the listing's rate; an update of a stored one does not.
            if self.enqueue(&item.url, entry) {
                read.queued += 1;
                read.fresh += u32::from(!backlog);
            }
        }
        let updated = self.queue_updates(job, stored, updates);
        read.queued += updated;
        read.updates = updated as u32;
        read
    }

    /// Queue an index's chosen children, each remembering its parent (`key`)
    /// and the `<lastmod>` the parent gave it. Returns how many were queued.
    fn queue_children(&mut self, key: &str, job: &Job, children: Vec<(Listed, bool)>) -> usize {
        let mut queued = 0;
        for (item, backlog) in children {
            let mut entry = self.listed_entry(job, &item, Kind::Sitemap);
            entry.backlog = backlog;
            let parent_lastmod = item.lastmod.map(|d| d.to_rfc3339());
            if self.enqueue(&item.url, entry) {
                queued += 1;
                self.book
                    .listed_child(item.url.as_str(), key, parent_lastmod);
            }
        }
        queued
    }

    /// The children of a sitemap index worth asking for, each with whether it
    /// is backlog: not those the index says are unchanged since our last full
    /// read, not undated ones read too recently for their rate; of the rest,
    /// [`discover::select_children`] against the cut-off of a listing never
    /// read (the undated, the recent and the newest few).
    fn children(&mut self, job: &Job, sitemaps: Vec<Listed>) -> Vec<(Listed, bool)> {
        // Nesting is counted from where the chain started (a seed or robots.txt: 0).
        if !sitemaps.is_empty() && job.entry.depth + 1 >= MAX_SITEMAP_DEPTH {
            self.ledger.host(&job.host).bad_listing();
            tracing::warn!(url = %job.url, "sitemap nesting too deep; children not read");
            self.ledger.emit(Event::Warning(event::Warning {
                url: job.url.to_string(),
                what: ListingWarning::NestingTooDeep {
                    children: sitemaps.len(),
                },
            }));
            return vec![];
        }
        let woken = self.book.is_woken(&job.host);
        // The undated, the recent and the newest few (against the cut-off of
        // a listing never read), then only those that can have changed.
        let floor = self.facts.cutoff().for_listing(None);
        let fresh_since = self.facts.fresh_since(&job.host);
        let mut out = Vec::new();
        for child in discover::select_children(&sitemaps, floor, 3, 200) {
            let state = self.book.state(child.url.as_str());
            let lastmod = child.lastmod.map(|d| d.with_timezone(&Utc));
            if state.is_some_and(|s| s.unchanged_since_read(lastmod)) {
                tracing::debug!(url = %child.url, ?lastmod, "child sitemap unchanged since our last full read: not asked");
                self.ledger.host(&job.host).listing_unchanged();
                continue;
            }
            if lastmod.is_none() && !woken && state.is_some_and(|s| !s.due(self.facts.day())) {
                tracing::debug!(url = %child.url, "undated child sitemap read recently: not due today");
                self.ledger.host(&job.host).listing_not_due();
                continue;
            }
            let never_read = state.is_none_or(|s| s.read.is_none());
            let old = lastmod.is_some_and(|lm| lm < fresh_since);
            out.push((child, never_read && old));
        }
        out
    }

    /// The queue entry of a URL a listing gave.
    fn listed_entry(&self, job: &Job, item: &Listed, kind: Kind) -> Entry {
        Entry {
            url: item.url.to_string(),
            kind,
            origin: Origin::Listed,
            depth: job.entry.depth + 1,
            lastmod: item.lastmod.map(|d| d.to_rfc3339()),
            value: self.listed_value(item),
            backlog: false,
            update: false,
            explore: false,
        }
    }

    /// For a stored article: does the listing say it changed after the day
    /// we stored it (its `updated` / `<lastmod>` on a later day, not in the
    /// future)? `None` for a URL that is not a stored hit.
    fn changed_since_stored(&self, item: &Listed) -> Option<bool> {
        let seen = self.sink.seen(url::seen_hash(&item.url))?;
        if seen.flags & crate::store::seen::flag::HIT == 0 {
            return None;
        }
        Some(item.modified.is_some_and(|modified| {
            let day = crate::store::seen::day_stamp(modified.with_timezone(&Utc));
            day > seen.day && modified.date_naive() <= self.facts.today()
        }))
    }

    /// Queue the stored articles a listing says changed, to be fetched once
    /// more, conditionally, unless the listing claims it of so many of its
    /// stored entries (over [`MAX_UPDATE_SHARE`] of them, and more than
    /// [`MIN_UPDATES_TRUSTED`]) that its dates are its generation time, not
    /// changes. Returns how many were queued.
    fn queue_updates(
        &mut self,
        job: &Job,
        stored: usize,
        updates: Vec<(url::Url, Entry)>,
    ) -> usize {
        if updates.len() > MIN_UPDATES_TRUSTED
            && updates.len() as f64 > MAX_UPDATE_SHARE * stored as f64
        {
            tracing::warn!(url = %job.url, claimed = updates.len(), stored, "listing dates most stored articles as changed: its dates are not trusted for updates");
            return 0;
        }
        let mut queued = 0;
        for (u, entry) in updates {
            tracing::debug!(url = %u, lastmod = ?entry.lastmod, "stored article changed since: asked again, conditionally");
            queued += usize::from(self.enqueue(&u, entry));
        }
        queued
    }

    /// Listings of `host` held back today by their rate, queued now (another
    /// listing of the host failed or looks truncated).
    pub(super) fn wake_listings(&mut self, host: &str, why: &str) {
        let Some(held) = self.book.wake(host) else {
            return;
        };
        if !held.is_empty() {
            tracing::info!(%host, listings = held.len(), %why, "listings held back by their rate are read today");
        }
        for entry in held {
            if let Some(u) = url::parse(&entry.url) {
                self.enqueue(&u, entry);
            }
        }
    }

    /// Hold a seed sitemap back when its rate says it is not due today
    /// (see `store::state::listings`). Returns whether it was held back.
    /// Feeds are asked every run (one conditional request: the day's new
    /// items at their cheapest); sitemaps, which repeat what the feed lists
    /// on most days, at the rate they bring something it did not.
    pub(super) fn defer_listing(&mut self, u: &url::Url, entry: &Entry) -> bool {
        // Feeds are asked every run; sitemaps and seed pages (home and
        // section pages, HTML listings) at their learned rate.
        let html = entry.kind == Kind::Page && entry.origin == Origin::Seed;
        if !(entry.kind == Kind::Sitemap || html) || self.book.known(u.as_str()) {
            return false;
        }
        let host = url::host_key(u);
        if self.book.is_woken(&host) {
            return false;
        }
        let Some(state) = self.book.state(u.as_str()) else {
            return false;
        };
        if state.due(self.facts.day()) {
            return false;
        }
        let (day, every) = (state.day, state.every);
        if !self.book.hold(&host, entry) {
            return true;
        }
        tracing::debug!(url = %u, last_day = day, every_days = every, "listing not due today: not asked");
        self.ledger.host(&host).listing_not_due();
        true
    }
}

/// What [`Engine::queue_pages`] did with a listing's pages.
#[derive(Debug, Default)]
struct PagesRead {
    queued: usize,
    /// Dated before the listing's cut-off.
    too_old: usize,
    /// New URLs no other listing had queued, dated since the host's fresh line.
    fresh: u32,
    /// The oldest date among the entries kept.
    oldest: Option<chrono::DateTime<Utc>>,
    /// Stored articles it says changed, queued to be asked again.
    updates: u32,
}
