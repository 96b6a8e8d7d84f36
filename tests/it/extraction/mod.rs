//! Extraction: whole pages through the extractor and the `scraper extract`
//! binary, the Markdown field, the hard-page fixtures and paywalled text.

mod hard_pages;
mod markdown;
mod pages;
mod paywall;
