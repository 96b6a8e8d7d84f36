//! The crawl loop. One owner ([`Engine`]) holds every piece of mutable crawl
//! state: the frontier, the seen-set, the shard writer, the id counter and the
//! counters. Workers get a [`Job`] and hand back a [`Done`] through
//! [`Workers`]; no locks on the hot path.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, NaiveDate, Utc};
use tokio::sync::mpsc;

use super::events::EventLog;
use super::outage::{Cutoff, Reach};
use super::worker::{Answered, Body, Ctx, Done, Job, Meta};
use super::workers::{Lost, Workers};
use crate::config::{Config, Scope};
use crate::frontier::{Entry, Frontier, Kind, Next, OpenScope, Origin, Outcome, Pace, Verdict};
use crate::net::turned::Turned;
use crate::net::{FetchError, Robots};
use crate::record::RobotsOutcome;
use crate::record::event::{self, Event, ListingWarning};
use crate::record::{HostCounters, StopReason};
use crate::store::ids::IdBlocks;
use crate::store::seen::{Failure, Seen, SeenSet, day_stamp, flag};
use crate::store::shard::ShardWriter;
use crate::store::state::{Listings, RunSummary, Validator, Validators};
use crate::url::trap::{PatternCount, Trap};
use crate::url::{self, Url};

/// Levels of sitemaps read below (and counting) a seed or a robots.txt
/// `Sitemap:` line: the children of an index at the last level are not read.
pub(super) const MAX_SITEMAP_DEPTH: u32 = 3;

/// Signals from outside the loop.
#[derive(Debug, Clone, Copy)]
pub enum Signal {
    /// First Ctrl-C / SIGTERM: finish in-flight fetches, save, exit.
    Stop,
    /// Second: abandon in-flight fetches, save, exit.
    Abort,
}

/// Everything the loop owns, in parts: what the run was started with, the
/// scheduling state, what goes to disk ([`Persist`]), the sets of this run
/// ([`RunSets`]) and the counters ([`Counters`]). Built by [`Engine::new`].
pub struct Engine {
    pub config: Config,
    pub ctx: Arc<Ctx>,
    pub frontier: Frontier,
    pub store: Persist,
    pub log: EventLog,
    pub run_id: String,
    pub state_dir: std::path::PathBuf,
    /// Per host: listing entries older than its cut-off are skipped, links
    /// on its older pages not followed.
    pub cutoff: Cutoff,
    /// Which hosts answered, which could not be read as sources (outages).
    pub reach: Reach,
    /// The previous run's summary.
    pub last: Option<RunSummary>,
    pub seeds: Vec<Entry>,
    pub today: NaiveDate,
    pub day: u32,
    /// The run's start on the calendar (see `crawl::run_clock`).
    pub started_at: DateTime<Utc>,
    pub started: Instant,
    /// Admission, page caps and probation for hosts outside the sources.
    pub open: OpenScope,
    pub progress: Box<dyn super::Progress>,
    /// When the last `progress` event was written.
    pub progress_at: Instant,
    pub sets: RunSets,
    pub counts: Counters,
    /// What this run saw of each source (`state/health/<run-id>.json`).
    pub health: super::health::Tally,
    /// Workers' [`Answered`] messages (taken by `run` while it runs).
    pub answers: Option<mpsc::UnboundedReceiver<Answered>>,
    /// Moving average of a fetch's time from send to read body, seconds (for pacing).
    pub fetch_secs: f64,
    /// `extractor_version` of the records this run stores.
    pub extractor_version: String,
}

/// What the run writes under `data/` (the event log aside).
pub struct Persist {
    pub seen: SeenSet,
    pub shard: ShardWriter,
    pub ids: IdBlocks,
    pub validators: Validators,
    /// What is known of every feed and sitemap (`state/listings/`).
    pub listings: Listings,
    /// This run's robots.txt snapshots and withheld pages (`state/consent/<run-id>.jsonl`).
    pub consent: crate::store::consent::ConsentLog,
    /// This run's WARC file (`crawl.archive`; `None` when off).
    pub warc: Option<crate::store::warc::WarcWriter>,
}

