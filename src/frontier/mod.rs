//! The frontier: a queue per host ranked by value, served round-robin and
//! weighted by yield, with budget pacing. Pure:
//! driven by a clock passed in (`now` = time since the run started), so the whole
//! policy runs in simulation without a runtime.
//!
//! * [`Frontier`] (in `schedule.rs`): per-host queues, gaps, concurrency, pauses and
//!   the yield-weighted rotation between hosts.
//! * `host.rs`: one host's scheduling state and [`HostStats`].
//! * `queue.rs`: one host's queue, stored compactly and free of duplicates.
//! * `weight.rs`: the moving average of a host's hit ratio and the share it earns.
//! * `value.rs`: a queued URL's expected value (its own evidence, and the
//!   chance of a hit given its host's yield).
//! * `pace.rs`: budget pacing, the value a URL must reach when the fetch budget
//!   would run out before the time box.
//! * [`OpenScope`] (in `scope.rs`): which links an open-scope crawl follows, and
//!   which new hosts it gives up on.
//!
//! How the engine drives it (hosts named by [`crate::url::host_key`]):
//!
//! 1. `push` every URL to fetch (`requeue` one handed out but not fetched).
//! 2. Whenever a worker is free, call `next(now)`: `Ready` hands out a URL (the
//!    host now counts one fetch in flight); `Wait(t)` means sleep until `t` or
//!    until a fetch finishes; `Empty` means the crawl has run out of work.
//! 3. Call `sent` when each request to a host goes on the wire (robots.txt too):
//!    gaps are counted from there.
//! 4. Close each handed-out fetch with `finished(outcome)` (a page judged hit or
//!    miss, or an error) or `released` (feeds, sitemaps, 304s: no verdict).
//!    The engine frees the slot with `released` as soon as the answer is read
//!    and gives the verdict later with `verdict`, so parsing does not hold the
//!    host's turn.
//! 5. Call `pace` on every turn with what is left of the budget and the time
//!    box (the `focused` policy declines hosts whose best URL is not worth
//!    the budget; see `pace.rs`).
//! 6. `set_gap` on a Crawl-delay, `pause` on Retry-After, `drop_host` for a host
//!    that robots.txt shuts or that keeps failing; `drain` at the end for
//!    `frontier.jsonl`.
//!
//! Within a host, entries go by tier, then value. The tiers, first to last
//! (`schedule.rs`): seeds (feeds, then pages, then sitemaps), listings, pages
//! by value, the backlog ([`Entry::backlog`]: dated before the host's fresh
//! line), exploration ([`Entry::explore`]: URL families not known to pay).
//! With a budget, backlog and exploration turns wait while the budget left
//! does not exceed the fresh work queued.
//!
//! The simulator in `tests/it/support/sim.rs` runs this loop in virtual time.

use std::time::Duration;

use serde::{Deserialize, Serialize};

mod family;
mod host;
mod pace;
mod queue;
mod schedule;
mod scope;
mod value;
mod weight;

pub(crate) use family::Standing;
pub use family::{FamilyStats, STOP_AFTER};
pub use host::HostStats;
pub use pace::Pace;
pub use schedule::{Frontier, IDLE_RECHECK};
pub use scope::{Admit, OpenScope, ScopeParams, Verdict};
pub(crate) use value::slug_words;
pub use value::{Clues, NEUTRAL, expected, url_value};
pub use weight::Yield;

/// How the frontier chooses (`crawl.frontier_policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    /// Within a host the most valuable URL first; hosts weighted by yield; a
    /// fetch budget that would run out before the time box is paced.
    #[default]
    Focused,
    /// Within a host the most valuable URL first; hosts in plain round-robin;
    /// no pacing (a baseline).
    BestFirst,
    /// Within a host by origin then depth, in arrival order; hosts in plain
    /// round-robin; no pacing (a baseline).
    RoundRobin,
}

pub use crate::record::Kind;

/// Where a URL came from; decides its rank within its host's queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// Configured or `--seed` (never dropped for `max_queue`).
    Seed,
    /// Listed by a feed or sitemap.
    Listed,
    /// Linked from a page that scored relevant.
    Relevant,
    /// Linked from any other page.
    #[default]
    Other,
}

