//! One host's funnel in one run, from discovered to stored, and what went
//! wrong: counted by the engine through the methods below, written into
//! `last_run.json` (under `hosts`) and the end-of-run table.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{Answer, FailureClass};

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
    pub errors: BTreeMap<ErrorClass, u64>,
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
    /// URLs handed out to be fetched, by tier (`crate::frontier`): fresh
    /// work (seeds, listings, the day's pages), the archive's backlog, and
    /// exploration (pages of a URL family not yet known to lead to
    /// articles). One robots.txt then refuses is counted too (no request).
    pub fresh_requests: u64,
    pub backlog_requests: u64,
    pub explore_requests: u64,
    /// Links not queued, or queued ones not fetched, because their URL
    /// family has stopped paying (`crate::frontier::FamilyStats`).
    pub family_stopped: u64,
    /// URL families that stopped paying in this run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub families_stopped: Vec<String>,
    /// What the host reserved: relevant articles whose publisher reserves
    /// the crawl's use, by each signal that says so (`robots.txt:ai-train=no`,
    /// `rsl:<url>;prohibits=ai-train;payment=free`, ...).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub ai_reserved: BTreeMap<String, u64>,
    /// RSL licences the host's relevant articles point to.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub licenses: Vec<String>,
    /// The last `402 Payment Required` the host answered (never paid).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payment: Option<PaymentAsked>,
    /// Pages rendered in a browser (`crate::render`), their wall time, and
    /// the requests the browser made that the crawler fetched for it;
    /// written only when some were.
    #[serde(skip_serializing_if = "is_zero")]
    pub rendered: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub render_ms: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub render_requests: u64,
}

/// What a `402 Payment Required` asked: `crawler-price`, `crawler-error`
/// and the terms link, each if given.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct PaymentAsked {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub terms: Option<String>,
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

    /// How a request went (the one classification of a finished job):
    /// a failure counts under its [`ErrorClass`] (a robots.txt refusal as
    /// `disallowed` too), a 304 as `not_modified`, a feed or sitemap that
    /// could not be parsed as a bad listing; a success counts nothing here.
    pub fn record(&mut self, answer: Answer) {
        match answer {
            Answer::NotModified => self.not_modified += 1,
            Answer::BadListing => self.bad_listings += 1,
            Answer::ROBOTS => self.disallowed += 1,
            _ => {}
        }
        if let Some(class) = ErrorClass::of(answer) {
            *self.errors.entry(class).or_default() += 1;
        }
    }

    /// A request was answered: for a feed or sitemap, or for a page.
    pub fn answered(&mut self, listing: bool) {
        if listing {
            self.listing_requests += 1;
        } else {
            self.page_requests += 1;
        }
    }

    pub(crate) fn listing_unchanged(&mut self) {
        self.listings_unchanged += 1;
    }

    /// A URL was handed out to be fetched: counted by its tier.
    pub(crate) fn dispatched(&mut self, backlog: bool, explore: bool) {
        match (explore, backlog) {
            (true, _) => self.explore_requests += 1,
            (false, true) => self.backlog_requests += 1,
            (false, false) => self.fresh_requests += 1,
        }
    }

    /// A link was not queued, or not fetched, because its family stopped paying.
    pub fn family_stopped(&mut self) {
        self.family_stopped += 1;
    }

    pub(crate) fn listing_not_due(&mut self) {
        self.listings_not_due += 1;
    }

    /// A feed or sitemap was read only in part, or its children not at all.
    pub(crate) fn bad_listing(&mut self) {
        self.bad_listings += 1;
    }

    /// A page was extracted: whether it is an article, and relevant.
    pub fn page(&mut self, article: bool, relevant: bool) {
        self.articles += u64::from(article);
        self.relevant += u64::from(relevant);
    }

    /// A page was rendered: `ms` of wall time, `requests` fetched for the browser.
    pub fn rendered(&mut self, ms: u64, requests: u64) {
        self.rendered += 1;
        self.render_ms += ms;
        self.render_requests += requests;
    }

    pub fn withheld(&mut self) {
        self.withheld_ai_use += 1;
    }

    /// A relevant article's AI-use signals: the reserving ones counted, the
    /// RSL licences kept.
    pub fn consent(&mut self, signals: &crate::consent::Signals) {
        for label in signals.reserving() {
            *self.ai_reserved.entry(label).or_default() += 1;
        }
        for (_, l) in &signals.licenses {
            if !self.licenses.contains(l) {
                self.licenses.push(l.clone());
            }
        }
    }

    /// `n` malformed `Content-Usage` values were ignored.
    pub fn bad_content_usage(&mut self, n: usize) {
        self.bad_content_usage += n as u64;
    }

    pub fn stored(&mut self) {
        self.stored += 1;
    }

    /// A URL was not queued: it failed for good in an earlier run.
    pub(crate) fn known_failure(&mut self) {
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

/// The class a failed request is counted under in a host's `errors`:
/// written as the keys `last_run.json` has always held (`timeout`,
/// `robots`, `challenge`, ... for a [`FailureClass`]; `429`, `4xx`, `5xx`,
/// `other_status` for an HTTP status; `panic`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ErrorClass {
    /// No answer, or one refused before or after it was read.
    Failed(FailureClass),
    /// `429 Too Many Requests`.
    TooManyRequests,
    /// Any other 4xx.
    ClientError,
    /// Any 5xx.
    ServerError,
    /// A status outside 4xx and 5xx that is no success (an unfollowed 3xx).
    OtherStatus,
    /// The worker or the parser panicked.
    Panic,
    /// A key this version does not know (written by a newer one): kept.
    Unknown(String),
}

