//! The run's work: the frontier and what it consults before it takes a URL
//! or hands one out. It owns the frontier with its slots, the open scope,
//! the seeds, the URLs met in this run (and the child sitemaps a reseed
//! forgets), the trap counts, the partition's handover, the URL families
//! and what they are owed, the requeue tries, the work kept for the next
//! run, and the average fetch time the budget pacing reads.
//!
//! Its rules: a URL is queued at most once a run; a slot freed by an early
//! answer is not freed again when its job closes; a rested host's queue is
//! kept for the next run; a reseed may list a child sitemap again.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use chrono::NaiveDate;

use crate::crawl::handover::Handover;
use crate::frontier::{
    Entry, FamilyStats, Frontier, Next, OpenScope, Outcome, Pace, Standing, Verdict,
};
use crate::source::Sources;
use crate::store::state::families::Families;
use crate::url::Url;
use crate::url::trap::{PatternCount, Trap, TrapRules};

pub(super) struct Work {
    frontier: Frontier,
    /// Admission, page caps and probation for hosts outside the sources.
    open: OpenScope,
    seeds: Vec<Entry>,
    /// URLs queued or fetched in this run (seen hashes).
    this_run: HashSet<u64>,
    /// Child sitemaps queued since the last reseed (seen hashes): a reseed
    /// forgets them from `this_run`, so a re-read index can list them again.
    listed_sitemaps: HashSet<u64>,
    /// Hosts whose robots.txt has been read into the frontier (gap, sitemaps).
    robots_seen: HashSet<String>,
    /// How often each URL (seen hash) was requeued after a Retry-After.
    requeued: HashMap<u64, u8>,
    /// Hosts of other partitions: their URLs are dropped or handed over (`crawl/handover.rs`).
    handover: Handover,
    /// URLs found by links this run, per host and URL pattern (trap cap).
    patterns: PatternCount,
    /// Work this run could not do for a transient reason (robots.txt
    /// unreachable, host rested, a network failure or 5xx): saved with the
    /// queue for the next run.
    kept: Vec<Entry>,
    /// Per host: slots freed by an answer whose job has not closed yet.
    early_freed: HashMap<String, u32>,
    /// What each URL family of each host has yielded (`state/families/`).
    families: Families,
    /// Pages queued from links (seen hash) and the family key of the page
    /// that linked them first (an index into `family_keys`): credited when
    /// they turn out to be articles. One key is shared by every link it
    /// gave, so a queue of linked pages costs 4 bytes a page here, not a string.
    discovered: HashMap<u64, u32>,
    /// The family keys `discovered` names, each once.
    family_keys: Vec<String>,
    family_index: HashMap<String, u32>,
    /// Probes queued this run per family key (see `family.rs`).
    probes: HashMap<String, u32>,
    /// Fresh pages queued from links so far (an HTML listing's read is
    /// useful when it adds some: see `page.rs`).
    fresh_links: u32,
    /// Moving average of a fetch's time from send to read body, seconds (for pacing).
    fetch_secs: f64,
}

/// How a URL came to be pushed (see [`Work::push`]).
pub(super) struct Pushed {
    /// Found by a link on a page.
    pub(crate) by_link: bool,
    /// A fresh page (not backlog, not exploration).
    pub(crate) fresh_page: bool,
    /// A child sitemap a listing gave.
    pub(crate) child_sitemap: bool,
    /// The family key of the linking page, credited if this one is an article.
    pub credit: Option<String>,
}

impl Work {
    pub(super) fn new(
        frontier: Frontier,
        open: OpenScope,
        seeds: Vec<Entry>,
        handover: Handover,
        families: Families,
    ) -> Work {
        Work {
            frontier,
            open,
            seeds,
            handover,
            families,
            this_run: HashSet::new(),
            listed_sitemaps: HashSet::new(),
            robots_seen: HashSet::new(),
            requeued: HashMap::new(),
            patterns: PatternCount::default(),
            kept: Vec::new(),
            early_freed: HashMap::new(),
            discovered: HashMap::new(),
            family_keys: Vec::new(),
            family_index: HashMap::new(),
            probes: HashMap::new(),
            fresh_links: 0,
            fetch_secs: 1.0,
        }
    }

