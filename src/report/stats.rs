//! `scraper stats`: counts of stored articles by year, by domain and by shard,
//! read from every shard in `data/articles/`, plus the last run's summary and
//! the size of the data folder on disk.
//!
//! Only `domain` and `year` are decoded from each line (a borrowed, two-field
//! struct; the text is skipped, never allocated), and shards are scanned on
//! several threads, so a million records take about a second.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};

use crate::store::shard;

use super::run::RunSummary;

/// Runs shown in `recent_runs`.
pub(crate) const RECENT_RUNS: usize = 7;

/// Everything `scraper stats` reports; also the `--json` shape.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Stats {
    /// The data folder, as given.
    pub data: PathBuf,
    /// Records decoded across all shards.
    pub total: u64,
    /// Records per publication year; `"unknown"` for records without one.
    pub by_year: BTreeMap<String, u64>,
    /// Records per domain.
    pub by_domain: BTreeMap<String, u64>,
    /// One entry per shard, oldest first.
    pub shards: Vec<ShardCount>,
    /// Damage found while reading (a crashed run, a bad disk).
    pub broken: Broken,
    /// `state/last_run.json`, summarised; `null` before the first run.
    pub last_run: Option<RunSummary>,
    /// Why `state/last_run.json` is not shown although it exists (it is
    /// not a run summary); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_run_error: Option<String>,
    /// The latest run of each partition (`state/runs/`), when the crawl is split.
    pub partitions: Vec<RunSummary>,
    /// The last runs' cost and backlog, oldest first (`state/runs/`).
    pub recent_runs: Vec<super::run::RunCost>,
    pub disk: Disk,
}

/// Counts for one shard file.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ShardCount {
    /// File name, e.g. `20261129T063000Z.jsonl.zst`.
    pub file: String,
    pub records: u64,
    /// Compressed size on disk.
    pub bytes: u64,
    pub frames: u64,
    /// Lines that are not a JSON object with a `domain`.
    pub bad_lines: u64,
    pub bad_frames: u64,
    /// Bytes after the last complete frame (a run killed mid-write).
    pub truncated_bytes: u64,
    /// The shard could not be read at all (permissions, I/O error).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Totals of what could not be read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Broken {
    pub bad_lines: u64,
    pub bad_frames: u64,
    pub truncated_bytes: u64,
    pub unreadable_shards: u64,
}

/// Bytes on disk.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Disk {
    /// Everything under `articles/`.
    pub articles_bytes: u64,
    /// Everything under `state/`.
    pub state_bytes: u64,
    /// Each file under `state/` (relative path -> bytes).
    pub state_files: BTreeMap<String, u64>,
}

/// The two fields stats needs. Borrowed, so a line without escapes in its
/// domain costs no allocation; every other field is skipped by serde.
#[derive(Deserialize)]
struct Slim<'a> {
    #[serde(borrow)]
    domain: Cow<'a, str>,
    #[serde(default)]
    year: Option<i32>,
}

/// The fast path for lines as our shard writer produces them
/// (`{"id":N,"url":"...","domain":"...",...,"year":N|null,...}`): find the
/// two keys without reading the text. Sound because inside a JSON string
/// every `"` is escaped, so `,"domain":"` can only be the top-level key, and
/// `Article` has no nested objects. Anything unusual (an escape in the
/// domain, a year that is not a plain integer) returns `None` and the line
/// goes to serde.
fn quick(line: &[u8]) -> Option<(&str, Option<i32>)> {
    use memchr::memmem;
    if !line.starts_with(b"{\"id\":") || line.last() != Some(&b'}') {
        return None;
    }
    const DOMAIN: &[u8] = b",\"domain\":\"";
    const YEAR: &[u8] = b",\"year\":";
    let start = memmem::find(line, DOMAIN)? + DOMAIN.len();
    let len = memchr::memchr2(b'"', b'\\', &line[start..])?;
    if line[start + len] != b'"' {
        return None;
    }
    let domain = std::str::from_utf8(&line[start..start + len]).ok()?;
    let rest = &line[start + len + 1..];
    let rest = &rest[memmem::find(rest, YEAR)? + YEAR.len()..];
    let end = memchr::memchr2(b',', b'}', rest)?;
    let year = match &rest[..end] {
        b"null" => None,
        digits if !digits.is_empty() && digits.iter().all(u8::is_ascii_digit) => {
            Some(std::str::from_utf8(digits).ok()?.parse().ok()?)
        }
        _ => return None,
    };
    Some((domain, year))
}

