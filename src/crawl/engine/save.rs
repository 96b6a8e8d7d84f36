//! The end of a run: everything saved in a crash-safe order, the run's
//! summary last (it marks the run finished); after an outage, nothing.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use chrono::{DateTime, Utc};

use super::Engine;
use super::ledger::Counts;
use crate::crawl::RunEnd;
use crate::crawl::reach;
use crate::crawl::tally::Tally;
use crate::frontier::{Entry, Kind};
use crate::record::StopReason;
use crate::record::event::{self, Event};
use crate::store::DataDir;
use crate::store::outbox::Inbox;
use crate::store::sink::Sink;
use crate::store::state::{self, RunSummary, SeedProblem};
use crate::url;

/// Save everything after the loop stopped. An outage (no host reached)
/// saves nothing: the watermark, the queue carried over, the validators and
/// the seen-set stay exactly as the last run left them.
pub(super) async fn finish(
    mut engine: Engine,
    data: &DataDir,
    stop: StopReason,
    started_at: DateTime<Utc>,
    run_id: &str,
    inbox: &Inbox,
) -> anyhow::Result<RunEnd> {
    let outage = (stop != StopReason::Interrupted)
        .then(|| engine.ledger.reach().outage())
        .flatten();
    if let Some(cause) = outage {
        return finish_outage(engine, stop, run_id, cause);
    }
    // After this flush every stored record is durable and marked as a hit.
    engine.flush();
    // The display's last line says the final totals, not the last timer's snapshot.
    engine.show_totals();
    let left = Leftover::take(&mut engine);
    let day = engine.facts.day();
    engine
        .book
        .settle(day, started_at, super::MAX_SITEMAP_DEPTH);
    count_backlog(&mut engine, &left.queue);
    let mut summary = summarise(&engine, stop, started_at, run_id, inbox, &left);
    // The files, in this order; the summary last.
    let shard = close_shard(engine.sink)?;
    state::save_frontier(&data.state, engine.ctx.partition, &left.queue)?;
    // Handed-over URLs: this run's files for other partitions; the files it
    // read are removed (what it queued from them and did not reach is in the
    // queue file it just saved, like any other link).
    engine.work.handover().save(&data.state, run_id)?;
    inbox.remove()?;
    engine.book.save(&data.state, run_id)?;
    engine.work.families().save(&data.state, run_id)?;
    state::save_doc_cache(&data.state, &engine.ctx.net.doc_cache(), day, run_id)?;
    summary.run.finished_at = Some(Utc::now());
    summary.shard = file_name(shard.as_deref());
    engine.ledger.report_sources_down(engine.facts.cutoff());
    summary.seed_problems = seed_problems(engine.ledger.health());
    let health = engine.ledger.finish_health(stop);
    crate::store::health::save(&data.state, &health)?;
    summary.save(&data.state)?;
    let (counts, started) = (engine.ledger.counts(), engine.facts.started());
    engine
        .ledger
        .emit(done_event(&summary, stop, counts, started));
    engine.ledger.flush_log();
    engine.ledger.finish_display(stop);
    tracing::info!(
        stopped_by = stop.as_str(),
        requests = summary.pages_fetched,
        stored = engine.ledger.counts().stored,
        queue_left = summary.queue_left,
        "crawl finished"
    );
    Ok(RunEnd {
        run_id: run_id.to_string(),
        interrupted: stop == StopReason::Interrupted,
        outage: None,
        stopped_by: stop,
        shard,
        fetched: summary.pages_fetched,
        stored: engine.ledger.counts().stored,
        hosts: summary.hosts,
        render: None,
    })
}

/// The queue the run leaves for the next run of its partition.
struct Leftover {
    queue: Vec<Entry>,
    /// Entries of the work kept for the next run that the queue lacked.
    kept_for_next: usize,
    /// Feeds and sitemaps in the queue that this run never read...
    unread_listings: usize,
    /// ... and their hosts.
    unread_hosts: HashSet<String>,
}

