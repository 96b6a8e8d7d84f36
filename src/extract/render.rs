//! Renderings of a [`Page`]: [`to_json`] (the `scraper extract` object, also
//! `check-url --json`) and [`describe`] (the readable `check-url` report).

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::Page;
use crate::relevance::TermCount;

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

fn terms(list: &[TermCount]) -> String {
    if list.is_empty() {
        return "none".into();
    }
    list.iter()
        .map(|t| format!("{} x{}", t.term, t.count))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A readable multi-line report of what the extractor decided.
pub fn describe(page: &Page, url: &str) -> String {
    let r = &page.relevance;
    let mut s = String::new();
    let kind = match (page.is_article, page.article_signal) {
        (true, _) => "an article",
        (false, Some(_)) => "not an article (article signal, but too little prose)",
        (false, None) => "not an article (no article signal)",
    };
    let stored = page.is_article && r.relevant;
    let _ = writeln!(s, "URL:          {url}");
    if let Some(c) = &page.canonical_url {
        let _ = writeln!(s, "Canonical:    {c}");
    }
    let _ = writeln!(s, "Page:         {kind}");
    let _ = writeln!(
        s,
        "Title:        {}",
        page.title.as_deref().unwrap_or("(none)")
    );
    let _ = writeln!(
        s,
        "Date:         {} (from {})",
        page.date.map_or("(none)".into(), |d| d.to_string()),
        page.date_source.map_or("nowhere", |s| s.as_str())
    );
    let _ = writeln!(
        s,
        "Language:     {}",
        page.lang.as_deref().unwrap_or("(unknown)")
    );
    let _ = writeln!(
        s,
        "Byline:       {}",
        page.byline.as_deref().unwrap_or("(none)")
    );
    let _ = writeln!(
        s,
        "Article:      signal {}; prose ratio {:.2}",
        page.article_signal.unwrap_or("none"),
        page.prose_ratio
    );
    let words = crate::relevance::word_count(&page.text);
    let _ = writeln!(
        s,
        "Text:         {words} words in {} paragraphs",
        page.text.lines().count()
    );
    let _ = writeln!(
        s,
        "Strong terms: {} mention(s): {}",
        r.strong_mentions,
        terms(&r.strong_terms)
    );
    let _ = writeln!(
        s,
        "Broad terms:  {} mention(s): {}",
        r.broad_mentions,
        terms(&r.broad_terms)
    );
    let _ = writeln!(
        s,
        "Title/lede:   {}; density {:.1} strong mentions per 1,000 words",
        if r.strong_in_title_or_lede {
            "a strong term is in the title or lede"
        } else {
            "no strong term in the title or lede"
        },
        r.density
    );
    let _ = writeln!(
        s,
        "Score:        {:.2} (min_relevance_score {:.2}); prose {} words, {} strong mention(s) counted",
        r.score, r.min_score, r.evidence.prose_words, r.evidence.prose_mentions
    );
    for reason in &r.reasons {
        let _ = writeln!(s, "              - {reason}");
    }
    let _ = writeln!(s, "Relevance:    {}", r.reason);
    let verdict = if stored {
        "would be stored (an article, and relevant)".to_string()
    } else if !page.is_article {
        format!("would not be stored: {kind}")
    } else {
        "would not be stored: not relevant".to_string()
    };
    let _ = writeln!(s, "Decision:     {verdict}");
    let _ = writeln!(
        s,
        "Free to read: {}",
        match page.accessible_for_free {
            Some(true) => "yes (the page says so)",
            Some(false) => "no (paywall declared or marked up)",
            None => "not stated",
        }
    );
    if !page.hidden_parts.is_empty() {
        let _ = writeln!(s, "Hidden text:  read {}", page.hidden_parts.join("; "));
    }
    if !page.robots_meta.is_empty() {
        let _ = writeln!(s, "Robots meta:  {}", page.robots_meta.join(", "));
    }
    let _ = writeln!(
        s,
        "Links:        {} ({} feeds)",
        page.links.len(),
        page.feeds.len()
    );
    s
}
