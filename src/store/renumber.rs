//! `scraper renumber SHARD`: give one run's articles new ids above every
//! other shard's, for the day two machines crawled from the same state.
//!
//! Both runs then handed out ids from the same number; `scripts/daily.sh`
//! refuses to push the second (its `next_id` conflicts) and keeps it as a
//! local commit. After `git reset --hard` to the remote, the second run's
//! shard is still on disk; renumbering it moves its ids past the largest id
//! in every other shard (and past the remote's `next_id`), rewrites the shard
//! frame by frame to a temporary file that replaces it atomically, and writes
//! `next_id` past the new ids. Nothing else holds ids: seen-set segments and
//! consent logs are keyed by URL.
//!
//! Lines that are not JSON objects and a torn tail (a crashed run) are
//! dropped and counted: `scraper build` would skip them anyway.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::shard::{self, ShardScan, ShardWriter};
use super::state::{NEXT_ID_FILE, write_atomic};
use super::{DataDir, StoreError};

/// What a renumbering did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Renumbered {
    /// Records rewritten.
    pub records: u64,
    /// Their old ids, lowest and highest (None for an empty shard).
    pub old: Option<(i64, i64)>,
    /// The first new id.
    pub start: i64,
    /// Lines dropped: not a JSON object.
    pub bad_lines: u64,
    /// Bytes of torn tail and corrupt frames dropped.
    pub dropped_bytes: u64,
    pub bad_frames: u64,
    /// The shard rewritten.
    pub path: PathBuf,
}

/// Renumber the articles of `shard_path` (a shard under `data.articles`)
/// from past every other shard's ids, `next_id` (unless that file was
/// written by this shard's own run) and `first_id`. Takes the run lock
/// through `data` (open it with [`DataDir::open`]).
pub fn renumber(
    data: &DataDir,
    shard_path: &Path,
    first_id: i64,
) -> Result<Renumbered, StoreError> {
    let io = |path: &Path, e| StoreError::io(path, e);
    let target = shard_path.canonicalize().map_err(|e| io(shard_path, e))?;
    let run_id = run_id_of(&target).ok_or_else(|| StoreError::Corrupt {
        path: target.clone(),
        message: "expected a shard named <run-id>.jsonl.zst".into(),
    })?;
    let next_path = data.state.join(NEXT_ID_FILE);
    let start = first_free_id(data, &target, &run_id, &next_path, first_id)?;

    let tmp = target.with_extension("zst.renumber");
    // Left over from an attempt that died: it was never the shard.
    match std::fs::remove_file(&tmp) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(&tmp, e)),
        _ => {}
    }
    let done = match rewrite(&target, &tmp, start) {
        Ok(done) => done,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    };
    // The counter first: a crash between the two leaves ids skipped, never
    // two articles with one id.
    let next = done.next;
    write_atomic(&next_path, format!("{next}\n{run_id}\n").as_bytes())?;
    std::fs::rename(&tmp, &target).map_err(|e| io(&target, e))?;
    super::state::sync_dir(&data.articles).map_err(|e| io(&data.articles, e))?;
    Ok(Renumbered {
        records: (next - start).unsigned_abs(),
        old: done.old,
        start,
        bad_lines: done.bad_lines,
        dropped_bytes: done.scan.truncated_bytes,
        bad_frames: done.scan.bad_frames,
        path: target,
    })
}

/// The first id past every other shard's ids, `next_id` (unless this
/// shard's own run wrote it) and `first_id`; `target` must be a shard of `data`.
fn first_free_id(
    data: &DataDir,
    target: &Path,
    run_id: &str,
    next_path: &Path,
    first_id: i64,
) -> Result<i64, StoreError> {
    let io = |path: &Path, e| StoreError::io(path, e);
    let mut others_max: Option<i64> = None;
    let mut found = false;
    for path in shard::list(&data.articles)? {
        if path.canonicalize().map_err(|e| io(&path, e))? == target {
            found = true;
            continue;
        }
        shard::read_lines(&path, |line| {
            if let Some(id) = id_of(line) {
                others_max = Some(others_max.map_or(id, |m| m.max(id)));
            }
        })?;
    }
    if !found {
        return Err(StoreError::Corrupt {
            path: target.to_path_buf(),
            message: format!("not a shard of {}", data.articles.display()),
        });
    }
    // The counter on disk counts unless this run wrote it (a run that was
    // not reset away), in which case it says nothing about the others.
    let on_disk = match std::fs::read_to_string(next_path) {
        Ok(text) => {
            let mut lines = text.lines();
            let next = lines.next().and_then(|l| l.trim().parse::<i64>().ok());
            let writer = lines.next().map(str::trim);
            next.filter(|_| writer != Some(run_id))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io(next_path, e)),
    };
    Ok([Some(first_id), on_disk, others_max.map(|m| m + 1)]
        .into_iter()
        .flatten()
        .max()
        .unwrap_or(first_id))
}

/// What [`rewrite`] wrote.
struct Rewritten {
    /// The id after the last one given.
    next: i64,
    /// Lowest and highest id the records had.
    old: Option<(i64, i64)>,
    bad_lines: u64,
    scan: ShardScan,
}

/// Copy `target`'s records to `tmp` with ids from `start` on, in order.
fn rewrite(target: &Path, tmp: &Path, start: i64) -> Result<Rewritten, StoreError> {
    let mut writer = ShardWriter::create(tmp, Duration::MAX)?;
    let mut next = start;
    let mut old: Option<(i64, i64)> = None;
    let mut bad_lines = 0u64;
    let mut failure: Option<StoreError> = None;
    let scan = shard::read_lines(target, |line| {
        if failure.is_some() {
            return;
        }
        let Ok(serde_json::Value::Object(mut record)) = serde_json::from_slice(line) else {
            bad_lines += 1;
            return;
        };
        if let Some(id) = record.get("id").and_then(serde_json::Value::as_i64) {
            old = Some(old.map_or((id, id), |(lo, hi)| (lo.min(id), hi.max(id))));
        }
        record.insert("id".into(), next.into());
        next += 1;
        writer.buffer_value(&serde_json::Value::Object(record));
        if writer.full()
            && let Err(e) = writer.flush()
        {
            failure = Some(e.into());
        }
    })?;
    if let Some(e) = failure {
        return Err(e);
    }
    writer.flush()?;
    Ok(Rewritten {
        next,
        old,
        bad_lines,
        scan,
    })
}

/// `<run-id>` of `.../<run-id>.jsonl.zst`.
fn run_id_of(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    name.strip_suffix(".jsonl.zst")
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// The `id` of a JSON line, read without parsing the rest.
fn id_of(line: &[u8]) -> Option<i64> {
    #[derive(serde::Deserialize)]
    struct Id {
        id: i64,
    }
    serde_json::from_slice::<Id>(line).ok().map(|r| r.id)
}
