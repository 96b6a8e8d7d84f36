//! The scheduler: which host goes next, and when.
//!
//! Each host with queued work is in one of three states: *waiting* (for its gap
//! or a pause to run out; a min-heap on the time it becomes ready), *ready* (a
//! min-heap on its stride-scheduling pass), or *busy* (at its concurrency limit,
//! or handed a URL whose request has not been reported `sent` yet, so its gap
//! cannot be counted). A host leaves the ready heap only when picked, so a host
//! that cannot go never holds up the others: the rule is work-conserving.
//!
//! Stride scheduling: a picked host's pass advances by `1 / weight`, and the
//! ready host with the lowest pass goes next, so hosts get turns in proportion
//! to their weights. A host returning from a wait starts no lower than the
//! current virtual time (the pass of the last pick), so time spent waiting
//! earns no burst afterwards.
//!
//! No host starves: weights lie in `[min_host_weight, 1]`, so over any run of
//! `warmup_pages × hosts` turns each ready host gets about
//! `warmup_pages × min_host_weight` of them, at least one with the defaults
//! (10 × 0.1).
//!
//! Within a host, entries are ranked by [`Class`]: under the value policies
//! (`focused`, `best_first`) seeds first (feeds, then pages such as a home
//! page, then sitemaps), then the feeds and sitemaps listings gave, then pages
//! by value (best first), then the archive's backlog ([`Entry::backlog`]) by
//! value, then exploration ([`Entry::explore`]), each by depth; under
//! `round_robin` by origin (seed, listed, linked from a relevant page, other)
//! then depth. First in, first out within a class.
//!
//! Fresh before backlog across the whole run (value policies): a host whose
//! best entry is fresh work (a seed, a listing, a page of the day) is served
//! before any host whose best is backlog or exploration, whatever their
//! weights; weights share out turns only among hosts of one group. And while
//! budget pacing is on, a backlog or exploration turn is taken only when the
//! budget left exceeds the fresh work still queued, so the day's news is
//! never priced out by the archive.
//!
//! Budget pacing (`focused` only, see `pace.rs`): `pace` sets a threshold on
//! the expected value of a page; a picked host whose best entry is a page
//! below it is *declined* (out of the rotation, not rescheduled) until the
//! next `pace` or a push of a better entry. Seeds, feeds and sitemaps are
//! never declined, so every host still has its seeds and listings read.
//!
//! Heap entries carry a stamp; any change to a host bumps its stamp, and stale
//! entries are skipped when they surface (and swept if the heaps grow large).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap};
use std::time::Duration;

use super::host::{Host, HostStats, ReadyKey};
use super::pace::{Offers, Pace};
use super::queue::{Class, Refused, band_value, value_band};
use super::value::{expected, host_yield};
use super::weight::weight;
use super::{Entry, Kind, NEUTRAL, Next, Origin, Outcome, Params, Policy};

/// Tiers of seeds under the value policies: feeds, then pages (a home
/// page), then sitemaps (never shed).
const SEED_TIERS: u8 = 3;
/// Tier of the feeds and sitemaps listings gave.
const LISTING_TIER: u8 = 3;
/// Tier of pages under the value policies (below seeds and listings).
const PAGE_TIER: u8 = 4;
/// Tier of the archive's backlog (listings never read, pages dated before
/// their host's cut-off): after the day's fresh pages, valued like pages.
const BACKLOG_TIER: u8 = 5;
/// Tier of exploration: pages of a URL family not yet known to pay.
const EXPLORE_TIER: u8 = 6;

/// How far ahead `next` says to look again when only a finishing fetch can free
/// work (see [`Next::Wait`]).
pub const IDLE_RECHECK: Duration = Duration::from_secs(1);

/// The best host's average is searched for again after this many verdicts.
const BEST_RESCAN_EVERY: u32 = 64;

/// Hosts compared when choosing where to shed an entry past `max_queue`.
const SHED_SAMPLE: usize = 16;

