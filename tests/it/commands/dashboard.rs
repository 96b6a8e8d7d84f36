//! The dashboard in a real browser: a real crawl of the fixture web writes
//! `crawl.log`, `scraper dashboard` serves it, and headless Chromium (Debian's
//! `chromium`, installed by `.ci/run`) loads the page and runs its script. The
//! rendered DOM must show what the log says; a screenshot is kept at
//! `target/test-artifacts/dashboard.png`.
//!
//! Without Chromium the test fails; `SCRAPER_SKIP_BROWSER=1` skips it instead.
//! `SCRAPER_CHROMIUM` names another binary.

use std::collections::{BTreeMap, HashSet};
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::support::fixture::{Workspace, news_web, read_jsonl, stderr};
use crate::support::tool::Tool;

const SOURCES: &str = "  - {host: news.test, seeds: [http://news.test/]}\n  - {host: lab.test, path: /blog, seeds: [http://lab.test/blog/]}";

/// The whole test, crawl included, must finish within this (each Chromium
/// run is killed at the deadline).
const TOTAL: Duration = Duration::from_secs(28);
/// The crawl's own time box (it needs about 2 s).
const CRAWL: &str = "10s";

fn chromium() -> String {
    std::env::var("SCRAPER_CHROMIUM").unwrap_or_else(|_| "chromium".to_string())
}

/// Kills the child when dropped, so a failed assertion leaves no server behind.
struct Reaper(Child);

impl Drop for Reaper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `scraper dashboard --data <data> --port 0`; returns the child and its base URL,
/// read from the line it prints on stderr.
fn start_dashboard(data: &Path) -> (Reaper, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_scraper"))
        .args(["dashboard", "--port", "0", "--data"])
        .arg(data)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start scraper dashboard");
    let err = child.stderr.take().expect("piped stderr");
    let reaper = Reaper(child);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            if let Some(at) = line.find("http://127.0.0.1:") {
                let url = line[at..]
                    .split_whitespace()
                    .next()
                    .unwrap_or("")
                    .to_string();
                let _ = tx.send(url.trim_end_matches('/').to_string());
            }
        }
    });
    let base = rx
        .recv_timeout(Duration::from_secs(5))
        .expect("scraper dashboard did not say where it listens");
    (reaper, base)
}

/// Runs Chromium headless with a fresh profile; returns its stdout. Fails the
/// test when Chromium is missing, fails or is still running at `deadline`.
fn browser(args: &[String], scratch: &Path, deadline: Instant) -> String {
    let profile = tempfile::tempdir_in(scratch).expect("profile dir");
    let out_path = profile.path().join("stdout");
    let err_path = profile.path().join("stderr");
    let spawned = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--hide-scrollbars",
            "--force-color-profile=srgb",
            "--lang=en-US",
        ])
        .arg(format!(
            "--user-data-dir={}",
            profile.path().join("p").display()
        ))
        .args(args)
        .stdin(Stdio::null())
        .stdout(File::create(&out_path).expect("stdout file"))
        .stderr(File::create(&err_path).expect("stderr file"))
        .spawn();
    let child = match spawned {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => missing_browser(),
        Err(e) => panic!("cannot start {}: {e}", chromium()),
    };
    let mut child = Reaper(child);
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.0.try_wait().expect("wait for chromium") {
            break s;
        }
        if Instant::now() > deadline {
            drop(child);
            panic!(
                "chromium {args:?} still running after {:?}, past the test's {TOTAL:?}; stderr:\n{}",
                started.elapsed(),
                std::fs::read_to_string(&err_path).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        status.success(),
        "chromium {args:?} failed ({status}); stderr:\n{}",
        std::fs::read_to_string(&err_path).unwrap_or_default()
    );
    std::fs::read_to_string(&out_path).expect("chromium stdout")
}

fn missing_browser() -> ! {
    Tool::Browser.missing(
        &format!("the dashboard browser test (`{}` not found)", chromium()),
        "apt-get install -y chromium, as .ci/run does",
    )
}

