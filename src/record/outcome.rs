//! Closed sets of outcomes that travel between modules and into files: why a
//! run stopped, where a page's date came from, how a `tdmrep.json` request
//! went, why a page was not stored. Each is written under its old string, so
//! `last_run.json`, the event log and `check-url` read as before.

use std::fmt;

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
    pub fn is_metadata(self) -> bool {
        matches!(
            self,
            DateSource::PublishedTime | DateSource::Jsonld | DateSource::Meta | DateSource::Time
        )
    }

    /// The page's own publication date, as opposed to a date or year merely
    /// written in its text or its image's URL.
    pub fn is_own_date(self) -> bool {
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

/// How a `/.well-known/tdmrep.json` request went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TdmOutcome {
    /// The server answered with this status (rules only from a 2xx).
    Status(u16),
    /// The request failed; a `FetchError::class` (`timeout`, `dns`, ...).
    Failed(&'static str),
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
            TdmOutcome::Failed(class) => f.write_str(class),
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
        assert_eq!(
            serde_json::to_value(TdmOutcome::Malformed("x".into())).unwrap(),
            "malformed: x"
        );
    }
}