    // --- What may be queued.

    /// Does this partition crawl `url`?
    pub(super) fn owns(&self, url: &Url) -> bool {
        self.handover.owns(url)
    }

    /// Hand `url` to the partition that owns it (or drop it).
    pub(super) fn hand_over(&mut self, url: &Url, entry: Entry) {
        self.handover.route(url, entry);
    }

    /// Was the URL (seen hash) queued, fetched or met in this run?
    pub(super) fn in_run(&self, hash: u64) -> bool {
        self.this_run.contains(&hash)
    }

    /// Count the URL as met in this run (it is not queued again).
    pub(super) fn met(&mut self, hash: u64) {
        self.this_run.insert(hash);
    }

    /// The trap rules for a link found on `from` (`None`: admitted and counted).
    pub(super) fn admit_link(
        &mut self,
        host: &str,
        url: &Url,
        from: &Url,
        rules: &TrapRules,
        today: NaiveDate,
    ) -> Option<Trap> {
        self.patterns.admit_link(host, url, from, rules, today)
    }

    /// May an open-scope crawl fetch `u`?
    pub(super) fn admit_open(&self, sources: &Sources, u: &Url, from_relevant: bool) -> bool {
        let admit = self.open.admit(sources, u, from_relevant);
        tracing::trace!(url = %u, ?admit, "open scope");
        admit.is_yes()
    }

    /// Push an admitted URL (seen hash `hash`) to the frontier. Returns
    /// whether it was queued; then it is met in this run, counted among the
    /// fresh links, owed to its linking page's family, and a child sitemap
    /// is remembered for the next reseed.
    pub(super) fn push(&mut self, host: &str, hash: u64, entry: Entry, how: Pushed) -> bool {
        if !self.frontier.push(host, entry) {
            return false;
        }
        self.fresh_links += u32::from(how.by_link && how.fresh_page);
        self.this_run.insert(hash);
        if let Some(by) = how.credit {
            let next = self.family_keys.len() as u32;
            let id = *self.family_index.entry(by).or_insert_with_key(|k| {
                self.family_keys.push(k.clone());
                next
            });
            self.discovered.insert(hash, id);
        }
        if how.child_sitemap {
            self.listed_sitemaps.insert(hash);
        }
        true
    }

    /// Fresh pages queued from links so far.
    pub(super) fn fresh_links(&self) -> u32 {
        self.fresh_links
    }

    /// A reseed: child sitemaps listed since the last one may be listed again.
    pub(super) fn reseed(&mut self) {
        for hash in std::mem::take(&mut self.listed_sitemaps) {
            self.this_run.remove(&hash);
        }
    }

    /// The seeds, robots.txt sitemaps included.
    pub(super) fn seeds(&self) -> Vec<Entry> {
        self.seeds.clone()
    }

    /// A robots.txt `Sitemap:` becomes a seed (once).
    pub(super) fn add_seed(&mut self, entry: &Entry) {
        if !self.seeds.iter().any(|s| s.url == entry.url) {
            self.seeds.push(entry.clone());
        }
    }

    /// The first robots.txt of `host` in this run? (Its lines are read once.)
    pub(super) fn first_robots(&mut self, host: &str) -> bool {
        self.robots_seen.insert(host.to_string())
    }

    // --- Handing out and closing.

    pub(super) fn next(&mut self, now: Duration) -> Next {
        self.frontier.next(now)
    }

    pub(super) fn is_empty(&self) -> bool {
        self.frontier.is_empty()
    }

    /// URLs waiting in the frontier.
    pub(super) fn len(&self) -> usize {
        self.frontier.len()
    }

    /// Tell the frontier what is left of the run (budget pacing), at
    /// `concurrency` slots over the average fetch time.
    pub(super) fn pace(
        &mut self,
        budget_left: u64,
        time_left: Duration,
        concurrency: usize,
        now: Duration,
    ) {
        let p = Pace {
            budget_left,
            time_left,
            slot_rate: concurrency as f64 / self.fetch_secs.max(0.005),
        };
        self.frontier.pace(p, now);
    }