/// The sets this run keeps, all empty at the start.
#[derive(Default)]
pub struct RunSets {
    /// URLs queued or fetched in this run (seen hashes).
    pub this_run: HashSet<u64>,
    /// Hosts whose robots.txt has been read into the frontier (gap, sitemaps).
    pub robots_seen: HashSet<String>,
    /// Child sitemaps queued since the last reseed (seen hashes): a reseed
    /// forgets them from `this_run`, so a re-read index can list them again.
    pub listed_sitemaps: HashSet<u64>,
    /// Feeds and sitemaps answered in this run (seen hashes), 304s included.
    pub listings_read: HashSet<u64>,
    /// Stored records not yet in a closed frame: their seen hashes become HIT after the flush.
    pub pending_hits: Vec<u64>,
    /// How often each URL (seen hash) was requeued after a Retry-After.
    pub requeued: HashMap<u64, u8>,
    /// Hosts of other partitions: their URLs are dropped or handed over (`crawl/partition.rs`).
    pub handover: super::partition::Handover,
    /// URLs found by links this run, per host and URL pattern (trap cap).
    pub patterns: PatternCount,
    /// Work this run could not do for a transient reason (robots.txt
    /// unreachable, host rested, a network failure or 5xx): saved with the
    /// queue for the next run.
    pub kept: Vec<Entry>,
    /// Per host: slots freed by an [`Answered`] whose job has not closed yet.
    pub early_freed: HashMap<String, u32>,
    /// Listings not due today by their learned rate, per host: queued at
    /// once if another listing of the host fails or looks truncated.
    pub deferred: HashMap<String, Vec<Entry>>,
    /// Hosts whose held-back listings were woken (read today whatever their rate).
    pub woken: HashSet<String>,
    /// What this run learned of each listing it queued or asked, by URL.
    pub listing_obs: HashMap<String, super::listing::ListingObs>,
    /// Stored records not yet in a closed frame: seen hash and text fingerprint.
    pub pending_prints: Vec<(u64, u32)>,
    /// The WARC members of the job being handled (`crawl.archive`), until
    /// it is stored or its turn is over.
    pub captured: Option<crate::store::warc::Captured>,
}

/// The run's counters: totals and the per-host funnel.
#[derive(Default)]
pub struct Counters {
    /// Responses received.
    pub fetched: u64,
    pub stored: u64,
    pub errors: u64,
    /// By host name (sorted, as `last_run.json` and the table list them).
    pub hosts: BTreeMap<String, HostCounters>,
}

/// What a run starts from besides the config.
pub struct Start {
    pub run_id: String,
    pub started_at: DateTime<Utc>,
    pub state_dir: std::path::PathBuf,
    pub cutoff: Cutoff,
    pub last: Option<RunSummary>,
    pub seeds: Vec<Entry>,
    pub answers: mpsc::UnboundedReceiver<Answered>,
    /// Where the run's totals are shown.
    pub progress: Box<dyn super::Progress>,
}

impl Engine {
    /// The engine of one run: frontier and open scope from `config`, the
    /// rest as loaded or given (the progress display in `start`); sets and
    /// counters empty.
    pub fn new(
        config: Config,
        ctx: Arc<Ctx>,
        store: Persist,
        log: EventLog,
        start: Start,
    ) -> Engine {
        let c = &config.crawl;
        let health = super::health::Tally::new(&config, &start.run_id, start.started_at);
        Engine {
            health,
            frontier: Frontier::new(c.frontier_params()),
            open: OpenScope::new(c.scope_params()),
            progress: start.progress,
            progress_at: Instant::now(),
            day: day_stamp(start.started_at),
            today: start.started_at.date_naive(),
            started_at: start.started_at,
            started: Instant::now(),
            ctx,
            store,
            log,
            run_id: start.run_id,
            state_dir: start.state_dir,
            cutoff: start.cutoff,
            reach: Reach::default(),
            last: start.last,
            seeds: start.seeds,
            sets: RunSets::default(),
            counts: Counters::default(),
            answers: Some(start.answers),
            fetch_secs: 1.0,
            extractor_version: crate::extract::version::version(&config.keywords),
            config,
        }
    }
}

type Answers = mpsc::UnboundedReceiver<Answered>;

/// Times one URL is requeued after a 429/503 with Retry-After in one run;
/// after that it counts as an error and waits for the next run.
const MAX_REQUEUES: u8 = 3;

impl Engine {
    pub(super) fn now(&self) -> Duration {
        self.started.elapsed()
    }

    /// Since when a listed URL of `host` counts as fresh (the day's new
    /// items, served before the archive's backlog): the host's watermark
    /// (minus the overlap), or on its first run the overlap before now.
    pub(super) fn fresh_since(&self, host: &str) -> DateTime<Utc> {
        self.cutoff.watermark(host).unwrap_or_else(|| {
            self.started_at
                - chrono::Duration::from_std(self.config.crawl.lastmod_overlap.0)
                    .unwrap_or_default()
        })
    }

    pub(super) fn host(&mut self, host: &str) -> &mut HostCounters {
        self.counts.hosts.entry(host.to_string()).or_default()
    }

    /// Queue a URL if the seen-set and this run allow it. Returns whether it was queued.
    pub fn enqueue(&mut self, url: &Url, entry: Entry) -> bool {
        self.enqueue_from(url, entry, None)
    }