impl ErrorClass {
    /// The class of an HTTP status that is not a success.
    pub(crate) fn of_status(code: u16) -> ErrorClass {
        match code {
            429 => ErrorClass::TooManyRequests,
            400..=499 => ErrorClass::ClientError,
            500..=599 => ErrorClass::ServerError,
            _ => ErrorClass::OtherStatus,
        }
    }

    /// The class of an answer that is a failure (`None`: a success, a 304,
    /// a listing that answered at all).
    pub fn of(answer: Answer) -> Option<ErrorClass> {
        match answer {
            Answer::Status(code) => Some(ErrorClass::of_status(code)),
            Answer::Failed(class) => Some(ErrorClass::Failed(class)),
            Answer::Panicked => Some(ErrorClass::Panic),
            Answer::Success | Answer::NotModified | Answer::NotAListing | Answer::BadListing => {
                None
            }
        }
    }

    /// The written form.
    pub fn name(&self) -> Cow<'_, str> {
        Cow::Borrowed(match self {
            ErrorClass::Failed(class) => class.as_str(),
            ErrorClass::TooManyRequests => "429",
            ErrorClass::ClientError => "4xx",
            ErrorClass::ServerError => "5xx",
            ErrorClass::OtherStatus => "other_status",
            ErrorClass::Panic => "panic",
            ErrorClass::Unknown(name) => name,
        })
    }

    /// The class written as `name` (the inverse of [`ErrorClass::name`]).
    pub(crate) fn from_name(name: &str) -> ErrorClass {
        match name {
            "429" => ErrorClass::TooManyRequests,
            "4xx" => ErrorClass::ClientError,
            "5xx" => ErrorClass::ServerError,
            "other_status" => ErrorClass::OtherStatus,
            "panic" => ErrorClass::Panic,
            _ => FailureClass::from_name(name)
                .map_or_else(|| ErrorClass::Unknown(name.to_string()), ErrorClass::Failed),
        }
    }
}

impl From<&str> for ErrorClass {
    fn from(name: &str) -> ErrorClass {
        ErrorClass::from_name(name)
    }
}

