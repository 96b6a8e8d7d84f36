//! Run summaries: per-host counters and the watermark `--min-lastmod auto`
//! starts from. Every run writes its own `state/runs/<run-id>.json` (written
//! once, never rewritten, so runs of several machines merge in git) and a
//! copy in `state/last_run.json`, this machine's last run (not committed;
//! older versions committed it, and such a copy is read as one more run).
//! [`RunHistory`] reads them all.
//!
//! Keys are written in [`KEYS`] order; top-level keys this version does not
//! know (written by a newer version or by hand) are kept when a file is
//! rewritten, after the known ones.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;
use serde_json::{Map, Value};

use super::{LAST_RUN_FILE, RUNS_DIR, write_atomic};
use crate::partition::Partition;
use crate::record::RunSummary;
use crate::store::StoreError;

/// The top-level keys of a run summary, in the order they are written
/// (`RunSummary`'s field order; a test holds the two together).
pub(crate) const KEYS: [&str; 20] = [
    "run_id",
    "started_at",
    "finished_at",
    "stopped_by",
    "interrupted",
    "pages_fetched",
    "articles_stored",
    "ids",
    "last_success_started_at",
    "host_watermarks",
    "hosts",
    "handover",
    "id_blocks",
    "kept_for_next_run",
    "partition",
    "queue_left",
    "seed_problems",
    "shard",
    "sources_down",
    "unread_listings",
];

impl RunSummary {
    /// Read `state/last_run.json` (this machine's last run); `None` before the first run.
    pub fn load(state_dir: &Path) -> Result<Option<RunSummary>, StoreError> {
        read_summary(&state_dir.join(LAST_RUN_FILE))
    }

    /// Write `state/runs/<run-id>.json` and the local copy `state/last_run.json`
    /// atomically (pretty JSON, [`KEYS`] order, then the unknown keys of the
    /// file being replaced).
    pub fn save(&self, state_dir: &Path) -> Result<(), StoreError> {
        let dir = state_dir.join(RUNS_DIR);
        std::fs::create_dir_all(&dir).map_err(|e| StoreError::io(&dir, e))?;
        let own = dir.join(format!("{}.json", self.run.run_id));
        write_atomic(&own, &self.render(&own))?;
        // A last_run.json from an older version is the only record of its
        // run: it moves into runs/ (byte for byte, so every machine that
        // moves it writes the same file) before the copy is replaced.
        let last = state_dir.join(LAST_RUN_FILE);
        if let Some(old) = read_summary(&last).ok().flatten() {
            let kept = dir.join(format!("{}.json", old.run.run_id));
            if old.run.run_id != self.run.run_id && !kept.exists() {
                let bytes = std::fs::read(&last).map_err(|e| StoreError::io(&last, e))?;
                write_atomic(&kept, &bytes)?;
            }
        }
        write_atomic(&last, &self.render(&last))
    }

    /// The file's text: this summary, then the top-level keys of the file
    /// now at `path` that are not in [`KEYS`], as they were.
    fn render(&self, path: &Path) -> Vec<u8> {
        /// The summary's keys, then the others (both flattened into one object).
        #[derive(Serialize)]
        struct Written<'a> {
            #[serde(flatten)]
            summary: &'a RunSummary,
            #[serde(flatten)]
            unknown: Map<String, Value>,
        }
        let written = Written {
            summary: self,
            unknown: unknown_keys(path),
        };
        // Invariant: strings, numbers and maps with string keys always serialise.
        let mut text = serde_json::to_vec_pretty(&written).expect("a RunSummary always serialises");
        text.push(b'\n');
        text
    }
}

/// The top-level keys of the JSON object at `path` that are not in [`KEYS`]
/// (none when there is no such file, or it is not a JSON object).
fn unknown_keys(path: &Path) -> Map<String, Value> {
    let Ok(bytes) = std::fs::read(path) else {
        return Map::new();
    };
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(mut map)) => {
            map.retain(|k, _| !KEYS.contains(&k.as_str()));
            map
        }
        _ => Map::new(),
    }
}

fn read_summary(path: &Path) -> Result<Option<RunSummary>, StoreError> {
    super::read_json(path, "a run summary", "delete it to start afresh")
}

