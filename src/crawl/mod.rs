//! The crawl: set up a run from `config.yml` and the state in `data/`, drive
//! the [`engine::Engine`] loop, and save everything when it stops.

pub mod check;
pub mod engine;
pub mod events;
pub mod health;
pub mod hosts;
mod listing;
pub mod outage;
mod page;
mod partition;
pub mod probe;
mod value;
pub mod worker;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use chrono::{DateTime, Utc};
use serde_json::json;
use tokio::sync::mpsc;

pub use check::check_url;
use engine::{Engine, Signal, Stop};
use events::EventLog;

use crate::config::Config;
use crate::discover::{self, Limits};
use crate::frontier::{Entry, Frontier, Kind, OpenScope, Origin, Params, ScopeParams};
use crate::net::Net;
use crate::relevance::Rule;
use crate::report::progress::Progress;
use crate::store::DataDir;
use crate::store::ids::IdBlocks;
use crate::store::outbox::Inbox;
use crate::store::seen::{Seen, SeenSet, day_stamp, flag};
use crate::store::shard::{self, ShardWriter};
use crate::store::state::{self, RunHistory, RunSummary, Validators};
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
    pub interrupted: bool,
    /// No host could be reached (see [`outage`]): the one-line cause. Nothing
    /// was saved; the binary exits with [`outage::EXIT_OUTAGE`].
    pub outage: Option<String>,
    pub stopped_by: String,
    pub shard: Option<PathBuf>,
    pub fetched: u64,
    pub stored: u64,
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
    let mut seen = SeenSet::load(&data.state)?;
    let ids = IdBlocks::new(started_at, &run_id, config.crawl.partition)?;
    recover_unfinished(&data, &history, &mut seen, &run_id)?;
    let validators = Validators::load(&data.state, Validators::DEFAULT_CAP)?;
    let shard_path = data.articles.join(format!("{run_id}.jsonl.zst"));
    let shard = ShardWriter::create(&shard_path, config.crawl.flush_every.0)?;
    let mut log = EventLog::create(&data.state.join("crawl.log"));

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
    let seeds = seed_entries(&config, &extra);
    let today = started_at.date_naive();
    let (answered_tx, answered_rx) = tokio::sync::mpsc::unbounded_channel();
    let ctx = Arc::new(worker::Ctx {
        net: net.clone(),
        rule: Rule::new(&config.keywords),
        scope,
        mode: config.crawl.scope,
        deny_hosts: config.crawl.deny_hosts.clone(),
        partition: config.crawl.partition,
        today,
        // 50,000 URLs per sitemap (the protocol's maximum), 50 MB decoded.
        limits: Limits::default(),
        answered: Some(answered_tx),
    });
    let c = &config.crawl;
    let frontier = Frontier::new(Params::from_config(c));
    log.emit(
        "run_start",
        json!({"run_id": run_id, "sources": config.sources.len(), "seeds": seeds.len(),
               "scope": config.crawl.scope, "max_pages": c.max_pages, "max_hits": c.max_hits,
               "max_duration_s": c.max_duration.0.as_secs(), "min_lastmod": cutoff.latest().map(|d| d.to_rfc3339()),
               "min_lastmod_hosts": cutoff.hosts.len(),
               "concurrency": c.concurrency, "min_host_gap_ms": c.min_host_gap.0.as_millis() as u64,
               "seen": seen.len(), "partition": config.crawl.partition.to_string(), "resume": opts.resume}),
    );
    tracing::info!(%run_id, seeds = seeds.len(), seen = seen.len(), cutoff = ?cutoff.latest(), per_host = cutoff.hosts.len(), partition = %config.crawl.partition, "crawl starting");

    let mut engine = Engine {
        answers: Some(answered_rx),
        fetch_secs: 1.0,
        early_freed: Default::default(),
        day: day_stamp(started_at),
        config: config.clone(),
        ctx,
        frontier,
        seen,
        shard,
        ids,
        validators,
        log,
        run_id: run_id.clone(),
        state_dir: data.state.clone(),
        cutoff,
        reach: outage::Reach::default(),
        kept: Vec::new(),
        last: last.clone(),
        seeds,
        today,
        started: Instant::now(),
        hosts: HashMap::new(),
        open: OpenScope::new(ScopeParams::from_config(&config.crawl)),
        progress_at: Instant::now(),
        progress: Progress::new(
            (c.max_duration.0 > std::time::Duration::ZERO).then_some(c.max_duration.0),
        ),
        this_run: HashSet::new(),
        robots_seen: HashSet::new(),
        listed_sitemaps: HashSet::new(),
        listings_read: HashSet::new(),
        pending_hits: Vec::new(),
        consent: crate::store::consent::ConsentLog::new(&data.state, &run_id),
        fetched: 0,
        stored: 0,
        errors: 0,
        requeued: HashMap::new(),
        handover: Default::default(),
        patterns: Default::default(),
        health: health::Tally::new(&config, &run_id, started_at),
    };
    // The queue a previous run left: all of it with --resume; otherwise the
    // feed and sitemap entries it listed but could not fetch (so the
    // `--min-lastmod auto` watermark can move on without losing them).
    let leftover = state::load_frontier(&data.state, config.crawl.partition)?;
    if leftover.bad_lines > 0 {
        tracing::warn!(
            bad_lines = leftover.bad_lines,
            "frontier.jsonl: unreadable lines skipped"
        );
    }
    let mut carried = 0;
    for entry in leftover.entries {
        if (opts.resume || entry.origin == Origin::Listed)
            && let Some(u) = url::parse(&entry.url)
            && engine.enqueue(&u, entry)
        {
            carried += 1;
        }
    }
    if carried > 0 {
        tracing::info!(carried, "queue carried over from the previous run");
    }
    // What other partitions found for this one (open scope).
    let inbox = Inbox::read(&data.state, config.crawl.partition)?;
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
    engine.queue_seeds();

    let signals = spawn_signals();
    let stop = engine.run(signals).await;
    finish(engine, &data, stop, started_at, &run_id, &inbox).await
}

