//! What the engine does with a finished job: classified once
//! (`crawl::outcome`), recorded by the health tally, the host's counters and
//! the reach tracker, then acted on: a failed fetch by its plan, a status by
//! its plan, a body by its kind (listings in `listing.rs`, pages in
//! `page.rs`); its slot closed, its exchange archived.

use super::Engine;
use crate::config::Scope;
use crate::crawl::outcome::{self, ErrorPlan, StatusPlan};
use crate::crawl::reach::Cause;
use crate::crawl::tasks::Lost;
use crate::crawl::worker::{Body, Done, Job, Meta};
use crate::extract::Page;
use crate::frontier::{Entry, Kind, Origin, Outcome, Verdict};
use crate::net::turned::Turned;
use crate::net::{FetchError, Robots};
use crate::record::Answer;
use crate::record::RobotsOutcome;
use crate::record::event::{self, Event, ListingWarning};
use crate::store::seen::{Failure, flag};
use crate::store::state::Validator;
use crate::url;

impl Engine {
    pub(super) fn lost(&mut self, lost: Lost) {
        let Some(cause) = lost.panic else {
            tracing::debug!(url = %lost.url, "fetch abandoned");
            self.close_host(&lost.host, None);
            return;
        };
        tracing::error!(url = %lost.url, %cause, "worker panicked; the URL is counted as an error");
        self.ledger.panicked(&lost.host);
        self.close_host(&lost.host, Some(Outcome::Error));
        self.ledger.failure(&lost.url, Answer::Panicked, cause);
    }

    /// A finished job: classified once ([`outcome::classify`]), recorded by
    /// the health tally, the host's counters and the reach tracker, then
    /// acted on.
    pub(super) fn handle(&mut self, done: Done) {
        let answer = outcome::classify(&done);
        self.ledger.observe(&done, answer);
        let Done {
            job,
            robots,
            result,
        } = done;
        let host = job.host.clone();
        if let Some(r) = &robots
            && self.work.first_robots(&host)
        {
            self.take_robots(&host, r);
        }
        let status = result.as_ref().ok().map(|(meta, _)| meta.status);
        let source = job.entry.reads_source();
        self.ledger.answer(&host, source, status, answer);
        match result {
            Err(e) => {
                if robots.as_deref().is_some_and(robots_down) {
                    // Refused because robots.txt could not be read today: kept.
                    self.work.keep(job.entry.clone());
                }
                self.failed(&job, e, answer)
            }
            Ok((meta, body)) => self.answered(&job, meta, body, answer),
        }
    }

    /// A job that came back with an answer: counted and logged, its
    /// Retry-After and validators kept, its body acted on, its slot closed.
    fn answered(&mut self, job: &Job, mut meta: Meta, body: Body, answer: Answer) {
        let host = &job.host;
        self.sink.hold(meta.captured.take().map(|c| *c));
        if !job.freed {
            self.work.sent(host, self.facts.since_start(meta.sent_at));
        }
        let listing = job.entry.kind != Kind::Page;
        self.ledger
            .fetched(host, meta.wire_bytes, meta.gap_wait, listing);
        self.ledger.emit(Event::Fetch(event::Fetch {
            url: job.url.to_string(),
            final_url: meta.url.to_string(),
            status: meta.status,
            ms: meta.elapsed.as_millis() as u64,
            bytes: meta.wire_bytes,
            redirects: meta.redirects.len(),
        }));
        if let Some(ra) = meta.retry_after {
            let until = self.now() + ra.min(self.facts.config().crawl.max_retry_after.0);
            self.work.pause(host, until);
        }
        if job.entry.reads_source() {
            self.keep_validator(job, &meta);
        }
        if job.entry.kind != Kind::Page {
            self.book.mark_read(url::seen_hash(&job.url));
        }
        match self.body(job, &meta, body, answer) {
            Some(outcome) => {
                self.close(job, Some(outcome));
                self.open_verdict(host, outcome);
            }
            None => self.close(job, None),
        }
        self.archive_unstored();
    }

    /// Open scope: a host outside the sources leaves the crawl when it
    /// reaches its cap or fails its probation.
    fn open_verdict(&mut self, host: &str, outcome: Outcome) {
        if self.facts.config().crawl.scope != Scope::Open {
            return;
        }
        let Some((verdict, dropped)) = self.work.open_verdict(&self.ctx.scope, host, outcome)
        else {
            return;
        };
        let reason = match verdict {
            Verdict::Keep => return,
            Verdict::Capped => event::RestReason::Capped,
            Verdict::FailedProbation => event::RestReason::FailedProbation,
        };
        tracing::debug!(%host, ?verdict, dropped, "host leaves the open crawl");
        self.ledger.emit(Event::HostRested(event::HostRested {
            host: host.to_string(),
            reason: Some(reason),
            dropped,
            kept: false,
        }));
    }

