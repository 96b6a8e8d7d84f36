//! What the engine does with an extracted page: count it, follow its links
//! (unless it is an article older than the cut-off), then decide
//! ([`Engine::rejection`]), then store: a record made of the page and its
//! provenance goes to the `store::Sink`, which makes it durable before its
//! URLs are hits.

use chrono::Utc;

use super::Engine;
use crate::config::PaywalledText;
use crate::consent::AiDecision;
use crate::crawl::worker::{Job, Meta};
use crate::extract::Page;
use crate::frontier::{Entry, Kind, Origin};
use crate::record::event::{self, Event};
use crate::record::{DateSource, Provenance, Rejection};
use crate::store::sink::Hits;
use crate::url;

impl Engine {
    /// A page: counted, its links followed, then decide, then store.
    /// Returns whether it was stored.
    pub(super) fn page(&mut self, job: &Job, meta: &Meta, page: &Page) -> bool {
        self.count_page(job, meta, page);
        self.links(job, meta, page);
        match self.rejection(job, meta, page) {
            None => self.store(job, meta, page),
            Some(reason) => {
                self.reject(job, meta, reason);
                false
            }
        }
    }

    /// The host's funnel learns of the page; the limits that cut it are logged.
    fn count_page(&mut self, job: &Job, meta: &Meta, page: &Page) {
        let relevant = page.relevance.relevant;
        self.ledger.host(&job.host).page(page.is_article, relevant);
        if let Some(r) = meta.rendered.filter(|r| r.ok) {
            let ms = r.wall.as_millis() as u64;
            self.ledger.host(&job.host).rendered(ms, r.requests);
        }
        self.ledger
            .host(&job.host)
            .bad_content_usage(meta.signals.malformed);
        if page.is_article && relevant {
            self.ledger.host(&job.host).consent(&meta.signals);
        }
        for cause in &page.cuts {
            self.ledger.capped(&job.host, &meta.url, *cause);
        }
    }

    /// Follow the page's links, unless it is older than the cut-off, too
    /// deep, or says `nofollow`; a seed page that is no article is read as
    /// an HTML listing.
    fn links(&mut self, job: &Job, meta: &Meta, page: &Page) {
        // Only an article's own publication date counts: a listing page has none,
        // and a year or date merely written in the text says nothing about the page.
        let dated = page.is_article && page.date_source.is_none_or(DateSource::is_own_date);
        let too_old = match (self.facts.cutoff().for_host(&job.host), page.date) {
            (Some(cut), Some(d)) => dated && d < cut.date_naive(),
            _ => false,
        };
        if too_old {
            tracing::debug!(url = %meta.url, "page older than min_lastmod: links not followed");
            return;
        }
        let nofollow = page
            .robots_meta
            .iter()
            .any(|d| d == "nofollow" || d == "none");
        if job.entry.depth >= self.facts.config().crawl.max_depth || nofollow {
            return;
        }
        let before = self.work.fresh_links();
        self.follow_links(job, meta, page);
        let fresh = self.work.fresh_links() - before;
        if job.entry.origin == Origin::Seed && !page.is_article {
            self.html_listing_read(job, fresh);
        }
    }

    /// A page not stored, for `reason`: logged (a page withheld for AI use
    /// also in the consent log).
    fn reject(&mut self, job: &Job, meta: &Meta, reason: Rejection) {
        if reason == Rejection::WithheldAiUse {
            self.withhold(job, meta);
            return;
        }
        tracing::debug!(url = %meta.url, %reason, "not stored");
        self.ledger.emit(Event::Rejected(event::Rejected {
            url: meta.url.to_string(),
            reason,
            signals: None,
        }));
    }

