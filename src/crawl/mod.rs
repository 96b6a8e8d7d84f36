//! The crawl: set up a run from `config.yml` and the state in `data/`, drive
//! the [`engine::Engine`] loop, and save everything when it stops.

pub mod check;
pub mod engine;
pub mod events;
pub mod health;
mod listing;
pub mod outage;
mod page;
pub mod partition;
pub mod probe;
mod signals;
mod value;
pub mod worker;
mod workers;

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use chrono::{DateTime, Utc};
use tokio::sync::mpsc;

pub use check::check_url;
use engine::{Engine, Persist, Signal, Start};
use events::EventLog;

use crate::config::Config;
use crate::discover::{self, Limits};
use crate::frontier::{Entry, Kind, Origin};
use crate::net::Net;
use crate::record::event::{self, Event};
use crate::record::{HostCounters, StopReason};
use crate::relevance::Rule;
use crate::store::DataDir;
use crate::store::ids::IdBlocks;
use crate::store::outbox::Inbox;
use crate::store::seen::{Seen, SeenSet, day_stamp, flag};
use crate::store::shard::{self, ShardWriter};
use crate::store::state::{self, RunHistory, RunSummary, SeedProblem, Validators};
use crate::url::{self, SourceScope};

/// Run options that are not in `config.yml`.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub data: PathBuf,
    pub seeds: Vec<String>,
    pub resume: bool,
    pub proxy: Option<String>,
}

/// How a run ended.
#[derive(Debug, Clone)]
pub struct RunEnd {
    pub run_id: String,
    pub interrupted: bool,
    /// No host could be reached (see [`outage`]): the one-line cause. Nothing
    /// was saved; the binary exits with [`outage::EXIT_OUTAGE`].
    pub outage: Option<String>,
    pub stopped_by: StopReason,
    pub shard: Option<PathBuf>,
    /// Requests sent.
    pub fetched: u64,
    pub stored: u64,
    /// The per-host funnel (also in `last_run.json` unless an outage).
    pub hosts: BTreeMap<String, HostCounters>,
}

/// `scraper crawl`.
pub async fn run(config: Config, opts: Options) -> anyhow::Result<RunEnd> {
    let data = DataDir::open(&opts.data)?;
    let started_at = Utc::now();
    let run_id = state::new_run_id(started_at);
    let history = RunHistory::load(&data.state)?;
    // The watermark comes from the latest run that covered this partition's hosts.
    let last = history.latest_for(config.crawl.partition).cloned();
    let cutoff = resolve_cutoff(&config, last.as_ref(), started_at)?;
    let store = open_store(&data, &config, &history, &run_id, started_at)?;
    let mut log = EventLog::create(&data.state.join("crawl.log"));
    let (ctx, seeds, answers) = worker_context(&config, &opts, &data, started_at)?;
    announce(
        &mut log,
        &config,
        &opts,
        &run_id,
        &cutoff,
        seeds.len(),
        &store,
    );
    let start = Start {
        run_id: run_id.clone(),
        started_at,
        state_dir: data.state.clone(),
        cutoff,
        last,
        seeds,
        answers,
    };
    let mut engine = Engine::new(config, ctx, store, log, start);
    carry_over(&mut engine, &data, opts.resume)?;
    let inbox = read_inbox(&mut engine, &data)?;
    engine.queue_seeds();
    let stop = engine.run(spawn_signals()).await;
    finish(engine, &data, stop, started_at, &run_id, &inbox).await
}

/// What other partitions found for this one (open scope), queued.
fn read_inbox(engine: &mut Engine, data: &DataDir) -> anyhow::Result<Inbox> {
    let inbox = Inbox::read(&data.state, engine.ctx.partition)?;
    if inbox.bad_lines > 0 {
        tracing::warn!(
            bad_lines = inbox.bad_lines,
            "outbox: unreadable lines skipped"
        );
    }
    let from_inbox = engine.take_inbox(&inbox);
    if !inbox.entries.is_empty() {
        tracing::info!(
            read = inbox.entries.len(),
            queued = from_inbox,
            files = inbox.files.len(),
            "URLs other partitions handed over"
        );
    }
    Ok(inbox)
}