    /// A captured exchange that was not stored: archived without a metadata
    /// record under `all`, dropped otherwise.
    fn archive_unstored(&mut self) {
        let all = self.facts.config().crawl.archive == crate::config::Archive::All;
        self.sink.archive_unstored(all);
    }

    /// Remember the response's ETag / Last-Modified for the next request of this URL.
    pub(super) fn keep_validator(&mut self, job: &Job, meta: &Meta) {
        if meta.etag.is_some() || meta.last_modified.is_some() {
            self.book.keep_validator(
                job.url.as_str(),
                Validator {
                    etag: meta.etag.clone(),
                    last_modified: meta.last_modified.clone(),
                    day: self.facts.day(),
                },
            );
        }
    }

    /// Rest `host` for the rest of the run and keep its queue for the next
    /// (`reason`: why, when not a rested fetch). Returns how many entries were kept.
    pub(super) fn rest_host(&mut self, host: &str, reason: Option<event::RestReason>) -> usize {
        let n = self.work.rest_host(host);
        self.ledger.emit(Event::HostRested(event::HostRested {
            host: host.to_string(),
            reason,
            dropped: n,
            kept: true,
        }));
        n
    }

    /// A transient failure of `job` (a network failure, a 429 or 5xx, a bot
    /// challenge): a seed, feed or sitemap keeps its host's cut-off (the
    /// host is troubled); a page is kept for the next run.
    fn transient(&mut self, job: &Job, cause: Cause) {
        if job.entry.reads_source() {
            self.ledger.trouble(&job.host, cause);
        } else {
            // Not remembered in the seen-set: tried again next run.
            self.work.keep(job.entry.clone());
        }
    }

    pub(super) fn failed(&mut self, job: &Job, e: FetchError, answer: Answer) {
        let host = job.host.clone();
        if job.entry.kind != Kind::Page && !matches!(e, FetchError::Budget) {
            self.wake_listings(&host, "a listing failed");
        }
        let plan = outcome::error_plan(&e, |u| self.work.owns(u));
        self.ledger.errors(u64::from(plan.counts_as_error()));
        match &plan {
            ErrorPlan::PutBack => {
                // Not sent: put it back for --resume.
                self.close(job, Some(plan.outcome()));
                let hash = url::seen_hash(&job.url);
                self.work.put_back(&host, hash, job.entry.clone());
                return;
            }
            ErrorPlan::Disallowed => tracing::debug!(url = %job.url, "disallowed by robots.txt"),
            ErrorPlan::HandOver(target) => {
                // A redirect to another partition's host: its owner fetches it.
                let entry = Entry {
                    url: target.to_string(),
                    ..job.entry.clone()
                };
                self.work.hand_over(target, entry);
            }
            ErrorPlan::Rest => {
                // Rested for repeated failures or a long Retry-After: its
                // work waits for the next run, and its cut-off stays.
                self.rest_host(&host, None);
                self.work.keep(job.entry.clone());
                self.ledger.trouble(&host, Cause::Rested);
            }
            ErrorPlan::Remember(failure) => {
                // Will not go away by tomorrow: remembered with its class.
                self.sink.mark(url::seen_hash(&job.url), failure.flags());
            }
            ErrorPlan::Network => {
                let class = e.class();
                let url = job.url.clone();
                self.transient(job, Cause::Failed { class, url });
            }
            ErrorPlan::Other => {}
        }
        self.close(job, Some(plan.outcome()));
        self.ledger.failure(&job.url, answer, e.to_string());
        tracing::debug!(url = %job.url, error = %e, "fetch failed");
    }

    /// Act on a fetched body; returns the scheduler outcome (`None`: a feed,
    /// sitemap or 304, which says nothing about the host's yield).
    fn body(&mut self, job: &Job, meta: &Meta, body: Body, answer: Answer) -> Option<Outcome> {
        match body {
            Body::NotModified => {
                self.not_modified(job);
                None
            }
            Body::Status(code) => Some(self.status(job, meta, code)),
            Body::Turned(t) => Some(self.turned_away(job, meta, t, answer)),
            Body::Panicked(cause) => {
                tracing::error!(url = %job.url, %cause, "the parser panicked on this body");
                self.ledger.errors(1);
                self.ledger.failure(&job.url, answer, cause);
                None
            }
            Body::BadListing(reason) => {
                self.wake_listings(&job.host, "a listing is malformed");
                self.ledger.emit(Event::Warning(event::Warning {
                    url: job.url.to_string(),
                    what: ListingWarning::Malformed {
                        reason: reason.clone(),
                    },
                }));
                tracing::warn!(url = %job.url, %reason, "malformed feed or sitemap");
                None
            }
            Body::Listing(listing) => {
                self.sink.mark(url::seen_hash(&job.url), flag::MISS);
                self.listing(job, meta, listing);
                None
            }
            Body::Page(page) => Some(self.page_done(job, meta, &page)),
        }
    }

