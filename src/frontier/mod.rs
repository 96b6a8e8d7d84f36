//! The frontier: a queue per host, served round-robin and weighted by yield. Pure:
//! driven by a clock passed in (`now` = time since the run started), so the whole
//! policy runs in simulation without a runtime.
//!
//! OWNER: scheduling work (issue 5). This is the interface; bodies are placeholders.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// What a URL is expected to be, so the engine knows how to read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    #[default]
    Page,
    Feed,
    Sitemap,
}

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
    /// Nothing is ready before this time.
    Wait(Duration),
    /// Nothing queued and nothing in flight could add more.
    Empty,
}

/// Per-host queues and the rotation between them.
#[derive(Debug, Default)]
pub struct Frontier {
    _params: Option<Params>,
}

impl Frontier {
    pub fn new(params: Params) -> Frontier {
        Frontier {
            _params: Some(params),
        }
    }

    /// Queue a URL for `host`. Returns false when it was refused (host dropped, queue full).
    pub fn push(&mut self, _host: &str, _entry: Entry) -> bool {
        false
    }

    /// The next URL to fetch at `now`, honouring per-host gaps, concurrency and weights.
    pub fn next(&mut self, _now: Duration) -> Next {
        Next::Empty
    }

    /// A request to `host` actually went on the wire at `sent_at` (gaps count from here).
    pub fn sent(&mut self, _host: &str, _sent_at: Duration) {}

    /// A fetch handed out by `next` ended.
    pub fn finished(&mut self, _host: &str, _outcome: Outcome, _now: Duration) {}

    /// Raise a host's gap (robots.txt Crawl-delay).
    pub fn set_gap(&mut self, _host: &str, _gap: Duration) {}

    /// Hold a host back until `until` (Retry-After).
    pub fn pause(&mut self, _host: &str, _until: Duration) {}

    /// Take a host out of the rotation for the rest of the run; returns its dropped entries' count.
    pub fn drop_host(&mut self, _host: &str) -> usize {
        0
    }

    /// URLs queued.
    pub fn len(&self) -> usize {
        0
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Remove and return everything queued (to save for `--resume`).
    pub fn drain(&mut self) -> Vec<Entry> {
        vec![]
    }
}