    /// A request to `host` went out at `sent` (the gap counts from it).
    pub(super) fn sent(&mut self, host: &str, sent: Duration) {
        self.frontier.sent(host, sent);
    }

    /// A worker's early answer: its fetch took `took` (the average moves),
    /// its request went out at `sent`, and unless `hold` (an open-scope host
    /// keeps its turn until the verdict) the host's slot is free while the
    /// body is parsed.
    pub(super) fn answered(
        &mut self,
        host: String,
        sent: Duration,
        took: Duration,
        hold: bool,
        now: Duration,
    ) {
        self.fetch_secs += 0.05 * (took.as_secs_f64() - self.fetch_secs);
        self.frontier.sent(&host, sent);
        if hold {
            return;
        }
        self.frontier.released(&host, now);
        *self.early_freed.entry(host).or_default() += 1;
    }

    /// A job of `host` whose URL does not parse: an error for the host.
    pub(super) fn unfetchable(&mut self, host: &str, now: Duration) {
        self.frontier.finished(host, Outcome::Error, now);
    }

    /// A job of `host` was not started: its slot is free.
    pub(super) fn released(&mut self, host: &str, now: Duration) {
        self.frontier.released(host, now);
    }

    /// Close a job of `host`: its verdict (if any), and its slot unless an
    /// early answer freed it already (slots are counted per host: any of
    /// the host's jobs may take one freed early).
    pub(super) fn close(&mut self, host: &str, outcome: Option<Outcome>, now: Duration) {
        let freed = match self.early_freed.get_mut(host) {
            Some(n) if *n > 0 => {
                *n -= 1;
                true
            }
            _ => false,
        };
        match (freed, outcome) {
            (false, Some(o)) => self.frontier.finished(host, o, now),
            (false, None) => self.frontier.released(host, now),
            (true, Some(o)) => self.frontier.verdict(host, o),
            (true, None) => {}
        }
    }

    /// A job that was never sent goes back to the frontier (for `--resume`).
    pub(super) fn put_back(&mut self, host: &str, hash: u64, entry: Entry) {
        self.this_run.remove(&hash);
        self.frontier.push(host, entry);
    }

    /// How often the URL was requeued after a Retry-After.
    pub(super) fn tries(&self, hash: u64) -> u8 {
        self.requeued.get(&hash).copied().unwrap_or(0)
    }

    /// Asked to come back later: the URL goes back, one try more.
    pub(super) fn requeue(&mut self, host: &str, hash: u64, entry: Entry) {
        *self.requeued.entry(hash).or_default() += 1;
        self.frontier.requeue(host, entry);
    }

    /// Hold `host` back until `until` (a Retry-After).
    pub(super) fn pause(&mut self, host: &str, until: Duration) {
        self.frontier.pause(host, until);
    }

    /// The host's gap between requests (its Crawl-delay).
    pub(super) fn set_gap(&mut self, host: &str, gap: Duration) {
        self.frontier.set_gap(host, gap);
    }

    /// Open scope: the outcome of a fetch of `host`; `Some` when the host
    /// leaves the crawl (capped, failed probation), with the URLs dropped.
    pub(super) fn open_verdict(
        &mut self,
        sources: &Sources,
        host: &str,
        outcome: Outcome,
    ) -> Option<(Verdict, usize)> {
        let verdict = self.open.record(sources, host, outcome);
        if verdict == Verdict::Keep {
            return None;
        }
        Some((verdict, self.frontier.drop_host(host)))
    }

    // --- The next run's share.

    /// Keep work for the next run.
    pub(super) fn keep(&mut self, entry: Entry) {
        self.kept.push(entry);
    }

    /// Rest `host` for the rest of the run: its queue is kept for the next.
    /// Returns how many entries were kept.
    pub(super) fn rest_host(&mut self, host: &str) -> usize {
        let kept = self.frontier.take_host(host);
        let n = kept.len();
        self.kept.extend(kept);
        n
    }

    /// The end of the run: the frontier drained, and the work kept.
    pub(super) fn leftover(&mut self) -> (Vec<Entry>, Vec<Entry>) {
        (self.frontier.drain(), std::mem::take(&mut self.kept))
    }

