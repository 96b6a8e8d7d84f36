//! `scraper build`: every shard into deduplicated, deterministic Parquet plus a dataset card.
//!
//! Two passes, so memory stays bounded whatever the size of the data:
//!
//! 1. `scan` reads every shard (in parallel over shards), counts broken input,
//!    and spills 60 bytes per good record to disk: id, where its line is, its
//!    URL, canonical-URL and text keys, and the relevance verdict.
//! 2. `dedup` picks survivors (lowest id wins; see its docs for the rule) in
//!    id order, streaming that table through sorted runs on disk (`runs`:
//!    the table, the exact-duplicate keys in `claims`, the near-duplicate
//!    band keys and pairs in `near`) into a table of survivors on disk;
//!    [`write`] re-reads just those lines frame by frame and writes
//!    `out/data/train-<first id>.parquet` (each via `.tmp` and a rename),
//!    every file a task for a pool of worker threads, then `card` writes
//!    `out/README.md`.
//!
//! What stays in memory: the frame table (16 bytes a frame of ~100
//! records), a few bits a record, each sort's budget (a
//! [`SORT_SHARE`]th of `dataset.build_memory_mb`, at most two at once), and
//! the writers' row groups. Not bounded: the URLs with `updated` records
//! (step 0 of `dedup`), and a new release's new rows compared with the
//! earlier releases' index (their signatures, `index`).
//!
//! The data files depend only on the shards and config: fixed row order, fixed
//! cuts and writer options, no timestamps.
//!
//! One override, for layout benchmarks only (`benches/cdc_delta.sh`):
//! `SCRAPER_BUILD_CUTS=FILE,ROW_GROUP,PAGE` (three row counts) replaces
//! [`Tuning`]'s `file_rows`, `row_group_rows` and `page_rows`, with a warning
//! in the log; anything but three numbers is ignored. Other cuts give other
//! bytes (and other upload sizes), so a published build leaves it unset.

mod card;
mod claims;
mod columns;
mod dedup;
mod index;
mod meta;
mod minhash;
pub use minhash::exact_jaccard;
mod near;
mod revision;
mod row;
mod runs;
mod scan;
mod schema;
mod spill;
mod write;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;

pub use dedup::Removed;
pub use row::Broken;
pub use scan::ShardReport;

use crate::config::Config;
use crate::relevance::Rule;
use crate::store::DataDir;
use crate::store::shard::{self, ShardError};

/// What `scraper build` was asked to do.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    pub data: PathBuf,
    pub out: PathBuf,
    pub relevance_filter: bool,
    pub strict: bool,
}

/// Knobs that do not change what the dataset contains, only how it is cut and
/// how fast it is made. [`Tuning::default`] is what `scraper build` uses.
/// Different cuts or level give different bytes; the same values always give the same bytes.
#[derive(Debug, Clone)]
pub struct Tuning {
    /// Threads for reading shards and for encoding row groups (default: available cores).
    pub jobs: usize,
    /// zstd level of the Parquet pages.
    pub zstd_level: i32,
    /// Rows per file, on average (~16 MB of Parquet at 2 KB a row): a file
    /// ends before a row whose id hashes to a multiple of it (see [`write::cut`]),
    /// so cuts stay put when rows before them come or go.
    pub file_rows: u64,
    /// Rows per row group, on average, cut the same way inside each file.
    /// Every column but the big texts is one page per row group, so these
    /// pages together (~80 bytes a row) are the run of bytes a removed row
    /// changes besides its text page: ~20-40 KB at 256 rows, under one of the
    /// Hub's ~64 KiB chunks. Fewer rows add footer bytes (each row group's
    /// metadata, whose offsets all move after an edit); 64 and 128 were worse,
    /// 512 about the same. The writer holds one row group.
    pub row_group_rows: u64,
    /// Rows per text page, on average (pieces of a row group cut the same
    /// way): 4 rather than 8 or 16 cut the bytes a removed row costs by 7-11%
    /// and made the files 3-6% larger (zstd sees less of the text at once).
    pub page_rows: u64,
    /// Shards whose current frame is kept decoded while writing one file.
    pub frame_cache: usize,
    /// Memory to plan for (`dataset.build_memory_mb`): each sort of the
    /// build (the record table, the exact-duplicate claims, the band keys
    /// and candidate pairs) holds a [`SORT_SHARE`]th of it before it spills
    /// a sorted run. It does not change the output.
    pub memory_bytes: u64,
}

