//! The run's ledger: its totals (responses, records stored, errors), each
//! host's funnel (`record::HostCounters`), the health tally of its sources
//! (`crawl::tally`), which hosts answered and which could not be read
//! (`crawl::reach`), the progress display fed from them, and the run's two
//! logs: the event log (`crawl.log`) and the consent log (robots.txt
//! snapshots, withheld pages). The engine tells it what happened; it keeps
//! the books and says what they hold.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::crawl::events::EventLog;
use crate::crawl::reach::{Cause, Cutoff, Reach};
use crate::crawl::tally::Tally;
use crate::crawl::worker::Done;
use crate::crawl::{Progress, Totals};
use crate::record::event::{self, Event};
use crate::record::{Answer, ErrorClass, FailureClass, HostCounters, ParseCap, StopReason};
use crate::store::consent::{ConsentLog, RobotsSnapshot};
use crate::url::Url;
use crate::url::trap::Trap;

/// How often a `progress` event is written.
const PROGRESS_EVERY: Duration = Duration::from_secs(10);

/// The run's totals at one moment.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Counts {
    /// Responses received.
    pub fetched: u64,
    pub stored: u64,
    pub errors: u64,
}

pub(super) struct Ledger {
    counts: Counts,
    /// By host name (sorted, as `last_run.json` and the table list them).
    hosts: BTreeMap<String, HostCounters>,
    /// What this run saw of each source (`state/health/<run-id>.json`).
    health: Tally,
    /// Which hosts answered, which could not be read as sources (outages).
    reach: Reach,
    progress: Box<dyn Progress>,
    /// When the last `progress` event was written.
    progress_at: Instant,
    /// The event log (`state/crawl.log`).
    log: EventLog,
    /// This run's robots.txt snapshots and withheld pages (`state/consent/<run-id>.jsonl`).
    consent: ConsentLog,
}

impl Ledger {
    pub(super) fn new(
        health: Tally,
        progress: Box<dyn Progress>,
        log: EventLog,
        consent: ConsentLog,
    ) -> Ledger {
        Ledger {
            counts: Counts::default(),
            hosts: BTreeMap::new(),
            health,
            reach: Reach::default(),
            progress,
            progress_at: Instant::now(),
            log,
            consent,
        }
    }

    /// Write an event to the event log.
    pub(super) fn emit(&mut self, event: Event) {
        self.log.emit(event);
    }

    /// Write the event log's buffer out.
    pub(super) fn flush_log(&mut self) {
        self.log.flush();
    }

    /// An `error` event: the URL, its class, what went wrong.
    pub(super) fn failure(&mut self, url: &Url, answer: Answer, error: String) {
        let class = ErrorClass::of(answer).map_or_else(String::new, |c| c.to_string());
        self.log.emit(Event::Error(event::Failure {
            url: url.to_string(),
            class,
            error,
        }));
    }

    /// A URL of `host` broke a trap rule: counted, logged.
    pub(super) fn trapped(&mut self, host: &str, url: &Url, trap: Trap) {
        self.host(host).trapped();
        let shown: String = url.as_str().chars().take(300).collect();
        tracing::debug!(url = %shown, kind = trap.as_str(), "trap: not queued");
        self.log.emit(Event::Trap(event::TrapMet {
            host: host.to_string(),
            url: shown,
            kind: trap,
            url_bytes: url.as_str().len(),
        }));
    }

    /// A parsing limit cut a page or listing of `host`: counted, logged.
    pub(super) fn capped(&mut self, host: &str, url: &Url, cause: ParseCap) {
        tracing::debug!(%url, cause = cause.as_str(), "a parsing limit cut the document");
        self.host(host).capped(cause.as_str());
        self.log.emit(Event::Capped(event::Capped {
            url: url.as_str().chars().take(300).collect(),
            cause,
        }));
    }

    /// A host's robots.txt, as read, for the consent log.
    pub(super) fn robots_snapshot(&mut self, snapshot: RobotsSnapshot<'_>) {
        self.consent.robots(snapshot);
    }

    /// A page withheld for AI use, for the consent log.
    pub(super) fn withheld(&mut self, url: &str, domain: &str, signals: &[String]) {
        self.consent.withheld(url, domain, signals);
    }

