//! URLs one partition found for another (open scope): `state/outbox/`.
//!
//! A run of partition `p` that finds a link, a listing entry or a redirect to
//! a host owned by partition `q` (see [`crate::partition`]) does not fetch it:
//! in open scope it writes the queue [`Entry`] to
//! `state/outbox/<q>-of-<N>/<run-id>.jsonl` (one JSON entry per line, the same
//! lines as `frontier.jsonl`). The next run of `q` reads every file in its own
//! folder at start, queues the entries (the seen-set drops those it already
//! knows), and when it finishes removes the files it read. Entries it queued
//! but did not reach go to its local queue file like any other link (with
//! `--resume` they are crawled next time; otherwise they are found again when
//! a page links to them).
//!
//! Each file is written once by one run and removed once by the owner, never
//! changed, so git merges outboxes of runs that pushed in any order without a
//! conflict (two runs of `q` from the same state both remove the same files:
//! git takes that as one removal). A run never removes a file and adds a
//! similar one in the same folder, so git's rename detection has nothing to
//! pair. A change of `N` leaves the old `*-of-<N>` folders unread; those
//! links are found again when their pages are. Writers keep at most
//! [`MAX_PER_RUN`] entries per run.

use std::collections::{BTreeMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};

use super::StoreError;
use super::state::{sync_dir, write_atomic};
use crate::frontier::Entry;
use crate::partition::Partition;

pub(crate) const OUTBOX_DIR: &str = "outbox";
/// Most entries one run hands to other partitions.
pub(crate) const MAX_PER_RUN: usize = 50_000;

/// Entries this run hands over, by owner.
#[derive(Debug, Default)]
pub struct Outbox {
    by_owner: BTreeMap<Partition, Vec<Entry>>,
    keys: HashSet<u64>,
    len: usize,
}

impl Outbox {
    /// Keep `entry` for `owner` (once per URL key); false when full or already kept.
    pub fn add(&mut self, owner: Partition, key: u64, entry: Entry) -> bool {
        if self.len >= MAX_PER_RUN || !self.keys.insert(key) {
            return false;
        }
        self.by_owner.entry(owner).or_default().push(entry);
        self.len += 1;
        true
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Write one file per owner: `state/outbox/<owner>/<run-id>.jsonl`.
    pub fn save(&self, state_dir: &Path, run_id: &str) -> Result<Vec<PathBuf>, StoreError> {
        let mut written = Vec::new();
        for (owner, entries) in &self.by_owner {
            let dir = state_dir.join(OUTBOX_DIR).join(owner.file_name());
            std::fs::create_dir_all(&dir).map_err(|e| StoreError::io(&dir, e))?;
            let mut buf = Vec::with_capacity(entries.len() * 96);
            for e in entries {
                // Invariant: an Entry holds only strings, numbers and unit enums.
                serde_json::to_writer(&mut buf, e).expect("a frontier Entry always serialises");
                buf.push(b'\n');
            }
            let path = dir.join(format!("{run_id}.jsonl"));
            write_atomic(&path, &buf)?;
            written.push(path);
        }
        Ok(written)
    }
}

/// What a partition's outbox folder held at start.
#[derive(Debug, Default)]
pub(crate) struct Inbox {
    pub entries: Vec<Entry>,
    /// The files read, removed by [`Inbox::remove`] once the run is saved.
    pub files: Vec<PathBuf>,
    /// Lines that did not parse, skipped.
    pub bad_lines: usize,
}

impl Inbox {
    /// Read every `*.jsonl` in `state/outbox/<me>/`.
    pub(crate) fn read(state_dir: &Path, me: Partition) -> Result<Inbox, StoreError> {
        let dir = state_dir.join(OUTBOX_DIR).join(me.file_name());
        let mut inbox = Inbox::default();
        let listing = match std::fs::read_dir(&dir) {
            Ok(l) => l,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(inbox),
            Err(e) => return Err(StoreError::io(&dir, e)),
        };
        let mut files: Vec<PathBuf> = listing
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        files.sort();
        for path in files {
            let bytes = std::fs::read(&path).map_err(|e| StoreError::io(&path, e))?;
            for line in bytes.split(|&b| b == b'\n') {
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                match serde_json::from_slice::<Entry>(line) {
                    Ok(e) => inbox.entries.push(e),
                    Err(_) => inbox.bad_lines += 1,
                }
            }
            inbox.files.push(path);
        }
        Ok(inbox)
    }

    /// Remove the files read (after the run saved what it did not fetch).
    pub(crate) fn remove(&self) -> Result<(), StoreError> {
        for path in &self.files {
            match std::fs::remove_file(path) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(StoreError::io(path, e)),
            }
        }
        if let Some(dir) = self.files.first().and_then(|p| p.parent()) {
            sync_dir(dir).map_err(|e| StoreError::io(dir, e))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontier::{Kind, Origin};

    fn entry(url: &str) -> Entry {
        Entry::new(url, Kind::Page, Origin::Relevant, 2)
    }

    #[test]
    fn written_per_owner_read_by_the_owner_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let (p0, p1) = ("0/2".parse().unwrap(), "1/2".parse().unwrap());
        let mut out = Outbox::default();
        assert!(out.add(p1, 1, entry("http://a.test/x")));
        assert!(!out.add(p1, 1, entry("http://a.test/x")), "once per URL");
        assert!(out.add(p1, 2, entry("http://b.test/y")));
        assert!(out.add(p0, 3, entry("http://c.test/z")));
        let written = out.save(dir.path(), "20261201T000000Z-0001").unwrap();
        assert_eq!(written.len(), 2);
        assert!(
            dir.path()
                .join("outbox/1-of-2/20261201T000000Z-0001.jsonl")
                .exists()
        );
        // A second writer run adds its own file; a torn line is skipped.
        let other = dir.path().join("outbox/1-of-2/20261201T000001Z-0002.jsonl");
        std::fs::write(&other, "{\"url\":\"http://d.test/\"}\n{\"url\":").unwrap();
        let inbox = Inbox::read(dir.path(), p1).unwrap();
        let urls: Vec<_> = inbox.entries.iter().map(|e| e.url.as_str()).collect();
        assert_eq!(
            urls,
            ["http://a.test/x", "http://b.test/y", "http://d.test/"]
        );
        assert_eq!(inbox.entries[0], entry("http://a.test/x"));
        assert_eq!((inbox.files.len(), inbox.bad_lines), (2, 1));
        inbox.remove().unwrap();
        assert!(Inbox::read(dir.path(), p1).unwrap().entries.is_empty());
        assert_eq!(Inbox::read(dir.path(), p0).unwrap().entries.len(), 1);
        let missing = Inbox::read(dir.path(), "3/4".parse().unwrap()).unwrap();
        assert!(missing.files.is_empty());
    }
}