impl Leftover {
    /// The frontier drained, plus the work kept for the next run (pages
    /// that failed for a network reason or a 5xx, rested hosts' queues).
    fn take(engine: &mut Engine) -> Leftover {
        let (mut queue, kept) = engine.work.leftover();
        let kept_for_next = keep_for_next_run(&mut queue, kept);
        let (unread_listings, unread_hosts) = unread(&queue, engine.book.read());
        Leftover {
            queue,
            kept_for_next,
            unread_listings,
            unread_hosts,
        }
    }
}

/// Each host's share of the queue left for the next run: its backlog.
fn count_backlog(engine: &mut Engine, queue: &[Entry]) {
    for e in queue {
        if let Some(u) = url::parse(&e.url) {
            engine.ledger.host(&url::host_key(&u)).backlog += 1;
        }
    }
}

/// The end of a run in which no host could be reached: nothing under
/// `data/` changes but the event log (and this run's consent file, which
/// holds only unreachable robots.txt snapshots, is removed).
fn finish_outage(
    mut engine: Engine,
    stop: StopReason,
    run_id: &str,
    cause: String,
) -> anyhow::Result<RunEnd> {
    let requests = engine.ctx.net.requests();
    tracing::error!(%cause, requests, "outage: nothing saved; the watermark and the carried-over queue are unchanged");
    engine.ledger.discard_consent();
    let hosts = engine.ledger.hosts().clone();
    engine.ledger.emit(Event::Done(event::Done {
        run_id: run_id.to_string(),
        stopped_by: StopReason::Outage,
        requests,
        fetched: engine.ledger.counts().fetched,
        stored: 0,
        errors: engine.ledger.counts().errors,
        queue_left: None,
        elapsed_s: engine.facts.started().elapsed().as_secs_f64(),
        shard: None,
        outage: Some(cause.clone()),
    }));
    engine.ledger.flush_log();
    engine.show_totals();
    engine.ledger.finish_display(StopReason::Outage);
    Ok(RunEnd {
        run_id: run_id.to_string(),
        interrupted: false,
        outage: Some(cause),
        stopped_by: stop,
        shard: None,
        fetched: requests,
        stored: 0,
        hosts,
        render: None,
    })
}

/// Add the work kept for the next run to the queue left over (once per URL).
/// Returns how many entries were added.
fn keep_for_next_run(queue: &mut Vec<Entry>, kept: Vec<Entry>) -> usize {
    if kept.is_empty() {
        return 0;
    }
    // Hashes, not copies of the URLs: the queue may hold `max_queue` entries
    // (a million by default), and this runs at the end, when memory peaks.
    let hash = |u: &str| xxhash_rust::xxh3::xxh3_64(u.as_bytes());
    let mut have: HashSet<u64> = queue.iter().map(|e| hash(&e.url)).collect();
    // Exactly the room needed: a full queue's Vec would otherwise double.
    queue.reserve_exact(kept.len());
    let before = queue.len();
    for e in kept {
        if have.insert(hash(&e.url)) {
            queue.push(e);
        }
    }
    queue.len() - before
}

/// The feeds and sitemaps in `queue` that were not read in this run (their
/// seen hashes are not in `read`), and their hosts.
fn unread(queue: &[Entry], read: &HashSet<u64>) -> (usize, HashSet<String>) {
    let mut hosts = HashSet::new();
    let count = queue
        .iter()
        .filter(|e| {
            e.kind != Kind::Page
                && url::parse(&e.url).is_none_or(|u| !read.contains(&url::seen_hash(&u)))
        })
        .inspect(|e| {
            if let Some(u) = url::parse(&e.url) {
                hosts.insert(url::host_key(&u));
            }
        })
        .count();
    if count > 0 {
        tracing::info!(
            unread_listings = count,
            "feeds or sitemaps left unread: carried over with their own cut-off"
        );
    }
    (count, hosts)
}