    /// [`Engine::enqueue`] for a link found on the page `from` (the pattern
    /// cap counts only links between pages of one pattern).
    pub fn enqueue_from(&mut self, url: &Url, entry: Entry, from: Option<&Url>) -> bool {
        if !self.ctx.partition.owns(url) {
            self.hand_over(url, entry);
            return false;
        }
        let hash = url::seen_hash(url);
        if entry.origin != Origin::Seed {
            if self.sets.this_run.contains(&hash) {
                return false;
            }
            // Feeds and sitemaps a listing gave (an index's children) are read
            // again every run, conditionally: an unchanged one costs a 304. Those
            // found by links follow the revisit rule, like pages.
            if !entry.update
                && (entry.kind == Kind::Page || entry.origin != Origin::Listed)
                && let Some(seen) = self.store.seen.get(hash)
                && !seen.due_after(
                    self.day,
                    self.config.crawl.revisit_after_days,
                    self.config.crawl.retry_failed_after_days,
                )
            {
                match Failure::from_flags(seen.flags) {
                    Some(f) => {
                        tracing::debug!(%url, failed = f.as_str(), day = seen.day, "failed before for good; not queued until retry_failed_after_days");
                        self.host(&url::host_key(url)).known_failure();
                    }
                    None => {
                        tracing::trace!(%url, stored = seen.is_stored(), "seen before; not queued")
                    }
                }
                return false;
            }
        }
        let host = url::host_key(url);
        if entry.origin != Origin::Seed {
            let rules = self.config.crawl.traps.rules();
            let today = self.today;
            let trap = rules.check(url).or_else(|| {
                // Only URLs found by links: listings and seeds name real pages.
                let from =
                    from.filter(|_| matches!(entry.origin, Origin::Relevant | Origin::Other))?;
                self.sets
                    .patterns
                    .admit_link(&host, url, from, &rules, today)
            });
            if let Some(trap) = trap {
                self.trapped(&host, url, hash, trap);
                return false;
            }
        }
        let child_sitemap = entry.kind == Kind::Sitemap && entry.origin == Origin::Listed;
        if self.frontier.push(&host, entry) {
            self.sets.this_run.insert(hash);
            if child_sitemap {
                self.sets.listed_sitemaps.insert(hash);
            }
            self.host(&host).queued();
            true
        } else {
            false
        }
    }