    /// A 304: nothing new. A stored article asked again keeps its hit flags
    /// and text print; a listing read in full before still is.
    fn not_modified(&mut self, job: &Job) {
        tracing::debug!(url = %job.url, update = job.entry.update, "304 not modified: nothing new");
        let req_hash = url::seen_hash(&job.url);
        let flags = match self.sink.seen(req_hash) {
            Some(s) if job.entry.update => s.flags,
            _ => flag::MISS,
        };
        self.sink.mark(req_hash, flags);
        if job.entry.kind != Kind::Page || job.entry.origin == Origin::Seed {
            let read_before = self
                .book
                .state(job.url.as_str())
                .is_some_and(|s| s.read.is_some());
            self.book.answered(job.url.as_str(), read_before);
        }
    }

    /// A status that is neither 2xx nor 304 (see [`outcome::status_plan`]).
    fn status(&mut self, job: &Job, meta: &Meta, code: u16) -> Outcome {
        if job.entry.kind != Kind::Page {
            self.wake_listings(&job.host, "a listing failed");
        }
        let req_hash = url::seen_hash(&job.url);
        let max = self.facts.config().crawl.max_retry_after.0;
        let tries = self.work.tries(req_hash);
        let plan = outcome::status_plan(code, meta.retry_after, max, tries);
        match plan {
            StatusPlan::Requeue => {
                // Asked to come back later: keep the URL; the host is paused.
                tracing::debug!(url = %job.url, code, retry_after = ?meta.retry_after, tries = tries + 1, "backing off; URL requeued");
                self.work.requeue(&job.host, req_hash, job.entry.clone());
            }
            StatusPlan::Transient => {
                if outcome::may_requeue(code, meta.retry_after, max) {
                    tracing::debug!(url = %job.url, code, "backing off again; URL left for the next run");
                }
                // Not remembered, like a timeout: the next run tries the URL
                // again instead of waiting `revisit_after_days`.
                let url = job.url.clone();
                self.transient(job, Cause::Status { code, url });
            }
            StatusPlan::Gone | StatusPlan::Miss => {
                // 404 and 410 are gone for good; other 4xx are revisited.
                let flags = match plan {
                    StatusPlan::Gone => Failure::Gone.flags(),
                    _ => flag::MISS,
                };
                self.remember(job, meta, flags);
            }
        }
        plan.outcome()
    }

    /// The request's URL and the final one, as seen today with `flags`.
    fn remember(&mut self, job: &Job, meta: &Meta, flags: u32) {
        let (req_hash, final_hash) = (url::seen_hash(&job.url), url::seen_hash(&meta.url));
        self.sink.mark(req_hash, flags);
        if final_hash != req_hash {
            self.sink.mark(final_hash, flags);
        }
    }

    /// An extracted page: links followed and stored or not ([`Engine::page`]);
    /// one that was not stored is remembered as seen today.
    fn page_done(&mut self, job: &Job, meta: &Meta, page: &Page) -> Outcome {
        self.learn_family(job, meta, page.is_article);
        let hit = self.page(job, meta, page);
        if hit {
            return Outcome::Hit;
        }
        if !page.is_article {
            // A listing page (home, section, tag; a seed too, now an HTML
            // listing whose links were queued) is revisited: ask
            // conditionally then.
            self.keep_validator(job, meta);
        }
        let article = if page.is_article { flag::ARTICLE } else { 0 };
        self.remember(job, meta, flag::MISS | article);
        Outcome::Miss
    }

    /// A bot challenge or a `402 Payment Required`: counted under its own
    /// class and logged; never stored, its links never followed.
    fn turned_away(&mut self, job: &Job, meta: &Meta, t: Turned, answer: Answer) -> Outcome {
        self.ledger.errors(1);
        self.ledger.failure(&job.url, answer, t.describe());
        tracing::debug!(url = %job.url, what = %t.describe(), "turned away: not stored, links not followed");
        match t {
            Turned::Payment {
                price,
                error,
                terms,
            } => {
                self.ledger.host(&job.host).payment = Some(crate::record::PaymentAsked {
                    price,
                    error,
                    terms,
                });
                // The publisher reserves the page (like an AI-use signal):
                // not transient, asked again after `retry_failed_after_days`.
                let flags = Failure::PaymentRequired.flags();
                self.sink.mark(url::seen_hash(&job.url), flags);
                self.sink.mark(url::seen_hash(&meta.url), flags);
                Outcome::Miss
            }
            Turned::Challenge { .. } => {
                // Not the page: tried again next run (the wall may be lifted,
                // or the run made from another address); the source's cut-off stays.
                let class = t.class();
                let url = job.url.clone();
                self.transient(job, Cause::Failed { class, url });
                Outcome::Error
            }
        }
    }
}

/// robots.txt could not be read (network failure, 5xx, 429): nothing was allowed today.
fn robots_down(r: &Robots) -> bool {
    matches!(r.outcome, RobotsOutcome::DisallowAll(_))
}