/// What the run reads and writes under `data/`: the seen-set and id counter
/// (moved past a killed run's shard), the validators, this run's new shard
/// and consent file.
fn open_store(
    data: &DataDir,
    config: &Config,
    history: &RunHistory,
    run_id: &str,
    started_at: DateTime<Utc>,
) -> anyhow::Result<Persist> {
    let mut seen = SeenSet::load(&data.state)?;
    let ids = IdBlocks::new(started_at, run_id, config.crawl.partition)?;
    recover_unfinished(data, history, &mut seen, run_id)?;
    let validators = Validators::load(&data.state, Validators::DEFAULT_CAP)?;
    let shard_path = data.articles.join(format!("{run_id}.jsonl.zst"));
    let shard = ShardWriter::create(&shard_path, config.crawl.flush_every.0)?;
    Ok(Persist {
        seen,
        shard,
        ids,
        validators,
        consent: crate::store::consent::ConsentLog::new(&data.state, run_id),
    })
}

/// What every worker shares (the network with its budget and caches, the
/// relevance rule, the scope with the `--seed` hosts), the seed entries, and
/// the channel the workers' early answers come back on.
fn worker_context(
    config: &Config,
    opts: &Options,
    data: &DataDir,
    started_at: DateTime<Utc>,
) -> anyhow::Result<(
    Arc<worker::Ctx>,
    Vec<Entry>,
    mpsc::UnboundedReceiver<worker::Answered>,
)> {
    let net =
        Net::new(&config.crawl, opts.proxy.as_deref()).context("cannot set up the HTTP client")?;
    net.set_budget(config.crawl.max_pages);
    net.set_allow_private(config.crawl.allow_private_addresses);
    net.set_doc_cache(state::load_doc_cache(&data.state), day_stamp(started_at));
    let mut scope = SourceScope::new(&config.sources);
    let mut extra = Vec::new();
    for s in &opts.seeds {
        let u = url::parse(s)
            .with_context(|| format!("--seed {s}: expected an absolute http(s) URL"))?;
        scope.add(u.host_str().unwrap_or(""), None);
        extra.push(u.to_string());
    }
    let seeds = seed_entries(config, &extra);
    let (answered_tx, answered_rx) = mpsc::unbounded_channel();
    let ctx = Arc::new(worker::Ctx {
        net,
        rule: Rule::new(&config.keywords),
        scope,
        mode: config.crawl.scope,
        deny_hosts: config.crawl.deny_hosts.clone(),
        partition: config.crawl.partition,
        today: started_at.date_naive(),
        // 50,000 URLs per sitemap (the protocol's maximum), 50 MB decoded.
        limits: Limits::default(),
        answered: Some(answered_tx),
    });
    Ok((ctx, seeds, answered_rx))
}

/// The `run_start` event and log line.
fn announce(
    log: &mut EventLog,
    config: &Config,
    opts: &Options,
    run_id: &str,
    cutoff: &outage::Cutoff,
    seeds: usize,
    store: &Persist,
) {
    let c = &config.crawl;
    log.emit(Event::RunStart(event::RunStart {
        run_id: run_id.to_string(),
        sources: config.sources.len(),
        seeds,
        scope: c.scope,
        max_pages: c.max_pages,
        max_hits: c.max_hits,
        max_duration_s: c.max_duration.0.as_secs(),
        min_lastmod: cutoff.latest().map(|d| d.to_rfc3339()),
        min_lastmod_hosts: cutoff.hosts.len(),
        concurrency: c.concurrency,
        min_host_gap_ms: c.min_host_gap.0.as_millis() as u64,
        seen: store.seen.len(),
        partition: c.partition,
        resume: opts.resume,
    }));
    tracing::info!(%run_id, seeds, seen = store.seen.len(), cutoff = ?cutoff.latest(), per_host = cutoff.hosts.len(), partition = %c.partition, "crawl starting");
}