/// Every finished run the data folder knows: `state/runs/*.json` plus a
/// `last_run.json` whose run has no file there (written by an older version).
#[derive(Debug, Clone, Default)]
pub(crate) struct RunHistory {
    /// Sorted by run id (start time).
    runs: Vec<RunSummary>,
    /// Shards up to this run id belong to runs that finished before
    /// `state/runs/` existed (or are its oldest run).
    settled_through: String,
    /// Files in `state/runs/` that did not parse, skipped.
    pub(crate) bad_files: usize,
}

impl RunHistory {
    pub(crate) fn load(state_dir: &Path) -> Result<RunHistory, StoreError> {
        let mut h = RunHistory::default();
        for path in super::run_files::json_files(&state_dir.join(RUNS_DIR))? {
            match read_summary(&path) {
                Ok(Some(s)) => h.runs.push(s),
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "run summary skipped");
                    h.bad_files += 1;
                }
            }
        }
        h.runs.sort_by(|a, b| a.run.run_id.cmp(&b.run.run_id));
        h.settled_through = h
            .runs
            .first()
            .map(|r| r.run.run_id.clone())
            .unwrap_or_default();
        if let Some(last) = RunSummary::load(state_dir)?
            && !h.runs.iter().any(|r| r.run.run_id == last.run.run_id)
        {
            if h.runs.is_empty() {
                h.settled_through = last.run.run_id.clone();
            }
            let at = h.runs.partition_point(|r| r.run.run_id < last.run.run_id);
            h.runs.insert(at, last);
        }
        Ok(h)
    }

    /// All runs, oldest first.
    pub(crate) fn runs(&self) -> &[RunSummary] {
        &self.runs
    }

    /// The latest run whose hosts include all of `partition`'s: a run of the
    /// same partition or of the whole crawl. Its watermark is the one
    /// `partition` may start from (another partition's says nothing about
    /// these hosts).
    pub(crate) fn latest_for(&self, partition: Partition) -> Option<&RunSummary> {
        self.runs.iter().rev().find(|r| {
            let p = r.partition();
            p == partition || p.is_whole()
        })
    }

    /// The latest run of each partition (`i/N`), in partition order.
    pub(crate) fn latest_per_partition(&self) -> Vec<&RunSummary> {
        let mut by: BTreeMap<(u32, u32), &RunSummary> = BTreeMap::new();
        for r in &self.runs {
            let p = r.partition();
            by.insert((p.count(), p.index()), r);
        }
        by.into_values().collect()
    }

    /// Did the run that wrote the shard `run_id` finish (its summary is
    /// known, or it is older than every known summary)?
    pub(crate) fn finished(&self, run_id: &str) -> bool {
        run_id <= self.settled_through.as_str() || self.runs.iter().any(|r| r.run.run_id == run_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::health::Answer;
    use crate::record::{HandoverCounts, SeedProblem, StopReason};
    use chrono::{DateTime, Utc};

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
        ok.run.stopped_by = Some(StopReason::MaxHits.into());
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
        assert_eq!(next.last_success_started_at, Some(next.run.started_at));
    }

    /// The top-level keys of a file's text, in order.
    fn keys_in(text: &str) -> Vec<String> {
        text.lines()
            .filter_map(|l| l.strip_prefix("  \""))
            .filter_map(|l| l.split_once("\":").map(|(k, _)| k.to_string()))
            .collect()
    }

    /// A summary with every optional field filled.
    fn full(run_id: &str) -> RunSummary {
        let mut s = RunSummary::new(run_id, at("2026-11-28T06:30:00Z"));
        s.run.finished_at = Some(at("2026-11-28T07:00:00Z"));
        s.run.stopped_by = Some(StopReason::MaxPages.into());
        s.ids = Some([1, 3]);
        s.set_watermark(None, true);
        s.host_watermarks.insert("a.test".into(), None);
        s.host("a.test").fetched = 1;
        s.handover = Some(HandoverCounts {
            seeds_skipped: 1,
            dropped: 2,
            handed_over: 3,
            inbox: 4,
        });
        s.id_blocks = vec![[1, 3]];
        s.partition = Some("1/2".parse().unwrap());
        s.seed_problems = vec![SeedProblem {
            source: "a.test".into(),
            url: "http://a.test/feed".into(),
            answer: Answer::Status(404),
            moved_to: None,
        }];
        s.shard = Some("s.jsonl.zst".into());
        s.sources_down = vec!["b.test".into()];
        s
    }

    #[test]
    fn keys_keep_their_order_and_unknown_ones_survive_a_rewrite() {
        let dir = tempfile::tempdir().unwrap();
        let st = dir.path();
        full("20261128T063000Z-aaaa").save(st).unwrap();
        let text = std::fs::read_to_string(st.join(LAST_RUN_FILE)).unwrap();
        assert_eq!(keys_in(&text), KEYS);
        // A newer version (or a person) added keys; an older known key
        // (`partition`) must not outlive its run.
        let mut old: Value = serde_json::from_str(&text).unwrap();
        old["zz_note"] = serde_json::json!({"by": "hand", "n": [1, 2]});
        old["aa_commit"] = serde_json::json!("abc123");
        std::fs::write(st.join(LAST_RUN_FILE), old.to_string()).unwrap();
        let next = RunSummary::new("20261129T063000Z-bbbb", at("2026-11-29T06:30:00Z"));
        next.save(st).unwrap();
        let text = std::fs::read_to_string(st.join(LAST_RUN_FILE)).unwrap();
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back["zz_note"], old["zz_note"]);
        assert_eq!(back["aa_commit"], "abc123");
        assert_eq!(back["run_id"], "20261129T063000Z-bbbb");
        assert!(back.get("partition").is_none(), "{text}");
        let keys = keys_in(&text);
        assert_eq!(keys[0], "run_id");
        assert_eq!(keys[keys.len() - 2..], ["aa_commit", "zz_note"]);
        assert_eq!(RunSummary::load(st).unwrap().unwrap(), next);
        // The run's own file had no earlier version: nothing carried into it.
        let own = std::fs::read_to_string(st.join("runs/20261129T063000Z-bbbb.json")).unwrap();
        assert!(!own.contains("zz_note"), "{own}");
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

    #[test]
    fn history_reads_every_run_and_picks_the_right_watermark() {
        let dir = tempfile::tempdir().unwrap();
        let st = dir.path();
        // A legacy last_run.json (committed by an older version).
        let mut legacy = RunSummary::new("20261128T063000Z-0000", at("2026-11-28T06:30:00Z"));
        legacy.set_watermark(None, true);
        std::fs::write(st.join(LAST_RUN_FILE), serde_json::to_vec(&legacy).unwrap()).unwrap();
        let h = RunHistory::load(st).unwrap();
        assert_eq!(h.runs().len(), 1);
        assert!(h.finished("20261127T000000Z-ffff") && h.finished("20261128T063000Z-0000"));
        assert!(!h.finished("20261129T000000Z-0000"));
        // Partitions 0/2 and 1/2 ran on two machines; each wrote its own file.
        let part = |id: &str, t: &str, p: &str, ok: bool| {
            let mut r = RunSummary::new(id, at(t));
            r.partition = Some(p.parse().unwrap());
            r.set_watermark(Some(&legacy), ok);
            r
        };
        let a = part("20261129T063000Z-aaaa", "2026-11-29T06:30:00Z", "0/2", true);
        let b = part(
            "20261129T063001Z-bbbb",
            "2026-11-29T06:30:01Z",
            "1/2",
            false,
        );
        a.save(st).unwrap();
        b.save(st).unwrap();
        let h = RunHistory::load(st).unwrap();
        assert_eq!(h.runs().len(), 3, "the legacy file's run is still one");
        assert!(
            st.join("runs/20261128T063000Z-0000.json").exists(),
            "moved into runs/"
        );
        let p0: Partition = "0/2".parse().unwrap();
        let p1: Partition = "1/2".parse().unwrap();
        assert_eq!(h.latest_for(p0).unwrap().run.run_id, a.run.run_id);
        assert_eq!(h.latest_for(p1).unwrap().run.run_id, b.run.run_id);
        // 1/2 was cut short: it keeps the legacy watermark, not 0/2's.
        assert_eq!(
            h.latest_for(p1).unwrap().last_success_started_at,
            legacy.last_success_started_at
        );
        // A new split (N = 4) starts from the whole crawl's last run only.
        let q: Partition = "3/4".parse().unwrap();
        assert_eq!(h.latest_for(q).unwrap().run.run_id, legacy.run.run_id);
        assert_eq!(h.latest_per_partition().len(), 3);
        assert!(h.finished(&a.run.run_id) && h.finished(&b.run.run_id));
        assert!(
            !h.finished("20261129T070000Z-cccc"),
            "an unfinished newer shard"
        );
        // A broken run file is skipped, not fatal.
        std::fs::write(st.join("runs/20261130T000000Z-dddd.json"), "{").unwrap();
        let h = RunHistory::load(st).unwrap();
        assert_eq!((h.runs().len(), h.bad_files), (3, 1));
    }
}
