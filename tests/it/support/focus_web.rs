//! A local web for focused crawling (issue 15): news sites whose share of AI
//! stories runs from none to 90%, crawled by the real binary through the
//! fixture server, with the ground truth of which article is about AI.
//!
//! Each outlet has a home page (section links and the latest headlines), section
//! hubs (`/section/<name>?page=k`, 25 headlines a page, "Older stories" to the
//! next), optionally an RSS feed of its 30 newest items with titles and dates,
//! articles that link six related stories (mostly from their own section) and
//! the sections, and a robots.txt that disallows `/private/` (some articles
//! link there). AI stories mostly carry AI headlines, but some have bland
//! ones; other stories are about sport, business, health, science and
//! gadgets, and a few gadget headlines say "AI" over a story that is not
//! about it. Some outlets put the headline in the URL slug, others use
//! numbers. Portals hold thousands of directory pages with few or no stories.
//! One host (`busy`) answers every tenth request with 429 and Retry-After.
//!
//! `frontier/polite_web.rs` crawls it; `benches/focus.rs` measures focus on it.
#![allow(dead_code)]

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::support::web::{LoggedRequest, Reply, Req, Web};

/// One site of the web.
#[derive(Debug, Clone)]
pub struct Site {
    pub name: String,
    /// Share of articles about AI.
    pub ai_share: f64,
    pub articles: usize,
    /// Headlines in URL slugs (else `/story/<n>`).
    pub slugs: bool,
    pub feed: bool,
    /// A portal: directory pages, categories instead of sections.
    pub portal: bool,
    /// Answers every tenth request with 429 and `Retry-After: 1`.
    pub busy: bool,
}

impl Site {
    fn new(name: &str, ai_share: f64, articles: usize) -> Site {
        Site {
            name: name.to_string(),
            ai_share,
            articles,
            slugs: true,
            feed: false,
            portal: false,
            busy: false,
        }
    }
}

/// The benchmark web: 20 outlets from 90% AI stories to none, two portals, a
/// lab blog and a busy host (24 hosts).
pub fn sites() -> Vec<Site> {
    let shares = [
        0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.35, 0.3, 0.25, 0.2, 0.15, 0.12, 0.1, 0.08, 0.06, 0.04,
        0.02, 0.01, 0.0, 0.0,
    ];
    let mut out: Vec<Site> = shares
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            let mut site = Site::new(&format!("outlet{i:02}.test"), s, 600);
            site.slugs = i % 3 != 1;
            site.feed = i % 2 == 0;
            site
        })
        .collect();
    for (name, share) in [("portal-a.test", 0.02), ("portal-b.test", 0.0)] {
        let mut p = Site::new(name, share, 3000);
        p.portal = true;
        p.slugs = false;
        out.push(p);
    }
    let mut lab = Site::new("lab.test", 0.85, 300);
    lab.feed = true;
    out.push(lab);
    let mut busy = Site::new("busy.test", 0.3, 600);
    busy.busy = true;
    out.push(busy);
    out
}

/// A smaller web for tests: `n` outlets (shares spread from 0.9 to 0) and the busy host.
pub fn small_sites(n: usize, articles: usize) -> Vec<Site> {
    let mut out: Vec<Site> = (0..n)
        .map(|i| {
            let share = 0.9 * (n - 1 - i) as f64 / (n - 1).max(1) as f64;
            let mut s = Site::new(&format!("outlet{i:02}.test"), share, articles);
            s.slugs = i % 2 == 0;
            s.feed = i % 2 == 1;
            s
        })
        .collect();
    let mut busy = Site::new("busy.test", 0.3, articles);
    busy.busy = true;
    out.push(busy);
    out
}

