//! Closed sets of outcomes that travel between modules and into files: why a
//! run stopped, where a page's date came from, why a fetch failed, how a
//! `tdmrep.json` request went, how robots.txt was obtained (in full and in a
//! word), why a page was not
//! stored. Each is written under its old string, so `last_run.json`, the
//! event log, the health files and `check-url` read as before.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Why a run stopped (`stopped_by` in `last_run.json` and the `done` event).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// `crawl.max_pages` requests sent.
    MaxPages,
    /// `crawl.max_hits` articles stored.
    MaxHits,
    /// `crawl.max_duration` elapsed.
    MaxDuration,
    /// Ctrl-C or SIGTERM.
    Interrupted,
    /// Nothing left to fetch.
    Exhausted,
    /// No host could be reached: nothing was saved (only in the `done`
    /// event; `RunEnd::stopped_by` keeps the limit that ended the loop).
    Outage,
}

impl StopReason {
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::MaxPages => "max_pages",
            StopReason::MaxHits => "max_hits",
            StopReason::MaxDuration => "max_duration",
            StopReason::Interrupted => "interrupted",
            StopReason::Exhausted => "exhausted",
            StopReason::Outage => "outage",
        }
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where the extractor found a page's date (`date_source`; the table in
/// `extract::date` says what each means).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DateSource {
    PublishedTime,
    Jsonld,
    Meta,
    Time,
    Url,
    Byline,
    TextDate,
    ImageUrl,
    /// Only a year: the date is 1 January of it.
    TextYear,
}

impl DateSource {
    pub fn as_str(self) -> &'static str {
        match self {
            DateSource::PublishedTime => "published_time",
            DateSource::Jsonld => "jsonld",
            DateSource::Meta => "meta",
            DateSource::Time => "time",
            DateSource::Url => "url",
            DateSource::Byline => "byline",
            DateSource::TextDate => "text_date",
            DateSource::ImageUrl => "image_url",
            DateSource::TextYear => "text_year",
        }
    }

    /// Page metadata made for machines (meta tags, JSON-LD, `<time>`).
    pub(crate) fn is_metadata(self) -> bool {
        matches!(
            self,
            DateSource::PublishedTime | DateSource::Jsonld | DateSource::Meta | DateSource::Time
        )
    }

    /// The page's own publication date, as opposed to a date or year merely
    /// written in its text or its image's URL.
    pub(crate) fn is_own_date(self) -> bool {
        !matches!(
            self,
            DateSource::TextYear | DateSource::TextDate | DateSource::ImageUrl
        )
    }
}

impl fmt::Display for DateSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The class of a failed fetch (`FetchError::class`): the name it is counted
/// and logged under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureClass {
    /// Not sent: the fetch budget is spent.
    Budget,
    /// Not sent: the host is rested for the rest of the run.
    Rested,
    /// Not sent: robots.txt disallows the URL.
    Robots,
    OutOfScope,
    TooManyRedirects,
    RedirectLoop,
    Timeout,
    Connect,
    Dns,
    Tls,
    TooLarge,
    NotHtml,
    Body,
    Scheme,
    PrivateAddress,
    /// A bot challenge answered instead of the page (a CDN's wall, a
    /// JavaScript interstitial: `net::turned`). Not stored, links not followed.
    Challenge,
    /// `402 Payment Required`: the publisher asks to be paid for crawling
    /// (it reserves its content, like an AI-use signal; not transient).
    PaymentRequired,
}

impl FailureClass {
    /// Every class, for reading the names back.
    pub(crate) const ALL: [FailureClass; 17] = [
        FailureClass::Budget,
        FailureClass::Rested,
        FailureClass::Robots,
        FailureClass::OutOfScope,
        FailureClass::TooManyRedirects,
        FailureClass::RedirectLoop,
        FailureClass::Timeout,
        FailureClass::Connect,
        FailureClass::Dns,
        FailureClass::Tls,
        FailureClass::TooLarge,
        FailureClass::NotHtml,
        FailureClass::Body,
        FailureClass::Scheme,
        FailureClass::PrivateAddress,
        FailureClass::Challenge,
        FailureClass::PaymentRequired,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FailureClass::Budget => "budget",
            FailureClass::Rested => "rested",
            FailureClass::Robots => "robots",
            FailureClass::OutOfScope => "out_of_scope",
            FailureClass::TooManyRedirects => "too_many_redirects",
            FailureClass::RedirectLoop => "redirect_loop",
            FailureClass::Timeout => "timeout",
            FailureClass::Connect => "connect",
            FailureClass::Dns => "dns",
            FailureClass::Tls => "tls",
            FailureClass::TooLarge => "too_large",
            FailureClass::NotHtml => "not_html",
            FailureClass::Body => "body",
            FailureClass::Scheme => "scheme",
            FailureClass::PrivateAddress => "private_address",
            FailureClass::Challenge => "challenge",
            FailureClass::PaymentRequired => "payment_required",
        }
    }

    /// The class named `name` (the inverse of [`Self::as_str`]).
    pub(crate) fn from_name(name: &str) -> Option<FailureClass> {
        FailureClass::ALL.into_iter().find(|c| c.as_str() == name)
    }

    /// Did the network fail (as `FetchError::is_network` says), rather
    /// than a policy refusal or the answer?
    pub(crate) fn is_network(self) -> bool {
        matches!(
            self,
            FailureClass::Timeout
                | FailureClass::Connect
                | FailureClass::Dns
                | FailureClass::Tls
                | FailureClass::Body
        )
    }
}

