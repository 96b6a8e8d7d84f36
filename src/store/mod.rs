//! Everything written under the data folder: shards, the seen-set, state files
//! and the run lock. Only this module writes into `data/`.
//!
//! * [`DataDir`]: the open data folder (`articles/`, `state/`) and the run lock
//!   `state/.lock`, an OS advisory lock taken with [`File::try_lock`]. The
//!   kernel drops it when the process ends, however it ends, so a crash or a
//!   SIGKILL never leaves a stale lock behind (a PID file would).
//! * [`consent`]: per-run robots.txt snapshots and withheld pages, `state/consent/`.
//! * [`health`]: per-run source health records, `state/health/`.
//! * [`ids`]: article ids from per-run blocks that no other run can pick.
//! * [`outbox`]: URLs one partition found for another, `state/outbox/`.
//! * [`renumber`]: new ids for one run's shard after two machines crawled
//!   from the same state.
//! * [`seen`]: the seen-set, per-run append-only segments under `state/seen/`.
//! * [`shard`]: the article shards `articles/<run-id>.jsonl.zst`.
//! * [`sink`]: one run's shard, seen-set, WARC writer and ids, and the order
//!   that makes a stored record durable before its URLs are hits.
//! * [`warc`]: the per-run WARC archives `warc/<run-id>.warc.gz` (`crawl.archive`).
//! * [`state`]: the small state files (run summaries, `last_run.json`,
//!   `frontier.jsonl`, the per-run `validators/`, `listings/`, `families/`
//!   and `doc_cache/` files), run ids and the atomic writer.

pub mod consent;
pub mod health;
pub mod ids;
pub mod outbox;
pub mod renumber;
pub mod seen;
pub mod shard;
pub mod sink;
pub mod state;
pub mod warc;

pub use state::write_atomic;

use std::fs::{File, OpenOptions, TryLockError};
use std::io;
use std::path::{Path, PathBuf};

/// Why the data folder could not be used.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "another `scraper crawl` is already running on {path} (lock held on {lock}); wait for it to finish"
    )]
    Locked { path: PathBuf, lock: PathBuf },
    #[error("cannot use data folder {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Corrupt { path: PathBuf, message: String },
    #[error(transparent)]
    Shard(#[from] shard::ShardError),
}

impl StoreError {
    /// An I/O failure on `path`.
    pub(crate) fn io(path: &Path, source: io::Error) -> StoreError {
        StoreError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// The files in `dir` whose names end in `suffix`, sorted by name (run ids
/// sort by time); none when `dir` does not exist.
pub(crate) fn list_files(dir: &Path, suffix: &str) -> io::Result<Vec<PathBuf>> {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(e),
    };
    let mut out: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_str().is_some_and(|s| s.ends_with(suffix)))
        .collect();
    out.sort();
    Ok(out)
}

/// Name of the lock file inside `state/`.
pub(crate) const LOCK_FILE: &str = ".lock";

/// An open data folder: `articles/` and `state/`, held under an exclusive lock.
#[derive(Debug)]
pub struct DataDir {
    pub root: PathBuf,
    pub articles: PathBuf,
    pub state: PathBuf,
    _lock: Option<File>,
}

impl DataDir {
    /// Create the folders if needed and take the run lock (`state/.lock`).
    ///
    /// A second `open` of the same folder while the first [`DataDir`] lives
    /// (in this process or any other) fails with [`StoreError::Locked`]; the
    /// lock is released when the `DataDir` is dropped or the process dies.
    /// A folder that cannot be created or written fails with
    /// [`StoreError::Io`] naming the path.
    pub fn open(root: &Path) -> Result<DataDir, StoreError> {
        let dir = DataDir::open_read(root);
        for path in [&dir.root, &dir.articles, &dir.state] {
            std::fs::create_dir_all(path).map_err(|e| StoreError::io(path, e))?;
        }
        let lock_path = dir.state.join(LOCK_FILE);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
            .map_err(|e| StoreError::io(&lock_path, e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(StoreError::Locked {
                    path: dir.root.clone(),
                    lock: lock_path,
                });
            }
            Err(TryLockError::Error(e)) => return Err(StoreError::io(&lock_path, e)),
        }
        Ok(DataDir {
            _lock: Some(file),
            ..dir
        })
    }

    /// Open without the lock, for readers (`stats`, `build`).
    pub(crate) fn open_read(root: &Path) -> DataDir {
        DataDir {
            root: root.to_path_buf(),
            articles: root.join("articles"),
            state: root.join("state"),
            _lock: None,
        }
    }

    /// Does this handle hold the run lock?
    pub fn is_locked(&self) -> bool {
        self._lock.is_some()
    }

    /// The folder of the WARC archives: `warc/`.
    pub(crate) fn warc_dir(&self) -> PathBuf {
        self.root.join("warc")
    }

    /// The shard path for a run: `articles/<run-id>.jsonl.zst`.
    pub fn shard_path(&self, run_id: &str) -> PathBuf {
        self.articles.join(format!("{run_id}.jsonl.zst"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_is_exclusive_and_released_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("data");
        let first = DataDir::open(&root).unwrap();
        assert!(first.is_locked());
        assert!(first.articles.is_dir() && first.state.is_dir());
        let err = DataDir::open(&root).unwrap_err();
        assert!(matches!(err, StoreError::Locked { .. }), "{err}");
        assert!(err.to_string().contains("already running"));
        // Readers never need the lock.
        assert!(!DataDir::open_read(&root).is_locked());
        drop(first);
        DataDir::open(&root).unwrap();
    }

    #[test]
    fn unusable_folder_names_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plain-file");
        std::fs::write(&file, b"x").unwrap();
        let err = DataDir::open(&file.join("data")).unwrap_err();
        assert!(matches!(err, StoreError::Io { .. }));
        assert!(err.to_string().contains("plain-file"), "{err}");
    }
}
