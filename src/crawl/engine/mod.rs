//! The crawl loop. One owner ([`Engine`]) holds every piece of mutable crawl
//! state, in parts that own their state and rules behind methods:
//!
//! * `Facts` (`facts.rs`): what the run is, immutable: its config, id,
//!   day, start, cut-offs, extractor version.
//! * `Work` (`work.rs`): the frontier and what it consults: this run's
//!   URLs, trap counts, handover, URL families, open scope, seeds, slots
//!   freed early, requeue tries, the work kept for the next run.
//! * `Book` (`book.rs`): listing states and validators, what this run
//!   learns of its listings, listings held back by their rate.
//! * [`Sink`] (`store::sink`): the shard, the seen-set, the WARC file and
//!   ids, and the rule that a URL is a hit only once its record is durable.
//! * `Ledger` (`ledger.rs`): totals, host funnels, source health, reach,
//!   the progress display, the event and consent logs.
//!
//! The engine's files are its decisions over those parts: `mod.rs` the loop,
//! `queue.rs` what goes into the frontier and what comes out (dispatch),
//! `finished.rs` a finished job (classified once, then acted on),
//! `listing.rs` robots.txt and listings, `page.rs` a page (links followed;
//! then decide, then store: [`Rejection`] or a record for the [`Sink`]),
//! `family.rs` URL families, `value.rs` a URL's value, `save.rs` the end of
//! the run. `scripts/engine_fields.py` counts the parts each file reaches.
//!
//! Tasks get a [`Job`] and hand back a [`Done`] through `Tasks`; no locks
//! on the hot path.
//!
//! [`Rejection`]: crate::record::Rejection

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use tokio::sync::mpsc;

mod book;
mod facts;
mod family;
mod finished;
mod ledger;
mod listing;
mod page;
mod queue;
mod save;
mod value;
mod work;

#[cfg(test)]
mod tests;

use super::events::EventLog;
use super::handover::Handover;
use super::interrupt::Interrupt;
use super::reach::Cutoff;
use super::tasks::{Lost, Tasks};
use super::worker::{Answered, Ctx, Done, Job};
use crate::config::{Config, Scope};
use crate::frontier::{Entry, Frontier, Next, OpenScope, Outcome};
use crate::record::StopReason;
use crate::store::outbox::Inbox;
use crate::store::sink::Sink;
use crate::store::state::{Listings, RunSummary, Validators};
use book::Book;
use facts::Facts;
use ledger::Ledger;
use work::Work;

/// Levels of sitemaps read below (and counting) a seed or a robots.txt
/// `Sitemap:` line: the children of an index at the last level are not read.
pub(super) const MAX_SITEMAP_DEPTH: u32 = 3;

/// Everything the loop owns, in parts that own their state (see the module
/// doc); built by [`Engine::new`] from the [`Sink`] and the state files
/// ([`Persist`]) `setup.rs` opened.
pub(crate) struct Engine {
    ctx: Arc<Ctx>,
    /// The frontier and what it consults: this run's URLs, traps,
    /// handover, families, open scope, slots, work kept for the next run.
    work: Work,
    /// The shard, the seen-set, the WARC file and ids: what is stored for good.
    sink: Sink,
    /// What the run is: config, id, day, start, cut-offs (immutable).
    facts: Facts,
    /// Listing states and validators, and what this run learns of its listings.
    book: Book,
    /// Totals, host funnels, source health and reach, the progress display,
    /// the event and consent logs.
    ledger: Ledger,
    /// Tasks' [`Answered`] messages (taken by `run` while it runs).
    answers: Option<mpsc::UnboundedReceiver<Answered>>,
}

/// The state files the run opens under `data/state/` (the shard, the
/// seen-set and the WARC file are the [`Sink`]'s): [`Engine::new`] gives the
/// listing states and validators to the `Book`, the families to the `Work`,
/// the consent log to the `Ledger`.
pub(crate) struct Persist {
    pub validators: Validators,
    /// What is known of every feed and sitemap (`state/listings/`).
    pub listings: Listings,
    /// What each URL family of each host has yielded (`state/families/`).
    pub families: crate::store::state::families::Families,
    /// This run's robots.txt snapshots and withheld pages (`state/consent/<run-id>.jsonl`).
    pub consent: crate::store::consent::ConsentLog,
}

