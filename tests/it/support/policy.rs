//! The schedulers a simulation can run: the frontier itself, the frontier with
//! its within-host ranks flattened, and plain breadth-first (one global FIFO,
//! with the same gaps, pauses and per-host concurrency).

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::Duration;

use scraper::frontier::{Entry, Frontier, Next, Origin, Outcome, Pace};

/// What the simulated engine needs from a scheduler.
pub trait Scheduler {
    fn push(&mut self, host: &str, entry: Entry) -> bool;
    fn next(&mut self, now: Duration) -> Next;
    fn sent(&mut self, host: &str, at: Duration);
    fn finished(&mut self, host: &str, outcome: Outcome, now: Duration);
    fn set_gap(&mut self, host: &str, gap: Duration);
    fn pause(&mut self, host: &str, until: Duration);
    fn drop_host(&mut self, host: &str) -> usize;
    fn len(&self) -> usize;
    /// URLs queued for `host`.
    fn queued(&self, host: &str) -> usize;
    fn drain(&mut self) -> Vec<Entry>;
    /// Could `host` be sent a request at `now` (no fetch in flight, gap and pause over)?
    fn free(&self, host: &str, now: Duration) -> bool;
    /// Budget pacing (only the frontier paces).
    fn pace(&mut self, _p: Pace, _now: Duration) {}
}

impl Scheduler for Frontier {
    fn push(&mut self, host: &str, entry: Entry) -> bool {
        Frontier::push(self, host, entry)
    }
    fn next(&mut self, now: Duration) -> Next {
        Frontier::next(self, now)
    }
    fn sent(&mut self, host: &str, at: Duration) {
        Frontier::sent(self, host, at)
    }
    fn finished(&mut self, host: &str, outcome: Outcome, now: Duration) {
        Frontier::finished(self, host, outcome, now)
    }
    fn set_gap(&mut self, host: &str, gap: Duration) {
        Frontier::set_gap(self, host, gap)
    }
    fn pause(&mut self, host: &str, until: Duration) {
        Frontier::pause(self, host, until)
    }
    fn drop_host(&mut self, host: &str) -> usize {
        Frontier::drop_host(self, host)
    }
    fn len(&self) -> usize {
        Frontier::len(self)
    }
    fn drain(&mut self) -> Vec<Entry> {
        Frontier::drain(self)
    }
    fn queued(&self, host: &str) -> usize {
        self.host_stats(host).map_or(0, |s| s.queued)
    }
    fn pace(&mut self, p: Pace, now: Duration) {
        Frontier::pace(self, p, now)
    }
    fn free(&self, host: &str, now: Duration) -> bool {
        self.host_stats(host)
            .is_some_and(|s| s.in_flight == 0 && s.ready_at <= now)
    }
}

/// The frontier with every non-seed entry pushed at one rank: first in, first
/// out within a host.
pub struct Flat(pub Frontier);

impl Scheduler for Flat {
    fn push(&mut self, host: &str, mut entry: Entry) -> bool {
        if entry.origin != Origin::Seed {
            entry.origin = Origin::Other;
            entry.depth = 1;
            entry.value = scraper::frontier::NEUTRAL as f32;
        }
        self.0.push(host, entry)
    }
    fn next(&mut self, now: Duration) -> Next {
        self.0.next(now)
    }
    fn sent(&mut self, host: &str, at: Duration) {
        self.0.sent(host, at)
    }
    fn finished(&mut self, host: &str, outcome: Outcome, now: Duration) {
        self.0.finished(host, outcome, now)
    }
    fn set_gap(&mut self, host: &str, gap: Duration) {
        self.0.set_gap(host, gap)
    }
    fn pause(&mut self, host: &str, until: Duration) {
        self.0.pause(host, until)
    }
    fn drop_host(&mut self, host: &str) -> usize {
        self.0.drop_host(host)
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn drain(&mut self) -> Vec<Entry> {
        self.0.drain()
    }
    fn queued(&self, host: &str) -> usize {
        Scheduler::queued(&self.0, host)
    }
    fn free(&self, host: &str, now: Duration) -> bool {
        Scheduler::free(&self.0, host, now)
    }
}

#[derive(Default)]
struct FifoHost {
    queue: VecDeque<(u64, Entry)>,
    in_flight: bool,
    unsent: bool,
    last_sent: Option<Duration>,
    gap: Duration,
    paused: Duration,
    dropped: bool,
}

impl FifoHost {
    fn ready_at(&self) -> Duration {
        self.last_sent
            .map_or(Duration::ZERO, |t| t + self.gap)
            .max(self.paused)
    }
}

/// Plain breadth-first: the oldest queued URL whose host may go, goes.
pub struct Fifo {
    min_gap: Duration,
    hosts: HashMap<String, FifoHost>,
    queued: HashSet<String>,
    seq: u64,
    len: usize,
    in_flight: usize,
}

impl Fifo {
    pub fn new(min_gap: Duration) -> Fifo {
        Fifo {
            min_gap,
            hosts: HashMap::new(),
            queued: HashSet::new(),
            seq: 0,
            len: 0,
            in_flight: 0,
        }
    }

