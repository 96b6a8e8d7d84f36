//! `scraper probe URL|HOST`: vet a source before it goes into `config.yml`,
//! storing nothing. Reads robots.txt (rules, Crawl-delay, `Sitemap:` lines,
//! AI-use signals), the start page (`<link rel=alternate>` feeds, meta and
//! header signals), looks for feeds and sitemaps at the usual paths, counts
//! what they list by month, fetches a small sample of listed pages and shows
//! the extractor's and the relevance verdicts, compares them as served and
//! as rendered in a browser (`render_probe`: the one thing it keeps, the
//! verdict in `data/state/render_verdicts.json`), and suggests a `sources:`
//! entry. Every request goes through [`Net`]: robots.txt and the per-host gap
//! hold as in a crawl, and `--max-requests` bounds the whole probe.

use std::collections::{BTreeMap, HashSet};

use chrono::{DateTime, FixedOffset, Utc};
use serde::Serialize;

use super::render_probe::{self, Fetched, RenderReport};
use crate::config::{Config, Source};
use crate::consent::{self, Signals};
use crate::crawl::signals;
use crate::discover::{self, Limits, Listed, Listing};
use crate::extract;
use crate::frontier::Kind;
use crate::health::Answer;
use crate::net::{Accept, FetchError, Net, Request, Robots};
use crate::record::{FailureClass, RobotsAccess};
use crate::relevance::Rule;
use crate::url::{self, Url};

/// Paths tried on every probed host (and under the start path, when it has one).
pub(crate) const COMMON_PATHS: &[&str] = &[
    "/feed",
    "/rss",
    "/rss.xml",
    "/feed.xml",
    "/atom.xml",
    "/index.xml",
    "/sitemap.xml",
    "/sitemap_index.xml",
    "/news-sitemap.xml",
    "/sitemap-news.xml",
];

/// Child sitemaps of an index read by the probe (the newest).
const MAX_CHILDREN: usize = 3;

/// How the probe may behave.
#[derive(Debug, Clone)]
pub struct Options {
    /// Listed pages fetched and judged.
    pub sample: usize,
    /// Most requests in all (robots.txt included).
    pub max_requests: u64,
    pub proxy: Option<String>,
    /// Compare the sampled pages as served and as rendered in a browser.
    pub render: bool,
    /// The data folder where the rendering verdict is remembered (`None`: not remembered).
    pub data: Option<std::path::PathBuf>,
}