/// Per-host queues and the rotation between them.
#[derive(Debug, Default)]
pub struct Frontier {
    params: Params,
    hosts: Vec<Host>,
    index: HashMap<Box<str>, u32>,
    /// URLs queued, over all hosts.
    len: usize,
    in_flight: usize,
    /// Entries dropped (or refused) because of `max_queue`.
    shed: u64,
    ready: BinaryHeap<ReadyKey>,
    /// (ready at, host, stamp)
    waiting: BinaryHeap<Reverse<(Duration, u32, u32)>>,
    /// Pass of the last pick.
    vtime: f64,
    /// Best moving-average hit ratio among warm hosts.
    best: f64,
    best_host: Option<u32>,
    since_rescan: u32,
    /// Which hosts hold entries of each class (to shed the lowest first).
    classes: BTreeMap<Class, BTreeSet<u32>>,
    /// Where the next search for a host to shed from starts.
    shed_cursor: u32,
    /// Budget pacing: the expected value a page needs (0: everything goes).
    threshold: f64,
    /// Hosts declined by pacing.
    declined: Vec<u32>,
    /// Budget left at the last `pace` (`None`: no budget pacing).
    budget_left: Option<u64>,
    /// Fresh entries (seeds, listings, the day's pages) queued at the last
    /// `pace`, plus one per host holding them (its robots.txt, a redirect).
    fresh_queued: u64,
}

impl Frontier {
    pub fn new(params: Params) -> Frontier {
        Frontier {
            params,
            ..Frontier::default()
        }
    }

    /// Queue a URL for `host`. Returns false when it was refused (host dropped,
    /// already queued, queue full of better entries, URL over 64 KiB).
    ///
    /// Past `max_queue`, the lowest-ranked entry over all hosts is shed (from the
    /// host holding most of that rank); seeds are never shed, so seeds can take
    /// the queue past `max_queue`.
    pub fn push(&mut self, host: &str, entry: Entry) -> bool {
        self.insert(host, entry, false)
    }

    /// Put back a URL that `next` handed out but that was not fetched (robots.txt
    /// had to be fetched first, or a 429 asked to come back later): it goes ahead
    /// of its rank, so it keeps its place. The fetch still has to be closed with
    /// `released` (or `finished`).
    pub fn requeue(&mut self, host: &str, entry: Entry) -> bool {
        self.insert(host, entry, true)
    }

    fn insert(&mut self, host: &str, entry: Entry, front: bool) -> bool {
        let id = self.host_id(host);
        let h = &mut self.hosts[id as usize];
        if h.dropped {
            return false;
        }
        let class = self.class_of(&entry);
        let was_fresh = self.group_of(id) == 0;
        let h = &mut self.hosts[id as usize];
        let mut pushed = if front {
            h.queue.push_front(host, &entry, class)
        } else {
            h.queue.push(host, &entry, class)
        };
        if pushed == Err(Refused::Duplicate) && entry.origin == Origin::Seed {
            // A seed already queued as a link takes the seed's rank (and so can
            // never be shed).
            if let Some((old, emptied)) = h.queue.remove_worse(host, &entry.url, class) {
                self.len -= 1;
                if emptied {
                    self.forget_class(id, old);
                }
                pushed = self.hosts[id as usize].queue.push(host, &entry, class);
            }
        }
        let h = &mut self.hosts[id as usize];
        let was_empty = h.queue.len() == usize::from(pushed.is_ok());

        let Ok(new_class) = pushed else {
            return false;
        };
        self.len += 1;
        if new_class {
            self.classes.entry(class).or_default().insert(id);
        }
        if was_empty {
            self.schedule(id);
        } else if self.hosts[id as usize].declined && !self.held_back(id) {
            self.hosts[id as usize].declined = false;
            self.schedule(id);
        } else if !was_fresh && self.group_of(id) == 0 {
            // Its first fresh entry: it now goes before the backlog hosts.
            self.schedule(id);
        }
        let mut kept = true;
        while self.len > self.params.max_queue {
            match self.shed_one() {
                Some(shed) if shed == (id, class) => kept = false,
                Some(_) => {}
                None => break,
            }
        }
        kept
    }

