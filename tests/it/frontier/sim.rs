//! A simulated web, crawled in virtual time by a small deterministic event loop.
//!
//! Hosts differ in yield (the chance a page is a hit), latency, Crawl-delay,
//! link fan-out, and faults (errors, hangs until a timeout, 429 with
//! Retry-After, hosts that always fail and get rested). Pages are numbered;
//! whether a page is a hit is a fixed function of (host, page), and hits link to
//! other hits more often than chance (topic locality), so serving links from
//! relevant pages first pays off as it does on the real web.
//!
//! The loop plays the engine: up to `concurrency` fetches in flight, a seen-set,
//! `sent` reported a little after `next` handed a URL out, and `drop_host` after
//! `max_failures` consecutive failures. It checks every send against the host's
//! gap and pause, so politeness is verified from `sent` times.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};
use std::time::Duration;

use scraper::frontier::{Entry, Frontier, Kind, Next, Origin, Outcome, Params};

use super::policy::Scheduler;

/// SplitMix64: small, fast, deterministic.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }
    /// Uniform in [0, 1).
    pub fn f64(&mut self) -> f64 {
        (self.u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.f64()
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.u64() % n.max(1)
    }
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// One simulated site.
#[derive(Debug, Clone)]
pub struct HostSpec {
    pub name: String,
    /// Chance that a page (other than the home page) is a hit.
    pub hit_p: f64,
    /// Response time, uniform in (min, max) seconds.
    pub latency: (f64, f64),
    /// robots.txt Crawl-delay, seconds.
    pub crawl_delay: Option<f64>,
    /// Links per page.
    pub fanout: u32,
    /// Pages on the site (page 0 is the home page, the seed).
    pub size: u64,
    pub error_p: f64,
    /// Chance a request hangs until the engine's timeout.
    pub hang_p: f64,
    /// Every n-th request answers 429 with this Retry-After (seconds).
    pub retry_after: Option<(u64, f64)>,
    /// Pages 1..=listed are queued at start as feed/sitemap-listed.
    pub listed: u64,
}

impl HostSpec {
    pub fn new(name: &str, hit_p: f64) -> HostSpec {
        HostSpec {
            name: name.to_string(),
            hit_p,
            latency: (0.2, 1.2),
            crawl_delay: None,
            fanout: 8,
            size: 20_000,
            error_p: 0.0,
            hang_p: 0.0,
            retry_after: None,
            listed: 0,
        }
    }
}

/// How the simulated engine behaves.
#[derive(Debug, Clone)]
pub struct SimConfig {
    pub concurrency: usize,
    /// Fetch budget.
    pub budget: u64,
    /// Virtual time limit, seconds.
    pub max_time: f64,
    pub timeout: f64,
    /// Delay between `next` handing a URL out and the request going out, seconds.
    pub send_delay: (f64, f64),
    pub max_failures: u32,
    /// Topic locality: a link on a hit leads to a chosen hit with chance
    /// `locality * hit_p` (capped at 0.95), else to a random page.
    pub locality: f64,
    pub seed: u64,
    /// Every so many seconds, this many new seed URLs per host (fresh feed items).
    pub reseed: Option<(f64, u64)>,
    /// Most fetches handed out per second (the engine spreading a fetch budget
    /// over its time box); None = as fast as slots allow.
    pub pace: Option<f64>,
}

impl Default for SimConfig {
    fn default() -> SimConfig {
        SimConfig {
            concurrency: 8,
            budget: 3000,
            max_time: 3600.0,
            timeout: 30.0,
            send_delay: (0.0, 0.02),
            max_failures: 5,
            locality: 2.0,
            seed: 7,
            reseed: None,
            pace: None,
        }
    }
}

/// What a simulated crawl did.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub fetches: u64,
    pub hits: u64,
    /// Virtual seconds from start to the last event.
    pub elapsed: f64,
    pub gap_violations: u64,
    pub pause_violations: u64,
    /// Fetches sent to a host after it was dropped.
    pub after_drop: u64,
    pub per_host: Vec<u64>,
    pub hits_per_host: Vec<u64>,
    /// Per host: most fetches (by all hosts) in a row without one from this
    /// host while it had work queued and was not gap-bound or paused.
    pub max_starve: Vec<u64>,
    pub dropped: Vec<bool>,
    /// Largest queue length seen.
    pub max_len: usize,
    /// How the run ended.
    pub ended_empty: bool,
    pub decisions: u64,
    pub seeds_pushed: u64,
    pub seeds_fetched: u64,
    /// What was left queued at the end (drained).
    pub left: Vec<Entry>,
}

