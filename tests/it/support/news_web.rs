//! A generated news web for the discovery tests and benchmark: hosts with an
//! RSS feed, an Atom feed, a sitemap index named only in robots.txt (gzip
//! children, a news sitemap), dated articles, and "publishing" on demand.
//!
//! Feeds and sitemaps carry an ETag and a Last-Modified (the Atom feed only the
//! latter) and answer `If-None-Match` / `If-Modified-Since` with 304. Every
//! answer the site itself gives is logged with its status ([`Site::answers`]).
#![allow(dead_code)]

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Duration, NaiveDate, Utc};

use crate::support::web::{Reply, Req, Web, gzip};

/// Entries in each feed (newest first).
pub const FEED_LEN: usize = 10;
/// Entries in the news sitemap (newest first).
pub const NEWS_LEN: usize = 3;

/// One answer of the site: (host, path, status).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub host: String,
    pub path: String,
    pub status: u16,
    /// The request carried If-None-Match or If-Modified-Since.
    pub conditional: bool,
}

struct Inner {
    hosts: Vec<String>,
    old: usize,
    published: Vec<AtomicUsize>,
    /// Articles per sitemap child.
    chunk: usize,
    /// Articles link to the two before them.
    related: bool,
    /// When the new articles were published.
    now: DateTime<Utc>,
    answers: Mutex<Vec<Answer>>,
}

/// The generated web (cheap to clone; clones share the publishing state).
#[derive(Clone)]
pub struct Site(Arc<Inner>);

impl Site {
    /// `hosts` with `old` articles each, spread evenly over 2023 and 2024.
    pub fn new(hosts: &[&str], old: usize, chunk: usize, related: bool) -> Site {
        Site(Arc::new(Inner {
            hosts: hosts.iter().map(|h| h.to_string()).collect(),
            old,
            published: hosts.iter().map(|_| AtomicUsize::new(0)).collect(),
            chunk: chunk.max(1),
            related,
            now: Utc::now(),
            answers: Mutex::new(Vec::new()),
        }))
    }

    /// Serve the site; `extra` may answer a request first.
    pub fn start(&self, extra: impl Fn(&Req) -> Option<Reply> + Send + Sync + 'static) -> Web {
        let site = self.clone();
        Web::start(move |r| extra(r).unwrap_or_else(|| site.answer(r)))
    }

    /// Publish `n` new articles on `host` (dated now).
    pub fn publish(&self, host: &str, n: usize) {
        if let Some(i) = self.0.hosts.iter().position(|h| h == host) {
            self.0.published[i].fetch_add(n, Ordering::SeqCst);
        }
    }

    pub fn old(&self) -> usize {
        self.0.old
    }

    /// Articles visible on `host` now.
    pub fn visible(&self, host: &str) -> usize {
        self.0.hosts.iter().position(|h| h == host).map_or(0, |i| {
            self.0.old + self.0.published[i].load(Ordering::SeqCst)
        })
    }

    pub fn answers(&self) -> Vec<Answer> {
        self.0.answers.lock().expect("answers lock").clone()
    }

    pub fn clear_answers(&self) {
        self.0.answers.lock().expect("answers lock").clear();
    }

    /// Statuses answered for `host` and `path`, in order.
    pub fn statuses(&self, host: &str, path: &str) -> Vec<u16> {
        self.answers()
            .iter()
            .filter(|a| a.host == host && a.path == path)
            .map(|a| a.status)
            .collect()
    }

    /// Publication time of article `n`.
    pub fn date(&self, n: usize) -> DateTime<Utc> {
        if n >= self.0.old {
            return self.0.now;
        }
        let start = NaiveDate::from_ymd_opt(2023, 1, 1)
            .expect("a valid date")
            .and_hms_opt(9, 30, 0)
            .expect("a valid time")
            .and_utc();
        start + Duration::days((n * 730 / self.0.old.max(1)) as i64)
    }

    /// `/YYYY/MM/DD/story-N`.
    pub fn path(&self, n: usize) -> String {
        format!("{}/story-{n}", self.date(n).format("/%Y/%m/%d"))
    }

    fn answer(&self, r: &Req) -> Reply {
        let reply = self.route(r);
        let conditional =
            r.header("if-none-match").is_some() || r.header("if-modified-since").is_some();
        let status = reply.as_ref().map_or(404, Reply::status_code);
        self.0.answers.lock().expect("answers lock").push(Answer {
            host: r.host.clone(),
            path: r.path.clone(),
            status,
            conditional,
        });
        reply.unwrap_or_else(Reply::not_found)
    }