    /// The next URL to fetch at `now`, honouring per-host gaps, concurrency and weights.
    pub fn next(&mut self, now: Duration) -> Next {
        self.promote(now);
        while let Some(key) = self.ready.pop() {
            let id = key.id;
            let h = &self.hosts[id as usize];
            if h.stamp != key.stamp {
                continue;
            }
            let w = self.weight_of(h);
            if key.group != self.group_of(id) {
                // Its best entry changed group while it waited: file it again.
                self.schedule(id);
                self.promote(now);
                continue;
            }
            if self.held_back(id) {
                let h = &mut self.hosts[id as usize];
                h.declined = true;
                h.stamp = h.stamp.wrapping_add(1);
                self.declined.push(id);
                tracing::debug!(host = %h.name, threshold = self.threshold, budget_left = ?self.budget_left, fresh_queued = self.fresh_queued, "pacing: host declined; its best URL is backlog the budget must keep for fresh work, or worth less than the budget buys elsewhere");
                continue;
            }
            let h = &mut self.hosts[id as usize];
            let Some((entry, emptied)) = h.queue.pop_best(&h.name) else {
                continue;
            };
            let start = h.pass.max(self.vtime);
            self.vtime = start;
            h.pass = start + 1.0 / w;
            h.in_flight += 1;
            h.unsent += 1;
            let host = h.name.to_string();
            self.in_flight += 1;
            self.len -= 1;
            if emptied {
                let class = self.class_of(&entry);
                self.forget_class(id, class);
            }
            self.schedule(id);
            return Next::Ready { host, entry };
        }
        while let Some(&Reverse((at, id, stamp))) = self.waiting.peek() {
            if self.hosts[id as usize].stamp == stamp {
                return Next::Wait(at);
            }
            self.waiting.pop();
        }
        if self.in_flight > 0 || self.len > 0 {
            Next::Wait(now + IDLE_RECHECK)
        } else {
            Next::Empty
        }
    }

    /// A request to `host` actually went on the wire at `sent_at` (gaps count
    /// from here). Report every request to the host, robots.txt included; a
    /// request made outside `next` (robots.txt) does not take a slot, so after
    /// it send the handed-out URL no earlier than the host's gap, or `requeue`
    /// it and call `released`.
    pub fn sent(&mut self, host: &str, sent_at: Duration) {
        let id = self.host_id(host);
        let h = &mut self.hosts[id as usize];
        h.unsent = h.unsent.saturating_sub(1);
        h.last_sent = Some(h.last_sent.map_or(sent_at, |t| t.max(sent_at)));
        self.schedule(id);
    }

    /// A fetch handed out by `next` ended; `outcome` feeds the host's yield.
    /// The same as `released` then `verdict`.
    pub fn finished(&mut self, host: &str, outcome: Outcome, now: Duration) {
        if self.release(host, now).is_some() {
            self.verdict(host, outcome);
        }
    }

    /// The verdict on a fetch whose slot was already freed with `released`
    /// (its body was read, then parsed without holding the host's turn).
    pub fn verdict(&mut self, host: &str, outcome: Outcome) {
        let Some(&id) = self.index.get(host) else {
            return;
        };
        let alpha = self.params.yield_alpha;
        let h = &mut self.hosts[id as usize];
        h.yields.record(outcome, alpha);
        if h.yields.warm(self.params.warmup_pages) {
            if h.yields.ema >= self.best {
                self.best = h.yields.ema;
                self.best_host = Some(id);
            } else if self.best_host == Some(id) {
                self.rescan_best();
            }
        }
        self.since_rescan += 1;
        if self.since_rescan >= BEST_RESCAN_EVERY {
            self.rescan_best();
        }
    }

    /// A fetch handed out by `next` ended without a verdict on the host's yield
    /// (a feed, a sitemap, a 304), or its answer is in and the verdict comes
    /// later (`verdict`): frees the slot, leaves the average alone.
    pub fn released(&mut self, host: &str, now: Duration) {
        self.release(host, now);
    }

