//! Crawl benchmark (issue 2): `cargo bench --bench crawl`.
//!
//! 1. Throughput: the release `scraper crawl` against a local web of 8 hosts x
//!    250 articles served by the fixture server, latency and per-host gap at
//!    zero, concurrency 16. Reported: pages per second and CPU seconds per
//!    1,000 pages, and the same page count fetched by a plain HTTP client loop
//!    (reqwest, same concurrency, no parsing or storage) in the same run as the
//!    baseline, so the figure is a ratio that survives a noisy machine.
//! 2. Memory: a sitemap index whose 20 children list 50,000 URLs each puts
//!    1,000,000 URLs in the queue; the run stops on `--max-pages`. Reported:
//!    the child's peak RSS against the peak RSS of a run on an empty web, and
//!    the difference per queued URL.

#[path = "../tests/it/support"]
#[allow(dead_code)]
mod support {
    pub mod web;
}

use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use support::web::{Reply, Req, Web};

const HOSTS: usize = 8;
const PER_HOST: usize = 250;
const CHILDREN: usize = 20;
const PER_SITEMAP: usize = 50_000;

fn article(host: &str, n: usize) -> String {
    let p = "The artificial intelligence lab said its new large language model, trained with reinforcement learning on a large GPU cluster, beats earlier AI systems on reasoning benchmarks, and that machine learning engineers measured it carefully.";
    let body: String = (0..8)
        .map(|i| format!("<p>{p} Paragraph {i} of story {n} on {host}.</p>\n"))
        .collect();
    format!(
        "<!doctype html><html lang=en><head><title>OpenAI model story {n}</title><meta property=og:type content=article>\
         <meta property=article:published_time content=2024-05-03T10:00:00Z></head><body><nav><a href=/>Home</a></nav>\
         <article><h1>OpenAI model story {n}</h1>{body}<p><a href=/s/{}>next</a> <a href=/s/{}>other</a></p></article></body></html>",
        (n + 1) % PER_HOST,
        (n * 7 + 3) % PER_HOST
    )
}

fn throughput_web() -> Web {
    Web::start(|r: &Req| match r.path.as_str() {
        "/robots.txt" => Reply::not_found(),
        "/" => {
            let links: String = (0..PER_HOST)
                .map(|n| format!("<a href=/s/{n}>{n}</a>\n"))
                .collect();
            Reply::html(format!("<html><body>{links}</body></html>"))
        }
        p if p.starts_with("/s/") => {
            let n: usize = p[3..].parse().unwrap_or(0);
            Reply::html(article(&r.host, n))
        }
        _ => Reply::not_found(),
    })
}

fn queue_web() -> Web {
    Web::start(|r: &Req| match r.path.as_str() {
        "/robots.txt" => {
            Reply::text("User-agent: *\nAllow: /\nSitemap: http://big.test/index.xml\n")
        }
        "/index.xml" => {
            let items: String = (0..CHILDREN)
                .map(|i| format!("<sitemap><loc>http://big.test/map-{i}.xml</loc></sitemap>"))
                .collect();
            Reply::xml(format!(
                "<?xml version=\"1.0\"?><sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">{items}</sitemapindex>"
            ))
        }
        p if p.starts_with("/map-") => {
            let i: usize = p[5..].trim_end_matches(".xml").parse().unwrap_or(0);
            let mut s = String::with_capacity(PER_SITEMAP * 80);
            s.push_str("<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">");
            for n in 0..PER_SITEMAP {
                s.push_str(&format!(
                    "<url><loc>http://big.test/articles/{i}/story-{n}-about-ai</loc></url>"
                ));
            }
            s.push_str("</urlset>");
            Reply::xml(s)
        }
        _ => Reply::html("<html><body>home</body></html>"),
    })
}

struct Usage {
    wall: Duration,
    cpu: Duration,
    max_rss_kb: i64,
}

/// Run the binary and measure its CPU time and peak RSS with wait4.
// The child is reaped by `wait4`, which clippy does not see.
#[allow(clippy::zombie_processes)]
fn run(dir: &std::path::Path, proxy: &str, extra: &[&str]) -> Usage {
    let mut args = vec!["crawl", "--data", "data", "--proxy", proxy];
    args.extend_from_slice(extra);
    let start = Instant::now();
    let child = Command::new(env!("CARGO_BIN_EXE_scraper"))
        .current_dir(dir)
        .args(&args)
        .env("RUST_LOG", "warn")
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn scraper");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: rusage is plain data; wait4 fills it for our own child.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    assert_eq!(r, pid, "wait4 failed");
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    Usage {
        wall: start.elapsed(),
        cpu: tv(ru.ru_utime) + tv(ru.ru_stime),
        max_rss_kb: ru.ru_maxrss,
    }
}

fn config(dir: &std::path::Path, sources: &str, extra: &str) {
    let text = format!(
        "keywords:\n  strong_targets: [AI, OpenAI, large language model, machine learning, artificial intelligence]\n\
         sources:\n{sources}\ncrawl:\n  concurrency: 16\n  min_host_gap: 0\n  user_agent: \"scraper-bench/0.1 (+http://example.invalid)\"\n{extra}\n"
    );
    std::fs::write(dir.join("config.yml"), text).expect("config");
}

async fn baseline(proxy: &str, urls: Vec<String>) -> Duration {
    let client = reqwest::Client::builder()
        .proxy(reqwest::Proxy::all(proxy).expect("proxy"))
        .build()
        .expect("client");
    let urls = Arc::new(std::sync::Mutex::new(urls));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..16 {
        let (client, urls) = (client.clone(), urls.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let next = urls.lock().expect("lock").pop();
                let Some(u) = next else { break };
                let body = client
                    .get(&u)
                    .send()
                    .await
                    .expect("get")
                    .bytes()
                    .await
                    .expect("body");
                std::hint::black_box(body);
            }
        }));
    }
    for t in tasks {
        t.await.expect("task");
    }
    start.elapsed()
}

fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    // 1. Throughput.
    let web = throughput_web();
    let dir = tempfile::tempdir().expect("tempdir");
    let sources: String = (0..HOSTS)
        .map(|h| format!("  - {{host: h{h}.test, seeds: [http://h{h}.test/]}}\n"))
        .collect();
    config(dir.path(), &sources, "");
    let proxy = web.proxy_url();
    let u = run(dir.path(), &proxy, &["--max-duration", "10m"]);
    let requests = web.log().len();
    let pages = requests as f64;
    let urls: Vec<String> = web
        .log()
        .iter()
        .map(|r| format!("http://{}{}", r.host, r.target()))
        .collect();
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let base = rt.block_on(baseline(&proxy, urls));
    let crawl_rate = pages / u.wall.as_secs_f64();
    let base_rate = pages / base.as_secs_f64();
    println!(
        "throughput: {requests} requests in {:.2}s = {crawl_rate:.0} pages/s; CPU {:.2}s = {:.2} CPU-s per 1,000 pages",
        u.wall.as_secs_f64(),
        u.cpu.as_secs_f64(),
        u.cpu.as_secs_f64() * 1000.0 / pages
    );
    println!(
        "baseline (plain HTTP GET loop, same pages, same concurrency): {base_rate:.0} pages/s"
    );
    println!(
        "ratio crawl/baseline pages per second: {:.2}",
        crawl_rate / base_rate
    );
    drop(web);

    // 2. Memory with 1,000,000 URLs queued.
    let web = queue_web();
    let proxy = web.proxy_url();
    let empty = tempfile::tempdir().expect("tempdir");
    config(
        empty.path(),
        "  - {host: empty.test, seeds: [http://empty.test/]}",
        "  max_queue: 2000000",
    );
    let e = run(empty.path(), &proxy, &["--max-pages", "3"]);
    let big = tempfile::tempdir().expect("tempdir");
    config(
        big.path(),
        "  - {host: big.test, seeds: [http://big.test/index.xml]}",
        "  max_queue: 2000000\n  per_host_concurrency: 4",
    );
    let pages_needed = (2 + CHILDREN + 1).to_string();
    let b = run(big.path(), &proxy, &["--max-pages", &pages_needed]);
    let queued = std::fs::read_to_string(big.path().join("data/state/frontier.jsonl"))
        .map(|s| s.lines().count())
        .unwrap_or(0);
    let extra = (b.max_rss_kb - e.max_rss_kb) as f64 * 1024.0;
    println!(
        "memory: {queued} URLs left queued; peak RSS {:.0} MB vs {:.0} MB on an empty web ({:.1}x); {:.0} bytes per queued URL",
        b.max_rss_kb as f64 / 1024.0,
        e.max_rss_kb as f64 / 1024.0,
        b.max_rss_kb as f64 / e.max_rss_kb.max(1) as f64,
        extra / queued.max(1) as f64
    );
}