/// A fixed pseudo-random number for (host, n, salt), 0..1000.
fn roll(host: &str, n: usize, salt: u64) -> u64 {
    let mut x = (n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ salt;
    for b in host.bytes() {
        x = (x ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    x ^= x >> 31;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 29;
    x % 1000
}

const SECTIONS: [&str; 6] = ["ai", "business", "sport", "health", "science", "gadgets"];
const SECTION_NAMES: [&str; 6] = [
    "Artificial Intelligence",
    "Business",
    "Sport",
    "Health",
    "Science",
    "Gadgets",
];

/// Is article `n` of `site` about AI (the ground truth)?
pub fn is_ai(site: &Site, n: usize) -> bool {
    (roll(&site.name, n, 1) as f64) < site.ai_share * 1000.0
}

/// The section of article `n` (index into [`SECTIONS`]).
fn section_of(site: &Site, n: usize) -> usize {
    if is_ai(site, n) {
        if roll(&site.name, n, 2) < 850 { 0 } else { 4 }
    } else {
        1 + roll(&site.name, n, 3) as usize % 5
    }
}

const AI_TITLES: [&str; 8] = [
    "OpenAI unveils a new large language model for coders",
    "DeepMind shows machine learning that plans ahead",
    "Generative AI reaches the newsroom",
    "Why the language model race is heating up",
    "Regulators weigh rules for artificial intelligence",
    "A startup trains its own AI model on public data",
    "Machine learning helps forecast floods",
    "Inside the lab building generative AI tools",
];
const BLAND_TITLES: [&str; 3] = [
    "What we learned this week",
    "The interview: a researcher on her next project",
    "Five questions for the new chief scientist",
];
const OTHER_TITLES: [[&str; 3]; 5] = [
    [
        "Shares slip as interest rates stay high",
        "A retailer closes fifty stores",
        "Cloud software prices rise again",
    ],
    [
        "Late goal sends the home side through",
        "The marathon season opens in the rain",
        "A coach looks back on ten years",
    ],
    [
        "Hospitals report a mild flu season",
        "Walking an hour a day, measured",
        "A new clinic opens downtown",
    ],
    [
        "Astronomers find a cold distant planet",
        "The oldest tree in the valley, dated",
        "Neuroscientists map how mice remember",
    ],
    [
        "This phone's new AI camera is fine, mostly",
        "A folding laptop that finally works",
        "Headphones reviewed: quiet enough",
    ],
];

/// The headline of article `n`.
pub fn title(site: &Site, n: usize) -> String {
    let r = roll(&site.name, n, 4) as usize;
    let base = if is_ai(site, n) {
        if r % 100 < 15 {
            BLAND_TITLES[r % BLAND_TITLES.len()]
        } else {
            AI_TITLES[r % AI_TITLES.len()]
        }
    } else {
        OTHER_TITLES[section_of(site, n) - 1][r % 3]
    };
    if site.portal {
        format!("Directory entry {n}: {base}")
    } else {
        format!("{base}, part {n}")
    }
}

fn slugify(t: &str) -> String {
    let mut s = String::new();
    for c in t.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.ends_with('-') {
            s.push('-');
        }
    }
    s.trim_matches('-').to_string()
}

/// The path of article `n`.
pub fn article_path(site: &Site, n: usize) -> String {
    if site.slugs {
        format!("/{}/{}-{n}", 2020 + n % 6, slugify(&title(site, n)))
    } else if site.portal {
        format!("/entry/{n}")
    } else {
        format!("/story/{n}")
    }
}

/// Which article a path names.
fn article_of(site: &Site, path: &str) -> Option<usize> {
    let n: usize = path.rsplit(['/', '-']).next()?.parse().ok()?;
    (n < site.articles && article_path(site, n) == path).then_some(n)
}

/// The ground truth for a stored URL: an article about AI on this web.
pub fn url_is_ai(sites: &[Site], url: &str) -> bool {
    let rest = url.trim_start_matches("http://");
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let path = format!("/{path}");
    sites
        .iter()
        .find(|s| s.name == host)
        .and_then(|s| article_of(s, &path).map(|n| is_ai(s, n)))
        .unwrap_or(false)
}

/// Publication time of article `n`: the newest an hour before `now`, each
/// older one six hours earlier.
fn published(site: &Site, n: usize, now: chrono::DateTime<chrono::Utc>) -> String {
    let age = (site.articles - 1 - n) as i64 * 6 + 1;
    (now - chrono::Duration::hours(age)).to_rfc3339()
}

const AI_PARAS: [&str; 4] = [
    "The artificial intelligence lab said its new large language model, trained on a larger cluster, beats earlier AI systems on reasoning tests by a wide margin.",
    "Researchers described how the model was trained, and how machine learning engineers measured its behaviour on coding, maths and long documents before release.",
    "Critics warned that generative AI tools still make confident mistakes, and that the companies building them have not said what data went into training.",
    "The company plans to offer the model to developers next month, with a smaller version for phones, and said the next AI model would use far more compute.",
];
const OTHER_PARAS: [&str; 4] = [
    "The figures published on Monday surprised most observers, who had expected a quieter quarter after a long and difficult year for everyone involved.",
    "Local officials said the plan would take several years to complete, and that residents would be asked for their views at a series of public meetings.",
    "Those who were there described a long afternoon of waiting, followed by a sudden rush when the doors finally opened and the crowd moved inside at once.",
    "Experts cautioned that one season says little about the trend, and that more data from the coming months will be needed before anyone can draw conclusions.",
];

fn article_html(site: &Site, n: usize, now: chrono::DateTime<chrono::Utc>) -> String {
    let t = title(site, n);
    let ai = is_ai(site, n);
    let mut body = String::new();
    for i in 0..5 {
        let p = if ai {
            AI_PARAS[(n + i) % 4]
        } else {
            OTHER_PARAS[(n + i) % 4]
        };
        body.push_str(&format!("<p>{p} Story {n}, paragraph {i}.</p>\n"));
    }
    if !ai && section_of(site, n) == 5 {
        body.push_str("<p>The maker says its AI features will improve with updates over the coming months, as most makers do.</p>\n");
    }
    let sec = section_of(site, n);
    let related: String = (1..=6)
        .map(|k| {
            let m = related(site, n, k, sec);
            format!(
                "<li><a href=\"{}\">{}</a></li>",
                article_path(site, m),
                title(site, m)
            )
        })
        .collect();
    let private = if n.is_multiple_of(10) {
        format!("<a href=\"/private/{n}\">Subscriber archive</a>")
    } else {
        String::new()
    };
    format!(
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>{t}</title>\
         <meta property=og:type content=article><meta property=article:published_time content=\"{}\">\
         </head><body>{}<main><article><h1>{t}</h1>\n{body}</article></main>\
         <aside><h2>Related</h2><ul>{related}</ul>{private}</aside></body></html>",
        published(site, n, now),
        nav(site)
    )
}

/// The k-th related story of article n: mostly from its own section.
fn related(site: &Site, n: usize, k: usize, sec: usize) -> usize {
    let r = roll(&site.name, n * 16 + k, 5) as usize;
    // Look nearby for a story of the same section (70% of the time).
    if r % 10 < 7 {
        let start = (n + r) % site.articles;
        for step in 0..40 {
            let m = (start + step * 7) % site.articles;
            if m != n && section_of(site, m) == sec {
                return m;
            }
        }
    }
    (n + r) % site.articles
}

fn nav(site: &Site) -> String {
    if site.portal {
        return "<nav><a href=\"/\">Home</a></nav>".to_string();
    }
    let links: String = SECTIONS
        .iter()
        .zip(SECTION_NAMES)
        .map(|(s, name)| format!("<a href=\"/section/{s}\">{name}</a> "))
        .collect();
    format!("<nav><a href=\"/\">Home</a> {links}</nav>")
}

/// Articles of a section, newest first.
fn section_articles(site: &Site, sec: usize) -> Vec<usize> {
    (0..site.articles)
        .rev()
        .filter(|&n| section_of(site, n) == sec)
        .collect()
}

fn headlines(site: &Site, ns: &[usize]) -> String {
    ns.iter()
        .map(|&n| {
            format!(
                "<li><a href=\"{}\">{}</a></li>\n",
                article_path(site, n),
                title(site, n)
            )
        })
        .collect()
}

fn page_html(title: &str, site: &Site, inner: &str) -> String {
    format!(
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>{title}</title></head>\
         <body>{}<h1>{title}</h1>{inner}</body></html>",
        nav(site)
    )
}

const PER_PAGE: usize = 25;
const PORTAL_CATEGORIES: usize = 60;

fn reply(site: &Site, r: &Req, now: chrono::DateTime<chrono::Utc>) -> Reply {
    let page: usize = r
        .query
        .as_deref()
        .and_then(|q| q.strip_prefix("page="))
        .and_then(|p| p.parse().ok())
        .unwrap_or(1);
    match r.path.as_str() {
        "/robots.txt" => Reply::text("User-agent: *\nDisallow: /private/\n"),
        "/" if site.portal => {
            let cats: String = (0..PORTAL_CATEGORIES)
                .map(|c| format!("<li><a href=\"/category/{c}\">Category {c} listings</a></li>\n"))
                .collect();
            let latest: Vec<usize> = (site.articles - 20..site.articles).rev().collect();
            Reply::html(page_html(
                "The directory",
                site,
                &format!("<ul>{cats}</ul><ul>{}</ul>", headlines(site, &latest)),
            ))
        }
        "/" => {
            let latest: Vec<usize> = (site.articles.saturating_sub(20)..site.articles)
                .rev()
                .collect();
            Reply::html(page_html(
                "Front page",
                site,
                &format!("<ul>{}</ul>", headlines(site, &latest)),
            ))
        }
        "/feed.xml" if site.feed => {
            let items: String = (site.articles.saturating_sub(30)..site.articles)
                .rev()
                .map(|n| {
                    let date = chrono::DateTime::parse_from_rfc3339(&published(site, n, now))
                        .map(|d| d.to_rfc2822())
                        .unwrap_or_default();
                    format!(
                        "<item><title>{}</title><link>http://{}{}</link><pubDate>{date}</pubDate></item>\n",
                        title(site, n),
                        site.name,
                        article_path(site, n)
                    )
                })
                .collect();
            Reply::xml(format!(
                "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>{}</title>{items}</channel></rss>",
                site.name
            ))
            .header("content-type", "application/rss+xml")
        }
        p if p.starts_with("/category/") && site.portal => {
            let Ok(c) = p["/category/".len()..].parse::<usize>() else {
                return Reply::not_found();
            };
            let ns: Vec<usize> = (0..site.articles)
                .filter(|n| n % PORTAL_CATEGORIES == c)
                .collect();
            Reply::html(page_html(
                &format!("Category {c}"),
                site,
                &format!("<ul>{}</ul>", headlines(site, &ns)),
            ))
        }
        p if p.starts_with("/section/") => {
            let Some(sec) = SECTIONS.iter().position(|s| p == format!("/section/{s}")) else {
                return Reply::not_found();
            };
            let all = section_articles(site, sec);
            let from = (page - 1) * PER_PAGE;
            if from >= all.len() && page > 1 {
                return Reply::not_found();
            }
            let ns = &all[from.min(all.len())..(from + PER_PAGE).min(all.len())];
            let older = if from + PER_PAGE < all.len() {
                format!(
                    "<a href=\"/section/{}?page={}\">Older stories</a>",
                    SECTIONS[sec],
                    page + 1
                )
            } else {
                String::new()
            };
            Reply::html(page_html(
                SECTION_NAMES[sec],
                site,
                &format!("<ul>{}</ul>{older}", headlines(site, ns)),
            ))
        }
        p => match article_of(site, p) {
            Some(n) => Reply::html(article_html(site, n, now)),
            None => Reply::not_found(),
        },
    }
}

/// Serve `sites`, every answer `delay` late.
pub fn start(sites: Vec<Site>, delay: Duration) -> Web {
    let now = chrono::Utc::now();
    let counters: std::sync::Mutex<HashMap<String, usize>> = Default::default();
    Web::start(move |r: &Req| {
        let Some(site) = sites.iter().find(|s| s.name == r.host) else {
            return Reply::not_found();
        };
        if site.busy && r.path != "/robots.txt" {
            let mut c = counters.lock().expect("counter lock");
            let k = c.entry(site.name.clone()).or_default();
            *k += 1;
            if (*k).is_multiple_of(10) {
                return Reply::status(429).header("retry-after", "1");
            }
        }
        reply(site, r, now).delay(delay)
    })
}

/// `sources:` lines for `sites`: the home page, and the feed where there is one.
pub fn sources(sites: &[Site]) -> String {
    sites
        .iter()
        .map(|s| {
            let feed = if s.feed {
                format!(", http://{}/feed.xml", s.name)
            } else {
                String::new()
            };
            format!("  - {{host: {0}, seeds: [http://{0}/{feed}]}}\n", s.name)
        })
        .collect::<String>()
        .trim_end()
        .to_string()
}

/// What the server saw that breaks politeness.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Violations {
    /// Two requests to one host closer than the gap, start to start.
    pub gap: usize,
    /// Requests under a Disallow.
    pub robots: usize,
    /// Requests to a host inside a Retry-After it was given.
    pub retry_after: usize,
}

/// Check the server's log against the rules.
pub fn violations(log: &[LoggedRequest], gap: Duration, retry_after: Duration) -> Violations {
    let mut v = Violations::default();
    let mut by_host: HashMap<&str, Vec<&LoggedRequest>> = HashMap::new();
    for r in log {
        by_host.entry(r.host.as_str()).or_default().push(r);
        if r.path.starts_with("/private/") {
            v.robots += 1;
        }
    }
    for (host, reqs) in by_host {
        v.gap += reqs
            .windows(2)
            .filter(|w| w[1].at.saturating_duration_since(w[0].at) < gap)
            .count();
        if host == "busy.test" {
            // Every tenth non-robots request got a 429: the next one must wait.
            let mut k = 0_u32;
            let mut until: Option<Instant> = None;
            for r in reqs {
                if let Some(u) = until
                    && r.at < u
                {
                    v.retry_after += 1;
                }
                if r.path != "/robots.txt" {
                    k += 1;
                    if k.is_multiple_of(10) {
                        until = Some(r.at + retry_after);
                    }
                }
            }
        }
    }
    v
}