/// Per-thread tallies, merged at the end.
#[derive(Default)]
struct Tally {
    by_year: HashMap<Option<i32>, u64>,
    by_domain: HashMap<String, u64>,
}

impl Tally {
    fn add(&mut self, line: &[u8]) -> bool {
        let (domain, year) = match quick(line) {
            Some((d, y)) => (Cow::Borrowed(d), y),
            None => match serde_json::from_slice::<Slim>(line) {
                Ok(slim) => (slim.domain, slim.year),
                Err(_) => return false,
            },
        };
        *self.by_year.entry(year).or_default() += 1;
        match self.by_domain.get_mut(domain.as_ref()) {
            Some(n) => *n += 1,
            None => {
                self.by_domain.insert(domain.into_owned(), 1);
            }
        }
        true
    }

    fn merge(&mut self, other: Tally) {
        for (y, n) in other.by_year {
            *self.by_year.entry(y).or_default() += n;
        }
        for (d, n) in other.by_domain {
            *self.by_domain.entry(d).or_default() += n;
        }
    }
}

/// Read every shard under `data/articles/` and the state folder.
/// Unreadable shards are reported in [`Stats::shards`], not as an error;
/// only an unreadable `articles/` folder is.
pub fn collect(data: &Path) -> anyhow::Result<Stats> {
    let articles = data.join("articles");
    let state = data.join("state");
    // `scraper reextract` shards hold records stored already (new extractions of them).
    let paths: Vec<_> = shard::list(&articles)?
        .into_iter()
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_none_or(|n| !n.starts_with(crate::reextract::SHARD_PREFIX))
        })
        .collect();
    let (tally, shards) = scan(&paths);

    let mut stats = Stats {
        data: data.to_path_buf(),
        ..Stats::default()
    };
    for s in &shards {
        stats.total += s.records;
        stats.broken.bad_lines += s.bad_lines;
        stats.broken.bad_frames += s.bad_frames;
        stats.broken.truncated_bytes += s.truncated_bytes;
        stats.broken.unreadable_shards += u64::from(s.error.is_some());
    }
    stats.shards = shards;
    for (year, n) in tally.by_year {
        let key = year.map_or_else(|| "unknown".to_string(), |y| y.to_string());
        *stats.by_year.entry(key).or_default() += n;
    }
    stats.by_domain = tally.by_domain.into_iter().collect();
    match RunSummary::load_last(&state) {
        Ok(run) => stats.last_run = run,
        Err(e) => stats.last_run_error = Some(e),
    }
    let latest = super::run::latest_per_partition(&state);
    if latest
        .iter()
        .any(|r| r.partition.is_some_and(|p| !p.is_whole()))
    {
        stats.partitions = latest;
    }
    stats.recent_runs = super::run::recent_costs(&state, RECENT_RUNS);
    stats.disk.articles_bytes = dir_size(&articles, Path::new(""), &mut BTreeMap::new());
    stats.disk.state_bytes = dir_size(&state, Path::new(""), &mut stats.disk.state_files);
    Ok(stats)
}

/// Scan shards on up to `available_parallelism` threads; results keep the input order.
fn scan(paths: &[PathBuf]) -> (Tally, Vec<ShardCount>) {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(paths.len())
        .max(1);
    let next = AtomicUsize::new(0);
    let counts: Mutex<Vec<ShardCount>> = Mutex::new(vec![ShardCount::default(); paths.len()]);
    let mut total = Tally::default();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut tally = Tally::default();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(path) = paths.get(i) else { break };
                        let count = scan_one(path, &mut tally);
                        // A poisoned lock means another worker panicked; that
                        // panic resurfaces at join below, so the data is moot.
                        if let Ok(mut c) = counts.lock() {
                            c[i] = count;
                        }
                    }
                    tally
                })
            })
            .collect();
        for w in workers {
            match w.join() {
                Ok(t) => total.merge(t),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
    });
    let counts = counts.into_inner().unwrap_or_else(|p| p.into_inner());
    (total, counts)
}

fn scan_one(path: &Path, tally: &mut Tally) -> ShardCount {
    let mut count = ShardCount {
        file: path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        bytes: std::fs::metadata(path).map_or(0, |m| m.len()),
        ..ShardCount::default()
    };
    let (mut ok, mut bad) = (0u64, 0u64);
    match shard::read_lines(path, |line| {
        if tally.add(line) {
            ok += 1;
        } else {
            bad += 1;
        }
    }) {
        Ok(scan) => {
            count.frames = scan.frames;
            count.bad_frames = scan.bad_frames;
            count.truncated_bytes = scan.truncated_bytes;
        }
        Err(e) => count.error = Some(e.to_string()),
    }
    count.records = ok;
    count.bad_lines = bad;
    count
}