/// One queued URL (also a line of `data/state/frontier.jsonl`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub url: String,
    #[serde(default)]
    pub kind: Kind,
    #[serde(default)]
    pub origin: Origin,
    /// Links away from a seed.
    #[serde(default)]
    pub depth: u32,
    /// Date the listing gave for it (feed entry or sitemap lastmod), RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lastmod: Option<String>,
    /// The URL's own evidence in `[0, 1]` ([`url_value`]); kept in steps of
    /// 1/200 (under `round_robin`, not kept: read back as [`NEUTRAL`]).
    #[serde(default = "neutral", skip_serializing_if = "is_neutral")]
    pub value: f32,
    /// Work from the archive (a listing never read or a page dated before
    /// its host's cut-off, carried over from an earlier day): ranked after
    /// the day's fresh pages, so new items come first.
    #[serde(default, skip_serializing_if = "is_false")]
    pub backlog: bool,
    /// An article already stored that a listing says was modified since:
    /// fetched once, conditionally, and stored again only if its text changed.
    #[serde(default, skip_serializing_if = "is_false")]
    pub update: bool,
    /// Exploration: a page found by a link whose URL family (host and
    /// pattern, see `crate::url::trap::family`) has not shown yet that it
    /// leads to articles. Served after every host's fresh work and backlog;
    /// with `backlog` too, one of a family's first probes, served with the
    /// backlog by its value.
    #[serde(default, skip_serializing_if = "is_false")]
    pub explore: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn neutral() -> f32 {
    NEUTRAL as f32
}

fn is_neutral(v: &f32) -> bool {
    *v == neutral()
}

impl Entry {
    /// An entry with no clues (value [`NEUTRAL`]).
    pub fn new(url: impl Into<String>, kind: Kind, origin: Origin, depth: u32) -> Entry {
        Entry {
            url: url.into(),
            kind,
            origin,
            depth,
            lastmod: None,
            value: neutral(),
            backlog: false,
            update: false,
            explore: false,
        }
    }

    /// Does fetching it read its host as a source (a seed, feed or
    /// sitemap), rather than one more page? A source-level failure keeps
    /// the host's cut-off (`crawl::reach`); a page's failure is kept for the
    /// next run.
    pub(crate) fn reads_source(&self) -> bool {
        self.kind != Kind::Page || self.origin == Origin::Seed
    }
}

/// Scheduling knobs (from `config.crawl`).
#[derive(Debug, Clone)]
pub struct Params {
    pub per_host_concurrency: usize,
    /// Default per-host gap; `set_gap` raises it per host.
    pub min_host_gap: Duration,
    pub warmup_pages: u32,
    pub yield_alpha: f64,
    pub min_host_weight: f64,
    pub max_queue: usize,
    /// How URLs are ranked within a host, whether hosts are weighted by
    /// yield and whether a binding budget is paced.
    pub policy: Policy,
}

impl Default for Params {
    /// The defaults `config.yml` documents (`crawl:` takes them from here).
    fn default() -> Params {
        Params {
            per_host_concurrency: 1,
            min_host_gap: Duration::from_secs(1),
            warmup_pages: 10,
            yield_alpha: 0.1,
            min_host_weight: 0.1,
            max_queue: 1_000_000,
            policy: Policy::Focused,
        }
    }
}

/// What a fetch produced, as the scheduler needs to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A stored article.
    Hit,
    /// Fetched fine, not stored.
    Miss,
    /// Failed (network, 4xx/5xx).
    Error,
}

/// The answer to "what next?".
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// Fetch this now (the host is marked in flight).
    Ready { host: String, entry: Entry },
    /// Nothing is ready before this time, unless a fetch finishes or a URL is
    /// pushed first. When only a finishing fetch can free work (every host with
    /// queued URLs is at its concurrency limit), this is `now + IDLE_RECHECK`.
    Wait(Duration),
    /// Nothing queued and nothing in flight could add more.
    Empty,
}
