//! `scraper check-url`: fetch one page the way the crawler would (robots.txt
//! honoured, politeness on) and return everything the extractor decided as a
//! [`Report`]; the binary prints it (`src/cli/print/check_url.rs`).

use std::time::Duration;

use chrono::Utc;

use crate::config::Config;
use crate::consent::AiDecision;
use crate::consent::Signals;
use crate::crawl::signals;
use crate::discover::{self, Limits, Listing};
use crate::extract::{self, Page};
use crate::frontier::Kind;
use crate::net::{Accept, Net, Request, Response};
use crate::record::TdmOutcome;
use crate::relevance::Rule;
use crate::url::{self, Url};

/// What `check-url` found at a URL.
#[derive(Debug)]
pub enum Report {
    /// A feed or sitemap: never stored as an article.
    Listing(ListingReport),
    /// A page, through the extractor and the AI-use rules.
    Page(Box<PageReport>),
}

/// A feed or sitemap, counted.
#[derive(Debug)]
pub struct ListingReport {
    /// Where it was read (after redirects).
    pub url: Url,
    /// [`Kind::Feed`] or [`Kind::Sitemap`].
    pub kind: Kind,
    /// Entries of a feed, page URLs of a sitemap.
    pub entries: usize,
    /// Child sitemaps of a sitemap index.
    pub sitemaps: usize,
}

/// A page as the crawl would judge it.
#[derive(Debug)]
pub struct PageReport {
    /// The final URL, after redirects.
    pub url: Url,
    /// The URLs that answered with a redirect, in order.
    pub redirects: Vec<Url>,
    /// robots.txt's `Crawl-delay` for our agent (or `*`), when it sets one.
    pub crawl_delay: Option<Duration>,
    /// What the extractor decided.
    pub page: Page,
    /// The page's AI-use signals and what the crawl would do about them.
    pub consent: Consent,
}

/// A page's AI-use signals, assembled as the worker assembles them.
#[derive(Debug)]
pub struct Consent {
    pub signals: Signals,
    /// What the crawl does under the configured `ai_use_policy`.
    pub decision: AiDecision,
    /// xxh3 of the robots.txt the page was fetched under (0: none).
    pub robots_hash: u64,
    /// How the origin's `tdmrep.json` was answered.
    pub tdmrep: TdmOutcome,
}

/// Fetch `target` as the crawler would and report what it would decide.
pub async fn check_url(
    config: &Config,
    target: &str,
    proxy: Option<&str>,
) -> anyhow::Result<Report> {
    let u = url::parse(target)
        .ok_or_else(|| anyhow::anyhow!("{target}: expected an absolute http(s) URL"))?;
    let net = Net::new(&config.crawl, proxy)?;
    let crawl_delay = robots_allow(&net, &u, &config.crawl.user_agent).await?;
    let resp = fetch(&net, &u).await?;
    if let Some(listing) = listing(&u, &resp)? {
        return Ok(Report::Listing(listing));
    }
    let page = extract_page(config, &resp);
    let headers = signals::from_headers(&net, &resp);
    // The response (its body and share of the body budget) goes before
    // tdmrep.json is fetched, as in the worker: a page holding the budget's
    // finisher token would otherwise make that fetch wait on it.
    let (url, redirects) = {
        let resp = resp;
        (resp.url, resp.redirects)
    };
    let consent = consent(&net, config, headers, &url, &page).await;
    Ok(Report::Page(Box::new(PageReport {
        url,
        redirects,
        crawl_delay,
        page,
        consent,
    })))
}

/// robots.txt must allow `u`; its `Crawl-delay`, if any.
async fn robots_allow(net: &Net, u: &Url, agent: &str) -> anyhow::Result<Option<Duration>> {
    let robots = net.robots(u).await;
    if !robots.allowed(u) {
        anyhow::bail!(
            "{u}: robots.txt does not allow {agent} to fetch this page ({:?})",
            robots.outcome
        );
    }
    Ok(robots.crawl_delay)
}

/// Fetch `u` (any content type, no validators); anything but a 2xx is an
/// error, and so is a bot challenge or a `402 Payment Required`.
async fn fetch(net: &Net, u: &Url) -> anyhow::Result<Response> {
    let req = Request {
        accept: Accept::Any,
        etag: None,
        last_modified: None,
        keep_raw: false,
    };
    let resp = net
        .fetch(u, &req, &|_: &Url| true)
        .await
        .map_err(|e| anyhow::anyhow!("{u}: {e}"))?;
    if let Some(t) = crate::net::turned::classify(resp.status, &resp.headers, &resp.body) {
        anyhow::bail!(
            "{u}: turned away: {} (the crawler stores nothing from it)",
            t.describe()
        );
    }
    if !(200..300).contains(&resp.status) {
        anyhow::bail!("{u}: the server answered HTTP {}", resp.status);
    }
    Ok(resp)
}

/// The response counted as a listing when it is a feed or a sitemap.
fn listing(u: &Url, resp: &Response) -> anyhow::Result<Option<ListingReport>> {
    let Some(kind @ (Kind::Feed | Kind::Sitemap)) =
        discover::sniff(&resp.url, resp.content_type.as_deref(), &resp.body)
    else {
        return Ok(None);
    };
    // The crawl's limits, as its workers parse listings.
    let listing = discover::parse(kind, &resp.url, &resp.body, &Limits::default())
        .map_err(|e| anyhow::anyhow!("{u}: {e}"))?
        .listing;
    let (entries, sitemaps) = match &listing {
        Listing::Feed(e) => (e.len(), 0),
        Listing::Sitemap { urls, sitemaps } => (urls.len(), sitemaps.len()),
    };
    Ok(Some(ListingReport {
        url: resp.url.clone(),
        kind,
        entries,
        sitemaps,
    }))
}

/// The page through the extractor, with the configured keywords.
fn extract_page(config: &Config, resp: &Response) -> Page {
    let rule = Rule::new(&config.keywords);
    extract::extract(
        &resp.body,
        resp.charset.as_deref(),
        Some(&resp.url),
        &rule,
        Utc::now().date_naive(),
    )
}

/// The page's AI-use signals through the worker's assembly (the header
/// signals of [`signals::from_headers`], then [`signals::add_page_signals`]), `tdmrep.json`
/// always asked for, and the decision under `ai_use_policy`.
async fn consent(
    net: &Net,
    config: &Config,
    mut signals: Signals,
    url: &Url,
    page: &Page,
) -> Consent {
    let got = signals::add_page_signals(net, url, page, true, &mut signals).await;
    // Invariant: `add_page_signals` answers with the tdmrep.json it was asked for.
    let tdmrep = got.tdmrep.expect("tdmrep.json was asked for");
    Consent {
        decision: AiDecision::new(&signals, config.crawl.ai_use_policy),
        signals,
        robots_hash: got.robots_hash,
        tdmrep: tdmrep.outcome.clone(),
    }
}