/// What a run starts from besides the config.
pub struct Start {
    pub run_id: String,
    pub started_at: DateTime<Utc>,
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
    pub(crate) fn new(
        config: Config,
        ctx: Arc<Ctx>,
        sink: Sink,
        store: Persist,
        log: EventLog,
        start: Start,
    ) -> Engine {
        let c = &config.crawl;
        let handover = Handover::new(ctx.partition, c.scope == Scope::Open);
        let health = super::tally::Tally::new(&config, &start.run_id, start.started_at);
        let frontier = Frontier::new(c.frontier_params());
        let open = OpenScope::new(c.scope_params());
        Engine {
            ledger: Ledger::new(health, start.progress, log, store.consent),
            work: Work::new(frontier, open, start.seeds, handover, store.families),
            facts: Facts::new(
                config,
                start.run_id,
                start.started_at,
                start.cutoff,
                start.last,
            ),
            ctx,
            sink,
            book: Book::new(store.listings, store.validators),
            answers: Some(start.answers),
        }
    }
}

type Answers = mpsc::UnboundedReceiver<Answered>;

impl Engine {
    pub(super) fn now(&self) -> Duration {
        self.facts.now()
    }

    /// [`Facts::fresh_since`] (for `setup.rs`).
    pub(super) fn fresh_since(&self, host: &str) -> DateTime<Utc> {
        self.facts.fresh_since(host)
    }

    /// The hosts this runner crawls.
    pub(super) fn partition(&self) -> crate::partition::Partition {
        self.ctx.partition
    }

    /// Save everything after the loop stopped (`save.rs`; after an outage, nothing).
    pub(super) async fn finish(
        self,
        data: &crate::store::DataDir,
        stop: StopReason,
        started_at: DateTime<Utc>,
        run_id: &str,
        inbox: &Inbox,
    ) -> anyhow::Result<super::RunEnd> {
        save::finish(self, data, stop, started_at, run_id, inbox).await
    }

    /// Run until a limit, an interrupt, or no work is left.
    pub(crate) async fn run(
        &mut self,
        interrupts: mpsc::UnboundedReceiver<Interrupt>,
    ) -> StopReason {
        let (_keep, mut answers) = match self.answers.take() {
            Some(rx) => (None, rx),
            // Without workers' messages every slot is freed by its `Done`.
            None => {
                let (tx, rx) = mpsc::unbounded_channel();
                (Some(tx), rx)
            }
        };
        let stop = self.run_with(interrupts, &mut answers).await;
        self.answers = Some(answers);
        stop
    }

    /// A worker's answer is in: the request's send time counts for the gap,
    /// and the host's slot is free while the body is parsed.
    fn take_answer(&mut self, a: Answered) {
        let sent = self.facts.since_start(a.sent_at);
        let took = Instant::now().saturating_duration_since(a.sent_at);
        // An open-scope host is capped by fetches with a verdict: it keeps its
        // turn until the verdict, so no fetch goes past its cap.
        let hold =
            self.facts.config().crawl.scope == Scope::Open && !self.ctx.scope.has_host(&a.host);
        let now = self.now();
        self.work.answered(a.host, sent, took, hold, now);
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
        let c = &self.facts.config().crawl;
        let (Some(d), true) = (deadline, c.max_pages > 0) else {
            return;
        };
        let budget_left = c.max_pages.saturating_sub(self.ctx.net.requests());
        let time_left = d.saturating_duration_since(Instant::now());
        let concurrency = c.concurrency;
        let now = self.now();
        self.work.pace(budget_left, time_left, concurrency, now);
    }

