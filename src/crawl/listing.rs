//! What the engine does with robots.txt answers and with feeds and sitemaps:
//! Crawl-delay and `Sitemap:` lines, consent snapshots, listed URLs queued
//! under the `--min-lastmod` cut-off.

use chrono::Utc;

use super::engine::{Engine, MAX_SITEMAP_DEPTH};
use super::worker::{Job, Meta};
use crate::discover::{self, Listed, Listing, Parsed};
use crate::frontier::{Entry, Kind, Origin};
use crate::record::event::{self, Event, ListingWarning};
use crate::store::state::Validator;
use crate::url;

impl Engine {
    /// Robots.txt arrived for a host: its Crawl-delay and Sitemap lines.
    pub(super) fn take_robots(&mut self, host: &str, robots: &crate::net::Robots) {
        if let Some(delay) = robots.crawl_delay {
            let gap = delay.max(self.config.crawl.min_host_gap.0);
            self.frontier.set_gap(host, gap);
        }
        self.log.emit(Event::Robots(event::RobotsRead {
            host: host.to_string(),
            outcome: robots.outcome.clone(),
            crawl_delay_ms: robots.crawl_delay.map(|d| d.as_millis() as u64),
            sitemaps: robots.sitemaps.len(),
        }));
        let signals: Vec<String> = robots
            .content_signals
            .iter()
            .map(|c| crate::consent::Signal::ContentSignal(c.clone()).to_string())
            .collect();
        self.store
            .consent
            .robots(crate::store::consent::RobotsSnapshot {
                host,
                outcome: &robots.outcome,
                hash: robots.hash,
                content_signal: &signals,
                body: &robots.body,
            });
        match &robots.outcome {
            crate::net::RobotsOutcome::Parsed(status)
            | crate::net::RobotsOutcome::AllowAll(status) => self.reach.answered(host, *status),
            crate::net::RobotsOutcome::DisallowAll(why) => {
                // Unreachable today: the host's queue is kept for the next run
                // and its cut-off stays where it was.
                let kept = self.frontier.take_host(host);
                let dropped = kept.len();
                self.sets.kept.extend(kept);
                let failure = match &robots.error {
                    Some(e) => e.class().to_string(),
                    None => format!("robots {why}"),
                };
                self.reach.failed(&failure);
                self.reach.trouble(host, format!("robots.txt: {why}"));
                tracing::info!(%host, %why, kept = dropped, "robots.txt unreachable: host not crawled this run; its queue is kept for the next");
                self.log.emit(Event::HostRested(event::HostRested {
                    host: host.to_string(),
                    reason: Some(event::RestReason::Robots(why.clone())),
                    dropped,
                    kept: true,
                }));
                return;
            }
        }
        for sm in robots.sitemaps.clone() {
            if self.ctx.redirect_in_scope(&sm) || url::host_key(&sm) == host {
                let entry = Entry::new(sm.to_string(), Kind::Sitemap, Origin::Seed, 0);
                if !self.seeds.iter().any(|s| s.url == entry.url) {
                    self.seeds.push(entry.clone());
                }
                self.enqueue(&sm, entry);
            }
        }
    }

    pub(super) fn listing(&mut self, job: &Job, meta: &Meta, parsed: Parsed) {
        if parsed.cut > 0 || parsed.partial.is_some() {
            let reason = parsed.partial.as_ref().map(|e| e.to_string());
            tracing::warn!(url = %job.url, cut = parsed.cut, ?reason, "listing read only in part");
            self.host(&job.host).bad_listing();
            if parsed.cut > 0 {
                self.capped(&job.host, &job.url, crate::record::ParseCap::ListingEntries);
            }
            self.log.emit(Event::Warning(event::Warning {
                url: job.url.to_string(),
                what: ListingWarning::ReadInPart {
                    cut: parsed.cut,
                    reason,
                },
            }));
        }
        // The cut-off of the source that was read (see `outage::Cutoff`).
        let cutoff = self.cutoff.for_host(&job.host);
        let (pages, children): (Vec<Listed>, Vec<Listed>) = match parsed.listing {
            Listing::Feed(entries) => (entries, vec![]),
            // An index's children: the undated, the recent and the newest few, not the whole archive.
            Listing::Sitemap { urls, sitemaps } => {
                if !sitemaps.is_empty() {
                    // An index is always read in full: its children can change while it does not.
                    self.store
                        .validators
                        .set(job.url.as_str(), Validator::default());
                }
                // Nesting is counted from where the chain started (a seed or robots.txt: 0).
                let children = if sitemaps.is_empty() || job.entry.depth + 1 < MAX_SITEMAP_DEPTH {
                    discover::select_children(&sitemaps, cutoff, 3, 200)
                } else {
                    self.host(&job.host).bad_listing();
                    tracing::warn!(url = %job.url, "sitemap nesting too deep; children not read");
                    self.log.emit(Event::Warning(event::Warning {
                        url: job.url.to_string(),
                        what: ListingWarning::NestingTooDeep {
                            children: sitemaps.len(),
                        },
                    }));
                    vec![]
                };
                (urls, children)
            }
        };
        let total = pages.len() + children.len();
        let mut queued = 0;
        let mut too_old = 0;
        for (kind, list) in [(Kind::Page, pages), (Kind::Sitemap, children)] {
            for item in list {
                // Child sitemaps were chosen by `select_children`, which keeps a few
                // stale-dated newest ones on purpose; the cut-off applies to pages.
                if kind == Kind::Page
                    && let (Some(cut), Some(lm)) = (cutoff, item.lastmod)
                    && lm.with_timezone(&Utc) < cut
                {
                    too_old += 1;
                    continue;
                }
                if item.url == meta.url || item.url == job.url {
                    continue; // a sitemap index that lists itself
                }
                if !self.in_scope(&item.url, true) {
                    continue;
                }
                let value = self.listed_value(&item);
                let entry = Entry {
                    url: item.url.to_string(),
                    kind,
                    origin: Origin::Listed,
                    depth: job.entry.depth + 1,
                    lastmod: item.lastmod.map(|d| d.to_rfc3339()),
                    value,
                };
                if self.enqueue(&item.url, entry) {
                    queued += 1;
                }
            }
        }
        tracing::debug!(url = %job.url, total, queued, too_old, "listing read");
        self.log.emit(Event::Discovery(event::Discovery {
            url: job.url.to_string(),
            entries: total,
            queued,
            too_old,
        }));
    }
}
