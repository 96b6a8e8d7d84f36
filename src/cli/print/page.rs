//! The readable report of what the extractor decided about a page (the body
//! of `scraper check-url`'s layout).

use std::fmt::Write as _;

use scraper::extract::Page;
use scraper::relevance::{Relevance, TermCount};

fn terms(list: &[TermCount]) -> String {
    if list.is_empty() {
        return "none".into();
    }
    list.iter()
        .map(|t| format!("{} x{}", t.term, t.count))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A readable multi-line report of what the extractor decided about the page at `url`.
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
    let words = scraper::relevance::word_count(&page.text);
    let _ = writeln!(
        s,
        "Text:         {words} words in {} paragraphs",
        page.text.lines().count()
    );
    relevance(&mut s, r);
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

/// The relevance lines: the terms found, where, how dense, the score and its reasons.
fn relevance(s: &mut String, r: &Relevance) {
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
}

#[cfg(test)]
mod tests {
    use super::describe;

    /// A page of the shipped config's topic through the extractor.
    fn page(html: &str) -> scraper::extract::Page {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let config = scraper::config::Config::load(&root.join("config.yml")).expect("config");
        let rule = scraper::relevance::Rule::new(&config.keywords);
        let url = scraper::url::parse("https://news.example.com/x").unwrap();
        let today = chrono::NaiveDate::from_ymd_opt(2026, 11, 29).unwrap();
        scraper::extract::extract(html.as_bytes(), None, Some(&url), &rule, today)
    }

    #[test]
    fn describe_explains_the_decision() {
        let para = "<p>OpenAI on Tuesday released a large language model that it says reasons \
                    better than earlier AI systems; the model powers ChatGPT and was trained \
                    with machine learning on a larger cluster.</p>";
        let html = format!(
            "<!doctype html><html lang=\"en\"><head><title>OpenAI releases a new large language model</title>\
             <meta property=\"og:type\" content=\"article\"></head><body><article>\
             <h1>OpenAI releases a new large language model</h1>{}</article></body></html>",
            para.repeat(8)
        );
        let mut p = page(&html);
        let report = describe(&p, "https://news.example.com/x");
        for needle in [
            "URL:          https://news.example.com/x\n",
            "Title:        OpenAI releases a new large language model\n",
            "Date:",
            "Language:     en\n",
            "Strong terms:",
            "Relevance:",
            "Decision:",
            "Links:",
        ] {
            assert!(report.contains(needle), "{needle} in\n{report}");
        }
        assert!(!report.contains("Hidden text:"), "{report}");
        // Text read from hidden or streamed markup is named.
        p.hidden_parts = vec!["a <template>".into(), "__NEXT_DATA__".into()];
        let report = describe(&p, "https://news.example.com/x");
        assert!(
            report.contains("Hidden text:  read a <template>; __NEXT_DATA__\n"),
            "{report}"
        );
    }
}
