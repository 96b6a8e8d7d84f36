//! The scheduling simulator: a deterministic event loop in virtual time that
//! drives a [`Scheduler`] (the frontier, or a baseline policy) over a
//! simulated web, hands out work, reports each request's outcome as `Hit`,
//! `Miss` or `Error`, and checks politeness from the times requests went out.
//! It measures scheduling policies; it is not the crawl engine, and it holds
//! none of the engine's result handling: what the engine does with a failed
//! fetch or a status is `scraper`'s own `crawl::outcome` (`error_plan`,
//! `status_plan`), unit-tested there.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};
use std::time::Duration;

use scraper::frontier::{Clues, Next, OpenScope, Origin, Outcome, Pace, Verdict, url_value};
use scraper::source::Sources as SourceScope;
use scraper::url::parse;

use super::policy::Scheduler;
use super::sim::{HostSpec, Report, Rng, SimConfig, entry, is_hit, page_id, page_url};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// The request for a handed-out URL goes on the wire.
    Send { host: usize, id: u64, depth: u32 },
    /// The response is in.
    Done {
        host: usize,
        id: u64,
        depth: u32,
        status: Status,
    },
    /// Fresh seeds appear.
    Reseed { round: u64 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Status {
    Ok,
    Error,
    TooMany,
}

pub fn dur(secs: f64) -> Duration {
    Duration::from_secs_f64(secs.max(0.0))
}

/// Open-scope admission for a run: the scope and the configured sources.
pub struct Open {
    pub scope: OpenScope,
    pub sources: SourceScope,
}

struct Sim<'a> {
    web: &'a [HostSpec],
    cfg: &'a SimConfig,
    sched: &'a mut dyn Scheduler,
    open: Option<&'a mut Open>,
    rng: Rng,
    seen: HashSet<(usize, u64)>,
    events: BinaryHeap<Reverse<(Duration, u64, Event)>>,
    seq: u64,
    now: Duration,
    in_flight: usize,
    r: Report,
    starve: Vec<u64>,
    last_sent: Vec<Option<Duration>>,
    paused: Vec<Duration>,
    failures: Vec<u32>,
    requests: Vec<u64>,
    gaps: Vec<Duration>,
}

/// Crawl `web` with `sched`, every host's gap at least `min_gap` seconds (the
/// scheduler must be built with the same default), and report. Hosts with
/// `seeded` start with their home page (and `listed` pages) queued.
pub fn run(web: &[HostSpec], sched: &mut dyn Scheduler, cfg: &SimConfig, min_gap: f64) -> Report {
    run_open(web, sched, cfg, min_gap, None)
}

/// [`run`], with links to other hosts admitted by `open` (when given).
pub fn run_open(
    web: &[HostSpec],
    sched: &mut dyn Scheduler,
    cfg: &SimConfig,
    min_gap: f64,
    open: Option<&mut Open>,
) -> Report {
    let n = web.len();
    let mut sim = Sim {
        web,
        cfg,
        sched,
        open,
        rng: Rng::new(cfg.seed),
        seen: HashSet::new(),
        events: BinaryHeap::new(),
        seq: 0,
        now: Duration::ZERO,
        in_flight: 0,
        r: Report {
            per_host: vec![0; n],
            hits_per_host: vec![0; n],
            max_starve: vec![0; n],
            seeds_per_host: vec![0; n],
            dropped: vec![false; n],
            ..Report::default()
        },
        starve: vec![0; n],
        last_sent: vec![None; n],
        paused: vec![Duration::ZERO; n],
        failures: vec![0; n],
        requests: vec![0; n],
        gaps: web
            .iter()
            .map(|s| dur(s.crawl_delay.unwrap_or(0.0).max(min_gap)))
            .collect(),
    };
    sim.start();
    sim.run();
    sim.r.elapsed = sim.now.as_secs_f64();
    sim.r.left = sim.sched.drain();
    sim.r
}

