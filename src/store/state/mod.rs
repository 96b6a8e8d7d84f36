//! Small state files under `data/state/`, each replaced atomically by
//! [`write_atomic`] (write a temporary file in the same folder, fsync, rename,
//! fsync the folder), so a crash leaves either the old or the new content:
//!
//! | file | owner | content |
//! |---|---|---|
//! | `next_id` | [`crate::store::renumber`] | legacy: the next counter id; written only by `renumber` (runs take id blocks, `crate::store::ids`) |
//! | `runs/<run-id>.json`, `last_run.json` | [`RunSummary`], `summary.rs` | each run's summary (written once) and this machine's last copy (replaced, not committed), with the `--min-lastmod auto` watermarks |
//! | `frontier.jsonl`, `frontier-<i>-of-<N>.jsonl` | [`save_frontier`] / [`load_frontier`] | the queue left for `--resume` and carry-over, one [`Entry`] per line, plus the work kept for the next run (hosts whose robots.txt was unreachable or that were rested, pages that failed for a network reason or a 5xx); one file per partition, never committed (the Action keeps it in its cache) |
//! | `validators/<run-id>.json` (legacy `validators.json`, only read) | [`Validators`] | ETag / Last-Modified per feed, sitemap and seed URL that the run set or forgot |
//! | `listings/<run-id>.json`, `families/<run-id>.json` | `listings.rs`, `families.rs` | listings' progress and rate; URL families' yield |
//! | `doc_cache/<run-id>.json` | [`load_doc_cache`] / [`save_doc_cache`] | robots.txt and tdmrep.json bodies with their validators, what each run had news of |
//!
//! Run ids ([`new_run_id`]) name a run's shard and seen segment.

pub mod families;
pub mod listings;
pub(super) mod run_files;
mod summary;
pub mod validators;

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use chrono::{DateTime, Utc};

use super::StoreError;
use crate::frontier::Entry;
use crate::partition::Partition;

pub use crate::record::{RunSummary, SeedProblem};
pub use listings::{ListingState, Listings, Read};
pub(crate) use summary::RunHistory;
pub use validators::{Validator, Validators};

pub(crate) const NEXT_ID_FILE: &str = "next_id";
pub(crate) const LAST_RUN_FILE: &str = "last_run.json";
pub const FRONTIER_FILE: &str = "frontier.jsonl";
pub(crate) const VALIDATORS_FILE: &str = "validators.json";
pub(crate) const VALIDATORS_DIR: &str = "validators";
pub(crate) const RUNS_DIR: &str = "runs";
pub(crate) const DOC_CACHE_FILE: &str = "doc_cache.json";

/// Documents not answered for this many days are dropped on save.
const DOC_CACHE_DAYS: u32 = 30;

pub(crate) const DOC_CACHE_DIR: &str = "doc_cache";

/// A document is written again this many days after its last write, so
/// that its day stays fresh in the files while its content does not change.
const DOC_CACHE_REFRESH_DAYS: u32 = 15;

fn read_doc_map(path: &Path) -> crate::net::doc_cache::DocMap {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|e| {
            tracing::warn!(path = %path.display(), error = %e, "unreadable document cache ignored");
            Default::default()
        }),
        Err(_) => Default::default(),
    }
}

/// Read the legacy `state/doc_cache.json`, then every
/// `state/doc_cache/<run-id>.json` in run order, the later day winning
/// (missing or unreadable: empty, it is only a cache).
pub(crate) fn load_doc_cache(state_dir: &Path) -> crate::net::doc_cache::DocMap {
    let mut all = read_doc_map(&state_dir.join(DOC_CACHE_FILE));
    let files = run_files::json_files(&state_dir.join(DOC_CACHE_DIR)).unwrap_or_else(|e| {
        tracing::warn!(error = %e, "document cache folder unreadable: ignored");
        Vec::new()
    });
    for path in files {
        for (url, doc) in read_doc_map(&path) {
            if all.get(&url).is_none_or(|old| old.day <= doc.day) {
                all.insert(url, doc);
            }
        }
    }
    all
}