    /// Queue the page's links and feeds that are in scope, valued by their clues.
    fn follow_links(&mut self, job: &Job, meta: &Meta, page: &Page) {
        let relevant = page.relevance.relevant;
        // An article's own comment feed lists comments, not articles.
        let feeds = page
            .feeds
            .iter()
            .filter(|f| !(page.is_article && crate::discover::is_comment_feed(&meta.url, f)));
        let anchors = page.anchors.iter().map(Some).chain(std::iter::repeat(None));
        let links = page.links.iter().zip(anchors);
        for (link, anchor) in links.chain(feeds.map(|f| (f, None))) {
            if !self.in_scope(link, relevant) {
                continue;
            }
            let kind = crate::discover::kind_from_url(link).unwrap_or(Kind::Page);
            let origin = if relevant {
                Origin::Relevant
            } else {
                Origin::Other
            };
            let value = if kind == Kind::Page {
                self.link_value(link, anchor.map(String::as_str), relevant)
            } else {
                crate::frontier::NEUTRAL as f32
            };
            let entry = Entry {
                url: link.to_string(),
                kind,
                origin,
                depth: job.entry.depth + 1,
                lastmod: None,
                value,
                // Links of the archive's backlog are backlog too; links of an
                // exploration page are judged as such (`family.rs`).
                backlog: job.entry.backlog,
                update: false,
                explore: job.entry.explore,
            };
            self.enqueue_from(link, entry, Some(&meta.url));
        }
    }

    /// A seed page that is no article (a home or section page) was read: it
    /// is a listing like a feed, useful when its links added fresh pages no
    /// other listing of the host had queued, and so read as often as that
    /// happens (`store::state::listings`).
    fn html_listing_read(&mut self, job: &Job, fresh: u32) {
        tracing::debug!(url = %job.url, fresh, "HTML listing read");
        self.book.answered(job.url.as_str(), true).fresh += fresh;
    }

    /// Why the page is not stored, in this order; `None`: it is.
    fn rejection(&mut self, job: &Job, meta: &Meta, page: &Page) -> Option<Rejection> {
        if job.entry.kind != Kind::Page || crate::discover::kind_from_url(&meta.url).is_some() {
            Some(Rejection::Listing)
        } else if !page.is_article {
            Some(Rejection::NotArticle)
        } else if !page.relevance.relevant {
            Some(Rejection::NotRelevant)
        } else if page.title.as_deref().is_none_or(|t| t.trim().is_empty()) {
            Some(Rejection::NoTitle)
        } else if self.unchanged_or_stored(job, meta, page) {
            Some(Rejection::AlreadyStored)
        } else if page.accessible_for_free == Some(false)
            && self.facts.config().crawl.paywalled_text == PaywalledText::Skip
        {
            Some(Rejection::Paywalled)
        } else if AiDecision::new(&meta.signals, self.facts.config().crawl.ai_use_policy)
            == AiDecision::Withhold
        {
            Some(Rejection::WithheldAiUse)
        } else {
            None
        }
    }

    /// The publisher reserves AI training: not stored, not archived
    /// (whatever `crawl.archive` says), noted in the consent log.
    fn withhold(&mut self, job: &Job, meta: &Meta) {
        self.sink.drop_held();
        let labels = meta.signals.labels();
        self.ledger.host(&job.host).withheld();
        let domain = url::domain(meta.url.host_str().unwrap_or(""));
        self.ledger.withheld(meta.url.as_str(), domain, &labels);
        tracing::info!(url = %meta.url, signals = ?labels, "withheld: the publisher reserves AI training");
        self.ledger.emit(Event::Rejected(event::Rejected {
            url: meta.url.to_string(),
            reason: Rejection::WithheldAiUse,
            signals: Some(labels),
        }));
    }

    /// Stored before: for an article asked again because its listing says it
    /// changed ([`Entry::update`]), only when its text is the stored one
    /// (then it is remembered as checked today); for any other page, when
    /// its URL or canonical URL is a stored hit.
    fn unchanged_or_stored(&mut self, job: &Job, meta: &Meta, page: &Page) -> bool {
        if !job.entry.update {
            return self.already_stored(meta, page);
        }
        let hash = url::seen_hash(&meta.url);
        let Some(seen) = self.sink.seen(hash) else {
            return self.already_stored(meta, page);
        };
        let hits = Hits::new(&job.url, &meta.url, page.canonical_url.as_ref(), &page.text);
        self.sink.claim(&hits);
        let print = hits.print;
        let unchanged = match seen.text_print() {
            // Stored before fingerprints existed: the page's own date decides.
            0 => page.date_modified.is_none_or(|d| {
                crate::store::seen::day_stamp(d.and_time(chrono::NaiveTime::MIN).and_utc())
                    <= seen.day
            }),
            old => old == print,
        };
        if unchanged {
            tracing::debug!(url = %meta.url, "asked again after a listing said it changed: text unchanged, not stored again");
            self.sink.mark(hash, seen.flags);
        }
        unchanged
    }