    fn route(&self, r: &Req) -> Option<Reply> {
        let host = r.host.as_str();
        if !self.0.hosts.iter().any(|h| h == host) {
            return None;
        }
        let v = self.visible(host);
        let path = r.path.as_str();
        let newest = |k: usize| (0..v).rev().take(k).collect::<Vec<_>>();
        let doc = |body: Vec<u8>, ct: &str, etag: bool, lm: DateTime<Utc>| {
            Some(conditional(r, body, ct, etag, lm))
        };
        match path {
            "/robots.txt" => Some(Reply::text(format!(
                "User-agent: *\nAllow: /\nSitemap: http://{host}/sitemap_index.xml\n"
            ))),
            "/" => {
                let links: String = newest(5)
                    .iter()
                    .map(|&n| format!("<li><a href=\"{}\">story {n}</a></li>", self.path(n)))
                    .collect();
                let links = format!("{links}<li><a href=\"/tag/ai\">AI</a></li>");
                Some(Reply::html(format!(
                    "<!doctype html><html><head><title>{host}</title></head><body><ul>{links}</ul></body></html>"
                )))
            }
            "/feed.xml" => {
                let items = newest(FEED_LEN);
                let body = self.rss(host, &items);
                doc(
                    body.into_bytes(),
                    "application/rss+xml",
                    true,
                    self.latest(&items),
                )
            }
            "/atom.xml" => {
                let items = newest(FEED_LEN);
                let body = self.atom(host, &items);
                doc(
                    body.into_bytes(),
                    "application/atom+xml",
                    false,
                    self.latest(&items),
                )
            }
            "/sitemap_index.xml" => {
                let chunks = v.div_ceil(self.0.chunk);
                // Stale dates, as some publishers' indexes have: the date of the
                // newest *old* article in the child, never a new one's.
                let mut body = String::from(
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
                );
                for k in 0..chunks {
                    let last_old = ((k + 1) * self.0.chunk).min(self.0.old).saturating_sub(1);
                    body.push_str(&format!(
                        "<sitemap><loc>http://{host}/sitemaps/posts-{k}.xml.gz</loc><lastmod>{}</lastmod></sitemap>\n",
                        self.date(last_old).format("%Y-%m-%d")
                    ));
                }
                body.push_str(&format!(
                    "<sitemap><loc>http://{host}/sitemaps/news.xml</loc></sitemap>\n</sitemapindex>\n"
                ));
                let lm = self.latest(&(0..v).collect::<Vec<_>>());
                doc(body.into_bytes(), "application/xml", true, lm)
            }
            "/sitemaps/news.xml" => {
                let items = newest(NEWS_LEN);
                let body = self.news(host, &items);
                doc(
                    body.into_bytes(),
                    "application/xml",
                    true,
                    self.latest(&items),
                )
            }
            p if p.starts_with("/sitemaps/posts-") && p.ends_with(".xml.gz") => {
                let k: usize = p["/sitemaps/posts-".len()..p.len() - ".xml.gz".len()]
                    .parse()
                    .ok()?;
                let items: Vec<usize> =
                    (k * self.0.chunk..((k + 1) * self.0.chunk).min(v)).collect();
                if items.is_empty() {
                    return None;
                }
                let body = gzip(self.urlset(host, &items).as_bytes());
                doc(body, "application/x-gzip", true, self.latest(&items))
            }
            p if p.starts_with("/archive/") => Some(Reply::html(format!(
                "<!doctype html><html><head><title>Archive</title></head><body><h1>Archive {p}</h1><a href=\"/\">Home</a></body></html>"
            ))),
            // A listing page with validators, as a revisited page would have.
            "/tag/ai" => doc(
                b"<!doctype html><html><head><title>AI</title></head><body><a href=\"/\">Home</a></body></html>".to_vec(),
                "text/html",
                true,
                self.date(0),
            ),
            p => {
                let n: usize = p.rsplit_once("/story-")?.1.parse().ok()?;
                (n < v && self.path(n) == p).then(|| Reply::html(self.article(host, n)))
            }
        }
    }

    fn latest(&self, items: &[usize]) -> DateTime<Utc> {
        items
            .iter()
            .map(|&n| self.date(n))
            .max()
            .unwrap_or(self.0.now)
    }

    fn rss(&self, host: &str, items: &[usize]) -> String {
        let items: String = items
            .iter()
            .map(|&n| {
                format!(
                    "<item><title>Story {n}</title><link>http://{host}{}</link><guid>http://{host}{}</guid><pubDate>{}</pubDate><description>An AI story.</description></item>\n",
                    self.path(n),
                    self.path(n),
                    self.date(n).to_rfc2822()
                )
            })
            .collect();
        format!(
            "<?xml version=\"1.0\"?>\n<rss version=\"2.0\"><channel><title>{host}</title><link>http://{host}/</link><description>news</description>\n{items}</channel></rss>\n"
        )
    }