    async fn run_with(
        &mut self,
        mut interrupts: mpsc::UnboundedReceiver<Interrupt>,
        answers: &mut Answers,
    ) -> StopReason {
        let c = self.facts.config().crawl.clone();
        let deadline =
            (c.max_duration.0 > Duration::ZERO).then(|| self.facts.started() + c.max_duration.0);
        let reseed = Duration::from_secs(c.reseed_every_secs.max(1));
        let mut next_reseed = self.facts.started() + reseed;
        let mut tasks = Tasks::default();
        let mut tick = tokio::time::interval(Duration::from_millis(250));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let stop = loop {
            // Limits that stop the taking of new work.
            if let Some(d) = deadline
                && Instant::now() >= d
            {
                break StopReason::MaxDuration;
            }
            if c.max_hits > 0 && self.ledger.counts().stored >= c.max_hits {
                break StopReason::MaxHits;
            }
            if c.max_pages > 0 && self.ctx.net.requests() >= c.max_pages {
                break StopReason::MaxPages;
            }
            if Instant::now() >= next_reseed {
                next_reseed = Instant::now() + reseed;
                tracing::info!("reseeding");
                self.work.reseed();
                self.queue_seeds();
            }
            // Fill free worker slots with ready URLs.
            self.pace(deadline);
            let mut wake = Duration::from_millis(250);
            while tasks.len() < c.concurrency {
                if c.max_pages > 0 && self.ctx.net.requests() + tasks.len() as u64 >= c.max_pages {
                    break;
                }
                match self.work.next(self.now()) {
                    Next::Ready { host, entry } => self.dispatch(&mut tasks, host, entry),
                    Next::Wait(at) => {
                        wake = wake.min(at.saturating_sub(self.now()));
                        break;
                    }
                    Next::Empty => break,
                }
            }
            if tasks.is_empty() && self.work.is_empty() {
                break StopReason::Exhausted;
            }
            let sleep = match deadline {
                Some(d) => wake.min(d.saturating_duration_since(Instant::now())),
                None => wake,
            };
            tokio::select! {
                Some(ended) = tasks.next(), if !tasks.is_empty() => self.ended(ended, answers),
                Some(a) = answers.recv() => self.take_answer(a),
                sig = interrupts.recv() => {
                    if let Some(sig) = sig {
                        tracing::warn!(?sig, "stop requested");
                        return self.wind_down(tasks, interrupts, answers, StopReason::Interrupted, Some(sig)).await;
                    }
                }
                _ = tokio::time::sleep(sleep) => {}
                _ = tick.tick() => self.maybe_flush(),
            }
        };
        self.wind_down(tasks, interrupts, answers, stop, None).await
    }

    /// Stop taking work; let in-flight fetches finish (bounded by `stop_grace`
    /// for limits, unbounded until a second signal for Ctrl-C), then return.
    async fn wind_down(
        &mut self,
        mut tasks: Tasks,
        mut interrupts: mpsc::UnboundedReceiver<Interrupt>,
        answers: &mut Answers,
        stop: StopReason,
        interrupt: Option<Interrupt>,
    ) -> StopReason {
        tracing::info!(
            stopped_by = stop.as_str(),
            in_flight = tasks.len(),
            "stopping"
        );
        if matches!(interrupt, Some(Interrupt::Abort)) {
            tasks.abort_all();
        }
        let grace = match stop {
            StopReason::Interrupted => {
                self.facts.config().crawl.request_timeout.0 + self.facts.config().crawl.stop_grace.0
            }
            _ => self.facts.config().crawl.stop_grace.0,
        };
        let until = tokio::time::Instant::now() + grace;
        while !tasks.is_empty() {
            tokio::select! {
                ended = tasks.next() => match ended {
                    Some(ended) => self.ended(ended, answers),
                    None => break,
                },
                sig = interrupts.recv() => {
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

    /// Close a job in the frontier: its verdict (if any), and its slot unless
    /// an [`Answered`] freed it already (slots are counted per host: any of
    /// the host's jobs may take one freed early).
    pub(super) fn close(&mut self, job: &Job, outcome: Option<Outcome>) {
        self.close_host(&job.host, outcome);
    }

    /// [`Engine::close`] for a job known by its host alone.
    fn close_host(&mut self, host: &str, outcome: Option<Outcome>) {
        let now = self.now();
        self.work.close(host, outcome, now);
    }
}