/// Write the documents this run has news of to
/// `state/doc_cache/<run-id>.json`: new or changed since `load_doc_cache`
/// (body, status or validators), or last written over 15 days ago, and
/// answered in the last 30 days. Nothing new: no file. Like the validators,
/// a file is written once and never rewritten, so runs on several machines
/// merge in git without a conflict; `scraper compact` folds them.
pub(crate) fn save_doc_cache(
    state_dir: &Path,
    docs: &crate::net::doc_cache::DocMap,
    today: u32,
    run_id: &str,
) -> Result<(), StoreError> {
    let before = load_doc_cache(state_dir);
    let keep: crate::net::doc_cache::DocMap = docs
        .iter()
        .filter(|(_, d)| d.day.saturating_add(DOC_CACHE_DAYS) >= today)
        .filter(|(url, d)| match before.get(*url) {
            None => true,
            Some(old) => {
                old.body != d.body
                    || old.status != d.status
                    || old.etag != d.etag
                    || old.last_modified != d.last_modified
                    || d.day >= old.day.saturating_add(DOC_CACHE_REFRESH_DAYS)
                    // Reused for days without asking: the day it was last asked counts.
                    || (url.ends_with("/.well-known/tdmrep.json") && d.day > old.day)
            }
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if keep.is_empty() {
        return Ok(());
    }
    let dir = state_dir.join(DOC_CACHE_DIR);
    std::fs::create_dir_all(&dir).map_err(|e| StoreError::io(&dir, e))?;
    write_atomic(
        &dir.join(format!("{run_id}.json")),
        render_docs(&keep).as_bytes(),
    )
}

fn render_docs(docs: &crate::net::doc_cache::DocMap) -> String {
    let mut out = String::from("{\n");
    for (i, (url, doc)) in docs.iter().enumerate() {
        // Invariant: strings and numbers always serialise.
        let k = serde_json::to_string(url).expect("a string serialises");
        let v = serde_json::to_string(doc).expect("a CachedDoc serialises");
        out.push_str(&format!(
            "{k}: {v}{}\n",
            if i + 1 < docs.len() { "," } else { "" }
        ));
    }
    out.push_str("}\n");
    out
}

/// Fold every document-cache file (and the legacy `doc_cache.json`) into
/// `doc_cache/<name>.json`, dropping documents not answered for 30 days
/// before `today`. For `scraper compact` (one machine at a time). Returns the
/// files folded.
pub fn compact_doc_cache(state_dir: &Path, name: &str, today: u32) -> Result<usize, StoreError> {
    let dir = state_dir.join(DOC_CACHE_DIR);
    run_files::fold(&dir, &state_dir.join(DOC_CACHE_FILE), name, || {
        let all: crate::net::doc_cache::DocMap = load_doc_cache(state_dir)
            .into_iter()
            .filter(|(_, d)| d.day.saturating_add(DOC_CACHE_DAYS) >= today)
            .collect();
        Ok(render_docs(&all).into_bytes())
    })
}

/// A JSON state file, `None` when it does not exist; a file that does not
/// parse is `Corrupt`, its message saying it is not `what` and what to do.
pub(crate) fn read_json<T: serde::de::DeserializeOwned>(
    path: &Path,
    what: &str,
    remedy: &str,
) -> Result<Option<T>, StoreError> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(StoreError::io(path, e)),
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| StoreError::Corrupt {
            path: path.to_path_buf(),
            message: format!("not {what} ({e}); {remedy}"),
        })
}

/// Replace `path` with `bytes` so that a crash at any point leaves either the
/// old content or the new one, never a mix: write a temporary file next to it,
/// fsync it, rename it over `path`, fsync the folder.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    write_atomic_with(path, |w| w.write_all(bytes))
}

/// [`write_atomic`] with the bytes written by `fill` (through a buffer), so
/// a large file need not be built in memory first.
pub(crate) fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), StoreError> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("state");
    let tmp = dir.join(format!(
        ".{name}.tmp-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let written = (|| {
        let f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)?;
        let mut w = io::BufWriter::with_capacity(256 << 10, f);
        fill(&mut w)?;
        let f = w.into_inner().map_err(io::IntoInnerError::into_error)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(StoreError::io(path, e));
    }
    sync_dir(dir).map_err(|e| StoreError::io(dir, e))
}

/// Make a folder's entries (new, renamed, removed files) durable.
pub(crate) fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

/// A new run id: the UTC start time to the second, then 16 random bits, e.g.
/// `20261129T194500Z-3fa9`. Ids sort by start time, are safe in file names,
/// and two machines starting in the same second still differ (1 in 65,536
/// chance of a clash, and only within that second).
pub fn new_run_id(now: DateTime<Utc>) -> String {
    use std::hash::{BuildHasher, Hasher};
    // RandomState is seeded from the OS's randomness per process.
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_i64(now.timestamp_nanos_opt().unwrap_or_default());
    h.write_u32(std::process::id());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    h.write_u32(nanos);
    format!(
        "{}-{:04x}",
        now.format("%Y%m%dT%H%M%SZ"),
        h.finish() & 0xffff
    )
}

/// What [`load_frontier`] read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FrontierLoad {
    pub entries: Vec<Entry>,
    /// Lines that did not parse (a torn last line counts here), skipped.
    pub bad_lines: usize,
}