/// Save everything after the loop stopped. An outage (no host reached)
/// saves nothing: the watermark, the queue carried over, the validators and
/// the seen-set stay exactly as the last run left them.
async fn finish(
    mut engine: Engine,
    data: &DataDir,
    stop: Stop,
    started_at: DateTime<Utc>,
    run_id: &str,
    inbox: &Inbox,
) -> anyhow::Result<RunEnd> {
    let outage = (stop != Stop::Interrupted)
        .then(|| engine.reach.outage())
        .flatten();
    if let Some(cause) = outage {
        return finish_outage(engine, stop, run_id, cause);
    }
    // After this flush every stored record is durable and marked as a hit.
    engine.flush();
    let shard_path = engine.shard.path().to_path_buf();
    let kept = engine
        .shard
        .finish()
        .with_context(|| format!("closing {}", shard_path.display()))?;
    engine.seen.flush(&data.state, run_id)?;
    let mut queue = engine.frontier.drain();
    let kept_for_next = keep_for_next_run(&mut queue, std::mem::take(&mut engine.kept));
    state::save_frontier(&data.state, engine.ctx.partition, &queue)?;
    // Handed-over URLs: this run's files for other partitions; the files it
    // read are removed (what it queued from them and did not reach is in the
    // queue file it just saved, like any other link).
    let me = engine.ctx.partition;
    engine.handover.outbox.save(&data.state, run_id)?;
    inbox.remove()?;
    engine.validators.save(&data.state, run_id)?;
    state::save_doc_cache(&data.state, &engine.ctx.net.doc_cache(), engine.day, run_id)?;
    let hosts: BTreeMap<_, _> = engine
        .hosts
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut summary = RunSummary::new(run_id, started_at);
    summary.finished_at = Some(Utc::now());
    summary.stopped_by = stop.as_str().to_string();
    summary.interrupted = stop == Stop::Interrupted;
    summary.pages_fetched = engine.ctx.net.requests();
    summary.articles_stored = engine.stored;
    let blocks = engine.ids.blocks();
    summary.ids = match (blocks.first(), blocks.last()) {
        (Some(first), Some(last)) => Some([first[0], last[1]]),
        _ => None,
    };
    summary.extra.insert("id_blocks".into(), json!(blocks));
    summary
        .extra
        .insert("partition".into(), json!(me.to_string()));
    summary.extra.insert(
        "handover".into(),
        json!(engine.handover.counts(inbox.entries.len())),
    );
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
                    .is_none_or(|u| !engine.listings_read.contains(&url::seen_hash(&u)))
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
    let complete = stop != Stop::Interrupted;
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
        engine.log.emit(
            "source_down",
            json!({"host": host, "cause": cause, "cutoff": engine.cutoff.for_host(host).map(|d| d.to_rfc3339())}),
        );
    }
    summary.hosts = hosts
        .iter()
        .map(|(k, v)| (k.clone(), v.counters()))
        .collect();
    let shard_name = kept
        .as_ref()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned());
    summary
        .extra
        .insert("queue_left".into(), json!(queue.len()));
    summary
        .extra
        .insert("kept_for_next_run".into(), json!(kept_for_next));
    summary
        .extra
        .insert("unread_listings".into(), json!(unread_listings));
    summary.extra.insert(
        "sources_down".into(),
        json!(engine.reach.troubled().keys().collect::<Vec<_>>()),
    );
    summary.extra.insert("shard".into(), json!(shard_name));
    // Seeds that failed or now redirect, with where they point: fix the config.
    let seeds: Vec<serde_json::Value> = engine
        .health
        .seed_problems()
        .into_iter()
        .map(|(source, a)| {
            tracing::warn!(%source, url = %a.url, answer = %a.answer, moved_to = ?a.moved_to,
                "seed failed or redirects: update config.yml");
            json!({"source": source, "url": a.url, "answer": a.answer, "moved_to": a.moved_to})
        })
        .collect();
    if !seeds.is_empty() {
        summary.extra.insert("seed_problems".into(), json!(seeds));
    }
    let health = engine.health.finish(Utc::now(), stop.as_str());
    crate::store::health::save(&data.state, &health)?;
    summary.save(&data.state)?;
    let table = hosts::markdown(&hosts);
    if let Ok(path) = std::env::var("GITHUB_STEP_SUMMARY")
        && !path.is_empty()
    {
        use std::io::Write;
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&path)
        {
            let _ = writeln!(
                f,
                "### scraper crawl {run_id}\n\nStopped by **{}**: {} requests, {} articles stored.\n\n{table}",
                stop.as_str(),
                summary.pages_fetched,
                summary.articles_stored
            );
        }
    }
    engine.log.emit(
        "done",
        json!({"run_id": run_id, "stopped_by": stop.as_str(), "requests": summary.pages_fetched,
               "fetched": engine.fetched, "stored": engine.stored, "errors": engine.errors,
               "queue_left": queue.len(), "elapsed_s": engine.started.elapsed().as_secs_f64(),
               "shard": shard_name}),
    );
    engine.log.flush();
    engine.progress.finish(stop.as_str());
    eprintln!("{table}");
    tracing::info!(
        stopped_by = stop.as_str(),
        requests = summary.pages_fetched,
        stored = engine.stored,
        queue_left = queue.len(),
        "crawl finished"
    );
    Ok(RunEnd {
        interrupted: stop == Stop::Interrupted,
        outage: None,
        stopped_by: stop.as_str().to_string(),
        shard: kept,
        fetched: summary.pages_fetched,
        stored: engine.stored,
    })
}

