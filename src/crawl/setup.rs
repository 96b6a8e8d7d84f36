//! Setting a run up: the store opened (seen-set, ids, validators, this run's
//! shard and consent file, hits of killed runs recovered), what the workers
//! share, the seeds, the `--min-lastmod` cut-off, the `run_start` event, and
//! the queue carried over from the last run or handed over by other
//! partitions.

use std::sync::Arc;

use anyhow::Context;
use chrono::{DateTime, Utc};
use tokio::sync::mpsc;

use super::engine::{Engine, Persist};
use super::events::EventLog;
use super::{Options, reach, worker};
use crate::config::{Config, MinLastmod};
use crate::discover::{self, Limits};
use crate::frontier::{Entry, Kind, Origin};
use crate::net::Net;
use crate::record::event::{self, Event};
use crate::relevance::Rule;
use crate::source::Sources;
use crate::store::DataDir;
use crate::store::ids::IdBlocks;
use crate::store::outbox::Inbox;
use crate::store::seen::{Seen, SeenSet, day_stamp, flag};
use crate::store::shard::{self, ShardWriter};
use crate::store::sink::Sink;
use crate::store::state::{self, RunHistory, RunSummary, Validators};
use crate::url;

/// `--min-lastmod`: a date, a time, `auto` (per host: the start of the last
/// run that read it successfully, minus the overlap; see [`reach::Cutoff`]),
/// or none.
pub(super) fn resolve_cutoff(config: &Config, last: Option<&RunSummary>) -> reach::Cutoff {
    if config.crawl.min_lastmod == MinLastmod::Auto {
        let overlap =
            chrono::Duration::from_std(config.crawl.lastmod_overlap.0).unwrap_or_default();
        // `auto` never reaches back before the date configured in the file.
        let floor = config.crawl.min_lastmod_floor;
        let empty = Default::default();
        let (global, hosts) = match last {
            Some(l) => (l.last_success_started_at, &l.host_watermarks),
            None => (None, &empty),
        };
        return reach::Cutoff::auto(global, hosts, overlap, floor);
    }
    reach::Cutoff::fixed(config.crawl.min_lastmod.since())
}

/// What the run reads and writes under `data/`: the seen-set and id counter
/// (moved past a killed run's shard), the validators, this run's new shard
/// and consent file.
pub(super) fn open_store(
    data: &DataDir,
    config: &Config,
    history: &RunHistory,
    run_id: &str,
    started_at: DateTime<Utc>,
) -> anyhow::Result<(Sink, Persist)> {
    let mut seen = SeenSet::load(&data.state)?;
    let ids = IdBlocks::new(started_at, run_id, config.crawl.partition)?;
    recover_unfinished(data, history, &mut seen, run_id)?;
    let validators = Validators::load(&data.state, Validators::DEFAULT_CAP)?;
    let listings = state::Listings::load(&data.state)?;
    let families = state::families::Families::load(&data.state)?;
    let shard_path = data.articles.join(format!("{run_id}.jsonl.zst"));
    let shard = ShardWriter::create(&shard_path, config.crawl.flush_every.0)?;
    let warc = (config.crawl.archive != crate::config::Archive::None).then(|| {
        Box::new(crate::store::warc::WarcWriter::new(
            &data.warc_dir(),
            run_id,
        )) as Box<dyn crate::store::sink::Archive>
    });
    let day = day_stamp(started_at);
    let sink = Sink::new(seen, shard, ids, warc, &data.state, run_id, day);
    let store = Persist {
        validators,
        listings,
        families,
        consent: crate::store::consent::ConsentLog::new(&data.state, run_id),
    };
    Ok((sink, store))
}

/// What every worker shares (the network with its budget and caches, the
/// relevance rule, the scope with the `--seed` hosts), the seed entries, and
/// the channel the workers' early answers come back on.
pub(super) fn worker_context(
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
    net.set_doc_cache(state::load_doc_cache(&data.state), day_stamp(started_at));
    let mut scope = Sources::new(&config.sources).with_deny(&config.crawl.deny_hosts);
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
        partition: config.crawl.partition,
        today: started_at.date_naive(),
        // 50,000 URLs per sitemap (the protocol's maximum), 50 MB decoded.
        limits: Limits::default(),
        parses: worker::slots::ParseSlots::new(config.crawl.parse_concurrency),
        answered: Some(answered_tx),
        archive: config.crawl.archive,
        render: super::worker::render::Rendering::setup(config, &data.state)?,
    });
    Ok((ctx, seeds, answered_rx))
}

/// The `run_start` event and log line.
pub(super) fn announce(
    log: &mut EventLog,
    config: &Config,
    opts: &Options,
    run_id: &str,
    cutoff: &reach::Cutoff,
    seeds: usize,
    sink: &Sink,
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
        seen: sink.seen_len(),
        partition: c.partition,
        resume: opts.resume,
    }));
    tracing::info!(%run_id, seeds, seen = sink.seen_len(), cutoff = ?cutoff.latest(), per_host = cutoff.hosts.len(), partition = %c.partition, "crawl starting");
}

/// Queue what a previous run left: all of it with `--resume`; otherwise the
/// feed and sitemap entries it listed but could not fetch (so the
/// `--min-lastmod auto` watermark can move on without losing them).
pub(super) fn carry_over(engine: &mut Engine, data: &DataDir, resume: bool) -> anyhow::Result<()> {
    let leftover = state::load_frontier(&data.state, engine.partition())?;
    if leftover.bad_lines > 0 {
        tracing::warn!(
            bad_lines = leftover.bad_lines,
            "frontier.jsonl: unreadable lines skipped"
        );
    }
    let mut carried = 0;
    for mut entry in leftover.entries {
        let Some(u) = url::parse(&entry.url) else {
            continue;
        };
        // Work listed before the host's cut-off is the archive's backlog:
        // after the day's fresh items.
        let fresh_since = engine.fresh_since(&url::host_key(&u));
        if let Some(lm) = entry
            .lastmod
            .as_deref()
            .and_then(crate::date::parse_datetime)
            && lm.with_timezone(&Utc) < fresh_since
        {
            entry.backlog = true;
        }
        if (resume || entry.origin == Origin::Listed) && engine.enqueue(&u, entry) {
            carried += 1;
        }
    }
    if carried > 0 {
        tracing::info!(carried, "queue carried over from the previous run");
    }
    Ok(())
}

/// What other partitions found for this one (open scope), queued.
pub(super) fn read_inbox(engine: &mut Engine, data: &DataDir) -> anyhow::Result<Inbox> {
    let inbox = Inbox::read(&data.state, engine.partition())?;
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
        // A `scraper reextract` shard is no run: its URLs are another shard's.
        if history.finished(stem)
            || stem == run_id
            || stem.starts_with(crate::reextract::SHARD_PREFIX)
        {
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