/// The queue file of `partition`: `frontier.jsonl` for the whole crawl,
/// `frontier-<i>-of-<N>.jsonl` for a partition (never committed: each runner
/// keeps its own, e.g. in the Actions cache).
pub(crate) fn frontier_file(partition: Partition) -> String {
    if partition.is_whole() {
        FRONTIER_FILE.to_string()
    } else {
        format!("frontier-{}.jsonl", partition.file_name())
    }
}

/// Save the queue for `--resume` to `state/frontier.jsonl` (see
/// [`frontier_file`]), one JSON [`Entry`] per line, atomically. An empty
/// queue removes the file.
pub fn save_frontier(
    state_dir: &Path,
    partition: Partition,
    entries: &[Entry],
) -> Result<(), StoreError> {
    let path = state_dir.join(frontier_file(partition));
    if entries.is_empty() {
        return match std::fs::remove_file(&path) {
            Ok(()) => sync_dir(state_dir).map_err(|e| StoreError::io(state_dir, e)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(StoreError::io(&path, e)),
        };
    }
    // Streamed to the file: a full queue is a million lines.
    write_atomic_with(&path, |w| {
        for e in entries {
            serde_json::to_writer(&mut *w, e).map_err(io::Error::other)?;
            w.write_all(b"\n")?;
        }
        Ok(())
    })
}

/// Load `partition`'s queue file; a missing file is an empty queue, lines that
/// do not parse (a torn last line, a hand edit) are counted and skipped.
pub fn load_frontier(state_dir: &Path, partition: Partition) -> Result<FrontierLoad, StoreError> {
    let path = state_dir.join(frontier_file(partition));
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(FrontierLoad::default()),
        Err(e) => return Err(StoreError::io(&path, e)),
    };
    let mut out = FrontierLoad::default();
    for line in bytes.split(|&b| b == b'\n') {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Entry>(line) {
            Ok(e) => out.entries.push(e),
            Err(_) => out.bad_lines += 1,
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_sort_by_time_and_differ() {
        let t = DateTime::parse_from_rfc3339("2026-11-29T19:45:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let a = new_run_id(t);
        let b = new_run_id(t);
        assert!(a.starts_with("20261129T194500Z-"), "{a}");
        assert_eq!(a.len(), "20261129T194500Z-0000".len());
        assert!(a[17..].chars().all(|c| c.is_ascii_hexdigit()));
        let later = new_run_id(t + chrono::Duration::seconds(1));
        assert!(later > a && later > b);
    }

    #[test]
    fn doc_cache_files_per_run_merge_and_skip_what_did_not_change() {
        use crate::net::doc_cache::{CachedDoc, DocMap};
        let dir = tempfile::tempdir().unwrap();
        let st = dir.path();
        let doc = |body: &str, day: u32| CachedDoc {
            etag: Some(format!("\"{body}\"")),
            last_modified: None,
            status: 200,
            body: body.into(),
            day,
        };
        let mut a = DocMap::new();
        a.insert("http://a.test/robots.txt".into(), doc("A", 100));
        save_doc_cache(st, &a, 100, "r1").unwrap();
        // Two runs from that state: one sees a.test unchanged (a 304), one
        // finds b.test. Only news is written.
        let mut one = load_doc_cache(st);
        one.get_mut("http://a.test/robots.txt").unwrap().day = 101;
        save_doc_cache(st, &one, 101, "r2").unwrap();
        assert!(
            !st.join("doc_cache/r2.json").exists(),
            "nothing new: no file"
        );
        let mut two = load_doc_cache(st);
        two.insert("http://b.test/robots.txt".into(), doc("B", 101));
        save_doc_cache(st, &two, 101, "r3").unwrap();
        let all = load_doc_cache(st);
        assert_eq!(all.len(), 2);
        assert_eq!(all["http://b.test/robots.txt"].body, "B");
        // Past the refresh interval an unchanged document is written again.
        let mut late = load_doc_cache(st);
        late.get_mut("http://a.test/robots.txt").unwrap().day = 116;
        save_doc_cache(st, &late, 116, "r4").unwrap();
        assert!(st.join("doc_cache/r4.json").exists());
        assert_eq!(compact_doc_cache(st, "r5", 116).unwrap(), 3);
        assert_eq!(load_doc_cache(st)["http://a.test/robots.txt"].day, 116);
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        write_atomic(&p, b"old").unwrap();
        write_atomic(&p, b"new").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
        let err = write_atomic(&dir.path().join("missing/f"), b"x").unwrap_err();
        assert!(err.to_string().contains("missing"), "{err}");
    }
}