/// `chromium --version`, or a failed test.
fn browser_version() -> String {
    match Command::new(chromium()).arg("--version").output() {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        Ok(o) => panic!("`{} --version` failed: {}", chromium(), stderr(&o)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => missing_browser(),
        Err(e) => panic!("cannot start {}: {e}", chromium()),
    }
}

/// The rendered DOM of `url`, after the page's script had 5 s of (virtual) time.
fn dump_dom(url: &str, scratch: &Path, deadline: Instant) -> String {
    browser(
        &[
            "--virtual-time-budget=5000".to_string(),
            "--dump-dom".to_string(),
            url.to_string(),
        ],
        scratch,
        deadline,
    )
}

/// The opening tag of the element with `id`.
fn tag<'a>(dom: &'a str, id: &str) -> &'a str {
    let at = dom
        .find(&format!(" id=\"{id}\""))
        .unwrap_or_else(|| panic!("no element #{id} in the page"));
    let start = dom[..at].rfind('<').expect("tag start");
    let end = at + dom[at..].find('>').expect("tag end") + 1;
    &dom[start..end]
}

/// The value of attribute `name` in an opening tag.
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let at = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    Some(&tag[at..at + tag[at..].find('"')?])
}

/// The text right inside the element with `id` (up to its first child tag).
fn text<'a>(dom: &'a str, id: &str) -> &'a str {
    let t = tag(dom, id);
    let at = dom.find(t).unwrap() + t.len();
    &dom[at..at + dom[at..].find('<').unwrap_or(0)]
}

/// The markup between the element with `id` and the next `until`.
fn inner<'a>(dom: &'a str, id: &str, until: &str) -> &'a str {
    let t = tag(dom, id);
    let at = dom.find(t).unwrap() + t.len();
    &dom[at..at + dom[at..].find(until).unwrap_or(dom.len() - at)]
}

/// Every `name="value"` in `html`, in order.
fn all_attrs<'a>(html: &'a str, name: &str) -> Vec<&'a str> {
    let key = format!(" {name}=\"");
    html.match_indices(&key)
        .filter_map(|(at, _)| {
            let v = at + key.len();
            html[v..].find('"').map(|end| &html[v..v + end])
        })
        .collect()
}

fn unescape(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

fn artifacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-artifacts");
    std::fs::create_dir_all(&dir).expect("create target/test-artifacts");
    dir
}