impl fmt::Display for FailureClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A parsing limit that cut a page or a listing (counted per host under
/// `caps` in `last_run.json`, and logged as a `capped` event).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParseCap {
    /// Elements nested deeper than the prepass allows were flattened.
    Depth,
    /// The tree reached its node cap: the rest of the page was not parsed.
    DomNodes,
    /// The page's text reached its cap: the rest of the page was not parsed.
    Text,
    /// More links than a page may give: the rest were not taken.
    Links,
    /// More entries than a feed or sitemap may give: the rest were not taken.
    ListingEntries,
}

impl ParseCap {
    pub fn as_str(self) -> &'static str {
        match self {
            ParseCap::Depth => "depth",
            ParseCap::DomNodes => "dom_nodes",
            ParseCap::Text => "text",
            ParseCap::Links => "links",
            ParseCap::ListingEntries => "listing_entries",
        }
    }
}

impl fmt::Display for ParseCap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How robots.txt was read, in a word (health files, `scraper probe`): the
/// summary of [`RobotsOutcome`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RobotsAccess {
    /// A 2xx answer, parsed: its rules apply.
    #[default]
    Parsed,
    /// Unavailable (4xx): everything allowed.
    AllowAll,
    /// Unreachable (5xx, 429, network failure): nothing allowed.
    Unreachable,
}

impl RobotsAccess {
    pub fn as_str(self) -> &'static str {
        match self {
            RobotsAccess::Parsed => "parsed",
            RobotsAccess::AllowAll => "allow_all",
            RobotsAccess::Unreachable => "unreachable",
        }
    }
}

impl fmt::Display for RobotsAccess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a host's robots.txt was obtained.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RobotsOutcome {
    /// A 2xx answer with this status, parsed.
    Parsed(u16),
    /// Unavailable (4xx, or too many redirects) with this status: everything allowed.
    AllowAll(u16),
    /// Unreachable (5xx, 429, network failure, timeout, rested host, spent budget): nothing allowed.
    DisallowAll(String),
}

impl RobotsOutcome {
    /// In a word, with its detail (the status, or why it was unreachable).
    pub(crate) fn access(&self) -> (RobotsAccess, String) {
        match self {
            RobotsOutcome::Parsed(c) => (RobotsAccess::Parsed, c.to_string()),
            RobotsOutcome::AllowAll(c) => (RobotsAccess::AllowAll, c.to_string()),
            RobotsOutcome::DisallowAll(why) => (RobotsAccess::Unreachable, why.clone()),
        }
    }
}

/// `Parsed(200)`, `AllowAll(404)`, `DisallowAll("timeout")`: the form the
/// event log's `robots` lines and the consent log hold.
impl fmt::Display for RobotsOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RobotsOutcome::Parsed(c) => write!(f, "Parsed({c})"),
            RobotsOutcome::AllowAll(c) => write!(f, "AllowAll({c})"),
            RobotsOutcome::DisallowAll(why) => write!(f, "DisallowAll({why:?})"),
        }
    }
}

/// The inverse of the `Display` form.
impl FromStr for RobotsOutcome {
    type Err = String;

    fn from_str(s: &str) -> Result<RobotsOutcome, String> {
        let bad = || format!("not a robots.txt outcome: {s}");
        let (name, arg) = s
            .strip_suffix(')')
            .and_then(|s| s.split_once('('))
            .ok_or_else(bad)?;
        match name {
            "Parsed" => arg.parse().map(RobotsOutcome::Parsed).map_err(|_| bad()),
            "AllowAll" => arg.parse().map(RobotsOutcome::AllowAll).map_err(|_| bad()),
            // Debug quoting of the plain words written here reads as JSON.
            "DisallowAll" => serde_json::from_str(arg)
                .map(RobotsOutcome::DisallowAll)
                .map_err(|_| bad()),
            _ => Err(bad()),
        }
    }
}