/// The share of the memory budget each sort may hold before it spills a
/// sorted run ([`runs`], [`claims`]): one 32nd (32 MiB of the default 1 GiB),
/// at most two sorts at once. Small, so the sorts stay under the writers'
/// own peak (~100-120 MiB) and the build's peak does not grow with the records.
const SORT_SHARE: u64 = 32;

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            jobs: std::thread::available_parallelism().map_or(2, |n| n.get()),
            zstd_level: 1,
            file_rows: 8_192,
            row_group_rows: 256,
            page_rows: 4,
            frame_cache: 64,
            memory_bytes: 1 << 30,
        }
    }
}

/// Why a build could not finish (broken input is not an error: it is counted).
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error(transparent)]
    Shards(#[from] ShardError),
    #[error("cannot write {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot encode Parquet file {path}: {source}")]
    Parquet {
        path: PathBuf,
        source: parquet::errors::ParquetError,
    },
    #[error("cannot assemble an Arrow batch: {0}")]
    Arrow(arrow_schema::ArrowError),
    #[error(
        "shard {path} changed while the build was reading it (frame at byte {offset}); \
         build again when no crawl is writing to it"
    )]
    Changed { path: PathBuf, offset: u64 },
}

/// What a build did.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// False when `--strict` found broken input (nothing was written then).
    pub ok: bool,
    pub reports: Vec<ShardReport>,
    /// Good records read.
    pub read: u64,
    pub removed: Removed,
    pub rows: u64,
    /// The Parquet files written, in order.
    pub files: Vec<PathBuf>,
    /// Broken lines, frames and shards skipped (see `reports`).
    pub broken: u64,
    /// Bytes of the Parquet files.
    pub file_bytes: u64,
    /// The folder holding them.
    pub data_dir: PathBuf,
    /// Wall time of the build.
    pub secs: f64,
}

/// Build the dataset (`ok` is false when `--strict` found broken input).
pub fn build(config: &Config, opts: &BuildOptions) -> anyhow::Result<Summary> {
    let mut tuning = Tuning {
        memory_bytes: config.dataset.build_memory_mb.saturating_mul(1 << 20),
        ..Tuning::default()
    };
    // For layout benchmarks only: see the module docs.
    if let Ok(cuts) = std::env::var("SCRAPER_BUILD_CUTS") {
        let n: Vec<u64> = cuts
            .split(',')
            .filter_map(|v| v.trim().parse().ok())
            .collect();
        if let [file, group, page] = n[..] {
            tracing::warn!(file, group, page, "SCRAPER_BUILD_CUTS: non-default cuts");
            (tuning.file_rows, tuning.row_group_rows, tuning.page_rows) = (file, group, page);
        }
    }
    build_with(config, opts, &tuning)
}

