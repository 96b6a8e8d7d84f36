//! Run summaries, read from `data/state/runs/*.json` and
//! `data/state/last_run.json` as loose JSON:
//! the engine owns that file's type, so every field here is optional and a
//! missing or renamed field shows as absent rather than failing `stats`.

use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use crate::partition::Partition;

/// Hosts listed in the summary, busiest first.
pub const TOP_HOSTS: usize = 10;

/// What `stats` shows about the last run.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RunSummary {
    pub run_id: Option<String>,
    /// `i/N` for a run of one partition (`--partition`); absent: every host.
    pub partition: Option<Partition>,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    /// `finished_at - started_at`, when both parse as RFC 3339.
    pub duration_s: Option<f64>,
    pub stopped_by: Option<String>,
    pub interrupted: Option<bool>,
    pub pages_fetched: Option<u64>,
    pub articles_stored: Option<u64>,
    pub queue_left: Option<u64>,
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
    /// (`politeness_wait_ms` in `last_run.json`; `wait_ms` accepted too).
    pub wait_ms: u64,
}

impl RunSummary {
    /// `None` when the file is missing or is not a JSON object.
    pub fn load(path: &Path) -> Option<RunSummary> {
        let bytes = std::fs::read(path).ok()?;
        let v: Value = serde_json::from_slice(&bytes).ok()?;
        RunSummary::from_value(&v)
    }

    pub fn from_value(v: &Value) -> Option<RunSummary> {
        let obj = v.as_object()?;
        let s = |k: &str| obj.get(k).and_then(Value::as_str).map(str::to_string);
        let n = |k: &str| obj.get(k).and_then(Value::as_u64);
        let mut hosts: Vec<HostLine> = obj
            .get("hosts")
            .and_then(Value::as_object)
            .map(|m| m.iter().map(|(h, v)| HostLine::from_value(h, v)).collect())
            .unwrap_or_default();
        hosts.sort_by(|a, b| {
            (b.stored, b.fetched)
                .cmp(&(a.stored, a.fetched))
                .then_with(|| a.host.cmp(&b.host))
        });
        let count = hosts.len() as u64;
        hosts.truncate(TOP_HOSTS);
        let started_at = s("started_at");
        let finished_at = s("finished_at");
        Some(RunSummary {
            run_id: s("run_id"),
            partition: s("partition").and_then(|p| p.parse().ok()),
            duration_s: seconds_between(started_at.as_deref(), finished_at.as_deref()),
            started_at,
            finished_at,
            stopped_by: s("stopped_by"),
            interrupted: obj.get("interrupted").and_then(Value::as_bool),
            pages_fetched: n("pages_fetched"),
            articles_stored: n("articles_stored"),
            queue_left: n("queue_left"),
            shard: s("shard"),
            hosts: count,
            top_hosts: hosts,
        })
    }
}

/// The latest run of each partition in `state/runs/` (by run id; a run
/// without a partition counts as `0/1`), in partition order; empty when the
/// folder is missing. What `stats` shows when a crawl is split.
pub fn latest_per_partition(runs_dir: &Path) -> Vec<RunSummary> {
    let Ok(listing) = std::fs::read_dir(runs_dir) else {
        return Vec::new();
    };
    let mut by: std::collections::BTreeMap<(u32, u32), RunSummary> = Default::default();
    for path in listing.filter_map(|e| e.ok().map(|e| e.path())) {
        if path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let Some(r) = RunSummary::load(&path) else {
            continue;
        };
        let p = r.partition.unwrap_or(Partition::WHOLE);
        let key = (p.count(), p.index());
        let newer = by
            .get(&key)
            .is_none_or(|old| old.run_id.as_deref() < r.run_id.as_deref());
        if newer {
            by.insert(key, r);
        }
    }
    by.into_values().collect()
}

impl HostLine {
    fn from_value(host: &str, v: &Value) -> HostLine {
        let n = |k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
        let errors = match v.get("errors") {
            Some(Value::Object(m)) => m.values().filter_map(Value::as_u64).sum(),
            Some(e) => e.as_u64().unwrap_or(0),
            None => 0,
        };
        HostLine {
            host: host.to_string(),
            discovered: n("discovered"),
            fetched: n("fetched"),
            articles: n("articles"),
            stored: n("stored"),
            errors,
            bytes: n("bytes"),
            wait_ms: v
                .get("politeness_wait_ms")
                .or_else(|| v.get("wait_ms"))
                .and_then(Value::as_u64)
                .unwrap_or(0),
        }
    }
}

