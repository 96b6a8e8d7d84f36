//! `config.yml`'s `crawl:` section: limits, politeness, scheduling, traps,
//! and what the crawl keeps; checked by [`Crawl::validate`] on load.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{FrontierPolicy, Scope, Span, WebBotAuth};
use crate::date::MinLastmod;
use crate::frontier::{Params, ScopeParams};
use crate::net::NetOptions;

/// Crawl limits, politeness and scheduling.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Crawl {
    /// Fetches in flight across all hosts.
    pub concurrency: usize,
    /// Fetches in flight to one host.
    pub per_host_concurrency: usize,
    /// Minimum time between two requests to one host (raised by robots.txt Crawl-delay).
    pub min_host_gap: Span,
    /// Upper bound on the gap a Crawl-delay may impose.
    pub max_crawl_delay: Span,
    /// Fetch budget: every request counts (robots, feeds, sitemaps, 304s). 0 = unlimited.
    pub max_pages: u64,
    /// Stop after this many stored articles. 0 = unlimited.
    pub max_hits: u64,
    /// Time box for the run. 0 = unlimited.
    pub max_duration: Span,
    /// Grace period for in-flight fetches after a stop.
    pub stop_grace: Span,
    /// Skip feed/sitemap entries older than this: a date, an RFC 3339 time, `auto` or empty.
    pub min_lastmod: MinLastmod,
    /// The date `min_lastmod` held in the file when `--min-lastmod auto`
    /// replaced it: `auto` never reaches back before it (not a key of its own).
    #[serde(skip)]
    pub min_lastmod_floor: Option<DateTime<Utc>>,
    /// Subtracted from the last run's start when `min_lastmod` is `auto`.
    pub lastmod_overlap: Span,
    /// Non-hit pages (home, section, tag) are fetched again after this many days.
    pub revisit_after_days: u32,
    /// URLs that failed for good (404, 410, redirect loop, too many
    /// redirects, too large, not HTML) are fetched again after this many days.
    pub retry_failed_after_days: u32,
    /// Seeds are fetched again this often during a run.
    pub reseed_every_secs: u64,
    /// Fetches per host before its yield weight applies.
    pub warmup_pages: u32,
    /// Smoothing of the per-host hit-ratio moving average (0..1, weight of the newest fetch).
    pub yield_alpha: f64,
    /// No host gets fewer turns than this share of the best host's.
    pub min_host_weight: f64,
    /// Most URLs held in the queue; past it the lowest-priority entries are dropped.
    pub max_queue: usize,
    /// How the frontier ranks URLs and hosts, and whether it paces the budget.
    pub frontier_policy: FrontierPolicy,
    /// Most links followed away from a seed.
    pub max_depth: u32,
    pub scope: Scope,
    /// The share of hosts this runner crawls when a crawl is split across
    /// runners: `i/N` (0-based); `0/1` crawls every host.
    pub partition: crate::partition::Partition,
    /// Hosts (and their subdomains) never fetched in open scope.
    pub deny_hosts: Vec<String>,
    /// Most pages fetched from one host outside `sources` in one run (open scope).
    pub host_page_cap: u64,
    /// Fetches after which a host outside `sources` must show `host_min_hit_ratio`.
    pub host_probation_pages: u64,
    pub host_min_hit_ratio: f64,
    /// Consecutive failures after which a host is rested for the rest of the run.
    pub host_max_failures: u32,
    /// Fetch hosts that are, or resolve to, loopback, private or link-local
    /// addresses (off: the crawler is never a tool against its own network).
    pub allow_private_addresses: bool,
    /// Largest body accepted on the wire (compressed), in bytes.
    pub max_raw_bytes: u64,
    /// Largest body accepted after decompression, in bytes.
    pub max_body_bytes: u64,
    /// Most body bytes held in memory by all fetches together (decoded
    /// buffers until parsed); a fetch past it waits for room. 0 = no budget.
    pub max_body_bytes_in_flight: u64,
    /// Pages and listings parsed at once (parsing takes a few times a
    /// page's size; the parser's own caps bound each one).
    pub parse_concurrency: usize,
    /// Largest robots.txt read (RFC 9309 asks for at least 500 KiB).
    pub max_robots_bytes: u64,
    /// `/.well-known/tdmrep.json` (or its absence) answered this many days
    /// ago or less is reused without asking (0 = ask every run).
    pub tdmrep_refresh_days: u32,
    pub max_redirects: usize,
    pub connect_timeout: Span,
    /// Longest wait for any single read of the body.
    pub read_timeout: Span,
    /// Longest a whole request may take.
    pub request_timeout: Span,
    /// Longest a 429/503 Retry-After may rest a host before it is given up for the run.
    pub max_retry_after: Span,
    pub user_agent: String,
    /// Web Bot Auth: sign every request (absent: requests are not signed).
    pub web_bot_auth: Option<WebBotAuth>,
    /// First id when no `data/state/next_id` exists (continues legacy numbering).
    pub first_id: i64,
    pub ai_use_policy: AiUsePolicy,
    /// The use this crawl makes of the pages (`train-ai` or `search`), which
    /// every AI-use signal is checked against.
    pub ai_usage: AiUsage,
    /// Pages not free to read: `store`, `flag` or `skip` (see [`PaywalledText`]).
    pub paywalled_text: PaywalledText,
    /// Which raw responses go to `data/warc/<run-id>.warc.gz` (see `crate::store::warc`).
    pub archive: Archive,
    /// How often the shard writer closes a zstd frame, at the latest.
    pub flush_every: Span,
    /// Limits against crawler traps (see `crate::url::trap`).
    pub traps: Traps,
    /// Rendering in headless Chromium (see `crate::render`).
    pub render: super::render::Render,
}

