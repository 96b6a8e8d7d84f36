//! URLs for hosts of other partitions (`--partition i/N`): seeds are left to
//! their owner (which has the same config); links, listing entries and
//! redirect targets are dropped in `domains` scope (the owner finds them from
//! its own seeds) and handed to their owner through `state/outbox/` in `open`
//! scope. Everything is counted in the run summary.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::record::HandoverCounts;

use crate::frontier::{Entry, Origin};
use crate::partition::Partition;
use crate::store::StoreError;
use crate::store::outbox::Outbox;
use crate::url::{self, Url};

/// What happened to other partitions' URLs in this run.
#[derive(Debug, Default)]
pub(crate) struct Handover {
    /// The hosts this runner owns.
    partition: Partition,
    /// Open scope: other partitions' URLs are handed over, not dropped.
    open: bool,
    outbox: Outbox,
    /// Seeds of other partitions' hosts already counted (seen hashes).
    seeds: HashSet<u64>,
    /// Seeds of hosts this runner does not own.
    seeds_skipped: u64,
    /// Links and listing entries dropped (domains scope, or a full outbox).
    dropped: u64,
    /// Entries written to another partition's outbox.
    handed_over: u64,
}

impl Handover {
    /// The handover of a runner of `partition`; `open`: open scope.
    pub(crate) fn new(partition: Partition, open: bool) -> Handover {
        Handover {
            partition,
            open,
            ..Handover::default()
        }
    }

    /// Does this runner own `url`'s host?
    pub(crate) fn owns(&self, url: &Url) -> bool {
        self.partition.owns(url)
    }

    /// `url`'s host belongs to another partition: skip, drop or hand it over.
    pub(crate) fn route(&mut self, url: &Url, entry: Entry) {
        let owner = self.partition.owner_of(url);
        let hash = url::seen_hash(url);
        if entry.origin == Origin::Seed {
            // Seeds are queued again at every reseed: count them once.
            if self.seeds.insert(hash) {
                self.seeds_skipped += 1;
                tracing::debug!(%url, %owner, "seed of another partition's host: left to it");
            }
            return;
        }
        if self.open {
            if self.outbox.add(owner, hash, entry) {
                self.handed_over += 1;
                tracing::debug!(%url, %owner, "another partition's host: handed over through its outbox");
            }
            return;
        }
        self.dropped += 1;
        tracing::debug!(%url, %owner, "another partition's host: dropped (domains scope; its owner crawls it)");
    }

    /// Write this run's outbox files for the other partitions.
    pub(crate) fn save(&self, state_dir: &Path, run_id: &str) -> Result<Vec<PathBuf>, StoreError> {
        self.outbox.save(state_dir, run_id)
    }

    pub(crate) fn counts(&self, inbox: usize) -> HandoverCounts {
        let h = self;
        HandoverCounts {
            seeds_skipped: h.seeds_skipped,
            dropped: h.dropped,
            handed_over: h.handed_over,
            inbox,
        }
    }
}