fn seconds_between(start: Option<&str>, end: Option<&str>) -> Option<f64> {
    let parse = |t: &str| chrono::DateTime::parse_from_rfc3339(t).ok();
    let (a, b) = (parse(start?)?, parse(end?)?);
    Some((b - a).num_milliseconds() as f64 / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tolerates_missing_fields_and_ranks_hosts() {
        let v = json!({
            "run_id": "r1",
            "started_at": "2026-11-29T06:30:00Z",
            "finished_at": "2026-11-29T07:10:30.500Z",
            "stopped_by": "max_duration",
            "pages_fetched": 4000,
            "hosts": {
                "a.com": {"fetched": 10, "stored": 1, "errors": {"5xx": 2, "timeout": 1}, "politeness_wait_ms": 7},
                "b.com": {"fetched": 50, "stored": 5},
                "c.com": {"fetched": 70},
                "d.com": "garbage"
            }
        });
        let s = RunSummary::from_value(&v).unwrap();
        assert_eq!(s.duration_s, Some(2430.5));
        assert_eq!(s.articles_stored, None);
        assert_eq!(s.hosts, 4);
        let order: Vec<_> = s.top_hosts.iter().map(|h| h.host.as_str()).collect();
        assert_eq!(order, ["b.com", "a.com", "c.com", "d.com"]);
        assert_eq!((s.top_hosts[1].errors, s.top_hosts[1].wait_ms), (3, 7));
        assert!(RunSummary::from_value(&json!([1, 2])).is_none());
        assert_eq!(
            RunSummary::from_value(&json!({})).unwrap(),
            RunSummary::default()
        );
    }
}

#[cfg(test)]
mod pinned {
    use chrono::{DateTime, Utc};

    use crate::record::StopReason;
    use crate::report::{stats, text};
    use crate::store::state;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    /// A summary as this version's crawl writes it.
    fn written(
        id: &str,
        start: &str,
        end: &str,
        partition: &str,
        stored: u64,
    ) -> state::RunSummary {
        let mut s = state::RunSummary::new(id, at(start));
        s.run.finished_at = Some(at(end));
        s.run.stopped_by = Some(StopReason::MaxDuration);
        s.pages_fetched = 1234;
        s.articles_stored = stored;
        s.queue_left = 17;
        s.partition = Some(partition.parse().unwrap());
        s.shard = Some(format!("{id}.jsonl.zst"));
        for (i, host) in ["a.test", "b.test", "c.test"].iter().enumerate() {
            let h = s.host(host);
            h.discovered = 10 * i as u64 + 3;
            h.fetched = 5 * i as u64 + 2;
            h.articles = i as u64;
            h.stored = stored.min(i as u64);
            h.bytes = 4096 * i as u64;
            h.politeness_wait_ms = 1500 * i as u64;
            h.errors.insert("timeout".into(), i as u64);
            h.errors.insert("4xx".into(), 1);
        }
        s
    }

    /// `scraper stats` shows the run files of this version as it always has:
    /// the text section and the `--json` fields, byte for byte.
    #[test]
    fn stats_output_on_current_files_is_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let st = dir.path().join("state");
        written(
            "20261128T063000Z-aaaa",
            "2026-11-28T06:30:00Z",
            "2026-11-28T07:00:00.250Z",
            "0/2",
            2,
        )
        .save(&st)
        .unwrap();
        written(
            "20261128T063001Z-bbbb",
            "2026-11-28T06:30:01Z",
            "2026-11-28T07:05:00Z",
            "1/2",
            1,
        )
        .save(&st)
        .unwrap();
        let s = stats::collect(dir.path()).unwrap();
        let json = serde_json::to_string_pretty(&(&s.last_run, &s.partitions)).unwrap();
        let out = text::render(&s);
        let from = out.find("\nLast run").unwrap();
        let to = out.find("\nOn disk").unwrap();
        let section = &out[from..to];
        assert_eq!(json, JSON);
        assert_eq!(section, TEXT);
    }

    const JSON: &str = r#"[
  {
    "run_id": "20261128T063001Z-bbbb",
    "partition": "1/2",
    "started_at": "2026-11-28T06:30:01Z",
    "finished_at": "2026-11-28T07:05:00Z",
    "duration_s": 2099.0,
    "stopped_by": "max_duration",
    "interrupted": false,
    "pages_fetched": 1234,
    "articles_stored": 1,
    "queue_left": 17,
    "shard": "20261128T063001Z-bbbb.jsonl.zst",
    "hosts": 3,
    "top_hosts": [
      {
        "host": "c.test",
        "discovered": 23,
        "fetched": 12,
        "articles": 2,
        "stored": 1,
        "errors": 3,
        "bytes": 8192,
        "wait_ms": 3000
      },
      {
        "host": "b.test",
        "discovered": 13,
        "fetched": 7,
        "articles": 1,
        "stored": 1,
        "errors": 2,
        "bytes": 4096,
        "wait_ms": 1500
      },
      {
        "host": "a.test",
        "discovered": 3,
        "fetched": 2,
        "articles": 0,
        "stored": 0,
        "errors": 1,
        "bytes": 0,
        "wait_ms": 0
      }
    ]
  },
  [
    {
      "run_id": "20261128T063000Z-aaaa",
      "partition": "0/2",
      "started_at": "2026-11-28T06:30:00Z",
      "finished_at": "2026-11-28T07:00:00.250Z",
      "duration_s": 1800.25,
      "stopped_by": "max_duration",
      "interrupted": false,
      "pages_fetched": 1234,
      "articles_stored": 2,
      "queue_left": 17,
      "shard": "20261128T063000Z-aaaa.jsonl.zst",
      "hosts": 3,
      "top_hosts": [
        {
          "host": "c.test",
          "discovered": 23,
          "fetched": 12,
          "articles": 2,
          "stored": 2,
          "errors": 3,
          "bytes": 8192,
          "wait_ms": 3000
        },
        {
          "host": "b.test",
          "discovered": 13,
          "fetched": 7,
          "articles": 1,
          "stored": 1,
          "errors": 2,
          "bytes": 4096,
          "wait_ms": 1500
        },
        {
          "host": "a.test",
          "discovered": 3,
          "fetched": 2,
          "articles": 0,
          "stored": 0,
          "errors": 1,
          "bytes": 0,
          "wait_ms": 0
        }
      ]
    },
    {
      "run_id": "20261128T063001Z-bbbb",
      "partition": "1/2",
      "started_at": "2026-11-28T06:30:01Z",
      "finished_at": "2026-11-28T07:05:00Z",
      "duration_s": 2099.0,
      "stopped_by": "max_duration",
      "interrupted": false,
      "pages_fetched": 1234,
      "articles_stored": 1,
      "queue_left": 17,
      "shard": "20261128T063001Z-bbbb.jsonl.zst",
      "hosts": 3,
      "top_hosts": [
        {
          "host": "c.test",
          "discovered": 23,
          "fetched": 12,
          "articles": 2,
          "stored": 1,
          "errors": 3,
          "bytes": 8192,
          "wait_ms": 3000
        },
        {
          "host": "b.test",
          "discovered": 13,
          "fetched": 7,
          "articles": 1,
          "stored": 1,
          "errors": 2,
          "bytes": 4096,
          "wait_ms": 1500
        },
        {
          "host": "a.test",
          "discovered": 3,
          "fetched": 2,
          "articles": 0,
          "stored": 0,
          "errors": 1,
          "bytes": 0,
          "wait_ms": 0
        }
      ]
    }
  ]
]"#;
    const TEXT: &str = r#"