impl Sim<'_> {
    fn at(&mut self, t: Duration, ev: Event) {
        self.seq += 1;
        self.events.push(Reverse((t, self.seq, ev)));
    }

    fn start(&mut self) {
        for (h, spec) in self.web.iter().enumerate() {
            if let Some(d) = spec.crawl_delay {
                self.sched.set_gap(&spec.name, dur(d));
            }
            if !spec.seeded {
                continue;
            }
            self.seen.insert((h, 0));
            self.sched
                .push(&spec.name, entry(&spec.name, 0, Origin::Seed, 0));
            self.r.seeds_pushed += 1;
            for id in 1..=spec.listed {
                self.seen.insert((h, id));
                self.sched
                    .push(&spec.name, entry(&spec.name, id, Origin::Listed, 1));
            }
        }
        if let Some((every, _)) = self.cfg.reseed {
            self.at(dur(every), Event::Reseed { round: 0 });
        }
    }

    fn run(&mut self) {
        let end = dur(self.cfg.max_time);
        loop {
            let wake = self.hand_out();
            self.r.max_len = self.r.max_len.max(self.sched.len());
            if self.r.fetches >= self.cfg.budget && self.in_flight == 0 {
                return;
            }
            let next_event = self.events.peek().map(|Reverse((t, _, _))| *t);
            let t = match (next_event, wake) {
                (Some(a), Some(b)) => a.min(b),
                (Some(a), None) => a,
                (None, Some(b)) => b,
                (None, None) => {
                    self.r.ended_empty = self.in_flight == 0 && self.sched.len() == 0;
                    return;
                }
            };
            if t > end {
                return;
            }
            self.now = self.now.max(t);
            if next_event != Some(t) {
                continue;
            }
            if let Some(Reverse((_, _, ev))) = self.events.pop() {
                match ev {
                    Event::Reseed { round } => self.reseed(round),
                    Event::Send { host, id, depth } => self.send(host, id, depth),
                    Event::Done {
                        host,
                        id,
                        depth,
                        status,
                    } => self.done(host, id, depth, status),
                }
            }
        }
    }

    /// Hand out work while slots, budget and pace allow; returns when to look again.
    fn hand_out(&mut self) -> Option<Duration> {
        while self.in_flight < self.cfg.concurrency && self.r.fetches < self.cfg.budget {
            if let Some(p) = self.cfg.pace {
                let t = dur(self.r.fetches as f64 / p);
                if t > self.now {
                    return Some(t);
                }
            }
            if self.cfg.budget_pacing {
                let p = Pace {
                    budget_left: self.cfg.budget - self.r.fetches,
                    time_left: dur(self.cfg.max_time).saturating_sub(self.now),
                    slot_rate: self.cfg.concurrency as f64 / 0.7,
                };
                self.sched.pace(p, self.now);
            }
            self.r.decisions += 1;
            match self.sched.next(self.now) {
                Next::Ready { host, entry } => {
                    let h = self.index(&host);
                    self.in_flight += 1;
                    self.r.fetches += 1;
                    let delay = self.rng.range(self.cfg.send_delay.0, self.cfg.send_delay.1);
                    let ev = Event::Send {
                        host: h,
                        id: page_id(&entry.url),
                        depth: entry.depth,
                    };
                    self.at(self.now + dur(delay), ev);
                    if self.cfg.track_starvation {
                        self.count_starvation(h);
                    }
                }
                Next::Wait(t) => return Some(t),
                Next::Empty => return None,
            }
        }
        None
    }

    /// Per host: fetches by others in a row while it had work and was free to go.
    fn count_starvation(&mut self, picked: usize) {
        for o in 0..self.web.len() {
            if o == picked {
                self.starve[o] = 0;
            } else if !self.r.dropped[o]
                && self.sched.queued(&self.web[o].name) > 0
                && self.sched.free(&self.web[o].name, self.now)
            {
                self.starve[o] += 1;
                self.r.max_starve[o] = self.r.max_starve[o].max(self.starve[o]);
            }
        }
    }

    fn index(&self, host: &str) -> usize {
        self.web
            .iter()
            .position(|s| s.name == host)
            .unwrap_or_else(|| panic!("{host} is not a simulated host"))
    }

    fn reseed(&mut self, round: u64) {
        let (every, count) = self.cfg.reseed.unwrap_or_default();
        for (h, spec) in self.web.iter().enumerate() {
            for k in 0..count {
                let id = spec.size + round * count + k;
                if spec.seeded
                    && !self.r.dropped[h]
                    && self
                        .sched
                        .push(&spec.name, entry(&spec.name, id, Origin::Seed, 0))
                {
                    self.r.seeds_pushed += 1;
                }
            }
        }
        if self.r.fetches < self.cfg.budget {
            self.at(self.now + dur(every), Event::Reseed { round: round + 1 });
        }
    }

    fn send(&mut self, h: usize, id: u64, depth: u32) {
        let now = self.now;
        if self.r.dropped[h] {
            self.r.after_drop += 1;
        }
        if self.last_sent[h].is_some_and(|prev| now < prev + self.gaps[h]) {
            self.r.gap_violations += 1;
        }
        if now < self.paused[h] {
            self.r.pause_violations += 1;
        }
        self.last_sent[h] = Some(now);
        let spec = &self.web[h];
        self.sched.sent(&spec.name, now);
        self.r.per_host[h] += 1;
        self.requests[h] += 1;
        if id == 0 || id >= spec.size {
            self.r.seeds_fetched += 1;
            self.r.seeds_per_host[h] += 1;
        }
        let rng = &mut self.rng;
        let (status, latency) = if spec
            .retry_after
            .is_some_and(|(k, _)| self.requests[h].is_multiple_of(k))
        {
            (Status::TooMany, 0.05)
        } else if rng.f64() < spec.hang_p {
            (Status::Error, self.cfg.timeout)
        } else if rng.f64() < spec.error_p {
            (Status::Error, rng.range(spec.latency.0, spec.latency.1))
        } else {
            (Status::Ok, rng.range(spec.latency.0, spec.latency.1))
        };
        let done = Event::Done {
            host: h,
            id,
            depth,
            status,
        };
        self.at(now + dur(latency), done);
    }

    fn done(&mut self, h: usize, id: u64, depth: u32, status: Status) {
        self.in_flight -= 1;
        let now = self.now;
        let spec = &self.web[h];
        let name = spec.name.as_str();
        let outcome = match status {
            Status::TooMany => {
                let secs = spec.retry_after.map_or(0.0, |(_, s)| s);
                self.paused[h] = now + dur(secs);
                self.sched.pause(name, self.paused[h]);
                let origin = if id == 0 {
                    Origin::Seed
                } else {
                    Origin::Relevant
                };
                self.sched.finished(name, Outcome::Error, now);
                self.sched.push(name, entry(name, id, origin, depth));
                return;
            }
            Status::Error => {
                self.failures[h] += 1;
                Outcome::Error
            }
            Status::Ok => {
                self.failures[h] = 0;
                if is_hit(spec, h, id, self.cfg.seed) {
                    Outcome::Hit
                } else {
                    Outcome::Miss
                }
            }
        };
        self.sched.finished(name, outcome, now);
        if outcome == Outcome::Hit {
            self.r.hits += 1;
            self.r.hits_per_host[h] += 1;
        }
        let mut drop = self.failures[h] >= self.cfg.max_failures;
        if let Some(open) = self.open.as_deref_mut() {
            drop |= open.scope.record(&open.sources, name, outcome) != Verdict::Keep;
        }
        if drop && !self.r.dropped[h] {
            self.r.dropped[h] = true;
            self.sched.drop_host(name);
        }
        if status == Status::Ok {
            self.follow_links(h, depth, outcome == Outcome::Hit);
        }
    }

    fn follow_links(&mut self, h: usize, depth: u32, hit: bool) {
        let spec = &self.web[h];
        let origin = if hit { Origin::Relevant } else { Origin::Other };
        for _ in 0..spec.fanout {
            let to = if self.web.len() > 1 && self.rng.f64() < spec.outlinks {
                let o = self.rng.below(self.web.len() as u64 - 1) as usize;
                if o >= h { o + 1 } else { o }
            } else {
                h
            };
            let target = link_target(&self.web[to], to, hit, self.cfg, &mut self.rng);
            let name = &self.web[to].name;
            if let Some(open) = self.open.as_deref()
                && let Some(url) = parse(&page_url(name, target))
                && !open.scope.admit(&open.sources, &url, hit).is_yes()
            {
                continue;
            }
            if self.seen.insert((to, target)) {
                let mut e = entry(name, target, origin, depth + 1);
                if self.cfg.anchors > 0.0 {
                    let target_hit = is_hit(&self.web[to], to, target, self.cfg.seed);
                    e.value = anchor_value(target_hit, hit, self.cfg.anchors, &mut self.rng);
                }
                self.sched.push(name, e);
            }
        }
    }
}

/// The value the crawl would give a link whose anchor says something with
/// chance `anchors` (see `SimConfig::anchors`).
fn anchor_value(target_hit: bool, parent_relevant: bool, anchors: f64, rng: &mut Rng) -> f32 {
    let mut c = Clues {
        parent_relevant,
        ..Clues::default()
    };
    if rng.f64() < anchors {
        let says_topic = target_hit != (rng.f64() < 0.1);
        c.text_known = true;
        c.text = if says_topic { 0.5 } else { 0.0 };
    }
    url_value(&c) as f32
}

fn link_target(spec: &HostSpec, h: usize, from_hit: bool, cfg: &SimConfig, rng: &mut Rng) -> u64 {
    let pick = |rng: &mut Rng| 1 + rng.below(spec.size - 1);
    if from_hit && rng.f64() < (cfg.locality * spec.hit_p).min(0.95) {
        for _ in 0..50 {
            let id = pick(rng);
            if is_hit(spec, h, id, cfg.seed) {
                return id;
            }
        }
    }
    pick(rng)
}
