//! [`RunHeader`]: the keys every per-run file starts with (the run summary
//! in `state/runs/`, the health record in `state/health/`): which run, when
//! it started and ended, and what stopped it; [`RunSummary`]: what one run
//! did (`state/runs/<run-id>.json`, read and written by `store::state`).

use std::collections::BTreeMap;
use std::fmt;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::Answer;
use super::{HostCounters, StopReason};
use crate::partition::Partition;

/// Which run, when, and why it stopped. Flattened into the files: its keys
/// stand first, at the top level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunHeader {
    pub run_id: String,
    pub started_at: DateTime<Utc>,
    #[serde(default)]
    pub finished_at: Option<DateTime<Utc>>,
    /// What ended the run (`max_pages`, `max_hits`, `max_duration`,
    /// `interrupted`, `exhausted`); `None` until it ends.
    #[serde(default)]
    pub stopped_by: Option<Stopped>,
}

/// `stopped_by` as a file holds it: a [`StopReason`] this version knows, or
/// the name a newer version (or a hand edit) wrote, kept as text so a reader
/// shows it and a rewrite keeps it. Writers only ever set `Known`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Stopped {
    Known(StopReason),
    Unknown(String),
}

impl Stopped {
    /// The reason, when this version knows it.
    pub fn known(&self) -> Option<StopReason> {
        match self {
            Stopped::Known(r) => Some(*r),
            Stopped::Unknown(_) => None,
        }
    }
}

impl From<StopReason> for Stopped {
    fn from(r: StopReason) -> Stopped {
        Stopped::Known(r)
    }
}

impl fmt::Display for Stopped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stopped::Known(r) => r.fmt(f),
            Stopped::Unknown(s) => f.write_str(s),
        }
    }
}

impl RunHeader {
    /// A run starting at `started_at`, not finished yet.
    pub fn new(run_id: &str, started_at: DateTime<Utc>) -> RunHeader {
        RunHeader {
            run_id: run_id.to_string(),
            started_at,
            finished_at: None,
            stopped_by: None,
        }
    }
}

/// What one run did. Field order is the files' key order ([`KEYS`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// `run_id`, `started_at`, `finished_at`, `stopped_by` (set before the
    /// file is written).
    #[serde(flatten)]
    pub run: RunHeader,
    /// Ended by Ctrl-C / SIGTERM.
    #[serde(default)]
    pub interrupted: bool,
    /// Requests made (the fetch budget's unit).
    #[serde(default)]
    pub pages_fetched: u64,
    #[serde(default)]
    pub articles_stored: u64,
    /// Ids this run handed out: `[first, next)`; equal when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ids: Option<[i64; 2]>,
    /// Start of the latest run that succeeded (this one or an earlier one):
    /// `--min-lastmod auto` counts back from here. An interrupted run keeps
    /// the previous value, so its unfinished discoveries are not skipped.
    #[serde(default)]
    pub last_success_started_at: Option<DateTime<Utc>>,
    /// Per host: the start of the latest run that read it in full as a
    /// source (`null`: never). `--min-lastmod auto` takes a host's own entry,
    /// and `last_success_started_at` for hosts without one. A run carries the
    /// entries of hosts it did not touch over unchanged (see `crawl::outage`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub host_watermarks: BTreeMap<String, Option<DateTime<Utc>>>,
    #[serde(default)]
    pub hosts: BTreeMap<String, HostCounters>,
    /// Who handed what to other partitions (open scope).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handover: Option<HandoverCounts>,
    /// The id blocks this run handed out, `[first, next)` each.
    #[serde(default)]
    pub(crate) id_blocks: Vec<[i64; 2]>,
    /// URLs of unreachable hosts kept in the queue for the next run.
    #[serde(default)]
    pub(crate) kept_for_next_run: u64,
    /// The partition the run crawled (`i/N`); absent: the whole crawl.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<Partition>,
    /// URLs left in the queue (saved in `frontier.jsonl` for the next run).
    #[serde(default)]
    pub queue_left: u64,
    /// Seeds that failed or now redirect (absent when none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seed_problems: Vec<SeedProblem>,
    /// This run's shard file name; `null` when nothing was stored.
    #[serde(default)]
    pub shard: Option<String>,
    /// Sources that could not be read today (their cut-offs stay).
    #[serde(default)]
    pub sources_down: Vec<String>,
    /// Feeds and sitemaps queued but never read in this run (they hold the
    /// watermark back).
    #[serde(default)]
    pub unread_listings: u64,
}

/// A configured seed that failed or now redirects: fix `config.yml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeedProblem {
    /// The source (host) it belongs to.
    pub source: String,
    pub url: String,
    /// How it answered (as in the health records).
    pub answer: Answer,
    /// Where it points now, when it redirects.
    pub moved_to: Option<String>,
}

/// What a run handed to other partitions (open scope), as its summary shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HandoverCounts {
    pub seeds_skipped: u64,
    pub dropped: u64,
    pub handed_over: u64,
    pub inbox: usize,
}

impl RunSummary {
    /// A summary for a run starting now, counters at zero.
    pub fn new(run_id: &str, started_at: DateTime<Utc>) -> RunSummary {
        RunSummary {
            run: RunHeader::new(run_id, started_at),
            interrupted: false,
            pages_fetched: 0,
            articles_stored: 0,
            ids: None,
            last_success_started_at: None,
            host_watermarks: BTreeMap::new(),
            hosts: BTreeMap::new(),
            handover: None,
            id_blocks: Vec::new(),
            partition: None,
            kept_for_next_run: 0,
            queue_left: 0,
            seed_problems: Vec::new(),
            shard: None,
            sources_down: Vec::new(),
            unread_listings: 0,
        }
    }

    /// Set the watermark: this run's start when it `succeeded`, otherwise the
    /// previous run's watermark. The engine decides what success is (at least:
    /// not interrupted, and its unfinished queue saved for the next run).
    pub(crate) fn set_watermark(&mut self, previous: Option<&RunSummary>, succeeded: bool) {
        self.last_success_started_at = if succeeded {
            Some(self.run.started_at)
        } else {
            previous.and_then(|p| p.last_success_started_at)
        };
    }

    /// The counters of `host`, created on first use.
    pub fn host(&mut self, host: &str) -> &mut HostCounters {
        self.hosts.entry(host.to_string()).or_default()
    }

    /// The partition the run crawled (`partition` key; runs without one crawled everything).
    pub fn partition(&self) -> Partition {
        self.partition.unwrap_or(Partition::WHOLE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Known names read as the enum and write back the same; a name this
    /// version does not know is kept as text, not an error.
    #[test]
    fn stop_reasons_known_and_unknown() {
        let read = |s: &str| serde_json::from_str::<Stopped>(s).unwrap();
        assert_eq!(read(r#""max_hits""#), Stopped::Known(StopReason::MaxHits));
        assert_eq!(read(r#""max_hits""#).known(), Some(StopReason::MaxHits));
        let later = read(r#""disk_full""#);
        assert_eq!(later, Stopped::Unknown("disk_full".into()));
        assert_eq!(
            (later.known(), later.to_string()),
            (None, "disk_full".into())
        );
        for s in [r#""exhausted""#, r#""disk_full""#] {
            assert_eq!(serde_json::to_string(&read(s)).unwrap(), s);
        }
        assert!(serde_json::from_str::<Stopped>("3").is_err());
    }
}