/// Queue what a previous run left: all of it with `--resume`; otherwise the
/// feed and sitemap entries it listed but could not fetch (so the
/// `--min-lastmod auto` watermark can move on without losing them).
fn carry_over(engine: &mut Engine, data: &DataDir, resume: bool) -> anyhow::Result<()> {
    let leftover = state::load_frontier(&data.state, engine.ctx.partition)?;
    if leftover.bad_lines > 0 {
        tracing::warn!(
            bad_lines = leftover.bad_lines,
            "frontier.jsonl: unreadable lines skipped"
        );
    }
    let mut carried = 0;
    for entry in leftover.entries {
        if (resume || entry.origin == Origin::Listed)
            && let Some(u) = url::parse(&entry.url)
            && engine.enqueue(&u, entry)
        {
            carried += 1;
        }
    }
    if carried > 0 {
        tracing::info!(carried, "queue carried over from the previous run");
    }
    Ok(())
}

/// Save everything after the loop stopped. An outage (no host reached)
/// saves nothing: the watermark, the queue carried over, the validators and
/// the seen-set stay exactly as the last run left them.
async fn finish(
    mut engine: Engine,
    data: &DataDir,
    stop: StopReason,
    started_at: DateTime<Utc>,
    run_id: &str,
    inbox: &Inbox,
) -> anyhow::Result<RunEnd> {
    let outage = (stop != StopReason::Interrupted)
        .then(|| engine.reach.outage())
        .flatten();
    if let Some(cause) = outage {
        return finish_outage(engine, stop, run_id, cause);
    }
    // After this flush every stored record is durable and marked as a hit.
    engine.flush();
    let shard_path = engine.store.shard.path().to_path_buf();
    let kept = engine
        .store
        .shard
        .finish()
        .with_context(|| format!("closing {}", shard_path.display()))?;
    engine.store.seen.flush(&data.state, run_id)?;
    let mut queue = engine.frontier.drain();
    let kept_for_next = keep_for_next_run(&mut queue, std::mem::take(&mut engine.sets.kept));
    state::save_frontier(&data.state, engine.ctx.partition, &queue)?;
    // Handed-over URLs: this run's files for other partitions; the files it
    // read are removed (what it queued from them and did not reach is in the
    // queue file it just saved, like any other link).
    let me = engine.ctx.partition;
    engine.sets.handover.outbox.save(&data.state, run_id)?;
    inbox.remove()?;
    engine.store.validators.save(&data.state, run_id)?;
    state::save_doc_cache(&data.state, &engine.ctx.net.doc_cache(), engine.day, run_id)?;
    let hosts = engine.counts.hosts.clone();
    let mut summary = RunSummary::new(run_id, started_at);
    summary.finished_at = Some(Utc::now());
    summary.stopped_by = Some(stop);
    summary.interrupted = stop == StopReason::Interrupted;
    summary.pages_fetched = engine.ctx.net.requests();
    summary.articles_stored = engine.counts.stored;
    let blocks = engine.store.ids.blocks();
    summary.ids = match (blocks.first(), blocks.last()) {
        (Some(first), Some(last)) => Some([first[0], last[1]]),
        _ => None,
    };
    summary.id_blocks = blocks.to_vec();
    summary.partition = Some(me);
    summary.handover = Some(engine.sets.handover.counts(inbox.entries.len()));
    // The queue left over is saved and carried into the next run, so the
    // watermark may move on unless the run was cut short by a signal, or a
    // feed or sitemap in that queue was never read in this run: its entries
    // would meet a later cut-off than the one they were due. Per host the
    // same holds, and a host that could not be read today keeps its own.
    let mut unread_hosts = HashSet::new();
    let unread_listings = queue
        .iter()
        .filter(|e| {
            e.kind != Kind::Page
                && url::parse(&e.url)
                    .is_none_or(|u| !engine.sets.listings_read.contains(&url::seen_hash(&u)))
        })
        .inspect(|e| {
            if let Some(u) = url::parse(&e.url) {
                unread_hosts.insert(url::host_key(&u));
            }
        })
        .count();
    if unread_listings > 0 {
        tracing::info!(
            unread_listings,
            "feeds or sitemaps left unread: the min_lastmod watermark stays where it was"
        );
    }
    let complete = stop != StopReason::Interrupted;
    summary.set_watermark(engine.last.as_ref(), complete && unread_listings == 0);
    let previous = engine.last.as_ref();
    let touched: Vec<String> = engine
        .reach
        .sources()
        .map(str::to_string)
        .chain(unread_hosts.iter().cloned())
        .collect();
    summary.host_watermarks = outage::next_watermarks(
        &previous
            .map(|p| p.host_watermarks.clone())
            .unwrap_or_default(),
        previous.and_then(|p| p.last_success_started_at),
        touched.iter().map(String::as_str),
        started_at,
        |h| {
            complete
                && engine.reach.is_reached(h)
                && !engine.reach.is_troubled(h)
                && !unread_hosts.contains(h)
        },
    );
    for (host, cause) in engine.reach.troubled() {
        tracing::warn!(%host, %cause, "source not read today: its min_lastmod cut-off stays where it was");
        engine.log.emit(Event::SourceDown(event::SourceDown {
            host: host.to_string(),
            cause: cause.to_string(),
            cutoff: engine.cutoff.for_host(host).map(|d| d.to_rfc3339()),
        }));
    }
    summary.hosts = hosts.clone();
    let shard_name = kept
        .as_ref()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned());
    summary.queue_left = queue.len() as u64;
    summary.kept_for_next_run = kept_for_next as u64;
    summary.unread_listings = unread_listings as u64;
    summary.sources_down = engine.reach.troubled().keys().cloned().collect();
    summary.shard = shard_name.clone();
    // Seeds that failed or now redirect, with where they point: fix the config.
    summary.seed_problems = engine
        .health
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
        .collect();
    let health = engine.health.finish(Utc::now(), stop);
    crate::store::health::save(&data.state, &health)?;
    summary.save(&data.state)?;
    engine.log.emit(Event::Done(event::Done {
        run_id: run_id.to_string(),
        stopped_by: stop,
        requests: summary.pages_fetched,
        fetched: engine.counts.fetched,
        stored: engine.counts.stored,
        errors: engine.counts.errors,
        queue_left: Some(queue.len()),
        elapsed_s: engine.started.elapsed().as_secs_f64(),
        shard: shard_name,
        outage: None,
    }));
    engine.log.flush();
    engine.progress.finish(stop);
    tracing::info!(
        stopped_by = stop.as_str(),
        requests = summary.pages_fetched,
        stored = engine.counts.stored,
        queue_left = queue.len(),
        "crawl finished"
    );
    Ok(RunEnd {
        run_id: run_id.to_string(),
        interrupted: stop == StopReason::Interrupted,
        outage: None,
        stopped_by: stop,
        shard: kept,
        fetched: summary.pages_fetched,
        stored: engine.counts.stored,
        hosts,
    })
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
    engine.store.consent.discard();
    let hosts = engine.counts.hosts.clone();
    engine.log.emit(Event::Done(event::Done {
        run_id: run_id.to_string(),
        stopped_by: StopReason::Outage,
        requests,
        fetched: engine.counts.fetched,
        stored: 0,
        errors: engine.counts.errors,
        queue_left: None,
        elapsed_s: engine.started.elapsed().as_secs_f64(),
        shard: None,
        outage: Some(cause.clone()),
    }));
    engine.log.flush();
    engine.progress.finish(StopReason::Outage);
    Ok(RunEnd {
        run_id: run_id.to_string(),
        interrupted: false,
        outage: Some(cause),
        stopped_by: stop,
        shard: None,
        fetched: requests,
        stored: 0,
        hosts,
    })
}