/// What the probe found.
#[derive(Debug, Clone, Serialize)]
pub struct Probe {
    pub start_url: String,
    /// Where the start URL redirected to, if anywhere.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) start_redirected_to: Option<String>,
    /// Why the start page could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_error: Option<String>,
    /// The start URL failed on the network (no answer at all).
    #[serde(skip)]
    pub(crate) start_unreachable: bool,
    /// Things worth knowing about how the probe went.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    pub requests: u64,
    pub robots: RobotsReport,
    /// Labels of every AI-use signal seen (robots.txt, headers, meta tags, tdmrep.json).
    pub ai_signals: Vec<String>,
    /// Do those signals reserve AI training (pages would be withheld under `ai_use_policy: respect`)?
    pub ai_reserved: bool,
    /// Every feed and sitemap candidate and its answer.
    pub listings: Vec<ListingReport>,
    /// Distinct page URLs listed inside the source.
    pub listed: u64,
    /// Those by month of their listed date (`YYYY-MM`).
    pub by_month: BTreeMap<String, u64>,
    pub undated: u64,
    pub sample: Vec<SampleReport>,
    /// The sampled pages read as served and as rendered, and which strategy the source needs.
    pub render: RenderReport,
    /// The probe's conclusion in words.
    pub verdict: String,
    /// A `sources:` entry for `config.yml`, as a value ...
    pub(crate) suggested_source: Option<Source>,
    /// ... and as the line to paste.
    pub suggested: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RobotsReport {
    /// `parsed`, `allow_all` (4xx) or `unreachable` (nothing may be fetched).
    pub outcome: RobotsAccess,
    pub detail: String,
    pub hash: Option<String>,
    pub crawl_delay_ms: Option<u64>,
    pub sitemaps: Vec<String>,
    /// May the crawler fetch the start URL?
    pub allows_start: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct ListingReport {
    pub url: String,
    pub found_via: FoundVia,
    /// `2xx`, an HTTP status, or a failure class (`robots`, `not_html`, `not_a_listing`, ...).
    pub answer: Answer,
    /// Why a `bad_listing` could not be parsed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// `feed` or `sitemap` when it parsed.
    pub kind: Option<Kind>,
    /// Entries listed (pages; child sitemaps counted apart).
    pub entries: Option<u64>,
    pub children: u64,
    /// Newest listed date.
    pub newest: Option<String>,
}

/// Where the probe found a feed or sitemap candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum FoundVia {
    /// A `Sitemap:` line.
    #[serde(rename = "robots.txt")]
    Robots,
    /// The start page's `<link rel=alternate>`.
    #[serde(rename = "link rel=alternate")]
    LinkAlternate,
    /// One of [`COMMON_PATHS`].
    #[serde(rename = "common path")]
    CommonPath,
    /// A child of a sitemap index read before.
    #[serde(rename = "sitemap index")]
    SitemapIndex,
    /// The start URL is itself a feed or sitemap.
    #[serde(rename = "start URL")]
    StartUrl,
}

impl FoundVia {
    pub fn as_str(self) -> &'static str {
        match self {
            FoundVia::Robots => "robots.txt",
            FoundVia::LinkAlternate => "link rel=alternate",
            FoundVia::CommonPath => "common path",
            FoundVia::SitemapIndex => "sitemap index",
            FoundVia::StartUrl => "start URL",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct SampleReport {
    pub url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub title: Option<String>,
    pub date: Option<String>,
    pub is_article: bool,
    pub article_signal: Option<String>,
    pub prose_ratio: f64,
    pub relevant: bool,
    /// Which relevance rule decided, in words.
    pub relevance: String,
    pub text_chars: u64,
    pub ai_reserved: bool,
}

/// The start URL of `target`: a URL as given, or `https://HOST/` for a bare host.
pub fn start_url(target: &str) -> anyhow::Result<Url> {
    let t = target.trim();
    let text = if t.contains("://") {
        t.to_string()
    } else {
        format!("https://{}/", t.trim_end_matches('/'))
    };
    url::parse(&text).ok_or_else(|| {
        anyhow::anyhow!("{target}: expected a URL (https://example.com/blog) or a host name")
    })
}

/// Probe `target`. A bare host is probed over https, and over http when
/// https cannot be reached at all (connection, TLS, DNS or timeout).
pub async fn probe(config: &Config, target: &str, opts: &Options) -> anyhow::Result<Probe> {
    let start = start_url(target)?;
    let p = probe_start(config, &start, opts).await?;
    if target.contains("://") || !p.start_unreachable {
        return Ok(p);
    }
    let mut http = start.clone();
    if http.set_scheme("http").is_err() {
        return Ok(p);
    }
    tracing::info!(%start, error = ?p.start_error, "https unreachable; probing over http");
    let mut q = probe_start(config, &http, opts).await?;
    q.notes.push(format!(
        "{start} could not be reached ({}): probed over http",
        p.start_error.as_deref().unwrap_or("unreachable")
    ));
    q.requests += p.requests;
    Ok(q)
}

/// What every step of one probe shares.
struct Prober {
    net: Net,
    rule: Rule,
    today: chrono::NaiveDate,
}

/// What the start URL gave: where the source is, its AI-use signals, and the
/// feeds and sitemaps it named or was.
struct StartPage {
    /// The start URL after redirects (the start URL when it was not read).
    origin: Url,
    signals: Signals,
    candidates: Vec<(Url, FoundVia)>,
    listings: Vec<(ListingReport, Vec<Listed>)>,
}

/// Probe from one start URL.
async fn probe_start(config: &Config, start: &Url, opts: &Options) -> anyhow::Result<Probe> {
    let net_opts = crate::net::NetOptions {
        max_requests: opts.max_requests,
        ..(&config.crawl).into()
    };
    let net = Net::new(net_opts, opts.proxy.as_deref())?;
    let pr = Prober {
        net,
        rule: Rule::new(&config.keywords),
        today: Utc::now().date_naive(),
    };
    let robots = pr.net.robots(start).await;
    let mut p = Probe::new(start, &robots);
    let mut found = pr.start_page(start, &mut p).await;
    // Candidates in the order they are tried: robots.txt, the start page's
    // feeds (or the start URL itself when it is a feed), common paths.
    let mut queue: Vec<(Url, FoundVia)> = robots
        .sitemaps
        .iter()
        .map(|u| (u.clone(), FoundVia::Robots))
        .collect();
    queue.append(&mut found.candidates);
    let path = source_path(&found.origin);
    queue.extend(common_candidates(&found.origin, path.as_deref()));
    pr.read_listings(start, queue, &mut found.listings).await;
    let pages = listed_pages(&found, path.as_deref());
    p.count_by_month(&pages);
    let mut fetched = Vec::new();
    for u in sample_order(&pages).into_iter().take(opts.sample) {
        let Some(u) = url::parse(u) else { continue };
        let (report, page) = pr.sample_page(&u).await;
        p.sample.push(report);
        fetched.extend(page);
    }
    if opts.render {
        p.render = render_probe::compare(config, &pr.net, &pr.rule, pr.today, &fetched).await;
    }
    p.listings = found.listings.into_iter().map(|(r, _)| r).collect();
    p.ai_signals = found.signals.labels();
    p.ai_reserved = consent::reserves_ai_training(&found.signals);
    p.requests = pr.net.requests();
    p.verdict = verdict(&p);
    if p.robots.allows_start && p.robots.outcome != RobotsAccess::Unreachable {
        let source = suggest(&found.origin, path, &p);
        if let Some(data) = &opts.data {
            render_probe::remember(data, &source.key(), &mut p.render, pr.today)?;
        }
        p.suggested = Some(source.yaml_line());
        p.suggested_source = Some(source);
    }
    Ok(p)
}

impl Probe {
    /// A probe of `start` that has read robots.txt and nothing else yet.
    fn new(start: &Url, robots: &Robots) -> Probe {
        let (outcome, detail) = robots.outcome.access();
        Probe {
            start_url: start.to_string(),
            start_redirected_to: None,
            start_error: None,
            start_unreachable: false,
            notes: Vec::new(),
            requests: 0,
            robots: RobotsReport {
                outcome,
                detail,
                hash: crate::store::consent::robots_hash_hex(robots.hash),
                crawl_delay_ms: robots.crawl_delay.map(|d| d.as_millis() as u64),
                sitemaps: robots.sitemaps.iter().map(|u| u.to_string()).collect(),
                allows_start: robots.allowed(start),
            },
            ai_signals: Vec::new(),
            ai_reserved: false,
            listings: Vec::new(),
            listed: 0,
            by_month: BTreeMap::new(),
            undated: 0,
            sample: Vec::new(),
            render: RenderReport::default(),
            verdict: String::new(),
            suggested_source: None,
            suggested: None,
        }
    }

    /// `listed`, `by_month` and `undated` from the listed pages and their dates.
    fn count_by_month(&mut self, pages: &BTreeMap<String, Option<DateTime<FixedOffset>>>) {
        self.listed = pages.len() as u64;
        for d in pages.values() {
            match d {
                Some(d) => {
                    *self
                        .by_month
                        .entry(d.format("%Y-%m").to_string())
                        .or_default() += 1
                }
                None => self.undated += 1,
            }
        }
    }
}

impl Prober {
    /// Read the start URL: a page gives its feeds and its AI-use signals
    /// (assembled as the crawl's worker assembles them, tdmrep.json included);
    /// a feed or sitemap is read as the first listing. When no page was read,
    /// the signals are those of the site: robots.txt and tdmrep.json.
    async fn start_page(&self, start: &Url, p: &mut Probe) -> StartPage {
        let mut found = StartPage {
            origin: start.clone(),
            signals: Signals::default(),
            candidates: Vec::new(),
            listings: Vec::new(),
        };
        let req = Request {
            accept: Accept::Html,
            ..Request::default()
        };
        let resp = match self.net.fetch(start, &req, &|_: &Url| true).await {
            Err(e) => {
                p.start_unreachable = e.is_network();
                p.start_error = Some(e.to_string());
                None
            }
            Ok(resp) if !(200..300).contains(&resp.status) => {
                p.start_error = Some(format!("the server answered HTTP {}", resp.status));
                None
            }
            Ok(resp) => Some(resp),
        };
        let Some(resp) = resp else {
            signals::add_site_signals(&self.net, start, true, &mut found.signals).await;
            return found;
        };
        if !resp.redirects.is_empty() {
            p.start_redirected_to = Some(resp.url.to_string());
            found.origin = resp.url.clone();
        }
        found.signals = signals::from_headers(&self.net, &resp);
        let sniffed = discover::sniff(&resp.url, resp.content_type.as_deref(), &resp.body);
        if let Some(kind @ (Kind::Feed | Kind::Sitemap)) = sniffed {
            let read = read_listing(kind, &resp.url, &resp.body, FoundVia::StartUrl);
            found.listings.push(read);
            drop(resp);
            signals::add_site_signals(&self.net, &found.origin, true, &mut found.signals).await;
            return found;
        }
        let page = self.extract(&resp);
        // The response goes before tdmrep.json is fetched, as in the worker.
        drop(resp);
        signals::add_page_signals(&self.net, &found.origin, &page, true, &mut found.signals).await;
        found.candidates = (page.feeds.iter())
            .map(|u| (u.clone(), FoundVia::LinkAlternate))
            .collect();
        found
    }

    /// Read every candidate once, and the newest children of sitemap
    /// indexes, until the request budget is spent.
    async fn read_listings(
        &self,
        start: &Url,
        mut queue: Vec<(Url, FoundVia)>,
        listings: &mut Vec<(ListingReport, Vec<Listed>)>,
    ) {
        let mut tried: HashSet<String> = listings.iter().map(|(l, _)| l.url.clone()).collect();
        tried.insert(start.to_string());
        let mut i = 0;
        while i < queue.len() {
            let (u, via) = queue[i].clone();
            i += 1;
            if !tried.insert(u.to_string()) {
                continue;
            }
            let (report, listed, children) = fetch_listing(&self.net, &u, via).await;
            let spent = report.answer == Answer::Failed(FailureClass::Budget);
            listings.push((report, listed));
            if spent {
                break;
            }
            queue.extend(
                children
                    .into_iter()
                    .map(|c| (c.url, FoundVia::SitemapIndex)),
            );
        }
    }

    /// The page through the extractor, with the configured keywords.
    fn extract(&self, resp: &crate::net::Response) -> extract::Page {
        extract::extract(
            &resp.body,
            resp.charset.as_deref(),
            Some(&resp.url),
            &self.rule,
            self.today,
        )
    }
}

/// The common paths, under the source's path (when it has one) and at the root.
fn common_candidates(origin: &Url, path: Option<&str>) -> Vec<(Url, FoundVia)> {
    let mut out = Vec::new();
    for prefix in path.into_iter().chain(std::iter::once("")) {
        for common in COMMON_PATHS {
            let mut u = origin.clone();
            u.set_path(&format!("{}{common}", prefix.trim_end_matches('/')));
            u.set_query(None);
            u.set_fragment(None);
            out.push((u, FoundVia::CommonPath));
        }
    }
    out
}

/// The distinct page URLs listed inside the source (`origin`'s site, under
/// `path`), each with its newest listed date.
fn listed_pages(
    found: &StartPage,
    path: Option<&str>,
) -> BTreeMap<String, Option<DateTime<FixedOffset>>> {
    let scope = crate::source::Sources::one(found.origin.host_str().unwrap_or(""), path);
    let mut pages: BTreeMap<String, Option<DateTime<FixedOffset>>> = BTreeMap::new();
    for (_, listed) in &found.listings {
        for l in listed.iter().filter(|l| scope.contains(&l.url)) {
            let e = pages.entry(l.url.to_string()).or_insert(None);
            if l.lastmod > *e {
                *e = l.lastmod;
            }
        }
    }
    pages
}

/// The order pages are sampled in: newest listed first, then undated.
fn sample_order(pages: &BTreeMap<String, Option<DateTime<FixedOffset>>>) -> Vec<&String> {
    let mut order: Vec<(&String, &Option<DateTime<FixedOffset>>)> = pages.iter().collect();
    order.sort_by(|a, b| {
        b.1.is_some()
            .cmp(&a.1.is_some())
            .then(b.1.cmp(a.1))
            .then(a.0.cmp(b.0))
    });
    order.into_iter().map(|(u, _)| u).collect()
}

/// The path prefix a source at `u` would have: none for a home page.
fn source_path(u: &Url) -> Option<String> {
    let p = u.path().trim_end_matches('/');
    (!p.is_empty()).then(|| p.to_string())
}

fn read_listing(kind: Kind, u: &Url, body: &[u8], via: FoundVia) -> (ListingReport, Vec<Listed>) {
    let (report, listed, _) = parse_listing(kind, u, body, via);
    (report, listed)
}

fn parse_listing(
    kind: Kind,
    u: &Url,
    body: &[u8],
    via: FoundVia,
) -> (ListingReport, Vec<Listed>, Vec<Listed>) {
    let mut report = ListingReport {
        url: u.to_string(),
        found_via: via,
        answer: Answer::Success,
        error: None,
        kind: None,
        entries: None,
        children: 0,
        newest: None,
    };
    let limits = Limits::default();
    match discover::parse(kind, u, body, &limits) {
        Err(e) => {
            report.answer = Answer::BadListing;
            report.error = Some(e.to_string());
            (report, vec![], vec![])
        }
        Ok(parsed) => {
            let (pages, children, k) = match parsed.listing {
                Listing::Feed(e) => (e, vec![], Kind::Feed),
                Listing::Sitemap { urls, sitemaps } => (urls, sitemaps, Kind::Sitemap),
            };
            report.kind = Some(k);
            report.entries = Some(pages.len() as u64);
            report.children = children.len() as u64;
            report.newest = pages
                .iter()
                .filter_map(|l| l.lastmod)
                .max()
                .map(|d| d.to_rfc3339());
            let chosen = discover::select_children(&children, None, MAX_CHILDREN, MAX_CHILDREN);
            (report, pages, chosen)
        }
    }
}

/// Fetch one feed or sitemap candidate.
async fn fetch_listing(
    net: &Net,
    u: &Url,
    via: FoundVia,
) -> (ListingReport, Vec<Listed>, Vec<Listed>) {
    let failed = |answer: Answer| ListingReport {
        url: u.to_string(),
        found_via: via,
        answer,
        error: None,
        kind: None,
        entries: None,
        children: 0,
        newest: None,
    };
    // Redirects may not leave the host's site.
    let site = url::domain(u.host_str().unwrap_or("")).to_string();
    let same_site = move |n: &Url| url::domain(n.host_str().unwrap_or("")) == site;
    match net.fetch(u, &Request::listing(), &same_site).await {
        Err(e) => (failed(Answer::Failed(e.class())), vec![], vec![]),
        Ok(resp) if !(200..300).contains(&resp.status) => {
            (failed(Answer::status(resp.status)), vec![], vec![])
        }
        Ok(resp) => match discover::sniff(&resp.url, resp.content_type.as_deref(), &resp.body) {
            Some(kind @ (Kind::Feed | Kind::Sitemap)) => {
                parse_listing(kind, &resp.url, &resp.body, via)
            }
            _ => (failed(Answer::NotAListing), vec![], vec![]),
        },
    }
}

impl Prober {
    /// Fetch and judge one listed page; its AI-use signals are assembled as
    /// the crawl's worker assembles them (the response's headers, robots.txt's
    /// Content-Signal and Content-Usage lines, the meta tags, tdmrep.json).
    async fn sample_page(&self, u: &Url) -> (SampleReport, Option<Fetched>) {
        let mut r = SampleReport {
            url: u.to_string(),
            error: None,
            title: None,
            date: None,
            is_article: false,
            article_signal: None,
            prose_ratio: 0.0,
            relevant: false,
            relevance: String::new(),
            text_chars: 0,
            ai_reserved: false,
        };
        let resp = match self.net.fetch(u, &Request::html(), &|_: &Url| true).await {
            Err(FetchError::Budget) => {
                r.error = Some("not fetched: --max-requests reached".into());
                return (r, None);
            }
            Err(e) => {
                r.error = Some(e.to_string());
                return (r, None);
            }
            Ok(resp) => resp,
        };
        if !(200..300).contains(&resp.status) {
            r.error = Some(format!("the server answered HTTP {}", resp.status));
            return (r, None);
        }
        let page = self.extract(&resp);
        let fetched = Fetched {
            url: resp.url.clone(),
            body: resp.body.clone(),
            content_type: resp.header("content-type").map(str::to_string),
            is_article: page.is_article,
            text_chars: page.text.chars().count() as u64,
        };
        let mut signals = signals::from_headers(&self.net, &resp);
        let url = resp.url.clone();
        // The response goes before tdmrep.json is fetched, as in the worker.
        drop(resp);
        signals::add_page_signals(&self.net, &url, &page, true, &mut signals).await;
        r.title = page.title.clone();
        r.date = page.date.map(|d| d.to_string());
        r.is_article = page.is_article;
        r.article_signal = page.article_signal.map(str::to_string);
        r.prose_ratio = (page.prose_ratio * 100.0).round() / 100.0;
        r.relevant = page.relevance.relevant;
        r.relevance = page.relevance.reason.clone();
        r.text_chars = page.text.chars().count() as u64;
        r.ai_reserved = consent::reserves_ai_training(&signals);
        (r, Some(fetched))
    }
}

/// The conclusion in words.
fn verdict(p: &Probe) -> String {
    if p.robots.outcome == RobotsAccess::Unreachable {
        return format!(
            "robots.txt is unreachable ({}): a crawl may fetch nothing here",
            p.robots.detail
        );
    }
    if !p.robots.allows_start {
        return "robots.txt disallows the start URL for this crawler: not a usable source".into();
    }
    let working = p.listings.iter().filter(|l| l.entries.is_some()).count();
    let fetched: Vec<&SampleReport> = p.sample.iter().filter(|s| s.error.is_none()).collect();
    let articles = fetched.iter().filter(|s| s.is_article).count();
    let relevant = fetched
        .iter()
        .filter(|s| s.is_article && s.relevant)
        .count();
    let mut parts = Vec::new();
    if working == 0 {
        parts.push(
            "no feed or sitemap found: a crawl would have to follow links from the start page"
                .to_string(),
        );
    } else {
        parts.push(format!(
            "{working} feeds or sitemaps list {} pages",
            p.listed
        ));
    }
    if !fetched.is_empty() {
        parts.push(format!(
            "{articles} of {} sampled pages judged articles, {relevant} relevant",
            fetched.len()
        ));
        if articles == 0 {
            parts.push(
                "extraction finds no articles here: check a page with `scraper check-url`".into(),
            );
        }
    }
    if p.render.recommended.is_some() {
        parts.push(p.render.reason.clone());
    }
    if p.ai_reserved {
        parts.push(
            "the publisher reserves AI training (withheld under ai_use_policy: respect)".into(),
        );
    }
    parts.join("; ")
}

/// A `sources:` entry: the host (and path) of the start URL, seeded with the
/// feeds and sitemaps that answered (not robots.txt's, which every crawl
/// reads anyway, nor an index's children); the start URL when none did.
fn suggest(origin: &Url, path: Option<String>, p: &Probe) -> Source {
    let mut seeds: Vec<String> = p
        .listings
        .iter()
        .filter(|l| l.entries.is_some_and(|n| n > 0) || l.children > 0)
        .filter(|l| !matches!(l.found_via, FoundVia::Robots | FoundVia::SitemapIndex))
        .map(|l| l.url.clone())
        .collect();
    // A feed at a common path is often also linked: keep one of each.
    seeds.dedup();
    if seeds.is_empty() && p.robots.sitemaps.is_empty() {
        seeds.push(origin.to_string());
    }
    Source {
        host: origin.host_str().unwrap_or("").to_string(),
        path,
        seeds,
        render: None,
    }
}
