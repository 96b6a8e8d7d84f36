//! One host's funnel in one run, from discovered to stored, and what went
//! wrong: counted by the engine through the methods below, written into
//! `last_run.json` (under `hosts`) and the end-of-run table.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Per-host counters of one run. Field order is `last_run.json`'s key order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HostCounters {
    /// URLs queued for the host.
    pub discovered: u64,
    /// Responses received (any status).
    pub fetched: u64,
    /// Pages with an article signal and enough prose.
    pub articles: u64,
    /// Pages that passed the relevance rule.
    pub relevant: u64,
    /// Failures by class (`timeout`, `4xx`, `robots`, `budget`, ...).
    pub errors: BTreeMap<String, u64>,
    /// Bytes received on the wire.
    pub bytes: u64,
    /// Time requests waited for the host's politeness gap (`wait_ms` read
    /// too: the name early readers looked for).
    #[serde(alias = "wait_ms")]
    pub politeness_wait_ms: u64,
    /// Feeds or sitemaps that could not be read, or only in part.
    pub bad_listings: u64,
    /// URLs robots.txt kept us from.
    pub disallowed: u64,
    /// URLs not queued because they failed for good in an earlier run.
    pub known_failures: u64,
    /// Conditional requests answered 304.
    pub not_modified: u64,
    /// Articles stored in this run's shard.
    pub stored: u64,
    /// URLs not queued because they broke a trap rule (`crate::url::trap`).
    pub traps: u64,
    /// Articles not stored because the publisher reserves AI training
    /// (`ai_use_policy: respect`).
    pub withheld_ai_use: u64,
    /// Answered requests for feeds and sitemaps (304s included)...
    pub listing_requests: u64,
    /// ... and for pages.
    pub page_requests: u64,
    /// Child sitemaps not asked: their index says they are unchanged since our last full read.
    pub listings_unchanged: u64,
    /// Listings not asked today: read too recently for how often they bring new URLs.
    pub listings_not_due: u64,
    /// URLs of the host left queued for the next run (the backlog).
    pub backlog: u64,
    /// Articles stored again because their publisher changed them.
    pub updated: u64,
    /// `Content-Usage` values (response headers, robots.txt lines) that were
    /// not valid Structured Fields and were ignored; written only when some were.
    #[serde(skip_serializing_if = "is_zero")]
    pub bad_content_usage: u64,
    /// Pages and listings a parsing limit cut, by cause (`ParseCap`:
    /// `dom_nodes`, `text`, `depth`, `links`, `listing_entries`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub caps: BTreeMap<String, u64>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl HostCounters {
    /// A URL of the host was queued.
    pub fn queued(&mut self) {
        self.discovered += 1;
    }

    /// A response arrived: `bytes` on the wire after `waited` for the gap.
    pub fn fetched(&mut self, bytes: u64, waited: Duration) {
        self.fetched += 1;
        self.bytes += bytes;
        self.politeness_wait_ms += waited.as_millis() as u64;
    }

    /// A request failed (or was not sent) under `class`.
    pub fn failed(&mut self, class: &str) {
        *self.errors.entry(class.to_string()).or_default() += 1;
    }

    /// robots.txt disallowed a URL (counted under `failed("robots")` too).
    pub fn disallowed(&mut self) {
        self.disallowed += 1;
    }

    /// A request was answered: for a feed or sitemap, or for a page.
    pub fn answered(&mut self, listing: bool) {
        if listing {
            self.listing_requests += 1;
        } else {
            self.page_requests += 1;
        }
    }

    pub fn listing_unchanged(&mut self) {
        self.listings_unchanged += 1;
    }

    pub fn listing_not_due(&mut self) {
        self.listings_not_due += 1;
    }

    pub fn not_modified(&mut self) {
        self.not_modified += 1;
    }

    pub fn bad_listing(&mut self) {
        self.bad_listings += 1;
    }

    /// A page was extracted: whether it is an article, and relevant.
    pub fn page(&mut self, article: bool, relevant: bool) {
        self.articles += u64::from(article);
        self.relevant += u64::from(relevant);
    }

    pub fn withheld(&mut self) {
        self.withheld_ai_use += 1;
    }

    /// `n` malformed `Content-Usage` values were ignored.
    pub fn bad_content_usage(&mut self, n: usize) {
        self.bad_content_usage += n as u64;
    }

    pub fn stored(&mut self) {
        self.stored += 1;
    }

    /// A URL was not queued: it failed for good in an earlier run.
    pub fn known_failure(&mut self) {
        self.known_failures += 1;
    }

    /// A URL broke a trap rule and was not queued.
    pub fn trapped(&mut self) {
        self.traps += 1;
    }

    /// A parsing limit cut a page or listing.
    pub fn capped(&mut self, cause: &str) {
        *self.caps.entry(cause.to_string()).or_default() += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `last_run.json` keeps its key names and order.
    #[test]
    fn serialises_under_the_old_names() {
        let mut h = HostCounters::default();
        h.queued();
        h.fetched(1200, Duration::from_millis(350));
        h.failed("timeout");
        h.failed("timeout");
        h.page(true, false);
        h.stored();
        let text = serde_json::to_string(&h).unwrap();
        assert_eq!(
            text,
            r#"{"discovered":1,"fetched":1,"articles":1,"relevant":0,"errors":{"timeout":2},"bytes":1200,"politeness_wait_ms":350,"bad_listings":0,"disallowed":0,"known_failures":0,"not_modified":0,"stored":1,"traps":0,"withheld_ai_use":0,"listing_requests":0,"page_requests":0,"listings_unchanged":0,"listings_not_due":0,"backlog":0,"updated":0}"#
        );
        let back: HostCounters = serde_json::from_str(r#"{"fetched":2}"#).unwrap();
        assert_eq!(back.fetched, 2);
    }
}