/// Add the work kept for the next run to the queue left over (once per URL).
/// Returns how many entries were added.
fn keep_for_next_run(queue: &mut Vec<Entry>, kept: Vec<Entry>) -> usize {
    let mut have: HashSet<String> = queue.iter().map(|e| e.url.clone()).collect();
    let before = queue.len();
    for e in kept {
        if have.insert(e.url.clone()) {
            queue.push(e);
        }
    }
    queue.len() - before
}

/// `--min-lastmod`: a date, a time, `auto` (per host: the start of the last
/// run that read it successfully, minus the overlap; see [`outage::Cutoff`]),
/// or none.
fn resolve_cutoff(
    config: &Config,
    last: Option<&RunSummary>,
    now: DateTime<Utc>,
) -> anyhow::Result<outage::Cutoff> {
    let Some(text) = config.crawl.min_lastmod.as_deref() else {
        return Ok(outage::Cutoff::fixed(None));
    };
    if text.trim() == "auto" {
        let overlap =
            chrono::Duration::from_std(config.crawl.lastmod_overlap.0).unwrap_or_default();
        return Ok(match last {
            Some(l) => outage::Cutoff::auto(l.last_success_started_at, &l.host_watermarks, overlap),
            None => outage::Cutoff::fixed(None),
        });
    }
    crate::date::parse_cutoff(text, now)
        .map(outage::Cutoff::fixed)
        .map_err(|e| anyhow::anyhow!("--min-lastmod: {e}"))
}

