//! A small fixture web of news sites for crawl tests, and helpers to run the
//! real `scraper` binary against it in a temporary folder.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::support::web::{Reply, Req, Web};

/// Articles per host on the fixture web.
pub const ARTICLES: usize = 12;

/// An article page that any sensible extractor calls a relevant AI story.
pub fn article_html(host: &str, n: usize, day: &str) -> String {
    let title = format!("OpenAI and DeepMind race to build a new large language model, part {n}");
    let paras = [
        format!("The artificial intelligence lab said on {day} that its newest large language model, trained on a larger cluster of GPUs, beats earlier AI systems on reasoning benchmarks by a wide margin."),
        "Researchers described how the model was trained with reinforcement learning from human feedback, and how machine learning engineers measured its behaviour on coding, maths and long documents before release.".to_string(),
        "Critics warned that generative AI tools still make confident mistakes, and that the companies building foundation models have not explained what data went into training them or how the systems are evaluated.".to_string(),
        "The company plans to offer the model to developers through its API next month, with a smaller version for phones. Its chief scientist said the next AI model would be trained on ten times more compute.".to_string(),
        format!("Story number {n} on {host} ends here, with a note that the deep learning community will be watching closely how these neural network systems are used by businesses and governments."),
    ];
    let mut body: String = paras.iter().map(|p| format!("<p>{p}</p>\n")).collect();
    body.push_str(&format!(
        "<p>Read the follow-up at <a href=\"http://partner.test{}\">our partner</a>, or <a href=\"http://social.test/share?u={n}\">share it</a>.</p>\n",
        article_path(200 + n % 3)
    ));
    format!(
        r#"<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>{title}</title>
<meta property="og:type" content="article">
<meta property="og:title" content="{title}">
<meta property="article:published_time" content="{day}T09:30:00Z">
</head><body>
<nav><a href="/">Home</a> <a href="/section/ai">AI</a> <a href="/about">About</a></nav>
<main><article><h1>{title}</h1>
{body}
</article></main>
<footer><a href="/about">About us</a></footer>
</body></html>"#
    )
}

/// A listing page linking to `links`.
pub fn listing_html(title: &str, links: &[String]) -> String {
    let items: String = links
        .iter()
        .map(|l| format!("<li><a href=\"{l}\">{l}</a></li>\n"))
        .collect();
    format!(
        "<!doctype html><html><head><title>{title}</title></head><body><h1>{title}</h1><ul>{items}</ul></body></html>"
    )
}

/// A calendar trap: the links of `path` on a site whose home page (`/`)
/// links May 2024 and whose every month (`/cal/YYYY/MM`) links the month
/// before and after, without end. `None` for any other path.
pub fn calendar_links(path: &str) -> Option<Vec<String>> {
    if path == "/" {
        return Some(vec!["/cal/2024/05".into()]);
    }
    let ym: Vec<i32> = path
        .strip_prefix("/cal/")?
        .split('/')
        .filter_map(|x| x.parse().ok())
        .collect();
    let [y, m] = ym[..] else {
        return None;
    };
    let month = |k: i32| {
        let t = y * 12 + (m - 1) + k;
        format!("/cal/{}/{:02}", t.div_euclid(12), t.rem_euclid(12) + 1)
    };
    Some(vec![month(-1), month(1)])
}

/// The day of article `n` (all in 2024, so well before any fetch day).
pub fn day(n: usize) -> String {
    format!("2024-05-{:02}", 1 + n % 28)
}

pub fn article_path(n: usize) -> String {
    format!("/{}/story-{n}", day(n).replace('-', "/"))
}

/// The standard fixture web:
/// - `news.test`: robots.txt with a Disallow and a small Crawl-delay; a home page
///   linking to its articles, a disallowed page, a 404, a redirect chain, a
///   link to `lab.test` and one to `outside.test` (not configured).
/// - `lab.test`: no robots.txt (404 = allow all), source limited to `/blog`.
/// - `down.test`: robots.txt answers 503, so nothing else may be fetched.
/// - `slow.test`: answers every page after a short delay.
/// - `outside.test`: not a source; must never be fetched in `domains` scope.
pub fn news_web() -> Web {
    news_web_with(|_| None)
}

/// The standard web with an override: `f` may answer a request first.
pub fn news_web_with(f: impl Fn(&Req) -> Option<Reply> + Send + Sync + 'static) -> Web {
    Web::start(move |r: &Req| {
        if let Some(reply) = f(r) {
            return reply;
        }
        route(r)
    })
}