/// [`build`] with explicit [`Tuning`], returning what it did.
pub fn build_with(
    config: &Config,
    opts: &BuildOptions,
    tuning: &Tuning,
) -> anyhow::Result<Summary> {
    let started = Instant::now();
    let shards = shard::list(&DataDir::open_read(&opts.data).articles)?;
    let rule = opts.relevance_filter.then(|| Rule::new(&config.keywords));
    let out_existed = opts.out.exists();
    let tmp = opts.out.join(".build-tmp");
    let scan = scan::scan(&shards, rule.as_ref(), tuning.jobs, &tmp)
        .with_context(|| format!("spill to {}", tmp.display()))?;
    let read = scan.read;
    let secs = || started.elapsed().as_secs_f64();
    tracing::debug!(
        secs = secs(),
        shards = shards.len(),
        records = read,
        "pass 1 (scan) done"
    );
    let broken = log_broken(&scan.reports);
    if opts.strict && broken > 0 {
        return Ok(refused(opts, &tmp, out_existed, scan.reports, read, broken));
    }
    let mut picked = pick_survivors(&scan, opts.relevance_filter, &tmp, tuning)
        .context("pick the survivors (spilled tables)")?;
    drop(scan.metas);
    let index = index::Index::open(&opts.out).context("read the index of earlier releases")?;
    against_earlier_releases(&index, &mut picked, &scan.sigs, &tmp)
        .context("compare new rows with earlier releases")?;
    tracing::debug!(
        secs = secs(),
        survivors = picked.rows.len(),
        "survivors picked"
    );
    let written = write_data(&opts.out, &shards, &scan.frames, &picked.rows, tuning)?;
    tracing::debug!(secs = secs(), "pass 2 (write) done");
    let changes = remember(&index, &picked, &scan.sigs).context("update the index")?;
    drop(scan.sigs);
    // Empty by now: every spill file was unlinked when it was opened.
    let _ = std::fs::remove_dir(&tmp);
    let built = Built {
        config,
        opts,
        written: &written,
        picked: &picked,
        changes,
        reports: &scan.reports,
        read,
        started,
    };
    write_description(&built)?;
    Ok(Summary {
        ok: true,
        reports: scan.reports,
        read,
        removed: picked.removed,
        rows: written.totals.rows,
        files: written.paths,
        broken,
        file_bytes: written.totals.file_bytes,
        data_dir: written.dir,
        secs: secs(),
    })
}

/// `--strict` found broken input: nothing is written, not even the (empty)
/// spill folder, nor `out` if it was new.
fn refused(
    opts: &BuildOptions,
    tmp: &Path,
    out_existed: bool,
    reports: Vec<ShardReport>,
    read: u64,
    broken: u64,
) -> Summary {
    let _ = std::fs::remove_dir(tmp);
    if !out_existed {
        let _ = std::fs::remove_dir(&opts.out);
    }
    Summary {
        ok: false,
        reports,
        read,
        broken,
        ..Summary::default()
    }
}

/// The survivors in output order (on disk), and what the rules removed.
struct Picked {
    rows: runs::Table<scan::Meta>,
    removed: Removed,
}

/// Pick the survivors among the scanned records (see [`dedup`]).
fn pick_survivors(
    scan: &scan::Scan,
    relevance_filter: bool,
    tmp: &Path,
    tuning: &Tuning,
) -> std::io::Result<Picked> {
    let space = near::Space {
        dir: tmp,
        budget: usize::try_from(tuning.memory_bytes / SORT_SHARE).unwrap_or(usize::MAX),
        jobs: tuning.jobs,
    };
    let feed =
        |f: &mut dyn FnMut(scan::Meta) -> std::io::Result<()>| scan.metas.each(&scan.bases, f);
    let (rows, removed) = dedup::survivors(feed, &scan.sigs, relevance_filter, space)?;
    Ok(Picked { rows, removed })
}

/// Remove the new rows (ids above the index's last) that are near
/// duplicates of a row an earlier release published ([`index`]).
fn against_earlier_releases(
    index: &index::Index,
    picked: &mut Picked,
    sigs: &spill::SigStore,
    tmp: &Path,
) -> std::io::Result<()> {
    let Some(last) = index.last_id else {
        return Ok(());
    };
    let mut new = Vec::new();
    let mut cur = sigs.cursor();
    for (k, m) in picked.rows.reader().enumerate() {
        let m = m?;
        if m.id > last && m.sig != near::NONE {
            new.push((k as u32, cur.get(m.sig)?));
        }
    }
    let matched = index.matches(&new)?;
    drop(new);
    if matched.is_empty() {
        return Ok(());
    }
    let mut gone = matched.iter().peekable();
    let mut kept = runs::TableWriter::new(tmp)?;
    for (k, m) in picked.rows.reader().enumerate() {
        let m = m?;
        if gone.next_if(|&&g| g as usize == k).is_none() {
            kept.push(&m)?;
        }
    }
    picked.rows = kept.finish()?;
    picked.removed.near_earlier_release = matched.len() as u64;
    Ok(())
}