/// Seeds from the config (a source without seeds starts at its home page or path) plus `--seed`.
fn seed_entries(config: &Config, extra: &[String]) -> Vec<Entry> {
    let mut urls: Vec<String> = Vec::new();
    for s in &config.sources {
        if s.seeds.is_empty() {
            urls.push(format!(
                "https://{}{}",
                s.host,
                s.path.as_deref().unwrap_or("/")
            ));
        } else {
            urls.extend(s.seeds.iter().cloned());
        }
    }
    urls.extend(config.seeds.iter().cloned());
    urls.extend(extra.iter().cloned());
    let mut out: Vec<Entry> = Vec::new();
    for u in urls {
        let Some(parsed) = url::parse(&u) else {
            continue;
        };
        if out.iter().any(|e| e.url == parsed.as_str()) {
            continue;
        }
        let kind = discover::kind_from_url(&parsed).unwrap_or(Kind::Page);
        out.push(Entry::new(parsed.to_string(), kind, Origin::Seed, 0));
    }
    out
}

/// A run that was killed never wrote `last_run.json`, and its last hits may
/// be missing from the seen-set. Shards newer than the last finished run are
/// read again: their URLs become hits, so nothing is stored twice. (Its ids
/// need no care: they came from its own blocks, which no later run uses.)
fn recover_unfinished(
    data: &DataDir,
    history: &RunHistory,
    seen: &mut SeenSet,
    run_id: &str,
) -> anyhow::Result<()> {
    for path in shard::list(&data.articles)? {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let stem = name.trim_end_matches(".jsonl.zst");
        if history.finished(stem) || stem == run_id {
            continue;
        }
        let mut urls = 0u64;
        let day = day_stamp(Utc::now());
        let scan = shard::read_lines(&path, |line| {
            #[derive(serde::Deserialize)]
            struct Min {
                url: String,
                #[serde(default)]
                canonical_url: Option<String>,
            }
            if let Ok(m) = serde_json::from_slice::<Min>(line) {
                for u in std::iter::once(m.url).chain(m.canonical_url) {
                    if let Some(u) = url::parse(&u) {
                        seen.record(
                            url::seen_hash(&u),
                            Seen {
                                day,
                                flags: flag::HIT,
                            },
                        );
                        urls += 1;
                    }
                }
            }
        })?;
        tracing::info!(shard = %path.display(), urls, truncated = scan.truncated_bytes, "recovered hits from an unfinished run");
    }
    Ok(())
}

/// Ctrl-C or SIGTERM once: [`Signal::Stop`]; again: [`Signal::Abort`].
fn spawn_signals() -> mpsc::UnboundedReceiver<Signal> {
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        #[cfg(unix)]
        let mut term =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        let mut count = 0;
        loop {
            #[cfg(unix)]
            let got = tokio::select! {
                r = tokio::signal::ctrl_c() => r.is_ok(),
                _ = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending::<()>().await } } => true,
            };
            #[cfg(not(unix))]
            let got = tokio::signal::ctrl_c().await.is_ok();
            if !got {
                break;
            }
            count += 1;
            let sig = if count == 1 {
                Signal::Stop
            } else {
                Signal::Abort
            };
            if tx.send(sig).is_err() {
                break;
            }
        }
    });
    rx
}