impl Report {
    pub fn hits_per_1000(&self) -> f64 {
        1000.0 * self.hits as f64 / self.fetches.max(1) as f64
    }
    pub fn rate(&self) -> f64 {
        self.fetches as f64 / self.elapsed.max(1e-9)
    }
}

pub fn page_url(host: &str, id: u64) -> String {
    if id == 0 {
        format!("https://{host}/")
    } else {
        format!("https://{host}/story/{id}/a-slug-of-typical-length")
    }
}

fn page_id(url: &str) -> u64 {
    url.split('/')
        .nth(4)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// Is page `id` of host `h` a hit? Fixed per (host, page).
fn is_hit(spec: &HostSpec, h: usize, id: u64, seed: u64) -> bool {
    let u = (mix(seed ^ mix(h as u64 + 1) ^ id.wrapping_mul(0x2545_F491_4F6C_DD1D)) >> 11) as f64
        / (1u64 << 53) as f64;
    id != 0 && u < spec.hit_p
}

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

fn dur(secs: f64) -> Duration {
    Duration::from_secs_f64(secs.max(0.0))
}

/// Crawl `web` with `sched`, every host's gap at least `min_gap` seconds (the
/// scheduler must be built with the same default), and report.
pub fn run(web: &[HostSpec], sched: &mut dyn Scheduler, cfg: &SimConfig, min_gap: f64) -> Report {
    let n = web.len();
    let mut rng = Rng::new(cfg.seed);
    let mut seen: HashSet<(usize, u64)> = HashSet::new();
    let mut events: BinaryHeap<Reverse<(Duration, u64, Event)>> = BinaryHeap::new();
    let mut seq = 0u64;
    let mut r = Report {
        per_host: vec![0; n],
        hits_per_host: vec![0; n],
        max_starve: vec![0; n],
        dropped: vec![false; n],
        ..Report::default()
    };
    let mut starve = vec![0u64; n];
    let mut last_sent: Vec<Option<Duration>> = vec![None; n];
    let mut paused = vec![Duration::ZERO; n];
    let mut failures = vec![0u32; n];
    let mut requests = vec![0u64; n];
    let gaps: Vec<Duration> = web
        .iter()
        .map(|s| dur(s.crawl_delay.unwrap_or(0.0).max(min_gap)))
        .collect();
    let index = |host: &str| web.iter().position(|s| s.name == host);
    for (h, spec) in web.iter().enumerate() {
        if let Some(d) = spec.crawl_delay {
            sched.set_gap(&spec.name, dur(d));
        }
        seen.insert((h, 0));
        sched.push(&spec.name, entry(&spec.name, 0, Origin::Seed, 0));
        r.seeds_pushed += 1;
        for id in 1..=spec.listed {
            seen.insert((h, id));
            sched.push(&spec.name, entry(&spec.name, id, Origin::Listed, 1));
        }
    }
    if let Some((every, _)) = cfg.reseed {
        events.push(Reverse((dur(every), 0, Event::Reseed { round: 0 })));
    }
    let mut now = Duration::ZERO;
    let mut in_flight = 0usize;
    let end = dur(cfg.max_time);
    loop {
        // Hand out work while there are free slots and budget.
        let mut wake = None;
        let paced = |fetches: u64| cfg.pace.map(|p| dur(fetches as f64 / p));
        while in_flight < cfg.concurrency && r.fetches < cfg.budget {
            if let Some(t) = paced(r.fetches)
                && t > now
            {
                wake = Some(t);
                break;
            }
            r.decisions += 1;
            match sched.next(now) {
                Next::Ready { host, entry } => {
                    let h = index(&host).expect("a simulated host");
                    in_flight += 1;
                    r.fetches += 1;
                    let at = now + dur(rng.range(cfg.send_delay.0, cfg.send_delay.1));
                    let ev = Event::Send {
                        host: h,
                        id: page_id(&entry.url),
                        depth: entry.depth,
                    };
                    seq += 1;
                    events.push(Reverse((at, seq, ev)));
                    // Starvation bookkeeping: only hosts free to go count.
                    for o in 0..n {
                        if o == h {
                            starve[o] = 0;
                        } else if !r.dropped[o]
                            && sched.queued(&web[o].name) > 0
                            && sched.free(&web[o].name, now)
                        {
                            starve[o] += 1;
                            r.max_starve[o] = r.max_starve[o].max(starve[o]);
                        }
                    }
                }
                Next::Wait(t) => {
                    wake = Some(t);
                    break;
                }
                Next::Empty => break,
            }
        }
        r.max_len = r.max_len.max(sched.len());
        if r.fetches >= cfg.budget && in_flight == 0 {
            break;
        }
        // Advance to the next event or wake-up.
        let next_event = events.peek().map(|Reverse((t, _, _))| *t);
        let t = match (next_event, wake) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) => a,
            (None, Some(b)) => b,
            (None, None) => {
                r.ended_empty = in_flight == 0 && sched.len() == 0;
                break;
            }
        };
        if t > end {
            break;
        }
        now = now.max(t);
        if next_event != Some(t) {
            continue;
        }
        let Some(Reverse((_, _, ev))) = events.pop() else {
            break;
        };
        match ev {
            Event::Reseed { round } => {
                let (every, count) = cfg.reseed.unwrap_or_default();
                for (h, spec) in web.iter().enumerate() {
                    for k in 0..count {
                        let id = spec.size + round * count + k;
                        if !r.dropped[h]
                            && sched.push(&spec.name, entry(&spec.name, id, Origin::Seed, 0))
                        {
                            r.seeds_pushed += 1;
                        }
                    }
                }
                if r.fetches < cfg.budget {
                    seq += 1;
                    let ev = Event::Reseed { round: round + 1 };
                    events.push(Reverse((now + dur(every), seq, ev)));
                }
            }
            Event::Send { host: h, id, depth } => {
                if r.dropped[h] {
                    r.after_drop += 1;
                }
                if let Some(prev) = last_sent[h]
                    && now < prev + gaps[h]
                {
                    r.gap_violations += 1;
                }
                if now < paused[h] {
                    r.pause_violations += 1;
                }
                last_sent[h] = Some(now);
                sched.sent(&web[h].name, now);
                r.per_host[h] += 1;
                requests[h] += 1;
                if id == 0 || id >= web[h].size {
                    r.seeds_fetched += 1;
                }
                let spec = &web[h];
                let (status, latency) =
                    if spec.retry_after.is_some_and(|(k, _)| requests[h] % k == 0) {
                        (Status::TooMany, 0.05)
                    } else if rng.f64() < spec.hang_p {
                        (Status::Error, cfg.timeout)
                    } else if rng.f64() < spec.error_p {
                        (Status::Error, rng.range(spec.latency.0, spec.latency.1))
                    } else {
                        (Status::Ok, rng.range(spec.latency.0, spec.latency.1))
                    };
                seq += 1;
                let done = Event::Done {
                    host: h,
                    id,
                    depth,
                    status,
                };
                events.push(Reverse((now + dur(latency), seq, done)));
            }
            Event::Done {
                host: h,
                id,
                depth,
                status,
            } => {
                in_flight -= 1;
                let spec = &web[h];
                let name = spec.name.as_str();
                match status {
                    Status::TooMany => {
                        let secs = spec.retry_after.map_or(0.0, |(_, s)| s);
                        paused[h] = now + dur(secs);
                        sched.pause(name, paused[h]);
                        sched.finished(name, Outcome::Error, now);
                        let origin = if id == 0 {
                            Origin::Seed
                        } else {
                            Origin::Relevant
                        };
                        sched.push(name, entry(name, id, origin, depth));
                    }
                    Status::Error => {
                        sched.finished(name, Outcome::Error, now);
                        failures[h] += 1;
                        if failures[h] >= cfg.max_failures && !r.dropped[h] {
                            r.dropped[h] = true;
                            sched.drop_host(name);
                        }
                    }
                    Status::Ok => {
                        failures[h] = 0;
                        let hit = is_hit(spec, h, id, cfg.seed);
                        if hit {
                            r.hits += 1;
                            r.hits_per_host[h] += 1;
                        }
                        let outcome = if hit { Outcome::Hit } else { Outcome::Miss };
                        sched.finished(name, outcome, now);
                        let origin = if hit { Origin::Relevant } else { Origin::Other };
                        for _ in 0..spec.fanout {
                            let target = link_target(spec, h, hit, cfg, &mut rng);
                            if seen.insert((h, target)) {
                                sched.push(name, entry(name, target, origin, depth + 1));
                            }
                        }
                    }
                }
            }
        }
    }
    r.elapsed = now.as_secs_f64();
    r.left = sched.drain();
    r
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

pub fn entry(host: &str, id: u64, origin: Origin, depth: u32) -> Entry {
    Entry {
        url: page_url(host, id),
        kind: Kind::Page,
        origin,
        depth,
        lastmod: None,
    }
}

/// Frontier parameters the simulations share.
pub fn params(min_gap: f64) -> Params {
    Params {
        per_host_concurrency: 1,
        min_host_gap: dur(min_gap),
        warmup_pages: 10,
        yield_alpha: 0.1,
        min_host_weight: 0.1,
        max_queue: 1_000_000,
    }
}

/// The frontier with yield weighting switched off (plain round-robin).
pub fn round_robin(min_gap: f64) -> Frontier {
    Frontier::new(Params {
        warmup_pages: u32::MAX,
        ..params(min_gap)
    })
}
