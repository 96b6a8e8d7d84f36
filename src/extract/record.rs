//! The stored record made from an extracted page: one function for the crawl
//! (`crawl::page`) and `scraper reextract`, so that a page extracted again
//! by the same extractor gives the same bytes.

use super::Page;
use crate::record::{Article, DateSource, Provenance};
use crate::url::{self, Url};

/// `crawl.paywalled_text: flag` on a record of `page`: only what a reader
/// without a subscription sees is kept as its text and Markdown. A page
/// with no paywalled part keeps its record as it is. The crawl and
/// `reextract` both call this, so a record made again from the archive
/// holds what the crawl would store.
pub fn keep_free_part(article: &mut Article, page: &Page) {
    if let Some((t, md)) = &page.free_part {
        article.text = t.clone();
        article.markdown = (!md.is_empty()).then(|| md.clone());
    }
}

/// The record of `page`, fetched from `url` (the final URL), with what the
/// crawl knew of it (`prov`) and the extractor that made it (`version`).
pub fn article(page: &Page, url: &Url, prov: &Provenance, version: &str) -> Article {
    // A year found only in the text is not a publication day: keep the year alone.
    let day_known = page.date_source != Some(DateSource::TextYear);
    let date = page.date.filter(|_| day_known);
    let year = page.date.map(|d| chrono::Datelike::year(&d));
    let canonical = page
        .canonical_url
        .as_ref()
        .filter(|c| *c != url)
        .map(|c| c.to_string());
    Article {
        id: prov.id,
        url: url.to_string(),
        domain: url::domain(url.host_str().unwrap_or("")).to_string(),
        title: page.title.clone().unwrap_or_default(),
        date,
        date_source: page.date_source.map(|s| s.as_str().to_string()),
        year,
        text: page.text.clone(),
        keywords: page.keywords.clone(),
        fetched_at: prov.fetched_at,
        lang: page.lang.clone(),
        canonical_url: canonical,
        byline: page.byline.clone(),
        run_id: prov.run_id.clone(),
        robots_hash: prov.robots_hash.clone(),
        ai_signals: prov.ai_signals.clone(),
        ai_reserved: prov.ai_reserved,
        relevance_score: Some(page.relevance.score),
        crawler: prov.crawler.clone(),
        markdown: (!page.markdown.is_empty()).then(|| page.markdown.clone()),
        date_modified: page.date_modified.or(prov.listed_modified),
        updated: prov.updated,
        accessible_for_free: page.accessible_for_free,
        extractor_version: Some(version.to_string()),
        warc_file: prov.warc_file.clone(),
        warc_offset: prov.warc_offset,
        withdrawn: None,
        rendered: false,
    }
}