    fn atom(&self, host: &str, items: &[usize]) -> String {
        let entries: String = items
            .iter()
            .map(|&n| {
                let d = self.date(n).to_rfc3339();
                format!(
                    "<entry><title>Story {n}</title><id>tag:{host},{n}</id><link href=\"http://{host}{}\"/><published>{d}</published><updated>{d}</updated></entry>\n",
                    self.path(n)
                )
            })
            .collect();
        format!(
            "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\"><title>{host}</title><id>tag:{host}</id><updated>{}</updated>\n{entries}</feed>\n",
            self.latest(items).to_rfc3339()
        )
    }

    fn urlset(&self, host: &str, items: &[usize]) -> String {
        let urls: String = items
            .iter()
            .map(|&n| {
                let lastmod = if n < self.0.old {
                    self.date(n).format("%Y-%m-%d").to_string()
                } else {
                    self.date(n).to_rfc3339()
                };
                format!(
                    "<url><loc>http://{host}{}</loc><lastmod>{lastmod}</lastmod></url>\n",
                    self.path(n)
                )
            })
            .collect();
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n{urls}</urlset>\n"
        )
    }

    fn news(&self, host: &str, items: &[usize]) -> String {
        let urls: String = items
            .iter()
            .map(|&n| {
                format!(
                    "<url><loc>http://{host}{}</loc><news:news><news:publication><news:name>{host}</news:name><news:language>en</news:language></news:publication><news:publication_date>{}</news:publication_date><news:title>Story {n}</news:title></news:news></url>\n",
                    self.path(n),
                    self.date(n).to_rfc3339()
                )
            })
            .collect();
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\" xmlns:news=\"http://www.google.com/schemas/sitemap-news/0.9\">\n{urls}</urlset>\n"
        )
    }

    /// A relevant AI story: nav, a year archive link, the tag page and (with
    /// `related`) the two stories before it.
    pub fn article(&self, host: &str, n: usize) -> String {
        let date = self.date(n);
        let title =
            format!("OpenAI and DeepMind race to build a new large language model, part {n}");
        let paras = [
            format!("The artificial intelligence lab said on {} that its newest large language model, trained on a larger cluster of GPUs, beats earlier AI systems on reasoning benchmarks by a wide margin.", date.format("%Y-%m-%d")),
            "Researchers described how the model was trained with reinforcement learning from human feedback, and how machine learning engineers measured its behaviour on coding, maths and long documents before release.".to_string(),
            "Critics warned that generative AI tools still make confident mistakes, and that the companies building foundation models have not explained what data went into training them or how the systems are evaluated.".to_string(),
            format!("Story number {n} on {host} ends here, with a note that the deep learning community will be watching closely how these neural network systems are used by businesses and governments."),
        ];
        let body: String = paras.iter().map(|p| format!("<p>{p}</p>\n")).collect();
        let mut links = format!(
            "<a href=\"/archive/{}\">More from {}</a> <a href=\"/tag/ai\">AI</a>",
            date.format("%Y"),
            date.format("%Y")
        );
        if self.0.related {
            for m in [n.checked_sub(1), n.checked_sub(2)].into_iter().flatten() {
                links.push_str(&format!(" <a href=\"{}\">story {m}</a>", self.path(m)));
            }
        }
        format!(
            r#"<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>{title}</title>
<meta property="og:type" content="article">
<meta property="article:published_time" content="{}">
<link rel="alternate" type="application/rss+xml" title="News" href="/feed.xml">
<link rel="alternate" type="application/rss+xml" title="Comments" href="{}/feed/">
</head><body>
<nav><a href="/">Home</a></nav>
<main><article><h1>{title}</h1>
{body}</article></main>
<aside>{links}</aside>
</body></html>"#,
            date.to_rfc3339(),
            self.path(n)
        )
    }
}

/// A listing reply with validators, or 304 when the request's match.
fn conditional(r: &Req, body: Vec<u8>, ct: &str, with_etag: bool, lm: DateTime<Utc>) -> Reply {
    let mut h = DefaultHasher::new();
    body.hash(&mut h);
    let etag = format!("\"{:016x}\"", h.finish());
    let last_modified = lm.format("%a, %d %b %Y %H:%M:%S GMT").to_string();
    let etag_match = with_etag && r.header("if-none-match").is_some_and(|v| v.contains(&etag));
    let since_match = r
        .header("if-modified-since")
        .and_then(|v| DateTime::parse_from_rfc2822(v).ok())
        .is_some_and(|since| since.timestamp() >= lm.timestamp());
    // RFC 9110: If-None-Match wins when present.
    let fresh = if with_etag && r.header("if-none-match").is_some() {
        etag_match
    } else {
        since_match
    };
    let mut reply = if fresh {
        Reply::status(304)
    } else {
        Reply::bytes(ct, body)
    };
    if with_etag {
        reply = reply.header("etag", &etag);
    }
    reply.header("last-modified", &last_modified)
}
