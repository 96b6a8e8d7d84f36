//! `scraper build`: every shard into deduplicated, deterministic Parquet plus a dataset card.
//!
//! Two passes, so memory stays bounded whatever the size of the data:
//!
//! 1. `scan` reads every shard (in parallel over shards), counts broken input,
//!    and keeps about 80 bytes per good record: id, where its line is, its URL,
//!    canonical-URL and text keys, and the relevance verdict.
//! 2. `dedup` picks survivors (lowest id wins; see its docs for the rule) in
//!    id order; [`write`] re-reads just those lines frame by frame and writes
//!    `out/data/train-0000i-of-0000N.parquet` (each via `.tmp` and a rename),
//!    every row group a task for a pool of worker threads, then `card`
//!    writes `out/README.md`.
//!
//! The data files depend only on the shards and config: fixed row order, fixed
//! cuts and writer options, no timestamps.

mod card;
mod columns;
mod dedup;
mod frames;
mod minhash;
mod near;
mod revision;
mod row;
mod scan;
mod schema;
mod write;

use std::collections::{BTreeMap, HashMap};
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
    /// A new file starts after about this many bytes of JSON input (~1 GiB gives
    /// files of a few hundred MB).
    pub file_bytes: u64,
    /// A row group ends after about this many bytes of JSON input, or rows.
    pub row_group_bytes: u64,
    pub row_group_rows: usize,
    /// Rows per Arrow batch handed to the Parquet writer.
    pub batch_rows: usize,
    /// Shards whose current frame is kept decoded while writing one file.
    pub frame_cache: usize,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            jobs: std::thread::available_parallelism().map_or(2, |n| n.get()),
            zstd_level: 1,
            file_bytes: 1 << 30,
            row_group_bytes: 128 << 20,
            row_group_rows: 100_000,
            batch_rows: 1024,
            frame_cache: 64,
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
    build_with(config, opts, &Tuning::default())
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
    let scan = scan::scan(&shards, rule.as_ref(), tuning.jobs);
    tracing::debug!(
        secs = started.elapsed().as_secs_f64(),
        shards = shards.len(),
        records = scan.metas.len(),
        "pass 1 (scan) done"
    );
    let mut summary = Summary {
        ok: true,
        read: scan.metas.len() as u64,
        ..Summary::default()
    };
    let broken: u64 = scan.reports.iter().map(ShardReport::broken).sum();
    for r in scan.reports.iter().filter(|r| r.broken() > 0) {
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
    summary.broken = broken;
    if opts.strict && broken > 0 {
        summary.ok = false;
        summary.reports = scan.reports;
        return Ok(summary);
    }
    let (rows, removed) =
        dedup::survivors(scan.metas, &scan.sigs, opts.relevance_filter, tuning.jobs);
    // The signatures are not needed past this point: give their memory back before pass 2.
    let scan = scan::Scan {
        sigs: Vec::new(),
        metas: Vec::new(),
        ..scan
    };
    tracing::debug!(
        secs = started.elapsed().as_secs_f64(),
        survivors = rows.len(),
        "survivors picked"
    );
    let schema = schema::schema();
    let props = schema::writer_properties(tuning.zstd_level).context("Parquet writer options")?;

    let data_dir = opts.out.join("data");
    std::fs::create_dir_all(&data_dir).with_context(|| format!("create {}", data_dir.display()))?;
    let ranges = write::cut(&rows, tuning.file_bytes, usize::MAX);
    let names: Vec<String> = (0..ranges.len())
        .map(|i| format!("train-{i:05}-of-{:05}.parquet", ranges.len()))
        .collect();
    let jobs: Vec<(&[scan::Meta], PathBuf)> = ranges
        .iter()
        .zip(&names)
        .map(|(r, name)| (&rows[r.clone()], data_dir.join(format!("{name}.tmp"))))
        .collect();
    let input = write::Input {
        shards: &shards,
        frames: &scan.frames,
        schema: schema.clone(),
        props,
        cuts: write::Cuts {
            row_group_bytes: tuning.row_group_bytes,
            row_group_rows: tuning.row_group_rows,
            batch_rows: tuning.batch_rows,
            frame_cache: tuning.frame_cache,
        },
    };
    let stats = match write::write_all(&input, &jobs, tuning.jobs) {
        Ok(s) => s,
        Err(e) => {
            for (_, tmp) in &jobs {
                let _ = std::fs::remove_file(tmp);
            }
            return Err(e.into());
        }
    };
    tracing::debug!(
        secs = started.elapsed().as_secs_f64(),
        "pass 2 (write) done"
    );
    remove_stale(&data_dir, &names)?;
    for ((_, tmp), name) in jobs.iter().zip(&names) {
        let path = data_dir.join(name);
        std::fs::rename(tmp, &path).with_context(|| format!("rename to {}", path.display()))?;
        summary.files.push(path);
    }

    let mut years = BTreeMap::new();
    let mut domains: HashMap<String, u64> = HashMap::new();
    let mut langs: BTreeMap<Option<String>, u64> = BTreeMap::new();
    for s in &stats {
        for (y, n) in &s.years {
            *years.entry(*y).or_default() += n;
        }
        for (d, n) in &s.domains {
            *domains.entry(d.clone()).or_default() += n;
        }
        for (l, n) in &s.langs {
            *langs.entry(l.clone()).or_default() += n;
        }
    }
    summary.rows = stats.iter().map(|s| s.rows).sum();
    let withheld = withheld(&opts.data, &rows);
    let file_bytes: u64 = stats.iter().map(|s| s.file_bytes).sum();
    let revision = revision::Revision::new(chrono::Utc::now(), summary.rows, &scan.reports);
    write_atomically(
        &opts.out.join(revision::FILE),
        revision.to_json().as_bytes(),
    )?;
    let card = card::Card {
        dataset: &config.dataset,
        keywords: &config.keywords,
        relevance_filter: opts.relevance_filter,
        schema: &schema,
        files: &names,
        rows: summary.rows,
        arrow_bytes: stats.iter().map(|s| s.arrow_bytes).sum(),
        download_bytes: file_bytes,
        years: &years,
        domains: &domains,
        langs: &langs,
        withheld: &withheld,
        reports: &scan.reports,
        read: summary.read,
        removed: &removed,
        revision: &revision,
        build_secs: started.elapsed().as_secs_f64(),
        commit: git_commit(&opts.data),
    };
    let readme = opts.out.join("README.md");
    write_atomically(&readme, card.render().as_bytes())?;
    summary.file_bytes = file_bytes;
    summary.data_dir = data_dir;
    summary.secs = started.elapsed().as_secs_f64();
    summary.reports = scan.reports;
    summary.removed = removed;
    Ok(summary)
}

/// Withheld pages per domain (see [`crate::store::consent`]), less those the dataset holds.
fn withheld(data: &Path, rows: &[scan::Meta]) -> BTreeMap<String, u64> {
    let stored: std::collections::HashSet<u64> = rows.iter().map(|m| m.url_key).collect();
    crate::store::consent::withheld_by_domain(&DataDir::open_read(data).state)
        .into_iter()
        .map(|(domain, urls)| {
            let n = urls
                .iter()
                .filter(|u| !stored.contains(&row::url_key(u)))
                .count() as u64;
            (domain, n)
        })
        .filter(|(_, n)| *n > 0)
        .collect()
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

fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, bytes).with_context(|| format!("write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("rename to {}", path.display()))?;
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