/// Add this build's new rows to the index and record its ids; returns what
/// changed since the previous release.
fn remember(
    index: &index::Index,
    picked: &Picked,
    sigs: &spill::SigStore,
) -> std::io::Result<Option<index::Changes>> {
    let rows = &picked.rows;
    let mut cur = sigs.cursor();
    let new = rows
        .reader()
        .filter(|m| {
            m.as_ref().map_or(true, |m| {
                index.last_id.is_none_or(|last| m.id > last) && m.sig != near::NONE
            })
        })
        .map(|m| {
            let m = m?;
            Ok((m.id, cur.get(m.sig)?))
        });
    index.append(new)?;
    let each =
        || -> index::RowIter<'_> { Box::new(rows.reader().map(|m| m.map(|m| (m.id, m.updated)))) };
    let ids = index::Ids { rows: &each };
    index.record_ids(&ids, &picked.removed.withdrawn_ids)
}

/// What the dataset's description is made from.
struct Built<'a> {
    config: &'a Config,
    opts: &'a BuildOptions,
    written: &'a Written,
    picked: &'a Picked,
    /// What changed since the previous release (none on a first build).
    changes: Option<index::Changes>,
    reports: &'a [ShardReport],
    /// Good records read.
    read: u64,
    started: Instant,
}

/// Write `build.json` (the revision: runs covered, rows) and the card `README.md`.
fn write_description(b: &Built<'_>) -> anyhow::Result<()> {
    let totals = &b.written.totals;
    let mut revision = revision::Revision::new(chrono::Utc::now(), totals.rows, b.reports);
    revision.changes = b.changes.clone();
    revision.near_earlier_release = b.picked.removed.near_earlier_release;
    crate::store::write_atomic(
        &b.opts.out.join(revision::FILE),
        revision.to_json().as_bytes(),
    )?;
    let card = card::Card {
        dataset: &b.config.dataset,
        keywords: &b.config.keywords,
        relevance_filter: b.opts.relevance_filter,
        schema: &b.written.schema,
        files: &b.written.names,
        rows: totals.rows,
        arrow_bytes: totals.arrow_bytes,
        download_bytes: totals.file_bytes,
        years: &totals.years,
        domains: &totals.domains,
        langs: &totals.langs,
        versions: &totals.versions,
        withheld: &withheld(&b.opts.data, &b.picked.rows).context("read the survivors")?,
        reports: b.reports,
        read: b.read,
        removed: &b.picked.removed,
        revision: &revision,
        build_secs: b.started.elapsed().as_secs_f64(),
        commit: git_commit(&b.opts.data),
    };
    crate::store::write_atomic(&b.opts.out.join("README.md"), card.render().as_bytes())?;
    Ok(())
}

/// Log each shard with broken input; the number of broken lines, frames and shards.
fn log_broken(reports: &[ShardReport]) -> u64 {
    for r in reports.iter().filter(|r| r.broken() > 0) {
        tracing::warn!(
            shard = %r.name,
            malformed_json = r.malformed_json,
            invalid_utf8 = r.invalid_utf8,
            missing_field = r.missing_field,
            invalid_field = r.invalid_field,
            corrupt_frames = r.bad_frames,
            truncated_bytes = r.truncated_bytes,
            unreadable = r.unreadable.as_deref().unwrap_or(""),
            first_broken_line = r.first_broken.map(|(n, _)| n + 1),
            "broken input skipped"
        );
    }
    reports.iter().map(ShardReport::broken).sum()
}

/// The data files of a build, in place.
struct Written {
    /// `out/data`.
    dir: PathBuf,
    /// The files' names, in order, and their paths.
    names: Vec<String>,
    paths: Vec<PathBuf>,
    /// What all the files hold together.
    totals: write::FileStats,
    /// The schema they were written with.
    schema: arrow_schema::SchemaRef,
}