/// The run's summary (`runs/<run-id>.json`, `last_run.json`) from what the
/// engine ended with; `finished_at`, `shard` and the seed problems are set
/// once the files are saved.
fn summarise(
    engine: &Engine,
    stop: StopReason,
    started_at: DateTime<Utc>,
    run_id: &str,
    inbox: &Inbox,
    left: &Leftover,
) -> RunSummary {
    let mut summary = RunSummary::new(run_id, started_at);
    summary.run.stopped_by = Some(stop.into());
    summary.interrupted = stop == StopReason::Interrupted;
    summary.pages_fetched = engine.ctx.net.requests();
    summary.articles_stored = engine.ledger.counts().stored;
    let blocks = engine.sink.id_blocks();
    summary.ids = match (blocks.first(), blocks.last()) {
        (Some(first), Some(last)) => Some([first[0], last[1]]),
        _ => None,
    };
    summary.id_blocks = blocks.to_vec();
    summary.partition = Some(engine.ctx.partition);
    summary.handover = Some(engine.work.handover().counts(inbox.entries.len()));
    set_watermarks(&mut summary, engine, stop, started_at, left);
    summary.hosts = engine.ledger.hosts().clone();
    summary.queue_left = left.queue.len() as u64;
    summary.kept_for_next_run = left.kept_for_next as u64;
    summary.unread_listings = left.unread_listings as u64;
    summary.sources_down = engine.ledger.reach().troubled().keys().cloned().collect();
    summary
}

/// The queue left over is saved and carried into the next run, so the
/// watermark may move on unless the run was cut short by a signal. A feed
/// or sitemap left unread keeps its own cut-off (its last full read, or
/// `crawl.min_lastmod` for one never read: `state/listings/`), so it no
/// longer holds its host back; a host that could not be read today keeps
/// its own.
fn set_watermarks(
    summary: &mut RunSummary,
    engine: &Engine,
    stop: StopReason,
    started_at: DateTime<Utc>,
    left: &Leftover,
) {
    let complete = stop != StopReason::Interrupted;
    let previous = engine.facts.last();
    summary.set_watermark(previous, complete);
    let touched: Vec<String> = engine
        .ledger
        .reach()
        .sources()
        .map(str::to_string)
        .chain(left.unread_hosts.iter().cloned())
        .collect();
    summary.host_watermarks = reach::next_watermarks(
        &previous
            .map(|p| p.host_watermarks.clone())
            .unwrap_or_default(),
        previous.and_then(|p| p.last_success_started_at),
        touched.iter().map(String::as_str),
        started_at,
        |h| {
            complete && engine.ledger.reach().is_reached(h) && !engine.ledger.reach().is_troubled(h)
        },
    );
}

/// Close this run's shard (a last frame, synced) and append the seen-set's
/// last changes. The shard's path, or `None` when nothing was stored (no
/// file was created).
fn close_shard(sink: Sink) -> anyhow::Result<Option<PathBuf>> {
    let path = sink.shard_path().to_path_buf();
    sink.close()
        .with_context(|| format!("closing {}", path.display()))
}

fn file_name(path: Option<&Path>) -> Option<String> {
    path.and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
}

/// Seeds that failed or now redirect, with where they point: fix the config.
fn seed_problems(health: &Tally) -> Vec<SeedProblem> {
    health
        .seed_problems()
        .into_iter()
        .map(|(source, a)| {
            tracing::warn!(%source, url = %a.url, answer = %a.answer, moved_to = ?a.moved_to,
                "seed failed or redirects: update config.yml");
            SeedProblem {
                source,
                url: a.url,
                answer: a.answer,
                moved_to: a.moved_to,
            }
        })
        .collect()
}

/// The `done` event of a run that saved its state.
fn done_event(summary: &RunSummary, stop: StopReason, counts: Counts, started: Instant) -> Event {
    Event::Done(event::Done {
        run_id: summary.run.run_id.clone(),
        stopped_by: stop,
        requests: summary.pages_fetched,
        fetched: counts.fetched,
        stored: counts.stored,
        errors: counts.errors,
        queue_left: Some(summary.queue_left as usize),
        elapsed_s: started.elapsed().as_secs_f64(),
        shard: summary.shard.clone(),
        outage: None,
    })
}