    /// Budget pacing (the `focused` policy; a no-op otherwise): set the
    /// threshold from what is left of the run (see `pace.rs`), and give
    /// declined hosts another look.
    pub fn pace(&mut self, p: Pace, now: Duration) {
        if self.params.policy != Policy::Focused {
            return;
        }
        let secs = p.time_left.as_secs_f64();
        let alpha = self.params.yield_alpha;
        let mut offers = Offers::default();
        let mut fresh = 0u64;
        for h in &self.hosts {
            if h.dropped || h.queue.is_empty() {
                continue;
            }
            let gap = h.gap.as_secs_f64();
            let paused = h.paused_until.saturating_sub(now).as_secs_f64();
            let cap = if gap > 0.0 {
                ((secs - paused).max(0.0) / gap).ceil()
            } else {
                f64::INFINITY
            };
            let y = host_yield(&h.yields, alpha);
            let mut must = 0;
            let mut groups = Vec::new();
            let mut fresh_here = 0;
            for ((tier, band, _), n) in h.queue.class_lens() {
                if tier < BACKLOG_TIER {
                    fresh_here += n as u64;
                }
                if tier < PAGE_TIER {
                    must += n;
                } else {
                    groups.push((expected(f64::from(band_value(band)), y), n));
                }
            }
            if fresh_here > 0 {
                fresh += fresh_here + 1;
            }
            offers.add_host(cap, must, groups.into_iter());
        }
        self.fresh_queued = fresh;
        self.budget_left = Some(p.budget_left);
        let threshold = offers.threshold(&p);
        if (threshold - self.threshold).abs() > 1e-9 {
            tracing::debug!(
                threshold,
                budget_left = p.budget_left,
                time_left_s = secs,
                "pacing: threshold"
            );
        }
        self.threshold = threshold;
        for id in std::mem::take(&mut self.declined) {
            let h = &mut self.hosts[id as usize];
            if h.declined {
                h.declined = false;
                self.schedule(id);
            }
        }
    }

    /// The current pacing threshold (0: nothing is declined).
    pub fn threshold(&self) -> f64 {
        self.threshold
    }

    /// Raise a host's gap (robots.txt Crawl-delay). Never below `min_host_gap`.
    pub fn set_gap(&mut self, host: &str, gap: Duration) {
        let id = self.host_id(host);
        self.hosts[id as usize].gap = gap.max(self.params.min_host_gap);
        self.schedule(id);
    }

    /// Hold a host back until `until` (Retry-After).
    pub fn pause(&mut self, host: &str, until: Duration) {
        let id = self.host_id(host);
        let h = &mut self.hosts[id as usize];
        h.paused_until = h.paused_until.max(until);
        self.schedule(id);
    }

    /// Take a host out of the rotation for the rest of the run; returns its
    /// dropped entries' count. Later pushes for it are refused; fetches in flight
    /// may still report `sent` and `finished`.
    pub fn drop_host(&mut self, host: &str) -> usize {
        let id = self.host_id(host);
        let h = &mut self.hosts[id as usize];
        h.dropped = true;
        let (count, classes) = h.queue.clear();
        for class in classes {
            self.forget_class(id, class);
        }
        self.len -= count;
        self.schedule(id);
        if self.best_host == Some(id) {
            self.rescan_best();
        }
        count
    }

    /// [`Frontier::drop_host`], but hand the dropped entries back (best
    /// first) so they can be kept for the next run: a host whose robots.txt
    /// is unreachable today keeps its work.
    pub(crate) fn take_host(&mut self, host: &str) -> Vec<Entry> {
        let id = self.host_id(host);
        let mut out = Vec::new();
        let h = &mut self.hosts[id as usize];
        let classes = h.queue.classes();
        h.queue.drain_into(&h.name, &mut out);
        for class in classes {
            self.forget_class(id, class);
        }
        self.len -= out.len();
        // Nothing is left to clear: this marks the host dropped and reschedules it.
        self.drop_host(host);
        out
    }

    /// Is `host` out of the rotation for the rest of the run?
    pub fn is_dropped(&self, host: &str) -> bool {
        self.index
            .get(host)
            .is_some_and(|&id| self.hosts[id as usize].dropped)
    }

    /// URLs queued.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Fetches handed out and not finished yet.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Entries dropped, or refused, because the queue was at `max_queue`.
    pub fn shed(&self) -> u64 {
        self.shed
    }

    /// What the frontier knows about `host`.
    pub fn host_stats(&self, host: &str) -> Option<HostStats> {
        let &id = self.index.get(host)?;
        Some(self.stats_of(&self.hosts[id as usize]))
    }

    /// Every host seen this run, with its stats.
    pub fn hosts(&self) -> impl Iterator<Item = (&str, HostStats)> {
        self.hosts.iter().map(|h| (&*h.name, self.stats_of(h)))
    }

