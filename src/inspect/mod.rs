//! Commands that look at a site without crawling it or storing anything:
//! `scraper check-url` ([`check_url()`]) and `scraper probe` ([`probe()`]).
//! Both go through [`crate::net::Net`] (robots.txt and the per-host gap hold),
//! assemble a page's AI-use signals with the crawl's own assembly
//! ([`crate::crawl::signals`]) and parse feeds and sitemaps within the crawl's
//! limits ([`crate::discover::Limits::default`], which the crawl's workers
//! get), so what they report is what a crawl would do. The one thing `probe`
//! keeps is its rendering verdict per source (`render_probe`), which a
//! crawl under `render: auto` reads.

pub mod check_url;
pub mod probe;
pub(crate) mod render_probe;

pub use check_url::check_url;
pub use probe::probe;