    pub(super) fn already_stored(&self, meta: &Meta, page: &Page) -> bool {
        // Stored in an earlier run, or in this one (its frame may not be
        // closed yet, so the seen-set does not say it: a redirect onto a
        // page stored minutes ago must not store it twice).
        let stored = |h: u64| self.sink.is_stored(h);
        stored(url::seen_hash(&meta.url))
            || page
                .canonical_url
                .as_ref()
                .is_some_and(|c| stored(url::seen_hash(c)))
    }

    /// Store the page: its record, made of the page and its provenance
    /// (the held exchange archived with it), goes to the [`Sink`], which
    /// marks its URLs as hits once the record is durable.
    ///
    /// [`Sink`]: crate::store::sink::Sink
    pub(super) fn store(&mut self, job: &Job, meta: &Meta, page: &Page) -> bool {
        let id = self.sink.next_id();
        let mut prov = self.provenance(id, job, meta);
        self.sink.archive_held(&mut prov);
        let mut article =
            crate::extract::record::article(page, &meta.url, &prov, self.facts.extractor_version());
        if self.facts.config().crawl.paywalled_text == PaywalledText::Flag {
            crate::extract::record::keep_free_part(&mut article, page);
        }
        article.rendered = meta.rendered.is_some_and(|r| r.kept);
        if job.entry.update {
            self.ledger.host(&job.host).updated += 1;
            tracing::info!(url = %meta.url, "the publisher changed a stored article: stored as a new version");
        }
        let hits = Hits::new(&job.url, &meta.url, page.canonical_url.as_ref(), &page.text);
        self.sink.stage(&article, &hits);
        if self.sink.full() {
            self.flush();
        }
        self.count_stored(job, meta, &article);
        true
    }

    /// Where a record comes from: this run, the fetch, its consent signals.
    fn provenance(&self, id: i64, job: &Job, meta: &Meta) -> Provenance {
        Provenance {
            id,
            fetched_at: crate::date::whole_seconds(Utc::now()),
            run_id: Some(self.facts.run_id().to_string()),
            robots_hash: crate::store::consent::robots_hash_hex(meta.robots_hash),
            ai_signals: meta.signals.labels(),
            ai_reserved: Some(crate::consent::reserves_ai_training(&meta.signals)),
            crawler: Some(concat!("scraper/", env!("CARGO_PKG_VERSION")).to_string()),
            extracted_on: Some(self.facts.today()),
            warc_file: None,
            warc_offset: None,
            updated: job.entry.update,
            // A changed article's listing date, for when the page gives none.
            listed_modified: job
                .entry
                .lastmod
                .as_deref()
                .filter(|_| job.entry.update)
                .and_then(crate::record::when::parse_day),
        }
    }

    /// A record was stored: counted, logged.
    fn count_stored(&mut self, job: &Job, meta: &Meta, article: &crate::record::Article) {
        self.ledger.stored(&job.host, &job.url);
        let id = article.id;
        tracing::info!(id, url = %meta.url, title = %article.title, "stored");
        self.ledger.emit(Event::Stored(event::Stored {
            id,
            url: article.url.clone(),
            domain: article.domain.clone(),
            title: article.title.clone(),
            date: article.date.map(|d| d.to_string()),
            year: article.year,
            date_source: article.date_source.clone(),
        }));
    }

    /// Hand the display this run's totals as they are now.
    pub(crate) fn show_totals(&mut self) {
        let (queued, requests) = (self.work.len(), self.ctx.net.requests());
        self.ledger.show(queued, requests);
    }

    /// Close a frame when it is due; then mark its records as hits.
    pub(crate) fn maybe_flush(&mut self) {
        let queued = self.work.len();
        let requests = self.ctx.net.requests();
        self.show_totals();
        let elapsed = self.facts.now();
        if let Some(e) = self.ledger.progress_event(queued, requests, elapsed) {
            self.ledger.emit(e);
        }
        if self.sink.due() {
            self.flush();
        } else {
            self.ledger.flush_log();
        }
    }

    /// Make the stored records durable and their URLs hits ([`Sink::flush`]),
    /// then the event log (not when the WARC sync failed: the frame waits).
    ///
    /// [`Sink::flush`]: crate::store::sink::Sink::flush
    pub(crate) fn flush(&mut self) {
        if self.sink.flush() {
            self.ledger.flush_log();
        }
    }
}
