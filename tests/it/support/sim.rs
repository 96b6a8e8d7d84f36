//! A simulated web, crawled in virtual time by a small deterministic event loop
//! (`sim_engine.rs`).
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

use scraper::frontier::{Entry, Frontier, Kind, Origin, Params};

use super::sim_engine::dur;

pub use super::rng::{Rng, mix};

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
    /// Queued at start (a configured source); else only reached by links.
    pub seeded: bool,
    /// Chance that a link leads to another host of the web.
    pub outlinks: f64,
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
            seeded: true,
            outlinks: 0.0,
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
    /// Keep `Report::max_starve` (costs a look at every host per fetch).
    pub track_starvation: bool,
    /// Most fetches handed out per second (the engine spreading a fetch budget
    /// over its time box); None = as fast as slots allow.
    pub pace: Option<f64>,
    /// Tell the scheduler the budget and time left before every hand-out (as
    /// the crawl engine does; only the `focused` frontier acts on it).
    pub budget_pacing: bool,
    /// Anchor text: with this chance a link's anchor says what its page is
    /// about (a topic term on a hit, known off-topic words on a miss, each
    /// wrong 10% of the time); otherwise it says nothing. 0: no clues.
    pub anchors: f64,
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
            track_starvation: false,
            budget_pacing: false,
            anchors: 0.0,
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
    /// host while it had work queued and was not gap-bound or paused
    /// (with `SimConfig::track_starvation`).
    pub max_starve: Vec<u64>,
    pub dropped: Vec<bool>,
    /// Largest queue length seen.
    pub max_len: usize,
    /// How the run ended.
    pub ended_empty: bool,
    pub decisions: u64,
    pub seeds_pushed: u64,
    pub seeds_fetched: u64,
    /// Per host: seeds fetched.
    pub seeds_per_host: Vec<u64>,
    /// What was left queued at the end (drained).
    pub left: Vec<Entry>,
}

impl Report {
    /// Add another run's counts (same web) to these.
    pub fn merge(&mut self, o: &Report) {
        self.fetches += o.fetches;
        self.hits += o.hits;
        self.elapsed += o.elapsed;
        self.gap_violations += o.gap_violations;
        self.pause_violations += o.pause_violations;
        self.after_drop += o.after_drop;
        let add = |a: &mut Vec<u64>, b: &[u64]| {
            a.resize(a.len().max(b.len()), 0);
            a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
        };
        add(&mut self.per_host, &o.per_host);
        add(&mut self.seeds_per_host, &o.seeds_per_host);
        self.seeds_pushed += o.seeds_pushed;
        self.seeds_fetched += o.seeds_fetched;
        add(&mut self.hits_per_host, &o.hits_per_host);
        self.max_starve
            .resize(o.max_starve.len().max(self.max_starve.len()), 0);
        for (x, y) in self.max_starve.iter_mut().zip(&o.max_starve) {
            *x = (*x).max(*y);
        }
    }

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

pub fn page_id(url: &str) -> u64 {
    url.split('/')
        .nth(4)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// Is page `id` of host `h` a hit? Fixed per (host, page).
pub fn is_hit(spec: &HostSpec, h: usize, id: u64, seed: u64) -> bool {
    let u = (mix(seed ^ mix(h as u64 + 1) ^ id.wrapping_mul(0x2545_F491_4F6C_DD1D)) >> 11) as f64
        / (1u64 << 53) as f64;
    id != 0 && u < spec.hit_p
}

pub fn entry(host: &str, id: u64, origin: Origin, depth: u32) -> Entry {
    Entry {
        url: page_url(host, id),
        kind: Kind::Page,
        origin,
        depth,
        lastmod: None,
        value: match origin {
            Origin::Seed | Origin::Other => 0.3,
            Origin::Listed => 0.5,
            Origin::Relevant => 0.4,
        },
        backlog: false,
        update: false,
        explore: false,
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
        policy: scraper::frontier::Policy::Focused,
    }
}

/// The frontier with yield weighting switched off (plain round-robin).
pub fn round_robin(min_gap: f64) -> Frontier {
    Frontier::new(Params {
        warmup_pages: u32::MAX,
        ..params(min_gap)
    })
}