/// `crawl.traps`: general rules against crawler traps; 0 turns one off.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Traps {
    /// Longest URL queued, in bytes.
    pub(crate) max_url_bytes: usize,
    /// Most query parameters in a queued URL.
    pub(crate) max_query_params: usize,
    /// Most times one path segment may occur in a path (`/a/b/a/b/a/b`).
    pub(crate) max_segment_repeats: usize,
    /// Most URLs found by links per host and URL pattern in one run (numbers
    /// in the path folded, any query: calendars, faceted search). Feed and
    /// sitemap entries and seeds are not counted.
    pub max_urls_per_pattern: u32,
    /// Most date pages (calendar days, archive months) found by links on
    /// date pages of the same host and pattern in one run.
    pub max_date_steps: u32,
}

impl Default for Traps {
    fn default() -> Traps {
        let r = crate::url::trap::TrapRules::default();
        Traps {
            max_url_bytes: r.max_url_bytes,
            max_query_params: r.max_query_params,
            max_segment_repeats: r.max_segment_repeats,
            max_urls_per_pattern: r.max_urls_per_pattern,
            max_date_steps: r.max_date_steps,
        }
    }
}

impl Traps {
    pub fn rules(&self) -> crate::url::trap::TrapRules {
        crate::url::trap::TrapRules {
            max_url_bytes: self.max_url_bytes,
            max_query_params: self.max_query_params,
            max_segment_repeats: self.max_segment_repeats,
            max_urls_per_pattern: self.max_urls_per_pattern,
            max_date_steps: self.max_date_steps,
        }
    }
}

impl Crawl {
    /// The `crawl:` section's own checks.
    pub(super) fn validate(&self) -> Result<(), String> {
        let c = self;
        if c.concurrency == 0 {
            return Err("crawl.concurrency: expected at least 1".into());
        }
        if c.parse_concurrency == 0 {
            return Err("crawl.parse_concurrency: expected at least 1".into());
        }
        if c.per_host_concurrency == 0 {
            return Err("crawl.per_host_concurrency: expected at least 1".into());
        }
        for (name, v) in [
            ("crawl.min_host_weight", c.min_host_weight),
            ("crawl.host_min_hit_ratio", c.host_min_hit_ratio),
            ("crawl.yield_alpha", c.yield_alpha),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return Err(format!(
                    "{name}: expected a number between 0 and 1, got {v}"
                ));
            }
        }
        crate::store::ids::check_first_id(c.first_id)
            .map_err(|e| format!("crawl.first_id: {e}"))?;
        if c.user_agent.trim().is_empty() {
            return Err(
                "crawl.user_agent: expected a non-empty User-Agent with a contact URL".into(),
            );
        }
        if let Some(w) = &c.web_bot_auth {
            w.validate()?;
        }
        c.render.validate()?;
        Ok(())
    }

    /// The frontier's scheduling knobs.
    pub(crate) fn frontier_params(&self) -> Params {
        Params {
            per_host_concurrency: self.per_host_concurrency,
            min_host_gap: self.min_host_gap.0,
            warmup_pages: self.warmup_pages,
            yield_alpha: self.yield_alpha,
            min_host_weight: self.min_host_weight,
            max_queue: self.max_queue,
            policy: self.frontier_policy,
        }
    }

    /// The open scope's caps and deny-list.
    pub(crate) fn scope_params(&self) -> ScopeParams {
        ScopeParams {
            deny_hosts: self.deny_hosts.clone(),
            host_page_cap: self.host_page_cap,
            host_probation_pages: self.host_probation_pages,
            host_min_hit_ratio: self.host_min_hit_ratio,
        }
    }
}

