//! The schema of what the crawl writes and the reports read: the stored
//! article (one JSON object per line in `data/articles/<run-id>.jsonl.zst`),
//! the event log's [`Event`]s, the header of per-run files ([`RunHeader`]), the per-host [`HostCounters`] of
//! `last_run.json`, the consent log's lines, and the closed sets of outcomes ([`Answer`], [`ErrorClass`], [`StopReason`],
//! [`DateSource`], [`FailureClass`], [`TdmOutcome`], [`RobotsAccess`], [`Rejection`]). Writers and readers use
//! these same types.

mod answer;
pub mod consent;
pub mod event;
mod host;
mod kind;
mod outcome;
mod run;
pub mod when;

use serde::{Deserialize, Serialize};

pub use answer::Answer;
pub use event::Event;
pub use host::{ErrorClass, HostCounters, PaymentAsked};
pub use kind::{Kind, Scope};
pub use outcome::{
    DateSource, FailureClass, ParseCap, Rejection, RobotsAccess, RobotsOutcome, StopReason,
    TdmOutcome,
};
pub use run::{HandoverCounts, RunHeader, RunSummary, SeedProblem, Stopped};

/// One stored article. Field order is the order in the JSON line.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Article {
    /// Unique, increasing across runs (see ARCHITECTURE.md, "Ids").
    pub id: i64,
    /// Normalised URL the page was fetched from (after redirects).
    pub url: String,
    /// Host without `www.`.
    pub domain: String,
    pub title: String,
    /// Publication day as the publisher's calendar shows it, `yyyy-mm-dd`.
    #[serde(with = "when::day")]
    pub date: Option<chrono::NaiveDate>,
    /// Where the date came from: `published_time`, `jsonld`, `meta`, `time`, `url`,
    /// `byline`, `text_date`, `image_url` or `text_year` (then `date` is null and
    /// only `year` is set). See `extract::date`.
    pub date_source: Option<String>,
    pub year: Option<i32>,
    /// Paragraphs separated by `\n`.
    pub text: String,
    /// Broad target terms found, most frequent first.
    pub keywords: Vec<String>,
    /// `2026-10-09T18:12:33Z`.
    #[serde(with = "when::instant")]
    pub fetched_at: chrono::DateTime<chrono::Utc>,
    /// ISO 639-1 code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lang: Option<String>,
    /// The page's `rel=canonical`, when it differs from `url`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canonical_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub byline: Option<String>,
    /// The run that stored it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// Provenance: 16-digit hex xxh3 of the robots.txt the page was fetched
    /// under (snapshot in `state/consent/<run_id>.jsonl`); absent when the
    /// host had none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub robots_hash: Option<String>,
    /// Provenance: the AI-use signals seen (see [`crate::consent::Signal`]'s short form).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ai_signals: Vec<String>,
    /// Whether those signals reserve AI training (stored anyway under
    /// `ai_use_policy: record` or `ignore`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ai_reserved: Option<bool>,
    /// The relevance rule's score in [0, 1] when the page was stored (see
    /// `relevance`); `scraper build` computes it again under the current rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relevance_score: Option<f64>,
    /// Provenance: the crawler version that stored it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crawler: Option<String>,
    /// The text with its structure as Markdown (headings, lists, quotes,
    /// code, tables, emphasis; links as text); `text` is its plain reading.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub markdown: Option<String>,
    /// The day the page says it was last modified (`article:modified_time`,
    /// JSON-LD `dateModified`, else the listing's date for an update),
    /// `YYYY-MM-DD` in the publisher's calendar. A record stored again
    /// because its article changed carries it; the build keeps the latest
    /// version of each URL.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "when::day")]
    pub date_modified: Option<chrono::NaiveDate>,
    /// A new version of an article stored before under the same URL (its
    /// publisher changed it): the build keeps it instead of the older ones.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub updated: bool,
    /// Whether the article is free to read (JSON-LD `isAccessibleForFree`,
    /// the `article:content_tier` meta, paywall markup); absent when the
    /// page says nothing. See `crawl.paywalled_text` for what is stored of
    /// a page that is not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accessible_for_free: Option<bool>,
    /// The extractor that made this record from the page
    /// (`crate::extract::version`): it changes whenever extraction output can.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extractor_version: Option<String>,
    /// The WARC file under `data/warc/` holding the page as fetched
    /// (`crawl.archive`), and the offset of its `response` record's gzip member.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warc_file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warc_offset: Option<u64>,
    /// Set only by `scraper reextract`: the current extractor no longer makes
    /// an article of the archived page, the current rule no longer finds it
    /// relevant, or it is not free to read and `crawl.paywalled_text` is now
    /// `skip`; `scraper build` drops the record (and counts it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub withdrawn: Option<Rejection>,
    /// The text was read from the page as a browser rendered it
    /// (`crate::render`), not from the HTML as first served.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rendered: bool,
}

/// What the crawl knew of a stored record that the page does not say: the
/// part of an [`Article`] that `scraper reextract` keeps while it extracts
/// the rest again. A WARC `metadata` record carries it (`crate::store::warc`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Provenance {
    pub id: i64,
    pub fetched_at: chrono::DateTime<chrono::Utc>,
    pub run_id: Option<String>,
    pub robots_hash: Option<String>,
    pub ai_signals: Vec<String>,
    pub ai_reserved: Option<bool>,
    pub crawler: Option<String>,
    /// The day the crawl's extractor took as today.
    pub(crate) extracted_on: Option<chrono::NaiveDate>,
    /// Where the page is archived (not written in the metadata record: that is where it is).
    pub warc_file: Option<String>,
    pub warc_offset: Option<u64>,
    /// Stored as a new version of a changed article ([`Article::updated`]).
    pub updated: bool,
    /// The listing's date for a changed article: its `date_modified` when
    /// the page gives none.
    pub(crate) listed_modified: Option<chrono::NaiveDate>,
}