fn route(r: &Req) -> Reply {
    let host = r.host.as_str();
    let path = r.path.as_str();
    match (host, path) {
        ("news.test", "/robots.txt") => {
            Reply::text("User-agent: *\nDisallow: /private\nCrawl-delay: 0.08\n")
        }
        ("down.test", "/robots.txt") => Reply::status(503),
        (_, "/robots.txt") => Reply::not_found(),
        ("news.test", "/") => {
            let mut links: Vec<String> = (0..ARTICLES).map(article_path).collect();
            links.push("/private/secret".into());
            links.push("/missing".into());
            links.push("/old".into());
            links.push("http://lab.test/blog/".into());
            links.push("http://outside.test/x".into());
            links.push("http://down.test/".into());
            Reply::html(listing_html("News home", &links))
        }
        ("news.test", "/old") => Reply::redirect(301, "/old2"),
        ("news.test", "/old2") => Reply::redirect(301, &article_path(100)),
        ("lab.test", "/blog/") | ("lab.test", "/blog") => {
            let links: Vec<String> = (0..ARTICLES)
                .map(|n| format!("/blog{}", article_path(n)))
                .collect();
            let mut links = links;
            links.push("/about".into());
            Reply::html(listing_html("Lab blog", &links))
        }
        ("slow.test", "/") => {
            let links: Vec<String> = (0..ARTICLES).map(article_path).collect();
            Reply::html(listing_html("Slow home", &links)).delay(Duration::from_millis(150))
        }
        ("down.test", _) => Reply::html(listing_html("Down", &["/a".to_string()])),
        (_, p) if p.contains("/story-") => {
            let n: usize = p
                .rsplit("story-")
                .next()
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            let mut reply = Reply::html(article_html(host, n, &day(n)));
            if host == "slow.test" {
                reply = reply.delay(Duration::from_millis(150));
            }
            reply
        }
        _ => Reply::not_found(),
    }
}

/// A temporary crawl workspace: config file, data folder, the binary.
pub struct Workspace {
    pub dir: tempfile::TempDir,
    pub proxy: String,
}

impl Workspace {
    /// A workspace whose config lists `sources` (YAML list items) and `crawl` overrides.
    pub fn new(web: &Web, sources: &str, crawl: &str) -> Workspace {
        let dir = tempfile::tempdir().expect("tempdir");
        // `crawl` lines override the defaults below key by key.
        let defaults = [
            "concurrency: 4",
            "min_host_gap: 40ms",
            "stop_grace: 2s",
            "connect_timeout: 2s",
            "read_timeout: 3s",
            "request_timeout: 5s",
            "flush_every: 200ms",
            "user_agent: \"scraper-test/0.1 (+http://example.invalid/contact)\"",
        ];
        let key = |l: &str| l.trim().split(':').next().unwrap_or("").to_string();
        let overrides: Vec<&str> = crawl.lines().filter(|l| !l.trim().is_empty()).collect();
        let mut lines: Vec<String> = defaults
            .iter()
            .filter(|d| !overrides.iter().any(|o| key(o) == key(d)))
            .map(|d| format!("  {d}"))
            .collect();
        lines.extend(overrides.iter().map(|o| format!("  {}", o.trim())));
        let config = format!(
            "keywords:\n  targets: [ai, model, language model, training, research]\n  strong_targets: [AI, artificial intelligence, large language model, language model, machine learning, OpenAI, DeepMind, generative AI]\n  min_strong_mentions: 2\n\
             sources:\n{sources}\n\
             crawl:\n{}\n",
            lines.join("\n")
        );
        std::fs::write(dir.path().join("config.yml"), config).expect("write config");
        Workspace {
            dir,
            proxy: web.proxy_url(),
        }
    }

    pub fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    pub fn command(&self, args: &[&str]) -> Command {
        // SCRAPER_BIN runs another build (a benchmark's baseline, the landed binary).
        let bin =
            std::env::var_os("SCRAPER_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_scraper").into());
        let mut cmd = Command::new(bin);
        cmd.current_dir(self.dir.path())
            .arg("--config")
            .arg(self.dir.path().join("config.yml"))
            .args(args)
            .env_remove("http_proxy")
            .env_remove("https_proxy")
            .env_remove("HTTP_PROXY")
            .env_remove("HTTPS_PROXY")
            .env_remove("GITHUB_STEP_SUMMARY")
            // SCRAPER_TEST_LOG (say `scraper=debug`) to read a test's runs by hand.
            .env(
                "RUST_LOG",
                std::env::var("SCRAPER_TEST_LOG").unwrap_or_else(|_| "info".into()),
            );
        cmd
    }

    /// `scraper crawl --data data --proxy <web> ARGS...`, waited for.
    pub fn crawl(&self, args: &[&str]) -> Output {
        let mut all = vec!["crawl", "--data", "data", "--proxy", &self.proxy];
        all.extend_from_slice(args);
        self.command(&all).output().expect("run scraper")
    }

    /// The same, started in the background.
    pub fn spawn_crawl(&self, args: &[&str]) -> Child {
        let mut all = vec!["crawl", "--data", "data", "--proxy", &self.proxy];
        all.extend_from_slice(args);
        self.command(&all)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn scraper")
    }

    /// Every record of every shard, in shard order.
    pub fn records(&self) -> Vec<serde_json::Value> {
        let mut out = Vec::new();
        for shard in
            scraper::store::shard::list(&self.data().join("articles")).expect("list shards")
        {
            scraper::store::shard::read_lines(&shard, |l| {
                out.push(serde_json::from_slice(l).expect("valid JSON line"));
            })
            .expect("readable shard");
        }
        out
    }

    pub fn shards(&self) -> Vec<PathBuf> {
        scraper::store::shard::list(&self.data().join("articles")).expect("list shards")
    }

    /// Events of `crawl.log`.
    pub fn events(&self) -> Vec<serde_json::Value> {
        read_jsonl(&self.data().join("state/crawl.log"))
    }
}

pub fn read_jsonl(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Counts calls; for handlers that change their answer over time.
#[derive(Clone, Default)]
pub struct Counter(Arc<AtomicUsize>);

impl Counter {
    pub fn bump(&self) -> usize {
        self.0.fetch_add(1, Ordering::SeqCst)
    }
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
