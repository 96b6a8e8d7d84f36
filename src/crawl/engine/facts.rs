//! The run's facts: what the run is (its configuration, its id, its day,
//! when it started, the extractor version its records carry) and the
//! cut-offs it works under.
//! Set once by [`Engine::new`](super::Engine::new) and never changed: every
//! part of the engine reads them, none writes them.

use std::time::{Duration, Instant};

use chrono::{DateTime, NaiveDate, Utc};

use crate::config::Config;
use crate::crawl::reach::Cutoff;
use crate::store::seen::day_stamp;
use crate::store::state::RunSummary;

/// One run's facts (immutable: fields private, read through methods).
pub(super) struct Facts {
    /// The configuration the run was started with.
    config: Config,
    run_id: String,
    /// Per host: listing entries older than its cut-off are skipped, links
    /// on its older pages not followed.
    cutoff: Cutoff,
    /// `crawl.lastmod_overlap`: how far before its watermark a host's
    /// listed URLs still count as fresh.
    lastmod_overlap: Duration,
    /// The previous run's summary.
    last: Option<RunSummary>,
    /// The run's start on the calendar (see `crawl::run_clock`), its date
    /// and its day stamp.
    started_at: DateTime<Utc>,
    today: NaiveDate,
    day: u32,
    /// The run's start on the monotonic clock (politeness timing).
    started: Instant,
    /// `extractor_version` of the records this run stores.
    extractor_version: String,
}

impl Facts {
    pub(super) fn new(
        config: Config,
        run_id: String,
        started_at: DateTime<Utc>,
        cutoff: Cutoff,
        last: Option<RunSummary>,
    ) -> Facts {
        Facts {
            lastmod_overlap: config.crawl.lastmod_overlap.0,
            extractor_version: crate::extract::version::version(&config.keywords),
            config,
            run_id,
            cutoff,
            last,
            day: day_stamp(started_at),
            today: started_at.date_naive(),
            started_at,
            started: Instant::now(),
        }
    }

    pub(super) fn config(&self) -> &Config {
        &self.config
    }

    pub(super) fn run_id(&self) -> &str {
        &self.run_id
    }

    pub(super) fn cutoff(&self) -> &Cutoff {
        &self.cutoff
    }

    pub(super) fn last(&self) -> Option<&RunSummary> {
        self.last.as_ref()
    }

    pub(super) fn today(&self) -> NaiveDate {
        self.today
    }

    /// Today's day stamp (`store::seen::day_stamp`).
    pub(super) fn day(&self) -> u32 {
        self.day
    }

    pub(super) fn started(&self) -> Instant {
        self.started
    }

    /// Time since the run started (the frontier's clock).
    pub(super) fn now(&self) -> Duration {
        self.started.elapsed()
    }

    /// `t` on the frontier's clock.
    pub(super) fn since_start(&self, t: Instant) -> Duration {
        t.saturating_duration_since(self.started)
    }

    pub(super) fn extractor_version(&self) -> &str {
        &self.extractor_version
    }

    /// Since when a listed URL of `host` counts as fresh (the day's new
    /// items, served before the archive's backlog): the host's watermark
    /// (minus the overlap), or on its first run the overlap before now.
    pub(super) fn fresh_since(&self, host: &str) -> DateTime<Utc> {
        self.cutoff.watermark(host).unwrap_or_else(|| {
            self.started_at - chrono::Duration::from_std(self.lastmod_overlap).unwrap_or_default()
        })
    }

    /// A daily run for `host`: `--min-lastmod auto` and the host was read
    /// successfully before.
    pub(super) fn daily(&self, host: &str) -> bool {
        self.cutoff.overlap.is_some() && self.cutoff.watermark(host).is_some()
    }
}
