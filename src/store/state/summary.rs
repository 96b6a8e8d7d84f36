//! `state/last_run.json`: the last run's summary, per-host counters, and the
//! watermark `--min-lastmod auto` starts from.

use std::collections::BTreeMap;
use std::path::Path;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{LAST_RUN_FILE, write_atomic};
use crate::record::{HostCounters, StopReason};
use crate::store::StoreError;

/// What one run did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub run_id: String,
    pub started_at: DateTime<Utc>,
    #[serde(default)]
    pub finished_at: Option<DateTime<Utc>>,
    /// What ended the run (`max_pages`, `max_hits`, `max_duration`,
    /// `interrupted`, `exhausted`); set before the file is written.
    #[serde(default)]
    pub stopped_by: Option<StopReason>,
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
    /// URLs of unreachable hosts kept in the queue for the next run.
    #[serde(default)]
    pub kept_for_next_run: u64,
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
    /// How it answered (the health record's answer key).
    pub answer: String,
    /// Where it points now, when it redirects.
    pub moved_to: Option<String>,
}

impl RunSummary {
    /// A summary for a run starting now, counters at zero.
    pub fn new(run_id: &str, started_at: DateTime<Utc>) -> RunSummary {
        RunSummary {
            run_id: run_id.to_string(),
            started_at,
            finished_at: None,
            stopped_by: None,
            interrupted: false,
            pages_fetched: 0,
            articles_stored: 0,
            ids: None,
            last_success_started_at: None,
            host_watermarks: BTreeMap::new(),
            hosts: BTreeMap::new(),
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
    pub fn set_watermark(&mut self, previous: Option<&RunSummary>, succeeded: bool) {
        self.last_success_started_at = if succeeded {
            Some(self.started_at)
        } else {
            previous.and_then(|p| p.last_success_started_at)
        };
    }

    /// The counters of `host`, created on first use.
    pub fn host(&mut self, host: &str) -> &mut HostCounters {
        self.hosts.entry(host.to_string()).or_default()
    }

    /// Read `state/last_run.json`; `None` before the first run.
    pub fn load(state_dir: &Path) -> Result<Option<RunSummary>, StoreError> {
        let path = state_dir.join(LAST_RUN_FILE);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(StoreError::io(&path, e)),
        };
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| StoreError::Corrupt {
                path,
                message: format!("not a run summary ({e}); delete it to start afresh"),
            })
    }

    /// Write `state/last_run.json` atomically (pretty JSON, stable key order).
    pub fn save(&self, state_dir: &Path) -> Result<(), StoreError> {
        // Invariant: strings, numbers and maps with string keys always serialise.
        let mut text = serde_json::to_vec_pretty(self).expect("a RunSummary always serialises");
        text.push(b'\n');
        write_atomic(&state_dir.join(LAST_RUN_FILE), &text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn round_trip_and_watermark() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(RunSummary::load(dir.path()).unwrap(), None);
        let mut ok = RunSummary::new("r1", at("2026-11-28T06:30:00Z"));
        ok.set_watermark(None, true);
        ok.host("ex.com").fetched = 3;
        ok.host("ex.com").errors.insert("timeout".into(), 1);
        ok.stopped_by = Some(StopReason::MaxHits);
        ok.shard = Some("r1.jsonl.zst".into());
        ok.save(dir.path()).unwrap();
        let back = RunSummary::load(dir.path()).unwrap().unwrap();
        assert_eq!(back, ok);

        let mut cut = RunSummary::new("r2", at("2026-11-29T06:30:00Z"));
        cut.interrupted = true;
        cut.set_watermark(Some(&back), false);
        assert_eq!(
            cut.last_success_started_at,
            Some(at("2026-11-28T06:30:00Z"))
        );
        let mut next = RunSummary::new("r3", at("2026-11-30T06:30:00Z"));
        next.set_watermark(Some(&cut), true);
        assert_eq!(next.last_success_started_at, Some(next.started_at));
    }

    #[test]
    fn old_files_with_fewer_fields_load() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(LAST_RUN_FILE),
            r#"{"run_id":"r","started_at":"2026-01-01T00:00:00Z","hosts":{"a":{"fetched":2}}}"#,
        )
        .unwrap();
        let s = RunSummary::load(dir.path()).unwrap().unwrap();
        assert_eq!(s.hosts["a"].fetched, 2);
        std::fs::write(dir.path().join(LAST_RUN_FILE), "{").unwrap();
        let err = RunSummary::load(dir.path()).unwrap_err();
        assert!(err.to_string().contains("last_run.json"), "{err}");
    }
}
