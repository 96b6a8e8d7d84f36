//! The crawl: set up a run from `config.yml` and the state in `data/`
//! (`setup.rs`), drive the [`engine::Engine`] loop, and save everything when
//! it stops (`save.rs`).

pub mod engine;
pub mod events;
pub mod handover;
mod interrupt;
mod outcome;
pub mod reach;
mod setup;
pub mod signals;
pub(crate) mod tally;
mod tasks;
pub mod worker;

use std::collections::BTreeMap;
use std::path::PathBuf;

use chrono::Utc;
use engine::{Engine, Start};
use events::EventLog;

use crate::config::Config;
use crate::record::{HostCounters, StopReason};
use crate::store::DataDir;
use crate::store::state::{self, RunHistory};

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
    /// No host could be reached (see [`reach`]): the one-line cause. Nothing
    /// was saved; the binary exits with 69.
    pub outage: Option<String>,
    pub stopped_by: StopReason,
    pub shard: Option<PathBuf>,
    /// Requests sent.
    pub fetched: u64,
    pub stored: u64,
    /// The per-host funnel (also in `last_run.json` unless an outage).
    pub hosts: BTreeMap<String, HostCounters>,
    /// What the browser did, when pages could be rendered (`crate::render`).
    pub render: Option<crate::render::Totals>,
}

/// The totals a running crawl reports to its progress display.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// Pages fetched (responses received).
    pub fetched: u64,
    /// Articles stored.
    pub stored: u64,
    /// URLs waiting in the frontier.
    pub queued: usize,
    /// Requests made, robots and feeds included (the `--max-pages` budget).
    pub requests: u64,
}

/// Where a running crawl shows its progress: the binary's bar or status
/// lines (`src/cli/progress.rs`). The engine reports as often as it likes; the
/// display decides when to draw.
pub trait Progress: Send {
    /// The current totals.
    fn update(&mut self, totals: Totals);
    /// The run is over: the last totals and what stopped it.
    fn finish(&mut self, stopped_by: StopReason);
}

/// `scraper crawl`: open the data folder and what earlier runs left, set
/// the run up, queue the carried-over, handed-over and seed URLs, run the
/// loop until a limit or a signal (showing its totals on `progress`), and
/// save.
pub async fn run(
    config: Config,
    opts: Options,
    progress: Box<dyn Progress>,
) -> anyhow::Result<RunEnd> {
    let data = DataDir::open(&opts.data)?;
    let started_at = run_clock()?;
    let run_id = state::new_run_id(started_at);
    let history = RunHistory::load(&data.state)?;
    // The watermark comes from the latest run that covered this partition's hosts.
    let last = history.latest_for(config.crawl.partition).cloned();
    let cutoff = setup::resolve_cutoff(&config, last.as_ref());
    let (sink, store) = setup::open_store(&data, &config, &history, &run_id, started_at)?;
    let mut log = EventLog::create(&data.state.join("crawl.log"));
    let (ctx, seeds, answers) = setup::worker_context(&config, &opts, &data, started_at)?;
    setup::announce(
        &mut log,
        &config,
        &opts,
        &run_id,
        &cutoff,
        seeds.len(),
        &sink,
    );
    let start = Start {
        run_id: run_id.clone(),
        started_at,
        cutoff,
        last,
        seeds,
        answers,
        progress,
    };
    let rendering = ctx.clone();
    let mut engine = Engine::new(config, ctx, sink, store, log, start);
    setup::carry_over(&mut engine, &data, opts.resume)?;
    let inbox = setup::read_inbox(&mut engine, &data)?;
    engine.queue_seeds();
    let stop = engine.run(interrupt::listen()).await;
    let mut end = engine
        .finish(&data, stop, started_at, &run_id, &inbox)
        .await?;
    if let Some(r) = &rendering.render {
        r.renderer.shutdown().await;
        end.render = Some(r.renderer.totals());
    }
    Ok(end)
}

/// The run's start: now, or the RFC 3339 time in `SCRAPER_NOW` (for tests
/// and benchmarks of multi-day behaviour on a simulated calendar: day
/// stamps, cut-offs, watermarks and listing rates follow it; politeness
/// timing never does, it runs on the monotonic clock).
fn run_clock() -> anyhow::Result<chrono::DateTime<Utc>> {
    match std::env::var("SCRAPER_NOW") {
        Ok(t) if !t.trim().is_empty() => chrono::DateTime::parse_from_rfc3339(t.trim())
            .map(|t| t.with_timezone(&Utc))
            .map_err(|e| {
                anyhow::anyhow!("SCRAPER_NOW: expected an RFC 3339 time, got `{t}` ({e})")
            }),
        _ => Ok(Utc::now()),
    }
}