    fn host(&mut self, host: &str) -> &mut FifoHost {
        let gap = self.min_gap;
        self.hosts
            .entry(host.to_string())
            .or_insert_with(|| FifoHost {
                gap,
                ..FifoHost::default()
            })
    }
}

impl Scheduler for Fifo {
    fn push(&mut self, host: &str, entry: Entry) -> bool {
        if self.host(host).dropped || !self.queued.insert(entry.url.clone()) {
            return false;
        }
        self.seq += 1;
        let seq = self.seq;
        self.host(host).queue.push_back((seq, entry));
        self.len += 1;
        true
    }
    fn next(&mut self, now: Duration) -> Next {
        let mut best: Option<(u64, &str)> = None;
        let mut wait: Option<Duration> = None;
        for (name, h) in &self.hosts {
            let Some((seq, _)) = h.queue.front() else {
                continue;
            };
            if h.in_flight || h.unsent {
                continue;
            }
            if h.ready_at() > now {
                wait = Some(wait.map_or(h.ready_at(), |w| w.min(h.ready_at())));
            } else if best.is_none_or(|(s, _)| *seq < s) {
                best = Some((*seq, name));
            }
        }
        if let Some((_, name)) = best {
            let name = name.to_string();
            let h = self.hosts.get_mut(&name).expect("just found");
            let (_, entry) = h.queue.pop_front().expect("non-empty");
            h.in_flight = true;
            h.unsent = true;
            self.queued.remove(&entry.url);
            self.len -= 1;
            self.in_flight += 1;
            return Next::Ready { host: name, entry };
        }
        match wait {
            Some(t) => Next::Wait(t),
            None if self.in_flight > 0 || self.len > 0 => Next::Wait(now + Duration::from_secs(1)),
            None => Next::Empty,
        }
    }
    fn sent(&mut self, host: &str, at: Duration) {
        let h = self.host(host);
        h.unsent = false;
        h.last_sent = Some(at);
    }
    fn finished(&mut self, host: &str, _outcome: Outcome, _now: Duration) {
        let h = self.host(host);
        h.in_flight = false;
        h.unsent = false;
        self.in_flight -= 1;
    }
    fn set_gap(&mut self, host: &str, gap: Duration) {
        let min = self.min_gap;
        self.host(host).gap = gap.max(min);
    }
    fn pause(&mut self, host: &str, until: Duration) {
        let h = self.host(host);
        h.paused = h.paused.max(until);
    }
    fn drop_host(&mut self, host: &str) -> usize {
        let h = self.host(host);
        h.dropped = true;
        let gone: Vec<_> = h.queue.drain(..).map(|(_, e)| e.url).collect();
        for url in &gone {
            self.queued.remove(url);
        }
        self.len -= gone.len();
        gone.len()
    }
    fn len(&self) -> usize {
        self.len
    }
    fn drain(&mut self) -> Vec<Entry> {
        self.len = 0;
        self.queued.clear();
        self.hosts
            .values_mut()
            .flat_map(|h| h.queue.drain(..).map(|(_, e)| e))
            .collect()
    }
    fn queued(&self, host: &str) -> usize {
        self.hosts.get(host).map_or(0, |h| h.queue.len())
    }
    fn free(&self, host: &str, now: Duration) -> bool {
        self.hosts
            .get(host)
            .is_some_and(|h| !h.in_flight && h.ready_at() <= now)
    }
}