    /// The work kept for the next run so far.
    #[cfg(test)]
    pub(super) fn kept(&self) -> &[Entry] {
        &self.kept
    }

    pub(super) fn handover(&self) -> &Handover {
        &self.handover
    }

    // --- URL families.

    /// The standing of a family on `day`.
    pub(super) fn standing(&self, key: &str, day: u32) -> Standing {
        self.families
            .get(key)
            .map_or(Standing::Unknown, |s| s.standing(day))
    }

    /// One more probe of a family not known to pay, if it has had fewer
    /// than `max` this run. Returns whether this is one.
    pub(super) fn probe(&mut self, key: String, max: u32) -> bool {
        let probes = self.probes.entry(key).or_default();
        if *probes >= max {
            return false;
        }
        *probes += 1;
        true
    }

    /// The family a URL (seen hash) is owed to, once.
    pub(super) fn owed(&mut self, hash: u64) -> Option<String> {
        let id = self.discovered.remove(&hash)?;
        self.family_keys.get(id as usize).cloned()
    }

    /// Teach a family.
    pub(super) fn family(&mut self, key: &str, f: impl FnOnce(&mut FamilyStats)) {
        self.families.update(key, f);
    }

    pub(super) fn families(&self) -> &Families {
        &self.families
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::frontier::{Kind, Origin};
    use crate::url;

    fn work() -> Work {
        let c = Config::default().crawl;
        let handover = Handover::new(crate::partition::Partition::default(), false);
        let frontier = Frontier::new(c.frontier_params());
        let open = OpenScope::new(c.scope_params());
        Work::new(frontier, open, vec![], handover, Families::default())
    }

    /// Push `u` as a page, or as a child sitemap a listing gave.
    fn push(w: &mut Work, u: &str, kind: Kind) -> u64 {
        let hash = url::seen_hash(&url::parse(u).unwrap());
        let origin = if kind == Kind::Page {
            Origin::Seed
        } else {
            Origin::Listed
        };
        let how = Pushed {
            by_link: false,
            fresh_page: false,
            child_sitemap: kind == Kind::Sitemap,
            credit: None,
        };
        assert!(w.push(
            "a.test",
            hash,
            Entry::new(u.to_string(), kind, origin, 0),
            how
        ));
        hash
    }

    fn ready(w: &mut Work, at_secs: u64) -> bool {
        matches!(w.next(Duration::from_secs(at_secs)), Next::Ready { .. })
    }

    #[test]
    fn a_slot_freed_by_an_early_answer_is_not_freed_again_when_its_job_closes() {
        let mut w = work();
        for p in ["/1", "/2", "/3"] {
            push(&mut w, &format!("https://a.test{p}"), Kind::Page);
        }
        // One request at a time per host (the default).
        assert!(ready(&mut w, 0));
        assert!(!ready(&mut w, 100), "a second job while the first runs");
        // The first job's answer frees its slot while its body is parsed...
        let secs = Duration::from_secs;
        w.answered("a.test".into(), secs(0), secs(1), false, secs(1));
        assert!(ready(&mut w, 200), "the freed slot is not taken");
        // ...so its close frees nothing: the second job still holds the slot.
        w.close("a.test", Some(Outcome::Miss), secs(300));
        assert!(!ready(&mut w, 400), "a slot freed twice");
        w.close("a.test", Some(Outcome::Miss), secs(500));
        assert!(ready(&mut w, 600));
        assert!(w.is_empty());
    }

    #[test]
    fn a_url_is_queued_once_a_run_and_a_reseed_lists_child_sitemaps_again() {
        let mut w = work();
        let page = push(&mut w, "https://a.test/p", Kind::Page);
        let child = push(&mut w, "https://a.test/s.xml", Kind::Sitemap);
        assert!(w.in_run(page) && w.in_run(child));
        w.reseed();
        assert!(w.in_run(page), "a reseed forgets only child sitemaps");
        assert!(!w.in_run(child));
        let e = Entry::new("https://a.test/q".to_string(), Kind::Page, Origin::Seed, 0);
        w.put_back("a.test", page, e);
        assert!(!w.in_run(page), "a job put back may be queued again");
    }
}