#[test]
fn dashboard_in_a_real_browser() {
    if Tool::Browser.skipped("the dashboard browser test") {
        return;
    }
    // Before the crawl, so a missing browser fails at once and says why.
    let version = browser_version();
    eprintln!("browser: {version}");
    let began = Instant::now();
    let deadline = began + TOTAL;

    // A real crawl of the fixture web.
    let web = news_web();
    let ws = Workspace::new(&web, SOURCES, "");
    let out = ws.crawl(&["--max-duration", CRAWL]);
    assert!(out.status.success(), "crawl failed: {}", stderr(&out));
    let events = read_jsonl(&ws.data().join("state/crawl.log"));
    let of = |kind: &'static str| events.iter().filter(move |e| e["event"] == kind);
    let stored: Vec<&serde_json::Value> = of("stored").collect();
    let fetched = of("fetch").count();
    assert!(stored.len() > 10, "the crawl stored only {}", stored.len());
    let mut per_domain: BTreeMap<String, usize> = BTreeMap::new();
    for e in &stored {
        *per_domain
            .entry(e["domain"].as_str().unwrap_or_default().to_string())
            .or_default() += 1;
    }
    assert!(per_domain.contains_key("news.test") && per_domain.contains_key("lab.test"));
    let stored_urls: HashSet<&str> = stored.iter().filter_map(|e| e["url"].as_str()).collect();
    let stopped_by = of("done")
        .next_back()
        .and_then(|e| e["stopped_by"].as_str())
        .expect("a done event")
        .to_string();

    let (_server, base) = start_dashboard(&ws.data());
    let scratch = ws.dir.path();

    // The page without a budget.
    let dom = dump_dom(&format!("{base}/"), scratch, deadline);
    let shown = text(&dom, "stored");
    assert_eq!(
        attr(tag(&dom, "stored"), "data-value"),
        Some(stored.len().to_string().as_str()),
        "stored count in the page (shows {shown:?}) against {} stored events in crawl.log",
        stored.len()
    );
    assert_eq!(
        shown.replace([',', '.', '\u{a0}'], ""),
        stored.len().to_string()
    );
    assert_eq!(
        attr(tag(&dom, "fetched"), "data-value"),
        Some(fetched.to_string().as_str()),
        "fetched count"
    );
    assert_eq!(
        text(&dom, "status"),
        format!("finished: stopped by {stopped_by}")
    );
    assert!(text(&dom, "run").starts_with("run "), "run id shown");
    // Without ?budget the countdown runs against the crawl's --max-duration.
    assert_eq!(attr(tag(&dom, "left"), "data-budget"), Some("10"));
    assert_eq!(text(&dom, "leftlabel"), "left of --max-duration at finish");
    assert!(text(&dom, "left").ends_with('s'), "{}", text(&dom, "left"));

    // Per-domain bars: every crawled domain with its count, nothing else.
    let bars = inner(&dom, "domains", "</section>");
    let keys = all_attrs(bars, "data-key");
    let values = all_attrs(bars, "data-value");
    let shown: BTreeMap<String, usize> = keys
        .iter()
        .zip(&values)
        .map(|(k, v)| (unescape(k), v.parse().expect("a count")))
        .collect();
    assert_eq!(shown, per_domain, "per-domain bars");
    for d in per_domain.keys() {
        assert!(bars.contains(&format!(">{d}<")), "{d} is not written out");
    }
    // The year bars add up too.
    let years: usize = all_attrs(inner(&dom, "years", "</section>"), "data-value")
        .iter()
        .map(|v| v.parse::<usize>().unwrap())
        .sum();
    assert_eq!(years, stored.len(), "year bars");

    // Latest hits: links to stored pages, newest first.
    let feed = inner(&dom, "feed", "</ul>");
    let links: Vec<String> = all_attrs(feed, "href").into_iter().map(unescape).collect();
    assert_eq!(links.len(), stored.len().min(50), "links in the feed");
    for l in &links {
        assert!(stored_urls.contains(l.as_str()), "{l} is not a stored page");
    }
    assert_eq!(
        links.first().map(String::as_str),
        stored.last().and_then(|e| e["url"].as_str()),
        "newest hit first"
    );

    // The chart was drawn, with the log's minutes in it.
    let chart = tag(&dom, "chart");
    assert_eq!(attr(chart, "data-points"), Some("60"), "chart: {chart}");
    assert_eq!(
        attr(chart, "data-stored"),
        Some(stored.len().to_string().as_str()),
        "articles plotted: {chart}"
    );
    assert_eq!(
        attr(chart, "data-fetched"),
        Some(fetched.to_string().as_str()),
        "fetches plotted: {chart}"
    );
    assert!(
        attr(chart, "width").is_some_and(|w| w.parse::<u32>().unwrap_or(0) > 100),
        "canvas sized: {chart}"
    );

    // With a budget, the countdown: what was left of the hour when the run finished.
    let url = format!("{base}/?budget=1h");
    let dom = dump_dom(&url, scratch, deadline);
    assert_eq!(
        attr(tag(&dom, "stored"), "data-value"),
        Some(stored.len().to_string().as_str())
    );
    assert_eq!(attr(tag(&dom, "left"), "data-budget"), Some("3600"));
    let left = text(&dom, "left");
    assert!(
        left.starts_with("59m") || left.starts_with("58m"),
        "countdown shows {left:?}"
    );
    assert_eq!(text(&dom, "leftlabel"), "left of ?budget=1h at finish");

    // The screenshot, kept as an artifact.
    let png = artifacts().join("dashboard.png");
    let _ = std::fs::remove_file(&png);
    browser(
        &[
            "--virtual-time-budget=5000".to_string(),
            "--window-size=1200,900".to_string(),
            format!("--screenshot={}", png.display()),
            url,
        ],
        scratch,
        deadline,
    );
    let bytes = std::fs::read(&png).expect("chromium wrote no screenshot");
    assert!(
        bytes.starts_with(b"\x89PNG\r\n\x1a\n") && bytes.len() > 10_000,
        "{} is not a plausible screenshot ({} bytes)",
        png.display(),
        bytes.len()
    );
    eprintln!("screenshot: {}", png.display());

    eprintln!("dashboard browser test: {:?}", began.elapsed());
}
