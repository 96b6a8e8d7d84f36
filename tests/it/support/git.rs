//! Git repositories in temporary folders for the `scripts/daily.sh` tests: a
//! bare remote, clones of it, and `git` that fails the test on an error.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::fixture::stderr;

pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("git");
    assert!(out.status.success(), "git {args:?}: {}", stderr(&out));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A bare repository `remote.git` in `dir`, its branch `main`.
pub fn bare_remote(dir: &Path) -> PathBuf {
    let remote = dir.join("remote.git");
    git(
        dir,
        &[
            "init",
            "-q",
            "--bare",
            "-b",
            "main",
            remote.to_str().unwrap(),
        ],
    );
    remote
}

/// A clone of `remote` at `to`.
pub fn clone_into(remote: &Path, to: &Path) {
    let parent = to.parent().unwrap();
    git(
        parent,
        &[
            "clone",
            "-q",
            remote.to_str().unwrap(),
            to.to_str().unwrap(),
        ],
    );
}
