//! Everything written under the data folder: shards, the seen-set, state files
//! and the run lock. Only this module writes into `data/`.
//!
//! OWNER of `seen.rs`, `state.rs`, `lock`: store work (part of issue 2).

pub mod seen;
pub mod shard;
pub mod state;

use std::fs::File;
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
    pub fn open(root: &Path) -> Result<DataDir, StoreError> {
        let _ = root;
        unimplemented!("store work")
    }

    /// Open without the lock, for readers (`stats`, `build`).
    pub fn open_read(root: &Path) -> DataDir {
        DataDir {
            root: root.to_path_buf(),
            articles: root.join("articles"),
            state: root.join("state"),
            _lock: None,
        }
    }
}
