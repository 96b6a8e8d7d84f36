//! What goes into the frontier: a URL queued if the seen-set, this run,
//! the partition and the trap rules allow it; seeds, handed-over work, and
//! the scope a link must be in. And what comes out: a job for each URL the
//! frontier hands out, with its conditional headers.

use chrono::{DateTime, Utc};

use super::Engine;
use super::work::Pushed;
use crate::config::Scope;
use crate::crawl::tasks::Tasks;
use crate::crawl::worker::Job;
use crate::frontier::{Entry, Kind, Origin};
use crate::record::event::{self, Event};
use crate::store::outbox::Inbox;
use crate::store::seen::Failure;
use crate::url::{self, Url};

impl Engine {
    /// Queue a URL if the seen-set and this run allow it. Returns whether it was queued.
    pub(crate) fn enqueue(&mut self, url: &Url, entry: Entry) -> bool {
        self.enqueue_from(url, entry, None)
    }

    /// [`Engine::enqueue`] for a link found on the page `from` (the pattern
    /// cap counts only links between pages of one pattern).
    pub(crate) fn enqueue_from(&mut self, url: &Url, mut entry: Entry, from: Option<&Url>) -> bool {
        if !self.work.owns(url) {
            self.work.hand_over(url, entry);
            return false;
        }
        let hash = url::seen_hash(url);
        if entry.origin != Origin::Seed && self.seen_refuses(url, &entry, hash) {
            return false;
        }
        let host = url::host_key(url);
        if entry.origin != Origin::Seed {
            let rules = self.facts.config().crawl.traps.rules();
            let today = self.facts.today();
            let trap = rules.check(url).or_else(|| {
                // Only URLs found by links: listings and seeds name real pages.
                let from =
                    from.filter(|_| matches!(entry.origin, Origin::Relevant | Origin::Other))?;
                self.work.admit_link(&host, url, from, &rules, today)
            });
            if let Some(trap) = trap {
                // Met once per run: it then counts as met in this run.
                self.work.met(hash);
                self.ledger.trapped(&host, url, trap);
                return false;
            }
        }
        // Credited to the linking page's family if the link leads to an article.
        let credit = match from {
            Some(from) => {
                if !self.admit_family(&host, url, &mut entry) {
                    self.work.met(hash);
                    return false;
                }
                Some(crate::store::state::families::key(
                    &url::host_key(from),
                    &crate::url::trap::family(from),
                ))
            }
            None => None,
        };
        let child_sitemap = entry.kind == Kind::Sitemap && entry.origin == Origin::Listed;
        let fresh_page = entry.kind == Kind::Page && !entry.backlog && !entry.explore;
        // Only fresh links earn their page's family a credit: a tag page
        // that leads into the archive pays nothing to a daily run.
        let credit = credit.filter(|_| !entry.backlog);
        let how = Pushed {
            by_link: from.is_some(),
            fresh_page,
            child_sitemap,
            credit,
        };
        if self.work.push(&host, hash, entry, how) {
            self.ledger.host(&host).queued();
            true
        } else {
            false
        }
    }

    /// Is a non-seed URL refused because this run has it already, or the
    /// seen-set says it is not due again (stored, failed for good, or a
    /// page fetched within `revisit_after_days`)?
    fn seen_refuses(&mut self, url: &Url, entry: &Entry, hash: u64) -> bool {
        if self.work.in_run(hash) {
            return true;
        }
        // Feeds and sitemaps a listing gave (an index's children) are read
        // again every run, conditionally: an unchanged one costs a 304. Those
        // found by links follow the revisit rule, like pages.
        if !entry.update
            && (entry.kind == Kind::Page || entry.origin != Origin::Listed)
            && let Some(seen) = self.sink.seen(hash)
            && !seen.due_after(
                self.facts.day(),
                self.facts.config().crawl.revisit_after_days,
                self.facts.config().crawl.retry_failed_after_days,
            )
        {
            match Failure::from_flags(seen.flags) {
                Some(f) => {
                    tracing::debug!(%url, failed = f.as_str(), day = seen.day, "failed before for good; not queued until retry_failed_after_days");
                    self.ledger.host(&url::host_key(url)).known_failure();
                }
                None => {
                    tracing::trace!(%url, stored = seen.is_stored(), "seen before; not queued")
                }
            }
            return true;
        }
        false
    }

    /// Queue what other partitions left in this partition's outbox.
    pub(crate) fn take_inbox(&mut self, inbox: &Inbox) -> usize {
        let mut queued = 0;
        for entry in &inbox.entries {
            if let Some(u) = url::parse(&entry.url)
                && self.enqueue(&u, entry.clone())
            {
                queued += 1;
            }
        }
        queued
    }

    /// Queue the configured seeds (at the start, on reseed and on resume).
    pub(crate) fn queue_seeds(&mut self) {
        for entry in self.work.seeds() {
            if let Some(u) = url::parse(&entry.url) {
                self.ledger.emit(Event::Seed(event::Seed {
                    url: u.to_string(),
                    kind: entry.kind,
                }));
                if !self.defer_listing(&u, &entry) {
                    self.enqueue(&u, entry);
                }
            }
        }
    }

    /// May we fetch `u`? `from_relevant` says whether the link came from a relevant page (or a listing).
    pub(super) fn in_scope(&self, u: &Url, from_relevant: bool) -> bool {
        if self.ctx.scope.contains(u) {
            return true;
        }
        if self.facts.config().crawl.scope != Scope::Open {
            return false;
        }
        self.work.admit_open(&self.ctx.scope, u, from_relevant)
    }

    /// Hand a ready URL to a worker: with the validators kept for it (or,
    /// for a stored article asked again, the day it was stored), unless its
    /// family stopped paying since it was queued.
    pub(super) fn dispatch(&mut self, tasks: &mut Tasks, host: String, entry: Entry) {
        let Some(u) = url::parse(&entry.url) else {
            self.work.unfetchable(&host, self.now());
            return;
        };
        let (etag, mut last_modified) = match self.book.validator(u.as_str()) {
            Some(v) => (v.etag.clone(), v.last_modified.clone()),
            None => (None, None),
        };
        if entry.update
            && let Some(seen) = self.sink.seen(url::seen_hash(&u))
        {
            // Asked "changed since the day we stored it?".
            last_modified = Some(http_day(seen.day));
        }
        if self.family_stopped_now(&host, &u, &entry) {
            self.work.released(&host, self.now());
            return;
        }
        self.ledger
            .host(&host)
            .dispatched(entry.backlog, entry.explore);
        tracing::debug!(url = %u, kind = ?entry.kind, origin = ?entry.origin, depth = entry.depth, value = entry.value, backlog = entry.backlog, explore = entry.explore, "dispatch");
        let job = Job {
            host,
            url: u,
            entry,
            etag,
            last_modified,
            freed: false,
        };
        tasks.spawn(self.ctx.clone(), job);
    }
}

/// The start of day stamp `day` as an HTTP date (for `If-Modified-Since`).
fn http_day(day: u32) -> String {
    let t = DateTime::<Utc>::UNIX_EPOCH + chrono::Duration::days(i64::from(day));
    t.format("%a, %d %b %Y %H:%M:%S GMT").to_string()
}
