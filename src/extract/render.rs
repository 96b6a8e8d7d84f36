//! The JSON rendering of a [`Page`]: [`to_json`] (the `scraper extract`
//! object, also `check-url --json`). The readable `check-url` report is the
//! binary's (`src/cli/print/page.rs`).

use serde_json::{Value, json};

use super::Page;

/// The extract object for one page.
pub fn to_json(path_or_url: &str, page: &Page) -> Value {
    let url = if path_or_url.starts_with("http://") || path_or_url.starts_with("https://") {
        Some(path_or_url.to_string())
    } else {
        page.canonical_url.as_ref().map(|u| u.as_str().to_string())
    };
    json!({
        "path": path_or_url,
        "url": url,
        "title": page.title,
        "text": page.text,
        "markdown": page.markdown,
        "date": page.date.map(|d| d.format("%Y-%m-%d").to_string()),
        "date_source": page.date_source,
        "date_modified": page.date_modified.map(|d| d.format("%Y-%m-%d").to_string()),
        "lang": page.lang,
        "byline": page.byline,
        "canonical_url": page.canonical_url.as_ref().map(|u| u.as_str()),
        "is_article": page.is_article,
        "article_signal": page.article_signal,
        "prose_ratio": (page.prose_ratio * 1000.0).round() / 1000.0,
        "relevance_score": page.relevance.score,
        "relevance": page.relevance,
        "keywords": page.keywords,
        "links": page.links.len(),
        "feeds": page.feeds.iter().map(|u| u.as_str()).collect::<Vec<_>>(),
        "robots_meta": page.robots_meta,
        "charset": page.charset,
        "accessible_for_free": page.accessible_for_free,
        "hidden_parts": page.hidden_parts,
    })
}
