//! What `stats` shows about a run, read from `data/state/runs/*.json` and
//! `data/state/last_run.json` through the crawl's own type
//! ([`state::RunSummary`], with [`crate::record::HostCounters`] per host), so
//! a field renamed on one side is a compile error on the other. Files of
//! older versions read through the same type: fields they lack take their
//! defaults, keys they have and this version does not know are ignored, and
//! a stop reason this version does not know is kept as text
//! ([`Stopped::Unknown`]).

use std::path::Path;

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;

use crate::partition::Partition;
use crate::record::{HostCounters, Stopped};
use crate::store::state;

/// Hosts listed in the summary, busiest first.
pub(crate) const TOP_HOSTS: usize = 10;

/// What `stats` shows about one run (also its `--json` shape).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunSummary {
    pub run_id: String,
    /// `i/N` for a run of one partition (`--partition`); absent: every host.
    pub partition: Option<Partition>,
    pub started_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    /// `finished_at - started_at`.
    pub duration_s: Option<f64>,
    pub stopped_by: Option<Stopped>,
    pub interrupted: bool,
    pub pages_fetched: u64,
    pub articles_stored: u64,
    pub queue_left: u64,
    pub shard: Option<String>,
    /// Hosts in the run.
    pub hosts: u64,
    /// Up to [`TOP_HOSTS`], by stored articles, then by pages fetched.
    pub top_hosts: Vec<HostLine>,
}

/// One host's funnel, flattened.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct HostLine {
    pub host: String,
    pub discovered: u64,
    pub fetched: u64,
    pub articles: u64,
    pub stored: u64,
    /// Sum over error classes.
    pub errors: u64,
    pub bytes: u64,
    /// Time spent waiting for the host's politeness gap
    /// (`politeness_wait_ms` in `last_run.json`).
    pub wait_ms: u64,
}

impl RunSummary {
    /// `state/last_run.json`; `None` before the first run; the reason when
    /// the file is there but is not a run summary.
    pub(crate) fn load_last(state_dir: &Path) -> Result<Option<RunSummary>, String> {
        state::RunSummary::load(state_dir)
            .map(|run| run.as_ref().map(RunSummary::from))
            .map_err(|e| e.to_string())
    }

    /// `started_at` as the file writes it (RFC 3339, UTC, `Z`).
    pub fn started(&self) -> String {
        self.started_at.to_rfc3339_opts(SecondsFormat::AutoSi, true)
    }
}

impl From<&state::RunSummary> for RunSummary {
    fn from(r: &state::RunSummary) -> RunSummary {
        let mut hosts: Vec<HostLine> = r
            .hosts
            .iter()
            .map(|(host, c)| HostLine::new(host, c))
            .collect();
        hosts.sort_by(|a, b| {
            (b.stored, b.fetched)
                .cmp(&(a.stored, a.fetched))
                .then_with(|| a.host.cmp(&b.host))
        });
        let count = hosts.len() as u64;
        hosts.truncate(TOP_HOSTS);
        let header = &r.run;
        RunSummary {
            run_id: header.run_id.clone(),
            partition: r.partition,
            started_at: header.started_at,
            finished_at: header.finished_at,
            duration_s: header
                .finished_at
                .map(|end| (end - header.started_at).num_milliseconds() as f64 / 1000.0),
            stopped_by: header.stopped_by.clone(),
            interrupted: r.interrupted,
            pages_fetched: r.pages_fetched,
            articles_stored: r.articles_stored,
            queue_left: r.queue_left,
            shard: r.shard.clone(),
            hosts: count,
            top_hosts: hosts,
        }
    }
}

/// The latest run of each partition (a run without a partition counts as
/// `0/1`), in partition order, from the run history the crawl itself reads
/// ([`state::RunHistory`]: `state/runs/`, plus a `last_run.json` of an older
/// version); empty when there is none or it cannot be listed. What `stats`
/// shows when a crawl is split.
pub(crate) fn latest_per_partition(state_dir: &Path) -> Vec<RunSummary> {
    match state::RunHistory::load(state_dir) {
        Ok(h) => h
            .latest_per_partition()
            .into_iter()
            .map(RunSummary::from)
            .collect(),
        Err(e) => {
            tracing::warn!(error = %e, "partition runs not shown");
            Vec::new()
        }
    }
}

/// What one run cost and left, summed over its hosts: the everyday run's
/// figures, shown for the last runs so the backlog can be seen shrinking.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RunCost {
    pub run_id: String,
    pub requests: u64,
    pub listing_requests: u64,
    pub page_requests: u64,
    /// Listings not asked: unchanged by their index, or not due by their rate.
    pub listings_skipped: u64,
    pub not_modified: u64,
    pub stored: u64,
    pub updated: u64,
    /// The queue left for the next run.
    pub backlog: u64,
}