impl Serialize for RobotsOutcome {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for RobotsOutcome {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<RobotsOutcome, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// How a `/.well-known/tdmrep.json` request went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TdmOutcome {
    /// The server answered with this status (rules only from a 2xx).
    Status(u16),
    /// The request failed (`timeout`, `dns`, ...).
    Failed(FailureClass),
    /// robots.txt disallows the file.
    Robots,
    /// A 2xx whose body is not a TDMRep array.
    Malformed(String),
    TooManyRedirects,
    /// The page's URL has no origin to ask.
    BadOrigin,
    /// Not asked: the fetch budget is spent (not cached; the page goes back
    /// to the queue).
    Budget,
    /// Not asked: the host is rested (not cached).
    Rested,
}

impl fmt::Display for TdmOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TdmOutcome::Status(s) => write!(f, "{s}"),
            TdmOutcome::Failed(class) => f.write_str(class.as_str()),
            TdmOutcome::Robots => f.write_str("robots"),
            TdmOutcome::Malformed(e) => write!(f, "malformed: {e}"),
            TdmOutcome::TooManyRedirects => f.write_str("too many redirects"),
            TdmOutcome::BadOrigin => f.write_str("bad origin"),
            TdmOutcome::Budget => f.write_str("budget"),
            TdmOutcome::Rested => f.write_str("rested"),
        }
    }
}

impl Serialize for TdmOutcome {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Why a fetched page was not stored (the `rejected` event's `reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Rejection {
    /// A feed or sitemap (by its queue entry or its URL), never an article.
    #[serde(rename = "feed or sitemap URL")]
    Listing,
    #[serde(rename = "not an article")]
    NotArticle,
    #[serde(rename = "not relevant")]
    NotRelevant,
    #[serde(rename = "no title")]
    NoTitle,
    /// Its URL or canonical URL is stored already.
    #[serde(rename = "already stored")]
    AlreadyStored,
    /// The publisher reserves AI training (`ai_use_policy: respect`).
    #[serde(rename = "withheld: ai-use")]
    WithheldAiUse,
    /// Not free to read (`crawl.paywalled_text: skip`).
    #[serde(rename = "paywalled")]
    Paywalled,
}

impl Rejection {
    pub fn as_str(self) -> &'static str {
        match self {
            Rejection::Listing => "feed or sitemap URL",
            Rejection::NotArticle => "not an article",
            Rejection::NotRelevant => "not relevant",
            Rejection::NoTitle => "no title",
            Rejection::AlreadyStored => "already stored",
            Rejection::WithheldAiUse => "withheld: ai-use",
            Rejection::Paywalled => "paywalled",
        }
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The string forms are the serde names (files and events use the latter).
    #[test]
    fn strings_match_serde_names() {
        let name = |v: serde_json::Value| v.as_str().unwrap().to_string();
        for s in [
            StopReason::MaxPages,
            StopReason::MaxHits,
            StopReason::MaxDuration,
            StopReason::Interrupted,
            StopReason::Exhausted,
            StopReason::Outage,
        ] {
            assert_eq!(name(serde_json::to_value(s).unwrap()), s.as_str());
        }
        for d in [
            DateSource::PublishedTime,
            DateSource::Jsonld,
            DateSource::Meta,
            DateSource::Time,
            DateSource::Url,
            DateSource::Byline,
            DateSource::TextDate,
            DateSource::ImageUrl,
            DateSource::TextYear,
        ] {
            assert_eq!(name(serde_json::to_value(d).unwrap()), d.as_str());
        }
        for r in [
            Rejection::Listing,
            Rejection::NotArticle,
            Rejection::NotRelevant,
            Rejection::NoTitle,
            Rejection::AlreadyStored,
            Rejection::WithheldAiUse,
        ] {
            assert_eq!(name(serde_json::to_value(r).unwrap()), r.as_str());
        }
        for c in FailureClass::ALL {
            assert_eq!(name(serde_json::to_value(c).unwrap()), c.as_str());
            assert_eq!(FailureClass::from_name(c.as_str()), Some(c));
        }
        assert_eq!(FailureClass::from_name("2xx"), None);
        for r in [
            RobotsAccess::Parsed,
            RobotsAccess::AllowAll,
            RobotsAccess::Unreachable,
        ] {
            assert_eq!(name(serde_json::to_value(r).unwrap()), r.as_str());
        }
        assert_eq!(
            serde_json::to_value(TdmOutcome::Malformed("x".into())).unwrap(),
            "malformed: x"
        );
        assert_eq!(
            serde_json::to_value(TdmOutcome::Failed(FailureClass::Timeout)).unwrap(),
            "timeout"
        );
    }
}
