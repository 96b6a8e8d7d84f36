//! Article extraction: bytes and a base URL in, a [`Page`] description out. Pure.
//!
//! OWNER: extraction work (issue 3). This is the interface; bodies are placeholders.

use chrono::NaiveDate;
use serde::Serialize;

use crate::relevance::{Relevance, Rule};
use crate::url::Url;

/// Everything the extractor decided about one page.
#[derive(Debug, Clone, Serialize)]
pub struct Page {
    pub title: Option<String>,
    /// Paragraphs separated by `\n`.
    pub text: String,
    /// Publication day in the page's own time zone.
    pub date: Option<NaiveDate>,
    /// `published_time`, `jsonld`, `time`, `url`, `byline`, `text_year`, ... (see ARCHITECTURE.md)
    pub date_source: Option<&'static str>,
    pub lang: Option<String>,
    pub byline: Option<String>,
    pub canonical_url: Option<Url>,
    /// Carries an article signal and enough prose.
    pub is_article: bool,
    /// Which article signal was seen (`og_type`, `jsonld`, `dated_metadata`, `dated_url`), if any.
    pub article_signal: Option<&'static str>,
    pub prose_ratio: f64,
    pub relevance: Relevance,
    pub keywords: Vec<String>,
    /// Absolute, normalised http(s) links found in the page (document order, deduplicated).
    #[serde(skip)]
    pub links: Vec<Url>,
    /// `<link rel=alternate type=application/rss+xml|atom+xml>` feed URLs.
    #[serde(skip)]
    pub feeds: Vec<Url>,
    /// Values of `<meta name="robots">` and similar directives, lower-cased (`noindex`, `nofollow`, `noai`...).
    #[serde(skip)]
    pub robots_meta: Vec<String>,
}

/// Extract a page. `charset` is the HTTP Content-Type charset when known;
/// `url` is where the page came from; `today` bounds plausible dates.
pub fn extract(
    _html: &[u8],
    _charset: Option<&str>,
    _url: Option<&Url>,
    rule: &Rule,
    _today: NaiveDate,
) -> Page {
    Page {
        title: None,
        text: String::new(),
        date: None,
        date_source: None,
        lang: None,
        byline: None,
        canonical_url: None,
        is_article: false,
        article_signal: None,
        prose_ratio: 0.0,
        relevance: rule.evaluate("", ""),
        keywords: vec![],
        links: vec![],
        feeds: vec![],
        robots_meta: vec![],
    }
}

/// `scraper extract`: one JSON object per path on stdout, in input order.
pub fn run_files(
    _config: &crate::config::Config,
    _paths: &[std::path::PathBuf],
    _url: Option<&str>,
) -> anyhow::Result<()> {
    anyhow::bail!("scraper extract is not built yet")
}