    /// A URL broke a trap rule: not queued, counted, logged (once per run:
    /// it then counts as met in this run).
    fn trapped(&mut self, host: &str, url: &Url, hash: u64, trap: Trap) {
        self.sets.this_run.insert(hash);
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

    /// A parsing limit cut a page or listing: counted for the host, logged.
    pub(super) fn capped(&mut self, host: &str, url: &Url, cause: crate::record::ParseCap) {
        tracing::debug!(%url, cause = cause.as_str(), "a parsing limit cut the document");
        self.host(host).capped(cause.as_str());
        self.log.emit(Event::Capped(event::Capped {
            url: url.as_str().chars().take(300).collect(),
            cause,
        }));
    }

    /// Queue the configured seeds (at the start, on reseed and on resume).
    pub fn queue_seeds(&mut self) {
        for entry in self.seeds.clone() {
            if let Some(u) = url::parse(&entry.url) {
                self.log.emit(Event::Seed(event::Seed {
                    url: u.to_string(),
                    kind: entry.kind,
                }));
                if !self.defer_listing(&u, &entry) {
                    self.enqueue(&u, entry);
                }
            }
        }
    }

    /// Run until a limit, a signal, or no work is left.
    pub async fn run(&mut self, signals: mpsc::UnboundedReceiver<Signal>) -> StopReason {
        let (_keep, mut answers) = match self.answers.take() {
            Some(rx) => (None, rx),
            // Without workers' messages every slot is freed by its `Done`.
            None => {
                let (tx, rx) = mpsc::unbounded_channel();
                (Some(tx), rx)
            }
        };
        let stop = self.run_with(signals, &mut answers).await;
        self.answers = Some(answers);
        stop
    }

    /// A worker's answer is in: the request's send time counts for the gap,
    /// and the host's slot is free while the body is parsed.
    fn take_answer(&mut self, a: Answered) {
        let sent = a.sent_at.saturating_duration_since(self.started);
        let took = Instant::now().saturating_duration_since(a.sent_at);
        self.fetch_secs += 0.05 * (took.as_secs_f64() - self.fetch_secs);
        self.frontier.sent(&a.host, sent);
        // An open-scope host is capped by fetches with a verdict: it keeps its
        // turn until the verdict, so no fetch goes past its cap.
        if self.config.crawl.scope == Scope::Open && !self.ctx.scope.has_host(&a.host) {
            return;
        }
        self.frontier.released(&a.host, self.now());
        *self.sets.early_freed.entry(a.host).or_default() += 1;
    }

    fn drain_answers(&mut self, answers: &mut Answers) {
        while let Ok(a) = answers.try_recv() {
            self.take_answer(a);
        }
    }

    /// Handle a finished job, after every answer sent before it.
    fn handle_done(&mut self, done: Done, answers: &mut Answers) {
        self.drain_answers(answers);
        self.handle(done);
    }

    /// Tell the frontier what is left of the run (budget pacing).
    fn pace(&mut self, deadline: Option<Instant>) {
        let c = &self.config.crawl;
        let (Some(d), true) = (deadline, c.max_pages > 0) else {
            return;
        };
        let p = Pace {
            budget_left: c.max_pages.saturating_sub(self.ctx.net.requests()),
            time_left: d.saturating_duration_since(Instant::now()),
            slot_rate: c.concurrency as f64 / self.fetch_secs.max(0.005),
        };
        let now = self.now();
        self.frontier.pace(p, now);
    }

    async fn run_with(
        &mut self,
        mut signals: mpsc::UnboundedReceiver<Signal>,
        answers: &mut Answers,
    ) -> StopReason {
        let c = self.config.crawl.clone();
        let deadline = (c.max_duration.0 > Duration::ZERO).then(|| self.started + c.max_duration.0);
        let reseed = Duration::from_secs(c.reseed_every_secs.max(1));
        let mut next_reseed = self.started + reseed;
        let mut tasks = Workers::default();
        let mut tick = tokio::time::interval(Duration::from_millis(250));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let stop = loop {
            // Limits that stop the taking of new work.
            if let Some(d) = deadline
                && Instant::now() >= d
            {
                break StopReason::MaxDuration;
            }
            if c.max_hits > 0 && self.counts.stored >= c.max_hits {
                break StopReason::MaxHits;
            }
            if c.max_pages > 0 && self.ctx.net.requests() >= c.max_pages {
                break StopReason::MaxPages;
            }
            if Instant::now() >= next_reseed {
                next_reseed = Instant::now() + reseed;
                tracing::info!("reseeding");
                for hash in std::mem::take(&mut self.sets.listed_sitemaps) {
                    self.sets.this_run.remove(&hash);
                }
                self.queue_seeds();
            }
            // Fill free worker slots with ready URLs.
            self.pace(deadline);
            let mut wake = Duration::from_millis(250);
            while tasks.len() < c.concurrency {
                if c.max_pages > 0 && self.ctx.net.requests() + tasks.len() as u64 >= c.max_pages {
                    break;
                }
                match self.frontier.next(self.now()) {
                    Next::Ready { host, entry } => self.dispatch(&mut tasks, host, entry),
                    Next::Wait(at) => {
                        wake = wake.min(at.saturating_sub(self.now()));
                        break;
                    }
                    Next::Empty => break,
                }
            }
            if tasks.is_empty() && self.frontier.is_empty() {
                break StopReason::Exhausted;
            }
            let sleep = match deadline {
                Some(d) => wake.min(d.saturating_duration_since(Instant::now())),
                None => wake,
            };
            tokio::select! {
                Some(ended) = tasks.next(), if !tasks.is_empty() => self.ended(ended, answers),
                Some(a) = answers.recv() => self.take_answer(a),
                sig = signals.recv() => {
                    if let Some(sig) = sig {
                        tracing::warn!(?sig, "stop requested");
                        return self.wind_down(tasks, signals, answers, StopReason::Interrupted, Some(sig)).await;
                    }
                }
                _ = tokio::time::sleep(sleep) => {}
                _ = tick.tick() => self.maybe_flush(),
            }
        };
        self.wind_down(tasks, signals, answers, stop, None).await
    }

    /// Stop taking work; let in-flight fetches finish (bounded by `stop_grace`
    /// for limits, unbounded until a second signal for Ctrl-C), then return.
    async fn wind_down(
        &mut self,
        mut tasks: Workers,
        mut signals: mpsc::UnboundedReceiver<Signal>,
        answers: &mut Answers,
        stop: StopReason,
        signal: Option<Signal>,
    ) -> StopReason {
        tracing::info!(
            stopped_by = stop.as_str(),
            in_flight = tasks.len(),
            "stopping"
        );
        if matches!(signal, Some(Signal::Abort)) {
            tasks.abort_all();
        }
        let grace = match stop {
            StopReason::Interrupted => {
                self.config.crawl.request_timeout.0 + self.config.crawl.stop_grace.0
            }
            _ => self.config.crawl.stop_grace.0,
        };
        let until = tokio::time::Instant::now() + grace;
        while !tasks.is_empty() {
            tokio::select! {
                ended = tasks.next() => match ended {
                    Some(ended) => self.ended(ended, answers),
                    None => break,
                },
                sig = signals.recv() => {
                    if sig.is_some() {
                        tracing::warn!("second stop request: abandoning in-flight fetches");
                        tasks.abort_all();
                    }
                }
                _ = tokio::time::sleep_until(until) => {
                    tracing::warn!(abandoned = tasks.len(), "grace period over: abandoning in-flight fetches");
                    tasks.abort_all();
                }
            }
        }
        stop
    }

    pub(super) fn dispatch(&mut self, tasks: &mut Workers, host: String, entry: Entry) {
        let Some(u) = url::parse(&entry.url) else {
            self.frontier.finished(&host, Outcome::Error, self.now());
            return;
        };
        let (etag, mut last_modified) = match self.store.validators.get(u.as_str()) {
            Some(v) => (v.etag.clone(), v.last_modified.clone()),
            None => (None, None),
        };
        if entry.update
            && let Some(seen) = self.store.seen.get(url::seen_hash(&u))
        {
            // Asked "changed since the day we stored it?".
            last_modified = Some(http_day(seen.day));
        }
        tracing::debug!(url = %u, kind = ?entry.kind, origin = ?entry.origin, depth = entry.depth, value = entry.value, "dispatch");
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

    /// Close a frame when it is due; then mark its records as hits.
    pub fn maybe_flush(&mut self) {
        let queued = self.frontier.len();
        let requests = self.ctx.net.requests();
        self.progress.update(super::Totals {
            fetched: self.counts.fetched,
            stored: self.counts.stored,
            queued,
            requests,
        });
        if self.progress_at.elapsed() >= Duration::from_secs(10) {
            self.progress_at = Instant::now();
            self.log.emit(Event::Progress(event::Progress {
                queue: queued,
                requests,
                fetched: self.counts.fetched,
                stored: self.counts.stored,
                errors: self.counts.errors,
                elapsed_s: self.started.elapsed().as_secs(),
            }));
        }
        if self.store.shard.due() {
            self.flush();
        } else {
            self.log.flush();
        }
    }

    /// Flush the shard, then (only then) mark its records as stored hits, then the seen-set.
    pub fn flush(&mut self) {
        // The archive first: a shard line never points at a WARC record that is not on disk.
        if let Some(Err(e)) = self.store.warc.as_mut().map(|w| w.sync()) {
            tracing::error!(error = %e, "WARC sync failed; the shard frame waits");
            return;
        }
        match self.store.shard.flush() {
            Ok(_) => self.mark_hits(),
            Err(e) => tracing::error!(error = %e, "shard flush failed"),
        }
        if let Err(e) = self.store.seen.flush(&self.state_dir, &self.run_id) {
            tracing::error!(error = %e, "seen-set flush failed");
        }
        self.log.flush();
    }

    pub(super) fn mark_hits(&mut self) {
        for hash in std::mem::take(&mut self.sets.pending_hits) {
            self.store.seen.record(
                hash,
                Seen {
                    day: self.day,
                    flags: flag::HIT,
                },
            );
        }
        for (hash, print) in std::mem::take(&mut self.sets.pending_prints) {
            self.store.seen.record(
                hash,
                Seen {
                    day: self.day,
                    flags: flag::HIT | (print << flag::TEXT_SHIFT),
                },
            );
        }
    }

    /// A worker task ended: its result, or the cause it was lost to (its
    /// host's slot is given back either way).
    fn ended(&mut self, ended: Result<Done, Lost>, answers: &mut Answers) {
        match ended {
            Ok(done) => self.handle_done(done, answers),
            Err(lost) => {
                self.drain_answers(answers);
                self.lost(lost);
            }
        }
    }

    fn lost(&mut self, lost: Lost) {
        let Some(cause) = lost.panic else {
            tracing::debug!(url = %lost.url, "fetch abandoned");
            self.close_host(&lost.host, None);
            return;
        };
        tracing::error!(url = %lost.url, %cause, "worker panicked; the URL is counted as an error");
        self.counts.errors += 1;
        self.host(&lost.host).failed(PANIC);
        self.close_host(&lost.host, Some(Outcome::Error));
        self.log.emit(Event::Error(event::Failure {
            url: lost.url.to_string(),
            class: PANIC.to_string(),
            error: cause,
        }));
    }

    pub(super) fn handle(&mut self, done: Done) {
        self.health.observe(&done);
        let Done {
            job,
            robots,
            result,
        } = done;
        let now = self.now();
        let host = job.host.clone();
        if let Some(r) = &robots
            && self.sets.robots_seen.insert(host.clone())
        {
            self.take_robots(&host, r);
        }
        if job.entry.kind != Kind::Page || job.entry.origin == Origin::Seed {
            self.reach.source(&host);
        }
        match result {
            Err(e) => {
                if robots.as_deref().is_some_and(robots_down) {
                    // Refused because robots.txt could not be read today: kept.
                    self.sets.kept.push(job.entry.clone());
                }
                self.failed(&job, e)
            }
            Ok((mut meta, body)) => {
                self.sets.captured = meta.captured.take().map(|c| *c);
                self.reach.answered(&host, meta.status);
                if !job.freed {
                    self.frontier
                        .sent(&host, meta.sent_at.saturating_duration_since(self.started));
                }
                self.counts.fetched += 1;
                self.host(&host).fetched(meta.wire_bytes, meta.gap_wait);
                self.host(&host).answered(job.entry.kind != Kind::Page);
                self.log.emit(Event::Fetch(event::Fetch {
                    url: job.url.to_string(),
                    final_url: meta.url.to_string(),
                    status: meta.status,
                    ms: meta.elapsed.as_millis() as u64,
                    bytes: meta.wire_bytes,
                    redirects: meta.redirects.len(),
                }));
                if let Some(ra) = meta.retry_after {
                    let until = now + ra.min(self.config.crawl.max_retry_after.0);
                    self.frontier.pause(&host, until);
                }
                if job.entry.kind != Kind::Page || job.entry.origin == Origin::Seed {
                    self.keep_validator(&job, &meta);
                }
                if job.entry.kind != Kind::Page {
                    self.sets.listings_read.insert(url::seen_hash(&job.url));
                }
                match self.body(&job, &meta, body) {
                    Some(outcome) => {
                        self.close(&job, Some(outcome));
                        if self.config.crawl.scope == Scope::Open {
                            let verdict = self.open.record(&self.ctx.scope, &host, outcome);
                            let reason = match verdict {
                                Verdict::Keep => None,
                                Verdict::Capped => Some(event::RestReason::Capped),
                                Verdict::FailedProbation => {
                                    Some(event::RestReason::FailedProbation)
                                }
                            };
                            if let Some(reason) = reason {
                                let dropped = self.frontier.drop_host(&host);
                                tracing::debug!(%host, ?verdict, dropped, "host leaves the open crawl");
                                self.log.emit(Event::HostRested(event::HostRested {
                                    host: host.clone(),
                                    reason: Some(reason),
                                    dropped,
                                    kept: false,
                                }));
                            }
                        }
                    }
                    None => self.close(&job, None),
                }
                self.archive_unstored();
            }
        }
    }

    /// A captured exchange that was not stored: archived without a metadata
    /// record under `all`, dropped otherwise.
    fn archive_unstored(&mut self) {
        if let Some(c) = self.sets.captured.take()
            && self.config.crawl.archive == crate::config::Archive::All
        {
            self.archive(&c, None);
        }
    }

    /// Append a captured exchange to the run's WARC file, with the metadata
    /// record of a stored record (`prov`, which learns where it went). A
    /// failed write is logged and the record is stored without its archive.
    pub(super) fn archive(
        &mut self,
        captured: &crate::store::warc::Captured,
        prov: Option<&mut crate::record::Provenance>,
    ) {
        let Some(warc) = self.store.warc.as_mut() else {
            return;
        };
        let meta = prov
            .as_deref()
            .map(|p| crate::store::warc::metadata(captured, p));
        let parts: Vec<&[u8]> = std::iter::once(captured.members.as_slice())
            .chain(meta.as_deref())
            .collect();
        match warc.append(&parts) {
            Ok(offset) => {
                if let Some(p) = prov {
                    p.warc_file = Some(warc.name().to_string());
                    p.warc_offset = Some(offset);
                }
            }
            Err(e) => tracing::error!(error = %e, url = %captured.target, "WARC write failed"),
        }
    }

    /// Close a job in the frontier: its verdict (if any), and its slot unless
    /// an [`Answered`] freed it already (slots are counted per host: any of
    /// the host's jobs may take one freed early).
    pub(super) fn close(&mut self, job: &Job, outcome: Option<Outcome>) {
        self.close_host(&job.host, outcome);
    }

    /// [`Engine::close`] for a job known by its host alone.
    fn close_host(&mut self, host: &str, outcome: Option<Outcome>) {
        let now = self.now();
        let freed = match self.sets.early_freed.get_mut(host) {
            Some(n) if *n > 0 => {
                *n -= 1;
                true
            }
            _ => false,
        };
        match (freed, outcome) {
            (false, Some(o)) => self.frontier.finished(host, o, now),
            (false, None) => self.frontier.released(host, now),
            (true, Some(o)) => self.frontier.verdict(host, o),
            (true, None) => {}
        }
    }

    /// Remember the response's ETag / Last-Modified for the next request of this URL.
    pub(super) fn keep_validator(&mut self, job: &Job, meta: &Meta) {
        if meta.etag.is_some() || meta.last_modified.is_some() {
            self.store.validators.set(
                job.url.as_str(),
                Validator {
                    etag: meta.etag.clone(),
                    last_modified: meta.last_modified.clone(),
                    day: self.day,
                },
            );
        }
    }

    pub(super) fn failed(&mut self, job: &Job, e: FetchError) {
        let class = e.class();
        let host = job.host.clone();
        if job.entry.kind != Kind::Page && !matches!(e, FetchError::Budget) {
            self.wake_listings(&host, "a listing failed");
        }
        self.host(&host).failed(class.as_str());
        match &e {
            FetchError::Budget => {
                // Not sent: put it back for --resume.
                self.close(job, Some(Outcome::Miss));
                self.sets.this_run.remove(&url::seen_hash(&job.url));
                self.frontier.push(&host, job.entry.clone());
                return;
            }
            FetchError::RobotsDisallowed(_) => {
                tracing::debug!(url = %job.url, "disallowed by robots.txt");
                self.host(&host).disallowed();
                self.close(job, Some(Outcome::Miss));
            }
            FetchError::OutOfScope(target) if !self.ctx.partition.owns(target) => {
                // A redirect to another partition's host: its owner fetches it.
                let entry = Entry {
                    url: target.to_string(),
                    ..job.entry.clone()
                };
                let target = target.clone();
                self.hand_over(&target, entry);
                self.close(job, Some(Outcome::Miss));
            }
            FetchError::Rested => {
                // Rested for repeated failures or a long Retry-After: its
                // work waits for the next run, and its cut-off stays.
                let kept = self.frontier.take_host(&host);
                let dropped = kept.len();
                self.sets.kept.extend(kept);
                self.sets.kept.push(job.entry.clone());
                self.reach.trouble(&host, "rested");
                self.close(job, Some(Outcome::Error));
                self.log.emit(Event::HostRested(event::HostRested {
                    host: host.clone(),
                    reason: None,
                    dropped,
                    kept: true,
                }));
            }
            FetchError::RedirectLoop
            | FetchError::TooManyRedirects
            | FetchError::TooLarge
            | FetchError::NotHtml(_) => {
                self.counts.errors += 1;
                let failure = match &e {
                    FetchError::RedirectLoop => Failure::RedirectLoop,
                    FetchError::TooManyRedirects => Failure::TooManyRedirects,
                    FetchError::TooLarge => Failure::TooLarge,
                    _ => Failure::NotHtml,
                };
                // Will not go away by tomorrow: remembered with its class.
                self.store.seen.record(
                    url::seen_hash(&job.url),
                    Seen {
                        day: self.day,
                        flags: failure.flags(),
                    },
                );
                self.close(job, Some(Outcome::Error));
            }
            _ => {
                self.counts.errors += 1;
                if e.is_network() {
                    self.reach.failed(class.as_str());
                    if job.entry.kind != Kind::Page || job.entry.origin == Origin::Seed {
                        self.reach.trouble(&host, format!("{class} on {}", job.url));
                    } else {
                        // Not remembered in the seen-set: tried again next run.
                        self.sets.kept.push(job.entry.clone());
                    }
                }
                self.close(job, Some(Outcome::Error));
            }
        }
        self.log.emit(Event::Error(event::Failure {
            url: job.url.to_string(),
            class: class.to_string(),
            error: e.to_string(),
        }));
        tracing::debug!(url = %job.url, error = %e, "fetch failed");
    }

    /// Act on a fetched body; returns the scheduler outcome (`None`: a feed,
    /// sitemap or 304, which says nothing about the host's yield).
    pub(super) fn body(&mut self, job: &Job, meta: &Meta, body: Body) -> Option<Outcome> {
        let day = self.day;
        let final_hash = url::seen_hash(&meta.url);
        let req_hash = url::seen_hash(&job.url);
        match body {
            Body::NotModified => {
                tracing::debug!(url = %job.url, update = job.entry.update, "304 not modified: nothing new");
                self.host(&job.host).not_modified();
                // A stored article asked again keeps its hit flags and text print.
                let flags = match self.store.seen.get(req_hash) {
                    Some(s) if job.entry.update => s.flags,
                    _ => flag::MISS,
                };
                self.store.seen.record(req_hash, Seen { day, flags });
                if job.entry.kind != Kind::Page {
                    let read_before = self
                        .store
                        .listings
                        .get(job.url.as_str())
                        .is_some_and(|s| s.read.is_some());
                    let obs = self
                        .sets
                        .listing_obs
                        .entry(job.url.to_string())
                        .or_default();
                    obs.answered = true;
                    obs.full = read_before;
                }
                None
            }
            Body::Status(code) => {
                self.host(&job.host).failed(status_class(code));
                if job.entry.kind != Kind::Page {
                    self.wake_listings(&job.host, "a listing failed");
                }
                if (code == 429 || code == 503)
                    && meta
                        .retry_after
                        .is_some_and(|ra| ra <= self.config.crawl.max_retry_after.0)
                {
                    let tries = self.sets.requeued.entry(req_hash).or_default();
                    if *tries < MAX_REQUEUES {
                        // Asked to come back later: keep the URL; the host is paused.
                        *tries += 1;
                        tracing::debug!(url = %job.url, code, retry_after = ?meta.retry_after, tries = *tries, "backing off; URL requeued");
                        self.frontier.requeue(&job.host, job.entry.clone());
                        return Some(Outcome::Error);
                    }
                    tracing::debug!(url = %job.url, code, "backing off again; URL left for the next run");
                }
                // A transient answer (429, 5xx) is not remembered, like a
                // timeout: the next run tries the URL again instead of
                // waiting `revisit_after_days` (a failed seed or listing
                // keeps its host's cut-off; a page is kept for that run).
                if code == 429 || code >= 500 {
                    if job.entry.kind != Kind::Page || job.entry.origin == Origin::Seed {
                        self.reach
                            .trouble(&job.host, format!("{code} on {}", job.url));
                    } else {
                        self.sets.kept.push(job.entry.clone());
                    }
                } else {
                    // 404 and 410 are gone for good; other 4xx are revisited.
                    let flags = if matches!(code, 404 | 410) {
                        Failure::Gone.flags()
                    } else {
                        flag::MISS
                    };
                    self.store.seen.record(req_hash, Seen { day, flags });
                    if final_hash != req_hash {
                        self.store.seen.record(final_hash, Seen { day, flags });
                    }
                }
                Some(if code >= 500 || code == 429 {
                    Outcome::Error
                } else {
                    Outcome::Miss
                })
            }
            Body::Turned(t) => Some(self.turned_away(job, meta, t)),
            Body::Panicked(cause) => {
                tracing::error!(url = %job.url, %cause, "the parser panicked on this body");
                self.counts.errors += 1;
                self.host(&job.host).failed(PANIC);
                self.log.emit(Event::Error(event::Failure {
                    url: job.url.to_string(),
                    class: PANIC.to_string(),
                    error: cause,
                }));
                None
            }
            Body::BadListing(reason) => {
                self.host(&job.host).bad_listing();
                self.wake_listings(&job.host, "a listing is malformed");
                self.log.emit(Event::Warning(event::Warning {
                    url: job.url.to_string(),
                    what: ListingWarning::Malformed {
                        reason: reason.clone(),
                    },
                }));
                tracing::warn!(url = %job.url, %reason, "malformed feed or sitemap");
                None
            }
            Body::Listing(listing) => {
                self.store.seen.record(
                    req_hash,
                    Seen {
                        day,
                        flags: flag::MISS,
                    },
                );
                self.listing(job, meta, listing);
                None
            }
            Body::Page(page) => {
                let hit = self.page(job, meta, &page);
                let flags = if hit { 0 } else { flag::MISS };
                if !hit && !page.is_article && job.entry.origin != Origin::Seed {
                    // A listing page (home, section, tag) is revisited: ask conditionally then.
                    self.keep_validator(job, meta);
                }
                if !hit {
                    self.store.seen.record(req_hash, Seen { day, flags });
                    if final_hash != req_hash {
                        self.store.seen.record(final_hash, Seen { day, flags });
                    }
                }
                Some(if hit { Outcome::Hit } else { Outcome::Miss })
            }
        }
    }

    /// A bot challenge or a `402 Payment Required`: counted under its own
    /// class and logged; never stored, its links never followed.
    fn turned_away(&mut self, job: &Job, meta: &Meta, t: Turned) -> Outcome {
        let class = t.class();
        self.counts.errors += 1;
        self.host(&job.host).failed(class.as_str());
        self.log.emit(Event::Error(event::Failure {
            url: job.url.to_string(),
            class: class.to_string(),
            error: t.describe(),
        }));
        tracing::debug!(url = %job.url, what = %t.describe(), "turned away: not stored, links not followed");
        let listing_or_seed = job.entry.kind != Kind::Page || job.entry.origin == Origin::Seed;
        match t {
            Turned::Payment { .. } => {
                // The publisher reserves the page (like an AI-use signal):
                // not transient, asked again after `retry_failed_after_days`.
                let seen = Seen {
                    day: self.day,
                    flags: Failure::PaymentRequired.flags(),
                };
                self.store.seen.record(url::seen_hash(&job.url), seen);
                self.store.seen.record(url::seen_hash(&meta.url), seen);
                Outcome::Miss
            }
            Turned::Challenge { .. } => {
                // Not the page: tried again next run (the wall may be lifted,
                // or the run made from another address); the source's cut-off stays.
                if listing_or_seed {
                    self.reach
                        .trouble(&job.host, format!("{class} on {}", job.url));
                } else {
                    self.sets.kept.push(job.entry.clone());
                }
                Outcome::Error
            }
        }
    }

    /// May we fetch `u`? `from_relevant` says whether the link came from a relevant page (or a listing).
    pub(super) fn in_scope(&self, u: &Url, from_relevant: bool) -> bool {
        if self.ctx.scope.contains(u) {
            return true;
        }
        if self.config.crawl.scope != Scope::Open {
            return false;
        }
        let admit = self.open.admit(&self.ctx.scope, u, from_relevant);
        tracing::trace!(url = %u, ?admit, "open scope");
        admit.is_yes()
    }
}

/// The start of day stamp `day` as an HTTP date (for `If-Modified-Since`).
fn http_day(day: u32) -> String {
    let t = DateTime::<Utc>::UNIX_EPOCH + chrono::Duration::days(i64::from(day));
    t.format("%a, %d %b %Y %H:%M:%S GMT").to_string()
}

/// robots.txt could not be read (network failure, 5xx, 429): nothing was allowed today.
fn robots_down(r: &Robots) -> bool {
    matches!(r.outcome, RobotsOutcome::DisallowAll(_))
}

/// The failure class of a worker or parser that panicked.
const PANIC: &str = "panic";

fn status_class(code: u16) -> &'static str {
    match code {
        429 => "429",
        400..=499 => "4xx",
        500..=599 => "5xx",
        _ => "other_status",
    }
}
