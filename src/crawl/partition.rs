//! URLs for hosts of other partitions (`--partition i/N`): seeds are left to
//! their owner (which has the same config); links, listing entries and
//! redirect targets are dropped in `domains` scope (the owner finds them from
//! its own seeds) and handed to their owner through `state/outbox/` in `open`
//! scope. Everything is counted in the run summary.

use crate::record::HandoverCounts;

use super::engine::Engine;
use crate::config::Scope;
use crate::frontier::{Entry, Origin};
use crate::store::outbox::{Inbox, Outbox};
use crate::url::{self, Url};

/// What happened to other partitions' URLs in this run.
#[derive(Debug, Default)]
pub struct Handover {
    pub outbox: Outbox,
    /// Seeds of hosts this runner does not own.
    pub seeds_skipped: u64,
    /// Links and listing entries dropped (domains scope, or a full outbox).
    pub dropped: u64,
    /// Entries written to another partition's outbox.
    pub handed_over: u64,
}

impl Engine {
    /// `url`'s host belongs to another partition: skip, drop or hand it over.
    pub(super) fn hand_over(&mut self, url: &Url, entry: Entry) {
        let owner = self.ctx.partition.owner_of(url);
        if entry.origin == Origin::Seed {
            // Seeds are queued again at every reseed: count them once.
            if self.sets.this_run.insert(url::seen_hash(url)) {
                self.sets.handover.seeds_skipped += 1;
                tracing::debug!(%url, %owner, "seed of another partition's host: left to it");
            }
            return;
        }
        let h = &mut self.sets.handover;
        if self.config.crawl.scope == Scope::Open {
            if h.outbox.add(owner, url::seen_hash(url), entry) {
                h.handed_over += 1;
                tracing::debug!(%url, %owner, "another partition's host: handed over through its outbox");
            }
            return;
        }
        h.dropped += 1;
        tracing::debug!(%url, %owner, "another partition's host: dropped (domains scope; its owner crawls it)");
    }

    /// Queue what other partitions left in this partition's outbox.
    pub fn take_inbox(&mut self, inbox: &Inbox) -> usize {
        let mut queued = 0;
        for entry in &inbox.entries {
            if let Some(u) = url::parse(&entry.url)
                && self.enqueue(&u, entry.clone())
            {
                queued += 1;
            }
        }
        queued
    }
}

impl Handover {
    pub fn counts(&self, inbox: usize) -> HandoverCounts {
        let h = self;
        HandoverCounts {
            seeds_skipped: h.seeds_skipped,
            dropped: h.dropped,
            handed_over: h.handed_over,
            inbox,
        }
    }
}