/// The end of a run in which no host could be reached: nothing under
/// `data/` changes but the event log (and this run's consent file, which
/// holds only unreachable robots.txt snapshots, is removed).
fn finish_outage(
    mut engine: Engine,
    stop: Stop,
    run_id: &str,
    cause: String,
) -> anyhow::Result<RunEnd> {
    let requests = engine.ctx.net.requests();
    tracing::error!(%cause, requests, "outage: nothing saved; the watermark and the carried-over queue are unchanged");
    engine.consent.discard();
    let hosts: BTreeMap<_, _> = engine
        .hosts
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if let Ok(path) = std::env::var("GITHUB_STEP_SUMMARY")
        && !path.is_empty()
    {
        use std::io::Write;
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&path)
        {
            let _ = writeln!(
                f,
                "### scraper crawl {run_id}\n\n**Outage**: {cause}. Nothing was saved.\n\n{}",
                hosts::markdown(&hosts)
            );
        }
    }
    engine.log.emit(
        "done",
        json!({"run_id": run_id, "stopped_by": "outage", "outage": cause, "requests": requests,
               "fetched": engine.fetched, "stored": 0, "errors": engine.errors,
               "elapsed_s": engine.started.elapsed().as_secs_f64(), "shard": null}),
    );
    engine.log.flush();
    engine.progress.finish("outage");
    eprintln!("{}", hosts::markdown(&hosts));
    Ok(RunEnd {
        interrupted: false,
        outage: Some(cause),
        stopped_by: stop.as_str().to_string(),
        shard: None,
        fetched: requests,
        stored: 0,
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