impl fmt::Display for ErrorClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// By the written form, so `errors` keeps the key order of the files.
impl Ord for ErrorClass {
    fn cmp(&self, other: &ErrorClass) -> Ordering {
        self.name().cmp(&other.name())
    }
}

impl PartialOrd for ErrorClass {
    fn partial_cmp(&self, other: &ErrorClass) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Serialize for ErrorClass {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
    }
}

impl<'de> Deserialize<'de> for ErrorClass {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ErrorClass, D::Error> {
        Ok(ErrorClass::from_name(&Cow::<'de, str>::deserialize(d)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each answer counts under today's key, and the keys read back.
    #[test]
    fn error_keys_are_the_old_strings() {
        let table = [
            (Answer::Status(429), Some("429")),
            (Answer::Status(404), Some("4xx")),
            (Answer::Status(403), Some("4xx")),
            (Answer::Status(503), Some("5xx")),
            (Answer::Status(301), Some("other_status")),
            (Answer::Failed(FailureClass::Timeout), Some("timeout")),
            (Answer::ROBOTS, Some("robots")),
            (Answer::Failed(FailureClass::Challenge), Some("challenge")),
            (Answer::Failed(FailureClass::Budget), Some("budget")),
            (Answer::Panicked, Some("panic")),
            (Answer::Success, None),
            (Answer::NotModified, None),
            (Answer::NotAListing, None),
            (Answer::BadListing, None),
        ];
        for (answer, key) in table {
            let class = ErrorClass::of(answer);
            assert_eq!(
                class.as_ref().map(|c| c.to_string()).as_deref(),
                key,
                "{answer}"
            );
            if let Some(c) = class {
                let v = serde_json::to_value(&c).unwrap();
                assert_eq!(serde_json::from_value::<ErrorClass>(v).unwrap(), c);
            }
        }
        let newer: ErrorClass = serde_json::from_str(r#""from_the_future""#).unwrap();
        assert_eq!(newer, ErrorClass::Unknown("from_the_future".into()));
        assert_eq!(
            serde_json::to_string(&newer).unwrap(),
            r#""from_the_future""#
        );
    }

    /// `record` counts each answer where the old engine did.
    #[test]
    fn record_counts_failures_refusals_and_304s() {
        let mut h = HostCounters::default();
        for a in [
            Answer::Success,
            Answer::NotModified,
            Answer::ROBOTS,
            Answer::BadListing,
            Answer::Status(503),
            Answer::Status(500),
            Answer::Status(429),
            Answer::Failed(FailureClass::Dns),
        ] {
            h.record(a);
        }
        assert_eq!((h.not_modified, h.bad_listings, h.disallowed), (1, 1, 1));
        let text = serde_json::to_string(&h.errors).unwrap();
        assert_eq!(text, r#"{"429":1,"5xx":2,"dns":1,"robots":1}"#);
    }

    /// `last_run.json` keeps its key names and order.
    #[test]
    fn serialises_under_the_old_names() {
        let mut h = HostCounters::default();
        h.queued();
        h.fetched(1200, Duration::from_millis(350));
        h.record(Answer::Failed(FailureClass::Timeout));
        h.record(Answer::Failed(FailureClass::Timeout));
        h.page(true, false);
        h.stored();
        let text = serde_json::to_string(&h).unwrap();
        assert_eq!(
            text,
            r#"{"discovered":1,"fetched":1,"articles":1,"relevant":0,"errors":{"timeout":2},"bytes":1200,"politeness_wait_ms":350,"bad_listings":0,"disallowed":0,"known_failures":0,"not_modified":0,"stored":1,"traps":0,"withheld_ai_use":0,"listing_requests":0,"page_requests":0,"listings_unchanged":0,"listings_not_due":0,"backlog":0,"updated":0,"fresh_requests":0,"backlog_requests":0,"explore_requests":0,"family_stopped":0}"#
        );
        let back: HostCounters = serde_json::from_str(r#"{"fetched":2}"#).unwrap();
        assert_eq!(back.fetched, 2);
    }
}