    /// Approximate heap bytes held by the queues (URL text, handles, dedup sets).
    pub fn heap_bytes(&self) -> usize {
        self.hosts
            .iter()
            .map(|h| h.queue.heap_bytes() + h.name.len() + std::mem::size_of::<Host>())
            .sum()
    }

    /// Remove and return everything queued (to save for `--resume`), host by
    /// host, best first within a host.
    pub fn drain(&mut self) -> Vec<Entry> {
        let mut out = Vec::with_capacity(self.len);
        for id in 0..self.hosts.len() {
            let h = &mut self.hosts[id];
            h.queue.drain_into(&h.name, &mut out);
            self.schedule(id as u32);
        }
        self.classes.clear();
        self.len = 0;
        out
    }

    fn stats_of(&self, h: &Host) -> HostStats {
        HostStats {
            queued: h.queue.len(),
            in_flight: h.in_flight as usize,
            gap: h.gap,
            last_sent: h.last_sent,
            paused_until: h.paused_until,
            ready_at: h.ready_at(),
            dropped: h.dropped,
            yields: h.yields,
            weight: self.weight_of(h),
            declined: h.declined,
        }
    }

    fn weight_of(&self, h: &Host) -> f64 {
        let p = &self.params;
        if p.policy != Policy::Focused {
            return 1.0;
        }
        weight(&h.yields, self.best, p.warmup_pages, p.min_host_weight)
    }

    /// An entry's rank within its host under the policy (see the module docs).
    fn class_of(&self, e: &Entry) -> Class {
        match self.params.policy {
            Policy::RoundRobin => {
                let tier = match e.origin {
                    Origin::Seed => 0,
                    Origin::Listed => 1,
                    Origin::Relevant => 2,
                    Origin::Other => 3,
                };
                (tier, value_band(NEUTRAL as f32), e.depth)
            }
            Policy::Focused | Policy::BestFirst => {
                if e.origin == Origin::Seed {
                    // Feeds first, then pages (a home page), then sitemaps:
                    // the first listing to bring a URL is credited with it.
                    let tier = match e.kind {
                        Kind::Feed => 0,
                        Kind::Page => 1,
                        Kind::Sitemap => 2,
                    };
                    return (tier, value_band(e.value), e.depth);
                }
                // Exploration marked backlog too is a family's first probes:
                // served with the backlog (by its value), not after it.
                let tier = if e.explore && !e.backlog {
                    EXPLORE_TIER
                } else if e.backlog {
                    BACKLOG_TIER
                } else if e.kind != Kind::Page {
                    LISTING_TIER
                } else {
                    PAGE_TIER
                };
                (tier, value_band(e.value), e.depth)
            }
        }
    }

    /// Is the host's best entry a page worth less than the pacing threshold?
    fn below_threshold(&self, id: u32) -> bool {
        if self.threshold <= 0.0 {
            return false;
        }
        let h = &self.hosts[id as usize];
        match h.queue.best_class() {
            Some((tier, band, _)) if tier >= PAGE_TIER => {
                let y = host_yield(&h.yields, self.params.yield_alpha);
                expected(f64::from(band_value(band)), y) < self.threshold
            }
            _ => false,
        }
    }

    /// 0 when the host's best entry is fresh work, 1 when it is backlog or
    /// exploration (under `round_robin`, always 0: one group).
    fn group_of(&self, id: u32) -> u8 {
        if self.params.policy == Policy::RoundRobin {
            return 0;
        }
        match self.hosts[id as usize].queue.best_class() {
            Some((tier, _, _)) if tier >= BACKLOG_TIER => 1,
            _ => 0,
        }
    }

    /// Is the host left out of the rotation for now: its best entry is
    /// backlog while the budget left is needed for fresh work, or a page
    /// below the pacing threshold?
    fn held_back(&self, id: u32) -> bool {
        let reserved = self
            .budget_left
            .is_some_and(|left| left <= self.fresh_queued);
        (reserved && self.group_of(id) == 1) || self.below_threshold(id)
    }