Last run
  20261128T063001Z-bbbb  started 2026-11-28T06:30:01Z  took 34m59s  stopped by max_duration
  pages fetched 1,234, articles stored 1, queue left 17, 3 hosts
  host    fetched articles   stored  errors      bytes   waited
  c.test       12        2        1       3    8.0 KiB       3s
  b.test        7        1        1       2    4.0 KiB       1s
  a.test        2        0        0       1        0 B       0s

Latest run of each partition
  partition 0/2
  20261128T063000Z-aaaa  started 2026-11-28T06:30:00Z  took 30m00s  stopped by max_duration
  pages fetched 1,234, articles stored 2, queue left 17, 3 hosts
  host    fetched articles   stored  errors      bytes   waited
  c.test       12        2        2       3    8.0 KiB       3s
  b.test        7        1        1       2    4.0 KiB       1s
  a.test        2        0        0       1        0 B       0s
  partition 1/2
  20261128T063001Z-bbbb  started 2026-11-28T06:30:01Z  took 34m59s  stopped by max_duration
  pages fetched 1,234, articles stored 1, queue left 17, 3 hosts
  host    fetched articles   stored  errors      bytes   waited
  c.test       12        2        1       3    8.0 KiB       3s
  b.test        7        1        1       2    4.0 KiB       1s
  a.test        2        0        0       1        0 B       0s
"#;
}