impl Default for Crawl {
    fn default() -> Self {
        let f = Params::default();
        Crawl {
            concurrency: 16,
            per_host_concurrency: f.per_host_concurrency,
            min_host_gap: Span(f.min_host_gap),
            max_crawl_delay: Span::secs(30),
            max_pages: 0,
            max_hits: 0,
            max_duration: Span::default(),
            stop_grace: Span::secs(5),
            min_lastmod: MinLastmod::None,
            min_lastmod_floor: None,
            lastmod_overlap: Span::secs(86400),
            revisit_after_days: 7,
            retry_failed_after_days: 30,
            reseed_every_secs: 3600,
            warmup_pages: f.warmup_pages,
            yield_alpha: f.yield_alpha,
            min_host_weight: f.min_host_weight,
            max_queue: f.max_queue,
            frontier_policy: f.policy,
            max_depth: 8,
            scope: Scope::Domains,
            partition: crate::partition::Partition::WHOLE,
            deny_hosts: Vec::new(),
            host_page_cap: 200,
            host_probation_pages: 20,
            host_min_hit_ratio: 0.05,
            host_max_failures: 8,
            allow_private_addresses: false,
            max_raw_bytes: 8 << 20,
            max_body_bytes: 16 << 20,
            max_body_bytes_in_flight: 32 << 20,
            parse_concurrency: 2,
            max_robots_bytes: 512 << 10,
            tdmrep_refresh_days: 7,
            max_redirects: 5,
            connect_timeout: Span::secs(10),
            read_timeout: Span::secs(15),
            request_timeout: Span::secs(30),
            max_retry_after: Span::secs(600),
            user_agent: "scraper/0.1 (+https://github.com/scraper-dataset/scraper)".into(),
            web_bot_auth: None,
            first_id: 0,
            ai_use_policy: AiUsePolicy::Respect,
            ai_usage: AiUsage::TrainAi,
            paywalled_text: PaywalledText::Store,
            archive: Archive::None,
            flush_every: Span::secs(5),
            traps: Traps::default(),
            render: super::render::Render::default(),
        }
    }
}

use crate::consent::AiUsage;
/// What to do with publishers' AI-use reservations (the consent rules' own type).
pub use crate::consent::AiUsePolicy;

/// What to do with the text of pages that are not free to read
/// (`accessible_for_free: false`, see `extract::paywall`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum PaywalledText {
    /// Store the page with all the text it carries, the paywalled part too.
    #[default]
    Store,
    /// Store the page with only the text outside its paywalled parts (what a
    /// reader without a subscription sees); the record says it is not free.
    Flag,
    /// Do not store pages that are not free to read.
    Skip,
}

/// `crawl.archive`: which fetched responses are kept as WARC records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Archive {
    /// Nothing (the default: raw HTML is large, and only `scraper reextract` needs it).
    #[default]
    None,
    /// The response of every stored article.
    Articles,
    /// Every fetched page, feed and sitemap (the final hop's answer, any status).
    All,
}

/// The one place `crawl:` is turned into the network's options (the fetch
/// budget is `max_pages`; `allow_private_addresses` is read here only).
impl From<&Crawl> for NetOptions {
    fn from(c: &Crawl) -> NetOptions {
        NetOptions {
            user_agent: c.user_agent.clone(),
            connect_timeout: c.connect_timeout.0,
            read_timeout: c.read_timeout.0,
            request_timeout: c.request_timeout.0,
            max_redirects: c.max_redirects,
            max_raw_bytes: c.max_raw_bytes,
            max_body_bytes: c.max_body_bytes,
            max_robots_bytes: c.max_robots_bytes,
            tdmrep_refresh_days: c.tdmrep_refresh_days,
            max_retry_after: c.max_retry_after.0,
            min_host_gap: c.min_host_gap.0,
            max_crawl_delay: c.max_crawl_delay.0,
            per_host_concurrency: c.per_host_concurrency,
            host_max_failures: c.host_max_failures,
            max_body_bytes_in_flight: c.max_body_bytes_in_flight,
            keeps_raw: c.archive != Archive::None,
            max_requests: c.max_pages,
            allow_private_addresses: c.allow_private_addresses,
            web_bot_auth: c.web_bot_auth.clone(),
            ai_usage: c.ai_usage,
        }
    }
}