    fn host_id(&mut self, host: &str) -> u32 {
        if let Some(&id) = self.index.get(host) {
            return id;
        }
        // More than 4 billion hosts cannot be held in memory anyway.
        let id = u32::try_from(self.hosts.len()).unwrap_or(u32::MAX);
        self.hosts.push(Host {
            name: host.into(),
            gap: self.params.min_host_gap,
            pass: self.vtime,
            ..Host::default()
        });
        self.index.insert(host.into(), id);
        id
    }

    fn release(&mut self, host: &str, _now: Duration) -> Option<u32> {
        let &id = self.index.get(host)?;
        let h = &mut self.hosts[id as usize];
        if h.in_flight == 0 {
            return None;
        }
        h.in_flight -= 1;
        h.unsent = h.unsent.min(h.in_flight);
        self.in_flight -= 1;
        self.schedule(id);
        Some(id)
    }

    /// A host's state may have changed: invalidate its heap entries and, if it
    /// has work and a free slot, put it in the waiting heap.
    fn schedule(&mut self, id: u32) {
        let h = &mut self.hosts[id as usize];
        h.stamp = h.stamp.wrapping_add(1);
        let slots = self.params.per_host_concurrency.max(1) as u32;
        if h.dropped || h.declined || h.queue.is_empty() || h.in_flight >= slots || h.unsent > 0 {
            return;
        }
        self.waiting.push(Reverse((h.ready_at(), id, h.stamp)));
        if self.waiting.len() > 4 * self.hosts.len() + 1024 {
            self.sweep();
        }
    }

    /// Move hosts whose time has come from the waiting heap to the ready heap.
    fn promote(&mut self, now: Duration) {
        while let Some(&Reverse((at, id, stamp))) = self.waiting.peek() {
            if at > now {
                break;
            }
            self.waiting.pop();
            let group = self.group_of(id);
            let h = &mut self.hosts[id as usize];
            if h.stamp == stamp {
                h.pass = h.pass.max(self.vtime);
                self.ready.push(ReadyKey {
                    group,
                    pass: h.pass,
                    id,
                    stamp,
                });
            }
        }
        if self.ready.len() > 4 * self.hosts.len() + 1024 {
            self.sweep();
        }
    }

    /// Drop stale heap entries.
    fn sweep(&mut self) {
        let hosts = &self.hosts;
        self.waiting
            .retain(|Reverse((_, id, stamp))| hosts[*id as usize].stamp == *stamp);
        self.ready.retain(|k| hosts[k.id as usize].stamp == k.stamp);
    }

    fn forget_class(&mut self, id: u32, class: Class) {
        if let Some(set) = self.classes.get_mut(&class) {
            set.remove(&id);
            if set.is_empty() {
                self.classes.remove(&class);
            }
        }
    }

    /// Drop the newest entry of the lowest class (never a seed), from the host
    /// holding most of that class among up to `SHED_SAMPLE` hosts taken in
    /// rotation. Returns (host, class), or None if only seeds are queued.
    fn shed_one(&mut self) -> Option<(u32, Class)> {
        let (&class, set) = self.classes.last_key_value()?;
        let seeds = match self.params.policy {
            Policy::RoundRobin => 1,
            Policy::Focused | Policy::BestFirst => SEED_TIERS,
        };
        if class.0 < seeds {
            return None;
        }
        let hosts = &self.hosts;
        let cursor = self.shed_cursor;
        let &id = set
            .range(cursor..)
            .chain(set.range(..cursor))
            .take(SHED_SAMPLE)
            .max_by_key(|&&id| hosts[id as usize].queue.class_len(class))?;
        self.shed_cursor = id.wrapping_add(1);
        let emptied = self.hosts[id as usize].queue.discard_newest(class)?;
        self.len -= 1;
        self.shed += 1;
        if emptied {
            self.forget_class(id, class);
        }
        if self.hosts[id as usize].queue.is_empty() {
            self.schedule(id);
        }
        Some((id, class))
    }

    fn rescan_best(&mut self) {
        self.since_rescan = 0;
        let warmup = self.params.warmup_pages;
        let mut best = (0.0, None);
        for (id, h) in self.hosts.iter().enumerate() {
            let live = !h.dropped && (!h.queue.is_empty() || h.in_flight > 0);
            if live && h.yields.warm(warmup) && h.yields.ema > best.0 {
                best = (h.yields.ema, Some(id as u32));
            }
        }
        (self.best, self.best_host) = best;
    }
}