    /// An outage: this run's consent file is removed (it holds only
    /// unreachable robots.txt snapshots).
    pub(super) fn discard_consent(&mut self) {
        self.consent.discard();
    }

    /// Sources not read today: logged, and a `source_down` event each.
    pub(super) fn report_sources_down(&mut self, cutoff: &Cutoff) {
        for (host, cause) in self.reach.troubled() {
            tracing::warn!(%host, %cause, "source not read today: its min_lastmod cut-off stays where it was");
            self.log.emit(Event::SourceDown(event::SourceDown {
                host: host.to_string(),
                cause: cause.to_string(),
                cutoff: cutoff.for_host(host).map(|d| d.to_rfc3339()),
            }));
        }
    }

    /// The counters of `host` (opened at zero).
    pub(super) fn host(&mut self, host: &str) -> &mut HostCounters {
        self.hosts.entry(host.to_string()).or_default()
    }

    pub(super) fn hosts(&self) -> &BTreeMap<String, HostCounters> {
        &self.hosts
    }

    pub(super) fn counts(&self) -> Counts {
        self.counts
    }

    pub(super) fn reach(&self) -> &Reach {
        &self.reach
    }

    pub(super) fn health(&self) -> &Tally {
        &self.health
    }

    /// A finished job, classified: the health tally's share.
    pub(super) fn observe(&mut self, done: &Done, answer: Answer) {
        self.health.observe(done, answer);
    }

    /// A finished job's answer for its host (`source`: it read a seed,
    /// feed or sitemap), and `status` when a response came.
    pub(super) fn answer(&mut self, host: &str, source: bool, status: Option<u16>, answer: Answer) {
        if source {
            self.reach.source(host);
        }
        self.host(host).record(answer);
        self.reach.record(host, status, answer);
    }

    /// A response came.
    pub(super) fn fetched(&mut self, host: &str, bytes: u64, gap_wait: Duration, listing: bool) {
        self.counts.fetched += 1;
        self.host(host).fetched(bytes, gap_wait);
        self.host(host).answered(listing);
    }

    /// `n` more errors for the run.
    pub(super) fn errors(&mut self, n: u64) {
        self.counts.errors += n;
    }

    /// A worker panicked on a job of `host`.
    pub(super) fn panicked(&mut self, host: &str) {
        self.counts.errors += 1;
        self.host(host).record(Answer::Panicked);
    }

    /// A record of `host` from `url` was stored.
    pub(super) fn stored(&mut self, host: &str, url: &Url) {
        self.counts.stored += 1;
        self.health.stored(url);
        self.host(host).stored();
    }

    /// The host's source could not be read today (its cut-off stays).
    pub(super) fn trouble(&mut self, host: &str, cause: Cause) {
        self.reach.trouble(host, cause);
    }

    /// The host's robots.txt answered with `status`.
    pub(super) fn robots_answered(&mut self, host: &str, status: u16) {
        self.reach.answered(host, status);
    }

    /// The host's robots.txt could not be read.
    pub(super) fn robots_down(&mut self, host: &str, why: &str, error: Option<FailureClass>) {
        self.reach.robots_down(host, why, error);
    }

    /// Hand the display the totals as they are now.
    pub(super) fn show(&mut self, queued: usize, requests: u64) {
        self.progress.update(Totals {
            fetched: self.counts.fetched,
            stored: self.counts.stored,
            queued,
            requests,
        });
    }

    /// The `progress` event, when one is due (every [`PROGRESS_EVERY`]).
    pub(super) fn progress_event(
        &mut self,
        queue: usize,
        requests: u64,
        elapsed: Duration,
    ) -> Option<Event> {
        if self.progress_at.elapsed() < PROGRESS_EVERY {
            return None;
        }
        self.progress_at = Instant::now();
        Some(Event::Progress(event::Progress {
            queue,
            requests,
            fetched: self.counts.fetched,
            stored: self.counts.stored,
            errors: self.counts.errors,
            elapsed_s: elapsed.as_secs(),
        }))
    }

    /// The run is over: the display's last word, the health record.
    pub(super) fn finish_display(&mut self, stop: StopReason) {
        self.progress.finish(stop);
    }

    pub(super) fn finish_health(&mut self, stop: StopReason) -> crate::health::RunHealth {
        self.health.finish(chrono::Utc::now(), stop)
    }
}