/// The last `n` runs' costs, oldest first (`state/runs/`).
pub(crate) fn recent_costs(state_dir: &Path, n: usize) -> Vec<RunCost> {
    let Ok(history) = state::RunHistory::load(state_dir) else {
        return Vec::new();
    };
    let runs = history.runs();
    runs[runs.len().saturating_sub(n)..]
        .iter()
        .map(|r| {
            let sum = |f: fn(&HostCounters) -> u64| r.hosts.values().map(f).sum::<u64>();
            RunCost {
                run_id: r.run.run_id.clone(),
                requests: r.pages_fetched,
                listing_requests: sum(|h| h.listing_requests),
                page_requests: sum(|h| h.page_requests),
                listings_skipped: sum(|h| h.listings_unchanged + h.listings_not_due),
                not_modified: sum(|h| h.not_modified),
                stored: r.articles_stored,
                updated: sum(|h| h.updated),
                backlog: r.queue_left,
            }
        })
        .collect()
}

impl HostLine {
    fn new(host: &str, c: &HostCounters) -> HostLine {
        HostLine {
            host: host.to_string(),
            discovered: c.discovered,
            fetched: c.fetched,
            articles: c.articles,
            stored: c.stored,
            errors: c.errors.values().sum(),
            bytes: c.bytes,
            wait_ms: c.politeness_wait_ms,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Summaries as older versions wrote them, read through today's type.
    fn read(text: &str) -> RunSummary {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("last_run.json"), text).unwrap();
        RunSummary::load_last(dir.path()).unwrap().expect(text)
    }

    /// The first version (3f5de7b): `stopped_by` a free string, per-host
    /// extras (`not_modified`, `disallowed`) and top-level extras
    /// (`queue_left`, `shard`) flattened in, no `partition`.
    #[test]
    fn reads_the_first_format() {
        let s = read(
            r#"{"run_id":"20261129T063000Z","started_at":"2026-11-29T06:30:00Z",
                "finished_at":"2026-11-29T07:10:30.500Z","stopped_by":"no_work",
                "interrupted":false,"pages_fetched":4000,"articles_stored":12,
                "ids":[1,13],"last_success_started_at":"2026-11-29T06:30:00Z",
                "hosts":{
                  "a.com":{"discovered":20,"fetched":10,"articles":2,"relevant":1,
                           "errors":{"5xx":2,"timeout":1},"bytes":900,
                           "politeness_wait_ms":7,"not_modified":3,"disallowed":1,"stored":1},
                  "b.com":{"fetched":50,"stored":5},
                  "c.com":{"fetched":70}},
                "queue_left":9,"shard":"20261129T063000Z.jsonl.zst","note":{"by":"hand"}}"#,
        );
        assert_eq!(s.duration_s, Some(2430.5));
        assert_eq!(s.stopped_by, Some(Stopped::Unknown("no_work".into())));
        assert_eq!(
            (s.pages_fetched, s.articles_stored, s.queue_left),
            (4000, 12, 9)
        );
        assert_eq!(s.partition, None);
        assert_eq!(s.hosts, 3);
        let order: Vec<_> = s.top_hosts.iter().map(|h| h.host.as_str()).collect();
        assert_eq!(order, ["b.com", "a.com", "c.com"]);
        let a = &s.top_hosts[1];
        assert_eq!(
            (a.discovered, a.errors, a.wait_ms, a.bytes),
            (20, 3, 7, 900)
        );
    }

    /// Only the keys every version wrote; a host counted under the name
    /// early readers used for the gap (`wait_ms`); no `finished_at`.
    #[test]
    fn reads_a_bare_summary() {
        let s = read(
            r#"{"run_id":"r1","started_at":"2026-11-29T06:30:00Z","stopped_by":"",
                "hosts":{"a.com":{"fetched":3,"wait_ms":250}}}"#,
        );
        assert_eq!(
            (s.run_id.as_str(), s.started()),
            ("r1", "2026-11-29T06:30:00Z".into())
        );
        assert_eq!((s.finished_at, s.duration_s), (None, None));
        assert_eq!(s.stopped_by, Some(Stopped::Unknown(String::new())));
        assert_eq!((s.pages_fetched, s.interrupted), (0, false));
        assert_eq!((s.top_hosts[0].fetched, s.top_hosts[0].wait_ms), (3, 250));
    }

    /// A file that is not a run summary is not shown, and `stats` says why
    /// (naming the file) instead of failing; a missing file is no run yet.
    #[test]
    fn no_summary_no_line() {
        let dir = tempfile::tempdir().unwrap();
        let st = dir.path().join("state");
        std::fs::create_dir_all(&st).unwrap();
        assert_eq!(RunSummary::load_last(&st), Ok(None));
        for bad in [
            "[1, 2]",
            "{}",
            "{",
            r#"{"run_id":"r","started_at":"yesterday"}"#,
        ] {
            std::fs::write(st.join("last_run.json"), bad).unwrap();
            let err = RunSummary::load_last(&st).unwrap_err();
            assert!(err.contains("last_run.json"), "{bad}: {err}");
            let s = crate::report::stats::collect(dir.path()).unwrap();
            assert_eq!(s.last_run, None);
            assert_eq!(s.last_run_error.as_ref(), Some(&err));
        }
    }
}