/// Total size of regular files under `dir`, recording each as `prefix/name` in `files`.
fn dir_size(dir: &Path, prefix: &Path, files: &mut BTreeMap<String, u64>) -> u64 {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut total = 0;
    for entry in rd.flatten() {
        let Ok(meta) = entry.metadata() else { continue };
        let rel = prefix.join(entry.file_name());
        if meta.is_dir() {
            total += dir_size(&entry.path(), &rel, files);
        } else if meta.is_file() {
            total += meta.len();
            files.insert(rel.to_string_lossy().into_owned(), meta.len());
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_agrees_with_serde_or_declines() {
        let lines: [&[u8]; 9] = [
            br#"{"id":1,"url":"https://x/,\"domain\":\"no","domain":"a.com","title":"t,\"year\":1","year":2024,"text":"x"}"#,
            br#"{"id":2,"url":"u","domain":"a.com","year":null,"text":""}"#,
            br#"{"id":3,"url":"u","domain":"b\u002ecom","year":2023}"#,
            br#"{"id":4,"url":"u","domain":"a.com","year":"2024"}"#,
            br#"{"id":5,"url":"u","domain":"a.com","year":-5}"#,
            br#"{"id":6,"url":"u","domain":"a.com"}"#,
            br#"{"id":7,"url":"u","domain":"a.com","year":99999999999}"#,
            br#"{"domain":"a.com","year":2024}"#,
            r#"{"id":8,"url":"u","domain":"ü.de","year":2025,"keywords":["a"]}"#.as_bytes(),
        ];
        for line in lines {
            let slow = serde_json::from_slice::<Slim>(line)
                .ok()
                .map(|s| (s.domain.into_owned(), s.year));
            let fast = quick(line).map(|(d, y)| (d.to_string(), y));
            if fast.is_some() {
                assert_eq!(fast, slow, "{}", String::from_utf8_lossy(line));
            }
        }
        assert_eq!(quick(lines[0]), Some(("a.com", Some(2024))));
        assert_eq!(quick(lines[1]), Some(("a.com", None)));
        assert_eq!(quick(lines[8]), Some(("ü.de", Some(2025))));
        for declined in [2, 3, 4, 5, 6, 7] {
            assert_eq!(quick(lines[declined]), None, "line {declined}");
        }
    }

    /// `Slim` and the fast path read the names and order the writer's
    /// `Article` serialises (`id` first, `domain` before `year`): a renamed
    /// or moved field fails here, not as an empty `stats`.
    #[test]
    fn slim_reads_what_the_writer_writes() {
        let mut a = crate::record::Article {
            domain: "a.test".into(),
            title: "T \"q\", \"domain\":\"no".into(),
            run_id: Some("r".into()),
            ..crate::store::shard::tests::article(7)
        };
        for year in [Some(2024), None] {
            a.year = year;
            let line = serde_json::to_vec(&a).unwrap();
            assert_eq!(quick(&line), Some((a.domain.as_str(), year)));
            let slim: Slim = serde_json::from_slice(&line).unwrap();
            assert_eq!((slim.domain.as_ref(), slim.year), (a.domain.as_str(), year));
        }
    }

    #[test]
    fn slim_lines_are_counted_and_bad_ones_are_not() {
        let mut t = Tally::default();
        let lines: [(&[u8], bool); 6] = [
            (
                br#"{"id":1,"domain":"a.com","year":2024,"text":"x\"y"}"#,
                true,
            ),
            (br#"{"id":2,"domain":"a.com","year":null}"#, true),
            (br#"{"domain":"b\u002ecom","year":2023}"#, true),
            (br#"{"id":3,"year":2024}"#, false),
            (b"not json", false),
            (br#"{"domain":"a.com","year":"2024"}"#, false),
        ];
        for (line, good) in lines {
            assert_eq!(t.add(line), good, "{}", String::from_utf8_lossy(line));
        }
        assert_eq!(t.by_domain["a.com"], 2);
        assert_eq!(t.by_domain["b.com"], 1);
        assert_eq!(t.by_year[&Some(2024)], 1);
        assert_eq!(t.by_year[&None], 1);
    }
}