/// Pass 2: cut the survivors `rows` into files, write each as `<name>.tmp`
/// (all removed again if one fails), then remove what an earlier build left
/// that this one does not write, and rename the new files into place.
fn write_data(
    out: &Path,
    shards: &[PathBuf],
    frames: &[scan::FrameRef],
    rows: &runs::Table<scan::Meta>,
    tuning: &Tuning,
) -> anyhow::Result<Written> {
    let schema = schema::schema();
    let props =
        schema::writer_properties(tuning.zstd_level, &schema).context("Parquet writer options")?;
    let dir = out.join("data");
    std::fs::create_dir_all(&dir).with_context(|| format!("create {}", dir.display()))?;
    let (ranges, names) = file_ranges(rows, tuning.file_rows).context("read the survivors")?;
    let jobs: Vec<(write::TableRange<'_>, PathBuf)> = ranges
        .into_iter()
        .zip(&names)
        .map(|(range, name)| {
            let rows = write::TableRange { table: rows, range };
            (rows, dir.join(format!("{name}.tmp")))
        })
        .collect();
    let cuts = write::Cuts {
        row_group_rows: tuning.row_group_rows,
        page_rows: tuning.page_rows,
        frame_cache: tuning.frame_cache,
    };
    let input =
        write::Input::new(shards, frames, schema.clone(), props, cuts).context("Parquet schema")?;
    let stats = match write::write_all(&input, &jobs, tuning.jobs) {
        Ok(s) => s,
        Err(e) => {
            for (_, tmp) in &jobs {
                let _ = std::fs::remove_file(tmp);
            }
            return Err(e.into());
        }
    };
    remove_stale(&dir, &names)?;
    let mut paths = Vec::with_capacity(names.len());
    for ((_, tmp), name) in jobs.iter().zip(&names) {
        let path = dir.join(name);
        std::fs::rename(tmp, &path).with_context(|| format!("rename to {}", path.display()))?;
        paths.push(path);
    }
    let mut totals = write::FileStats::default();
    for s in stats {
        totals.add(s);
    }
    Ok(Written {
        dir,
        names,
        paths,
        totals,
        schema,
    })
}

/// The rows of each file ([`write::cut`] over the survivors' ids, streamed)
/// and the file names (from each file's first id).
fn file_ranges(
    rows: &runs::Table<scan::Meta>,
    every: u64,
) -> std::io::Result<(Vec<std::ops::Range<u64>>, Vec<String>)> {
    let mut cutter = write::Cutter::new(every);
    let (mut ranges, mut firsts) = (Vec::new(), Vec::new());
    for m in rows.reader() {
        let id = m?.id;
        if let Some(r) = cutter.next(id) {
            ranges.push(r);
        }
        if firsts.len() == ranges.len() {
            firsts.push(id);
        }
    }
    ranges.push(cutter.finish());
    let names = (0..ranges.len())
        .map(|k| write::file_name(firsts.get(k).copied()))
        .collect();
    Ok((ranges, names))
}

/// Withheld pages per domain (see [`crate::store::consent`]), less those the dataset holds.
fn withheld(data: &Path, rows: &runs::Table<scan::Meta>) -> std::io::Result<BTreeMap<String, u64>> {
    let by_domain = crate::store::consent::withheld_by_domain(&DataDir::open_read(data).state);
    if by_domain.is_empty() {
        return Ok(BTreeMap::new());
    }
    let keys: std::collections::HashSet<u64> = by_domain
        .values()
        .flatten()
        .map(|u| row::url_key(u))
        .collect();
    let mut stored = std::collections::HashSet::new();
    for m in rows.reader() {
        let key = m?.url_key;
        if keys.contains(&key) {
            stored.insert(key);
        }
    }
    Ok(by_domain
        .into_iter()
        .map(|(domain, urls)| {
            let n = urls
                .iter()
                .filter(|u| !stored.contains(&row::url_key(u)))
                .count() as u64;
            (domain, n)
        })
        .filter(|(_, n)| *n > 0)
        .collect())
}

/// Remove data files of an earlier build that this one does not write (a
/// different file count), and `.tmp` leftovers of a crashed one.
fn remove_stale(dir: &Path, keep: &[String]) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("list {}", dir.display()))? {
        let path = entry?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let base = name.strip_suffix(".tmp").unwrap_or(name);
        let ours = base.starts_with("train-") && base.ends_with(".parquet");
        if ours && !keep.iter().any(|k| k == base) {
            std::fs::remove_file(&path).with_context(|| format!("remove {}", path.display()))?;
        }
    }
    Ok(())
}

/// The commit checked out where the data lives, if it is a git checkout.
fn git_commit(data: &Path) -> Option<String> {
    let dir = if data.is_dir() { data } else { Path::new(".") };
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["rev-parse", "HEAD"])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let commit = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !commit.is_empty()).then_some(commit)
}
